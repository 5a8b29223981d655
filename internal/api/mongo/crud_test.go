package mongo

import (
	"context"
	"fmt"
	"sort"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

func insertN(t testing.TB, c *mongo.Collection, n int) {
	t.Helper()
	docs := make([]any, n)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: int32(i)}, {Key: "n", Value: int32(i)}, {Key: "g", Value: fmt.Sprintf("g%d", i%3)}, {Key: "pad", Value: "x"}}
	}
	if _, err := c.InsertMany(ctxT(t), docs); err != nil {
		t.Fatal(err)
	}
}

func TestCursorManyBatches(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	c := env.client.Database("d").Collection("many")
	insertN(t, c, 1000)
	cur, err := c.Find(ctx, bson.D{}, options.Find().SetBatchSize(7))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int32]bool{}
	batches := 0
	for cur.Next(ctx) {
		if cur.RemainingBatchLength() == 6 {
			batches++
		}
		n := cur.Current.Lookup("n").Int32()
		if seen[n] {
			t.Fatalf("document %d twice", n)
		}
		seen[n] = true
	}
	if err := cur.Err(); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1000 {
		t.Fatalf("read %d documents, want 1000", len(seen))
	}
	if batches < 140 {
		t.Fatalf("only %d batches of 7", batches)
	}
	if n := env.srv.cursors.len(); n != 0 {
		t.Fatalf("%d cursors left open after reading to the end", n)
	}
}

func TestKillCursors(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	c := env.client.Database("d").Collection("k")
	insertN(t, c, 50)
	cur, err := c.Find(ctx, bson.D{}, options.Find().SetBatchSize(5))
	if err != nil {
		t.Fatal(err)
	}
	if !cur.Next(ctx) {
		t.Fatal(cur.Err())
	}
	id := cur.ID()
	if id == 0 || !cursorOpen(env, id) {
		t.Fatalf("cursor %d not open on the server", id)
	}
	if err := cur.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if cursorOpen(env, id) {
		t.Fatal("the driver's killCursors left the cursor open")
	}
	// A cursor on a collection dropped meanwhile fails (QueryPlanKilled).
	cur, err = c.Find(ctx, bson.D{}, options.Find().SetBatchSize(5))
	if err != nil {
		t.Fatal(err)
	}
	if err := env.client.Database("d").Collection("k").Drop(ctx); err != nil {
		t.Fatal(err)
	}
	for cur.Next(ctx) {
	}
	if cmdCode(cur.Err()) != 175 {
		t.Fatalf("reading a cursor of a dropped collection: %v", cur.Err())
	}
	// getMore on the killed cursor is CursorNotFound.
	err = env.client.Database("d").RunCommand(context.Background(), bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "k"}}).Err()
	if cmdCode(err) != 43 {
		t.Fatalf("getMore after kill: %v", err)
	}
}

