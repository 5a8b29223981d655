package mongo

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

func asServerError(err error, se *mongo.ServerError) bool { return errors.As(err, se) }

func TestConnectPing(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	if err := env.client.Ping(ctx, nil); err != nil {
		t.Fatal(err)
	}
	var hello bson.D
	if err := env.client.Database("admin").RunCommand(ctx, bson.D{{Key: "hello", Value: 1}}).Decode(&hello); err != nil {
		t.Fatal(err)
	}
	m := toMap(hello)
	if m["isWritablePrimary"] != true || m["maxWireVersion"] != int32(21) || m["maxBsonObjectSize"] != int32(16777216) || m["logicalSessionTimeoutMinutes"] != int32(30) {
		t.Fatalf("hello reply: %v", hello)
	}
	if _, ok := m["setName"]; ok {
		t.Fatal("hello must not name a replica set")
	}
	err := env.client.Database("admin").RunCommand(ctx, bson.D{{Key: "atlasVersion", Value: 1}}).Err()
	if cmdCode(err) != 59 {
		t.Fatalf("atlasVersion: %v", err)
	}
	err = env.client.Database("admin").RunCommand(ctx, bson.D{{Key: "frobnicate", Value: 1}}).Err()
	if cmdCode(err) != 59 || !contains(err.Error(), "frobnicate") {
		t.Fatalf("unknown command: %v", err)
	}
	for _, c := range []string{"buildInfo", "getLog", "whatsmyuri", "connectionStatus", "hostInfo", "serverStatus", "listCommands", "getParameter"} {
		var v any = int32(1)
		if c == "getLog" {
			v = "startupWarnings"
		}
		if c == "getParameter" {
			v = "*"
		}
		if err := env.client.Database("admin").RunCommand(ctx, bson.D{{Key: c, Value: v}}).Err(); err != nil {
			t.Errorf("%s: %v", c, err)
		}
	}
}

func toMap(d bson.D) map[string]any {
	m := map[string]any{}
	for _, e := range d {
		m[e.Key] = e.Value
	}
	return m
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func TestInsertDuplicate(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	c := env.client.Database("shop").Collection("orders")
	res, err := c.InsertOne(ctx, bson.D{{Key: "name", Value: "a"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := res.InsertedID.(bson.ObjectID); !ok {
		t.Fatalf("inserted id %T", res.InsertedID)
	}
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: "x"}}); err != nil {
		t.Fatal(err)
	}
	_, err = c.InsertOne(ctx, bson.D{{Key: "_id", Value: "x"}})
	if !mongo.IsDuplicateKeyError(err) {
		t.Fatalf("duplicate: %v", err)
	}
	// Numbers equal as MongoDB compares them are one _id.
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: int32(7)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: int64(7)}}); !mongo.IsDuplicateKeyError(err) {
		t.Fatalf("int64 7 after int32 7: %v", err)
	}
	// A string that spells an ObjectId's hex and the ObjectId are distinct.
	oid := bson.NewObjectID()
	if _, err := c.InsertMany(ctx, []any{bson.D{{Key: "_id", Value: oid}}, bson.D{{Key: "_id", Value: oid.Hex()}}, bson.D{{Key: "_id", Value: "a/b#c?d%"}}}); err != nil {
		t.Fatal(err)
	}
	items, _ := mustContainer(t, env, "shop", "orders").Usage()
	if items != 6 {
		t.Fatalf("%d items, want 6", items)
	}
}

// TestInsertManyErrors: batched inserts report each failure at its index;
// an ordered insert stops at the first, an unordered one inserts the rest.
func TestInsertManyErrors(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	for _, sharded := range []bool{false, true} {
		db := env.client.Database(fmt.Sprintf("ins%v", sharded))
		if sharded {
			createSharded(t, db, "c", "k", 40000)
		}
		for _, ordered := range []bool{true, false} {
			c := db.Collection("c")
			if _, err := c.DeleteMany(ctx, bson.D{}); err != nil {
				t.Fatal(err)
			}
			var docs []any
			for i := range 250 {
				id, k := i, i%4
				if i == 120 || i == 200 {
					// Duplicates of document 3, in its logical partition
					// (an _id is unique per shard key value, as in Cosmos).
					id, k = 3, 3
				}
				docs = append(docs, bson.D{{Key: "_id", Value: id}, {Key: "k", Value: fmt.Sprintf("k%d", k)}})
			}
			docs[150] = bson.D{{Key: "_id", Value: bson.A{150}}, {Key: "k", Value: "k2"}} // an array cannot be an _id
			_, err := c.InsertMany(ctx, docs, options.InsertMany().SetOrdered(ordered))
			var be mongo.BulkWriteException
			if !errors.As(err, &be) {
				t.Fatalf("sharded %v ordered %v: %v", sharded, ordered, err)
			}
			var idx []int
			for _, we := range be.WriteErrors {
				idx = append(idx, we.Index)
			}
			n, _ := c.CountDocuments(ctx, bson.D{})
			if ordered {
				if fmt.Sprint(idx) != "[120]" || n != 120 {
					t.Fatalf("sharded %v ordered: errors at %v, %d inserted", sharded, idx, n)
				}
			} else if fmt.Sprint(idx) != "[120 150 200]" || n != 247 {
				t.Fatalf("sharded %v unordered: errors at %v, %d inserted", sharded, idx, n)
			}
			if be.WriteErrors[0].Code != 11000 {
				t.Fatalf("first error %v", be.WriteErrors[0])
			}
		}
	}
}
