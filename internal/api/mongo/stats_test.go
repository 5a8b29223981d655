package mongo

import (
	"bytes"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

// $bit, as MongoDB's "$bit" reference page shows it: and/or/xor on int32
// and int64, the result an int64 when either side is; a missing field
// starts from 0 (bit_node.cpp); a non-integral field is 2 BadValue and a
// malformed argument 9 FailedToParse or 2 BadValue (bit_node.cpp).
func TestBitOperator(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	c := env.client.Database("d").Collection("bits")
	if _, err := c.InsertMany(ctx, []any{
		bson.D{{Key: "_id", Value: 1}, {Key: "expdata", Value: int32(13)}},
		bson.D{{Key: "_id", Value: 2}, {Key: "expdata", Value: int64(3)}},
		bson.D{{Key: "_id", Value: 3}, {Key: "expdata", Value: int64(1)}},
		bson.D{{Key: "_id", Value: 4}, {Key: "expdata", Value: 1.5}},
	}); err != nil {
		t.Fatal(err)
	}
	bit := func(id int, op string, v any) error {
		_, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}}, bson.D{{Key: "$bit", Value: bson.D{{Key: "expdata", Value: bson.D{{Key: op, Value: v}}}}}})
		return err
	}
	get := func(id int) any {
		var d bson.D
		if err := c.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&d); err != nil {
			t.Fatal(err)
		}
		v, _ := lookupField(d, "expdata")
		return v
	}
	for _, tc := range []struct {
		id   int
		op   string
		arg  any
		want any
	}{
		{1, "and", int32(10), int32(8)},
		{2, "or", int32(5), int64(7)},
		{3, "xor", int32(5), int64(4)},
		{5, "or", int64(6), int64(6)},
	} {
		if tc.id == 5 {
			if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 5}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := bit(tc.id, tc.op, tc.arg); err != nil {
			t.Fatalf("$bit %s on %d: %v", tc.op, tc.id, err)
		}
		if got := get(tc.id); got != tc.want {
			t.Fatalf("$bit %s on %d: %v (%T), want %v (%T)", tc.op, tc.id, got, got, tc.want, tc.want)
		}
	}
	if err := bit(4, "and", int32(1)); cmdCode(err) != 2 {
		t.Fatalf("$bit on a double: %v", err)
	}
	if err := bit(1, "and", 1.0); cmdCode(err) != 2 {
		t.Fatalf("$bit with a double operand: %v", err)
	}
	if err := bit(1, "nand", int32(1)); cmdCode(err) != 2 {
		t.Fatalf("$bit nand: %v", err)
	}
	_, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$bit", Value: bson.D{{Key: "expdata", Value: int32(1)}}}})
	if cmdCode(err) != 9 {
		t.Fatalf("$bit with a number: %v", err)
	}
}

