package mongo

import (
	"fmt"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

func findID(t testing.TB, c *mongo.Collection, id any) bson.D {
	t.Helper()
	var d bson.D
	if err := c.FindOne(ctxT(t), bson.D{{Key: "_id", Value: id}}).Decode(&d); err != nil {
		t.Fatalf("find %v: %v", id, err)
	}
	return d
}

func TestUpdateOperators(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	c := env.client.Database("d").Collection("u")
	insertN(t, c, 10)
	r, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{
		{Key: "$set", Value: bson.D{{Key: "a.b", Value: "x"}}},
		{Key: "$inc", Value: bson.D{{Key: "n", Value: int32(10)}}},
		{Key: "$push", Value: bson.D{{Key: "tags", Value: bson.D{{Key: "$each", Value: bson.A{"p", "q"}}}}}},
		{Key: "$unset", Value: bson.D{{Key: "pad", Value: ""}}},
	})
	if err != nil || r.MatchedCount != 1 || r.ModifiedCount != 1 {
		t.Fatalf("UpdateOne: %+v %v", r, err)
	}
	want := bson.D{{Key: "_id", Value: int32(1)}, {Key: "n", Value: int32(11)}, {Key: "g", Value: "g1"},
		{Key: "a", Value: bson.D{{Key: "b", Value: "x"}}}, {Key: "tags", Value: bson.A{"p", "q"}}}
	if got := findID(t, c, 1); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after update: %v, want %v", got, want)
	}
	// A no-op update matches but does not modify.
	r, err = c.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "g", Value: "g1"}}}})
	if err != nil || r.MatchedCount != 1 || r.ModifiedCount != 0 {
		t.Fatalf("no-op update: %+v %v", r, err)
	}
	r, err = c.UpdateMany(ctx, bson.D{{Key: "g", Value: "g0"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "flag", Value: true}}}})
	if err != nil || r.MatchedCount != 4 || r.ModifiedCount != 4 {
		t.Fatalf("UpdateMany: %+v %v", r, err)
	}
	n, err := c.CountDocuments(ctx, bson.D{{Key: "flag", Value: true}})
	if err != nil || n != 4 {
		t.Fatalf("flagged: %d %v", n, err)
	}
	// Upsert with operators: the filter's equalities seed the document.
	r, err = c.UpdateOne(ctx, bson.D{{Key: "_id", Value: "new"}, {Key: "k", Value: "v"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: int32(1)}}}, {Key: "$setOnInsert", Value: bson.D{{Key: "created", Value: true}}}},
		options.UpdateOne().SetUpsert(true))
	if err != nil || r.UpsertedCount != 1 || r.UpsertedID != "new" {
		t.Fatalf("upsert: %+v %v", r, err)
	}
	// Update operators add new fields in lexicographic order (MongoDB 5.0+).
	want = bson.D{{Key: "_id", Value: "new"}, {Key: "k", Value: "v"}, {Key: "created", Value: true}, {Key: "x", Value: int32(1)}}
	if got := findID(t, c, "new"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("upserted %v, want %v", got, want)
	}
	// Upsert without _id in the filter gets an ObjectId.
	r, err = c.UpdateOne(ctx, bson.D{{Key: "k", Value: "w"}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "c", Value: 1}}}}, options.UpdateOne().SetUpsert(true))
	if err != nil || r.UpsertedCount != 1 {
		t.Fatalf("upsert: %+v %v", r, err)
	}
	if _, ok := r.UpsertedID.(bson.ObjectID); !ok {
		t.Fatalf("upserted id %T", r.UpsertedID)
	}
	// Replacement upsert.
	r, err = c.ReplaceOne(ctx, bson.D{{Key: "_id", Value: "rep"}}, bson.D{{Key: "v", Value: int32(2)}}, options.Replace().SetUpsert(true))
	if err != nil || r.UpsertedCount != 1 {
		t.Fatalf("replace upsert: %+v %v", r, err)
	}
	if got := findID(t, c, "rep"); fmt.Sprint(got) != fmt.Sprint(bson.D{{Key: "_id", Value: "rep"}, {Key: "v", Value: int32(2)}}) {
		t.Fatalf("replace upserted %v", got)
	}
	// arrayFilters.
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: "arr"}, {Key: "s", Value: bson.A{int32(1), int32(5), int32(9)}}}); err != nil {
		t.Fatal(err)
	}
	_, err = c.UpdateOne(ctx, bson.D{{Key: "_id", Value: "arr"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "s.$[big]", Value: int32(0)}}}},
		options.UpdateOne().SetArrayFilters([]any{bson.D{{Key: "big", Value: bson.D{{Key: "$gt", Value: 4}}}}}))
	if err != nil {
		t.Fatal(err)
	}
	if got := findID(t, c, "arr"); fmt.Sprint(got) != fmt.Sprint(bson.D{{Key: "_id", Value: "arr"}, {Key: "s", Value: bson.A{int32(1), int32(0), int32(0)}}}) {
		t.Fatalf("arrayFilters: %v", got)
	}
	// _id is immutable.
	_, err = c.UpdateOne(ctx, bson.D{{Key: "_id", Value: 2}}, bson.D{{Key: "$set", Value: bson.D{{Key: "_id", Value: 99}}}})
	if cmdCode(err) != 66 {
		t.Fatalf("changing _id: %v", err)
	}
	// A type error from an operator is a write error with its code.
	_, err = c.UpdateOne(ctx, bson.D{{Key: "_id", Value: 2}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "g", Value: 1}}}})
	if cmdCode(err) != 14 {
		t.Fatalf("$inc on a string: %v", err)
	}
}

