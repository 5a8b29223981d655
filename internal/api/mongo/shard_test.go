package mongo

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/epk"
)

func createSharded(t testing.TB, db *mongo.Database, coll, key string, rus int) {
	t.Helper()
	err := db.RunCommand(ctxT(t), bson.D{{Key: "customAction", Value: "CreateCollection"}, {Key: "collection", Value: coll},
		{Key: "shardKey", Value: key}, {Key: "offerThroughput", Value: int32(rus)}}).Err()
	if err != nil {
		t.Fatal(err)
	}
}

func consumed(t testing.TB, c *engine.Container) map[string]float64 {
	t.Helper()
	st, err := c.Stats(0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, s := range st {
		out[s.ID] = s.ConsumedRUs
	}
	return out
}

func TestShardedCollection(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	db := env.client.Database("geo")
	createSharded(t, db, "people", "region", 24000)
	ec := mustContainer(t, env, "geo", "people")
	if n := len(ec.Partitions()); n != 4 {
		t.Fatalf("%d partitions, want 4", n)
	}
	var got bson.D
	if err := db.RunCommand(ctx, bson.D{{Key: "customAction", Value: "GetCollection"}, {Key: "collection", Value: "people"}}).Decode(&got); err != nil {
		t.Fatal(err)
	}
	m := toMap(got)
	if fmt.Sprint(m["shardKeyDefinition"]) != fmt.Sprint(bson.D{{Key: "region", Value: "Hash"}}) || m["provisionedThroughput"] != int32(24000) {
		t.Fatalf("GetCollection: %v", got)
	}
	c := db.Collection("people")
	var docs []any
	for i := range 200 {
		docs = append(docs, bson.D{{Key: "_id", Value: int32(i)}, {Key: "region", Value: fmt.Sprintf("r%d", i%40)}, {Key: "i", Value: int32(i)}})
	}
	if _, err := c.InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	// Every item is in the partition its shard key hashes to.
	def := ec.Definition()
	used := map[string]bool{}
	total := 0
	for _, p := range ec.Partitions() {
		r := p.Range()
		f, err := ec.ReadFeed(p.ID(), nil, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range f.Docs {
			d, _, err := decodeItem(raw)
			if err != nil {
				t.Fatal(err)
			}
			region, _ := lookupField(d, "region")
			e, err := def.EPK(epk.Key{epk.String(region.(string))})
			if err != nil {
				t.Fatal(err)
			}
			if e < r.Min || (r.Max != "FF" && e >= r.Max) {
				t.Fatalf("%v (EPK %s) is in partition %s [%s, %s)", d, e, p.ID(), r.Min, r.Max)
			}
			used[p.ID()] = true
			total++
		}
	}
	if total != 200 || len(used) != 4 {
		t.Fatalf("%d items over %d partitions", total, len(used))
	}
	// A find that fixes the shard key reads one partition only.
	before := consumed(t, ec)
	cur, err := c.Find(ctx, bson.D{{Key: "region", Value: "r7"}})
	if err != nil {
		t.Fatal(err)
	}
	found := mustDocs(t, cur)
	if len(found) != 5 {
		t.Fatalf("region r7: %d documents", len(found))
	}
	after := consumed(t, ec)
	touched := 0
	for id := range after {
		if after[id] != before[id] {
			touched++
		}
	}
	if touched != 1 {
		t.Fatalf("a shard-key equality find charged %d partitions", touched)
	}
	// And a find without it reads them all.
	before = consumed(t, ec)
	cur, err = c.Find(ctx, bson.D{{Key: "i", Value: int32(7)}})
	if err != nil {
		t.Fatal(err)
	}
	if found := mustDocs(t, cur); len(found) != 1 {
		t.Fatalf("i 7: %v", found)
	}
	after = consumed(t, ec)
	touched = 0
	for id := range after {
		if after[id] != before[id] {
			touched++
		}
	}
	if touched != 4 {
		t.Fatalf("a scan charged %d partitions, want 4", touched)
	}
	// An $in on the shard key reads the partitions of its values only.
	before = consumed(t, ec)
	cur, err = c.Find(ctx, bson.D{{Key: "region", Value: bson.D{{Key: "$in", Value: bson.A{"r7", "r12", "r7"}}}}, {Key: "i", Value: bson.D{{Key: "$lt", Value: 100}}}})
	if err != nil {
		t.Fatal(err)
	}
	if found := mustDocs(t, cur); len(found) != 6 { // i = 7, 47, 87 and 12, 52, 92
		t.Fatalf("region in (r7, r12), i < 100: %d documents", len(found))
	}
	after = consumed(t, ec)
	touched = 0
	for id := range after {
		if after[id] != before[id] {
			touched++
		}
	}
	wantTouched := map[string]bool{}
	for _, r := range []string{"r7", "r12"} {
		e, _ := def.EPK(epk.Key{epk.String(r)})
		wantTouched[ec.PartitionFor(e).ID()] = true
	}
	if touched != len(wantTouched) {
		t.Fatalf("an $in on two shard key values charged %d partitions, want %d", touched, len(wantTouched))
	}
	// Counting through the same routing.
	if n, err := c.CountDocuments(ctx, bson.D{{Key: "region", Value: bson.D{{Key: "$in", Value: bson.A{"r1", "r2", "r3"}}}}}); err != nil || n != 15 {
		t.Fatalf("CountDocuments region in (r1, r2, r3): %d %v", n, err)
	}
	// Point read by shard key and _id.
	var one bson.D
	if err := c.FindOne(ctx, bson.D{{Key: "region", Value: "r7"}, {Key: "_id", Value: int32(47)}}).Decode(&one); err != nil {
		t.Fatal(err)
	}
	if v, _ := lookupField(one, "i"); v != int32(47) {
		t.Fatalf("point read: %v", one)
	}
	// Changing the shard key is refused.
	_, err = c.ReplaceOne(ctx, bson.D{{Key: "_id", Value: int32(7)}}, bson.D{{Key: "region", Value: "elsewhere"}})
	if cmdCode(err) != 66 {
		t.Fatalf("changing the shard key: %v", err)
	}
	// Replacing within the same key works.
	r, err := c.ReplaceOne(ctx, bson.D{{Key: "_id", Value: int32(7)}, {Key: "region", Value: "r7"}}, bson.D{{Key: "region", Value: "r7"}, {Key: "i", Value: "seven"}})
	if err != nil || r.MatchedCount != 1 || r.ModifiedCount != 1 {
		t.Fatalf("replace: %+v %v", r, err)
	}
	// A document without the shard key goes to the undefined key's partition.
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: "nokey"}}); err != nil {
		t.Fatal(err)
	}
	if err := c.FindOne(ctx, bson.D{{Key: "_id", Value: "nokey"}}).Err(); err != nil {
		t.Fatal(err)
	}
	// {region: null} matches the documents without a region too.
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: "nullkey"}, {Key: "region", Value: nil}}); err != nil {
		t.Fatal(err)
	}
	if n, err := c.CountDocuments(ctx, bson.D{{Key: "region", Value: nil}}); err != nil || n != 2 {
		t.Fatalf("region null: %d %v", n, err)
	}
	if _, err := c.DeleteOne(ctx, bson.D{{Key: "_id", Value: "nullkey"}}); err != nil {
		t.Fatal(err)
	}
	// A shard key value that cannot be one is a clear error.
	_, err = c.InsertOne(ctx, bson.D{{Key: "region", Value: bson.A{"a"}}})
	if cmdCode(err) != 2 || !strings.Contains(err.Error(), "shard key") {
		t.Fatalf("array shard key: %v", err)
	}
	// shardCollection on a new collection, on any database.
	var sr bson.D
	if err := db.RunCommand(ctx, bson.D{{Key: "shardCollection", Value: "geo.cities"}, {Key: "key", Value: bson.D{{Key: "country", Value: "hashed"}}}}).Decode(&sr); err != nil {
		t.Fatal(err)
	}
	if cc := mustContainer(t, env, "geo", "cities"); fmt.Sprint(cc.Definition().Paths) != "[/~sk]" || string(cc.Info().Extra["mongoShardKey"]) != `"country"` {
		t.Fatalf("cities partition key %v, shard key property %s", cc.Definition().Paths, cc.Info().Extra["mongoShardKey"])
	}
	var stats bson.D
	if err := db.RunCommand(ctx, bson.D{{Key: "collStats", Value: "people"}}).Decode(&stats); err != nil {
		t.Fatal(err)
	}
	if sm := toMap(stats); sm["count"] != int64(201) || sm["sharded"] != true || sm["physicalPartitions"] != int32(4) {
		t.Fatalf("collStats: %v", stats)
	}
	// UpdateCollection changes the throughput: 80,000 RU/s splits to 8.
	if err := db.RunCommand(ctx, bson.D{{Key: "customAction", Value: "UpdateCollection"}, {Key: "collection", Value: "people"}, {Key: "offerThroughput", Value: int32(80000)}}).Err(); err != nil {
		t.Fatal(err)
	}
	if n := len(ec.Partitions()); n != 8 {
		t.Fatalf("%d partitions after raising throughput, want 8", n)
	}
	if n, err := c.CountDocuments(ctx, bson.D{}); err != nil || n != 201 {
		t.Fatalf("CountDocuments after split: %d %v", n, err)
	}
}