// The statistics and maintenance commands MongoDB 7.0 has, answered from
// Parsec's storage: dbStats/dbstats (with scale), collStats/collstats
// (ok with zeros for a missing collection, as since MongoDB 4.1.1),
// $collStats, dataSize, validate (26 "does not exist to validate" for a
// missing collection, validate.cpp), compact, and renameCollection refused
// with 115 CommandNotSupported.
func TestStatsCommands(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	db := env.client.Database("st")
	c := db.Collection("c")
	for i := 0; i < 10; i++ {
		if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: i}, {Key: "s", Value: "some text"}}); err != nil {
			t.Fatal(err)
		}
	}
	run := func(cmd bson.D) bson.D {
		t.Helper()
		var out bson.D
		if err := db.RunCommand(ctx, cmd).Decode(&out); err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
		return out
	}
	for _, name := range []string{"dbStats", "dbstats"} {
		m := toMap(run(bson.D{{Key: name, Value: 1}}))
		if m["db"] != "st" || m["objects"] != int64(10) || m["collections"] != int64(1) || m["dataSize"].(float64) <= 0 {
			t.Fatalf("%s: %v", name, m)
		}
		full := m["dataSize"].(float64)
		m = toMap(run(bson.D{{Key: name, Value: 1}, {Key: "scale", Value: 1024}}))
		if m["scaleFactor"] != int64(1024) || m["dataSize"].(float64) != full/1024 {
			t.Fatalf("%s scaled: %v", name, m)
		}
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "dbStats", Value: 1}, {Key: "scale", Value: -1}}).Err(); cmdCode(err) != 2 {
		t.Fatalf("dbStats scale -1: %v", err)
	}
	for _, name := range []string{"collStats", "collstats"} {
		m := toMap(run(bson.D{{Key: name, Value: "c"}}))
		if m["ns"] != "st.c" || m["count"] != int64(10) || m["size"].(int64) <= 0 || m["nindexes"] != int32(1) {
			t.Fatalf("%s: %v", name, m)
		}
	}
	if m := toMap(run(bson.D{{Key: "collStats", Value: "missing"}})); m["count"] != int64(0) || m["size"] != int64(0) {
		t.Fatalf("collStats of a missing collection: %v", m)
	}
	cur, err := c.Aggregate(ctx, mongo.Pipeline{{{Key: "$collStats", Value: bson.D{{Key: "storageStats", Value: bson.D{}}, {Key: "count", Value: bson.D{}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	got := mustDocs(t, cur)
	if len(got) != 1 {
		t.Fatalf("$collStats: %v", got)
	}
	m := toMap(got[0])
	if m["ns"] != "st.c" || m["count"] != int64(10) || toMap(m["storageStats"].(bson.D))["count"] != int64(10) {
		t.Fatalf("$collStats: %v", got[0])
	}
	_, err = c.Aggregate(ctx, mongo.Pipeline{{{Key: "$match", Value: bson.D{}}}, {{Key: "$collStats", Value: bson.D{}}}})
	if cmdCode(err) != 40602 {
		t.Fatalf("$collStats not first: %v", err)
	}
	m = toMap(env.run(t, "admin", bson.D{{Key: "dataSize", Value: "st.c"}}))
	if m["numObjects"] != int64(10) || m["size"].(int64) <= 0 {
		t.Fatalf("dataSize: %v", m)
	}
	m = toMap(run(bson.D{{Key: "validate", Value: "c"}, {Key: "full", Value: true}}))
	if m["valid"] != true || m["nrecords"] != int64(10) || m["nInvalidDocuments"] != int64(0) {
		t.Fatalf("validate: %v", m)
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "validate", Value: "missing"}}).Err(); cmdCode(err) != 26 {
		t.Fatalf("validate of a missing collection: %v", err)
	}
	if m := toMap(run(bson.D{{Key: "compact", Value: "c"}})); m["bytesFreed"] != int64(0) {
		t.Fatalf("compact: %v", m)
	}
	err = env.client.Database("admin").RunCommand(ctx, bson.D{{Key: "renameCollection", Value: "st.c"}, {Key: "to", Value: "st.d"}}).Err()
	if cmdCode(err) != 115 {
		t.Fatalf("renameCollection: %v", err)
	}
}

func (env *testEnv) run(t *testing.T, db string, cmd bson.D) bson.D {
	t.Helper()
	var out bson.D
	if err := env.client.Database(db).RunCommand(ctxT(t), cmd).Decode(&out); err != nil {
		t.Fatalf("%v: %v", cmd, err)
	}
	return out
}

// buildInfo has buildEnvironment, and listCollections gives each
// collection an info.uuid (a UUID, binary subtype 4), as MongoDB 7.0 does
// ("listCollections" reference: info.uuid).
func TestBuildInfoAndCollectionUUID(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	m := toMap(env.run(t, "admin", bson.D{{Key: "buildInfo", Value: 1}}))
	if be, ok := m["buildEnvironment"].(bson.D); !ok || toMap(be)["target_os"] == nil {
		t.Fatalf("buildInfo: %v", m)
	}
	db := env.client.Database("u")
	uuid := func() []byte {
		specs, err := db.ListCollectionSpecifications(ctx, bson.D{{Key: "name", Value: "c"}})
		if err != nil || len(specs) != 1 || specs[0].UUID == nil || specs[0].UUID.Subtype != 4 || len(specs[0].UUID.Data) != 16 {
			t.Fatalf("listCollections: %v, %v", specs, err)
		}
		return specs[0].UUID.Data
	}
	if err := db.CreateCollection(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	a, b := uuid(), uuid()
	if !bytes.Equal(a, b) {
		t.Fatal("a collection's uuid changed")
	}
	if err := db.Collection("c").Drop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateCollection(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a, uuid()) {
		t.Fatal("a collection created again kept its uuid")
	}
}
