package mongo

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestIndexedReadsMatchScans is a differential test of the index's use:
// random documents with values of many BSON types (in arrays, documents
// and arrays of documents too), and random filters whose conjuncts the
// index serves (equalities, $in, $all, ranges, _id). Every find and count
// must return through the index exactly what a collection scan (hint
// {$natural: 1}) returns, on a collection of four partitions and on an
// unsharded one; explain shows the index was used, and that it read fewer
// documents than the scan.
func TestIndexedReadsMatchScans(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	db := env.client.Database("ix")
	createSharded(t, db, "sharded", "k", 40000)
	rng := rand.New(rand.NewPCG(3, 9))
	oids := []bson.ObjectID{{1}, {2, 0xff}, {0x7f, 3}}
	dec, _ := bson.ParseDecimal128("5.0")
	scalars := []any{
		int32(5), int32(7), int32(-1), int64(5), int64(1 << 60), 5.0, 2.5, -1.0, 1.1529215046068470e18,
		"a", "b", "ab", "", true, false, nil, oids[0], oids[1], oids[2],
		bson.DateTime(1700000000000), bson.DateTime(-1000), bson.DateTime(99),
		dec, bson.Symbol("a"),
	}
	var value func(depth int) any
	value = func(depth int) any {
		switch n := rng.IntN(10); {
		case n < 6 || depth > 1:
			return scalars[rng.IntN(len(scalars))]
		case n < 8:
			return bson.A{value(depth + 1), value(depth + 1)}
		default:
			return bson.D{{Key: "b", Value: value(depth + 1)}}
		}
	}
	const total = 400
	var docs []any
	for i := range total {
		d := bson.D{{Key: "_id", Value: int32(i)}, {Key: "k", Value: fmt.Sprint("k", i%37)}}
		if i%50 == 0 {
			d[0].Value = fmt.Sprint("s", i)
		}
		for _, f := range []string{"a", "x", "arr", "id"} {
			if rng.IntN(5) == 0 {
				continue // missing
			}
			switch f {
			case "x":
				d = append(d, bson.E{Key: f, Value: bson.D{{Key: "b", Value: value(1)}}})
			case "arr":
				d = append(d, bson.E{Key: f, Value: bson.A{bson.D{{Key: "b", Value: value(1)}}, bson.D{{Key: "b", Value: value(1)}}}})
			default:
				d = append(d, bson.E{Key: f, Value: value(0)})
			}
		}
		docs = append(docs, d)
	}
	for _, name := range []string{"sharded", "plain"} {
		if _, err := db.Collection(name).InsertMany(ctx, docs); err != nil {
			t.Fatal(err)
		}
	}
	scalar := func() any {
		for {
			if v := scalars[rng.IntN(len(scalars))]; v != nil {
				return v
			}
		}
	}
	filter := func() bson.D {
		f := []string{"a", "x.b", "arr.b", "arr.0.b", "id", "a.b"}[rng.IntN(6)]
		switch rng.IntN(9) {
		case 0:
			return bson.D{{Key: f, Value: scalar()}}
		case 1:
			return bson.D{{Key: f, Value: bson.D{{Key: "$in", Value: bson.A{scalar(), scalar(), scalar()}}}}}
		case 2:
			return bson.D{{Key: f, Value: bson.D{{Key: "$gt", Value: scalar()}}}}
		case 3:
			return bson.D{{Key: f, Value: bson.D{{Key: "$gte", Value: scalar()}, {Key: "$lt", Value: scalar()}}}}
		case 4:
			return bson.D{{Key: f, Value: bson.D{{Key: "$lte", Value: scalar()}}}}
		case 5:
			return bson.D{{Key: f, Value: bson.D{{Key: "$all", Value: bson.A{scalar()}}}}}
		case 6:
			return bson.D{{Key: "$and", Value: bson.A{bson.D{{Key: f, Value: scalar()}}, bson.D{{Key: "a", Value: bson.D{{Key: "$ne", Value: scalar()}}}}}}}
		case 7:
			id := []any{int32(rng.IntN(total)), float64(rng.IntN(total)), int64(rng.IntN(total)), fmt.Sprint("s", 50*rng.IntN(8))}
			return bson.D{{Key: "_id", Value: id[rng.IntN(len(id))]}}
		default:
			return bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: bson.A{int32(rng.IntN(total)), "s100", 7.0}}}}}
		}
	}
	ids := func(cur *mongo.Cursor, err error) []string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, d := range mustDocs(t, cur) {
			out = append(out, fmt.Sprint(d[0].Value))
		}
		slices.Sort(out)
		return out
	}
	natural := bson.D{{Key: "$natural", Value: int32(1)}}
	indexed, matched := 0, 0
	for round := range 150 {
		f := filter()
		for _, name := range []string{"sharded", "plain"} {
			c := db.Collection(name)
			got := ids(c.Find(ctx, f, options.Find().SetBatchSize(7)))
			want := ids(c.Find(ctx, f, options.Find().SetHint(natural)))
			if !slices.Equal(got, want) {
				t.Fatalf("round %d, %s, filter %v:\nindexed %v\n   scan %v", round, name, f, got, want)
			}
			n, err := c.CountDocuments(ctx, f)
			if err != nil || n != int64(len(want)) {
				t.Fatalf("round %d, %s, filter %v: count %d (%v), want %d", round, name, f, n, err, len(want))
			}
			if len(want) > 0 {
				matched++
			}
			var ex bson.D
			if err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: name}, {Key: "filter", Value: f}}},
				{Key: "verbosity", Value: "executionStats"}}).Decode(&ex); err != nil {
				t.Fatal(err)
			}
			plan := field(ex, "queryPlanner", "winningPlan")
			stats := field(ex, "executionStats")
			if field(stats, "nReturned") != int64(len(want)) {
				t.Fatalf("round %d, %s, filter %v: explain returned %v, want %d", round, name, f, field(stats, "nReturned"), len(want))
			}
			if field(plan, "stage") == "FETCH" {
				indexed++
				if examined := field(stats, "totalDocsExamined").(int64); examined >= total {
					t.Fatalf("round %d, %s, filter %v: an indexed read examined %d documents of %d", round, name, f, examined, total)
				}
			}
		}
	}
	if indexed < 150 || matched < 75 {
		t.Fatalf("%d indexed reads and %d with matches of 300: the filters do not exercise the index", indexed, matched)
	}
}

