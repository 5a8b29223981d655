package mql

import (
	"math"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

var testNow = time.Date(2026, 11, 24, 5, 0, 0, 0, time.UTC)

type updateCase struct {
	name     string
	update   bson.D
	doc      bson.D
	want     bson.D
	modified bool
}

func runUpdateCases(t *testing.T, cases []updateCase) {
	t.Helper()
	runFilteredUpdateCases(t, nil, cases)
}

// runFilteredUpdateCases runs update cases; filters[i] are the array filters of cases[i].
func runFilteredUpdateCases(t *testing.T, filters [][]bson.D, cases []updateCase) {
	t.Helper()
	for i, c := range cases {
		var af []bson.D
		if filters != nil {
			af = filters[i]
		}
		u, err := ParseUpdate(c.update, af)
		if err != nil {
			t.Errorf("%s: ParseUpdate(%v): %v", c.name, c.update, err)
			continue
		}
		before := roundTrip(t, c.doc)
		got, modified, err := u.Apply(c.doc, false, testNow)
		if err != nil {
			t.Errorf("%s: Apply: %v", c.name, err)
			continue
		}
		if !identical(got, c.want) || formatValue(got) != formatValue(c.want) {
			t.Errorf("%s: %v on %v\n got %v\nwant %v", c.name, c.update, c.doc, got, c.want)
		}
		if modified != c.modified {
			t.Errorf("%s: modified = %v, want %v", c.name, modified, c.modified)
		}
		if !identical(roundTrip(t, c.doc), before) {
			t.Errorf("%s: Apply modified its input", c.name)
		}
	}
}

func TestUpdateSetUnset(t *testing.T) {
	runUpdateCases(t, []updateCase{
		{"set new", doc("$set", doc("b", int32(2))), doc("_id", int32(1), "a", int32(1)), doc("_id", int32(1), "a", int32(1), "b", int32(2)), true},
		{"set existing keeps position", doc("$set", doc("a", "x")), doc("a", int32(1), "b", int32(2)), doc("a", "x", "b", int32(2)), true},
		{"set same value", doc("$set", doc("a", int32(1))), doc("a", int32(1)), doc("a", int32(1)), false},
		{"set other numeric type", doc("$set", doc("a", 1.0)), doc("a", int32(1)), doc("a", 1.0), true},
		{"set new fields in name order", doc("$set", doc("z", int32(1), "m", int32(2))), doc(), doc("m", int32(2), "z", int32(1)), true},
		{"set dotted creates", doc("$set", doc("a.b.c", int32(1))), doc(), doc("a", doc("b", doc("c", int32(1)))), true},
		{"set dotted existing", doc("$set", doc("a.b", int32(5))), doc("a", doc("b", int32(1), "c", int32(2))), doc("a", doc("b", int32(5), "c", int32(2))), true},
		{"set array index", doc("$set", doc("a.1", "x")), doc("a", arr(int32(0), int32(1))), doc("a", arr(int32(0), "x")), true},
		{"set array pad", doc("$set", doc("a.3", "x")), doc("a", arr(int32(0))), doc("a", arr(int32(0), nil, nil, "x")), true},
		{"set in array doc", doc("$set", doc("a.0.b", int32(1))), doc("a", arr(doc("b", int32(0)))), doc("a", arr(doc("b", int32(1)))), true},
		{"set doc value", doc("$set", doc("a", doc("x", arr(int32(1))))), doc("a", int32(1)), doc("a", doc("x", arr(int32(1)))), true},
		{"unset", doc("$unset", doc("a", "")), doc("a", int32(1), "b", int32(2)), doc("b", int32(2)), true},
		{"unset missing", doc("$unset", doc("x", int32(1))), doc("a", int32(1)), doc("a", int32(1)), false},
		{"unset dotted", doc("$unset", doc("a.b", int32(1))), doc("a", doc("b", int32(1), "c", int32(2))), doc("a", doc("c", int32(2))), true},
		{"unset array element nulls", doc("$unset", doc("a.1", int32(1))), doc("a", arr(int32(1), int32(2), int32(3))), doc("a", arr(int32(1), nil, int32(3))), true},
		{"unset through scalar", doc("$unset", doc("a.b", int32(1))), doc("a", int32(1)), doc("a", int32(1)), false},
		{"setOnInsert ignored on update", doc("$setOnInsert", doc("a", int32(1))), doc("b", int32(1)), doc("b", int32(1)), false},
		{"empty operator", doc("$set", doc()), doc("a", int32(1)), doc("a", int32(1)), false},
	})
}

func TestUpdateArithmetic(t *testing.T) {
	runUpdateCases(t, []updateCase{
		{"inc", doc("$inc", doc("a", int32(2))), doc("a", int32(1)), doc("a", int32(3)), true},
		{"inc missing", doc("$inc", doc("a", int64(2))), doc(), doc("a", int64(2)), true},
		{"inc zero", doc("$inc", doc("a", int32(0))), doc("a", int32(5)), doc("a", int32(5)), false},
		{"inc int to long", doc("$inc", doc("a", int64(1))), doc("a", int32(1)), doc("a", int64(2)), true},
		{"inc int overflow to long", doc("$inc", doc("a", int32(1))), doc("a", int32(math.MaxInt32)), doc("a", int64(math.MaxInt32)+1), true},
		{"inc double", doc("$inc", doc("a", 0.5)), doc("a", int32(1)), doc("a", 1.5), true},
		{"inc decimal", doc("$inc", doc("a", dec(t, "0.1"))), doc("a", int32(1)), doc("a", dec(t, "1.1")), true},
		{"inc dotted array", doc("$inc", doc("a.1", int32(1))), doc("a", arr(int32(1), int32(1))), doc("a", arr(int32(1), int32(2))), true},
		{"mul", doc("$mul", doc("a", int32(3))), doc("a", int32(2)), doc("a", int32(6)), true},
		{"mul missing is zero", doc("$mul", doc("a", 2.5)), doc(), doc("a", 0.0), true},
		{"mul missing long", doc("$mul", doc("a", int64(7))), doc(), doc("a", int64(0)), true},
		{"mul by one", doc("$mul", doc("a", int32(1))), doc("a", int32(4)), doc("a", int32(4)), false},
		{"min lower", doc("$min", doc("a", int32(1))), doc("a", int32(5)), doc("a", int32(1)), true},
		{"min higher", doc("$min", doc("a", int32(9))), doc("a", int32(5)), doc("a", int32(5)), false},
		{"min missing", doc("$min", doc("a", int32(9))), doc(), doc("a", int32(9)), true},
		{"min type order", doc("$min", doc("a", nil)), doc("a", int32(5)), doc("a", nil), true},
		{"max", doc("$max", doc("a", "s")), doc("a", int32(5)), doc("a", "s"), true},
		{"max equal value other type", doc("$max", doc("a", 5.0)), doc("a", int32(5)), doc("a", int32(5)), false},
		{"currentDate", doc("$currentDate", doc("d", true)), doc(), doc("d", bson.NewDateTimeFromTime(testNow)), true},
		{"currentDate timestamp", doc("$currentDate", doc("d", doc("$type", "timestamp"))), doc(), doc("d", bson.Timestamp{T: uint32(testNow.Unix()), I: 1}), true},
	})
}

func TestUpdateArrays(t *testing.T) {
	runUpdateCases(t, []updateCase{
		{"push", doc("$push", doc("a", int32(3))), doc("a", arr(int32(1))), doc("a", arr(int32(1), int32(3))), true},
		{"push missing", doc("$push", doc("a", "x")), doc(), doc("a", arr("x")), true},
		{"push array value", doc("$push", doc("a", arr(int32(1)))), doc("a", arr()), doc("a", arr(arr(int32(1)))), true},
		{"push each", doc("$push", doc("a", doc("$each", arr(int32(2), int32(3))))), doc("a", arr(int32(1))), doc("a", arr(int32(1), int32(2), int32(3))), true},
		{"push position", doc("$push", doc("a", doc("$each", arr("x"), "$position", int32(0)))), doc("a", arr(int32(1), int32(2))), doc("a", arr("x", int32(1), int32(2))), true},
		{"push negative position", doc("$push", doc("a", doc("$each", arr("x"), "$position", int32(-1)))), doc("a", arr(int32(1), int32(2))), doc("a", arr(int32(1), "x", int32(2))), true},
		{"push slice", doc("$push", doc("a", doc("$each", arr(int32(4)), "$slice", int32(-2)))), doc("a", arr(int32(1), int32(2), int32(3))), doc("a", arr(int32(3), int32(4))), true},
		{"push sort slice", doc("$push", doc("a", doc("$each", arr(int32(0), int32(9)), "$sort", int32(-1), "$slice", int32(3)))), doc("a", arr(int32(5), int32(1))), doc("a", arr(int32(9), int32(5), int32(1))), true},
		{"push sort by field", doc("$push", doc("a", doc("$each", arr(doc("s", int32(2))), "$sort", doc("s", int32(1))))), doc("a", arr(doc("s", int32(3)), doc("s", int32(1)))),
			doc("a", arr(doc("s", int32(1)), doc("s", int32(2)), doc("s", int32(3)))), true},
		{"push each empty slice zero", doc("$push", doc("a", doc("$each", arr(), "$slice", int32(0)))), doc("a", arr(int32(1))), doc("a", arr()), true},
		{"addToSet new", doc("$addToSet", doc("a", int32(3))), doc("a", arr(int32(1))), doc("a", arr(int32(1), int32(3))), true},
		{"addToSet present", doc("$addToSet", doc("a", 1.0)), doc("a", arr(int32(1))), doc("a", arr(int32(1))), false},
		{"addToSet each", doc("$addToSet", doc("a", doc("$each", arr(int32(1), int32(2), int32(2))))), doc("a", arr(int32(1))), doc("a", arr(int32(1), int32(2))), true},
		{"addToSet missing", doc("$addToSet", doc("a", "x")), doc(), doc("a", arr("x")), true},
		{"pop last", doc("$pop", doc("a", int32(1))), doc("a", arr(int32(1), int32(2))), doc("a", arr(int32(1))), true},
		{"pop first", doc("$pop", doc("a", int32(-1))), doc("a", arr(int32(1), int32(2))), doc("a", arr(int32(2))), true},
		{"pop empty", doc("$pop", doc("a", int32(1))), doc("a", arr()), doc("a", arr()), false},
		{"pop missing", doc("$pop", doc("a", int32(1))), doc(), doc(), false},
		{"pull value", doc("$pull", doc("a", int32(2))), doc("a", arr(int32(1), int32(2), 2.0, int32(3))), doc("a", arr(int32(1), int32(3))), true},
		{"pull condition", doc("$pull", doc("a", doc("$gte", int32(2)))), doc("a", arr(int32(1), int32(2), int32(3))), doc("a", arr(int32(1))), true},
		{"pull doc query", doc("$pull", doc("a", doc("x", int32(1)))), doc("a", arr(doc("x", int32(1), "y", int32(2)), doc("x", int32(2)), "s")), doc("a", arr(doc("x", int32(2)), "s")), true},
		{"pull nothing", doc("$pull", doc("a", int32(9))), doc("a", arr(int32(1))), doc("a", arr(int32(1))), false},
		{"pull in", doc("$pull", doc("a", doc("$in", arr("x", "y")))), doc("a", arr("x", "z", "y")), doc("a", arr("z")), true},
		{"pullAll", doc("$pullAll", doc("a", arr(int32(1), int32(3)))), doc("a", arr(int32(1), int32(2), int32(3), int32(1))), doc("a", arr(int32(2))), true},
	})
}

func TestUpdatePositional(t *testing.T) {
	runUpdateCases(t, []updateCase{
		{"all elements", doc("$inc", doc("a.$[]", int32(1))), doc("a", arr(int32(1), int32(2))), doc("a", arr(int32(2), int32(3))), true},
		{"all elements field", doc("$set", doc("a.$[].b", "x")), doc("a", arr(doc("b", int32(1)), doc())), doc("a", arr(doc("b", "x"), doc("b", "x"))), true},
		{"all elements empty", doc("$set", doc("a.$[]", int32(1))), doc("a", arr()), doc("a", arr()), false},
		{"unset all elements", doc("$unset", doc("a.$[]", int32(1))), doc("a", arr(int32(1))), doc("a", arr(nil)), true},
	})
	runFilteredUpdateCases(t, [][]bson.D{
		{doc("e", doc("$gt", int32(4)))},
		{doc("e.k", "x")},
		{doc("i.k", int32(1)), doc("j", doc("$lt", int32(0)))},
		{doc("e", int32(7))},
	}, []updateCase{
		{"filtered", doc("$set", doc("a.$[e]", int32(0))), doc("a", arr(int32(1), int32(5), int32(9))), doc("a", arr(int32(1), int32(0), int32(0))), true},
		{"filtered field", doc("$inc", doc("a.$[e].n", int32(1))),
			doc("a", arr(doc("k", "x", "n", int32(1)), doc("k", "y", "n", int32(1)))), doc("a", arr(doc("k", "x", "n", int32(2)), doc("k", "y", "n", int32(1)))), true},
		{"nested filters", doc("$set", doc("a.$[i].b.$[j]", "z")),
			doc("a", arr(doc("k", int32(1), "b", arr(int32(-1), int32(2))), doc("k", int32(2), "b", arr(int32(-5))))),
			doc("a", arr(doc("k", int32(1), "b", arr("z", int32(2))), doc("k", int32(2), "b", arr(int32(-5))))), true},
		{"filter matches none", doc("$set", doc("a.$[e]", int32(0))), doc("a", arr(int32(1))), doc("a", arr(int32(1))), false},
	})
	// The positional $ needs the query.
	u, err := ParseUpdate(doc("$set", doc("a.$.v", "hit")), nil)
	if err != nil {
		t.Fatal(err)
	}
	q, err := ParseFilter(doc("a.k", int32(2)))
	if err != nil {
		t.Fatal(err)
	}
	src := doc("_id", int32(1), "a", arr(doc("k", int32(1)), doc("k", int32(2)), doc("k", int32(2))))
	got, modified, err := u.ApplyWithQuery(src, q, false, testNow)
	if err != nil {
		t.Fatal(err)
	}
	want := doc("_id", int32(1), "a", arr(doc("k", int32(1)), doc("k", int32(2), "v", "hit"), doc("k", int32(2))))
	if !identical(got, want) || !modified {
		t.Errorf("positional: got %v, want %v", got, want)
	}
	_, _, err = u.Apply(src, false, testNow)
	wantCode(t, err, CodeBadValue)
	q2, _ := ParseFilter(doc("_id", int32(1)))
	_, _, err = u.ApplyWithQuery(src, q2, false, testNow)
	wantCode(t, err, CodeBadValue)
}

func TestUpdateRename(t *testing.T) {
	runUpdateCases(t, []updateCase{
		{"rename", doc("$rename", doc("a", "b")), doc("a", int32(1), "c", int32(2)), doc("c", int32(2), "b", int32(1)), true},
		{"rename over existing", doc("$rename", doc("a", "c")), doc("a", int32(1), "c", int32(2)), doc("c", int32(1)), true},
		{"rename missing", doc("$rename", doc("a", "b")), doc("c", int32(1)), doc("c", int32(1)), false},
		{"rename dotted", doc("$rename", doc("a.x", "b.y")), doc("a", doc("x", int32(1))), doc("a", doc(), "b", doc("y", int32(1))), true},
	})
	u, err := ParseUpdate(doc("$rename", doc("a.0", "b")), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = u.Apply(doc("a", arr(int32(1))), false, testNow)
	wantCode(t, err, CodeBadValue)
}

func TestUpdateSetOnInsert(t *testing.T) {
	u, err := ParseUpdate(doc("$set", doc("a", int32(1)), "$setOnInsert", doc("created", true)), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := u.Apply(doc("_id", int32(7)), true, testNow)
	if err != nil {
		t.Fatal(err)
	}
	if want := doc("_id", int32(7), "a", int32(1), "created", true); !identical(got, want) {
		t.Errorf("insert: %v, want %v", got, want)
	}
	got, _, err = u.Apply(doc("_id", int32(7)), false, testNow)
	if err != nil {
		t.Fatal(err)
	}
	if want := doc("_id", int32(7), "a", int32(1)); !identical(got, want) {
		t.Errorf("update: %v, want %v", got, want)
	}
}

func TestUpdateParseErrors(t *testing.T) {
	cases := []struct {
		name    string
		update  bson.D
		filters []bson.D
		code    int32
	}{
		{"empty", doc(), nil, CodeFailedToParse},
		{"replacement", doc("a", int32(1)), nil, CodeFailedToParse},
		{"unknown", doc("$foo", doc("a", int32(1))), nil, CodeFailedToParse},
		{"not doc", doc("$set", int32(1)), nil, CodeFailedToParse},
		{"conflict same", doc("$set", doc("a", int32(1)), "$inc", doc("a", int32(1))), nil, CodeConflictingUpdate},
		{"conflict prefix", doc("$set", doc("a.b", int32(1)), "$unset", doc("a", int32(1))), nil, CodeConflictingUpdate},
		{"conflict rename", doc("$rename", doc("a", "b"), "$set", doc("b.c", int32(1))), nil, CodeConflictingUpdate},
		{"conflict same op", doc("$set", doc("a", int32(1), "a", int32(2))), nil, CodeConflictingUpdate},
		{"inc string arg", doc("$inc", doc("a", "x")), nil, CodeTypeMismatch},
		{"mul string arg", doc("$mul", doc("a", "x")), nil, CodeTypeMismatch},
		{"pop bad", doc("$pop", doc("a", int32(2))), nil, CodeFailedToParse},
		{"empty path", doc("$set", doc("", int32(1))), nil, CodeEmptyFieldName},
		{"empty component", doc("$set", doc("a..b", int32(1))), nil, CodeEmptyFieldName},
		{"dollar field", doc("$set", doc("$x", int32(1))), nil, CodeDollarPrefixedField},
		{"rename same", doc("$rename", doc("a", "a")), nil, CodeBadValue},
		{"rename prefix", doc("$rename", doc("a", "a.b")), nil, CodeBadValue},
		{"rename not string", doc("$rename", doc("a", int32(1))), nil, CodeBadValue},
		{"rename positional", doc("$rename", doc("a.$[]", "b")), nil, CodeBadValue},
		{"no array filter", doc("$set", doc("a.$[x]", int32(1))), nil, CodeBadValue},
		{"unused array filter", doc("$set", doc("a", int32(1))), []bson.D{doc("x", int32(1))}, CodeFailedToParse},
		{"bad identifier", doc("$set", doc("a.$[X]", int32(1))), []bson.D{doc("X", int32(1))}, CodeBadValue},
		{"duplicate identifier", doc("$set", doc("a.$[x]", int32(1))), []bson.D{doc("x", int32(1)), doc("x", int32(2))}, CodeFailedToParse},
		{"push bad each", doc("$push", doc("a", doc("$each", int32(1)))), nil, CodeBadValue},
		{"push unknown clause", doc("$push", doc("a", doc("$each", arr(), "$foo", int32(1)))), nil, CodeBadValue},
		{"addToSet slice", doc("$addToSet", doc("a", doc("$each", arr(), "$slice", int32(1)))), nil, CodeBadValue},
		{"currentDate bad", doc("$currentDate", doc("a", doc("$type", "x"))), nil, CodeBadValue},
		{"pullAll not array", doc("$pullAll", doc("a", int32(1))), nil, CodeBadValue},
		{"two positional", doc("$set", doc("a.$.b.$", int32(1))), nil, CodeBadValue},
		{"pull bad regex", doc("$pull", doc("a", bson.Regex{Pattern: "(?=x)"})), nil, CodeRegexInvalid},
	}
	for _, c := range cases {
		_, err := ParseUpdate(c.update, c.filters)
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		t.Run(c.name, func(t *testing.T) { wantCode(t, err, c.code) })
	}
}

func TestUpdateApplyErrors(t *testing.T) {
	cases := []struct {
		name   string
		update bson.D
		doc    bson.D
		code   int32
	}{
		{"inc string", doc("$inc", doc("a", int32(1))), doc("_id", int32(1), "a", "x"), CodeTypeMismatch},
		{"mul bool", doc("$mul", doc("a", int32(1))), doc("a", true), CodeTypeMismatch},
		{"inc long overflow", doc("$inc", doc("a", int64(1))), doc("a", int64(math.MaxInt64)), CodeBadValue},
		{"set through scalar", doc("$set", doc("a.b", int32(1))), doc("a", int32(5)), CodePathNotViable},
		{"set field of array", doc("$set", doc("a.b", int32(1))), doc("a", arr(int32(1))), CodePathNotViable},
		{"push non array", doc("$push", doc("a", int32(1))), doc("a", int32(1)), CodeBadValue},
		{"addToSet non array", doc("$addToSet", doc("a", int32(1))), doc("a", "s"), CodeBadValue},
		{"pop non array", doc("$pop", doc("a", int32(1))), doc("a", "s"), CodeTypeMismatch},
		{"pull non array", doc("$pull", doc("a", int32(1))), doc("a", "s"), CodeBadValue},
		{"all positional non array", doc("$set", doc("a.$[]", int32(1))), doc("a", int32(1)), CodeBadValue},
		{"all positional missing", doc("$set", doc("a.$[]", int32(1))), doc(), CodeBadValue},
		{"pad too far", doc("$set", doc("a.99999999", int32(1))), doc("a", arr()), CodeBadValue},
	}
	for _, c := range cases {
		u, err := ParseUpdate(c.update, nil)
		if err != nil {
			t.Errorf("%s: parse: %v", c.name, err)
			continue
		}
		_, _, err = u.Apply(c.doc, false, testNow)
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		t.Run(c.name, func(t *testing.T) { wantCode(t, err, c.code) })
	}
}

func TestIsReplacement(t *testing.T) {
	if !IsReplacement(doc("a", int32(1))) || !IsReplacement(doc()) {
		t.Error("plain documents are replacements")
	}
	if IsReplacement(doc("$set", doc("a", int32(1)))) || IsReplacement(doc("a", int32(1), "$inc", doc())) {
		t.Error("operator documents are not replacements")
	}
}

func TestUpsertSeed(t *testing.T) {
	cases := []struct {
		filter bson.D
		want   bson.D
	}{
		{doc("a", int32(1), "b", doc("$gt", int32(5))), doc("a", int32(1))},
		{doc("a.b", "x", "c", doc("$eq", int32(2))), doc("a", doc("b", "x"), "c", int32(2))},
		{doc("$and", arr(doc("a", int32(1)), doc("b.c", int32(2)))), doc("a", int32(1), "b", doc("c", int32(2)))},
		{doc("$or", arr(doc("a", int32(1)))), doc()},
		{doc("a", bson.Regex{Pattern: "x"}), doc()},
		{doc("a.x", int32(1), "a.y", int32(2)), doc("a", doc("x", int32(1), "y", int32(2)))},
		{doc("a", doc("x", int32(1)), "a.y", int32(2)), doc("a", doc("x", int32(1)))},
	}
	for _, c := range cases {
		f, err := ParseFilter(c.filter)
		if err != nil {
			t.Fatal(err)
		}
		if got := UpsertSeed(f); !identical(got, c.want) {
			t.Errorf("UpsertSeed(%v) = %v, want %v", c.filter, got, c.want)
		}
	}
}