func TestShardKeyUpdateRefused(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	db := env.client.Database("geo")
	createSharded(t, db, "c", "region", 20000)
	c := db.Collection("c")
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "region", Value: "eu"}}); err != nil {
		t.Fatal(err)
	}
	_, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "region", Value: "us"}}}})
	if cmdCode(err) != 66 {
		t.Fatalf("$set of the shard key: %v", err)
	}
	r, err := c.UpdateOne(ctx, bson.D{{Key: "region", Value: "eu"}, {Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}})
	if err != nil || r.ModifiedCount != 1 {
		t.Fatalf("update in the partition: %+v %v", r, err)
	}
}

func TestFindAndModify(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	c := env.client.Database("d").Collection("fam")
	insertN(t, c, 10)
	var before, after bson.D
	err := c.FindOneAndUpdate(ctx, bson.D{{Key: "g", Value: "g2"}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 100}}}},
		options.FindOneAndUpdate().SetSort(bson.D{{Key: "n", Value: -1}})).Decode(&before)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := lookupField(before, "n"); v != int32(8) {
		t.Fatalf("before: %v", before)
	}
	err = c.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: 5}}, bson.D{{Key: "$set", Value: bson.D{{Key: "z", Value: 1}}}},
		options.FindOneAndUpdate().SetReturnDocument(options.After).SetProjection(bson.D{{Key: "z", Value: 1}})).Decode(&after)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(after) != fmt.Sprint(bson.D{{Key: "_id", Value: int32(5)}, {Key: "z", Value: int32(1)}}) {
		t.Fatalf("after: %v", after)
	}
	var rep bson.D
	err = c.FindOneAndReplace(ctx, bson.D{{Key: "_id", Value: 3}}, bson.D{{Key: "only", Value: "this"}}, options.FindOneAndReplace().SetReturnDocument(options.After)).Decode(&rep)
	if err != nil || fmt.Sprint(rep) != fmt.Sprint(bson.D{{Key: "_id", Value: int32(3)}, {Key: "only", Value: "this"}}) {
		t.Fatalf("replace: %v %v", rep, err)
	}
	var del bson.D
	if err := c.FindOneAndDelete(ctx, bson.D{{Key: "_id", Value: 4}}).Decode(&del); err != nil {
		t.Fatal(err)
	}
	if v, _ := lookupField(del, "n"); v != int32(4) {
		t.Fatalf("deleted %v", del)
	}
	if err := c.FindOne(ctx, bson.D{{Key: "_id", Value: 4}}).Err(); err != mongo.ErrNoDocuments {
		t.Fatalf("after delete: %v", err)
	}
	if err := c.FindOneAndDelete(ctx, bson.D{{Key: "_id", Value: 4}}).Err(); err != mongo.ErrNoDocuments {
		t.Fatalf("second delete: %v", err)
	}
	var up bson.D
	err = c.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: "u"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "v", Value: 1}}}},
		options.FindOneAndUpdate().SetUpsert(true).SetReturnDocument(options.After)).Decode(&up)
	if err != nil || fmt.Sprint(up) != fmt.Sprint(bson.D{{Key: "_id", Value: "u"}, {Key: "v", Value: int32(1)}}) {
		t.Fatalf("upsert: %v %v", up, err)
	}
}

func TestConcurrentIncrements(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	c := env.client.Database("d").Collection("ctr")
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: "c"}, {Key: "n", Value: int32(0)}}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 25 {
				if _, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: "c"}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: int32(1)}}}}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if v, _ := lookupField(findID(t, c, "c"), "n"); v != int32(200) {
		t.Fatalf("counter %v after 200 concurrent increments", v)
	}
}
