package mongo

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/epk"
)

// TestShardKeyTypes checks shard keys of every BSON type a shard key may
// have: each document is found by its key alone (one logical partition)
// and by key and _id (a point read); values MongoDB considers equal (5,
// NumberLong(5), 5.0) name one logical partition; ObjectId keys spread
// over the partitions; the stored item carries the encoded key, and
// arrays, regular expressions and Decimal128 are refused with code 2.
func TestShardKeyTypes(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	db := env.client.Database("sk")
	createSharded(t, db, "c", "k", 40000)
	c := db.Collection("c")
	keys := []any{
		int32(5), int64(1 << 60), int64(-7), 2.5, float64(1 << 62), "plain", "~n:5", "5f1a2b3c4d5e6f7a8b9c0d1e",
		bson.ObjectID{0x5f, 1, 2}, bson.NewDateTimeFromTime(time.Unix(1700000000, 0)), true, nil,
		bson.Binary{Subtype: 4, Data: []byte("0123456789abcdef")}, bson.Timestamp{T: 7, I: 1},
		bson.D{{Key: "tenant", Value: "x"}, {Key: "n", Value: int32(1)}}, bson.MinKey{},
	}
	for i, k := range keys {
		if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: int32(i)}, {Key: "k", Value: k}}); err != nil {
			t.Fatalf("insert with key %v: %v", k, err)
		}
	}
	for i, k := range keys {
		if k == nil {
			continue // {k: null} also matches documents without k
		}
		var got bson.D
		if err := c.FindOne(ctx, bson.D{{Key: "k", Value: k}, {Key: "_id", Value: int32(i)}}).Decode(&got); err != nil {
			t.Fatalf("point read of key %v: %v", k, err)
		}
		if fmt.Sprint(got) != fmt.Sprint(bson.D{{Key: "_id", Value: int32(i)}, {Key: "k", Value: k}}) {
			t.Fatalf("key %v: read %v", k, got)
		}
		n, err := c.CountDocuments(ctx, bson.D{{Key: "k", Value: k}})
		if err != nil || n != 1 {
			t.Fatalf("documents with key %v: %d %v", k, n, err)
		}
		var ex bson.D
		if err := db.RunCommand(ctx, bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "k", Value: k}}}}},
			{Key: "verbosity", Value: "queryPlanner"}}).Decode(&ex); err != nil {
			t.Fatal(err)
		}
		if lp := field(ex, "queryPlanner", "winningPlan", "logicalPartitions"); lp != int32(1) {
			t.Fatalf("key %v: not read from one logical partition: %v", k, ex)
		}
	}
	// 5, NumberLong(5) and 5.0 are one value, as in MongoDB.
	for _, five := range []any{int64(5), 5.0} {
		var got bson.D
		if err := c.FindOne(ctx, bson.D{{Key: "k", Value: five}, {Key: "_id", Value: int32(0)}}).Decode(&got); err != nil {
			t.Fatalf("key %T 5: %v", five, err)
		}
	}
	// The stored item holds the encoded key, which the NoSQL API reads.
	ec := mustContainer(t, env, "sk", "c")
	for i, want := range map[int]string{0: `5`, 1: `"~n:1152921504606846976"`, 6: `"~s:~n:5"`, 8: `"5f0102000000000000000000"`} {
		op, err := ec.PrepareKeyed(engine.OpRead, fmt.Sprint("~n:", i), epk.Key{mustComponent(t, want)}, true)
		if err != nil {
			t.Fatal(err)
		}
		r, _, err := ec.ReadItem(op)
		if err != nil {
			t.Fatalf("item %d by key %s: %v", i, want, err)
		}
		var item map[string]json.RawMessage
		if err := json.Unmarshal(r.Doc, &item); err != nil || string(item["~sk"]) != want {
			t.Fatalf("item %d: ~sk %s, want %s (%v)", i, item["~sk"], want, err)
		}
	}
	// ObjectId keys spread over the partitions.
	var docs []any
	for i := range 200 {
		docs = append(docs, bson.D{{Key: "_id", Value: fmt.Sprint("o", i)}, {Key: "k", Value: bson.NewObjectID()}})
	}
	if _, err := c.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	for _, p := range ec.Partitions() {
		f, err := ec.ReadFeed(p.ID(), nil, 1)
		if err != nil || len(f.Docs) == 0 {
			t.Fatalf("partition %s holds no document (%v)", p.ID(), err)
		}
	}
	dec, _ := bson.ParseDecimal128("5")
	for _, bad := range []any{bson.A{int32(1)}, bson.Regex{Pattern: "a"}, dec} {
		if _, err := c.InsertOne(ctx, bson.D{{Key: "k", Value: bad}}); cmdCode(err) != 2 {
			t.Fatalf("shard key %v: %v, want code 2", bad, err)
		}
	}
	// A field of its own named like the key member round-trips.
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: "own"}, {Key: "k", Value: "x"}, {Key: "~sk", Value: "mine"}}); err != nil {
		t.Fatal(err)
	}
	var own bson.D
	if err := c.FindOne(ctx, bson.D{{Key: "_id", Value: "own"}}).Decode(&own); err != nil || fmt.Sprint(own) != fmt.Sprint(bson.D{{Key: "_id", Value: "own"}, {Key: "k", Value: "x"}, {Key: "~sk", Value: "mine"}}) {
		t.Fatalf("a field named ~sk: %v %v", own, err)
	}
}

func mustComponent(t *testing.T, js string) epk.Component {
	t.Helper()
	c, err := epk.ComponentFromJSON([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestContainerKeyedByField checks a collection whose container was made
// through the NoSQL API, with the shard key's field as its partition key
// path: the documents' own values are the keys, so only values the engine
// keys by are accepted.
func TestContainerKeyedByField(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	if _, err := env.eng.CreateDatabase("nosql", engine.Throughput{}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.eng.CreateContainer("nosql", engine.ContainerSpec{ID: "c", PartitionKey: epk.Definition{Kind: epk.Hash, Version: 2, Paths: []string{"/tenant"}}}, engine.Throughput{RUs: 400}); err != nil {
		t.Fatal(err)
	}
	c := env.client.Database("nosql").Collection("c")
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "tenant", Value: "t1"}}); err != nil {
		t.Fatal(err)
	}
	ec := mustContainer(t, env, "nosql", "c")
	op, err := ec.PrepareKeyed(engine.OpRead, "~n:1", epk.Key{epk.String("t1")}, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := ec.ReadItem(op); err != nil {
		t.Fatalf("the item under its own key value: %v", err)
	}
	if n, err := c.CountDocuments(ctx, bson.D{{Key: "tenant", Value: "t1"}}); err != nil || n != 1 {
		t.Fatalf("count by tenant: %d %v", n, err)
	}
	if _, err := c.InsertOne(ctx, bson.D{{Key: "tenant", Value: bson.NewObjectID()}}); cmdCode(err) != 2 {
		t.Fatalf("an ObjectId key in a container keyed by the field: %v", err)
	}
}