func TestFindOptions(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	c := env.client.Database("d").Collection("f")
	insertN(t, c, 30)
	cur, err := c.Find(ctx, bson.D{{Key: "n", Value: bson.D{{Key: "$gte", Value: 10}}}, {Key: "g", Value: "g1"}},
		options.Find().SetSort(bson.D{{Key: "n", Value: -1}}).SetSkip(1).SetLimit(3).SetProjection(bson.D{{Key: "n", Value: 1}, {Key: "_id", Value: 0}}))
	if err != nil {
		t.Fatal(err)
	}
	got := mustDocs(t, cur)
	want := []bson.D{{{Key: "n", Value: int32(25)}}, {{Key: "n", Value: int32(22)}}, {{Key: "n", Value: int32(19)}}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	// Limit without sort, over several batches.
	cur, err = c.Find(ctx, bson.D{}, options.Find().SetLimit(12).SetBatchSize(5))
	if err != nil {
		t.Fatal(err)
	}
	if got := mustDocs(t, cur); len(got) != 12 {
		t.Fatalf("limit 12 gave %d", len(got))
	}
	// A missing collection finds nothing.
	cur, err = env.client.Database("d").Collection("nope").Find(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	if got := mustDocs(t, cur); len(got) != 0 {
		t.Fatalf("missing collection gave %v", got)
	}
	// A bad filter is the parser's error.
	_, err = c.Find(ctx, bson.D{{Key: "n", Value: bson.D{{Key: "$bogus", Value: 1}}}})
	if cmdCode(err) <= 0 {
		t.Fatalf("bad operator: %v", err)
	}
}

func TestDeleteAndCount(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	c := env.client.Database("d").Collection("del")
	insertN(t, c, 30)
	n, err := c.EstimatedDocumentCount(ctx)
	if err != nil || n != 30 {
		t.Fatalf("estimated count %d, %v", n, err)
	}
	r, err := c.DeleteOne(ctx, bson.D{{Key: "g", Value: "g0"}})
	if err != nil || r.DeletedCount != 1 {
		t.Fatalf("DeleteOne: %v %v", r, err)
	}
	r, err = c.DeleteMany(ctx, bson.D{{Key: "g", Value: "g0"}})
	if err != nil || r.DeletedCount != 9 {
		t.Fatalf("DeleteMany: %v %v", r, err)
	}
	r, err = c.DeleteMany(ctx, bson.D{{Key: "_id", Value: int64(1)}})
	if err != nil || r.DeletedCount != 1 {
		t.Fatalf("DeleteMany by _id: %v %v", r, err)
	}
	var res bson.D
	if err := env.client.Database("d").RunCommand(ctx, bson.D{{Key: "count", Value: "del"}, {Key: "query", Value: bson.D{{Key: "g", Value: "g1"}}}}).Decode(&res); err != nil {
		t.Fatal(err)
	}
	if toMap(res)["n"] != int32(9) {
		t.Fatalf("count g1: %v", res)
	}
	var vals []string
	dr := c.Distinct(ctx, "g", bson.D{})
	if err := dr.Decode(&vals); err != nil {
		t.Fatal(err)
	}
	sort.Strings(vals)
	if fmt.Sprint(vals) != "[g1 g2]" {
		t.Fatalf("distinct: %v", vals)
	}
}

func TestCollectionsAndDatabases(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	db := env.client.Database("catalog")
	if err := db.CreateCollection(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateCollection(ctx, "a"); err != nil {
		t.Fatalf("second create: %v", err)
	}
	if _, err := db.Collection("b").InsertOne(ctx, bson.D{{Key: "x", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	names, err := db.ListCollectionNames(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	if fmt.Sprint(names) != "[a b]" {
		t.Fatalf("collections %v", names)
	}
	specs, err := db.ListCollectionSpecifications(ctx, bson.D{{Key: "name", Value: "b"}})
	if err != nil || len(specs) != 1 || specs[0].Name != "b" || specs[0].Type != "collection" {
		t.Fatalf("specifications %v, %v", specs, err)
	}
	dbs, err := env.client.ListDatabaseNames(ctx, bson.D{})
	if err != nil || fmt.Sprint(dbs) != "[catalog]" {
		t.Fatalf("databases %v, %v", dbs, err)
	}
	if err := db.Collection("a").Drop(ctx); err != nil {
		t.Fatal(err)
	}
	// Dropping a missing collection: the driver ignores "ns not found".
	if err := db.Collection("a").Drop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "drop", Value: "a"}}).Err(); err != nil {
		t.Fatalf("raw drop of a missing collection: %v", err)
	}
	if err := db.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := env.eng.Database("catalog"); err == nil {
		t.Fatal("database still there after dropDatabase")
	}
}

func TestIndexes(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	c := env.client.Database("d").Collection("ix")
	name, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}, {Key: "b", Value: -1}}})
	if err != nil || name != "a_1_b_-1" {
		t.Fatalf("create index: %q %v", name, err)
	}
	specs, err := c.Indexes().ListSpecifications(ctx)
	if err != nil || len(specs) != 2 || specs[0].Name != "_id_" || specs[1].Name != "a_1_b_-1" {
		t.Fatalf("indexes %v %v", specs, err)
	}
	if err := c.Indexes().DropOne(ctx, "a_1_b_-1"); err != nil {
		t.Fatal(err)
	}
	specs, err = c.Indexes().ListSpecifications(ctx)
	if err != nil || len(specs) != 1 {
		t.Fatalf("indexes after drop %v %v", specs, err)
	}
}

