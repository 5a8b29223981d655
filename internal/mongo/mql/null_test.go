package mql

import (
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// nullDocs is a collection covering null, missing, undefined, empty and nested arrays; the expected
// results below follow mongod's behaviour for these shapes (with the 7.0 rule that equality to null
// also matches undefined).
var nullDocs = []bson.D{
	doc("_id", "a_empty_subobject", "a", doc()),
	doc("_id", "a_null", "a", nil),
	doc("_id", "a_number", "a", int32(4)),
	doc("_id", "a_subobject_b_not_null", "a", doc("b", "hi")),
	doc("_id", "a_subobject_b_null", "a", doc("b", nil)),
	doc("_id", "no_a"),
	doc("_id", "a_double_array", "a", arr(arr())),
	doc("_id", "a_empty_array", "a", arr()),
	doc("_id", "a_object_array_no_b_nulls", "a", arr(doc("b", int32(1)), doc("b", int32(3)), doc("b", "string"))),
	doc("_id", "a_object_array_some_b_nulls", "a", arr(doc("b", nil), doc("b", int32(3)), doc("b", nil))),
	doc("_id", "a_object_array_some_b_missing", "a", arr(doc("b", int32(3)), doc())),
	doc("_id", "a_value_array_all_nulls", "a", arr(nil, nil)),
	doc("_id", "a_value_array_no_nulls", "a", arr(int32(1), "string", int32(4))),
	doc("_id", "a_value_array_with_null", "a", arr(int32(1), "string", nil, int32(4))),
}

func matchingIDs(t *testing.T, filter bson.D) []string {
	t.Helper()
	f, err := ParseFilter(filter)
	if err != nil {
		t.Fatalf("ParseFilter(%v): %v", filter, err)
	}
	var ids []string
	for _, d := range nullDocs {
		if f.Match(d) {
			ids = append(ids, d[0].Value.(string))
		}
	}
	slices.Sort(ids)
	return ids
}

func TestFilterNullSemantics(t *testing.T) {
	all := func(except ...string) []string {
		var out []string
		for _, d := range nullDocs {
			if id := d[0].Value.(string); !slices.Contains(except, id) {
				out = append(out, id)
			}
		}
		slices.Sort(out)
		return out
	}
	sorted := func(ids ...string) []string { slices.Sort(ids); return ids }
	eqNull := sorted("a_null", "no_a", "a_value_array_all_nulls", "a_value_array_with_null")
	dottedEqNull := sorted("a_empty_subobject", "a_null", "a_number", "a_subobject_b_null", "no_a", "a_double_array",
		"a_empty_array", "a_object_array_some_b_nulls", "a_object_array_some_b_missing", "a_value_array_all_nulls",
		"a_value_array_no_nulls", "a_value_array_with_null")
	cases := []struct {
		filter bson.D
		want   []string
	}{
		{doc("a", doc("$eq", nil)), eqNull},
		{doc("a", doc("$ne", nil)), all(eqNull...)},
		{doc("a", doc("$not", doc("$gte", nil))), all(eqNull...)},
		{doc("a", doc("$in", arr(nil, int32(75)))), eqNull},
		{doc("a", doc("$nin", arr(nil, arr()))), all(append(eqNull, "a_double_array", "a_empty_array")...)},
		{doc("a", doc("$exists", false)), []string{"no_a"}},
		{doc("a", doc("$elemMatch", doc("$eq", nil))), sorted("a_value_array_all_nulls", "a_value_array_with_null")},
		{doc("a", doc("$elemMatch", doc("$ne", nil))), sorted("a_double_array", "a_object_array_no_b_nulls", "a_object_array_some_b_nulls",
			"a_object_array_some_b_missing", "a_value_array_no_nulls", "a_value_array_with_null")},
		{doc("a.b", doc("$eq", nil)), dottedEqNull},
		{doc("a.b", doc("$ne", nil)), all(dottedEqNull...)},
		{doc("a.b", doc("$in", arr(nil, int32(75)))), dottedEqNull},
		{doc("a.b", doc("$exists", false)), sorted("no_a", "a_empty_subobject", "a_null", "a_number", "a_double_array", "a_empty_array",
			"a_value_array_all_nulls", "a_value_array_no_nulls", "a_value_array_with_null")},
	}
	for _, c := range cases {
		if got := matchingIDs(t, c.filter); !slices.Equal(got, c.want) {
			t.Errorf("%v:\n got %v\nwant %v", c.filter, got, c.want)
		}
	}
}

func TestProjectionDottedOnMixedShapes(t *testing.T) {
	p, err := ParseProjection(doc("_id", int32(0), "a.b", int32(1)))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bson.D{
		"a_empty_subobject":             doc("a", doc()),
		"a_null":                        doc(),
		"a_number":                      doc(),
		"a_subobject_b_null":            doc("a", doc("b", nil)),
		"no_a":                          doc(),
		"a_double_array":                doc("a", arr(arr())),
		"a_empty_array":                 doc("a", arr()),
		"a_object_array_some_b_missing": doc("a", arr(doc("b", int32(3)), doc())),
		"a_value_array_no_nulls":        doc("a", arr()),
	}
	for _, d := range nullDocs {
		w, ok := want[d[0].Value.(string)]
		if !ok {
			continue
		}
		if got := p.Apply(d); !identical(got, w) {
			t.Errorf("%s: got %v, want %v", d[0].Value, got, w)
		}
	}
}
