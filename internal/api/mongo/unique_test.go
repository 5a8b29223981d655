package mongo

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

func TestUniqueIndex(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	c := env.client.Database("d").Collection("users")
	if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "email", Value: 1}}, Options: options.Index().SetUnique(true)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "email", Value: "a@x"}}); err != nil {
		t.Fatal(err)
	}
	_, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 2}, {Key: "email", Value: "a@x"}})
	if !mongo.IsDuplicateKeyError(err) || !strings.Contains(err.Error(), "email_1") {
		t.Fatalf("second a@x: %v", err)
	}
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 2}, {Key: "email", Value: "b@x"}}); err != nil {
		t.Fatal(err)
	}
	// Updating into a taken key fails; moving a key frees the old one.
	_, err = c.UpdateOne(ctx, bson.D{{Key: "_id", Value: 2}}, bson.D{{Key: "$set", Value: bson.D{{Key: "email", Value: "a@x"}}}})
	if !mongo.IsDuplicateKeyError(err) {
		t.Fatalf("update into a taken key: %v", err)
	}
	if _, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "email", Value: "c@x"}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 3}, {Key: "email", Value: "a@x"}}); err != nil {
		t.Fatalf("a@x after it was moved: %v", err)
	}
	// Deleting frees the key.
	if _, err := c.DeleteOne(ctx, bson.D{{Key: "_id", Value: 3}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 4}, {Key: "email", Value: "a@x"}}); err != nil {
		t.Fatal(err)
	}
	// Numbers equal as MongoDB compares them are one key; missing is null.
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 5}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 6}, {Key: "email", Value: nil}}); !mongo.IsDuplicateKeyError(err) {
		t.Fatalf("null after missing: %v", err)
	}
	// Guards never show in reads or counts.
	n, err := c.CountDocuments(ctx, bson.D{})
	if err != nil || n != 4 {
		t.Fatalf("CountDocuments %d %v", n, err)
	}
	if n, err := c.EstimatedDocumentCount(ctx); err != nil || n != 4 {
		t.Fatalf("EstimatedDocumentCount %d %v", n, err)
	}
	cur, err := c.Find(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	if got := mustDocs(t, cur); len(got) != 4 {
		t.Fatalf("find: %v", got)
	}
	// A unique index needs an empty collection.
	_, err = c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "name", Value: 1}}, Options: options.Index().SetUnique(true)})
	if cmdCode(err) != 67 || !strings.Contains(fmt.Sprint(err), "empty collection") {
		t.Fatalf("unique index on a non-empty collection: %v", err)
	}
	// Dropping the index removes its guards and lifts the constraint.
	if err := c.Indexes().DropOne(ctx, "email_1"); err != nil {
		t.Fatal(err)
	}
	items, _ := mustContainer(t, env, "d", "users").Usage()
	if items != 4 {
		t.Fatalf("%d items after dropping the unique index, want the 4 documents", items)
	}
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 7}, {Key: "email", Value: "a@x"}}); err != nil {
		t.Fatal(err)
	}
}

func TestUniqueIndexConcurrent(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	db := env.client.Database("d")
	createSharded(t, db, "acct", "tenant", 20000)
	c := db.Collection("acct")
	_, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "tenant", Value: 1}, {Key: "login", Value: 1}}, Options: options.Index().SetUnique(true)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "login", Value: 1}}, Options: options.Index().SetUnique(true)}); cmdCode(err) != 67 || !strings.Contains(fmt.Sprint(err), "shard key") {
		t.Fatalf("unique index without the shard key: %v", err)
	}
	// Many writers race for the same logins: each wins exactly once.
	var wins atomic.Int32
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				_, err := c.InsertOne(ctx, bson.D{{Key: "tenant", Value: "t"}, {Key: "login", Value: fmt.Sprintf("u%d", i)}, {Key: "w", Value: int32(w)}})
				switch {
				case err == nil:
					wins.Add(1)
				case !mongo.IsDuplicateKeyError(err):
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 10 {
		t.Fatalf("%d inserts won, want 10", wins.Load())
	}
	// The same login in another tenant is another key.
	if _, err := c.InsertOne(ctx, bson.D{{Key: "tenant", Value: "t2"}, {Key: "login", Value: "u1"}}); err != nil {
		t.Fatal(err)
	}
}
