package mql

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func runPipeline(t *testing.T, stages []bson.D, docs []bson.D, lookup LookupFunc) []bson.D {
	t.Helper()
	p, err := ParsePipeline(stages, lookup)
	if err != nil {
		t.Fatalf("ParsePipeline(%v): %v", stages, err)
	}
	out, err := p.Run(docs)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return out
}

func wantDocs(t *testing.T, name string, got, want []bson.D) {
	t.Helper()
	ok := len(got) == len(want)
	for i := 0; ok && i < len(got); i++ {
		ok = identical(got[i], want[i]) && formatValue(got[i]) == formatValue(want[i])
	}
	if !ok {
		t.Errorf("%s:\n got %v\nwant %v", name, got, want)
	}
}

var sales = []bson.D{
	doc("_id", int32(1), "item", "a", "qty", int32(2), "price", 10.0, "tags", arr("x", "y")),
	doc("_id", int32(2), "item", "b", "qty", int32(1), "price", 20.0, "tags", arr()),
	doc("_id", int32(3), "item", "a", "qty", int64(5), "price", 10.0),
	doc("_id", int32(4), "item", "c", "qty", int32(3), "price", 5.5, "tags", arr("y")),
}

func TestPipelineSimpleStages(t *testing.T) {
	wantDocs(t, "match", runPipeline(t, []bson.D{doc("$match", doc("item", "a"))}, sales, nil), []bson.D{sales[0], sales[2]})
	wantDocs(t, "sort skip limit", runPipeline(t, []bson.D{
		doc("$sort", doc("qty", int32(-1))), doc("$skip", int32(1)), doc("$limit", int64(2)),
	}, sales, nil), []bson.D{sales[3], sales[0]})
	wantDocs(t, "count", runPipeline(t, []bson.D{doc("$match", doc("price", doc("$gte", int32(10)))), doc("$count", "n")}, sales, nil),
		[]bson.D{doc("n", int32(3))})
	wantDocs(t, "count empty", runPipeline(t, []bson.D{doc("$match", doc("nope", int32(1))), doc("$count", "n")}, sales, nil), nil)
	wantDocs(t, "project", runPipeline(t, []bson.D{
		doc("$project", doc("_id", int32(0), "item", int32(1), "total", doc("$multiply", arr("$qty", "$price")))),
		doc("$limit", int32(2)),
	}, sales, nil), []bson.D{doc("item", "a", "total", 20.0), doc("item", "b", "total", 20.0)})
	wantDocs(t, "addFields", runPipeline(t, []bson.D{
		doc("$addFields", doc("big", doc("$gt", arr("$qty", int32(2))), "meta.label", doc("$concat", arr("$item", "-", doc("$toString", "$_id"))))),
		doc("$project", doc("big", int32(1), "meta", int32(1))),
		doc("$limit", int32(1)),
	}, sales, nil), []bson.D{doc("_id", int32(1), "big", false, "meta", doc("label", "a-1"))})
	wantDocs(t, "set and unset", runPipeline(t, []bson.D{
		doc("$set", doc("qty", doc("$add", arr("$qty", int32(1))))),
		doc("$unset", arr("tags", "price", "item")),
	}, sales[:2], nil), []bson.D{doc("_id", int32(1), "qty", int32(3)), doc("_id", int32(2), "qty", int32(2))})
	wantDocs(t, "replaceRoot", runPipeline(t, []bson.D{
		doc("$replaceRoot", doc("newRoot", doc("k", "$item"))), doc("$limit", int32(1)),
	}, sales, nil), []bson.D{doc("k", "a")})
	wantDocs(t, "replaceWith", runPipeline(t, []bson.D{
		doc("$replaceWith", doc("$mergeObjects", arr(doc("k", int32(0)), doc("k", "$qty")))), doc("$skip", int32(3)),
	}, sales, nil), []bson.D{doc("k", int32(3))})
	wantDocs(t, "empty pipeline", runPipeline(t, nil, sales, nil), sales)
}