func TestAggregate(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	db := env.client.Database("agg")
	c := db.Collection("orders")
	insertN(t, c, 30)
	n, err := c.CountDocuments(ctx, bson.D{{Key: "g", Value: "g1"}})
	if err != nil || n != 10 {
		t.Fatalf("CountDocuments: %d %v", n, err)
	}
	n, err = c.CountDocuments(ctx, bson.D{}, options.Count().SetSkip(5).SetLimit(20))
	if err != nil || n != 20 {
		t.Fatalf("CountDocuments skip/limit: %d %v", n, err)
	}
	cur, err := c.Aggregate(ctx, mongo.Pipeline{
		{{Key: "$match", Value: bson.D{{Key: "n", Value: bson.D{{Key: "$lt", Value: 9}}}}}},
		{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$g"}, {Key: "total", Value: bson.D{{Key: "$sum", Value: "$n"}}}}}},
		{{Key: "$sort", Value: bson.D{{Key: "_id", Value: 1}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := mustDocs(t, cur)
	want := fmt.Sprint([]bson.D{{{Key: "_id", Value: "g0"}, {Key: "total", Value: int32(9)}}, {{Key: "_id", Value: "g1"}, {Key: "total", Value: int32(12)}}, {{Key: "_id", Value: "g2"}, {Key: "total", Value: int32(15)}}})
	if fmt.Sprint(got) != want {
		t.Fatalf("group: %v, want %v", got, want)
	}
	// $lookup reads another collection of the database.
	names := db.Collection("groups")
	if _, err := names.InsertMany(ctx, []any{bson.D{{Key: "_id", Value: "g0"}, {Key: "label", Value: "zero"}}, bson.D{{Key: "_id", Value: "g1"}, {Key: "label", Value: "one"}}}); err != nil {
		t.Fatal(err)
	}
	cur, err = c.Aggregate(ctx, mongo.Pipeline{
		{{Key: "$match", Value: bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: bson.A{1, 3}}}}}}},
		{{Key: "$lookup", Value: bson.D{{Key: "from", Value: "groups"}, {Key: "localField", Value: "g"}, {Key: "foreignField", Value: "_id"}, {Key: "as", Value: "grp"}}}},
		{{Key: "$project", Value: bson.D{{Key: "g", Value: 1}, {Key: "grp.label", Value: 1}}}},
		{{Key: "$sort", Value: bson.D{{Key: "_id", Value: 1}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	got = mustDocs(t, cur)
	want = fmt.Sprint([]bson.D{
		{{Key: "_id", Value: int32(1)}, {Key: "g", Value: "g1"}, {Key: "grp", Value: bson.A{bson.D{{Key: "label", Value: "one"}}}}},
		{{Key: "_id", Value: int32(3)}, {Key: "g", Value: "g0"}, {Key: "grp", Value: bson.A{bson.D{{Key: "label", Value: "zero"}}}}},
	})
	if fmt.Sprint(got) != want {
		t.Fatalf("lookup: %v, want %v", got, want)
	}
	// A large result in batches.
	cur, err = c.Aggregate(ctx, mongo.Pipeline{{{Key: "$sort", Value: bson.D{{Key: "n", Value: 1}}}}}, options.Aggregate().SetBatchSize(4))
	if err != nil {
		t.Fatal(err)
	}
	if got := mustDocs(t, cur); len(got) != 30 {
		t.Fatalf("aggregate in batches: %d", len(got))
	}
}

// TestSortedLimitMatchesFullSort: a sorted find with a limit (a bounded
// heap) returns what sorting everything and slicing returns, ties included.
func TestSortedLimitMatchesFullSort(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	c := env.client.Database("d").Collection("topk")
	var docs []any
	for i := range 300 {
		docs = append(docs, bson.D{{Key: "_id", Value: int32(i)}, {Key: "v", Value: int32((i * 7919) % 37)}, {Key: "w", Value: int32(i % 3)}})
	}
	if _, err := c.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	sortSpec := bson.D{{Key: "v", Value: -1}, {Key: "w", Value: 1}}
	cur, err := c.Find(ctx, bson.D{}, options.Find().SetSort(sortSpec))
	if err != nil {
		t.Fatal(err)
	}
	all := mustDocs(t, cur)
	for _, sl := range [][2]int64{{0, 1}, {0, 10}, {5, 20}, {290, 50}, {0, 300}} {
		cur, err := c.Find(ctx, bson.D{}, options.Find().SetSort(sortSpec).SetSkip(sl[0]).SetLimit(sl[1]))
		if err != nil {
			t.Fatal(err)
		}
		got := mustDocs(t, cur)
		want := all[min(sl[0], 300):min(sl[0]+sl[1], 300)]
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("skip %d limit %d: got %v, want %v", sl[0], sl[1], got, want)
		}
	}
}
