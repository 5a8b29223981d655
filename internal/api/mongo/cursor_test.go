package mongo

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// A find cursor does not return a document deleted after it opened, nor
// one changed so that it no longer matches, and returns a changed one as
// it is when its batch is read: MongoDB's cursors read each batch from
// the collection as it is then ("Cursor Isolation": a cursor is not
// isolated from writes during its lifetime; a deleted document is not
// returned).
func TestCursorSeesDeletes(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	for _, sharded := range []bool{false, true} {
		name := "plain"
		if sharded {
			name = "sharded"
			if err := env.client.Database("d").RunCommand(ctx, bson.D{{Key: "shardCollection", Value: "d.sharded"}, {Key: "key", Value: bson.D{{Key: "s", Value: "hashed"}}}}).Err(); err != nil {
				t.Fatal(err)
			}
		}
		c := env.client.Database("d").Collection(name)
		var docs []any
		for i := 0; i < 300; i++ {
			docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "s", Value: 1}, {Key: "k", Value: i}, {Key: "x", Value: "old"}})
		}
		if _, err := c.InsertMany(ctx, docs); err != nil {
			t.Fatal(err)
		}
		filter := bson.D{{Key: "s", Value: 1}, {Key: "k", Value: bson.D{{Key: "$gte", Value: 0}}}}
		cur, err := c.Find(ctx, filter, options.Find().SetBatchSize(10))
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int32]string{}
		next := func() bool {
			if !cur.Next(ctx) {
				return false
			}
			var d struct {
				ID int32  `bson:"_id"`
				X  string `bson:"x"`
			}
			if err := cur.Decode(&d); err != nil {
				t.Fatal(err)
			}
			if _, dup := seen[d.ID]; dup {
				t.Fatalf("%s: _id %d returned twice", name, d.ID)
			}
			seen[d.ID] = d.X
			return true
		}
		for i := 0; i < 10; i++ {
			if !next() {
				t.Fatal("first batch too short")
			}
		}
		// What the first batch did not return: a deletion, a change that
		// no longer matches, and a change that still does.
		var deleted []int
		for id := 0; id < 300; id++ {
			if _, ok := seen[int32(id)]; !ok && len(deleted) < 20 && id%7 == 0 {
				deleted = append(deleted, id)
			}
		}
		for _, id := range deleted {
			if _, err := c.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "s", Value: 1}}); err != nil {
				t.Fatal(err)
			}
		}
		var unmatched, changed int = -1, -1
		for id := 0; id < 300 && (unmatched < 0 || changed < 0); id++ {
			if _, ok := seen[int32(id)]; ok || id%7 == 0 {
				continue
			}
			if unmatched < 0 {
				unmatched = id
			} else {
				changed = id
			}
		}
		if _, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: unmatched}, {Key: "s", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "k", Value: -1}}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: changed}, {Key: "s", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: "new"}}}}); err != nil {
			t.Fatal(err)
		}
		for next() {
		}
		if err := cur.Err(); err != nil {
			t.Fatal(err)
		}
		for _, id := range deleted {
			if _, ok := seen[int32(id)]; ok {
				t.Fatalf("%s: the cursor returned _id %d, deleted after it opened", name, id)
			}
		}
		if _, ok := seen[int32(unmatched)]; ok {
			t.Fatalf("%s: the cursor returned _id %d, which no longer matches", name, unmatched)
		}
		if seen[int32(changed)] != "new" {
			t.Fatalf("%s: _id %d returned as %q", name, changed, seen[int32(changed)])
		}
		if len(seen) != 300-len(deleted)-1 {
			t.Fatalf("%s: %d documents, want %d", name, len(seen), 300-len(deleted)-1)
		}
		cur.Close(context.Background())
	}
}