func TestPipelineUnwind(t *testing.T) {
	wantDocs(t, "unwind", runPipeline(t, []bson.D{doc("$unwind", "$tags"), doc("$project", doc("tags", int32(1)))}, sales, nil),
		[]bson.D{doc("_id", int32(1), "tags", "x"), doc("_id", int32(1), "tags", "y"), doc("_id", int32(4), "tags", "y")})
	wantDocs(t, "unwind preserve index", runPipeline(t, []bson.D{
		doc("$unwind", doc("path", "$tags", "includeArrayIndex", "i", "preserveNullAndEmptyArrays", true)),
		doc("$project", doc("tags", int32(1), "i", int32(1))),
	}, sales, nil), []bson.D{
		doc("_id", int32(1), "tags", "x", "i", int64(0)),
		doc("_id", int32(1), "tags", "y", "i", int64(1)),
		doc("_id", int32(2), "i", nil),
		doc("_id", int32(3), "i", nil),
		doc("_id", int32(4), "tags", "y", "i", int64(0)),
	})
	wantDocs(t, "unwind scalar", runPipeline(t, []bson.D{doc("$unwind", "$v")}, []bson.D{doc("v", int32(1))}, nil), []bson.D{doc("v", int32(1))})
	wantDocs(t, "unwind nested", runPipeline(t, []bson.D{doc("$unwind", "$a.b")}, []bson.D{doc("a", doc("b", arr(int32(1), int32(2))))}, nil),
		[]bson.D{doc("a", doc("b", int32(1))), doc("a", doc("b", int32(2)))})
}

func TestPipelineGroup(t *testing.T) {
	out := runPipeline(t, []bson.D{
		doc("$group", doc(
			"_id", "$item",
			"n", doc("$sum", int32(1)),
			"qty", doc("$sum", "$qty"),
			"avg", doc("$avg", "$price"),
			"min", doc("$min", "$qty"),
			"max", doc("$max", "$qty"),
			"first", doc("$first", "$_id"),
			"last", doc("$last", "$_id"),
			"ids", doc("$push", "$_id"),
			"prices", doc("$addToSet", "$price"),
			"count", doc("$count", doc()),
		)),
		doc("$sort", doc("_id", int32(1))),
	}, sales, nil)
	wantDocs(t, "group", out, []bson.D{
		doc("_id", "a", "n", int32(2), "qty", int64(7), "avg", 10.0, "min", int32(2), "max", int64(5), "first", int32(1), "last", int32(3),
			"ids", arr(int32(1), int32(3)), "prices", arr(10.0), "count", int32(2)),
		doc("_id", "b", "n", int32(1), "qty", int32(1), "avg", 20.0, "min", int32(1), "max", int32(1), "first", int32(2), "last", int32(2),
			"ids", arr(int32(2)), "prices", arr(20.0), "count", int32(1)),
		doc("_id", "c", "n", int32(1), "qty", int32(3), "avg", 5.5, "min", int32(3), "max", int32(3), "first", int32(4), "last", int32(4),
			"ids", arr(int32(4)), "prices", arr(5.5), "count", int32(1)),
	})
	// Numeric keys of different types group together; a missing key groups as null; $avg and
	// $min of nothing numeric are null.
	out = runPipeline(t, []bson.D{
		doc("$group", doc("_id", "$k", "avg", doc("$avg", "$s"), "min", doc("$min", "$s"), "sum", doc("$sum", "$s"))),
	}, []bson.D{doc("k", int32(1), "s", "x"), doc("k", 1.0), doc("k", dec(t, "1")), doc("s", nil)}, nil)
	wantDocs(t, "group mixed", out, []bson.D{
		doc("_id", int32(1), "avg", nil, "min", "x", "sum", int32(0)),
		doc("_id", nil, "avg", nil, "min", nil, "sum", int32(0)),
	})
	// Compound keys, and the whole collection as one group.
	out = runPipeline(t, []bson.D{
		doc("$group", doc("_id", doc("i", "$item", "big", doc("$gte", arr("$qty", int32(3)))), "n", doc("$sum", int32(1)))),
		doc("$sort", doc("_id.i", int32(1), "_id.big", int32(1))),
	}, sales, nil)
	wantDocs(t, "group compound", out, []bson.D{
		doc("_id", doc("i", "a", "big", false), "n", int32(1)),
		doc("_id", doc("i", "a", "big", true), "n", int32(1)),
		doc("_id", doc("i", "b", "big", false), "n", int32(1)),
		doc("_id", doc("i", "c", "big", true), "n", int32(1)),
	})
	out = runPipeline(t, []bson.D{doc("$group", doc("_id", nil, "total", doc("$sum", doc("$multiply", arr("$qty", "$price")))))}, sales, nil)
	wantDocs(t, "group all", out, []bson.D{doc("_id", nil, "total", 20.0+20.0+50.0+16.5)})
}

