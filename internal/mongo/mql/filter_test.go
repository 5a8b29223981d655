package mql

import (
	"math"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

type filterCase struct {
	name   string
	filter bson.D
	doc    bson.D
	want   bool
}

func runFilterCases(t *testing.T, cases []filterCase) {
	t.Helper()
	for _, c := range cases {
		f, err := ParseFilter(c.filter)
		if err != nil {
			t.Errorf("%s: ParseFilter(%v): %v", c.name, c.filter, err)
			continue
		}
		if got := f.Match(c.doc); got != c.want {
			t.Errorf("%s: %v on %v = %v, want %v", c.name, c.filter, c.doc, got, c.want)
		}
		// The same answer for the document as decoded from BSON bytes.
		if got := f.Match(roundTrip(t, c.doc)); got != c.want {
			t.Errorf("%s (round-tripped): got %v, want %v", c.name, got, c.want)
		}
	}
}

func TestFilterEquality(t *testing.T) {
	runFilterCases(t, []filterCase{
		{"scalar", doc("a", int32(1)), doc("a", int32(1)), true},
		{"scalar other", doc("a", int32(1)), doc("a", int32(2)), false},
		{"int matches double", doc("a", int32(1)), doc("a", 1.0), true},
		{"long matches decimal", doc("a", int64(5)), doc("a", dec(t, "5.0")), true},
		{"string is not number", doc("a", "1"), doc("a", int32(1)), false},
		{"array element", doc("a", int32(2)), doc("a", arr(int32(1), int32(2))), true},
		{"whole array", doc("a", arr(int32(1), int32(2))), doc("a", arr(int32(1), int32(2))), true},
		{"array order matters", doc("a", arr(int32(2), int32(1))), doc("a", arr(int32(1), int32(2))), false},
		{"nested array element", doc("a", arr(int32(1))), doc("a", arr(arr(int32(1)), int32(3))), true},
		{"no double traversal", doc("a", int32(1)), doc("a", arr(arr(int32(1)))), false},
		{"null matches missing", doc("a", nil), doc("b", int32(1)), true},
		{"null matches null", doc("a", nil), doc("a", nil), true},
		{"null not value", doc("a", nil), doc("a", int32(0)), false},
		{"null matches null element", doc("a", nil), doc("a", arr(int32(1), nil)), true},
		{"null matches undefined", doc("a", nil), doc("a", bson.Undefined{}), true},
		{"dotted", doc("a.b", "x"), doc("a", doc("b", "x")), true},
		{"dotted through array", doc("a.b", "x"), doc("a", arr(doc("b", "y"), doc("b", "x"))), true},
		{"dotted through array miss", doc("a.b", "z"), doc("a", arr(doc("b", "y"), doc("b", "x"))), false},
		{"dotted index", doc("a.1", "x"), doc("a", arr("w", "x")), true},
		{"dotted index miss", doc("a.0", "x"), doc("a", arr("w", "x")), false},
		{"dotted index into docs", doc("a.0.b", int32(1)), doc("a", arr(doc("b", int32(1)))), true},
		{"dotted null partly missing", doc("a.b", nil), doc("a", arr(doc("b", int32(1)), doc("c", int32(1)))), true},
		{"dotted null all present", doc("a.b", nil), doc("a", arr(doc("b", int32(1)), doc("b", int32(2)))), false},
		{"embedded doc exact", doc("a", doc("x", int32(1), "y", int32(2))), doc("a", doc("x", int32(1), "y", int32(2))), true},
		{"embedded doc order", doc("a", doc("y", int32(2), "x", int32(1))), doc("a", doc("x", int32(1), "y", int32(2))), false},
		{"regex implicit", doc("a", bson.Regex{Pattern: "^ab", Options: ""}), doc("a", "abc"), true},
		{"regex implicit i", doc("a", bson.Regex{Pattern: "^AB", Options: "i"}), doc("a", "abc"), true},
		{"regex in array", doc("a", bson.Regex{Pattern: "z$"}), doc("a", arr("x", "yz")), true},
		{"regex not on number", doc("a", bson.Regex{Pattern: "1"}), doc("a", int32(1)), false},
		{"eq op", doc("a", doc("$eq", int32(3))), doc("a", arr(int32(3))), true},
		{"eq regex is literal", doc("a", doc("$eq", bson.Regex{Pattern: "a"})), doc("a", "a"), false},
		{"eq regex stored", doc("a", doc("$eq", bson.Regex{Pattern: "a"})), doc("a", bson.Regex{Pattern: "a"}), true},
		{"ne", doc("a", doc("$ne", int32(1))), doc("a", int32(2)), true},
		{"ne array", doc("a", doc("$ne", int32(1))), doc("a", arr(int32(2), int32(1))), false},
		{"ne missing", doc("a", doc("$ne", int32(1))), doc(), true},
		{"ne null missing", doc("a", doc("$ne", nil)), doc(), false},
		{"empty filter", doc(), doc("a", int32(1)), true},
		{"dbref literal", doc("r", doc("$ref", "c", "$id", int32(1))), doc("r", doc("$ref", "c", "$id", int32(1))), true},
		{"dbref literal miss", doc("r", doc("$ref", "c", "$id", int32(1))), doc("r", doc("$ref", "c", "$id", int32(2))), false},
		{"NaN equals NaN", doc("a", math.NaN()), doc("a", dec(t, "NaN")), true},
	})
}

func TestFilterComparison(t *testing.T) {
	runFilterCases(t, []filterCase{
		{"gt", doc("a", doc("$gt", int32(1))), doc("a", 1.5), true},
		{"gt equal", doc("a", doc("$gt", int32(1))), doc("a", int64(1)), false},
		{"gte", doc("a", doc("$gte", int32(1))), doc("a", int64(1)), true},
		{"lt decimal", doc("a", doc("$lt", dec(t, "2.5"))), doc("a", int32(2)), true},
		{"lte", doc("a", doc("$lte", "b")), doc("a", "ab"), true},
		{"type bracket", doc("a", doc("$gt", int32(1))), doc("a", "zzz"), false},
		{"type bracket lt", doc("a", doc("$lt", "a")), doc("a", int32(1)), false},
		{"array any element", doc("a", doc("$gt", int32(5))), doc("a", arr(int32(1), int32(9))), true},
		{"range across elements", doc("a", doc("$gt", int32(2), "$lt", int32(4))), doc("a", arr(int32(1), int32(5))), true},
		{"elemMatch range one element", doc("a", doc("$elemMatch", doc("$gt", int32(2), "$lt", int32(4)))), doc("a", arr(int32(1), int32(5))), false},
		{"elemMatch range hit", doc("a", doc("$elemMatch", doc("$gt", int32(2), "$lt", int32(4)))), doc("a", arr(int32(1), int32(3))), true},
		{"gt missing", doc("a", doc("$gt", int32(1))), doc(), false},
		{"gte null missing", doc("a", doc("$gte", nil)), doc(), true},
		{"lt null", doc("a", doc("$lt", nil)), doc("a", nil), false},
		{"gt minkey", doc("a", doc("$gt", bson.MinKey{})), doc("a", "s"), true},
		{"lt maxkey", doc("a", doc("$lt", bson.MaxKey{})), doc("a", doc()), true},
		{"NaN not greater", doc("a", doc("$gt", int32(0))), doc("a", math.NaN()), false},
		{"NaN not less", doc("a", doc("$lt", int32(0))), doc("a", math.NaN()), false},
		{"gte NaN", doc("a", doc("$gte", math.NaN())), doc("a", math.NaN()), true},
		{"gt NaN", doc("a", doc("$gt", math.NaN())), doc("a", math.NaN()), false},
		{"array compare whole", doc("a", doc("$gt", arr(int32(1)))), doc("a", arr(int32(2))), true},
		{"date", doc("a", doc("$gte", bson.DateTime(10))), doc("a", bson.DateTime(11)), true},
		{"date vs number", doc("a", doc("$gte", int32(10))), doc("a", bson.DateTime(11)), false},
	})
}

func TestFilterSetOperators(t *testing.T) {
	runFilterCases(t, []filterCase{
		{"in", doc("a", doc("$in", arr(int32(1), "x"))), doc("a", "x"), true},
		{"in miss", doc("a", doc("$in", arr(int32(1), "x"))), doc("a", "y"), false},
		{"in array field", doc("a", doc("$in", arr(int32(1), int32(5)))), doc("a", arr(int32(4), int32(5))), true},
		{"in empty", doc("a", doc("$in", arr())), doc("a", int32(1)), false},
		{"in null missing", doc("a", doc("$in", arr(nil))), doc(), true},
		{"in regex", doc("a", doc("$in", arr(bson.Regex{Pattern: "^x"}, int32(3)))), doc("a", "xyz"), true},
		{"in regex miss", doc("a", doc("$in", arr(bson.Regex{Pattern: "^x"}))), doc("a", "yx"), false},
		{"nin", doc("a", doc("$nin", arr(int32(1), int32(2)))), doc("a", int32(3)), true},
		{"nin array", doc("a", doc("$nin", arr(int32(1), int32(2)))), doc("a", arr(int32(3), int32(2))), false},
		{"nin missing", doc("a", doc("$nin", arr(int32(1)))), doc(), true},
		{"all", doc("a", doc("$all", arr(int32(1), int32(2)))), doc("a", arr(int32(2), int32(3), int32(1))), true},
		{"all missing one", doc("a", doc("$all", arr(int32(1), int32(4)))), doc("a", arr(int32(2), int32(3), int32(1))), false},
		{"all scalar", doc("a", doc("$all", arr(int32(1)))), doc("a", int32(1)), true},
		{"all empty", doc("a", doc("$all", arr())), doc("a", arr(int32(1))), false},
		{"all nested array", doc("a", doc("$all", arr(arr(int32(1), int32(2))))), doc("a", arr(arr(int32(1), int32(2)))), true},
		{"all elemMatch", doc("a", doc("$all", arr(doc("$elemMatch", doc("x", int32(1))), doc("$elemMatch", doc("x", int32(2)))))),
			doc("a", arr(doc("x", int32(1)), doc("x", int32(2)))), true},
		{"all elemMatch miss", doc("a", doc("$all", arr(doc("$elemMatch", doc("x", int32(1))), doc("$elemMatch", doc("x", int32(3)))))),
			doc("a", arr(doc("x", int32(1)), doc("x", int32(2)))), false},
		{"size", doc("a", doc("$size", int32(2))), doc("a", arr(int32(1), int32(1))), true},
		{"size miss", doc("a", doc("$size", int32(1))), doc("a", arr(int32(1), int32(1))), false},
		{"size zero", doc("a", doc("$size", int32(0))), doc("a", arr()), true},
		{"size not array", doc("a", doc("$size", int32(1))), doc("a", int32(1)), false},
		{"size double", doc("a", doc("$size", 1.0)), doc("a", arr("x")), true},
		{"size nested doc path", doc("a.b", doc("$size", int32(1))), doc("a", arr(doc("b", arr(int32(1))))), true},
	})
}

func TestFilterElementAndMisc(t *testing.T) {
	runFilterCases(t, []filterCase{
		{"exists", doc("a", doc("$exists", true)), doc("a", nil), true},
		{"exists false", doc("a", doc("$exists", false)), doc("b", int32(1)), true},
		{"exists false present", doc("a", doc("$exists", false)), doc("a", int32(1)), false},
		{"exists number arg", doc("a", doc("$exists", int32(1))), doc("a", int32(1)), true},
		{"exists dotted array", doc("a.b", doc("$exists", true)), doc("a", arr(doc("c", int32(1)), doc("b", int32(2)))), true},
		{"exists dotted array none", doc("a.b", doc("$exists", true)), doc("a", arr(doc("c", int32(1)))), false},
		{"type alias", doc("a", doc("$type", "string")), doc("a", "x"), true},
		{"type number code", doc("a", doc("$type", int32(16))), doc("a", int32(1)), true},
		{"type long not int", doc("a", doc("$type", "int")), doc("a", int64(1)), false},
		{"type number alias", doc("a", doc("$type", "number")), doc("a", dec(t, "1")), true},
		{"type list", doc("a", doc("$type", arr("bool", "date"))), doc("a", bson.DateTime(0)), true},
		{"type array", doc("a", doc("$type", "array")), doc("a", arr()), true},
		{"type element", doc("a", doc("$type", "string")), doc("a", arr(int32(1), "s")), true},
		{"type null", doc("a", doc("$type", "null")), doc("a", nil), true},
		{"type null missing", doc("a", doc("$type", "null")), doc(), false},
		{"type minKey", doc("a", doc("$type", int32(-1))), doc("a", bson.MinKey{}), true},
		{"mod", doc("a", doc("$mod", arr(int32(4), int32(1)))), doc("a", int32(9)), true},
		{"mod miss", doc("a", doc("$mod", arr(int32(4), int32(1)))), doc("a", int32(10)), false},
		{"mod float truncates", doc("a", doc("$mod", arr(int32(4), int32(1)))), doc("a", 9.9), true},
		{"mod negative", doc("a", doc("$mod", arr(int32(4), int32(-1)))), doc("a", int32(-9)), true},
		{"mod string", doc("a", doc("$mod", arr(int32(4), int32(1)))), doc("a", "9"), false},
		{"regex op", doc("a", doc("$regex", "^a.c$")), doc("a", "abc"), true},
		{"regex options", doc("a", doc("$regex", "^A", "$options", "i")), doc("a", "abc"), true},
		{"regex m", doc("a", doc("$regex", "^b", "$options", "m")), doc("a", "a\nb"), true},
		{"regex no m", doc("a", doc("$regex", "^b")), doc("a", "a\nb"), false},
		{"regex s", doc("a", doc("$regex", "a.b", "$options", "s")), doc("a", "a\nb"), true},
		{"regex x", doc("a", doc("$regex", "a b # comment\n c", "$options", "x")), doc("a", "abc"), true},
		{"regex x class keeps space", doc("a", doc("$regex", "a[ ]b", "$options", "x")), doc("a", "a b"), true},
		{"regex bson value", doc("a", doc("$regex", bson.Regex{Pattern: "B", Options: "i"})), doc("a", "abc"), true},
		{"regex dollar before final newline", doc("a", bson.Regex{Pattern: "abc$"}), doc("a", "abc\n"), true},
		{"regex dollar not before inner newline", doc("a", bson.Regex{Pattern: "abc$"}), doc("a", "abc\nx"), false},
		{"regex dollar multiline", doc("a", bson.Regex{Pattern: "abc$", Options: "m"}), doc("a", "abc\nx"), true},
		{"regex escaped dollar", doc("a", bson.Regex{Pattern: `a\$`}), doc("a", "a$"), true},
		{"regex dollar in class", doc("a", bson.Regex{Pattern: `^[$]$`}), doc("a", "$"), true},
		{"regex Z anchor", doc("a", bson.Regex{Pattern: `c\Z`}), doc("a", "abc\n"), true},
		{"regex symbol", doc("a", doc("$regex", "^s")), doc("a", bson.Symbol("sym")), true},
		{"not regex", doc("a", doc("$not", bson.Regex{Pattern: "^a"})), doc("a", "bcd"), true},
		{"not regex matches missing", doc("a", doc("$not", bson.Regex{Pattern: "^a"})), doc(), true},
		{"not regex hit", doc("a", doc("$not", bson.Regex{Pattern: "^a"})), doc("a", "abc"), false},
		{"not gt", doc("a", doc("$not", doc("$gt", int32(5)))), doc("a", int32(3)), true},
		{"not gt missing", doc("a", doc("$not", doc("$gt", int32(5)))), doc(), true},
		{"not gt array", doc("a", doc("$not", doc("$gt", int32(5)))), doc("a", arr(int32(3), int32(7))), false},
		{"not regex op", doc("a", doc("$not", doc("$regex", "x"))), doc("a", "y"), true},
	})
}

func TestFilterLogicalAndElemMatch(t *testing.T) {
	runFilterCases(t, []filterCase{
		{"and", doc("$and", arr(doc("a", int32(1)), doc("b", int32(2)))), doc("a", int32(1), "b", int32(2)), true},
		{"and miss", doc("$and", arr(doc("a", int32(1)), doc("b", int32(3)))), doc("a", int32(1), "b", int32(2)), false},
		{"or", doc("$or", arr(doc("a", int32(9)), doc("b", int32(2)))), doc("a", int32(1), "b", int32(2)), true},
		{"or miss", doc("$or", arr(doc("a", int32(9)), doc("b", int32(9)))), doc("a", int32(1)), false},
		{"nor", doc("$nor", arr(doc("a", int32(9)), doc("b", int32(9)))), doc("a", int32(1)), true},
		{"nor hit", doc("$nor", arr(doc("a", int32(1)))), doc("a", int32(1)), false},
		{"nested logic", doc("$or", arr(doc("$and", arr(doc("a", int32(1)), doc("b", int32(1)))), doc("c", int32(1)))), doc("a", int32(1), "b", int32(1)), true},
		{"comment ignored", doc("a", int32(1), "$comment", "hello"), doc("a", int32(1)), true},
		{"implicit and of fields", doc("a", int32(1), "b", int32(2)), doc("a", int32(1), "b", int32(3)), false},
		{"elemMatch doc", doc("a", doc("$elemMatch", doc("x", int32(1), "y", int32(2)))), doc("a", arr(doc("x", int32(1), "y", int32(2)))), true},
		{"elemMatch doc split", doc("a", doc("$elemMatch", doc("x", int32(1), "y", int32(2)))), doc("a", arr(doc("x", int32(1)), doc("y", int32(2)))), false},
		{"implicit dotted split", doc("a.x", int32(1), "a.y", int32(2)), doc("a", arr(doc("x", int32(1)), doc("y", int32(2)))), true},
		{"elemMatch not array", doc("a", doc("$elemMatch", doc("x", int32(1)))), doc("a", doc("x", int32(1))), false},
		{"elemMatch scalars skipped", doc("a", doc("$elemMatch", doc("x", int32(1)))), doc("a", arr(int32(1), doc("x", int32(1)))), true},
		{"elemMatch with or", doc("a", doc("$elemMatch", doc("$or", arr(doc("x", int32(5)), doc("y", int32(6)))))), doc("a", arr(doc("y", int32(6)))), true},
		{"elemMatch nested", doc("a", doc("$elemMatch", doc("b", doc("$elemMatch", doc("$eq", int32(3)))))), doc("a", arr(doc("b", arr(int32(1), int32(3))))), true},
		{"elemMatch dotted path", doc("a.b", doc("$elemMatch", doc("$gte", int32(3)))), doc("a", arr(doc("b", arr(int32(1))), doc("b", arr(int32(4))))), true},
		{"elemMatch ne", doc("a", doc("$elemMatch", doc("$ne", int32(1)))), doc("a", arr(int32(1), int32(2))), true},
		{"expr", doc("$expr", doc("$gt", arr("$a", "$b"))), doc("a", int32(3), "b", int32(2)), true},
		{"expr false", doc("$expr", doc("$gt", arr("$a", "$b"))), doc("a", int32(1), "b", int32(2)), false},
		{"expr arith", doc("$expr", doc("$eq", arr(doc("$add", arr("$a", int32(1))), int32(4)))), doc("a", 3.0), true},
	})
}

func TestFilterErrors(t *testing.T) {
	deep := doc("a", int32(1))
	for i := 0; i < 150; i++ {
		deep = doc("$and", arr(deep))
	}
	deepNot := doc("$gt", int32(1))
	for i := 0; i < 150; i++ {
		deepNot = doc("$not", deepNot)
	}
	cases := []struct {
		name   string
		filter bson.D
		code   int32
	}{
		{"unknown operator", doc("a", doc("$foo", int32(1))), CodeBadValue},
		{"unknown top level", doc("$where", "this.a"), CodeBadValue},
		{"and not array", doc("$and", doc("a", int32(1))), CodeBadValue},
		{"and empty", doc("$or", arr()), CodeBadValue},
		{"and entry not doc", doc("$and", arr(int32(1))), CodeBadValue},
		{"in not array", doc("a", doc("$in", int32(1))), CodeBadValue},
		{"size negative", doc("a", doc("$size", int32(-1))), CodeBadValue},
		{"size string", doc("a", doc("$size", "1")), CodeBadValue},
		{"size fraction", doc("a", doc("$size", 1.5)), CodeBadValue},
		{"mod zero", doc("a", doc("$mod", arr(int32(0), int32(1)))), CodeBadValue},
		{"mod short", doc("a", doc("$mod", arr(int32(2)))), CodeBadValue},
		{"type unknown", doc("a", doc("$type", "nope")), CodeBadValue},
		{"type bad code", doc("a", doc("$type", int32(99))), CodeBadValue},
		{"not empty", doc("a", doc("$not", doc())), CodeBadValue},
		{"not scalar", doc("a", doc("$not", int32(1))), CodeBadValue},
		{"options without regex", doc("a", doc("$options", "i")), CodeBadValue},
		{"regex backreference", doc("a", doc("$regex", `(a)\1`)), CodeRegexInvalid},
		{"regex lookahead", doc("a", bson.Regex{Pattern: `a(?=b)`}), CodeRegexInvalid},
		{"regex in $in invalid", doc("a", doc("$in", arr(bson.Regex{Pattern: `(?<=x)y`}))), CodeRegexInvalid},
		{"regex too long", doc("a", doc("$regex", strings.Repeat("a", maxRegexLen+1))), CodeRegexInvalid},
		{"regex bad option", doc("a", doc("$regex", "a", "$options", "q")), 51108},
		{"regex options twice", doc("a", doc("$regex", bson.Regex{Pattern: "a", Options: "i"}, "$options", "m")), CodeBadValue},
		{"depth and", deep, CodeBadValue},
		{"depth not", doc("a", deepNot), CodeBadValue},
		{"elemMatch scalar", doc("a", doc("$elemMatch", int32(1))), CodeBadValue},
		{"expr bad", doc("$expr", doc("$nope", int32(1))), 168},
	}
	for _, c := range cases {
		_, err := ParseFilter(c.filter)
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		t.Run(c.name, func(t *testing.T) { wantCode(t, err, c.code) })
	}
}

func TestFilterEquality_ShardKey(t *testing.T) {
	cases := []struct {
		filter bson.D
		path   string
		want   any
		ok     bool
	}{
		{doc("pk", "x", "a", int32(1)), "pk", "x", true},
		{doc("pk", doc("$eq", int32(5))), "pk", int32(5), true},
		{doc("$and", arr(doc("a", int32(1)), doc("pk", "y"))), "pk", "y", true},
		{doc("$or", arr(doc("pk", "x"), doc("pk", "y"))), "pk", nil, false},
		{doc("pk", doc("$gt", int32(5))), "pk", nil, false},
		{doc("pk", bson.Regex{Pattern: "x"}), "pk", nil, false},
		{doc("pk", "x", "$and", arr(doc("pk", "y"))), "pk", nil, false},
		{doc("a.b", int32(1)), "a.b", int32(1), true},
		{doc("a", doc("b", int32(1))), "a.b", nil, false},
		{doc("pk", doc("$not", doc("$eq", int32(1)))), "pk", nil, false},
	}
	for _, c := range cases {
		f, err := ParseFilter(c.filter)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := f.Equality(c.path)
		if ok != c.ok || (ok && !identical(got, c.want)) {
			t.Errorf("Equality(%v, %q) = %v, %v; want %v, %v", c.filter, c.path, got, ok, c.want, c.ok)
		}
	}
}

// TestFilterLongIn checks $in and $nin with enough values to be looked up through a set: numbers
// of every type, documents, arrays, null and regexes behave as with a short list.
func TestFilterLongIn(t *testing.T) {
	list := arr(int32(1), int64(2), 3.5, dec(t, "4"), "five", doc("x", int32(6)), arr(int32(7)), bson.DateTime(8), false, bson.Regex{Pattern: "^re"})
	withNull := append(arr(nil), list...)
	runFilterCases(t, []filterCase{
		{"int as double", doc("a", doc("$in", list)), doc("a", 1.0), true},
		{"long as decimal", doc("a", doc("$in", list)), doc("a", dec(t, "2")), true},
		{"decimal as int", doc("a", doc("$in", list)), doc("a", int32(4)), true},
		{"negative zero", doc("a", doc("$in", append(arr(0.0), list...))), doc("a", math.Copysign(0, -1)), true},
		{"string", doc("a", doc("$in", list)), doc("a", "five"), true},
		{"document", doc("a", doc("$in", list)), doc("a", doc("x", 6.0)), true},
		{"document other order", doc("a", doc("$in", list)), doc("a", doc("x", int32(6), "y", int32(1))), false},
		{"array element", doc("a", doc("$in", list)), doc("a", arr(int32(9), "five")), true},
		{"whole array", doc("a", doc("$in", list)), doc("a", arr(arr(int32(7)))), true},
		{"regex", doc("a", doc("$in", list)), doc("a", "red"), true},
		{"miss", doc("a", doc("$in", list)), doc("a", int32(9)), false},
		{"missing no null", doc("a", doc("$in", list)), doc(), false},
		{"missing with null", doc("a", doc("$in", withNull)), doc(), true},
		{"nin", doc("a", doc("$nin", list)), doc("a", "six"), true},
		{"nin hit", doc("a", doc("$nin", list)), doc("a", bson.DateTime(8)), false},
	})
}