func TestUnshardedIsFixed(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	if _, err := env.client.Database("u").Collection("c").InsertOne(ctx, bson.D{{Key: "a", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if info := mustContainer(t, env, "u", "c").Info(); !info.Fixed {
		t.Fatalf("unsharded collection is not a fixed container: %+v", info.PartitionKey)
	}
}

func TestHotShardKeyThrottled(t *testing.T) {
	env := newEnv(t, envOptions{throttle: true})
	ctx := ctxT(t)
	db := env.client.Database("hot")
	createSharded(t, db, "c", "k", 400)
	c := db.Collection("c")
	var err error
	for i := 0; i < 20000 && err == nil; i++ {
		_, err = c.InsertOne(ctx, bson.D{{Key: "k", Value: "hot"}, {Key: "pad", Value: strings.Repeat("x", 1000)}})
	}
	if cmdCode(err) != 16500 {
		t.Fatalf("hot key: want 16500, got %v", err)
	}
	var we mongo.WriteException
	msg := err.Error()
	if strings.Contains(msg, "RetryAfterMs=") == false {
		t.Fatalf("16500 without RetryAfterMs: %v (%T %v)", msg, err, we)
	}
	var se mongo.ServerError
	if !asServerError(err, &se) {
		t.Fatal("not a server error")
	}
}

func TestConcurrentWriters(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	db := env.client.Database("cc")
	createSharded(t, db, "c", "k", 20000)
	c := db.Collection("c")
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: fmt.Sprintf("%d-%d", w, i)}, {Key: "k", Value: fmt.Sprintf("k%d", i%5)}, {Key: "w", Value: int32(w)}}); err != nil {
					errs <- err
					return
				}
			}
			if _, err := c.DeleteMany(ctx, bson.D{{Key: "w", Value: int32(w)}, {Key: "k", Value: "k0"}}); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	items, _ := mustContainer(t, env, "cc", "c").Usage()
	if items != 8*40 {
		t.Fatalf("%d items, want %d", items, 8*40)
	}
}