func TestPipelineLookup(t *testing.T) {
	items := []bson.D{
		doc("_id", "a", "name", "apple"),
		doc("_id", "b", "name", "banana"),
		doc("_id", "z", "name", "zucchini", "alt", arr("c")),
	}
	calls := 0
	lookup := func(coll string) ([]bson.D, error) {
		calls++
		if coll != "items" {
			return nil, errors.New("no such collection")
		}
		return items, nil
	}
	out := runPipeline(t, []bson.D{
		doc("$lookup", doc("from", "items", "localField", "item", "foreignField", "_id", "as", "info")),
		doc("$project", doc("info.name", int32(1))),
	}, sales, lookup)
	wantDocs(t, "lookup", out, []bson.D{
		doc("_id", int32(1), "info", arr(doc("name", "apple"))),
		doc("_id", int32(2), "info", arr(doc("name", "banana"))),
		doc("_id", int32(3), "info", arr(doc("name", "apple"))),
		doc("_id", int32(4), "info", arr()),
	})
	if calls != 1 {
		t.Errorf("lookup function called %d times, want once per Run", calls)
	}
	// Array on either side matches by element.
	out = runPipeline(t, []bson.D{
		doc("$lookup", doc("from", "items", "localField", "tags", "foreignField", "alt", "as", "m")),
		doc("$project", doc("m._id", int32(1))),
	}, []bson.D{doc("_id", int32(1), "tags", arr("q", "c"))}, lookup)
	wantDocs(t, "lookup arrays", out, []bson.D{doc("_id", int32(1), "m", arr(doc("_id", "z")))})
	p, err := ParsePipeline([]bson.D{doc("$lookup", doc("from", "nope", "localField", "a", "foreignField", "b", "as", "c"))}, lookup)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Run(sales); err == nil {
		t.Error("lookup error not returned")
	}
}