// TestExplain checks explain's plans: a point read, a collection scan, a
// read through the index and its stats, and the errors for what it does
// not explain.
func TestExplain(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	db := env.client.Database("ex")
	c := db.Collection("c")
	var docs []any
	for i := range 300 {
		docs = append(docs, bson.D{{Key: "_id", Value: int32(i)}, {Key: "n", Value: int32(i)}, {Key: "when", Value: bson.NewDateTimeFromTime(time.Unix(int64(i), 0))}})
	}
	if _, err := c.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "n", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	explain := func(cmd bson.D) bson.D {
		t.Helper()
		var ex bson.D
		if err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: cmd}, {Key: "verbosity", Value: "executionStats"}}).Decode(&ex); err != nil {
			t.Fatal(err)
		}
		return ex
	}
	ex := explain(bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "n", Value: bson.D{{Key: "$gte", Value: 10}, {Key: "$lt", Value: 20}}}}}})
	// Index bounds are inclusive (the filter removes n = 20), so 11
	// documents are examined for 10 returned.
	plan := field(ex, "queryPlanner", "winningPlan")
	in := field(plan, "inputStage")
	st := field(ex, "executionStats")
	if field(plan, "stage") != "FETCH" || field(in, "stage") != "IXSCAN" || field(in, "indexName") != "n_1" || field(st, "nReturned") != int64(10) || field(st, "totalDocsExamined") != int64(11) {
		t.Fatalf("a range on n: %v", ex)
	}
	ex = explain(bson.D{{Key: "count", Value: "c"}, {Key: "query", Value: bson.D{{Key: "n", Value: bson.D{{Key: "$gt", Value: 5}}}}}, {Key: "hint", Value: bson.D{{Key: "$natural", Value: 1}}}})
	if p := field(ex, "queryPlanner", "winningPlan"); field(p, "stage") != "COLLSCAN" || field(ex, "executionStats", "totalDocsExamined") != int64(300) || field(ex, "executionStats", "nReturned") != int64(294) {
		t.Fatalf("a hinted scan: %v", ex)
	}
	ex = explain(bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "_id", Value: 3}}}})
	if p := field(ex, "queryPlanner", "winningPlan"); field(p, "stage") != "IDHACK" || field(ex, "executionStats", "nReturned") != int64(1) {
		t.Fatalf("a point read: %v", ex)
	}
	ex = explain(bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$match", Value: bson.D{{Key: "when", Value: bson.D{{Key: "$lt", Value: bson.NewDateTimeFromTime(time.Unix(3, 0))}}}}}}}}})
	if p := field(ex, "queryPlanner", "winningPlan"); field(p, "stage") != "FETCH" || field(ex, "executionStats", "nReturned") != int64(3) {
		t.Fatalf("an aggregate's $match on a date: %v", ex)
	}
	for _, bad := range []struct {
		cmd  bson.D
		code int
	}{
		{bson.D{{Key: "insert", Value: "c"}}, 115},
		{bson.D{{Key: "frobnicate", Value: "c"}}, 59},
		{bson.D{}, 9},
	} {
		err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: bad.cmd}}).Err()
		if cmdCode(err) != bad.code {
			t.Fatalf("explain %v: %v, want code %d", bad.cmd, err, bad.code)
		}
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "c"}}}, {Key: "verbosity", Value: "loud"}}).Err(); cmdCode(err) != 2 {
		t.Fatalf("a bad verbosity: %v", err)
	}
}

// field follows keys down nested documents; nil when one is missing.
func field(v any, keys ...string) any {
	for _, k := range keys {
		d, ok := v.(bson.D)
		if !ok {
			return nil
		}
		v = toMap(d)[k]
	}
	return v
}
