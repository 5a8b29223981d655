package mongo

import (
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestSortsCountInQueryMemory: the documents a sort, a findAndModify with
// a sort or an aggregation holds while it runs are counted in the
// server's query memory: past it the command fails with code 146 while
// other queries hold the rest, and with 292 when it alone needs more; the
// command gives back what it held when it ends, failed or not.
func TestSortsCountInQueryMemory(t *testing.T) {
	const server = 16 << 20
	env := newEnv(t, envOptions{queryMemory: server})
	ctx := ctxT(t)
	db := env.client.Database("db")
	seedBig := func(name string, n int) *mongo.Collection {
		t.Helper()
		c := db.Collection(name)
		pad := strings.Repeat("x", 256<<10)
		for i := range n {
			if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: i}, {Key: "n", Value: i}, {Key: "pad", Value: pad}}); err != nil {
				t.Fatal(err)
			}
		}
		return c
	}
	c := seedBig("c", 20) // 5 MiB
	sorted := options.Find().SetSort(bson.D{{Key: "n", Value: -1}}).SetBatchSize(1)
	find := func() error {
		cur, err := c.Find(ctx, bson.D{}, sorted)
		if err == nil {
			cur.Close(ctx)
		}
		return err
	}
	aggregate := func() error {
		cur, err := c.Aggregate(ctx, bson.A{bson.D{{Key: "$sort", Value: bson.D{{Key: "n", Value: -1}}}}}, options.Aggregate().SetBatchSize(1))
		if err == nil {
			cur.Close(ctx)
		}
		return err
	}
	findAndModify := func() error {
		return c.FindOneAndUpdate(ctx, bson.D{}, bson.D{{Key: "$inc", Value: bson.D{{Key: "k", Value: 1}}}},
			options.FindOneAndUpdate().SetSort(bson.D{{Key: "n", Value: -1}})).Err()
	}
	// other stands for the queries running meanwhile.
	other := func(n int64) func() {
		t.Helper()
		if err := env.eng.HoldQueryMemory(n); err != nil {
			t.Fatal(err)
		}
		return func() { env.eng.HoldQueryMemory(-n) }
	}
	want := func(what string, err error, code int) {
		t.Helper()
		if got := cmdCode(err); got != code {
			t.Errorf("%s: code %d (%v), want %d", what, got, err, code)
		}
	}

	done := other(12 << 20) // leaves 4 MiB: less than the 5 MiB of any of them
	want("find with a sort", find(), 146)
	want("findAndModify with a sort", findAndModify(), 146)
	want("aggregate", aggregate(), 146)
	done()
	done = other(8 << 20) // leaves 8 MiB: the input of the aggregation and its $sort need 10
	if err := find(); err != nil {
		t.Errorf("find with a sort: %v", err)
	}
	want("aggregate whose $sort needs more", aggregate(), 146)
	done()
	for what, f := range map[string]func() error{"find with a sort": find, "findAndModify with a sort": findAndModify, "aggregate": aggregate} {
		if err := f(); err != nil {
			t.Errorf("%s with the query memory free: %v", what, err)
		}
	}

	big := seedBig("big", 70) // 17.5 MiB: more than the server's query memory
	cur, err := big.Find(ctx, bson.D{}, sorted)
	if err == nil {
		cur.Close(ctx)
	}
	want("a sort over more than the server's query memory", err, 292)

	// Every command gave back what it held: the whole account is free.
	if err := env.eng.HoldQueryMemory(server); err != nil {
		t.Fatalf("the commands left memory counted: %v", err)
	}
	env.eng.HoldQueryMemory(-server)
}