func TestPipelineExpressions(t *testing.T) {
	src := []bson.D{doc("a", int32(7), "b", int32(2), "s", "Hi", "arr", arr(int32(1), int32(2), int32(3)), "n", nil, "d", bson.DateTime(1000))}
	cases := []struct {
		expr any
		want any
	}{
		{doc("$add", arr("$a", "$b", 1.5)), 10.5},
		{doc("$add", arr("$d", int32(500))), bson.DateTime(1500)},
		{doc("$subtract", arr("$a", "$b")), int32(5)},
		{doc("$subtract", arr("$d", bson.DateTime(400))), int64(600)},
		{doc("$multiply", arr("$a", "$b")), int32(14)},
		{doc("$divide", arr("$a", "$b")), 3.5},
		{doc("$mod", arr("$a", "$b")), int32(1)},
		{doc("$abs", int32(-3)), int32(3)},
		{doc("$floor", 2.7), 2.0},
		{doc("$ceil", 2.1), 3.0},
		{doc("$add", arr("$a", "$missing")), nil},
		{doc("$concat", arr("$s", " ", "there")), "Hi there"},
		{doc("$concat", arr("$s", "$n")), nil},
		{doc("$toUpper", "$s"), "HI"},
		{doc("$toLower", "$s"), "hi"},
		{doc("$cond", arr(doc("$gt", arr("$a", int32(5))), "big", "small")), "big"},
		{doc("$cond", doc("if", false, "then", int32(1), "else", int32(2))), int32(2)},
		{doc("$ifNull", arr("$n", "$missing", "dflt")), "dflt"},
		{doc("$ifNull", arr("$a", "dflt")), int32(7)},
		{doc("$eq", arr("$a", 7.0)), true},
		{doc("$ne", arr("$a", int32(7))), false},
		{doc("$lt", arr("$s", int32(1))), false},
		{doc("$cmp", arr("$b", "$a")), int32(-1)},
		{doc("$and", arr(true, "$a")), true},
		{doc("$or", arr(false, "$n")), false},
		{doc("$not", arr("$n")), true},
		{doc("$size", "$arr"), int32(3)},
		{doc("$isArray", "$arr"), true},
		{doc("$in", arr(int32(2), "$arr")), true},
		{doc("$arrayElemAt", arr("$arr", int32(-1))), int32(3)},
		{doc("$toString", "$a"), "7"},
		{doc("$toString", 2.5), "2.5"},
		{doc("$toString", "$d"), "1970-01-01T00:00:01.000Z"},
		{doc("$toInt", "42"), int32(42)},
		{doc("$toDouble", "$a"), 7.0},
		{doc("$type", "$arr"), "array"},
		{doc("$type", "$missing"), "missing"},
		{doc("$literal", "$a"), "$a"},
		{arr("$a", "$missing"), arr(int32(7), nil)},
		{doc("x", "$b"), doc("x", int32(2))},
		{"$$ROOT.a", int32(7)},
		{doc("$slice", arr("$arr", int32(2))), arr(int32(1), int32(2))},
		{doc("$slice", arr("$arr", int32(-1))), arr(int32(3))},
		{doc("$slice", arr("$arr", int32(1), int32(5))), arr(int32(2), int32(3))},
		{doc("$concatArrays", arr("$arr", arr("x"))), arr(int32(1), int32(2), int32(3), "x")},
		{doc("$sum", "$arr"), int32(6)},
		{doc("$sum", arr("$a", "$b", "$s")), int32(9)},
		{doc("$avg", "$arr"), 2.0},
		{doc("$max", "$arr"), int32(3)},
		{doc("$min", arr("$a", "$b", "$n")), int32(2)},
		{doc("$substrBytes", arr("hello", int32(1), int32(3))), "ell"},
		{doc("$split", arr("a,b,,c", ",")), arr("a", "b", "", "c")},
		{doc("$mergeObjects", arr(doc("x", int32(1), "y", int32(1)), "$n", doc("y", int32(2)))), doc("x", int32(1), "y", int32(2))},
	}
	for _, c := range cases {
		out := runPipeline(t, []bson.D{doc("$project", doc("_id", int32(0), "r", c.expr))}, src, nil)
		got := bson.D{{Key: "r", Value: c.want}}
		if c.want == nil {
			got = doc("r", nil)
		}
		if len(out) != 1 || !identical(out[0], got) {
			t.Errorf("%v = %v, want %v", c.expr, out, c.want)
		}
	}
	errCases := []struct {
		expr any
		code int32
	}{
		{doc("$divide", arr("$a", int32(0))), CodeBadValue},
		{doc("$add", arr("$s", int32(1))), CodeTypeMismatch},
		{doc("$size", "$a"), 17124},
		{doc("$concat", arr("$a")), 16702},
		{doc("$toInt", "x"), 241},
	}
	for _, c := range errCases {
		p, err := ParsePipeline([]bson.D{doc("$project", doc("r", c.expr))}, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = p.Run(src)
		if err == nil {
			t.Errorf("%v: no error", c.expr)
			continue
		}
		wantCode(t, err, c.code)
	}
}

func TestPipelineParseErrors(t *testing.T) {
	cases := []struct {
		stage bson.D
		code  int32
	}{
		{doc("$bogus", int32(1)), 40324},
		{doc("$match", int32(1), "$limit", int32(1)), 40323},
		{doc("$limit", int32(0)), 15958},
		{doc("$limit", "x"), 5107201},
		{doc("$skip", int32(-1)), 5107200},
		{doc("$count", ""), 40157},
		{doc("$count", "$x"), 40158},
		{doc("$group", doc("n", doc("$sum", int32(1)))), 15955},
		{doc("$group", doc("_id", nil, "n", doc("$median", int32(1)))), 15952},
		{doc("$group", doc("_id", nil, "a.b", doc("$sum", int32(1)))), 40235},
		{doc("$unwind", "tags"), 28818},
		{doc("$unwind", doc("path", "$a", "bogus", true)), 28811},
		{doc("$sort", doc()), 15976},
		{doc("$sort", doc("a", int32(2))), 15975},
		{doc("$project", doc()), 51272},
		{doc("$project", doc("a", int32(1), "b", int32(0))), 31254},
		{doc("$replaceRoot", doc()), 40414},
		{doc("$lookup", doc("from", "x", "localField", "a", "foreignField", "b")), CodeFailedToParse},
		{doc("$match", doc("a", doc("$bogus", int32(1)))), CodeBadValue},
		{doc("$addFields", doc("a", doc("$nope", int32(1)))), 168},
	}
	for _, c := range cases {
		_, err := ParsePipeline([]bson.D{c.stage}, func(string) ([]bson.D, error) { return nil, nil })
		if err == nil {
			t.Errorf("%v: no error", c.stage)
			continue
		}
		wantCode(t, err, c.code)
	}
	// Deeply nested expressions are rejected, not recursed into without bound.
	var deep any = "$a"
	for i := 0; i < 200; i++ {
		deep = doc("$abs", deep)
	}
	_, err := ParsePipeline([]bson.D{doc("$project", doc("x", deep))}, nil)
	wantCode(t, err, CodeBadValue)
	// replaceRoot to a non-document fails at run time.
	p, err := ParsePipeline([]bson.D{doc("$replaceRoot", doc("newRoot", "$item"))}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Run(sales)
	wantCode(t, err, 40228)
}

func TestPipelineLeadingMatch(t *testing.T) {
	p, err := ParsePipeline([]bson.D{doc("$match", doc("item", "a")), doc("$limit", int32(1))}, nil)
	if err != nil {
		t.Fatal(err)
	}
	lm := p.LeadingMatch()
	if lm == nil {
		t.Fatal("no leading match")
	}
	if v, ok := lm.Equality("item"); !ok || v != "a" {
		t.Errorf("leading match equality: %v %v", v, ok)
	}
	p, err = ParsePipeline([]bson.D{doc("$limit", int32(1)), doc("$match", doc("item", "a"))}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.LeadingMatch() != nil {
		t.Error("a $match after another stage is not leading")
	}
}

// TestPipelineMemoryLimit checks that blocking stages fail with code 292 past the limit, and
// succeed under it.
func TestPipelineMemoryLimit(t *testing.T) {
	var docs []bson.D
	for i := 0; i < 100; i++ {
		docs = append(docs, doc("_id", int32(i), "pad", strings.Repeat("x", 1000)+fmt.Sprint(i)))
	}
	for _, stages := range [][]bson.D{
		{doc("$sort", doc("_id", int32(-1)))},
		{doc("$group", doc("_id", nil, "all", doc("$push", "$pad")))},
		{doc("$group", doc("_id", "$pad", "n", doc("$sum", int32(1))))},
	} {
		p, err := ParsePipeline(stages, nil)
		if err != nil {
			t.Fatal(err)
		}
		p.memLimit = 50 * 1000
		_, err = p.Run(docs)
		if err == nil {
			t.Errorf("%v: no error past the memory limit", stages)
			continue
		}
		wantCode(t, err, CodeExceededMemoryLimit)
		p.memLimit = 500 * 1000
		if _, err := p.Run(docs); err != nil {
			t.Errorf("%v under the limit: %v", stages, err)
		}
	}
	// The default limit is 100 MB.
	p, err := ParsePipeline([]bson.D{doc("$sort", doc("_id", int32(1)))}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.memLimit != 100<<20 {
		t.Errorf("default memory limit %d", p.memLimit)
	}
	big := strings.Repeat("y", 1<<20)
	var many []bson.D
	for i := 0; i < 101; i++ {
		many = append(many, doc("_id", int32(i), "big", big))
	}
	_, err = p.Run(many)
	wantCode(t, err, CodeExceededMemoryLimit)
}

// TestPipelineDriverShapes runs the pipelines drivers send for helpers: countDocuments with a filter,
// skip and limit.
func TestPipelineDriverShapes(t *testing.T) {
	out := runPipeline(t, []bson.D{
		doc("$match", doc("price", doc("$lt", int32(15)))),
		doc("$skip", int64(1)),
		doc("$limit", int64(5)),
		doc("$group", doc("_id", int32(1), "n", doc("$sum", int32(1)))),
	}, sales, nil)
	wantDocs(t, "countDocuments", out, []bson.D{doc("_id", int32(1), "n", int32(2))})
	out = runPipeline(t, []bson.D{doc("$match", doc()), doc("$group", doc("_id", int32(1), "n", doc("$sum", int32(1))))}, nil, nil)
	wantDocs(t, "countDocuments on nothing", out, nil)
}
