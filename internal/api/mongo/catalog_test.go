package mongo

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// MongoDB 7.0 made drop of a missing collection a no-op (SERVER-43894):
// ok: 1, with "ns not found" as the reason nothing was dropped.
func TestDropMissingCollection(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	for _, dbName := range []string{"catalog", "nodb"} {
		var reply bson.D
		err := env.client.Database(dbName).RunCommand(ctx, bson.D{{Key: "drop", Value: "missing"}}).Decode(&reply)
		if err != nil {
			t.Fatalf("drop of a missing collection in %s: %v", dbName, err)
		}
		if m := toMap(reply); m["ok"] != 1.0 || m["info"] != "ns not found" {
			t.Fatalf("drop reply: %v", reply)
		}
	}
}

// MongoDB 7.0's create of an existing collection with the same options is
// ok: 1; with other options it is 48 NamespaceExists (create_collection.cpp,
// "Collection already exists" / "already exists with different options").
func TestCreateExistingCollection(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	db := env.client.Database("catalog")
	for i := 0; i < 2; i++ {
		if err := db.RunCommand(ctx, bson.D{{Key: "create", Value: "a"}}).Err(); err != nil {
			t.Fatalf("create #%d: %v", i+1, err)
		}
	}
	if err := db.CreateCollection(ctx, "a"); err != nil {
		t.Fatalf("driver create of an existing collection: %v", err)
	}
	err := db.RunCommand(ctx, bson.D{{Key: "create", Value: "a"}, {Key: "capped", Value: true}, {Key: "size", Value: 4096}}).Err()
	if cmdCode(err) != 48 {
		t.Fatalf("create with other options: %v", err)
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "shardCollection", Value: "catalog.s"}, {Key: "key", Value: bson.D{{Key: "k", Value: "hashed"}}}}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "create", Value: "s"}}).Err(); cmdCode(err) != 48 {
		t.Fatalf("create of a sharded collection's name: %v", err)
	}
}

// MongoDB 5.0 and later store field names that start with '$' (top level
// and nested) and empty field names as given on insert ("Dollar-Prefixed
// Field Names": "Dollar ($) prefixed fields are permitted as top level
// and nested field names for inserts").
func TestDollarAndEmptyFieldNames(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	c := env.client.Database("d").Collection("names")
	docs := []bson.D{
		{{Key: "_id", Value: 1}, {Key: "a", Value: bson.D{{Key: "$x", Value: int32(1)}, {Key: "y", Value: int32(2)}}}},
		{{Key: "_id", Value: 2}, {Key: "a", Value: bson.D{{Key: "$numberLong", Value: "5"}}}},
		{{Key: "_id", Value: 3}, {Key: "a", Value: bson.D{{Key: "$date", Value: "soon"}}}, {Key: "b", Value: bson.A{bson.D{{Key: "$oid", Value: int32(1)}}}}},
		{{Key: "_id", Value: 4}, {Key: "", Value: int32(1)}, {Key: "e", Value: bson.D{{Key: "", Value: "empty"}}}},
		{{Key: "_id", Value: 5}, {Key: "$price", Value: 50.0}, {Key: "loc", Value: bson.D{{Key: "$db", Value: "novels"}, {Key: "$ref", Value: "x"}, {Key: "$inc", Value: true}}}},
		{{Key: "_id", Value: 6}, {Key: "a", Value: bson.D{{Key: "~$x", Value: int32(1)}, {Key: "~~$y", Value: int32(2)}, {Key: "$id", Value: int32(3)}}}},
	}
	for _, d := range docs {
		if _, err := c.InsertOne(ctx, d); err != nil {
			t.Fatalf("insert %v: %v", d, err)
		}
	}
	for _, want := range docs {
		var got bson.D
		if err := c.FindOne(ctx, bson.D{{Key: "_id", Value: want[0].Value}}).Decode(&got); err != nil {
			t.Fatalf("find %v: %v", want[0].Value, err)
		}
		if !equalDocs(got, want) {
			t.Fatalf("read back %v, stored %v", got, want)
		}
	}
	// Except in an _id (storage_validation.cpp, 52).
	_, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "a", Value: bson.D{{Key: "$x", Value: 1}}}}}})
	if cmdCode(err) != 52 || !contains(err.Error(), "_id fields may not contain '$'-prefixed fields: $x is not valid for storage.") {
		t.Fatalf("an _id with a $ field: %v", err)
	}
	// Filters reach nested '$' fields.
	n, err := c.CountDocuments(ctx, bson.D{{Key: "a.$x", Value: int32(1)}})
	if err != nil || n != 1 {
		t.Fatalf("count a.$x = 1: %d, %v", n, err)
	}
}
