package mql

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func TestProjection(t *testing.T) {
	src := doc("_id", int32(1), "a", int32(1), "b", doc("c", int32(2), "d", int32(3)),
		"arr", arr(doc("x", int32(1), "y", int32(2)), int32(5), doc("y", int32(3))), "list", arr(int32(1), int32(2), int32(3), int32(4)))
	cases := []struct {
		name string
		proj bson.D
		want bson.D
	}{
		{"include", doc("a", int32(1)), doc("_id", int32(1), "a", int32(1))},
		{"include true", doc("a", true), doc("_id", int32(1), "a", int32(1))},
		{"include no id", doc("a", int32(1), "_id", int32(0)), doc("a", int32(1))},
		{"include keeps doc order", doc("b", int32(1), "a", int32(1)), doc("_id", int32(1), "a", int32(1), "b", doc("c", int32(2), "d", int32(3)))},
		{"include dotted", doc("b.c", int32(1)), doc("_id", int32(1), "b", doc("c", int32(2)))},
		{"include nested form", doc("b", doc("d", int32(1))), doc("_id", int32(1), "b", doc("d", int32(3)))},
		{"include through array", doc("arr.y", int32(1), "_id", false), doc("arr", arr(doc("y", int32(2)), doc("y", int32(3))))},
		{"include missing", doc("zz", int32(1)), doc("_id", int32(1))},
		{"id only", doc("_id", int32(1)), doc("_id", int32(1))},
		{"exclude", doc("a", int32(0), "list", int32(0), "arr", int32(0)), doc("_id", int32(1), "b", doc("c", int32(2), "d", int32(3)))},
		{"exclude id", doc("_id", int32(0), "b", int32(0), "arr", int32(0), "list", false), doc("a", int32(1))},
		{"exclude dotted", doc("b.c", int32(0), "arr", int32(0), "list", int32(0)), doc("_id", int32(1), "a", int32(1), "b", doc("d", int32(3)))},
		{"exclude through array", doc("arr.y", int32(0), "_id", int32(0), "a", int32(0), "b", int32(0), "list", int32(0)),
			doc("arr", arr(doc("x", int32(1)), int32(5), doc()))},
		{"empty projection", doc(), src},
		{"slice first", doc("list", doc("$slice", int32(2)), "_id", int32(0), "a", int32(0), "b", int32(0), "arr", int32(0)), doc("list", arr(int32(1), int32(2)))},
		{"slice last", doc("list", doc("$slice", int32(-1)), "a", int32(1), "_id", int32(0)), doc("a", int32(1), "list", arr(int32(4)))},
		{"slice skip limit", doc("list", doc("$slice", arr(int32(1), int32(2))), "a", int32(1)), doc("_id", int32(1), "a", int32(1), "list", arr(int32(2), int32(3)))},
		{"slice negative skip", doc("list", doc("$slice", arr(int32(-3), int32(5))), "a", int32(1)), doc("_id", int32(1), "a", int32(1), "list", arr(int32(2), int32(3), int32(4)))},
		{"slice alone keeps rest", doc("list", doc("$slice", int32(1))), doc("_id", int32(1), "a", int32(1), "b", doc("c", int32(2), "d", int32(3)),
			"arr", arr(doc("x", int32(1), "y", int32(2)), int32(5), doc("y", int32(3))), "list", arr(int32(1)))},
		{"elemMatch", doc("arr", doc("$elemMatch", doc("y", doc("$gt", int32(2))))), doc("_id", int32(1), "arr", arr(doc("y", int32(3))))},
		{"elemMatch none", doc("arr", doc("$elemMatch", doc("y", int32(9)))), doc("_id", int32(1))},
		{"computed", doc("sum", doc("$add", arr("$a", "$b.c")), "_id", int32(0)), doc("sum", int32(3))},
		{"computed literal string", doc("a", int32(1), "k", "$b.d"), doc("_id", int32(1), "a", int32(1), "k", int32(3))},
	}
	for _, c := range cases {
		p, err := ParseProjection(c.proj)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		before := roundTrip(t, src)
		got := p.Apply(src)
		if !identical(got, c.want) {
			t.Errorf("%s: %v\n got %v\nwant %v", c.name, c.proj, got, c.want)
		}
		if !identical(src, before) {
			t.Fatalf("%s: Apply modified its input", c.name)
		}
	}
}

func TestProjectionErrors(t *testing.T) {
	cases := []struct {
		proj bson.D
		code int32
	}{
		{doc("a", int32(1), "b", int32(0)), 31254},
		{doc("a", int32(0), "b", int32(1)), 31253},
		{doc("a", int32(1), "a.b", int32(1)), 31250},
		{doc("a.b", int32(1), "a", int32(1)), 31250},
		{doc("$.a", int32(1)), 16410},
		{doc("a.$.b", int32(1)), 31394},
		{doc("a.$", int32(0)), 16410},
		{doc("a.$", doc("x", int32(1))), 31271},
		{doc("a.$", "x"), 31308},
		{doc("a.$", int32(1), "b.$", int32(1)), 31276},
		{doc("a.$", int32(1), "c", int32(0)), 31254},
		{doc("$a", int32(1)), 16410},
		{doc("", int32(1)), 40352},
		{doc("a", int32(0), "b", "x"), 31310},
		{doc("a", int32(0), "b", doc("$add", arr(int32(1), int32(2)))), 31252},
		{doc("a", doc("$slice", "x")), 28667},
		{doc("a", doc("$slice", arr(int32(1)))), 28667},
		{doc("a", doc("$slice", arr(int32(1), int32(0)))), 28724},
		{doc("a.b", doc("$elemMatch", doc("x", int32(1)))), 31275},
		{doc("a", doc("$elemMatch", int32(1))), 31274},
		{doc("a", doc()), 51270},
		{doc("a", doc("$bogus", int32(1))), 168},
	}
	for _, c := range cases {
		_, err := ParseProjection(c.proj)
		if err == nil {
			t.Errorf("%v: no error", c.proj)
			continue
		}
		wantCode(t, err, c.code)
	}
}

func TestProjectionPositional(t *testing.T) {
	p, err := ParseProjection(doc("grades.$", int32(1), "name", int32(1)))
	if err != nil {
		t.Fatal(err)
	}
	src := doc("_id", int32(1), "name", "n", "grades", arr(int32(70), int32(85), int32(92)), "other", true)
	q, err := ParseFilter(doc("grades", doc("$gte", int32(80))))
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.ApplyWithQuery(src, q)
	if err != nil {
		t.Fatal(err)
	}
	if want := doc("_id", int32(1), "name", "n", "grades", arr(int32(85))); !identical(got, want) {
		t.Errorf("positional: %v, want %v", got, want)
	}
	// Without the query (or with one that does not test the array) the field is left out.
	if got, want := p.Apply(src), doc("_id", int32(1), "name", "n"); !identical(got, want) {
		t.Errorf("without query: %v, want %v", got, want)
	}
	other, _ := ParseFilter(doc("name", "n"))
	if got, _ := p.ApplyWithQuery(src, other); !identical(got, doc("_id", int32(1), "name", "n")) {
		t.Errorf("unrelated query: %v", got)
	}
}
