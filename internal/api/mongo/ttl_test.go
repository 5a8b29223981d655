package mongo

import (
	"encoding/json"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/testclock"
)

// TestCountsSkipExpired: on a collection whose container has a time to
// live (set through the NoSQL API), the documents past it are counted by
// none of count (with and without a filter), countDocuments,
// estimatedDocumentCount and aggregate's $count, as find returns none of
// them, before the background sweep deletes them.
func TestCountsSkipExpired(t *testing.T) {
	clk := testclock.New(time.Unix(1_800_000_000, 0))
	env := newEnv(t, envOptions{now: clk.Now})
	ctx := ctxT(t)
	db := env.client.Database("d")
	c := db.Collection("c")
	if _, err := c.InsertMany(ctx, []any{bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "_id", Value: 2}}}); err != nil {
		t.Fatal(err)
	}
	info := mustContainer(t, env, "d", "c").Info()
	ttl := int64(5)
	spec := engine.ContainerSpec{ID: info.ID, PartitionKey: info.PartitionKey, IndexingPolicy: info.IndexingPolicy,
		DefaultTTL: &ttl, SyntheticKey: info.SyntheticKey, Extra: map[string]json.RawMessage{}}
	for k, v := range info.Extra {
		spec.Extra[k] = v
	}
	if _, err := env.eng.ReplaceContainer("d", spec, ""); err != nil {
		t.Fatal(err)
	}
	counts := func() map[string]int64 {
		t.Helper()
		out := map[string]int64{}
		var r struct{ N int64 }
		if err := db.RunCommand(ctx, bson.D{{Key: "count", Value: "c"}}).Decode(&r); err != nil {
			t.Fatal(err)
		}
		out["count"] = r.N
		if err := db.RunCommand(ctx, bson.D{{Key: "count", Value: "c"}, {Key: "query", Value: bson.D{{Key: "_id", Value: bson.D{{Key: "$gt", Value: 0}}}}}}).Decode(&r); err != nil {
			t.Fatal(err)
		}
		out["count with a query"] = r.N
		n, err := c.CountDocuments(ctx, bson.D{})
		if err != nil {
			t.Fatal(err)
		}
		out["countDocuments"] = n
		if n, err = c.EstimatedDocumentCount(ctx); err != nil {
			t.Fatal(err)
		}
		out["estimatedDocumentCount"] = n
		cur, err := c.Aggregate(ctx, mongo.Pipeline{{{Key: "$count", Value: "n"}}})
		if err != nil {
			t.Fatal(err)
		}
		out["$count"] = 0 // no document at all when nothing matches
		for _, d := range mustDocs(t, cur) {
			var r struct{ N int64 }
			raw, _ := bson.Marshal(d)
			if err := bson.Unmarshal(raw, &r); err != nil {
				t.Fatal(err)
			}
			out["$count"] = r.N
		}
		cur, err = c.Find(ctx, bson.D{})
		if err != nil {
			t.Fatal(err)
		}
		out["find"] = int64(len(mustDocs(t, cur)))
		return out
	}
	for what, n := range counts() {
		if n != 2 {
			t.Fatalf("%s before expiry: %d, want 2", what, n)
		}
	}
	clk.Add(10 * time.Second)
	for what, n := range counts() {
		if n != 0 {
			t.Errorf("%s after expiry: %d, want 0", what, n)
		}
	}
}