func TestCustomActions(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	db := env.client.Database("cosmos")
	run := func(cmd bson.D) (bson.D, error) {
		var out bson.D
		err := db.RunCommand(ctx, cmd).Decode(&out)
		return out, err
	}
	if _, err := run(bson.D{{Key: "customAction", Value: "CreateDatabase"}, {Key: "offerThroughput", Value: 1000}}); err != nil {
		t.Fatal(err)
	}
	if _, err := run(bson.D{{Key: "customAction", Value: "CreateDatabase"}}); cmdCode(err) != 48 {
		t.Fatalf("second CreateDatabase: %v", err)
	}
	got, err := run(bson.D{{Key: "customAction", Value: "GetDatabase"}})
	if err != nil || toMap(got)["provisionedThroughput"] != int32(1000) {
		t.Fatalf("GetDatabase: %v %v", got, err)
	}
	if _, err := run(bson.D{{Key: "customAction", Value: "CreateCollection"}, {Key: "collection", Value: "auto"}, {Key: "shardKey", Value: "a.b"},
		{Key: "autoScaleSettings", Value: bson.D{{Key: "maxThroughput", Value: 20000}}}}); err != nil {
		t.Fatal(err)
	}
	got, err = run(bson.D{{Key: "customAction", Value: "GetCollection"}, {Key: "collection", Value: "auto"}})
	m := toMap(got)
	if err != nil || fmt.Sprint(m["shardKeyDefinition"]) != fmt.Sprint(bson.D{{Key: "a.b", Value: "Hash"}}) ||
		fmt.Sprint(m["autoScaleSettings"]) != fmt.Sprint(bson.D{{Key: "maxThroughput", Value: int32(20000)}}) {
		t.Fatalf("GetCollection: %v %v", got, err)
	}
	if cc := mustContainer(t, env, "cosmos", "auto"); string(cc.Info().Extra["mongoShardKey"]) != `"a.b"` {
		t.Fatalf("nested shard key %s", cc.Info().Extra["mongoShardKey"])
	}
	// A nested shard key routes by the nested value.
	c := db.Collection("auto")
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: bson.D{{Key: "b", Value: "k"}}}}); err != nil {
		t.Fatal(err)
	}
	if err := c.FindOne(ctx, bson.D{{Key: "a.b", Value: "k"}, {Key: "_id", Value: 1}}).Err(); err != nil {
		t.Fatal(err)
	}
	// An unsharded collection is capped like a fixed container.
	_, err = run(bson.D{{Key: "customAction", Value: "CreateCollection"}, {Key: "collection", Value: "fixed"}, {Key: "offerThroughput", Value: 50000}})
	if cmdCode(err) != 2 || !strings.Contains(err.Error(), "partition key") {
		t.Fatalf("unsharded 50,000 RU/s: %v", err)
	}
	if _, err := run(bson.D{{Key: "customAction", Value: "Frobnicate"}}); cmdCode(err) != 59 {
		t.Fatalf("unknown customAction: %v", err)
	}
	if _, err := run(bson.D{{Key: "customAction", Value: "GetCollection"}, {Key: "collection", Value: "nope"}}); cmdCode(err) != 26 {
		t.Fatalf("GetCollection of a missing collection: %v", err)
	}
}
