package mongo

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// startTxn starts a session with a transaction and returns the context
// its commands run with.
func startTxn(t *testing.T, c *mongo.Client) (*mongo.Session, context.Context) {
	t.Helper()
	sess, err := c.StartSession()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.EndSession(context.Background()) })
	if err := sess.StartTransaction(); err != nil {
		t.Fatal(err)
	}
	return sess, mongo.NewSessionContext(ctxT(t), sess)
}

// hasLabel reports whether err is a server error with the label.
func hasLabel(err error, label string) bool {
	var ce mongo.CommandError
	if errors.As(err, &ce) {
		return ce.HasErrorLabel(label)
	}
	var le mongo.LabeledError
	return errors.As(err, &le) && le.HasErrorLabel(label)
}

// byID reads every document of c by _id (nil: not found), outside any
// transaction.
func byID(t *testing.T, c *mongo.Collection, ids ...string) map[string]bson.M {
	t.Helper()
	out := map[string]bson.M{}
	for _, id := range ids {
		var m bson.M
		err := c.FindOne(ctxT(t), bson.D{{Key: "_id", Value: id}}).Decode(&m)
		if errors.Is(err, mongo.ErrNoDocuments) {
			out[id] = nil
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		out[id] = m
	}
	return out
}

func TestTxnCommitsAtomically(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	db := env.client.Database("bank")
	createSharded(t, db, "acct", "tenant", 40000)
	c := db.Collection("acct")
	if _, err := c.InsertMany(ctx, []any{
		bson.D{{Key: "_id", Value: "a"}, {Key: "tenant", Value: "t1"}, {Key: "bal", Value: int32(100)}},
		bson.D{{Key: "_id", Value: "b"}, {Key: "tenant", Value: "t1"}, {Key: "bal", Value: int32(50)}},
		bson.D{{Key: "_id", Value: "c"}, {Key: "tenant", Value: "t1"}, {Key: "bal", Value: int32(7)}},
		bson.D{{Key: "_id", Value: "x"}, {Key: "tenant", Value: "t2"}, {Key: "bal", Value: int32(1)}},
	}); err != nil {
		t.Fatal(err)
	}
	other := env.connect(t).Database("bank").Collection("acct")
	sess, sctx := startTxn(t, env.client)
	t1 := bson.D{{Key: "tenant", Value: "t1"}}
	if _, err := c.UpdateOne(sctx, bson.D{{Key: "_id", Value: "a"}, {Key: "tenant", Value: "t1"}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "bal", Value: int32(-30)}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.InsertOne(sctx, bson.D{{Key: "_id", Value: "d"}, {Key: "tenant", Value: "t1"}, {Key: "bal", Value: int32(30)}}); err != nil {
		t.Fatal(err)
	}
	if res, err := c.DeleteOne(sctx, bson.D{{Key: "_id", Value: "b"}, {Key: "tenant", Value: "t1"}}); err != nil || res.DeletedCount != 1 {
		t.Fatalf("delete: %v %v", res, err)
	}
	// An update of many: it sees the transaction's own insert.
	res, err := c.UpdateMany(sctx, bson.D{{Key: "tenant", Value: "t1"}, {Key: "bal", Value: bson.D{{Key: "$gte", Value: int32(30)}}}}, bson.D{{Key: "$set", Value: bson.D{{Key: "rich", Value: true}}}})
	if err != nil || res.MatchedCount != 2 || res.ModifiedCount != 2 {
		t.Fatalf("updateMany: %+v %v", res, err)
	}

	// Read your own writes: finds, sorts, counts and aggregates see them.
	cur, err := c.Find(sctx, t1, options.Find().SetSort(bson.D{{Key: "bal", Value: 1}}).SetBatchSize(1))
	if err != nil {
		t.Fatal(err)
	}
	var got []bson.M
	if err := cur.All(sctx, &got); err != nil {
		t.Fatal(err)
	}
	// Sorted by bal: c (7), d (30, inserted), a (70, updated); b deleted.
	if len(got) != 3 || got[0]["_id"] != "c" || got[1]["_id"] != "d" || got[2]["_id"] != "a" ||
		got[2]["bal"] != int32(70) || got[1]["rich"] != true || got[2]["rich"] != true || got[0]["rich"] != nil {
		t.Fatalf("find in the transaction: %v", got)
	}
	if n, err := c.CountDocuments(sctx, t1); err != nil || n != 3 {
		t.Fatalf("count in the transaction: %d %v", n, err)
	}
	agg, err := c.Aggregate(sctx, mongo.Pipeline{{{Key: "$match", Value: t1}},
		{{Key: "$group", Value: bson.D{{Key: "_id", Value: nil}, {Key: "sum", Value: bson.D{{Key: "$sum", Value: "$bal"}}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	var sums []bson.M
	if err := agg.All(sctx, &sums); err != nil || len(sums) != 1 || sums[0]["sum"] != int32(107) {
		t.Fatalf("aggregate in the transaction: %v %v", sums, err)
	}
	var one bson.M
	if err := c.FindOne(sctx, bson.D{{Key: "_id", Value: "d"}, {Key: "tenant", Value: "t1"}}).Decode(&one); err != nil || one["bal"] != int32(30) {
		t.Fatalf("point read of the transaction's insert: %v %v", one, err)
	}
	if err := c.FindOne(sctx, bson.D{{Key: "_id", Value: "b"}, {Key: "tenant", Value: "t1"}}).Err(); !errors.Is(err, mongo.ErrNoDocuments) {
		t.Fatalf("the transaction's delete is visible to it: %v", err)
	}

	// Another client sees none of it before the commit.
	before := byID(t, other, "a", "b", "c", "d")
	if before["a"]["bal"] != int32(100) || before["a"]["rich"] != nil || before["b"] == nil || before["d"] != nil {
		t.Fatalf("before the commit another client sees %v", before)
	}
	if err := sess.CommitTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	after := byID(t, other, "a", "b", "c", "d", "x")
	if after["a"]["bal"] != int32(70) || after["a"]["rich"] != true || after["b"] != nil || after["d"]["bal"] != int32(30) ||
		after["c"]["bal"] != int32(7) || after["c"]["rich"] != nil || after["x"]["bal"] != int32(1) {
		t.Fatalf("after the commit another client sees %v", after)
	}
	// A retried commit of the same transaction is sent and answered again.
	if err := sess.CommitTransaction(ctx); err != nil {
		t.Fatalf("retried commit: %v", err)
	}
}

func TestTxnAbortLeavesNothing(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	c := env.client.Database("d").Collection("plain")
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: "keep"}, {Key: "v", Value: int32(1)}}); err != nil {
		t.Fatal(err)
	}
	sess, sctx := startTxn(t, env.client)
	if _, err := c.InsertOne(sctx, bson.D{{Key: "_id", Value: "new"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UpdateOne(sctx, bson.D{{Key: "_id", Value: "keep"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "v", Value: int32(2)}}}}); err != nil {
		t.Fatal(err)
	}
	var fm bson.M
	if err := c.FindOneAndDelete(sctx, bson.D{{Key: "_id", Value: "new"}}).Decode(&fm); err != nil || fm["_id"] != "new" {
		t.Fatalf("findAndModify remove of the transaction's insert: %v %v", fm, err)
	}
	if err := sess.AbortTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	got := byID(t, c, "keep", "new")
	if got["keep"]["v"] != int32(1) || got["new"] != nil {
		t.Fatalf("after abort: %v", got)
	}
	// The aborted transaction (the session's first: txnNumber 1) cannot
	// be committed.
	err := env.client.Database("admin").RunCommand(ctx, bson.D{{Key: "commitTransaction", Value: 1},
		{Key: "lsid", Value: sess.ID()}, {Key: "txnNumber", Value: int64(1)}, {Key: "autocommit", Value: false}}).Err()
	if cmdCode(err) != 251 || !hasLabel(err, "TransientTransactionError") {
		t.Fatalf("commit after abort: %v", err)
	}
	// endSessions drops the session from the server's table.
	if n := env.srv.txns.len(); n != 1 {
		t.Fatalf("%d sessions in the table, want 1", n)
	}
	if err := env.client.Database("admin").RunCommand(ctx, bson.D{{Key: "endSessions", Value: bson.A{sess.ID()}}}).Err(); err != nil {
		t.Fatal(err)
	}
	if n := env.srv.txns.len(); n != 0 {
		t.Fatalf("%d sessions in the table after endSessions", n)
	}
}

func TestTxnWriteConflict(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	c := env.client.Database("d").Collection("ctr")
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: "n"}, {Key: "v", Value: int32(0)}}); err != nil {
		t.Fatal(err)
	}
	other := env.connect(t).Database("d").Collection("ctr")
	inc := func(ctx context.Context, coll *mongo.Collection, by int32) error {
		_, err := coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: "n"}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "v", Value: by}}}})
		return err
	}

	// By hand: the commit fails with 112 and the transient label, and
	// writes nothing.
	sess, sctx := startTxn(t, env.client)
	if err := inc(sctx, c, 10); err != nil {
		t.Fatal(err)
	}
	if _, err := c.InsertOne(sctx, bson.D{{Key: "_id", Value: "side"}}); err != nil {
		t.Fatal(err)
	}
	if err := inc(ctx, other, 1); err != nil {
		t.Fatal(err)
	}
	err := sess.CommitTransaction(ctx)
	if cmdCode(err) != 112 || !hasLabel(err, "TransientTransactionError") {
		t.Fatalf("commit after a concurrent write: %v", err)
	}
	if got := byID(t, c, "n", "side"); got["n"]["v"] != int32(1) || got["side"] != nil {
		t.Fatalf("after the failed commit: %v", got)
	}

	// WithTransaction retries it: the first attempt conflicts, the second
	// commits.
	sess2, err := env.client.StartSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess2.EndSession(ctx)
	var attempts atomic.Int32
	_, err = sess2.WithTransaction(ctx, func(sctx context.Context) (any, error) {
		n := attempts.Add(1)
		var m bson.M
		if err := c.FindOne(sctx, bson.D{{Key: "_id", Value: "n"}}).Decode(&m); err != nil {
			return nil, err
		}
		if err := inc(sctx, c, 100); err != nil {
			return nil, err
		}
		if n == 1 {
			if err := inc(context.Background(), other, 1); err != nil {
				return nil, err
			}
		}
		return nil, nil
	})
	if err != nil {
		t.Fatalf("WithTransaction: %v", err)
	}
	if attempts.Load() != 2 {
		t.Fatalf("%d attempts, want 2 (one conflict, then success)", attempts.Load())
	}
	if got := byID(t, c, "n"); got["n"]["v"] != int32(102) {
		t.Fatalf("after WithTransaction: %v", got)
	}
}

func TestTxnOneLogicalPartition(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	db := env.client.Database("bank")
	createSharded(t, db, "acct", "tenant", 40000)
	c := db.Collection("acct")
	sess, sctx := startTxn(t, env.client)
	if _, err := c.InsertOne(sctx, bson.D{{Key: "_id", Value: "p"}, {Key: "tenant", Value: "t1"}}); err != nil {
		t.Fatal(err)
	}
	// Reads of other partitions are allowed.
	if n, err := c.CountDocuments(sctx, bson.D{}); err != nil || n != 1 {
		t.Fatalf("count: %d %v", n, err)
	}
	_, err := c.InsertOne(sctx, bson.D{{Key: "_id", Value: "q"}, {Key: "tenant", Value: "t2"}})
	if cmdCode(err) != 263 {
		t.Fatalf("write to a second logical partition: %v", err)
	}
	if !containsAll(err.Error(), "one logical partition", `"t1"`, `"t2"`) {
		t.Fatalf("the error does not name the partitions: %v", err)
	}
	// The transaction is aborted: its commit fails and nothing is written.
	if err := sess.CommitTransaction(ctx); cmdCode(err) != 251 {
		t.Fatalf("commit after the refused write: %v", err)
	}
	if got := byID(t, c, "p", "q"); got["p"] != nil || got["q"] != nil {
		t.Fatalf("after: %v", got)
	}

	// A second collection is refused the same way.
	sess2, sctx2 := startTxn(t, env.client)
	if _, err := c.InsertOne(sctx2, bson.D{{Key: "_id", Value: "p"}, {Key: "tenant", Value: "t1"}}); err != nil {
		t.Fatal(err)
	}
	_, err = db.Collection("other").InsertOne(sctx2, bson.D{{Key: "_id", Value: "p"}})
	if cmdCode(err) != 263 {
		t.Fatalf("write to a second collection: %v", err)
	}
	_ = sess2.AbortTransaction(ctx)
}

func containsAll(s string, subs ...string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}

func TestTxnUnshardedWithUniqueIndex(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	c := env.client.Database("d").Collection("users")
	if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "email", Value: 1}}, Options: options.Index().SetUnique(true)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: int32(1)}, {Key: "email", Value: "a@x"}}); err != nil {
		t.Fatal(err)
	}
	sess, sctx := startTxn(t, env.client)
	// Move a@x from document 1 to a new document 2 within the transaction.
	if _, err := c.UpdateOne(sctx, bson.D{{Key: "_id", Value: int32(1)}}, bson.D{{Key: "$set", Value: bson.D{{Key: "email", Value: "b@x"}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.InsertOne(sctx, bson.D{{Key: "_id", Value: int32(2)}, {Key: "email", Value: "a@x"}}); err != nil {
		t.Fatal(err)
	}
	// A duplicate _id within the transaction is refused at once.
	if _, err := c.InsertOne(sctx, bson.D{{Key: "_id", Value: int32(2)}}); cmdCode(err) != 11000 {
		t.Fatalf("duplicate _id in the transaction: %v", err)
	}
	// ... and aborts the transaction.
	if err := sess.CommitTransaction(ctx); cmdCode(err) != 251 {
		t.Fatalf("commit after a failed statement: %v", err)
	}

	sess2, sctx2 := startTxn(t, env.client)
	if _, err := c.UpdateOne(sctx2, bson.D{{Key: "_id", Value: int32(1)}}, bson.D{{Key: "$set", Value: bson.D{{Key: "email", Value: "b@x"}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.InsertOne(sctx2, bson.D{{Key: "_id", Value: int32(2)}, {Key: "email", Value: "a@x"}}); err != nil {
		t.Fatal(err)
	}
	if err := sess2.CommitTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	var all []bson.M
	cur, err := c.Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		t.Fatal(err)
	}
	if err := cur.All(ctx, &all); err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || all[0]["email"] != "b@x" || all[1]["email"] != "a@x" {
		t.Fatalf("after the commit: %v", all)
	}
	// The unique index holds the committed keys.
	for _, email := range []string{"a@x", "b@x"} {
		if _, err := c.InsertOne(ctx, bson.D{{Key: "email", Value: email}}); cmdCode(err) != 11000 {
			t.Fatalf("insert of %s after the commit: %v", email, err)
		}
	}
	if _, err := c.InsertOne(ctx, bson.D{{Key: "email", Value: "c@x"}}); err != nil {
		t.Fatal(err)
	}

	// In a transaction, a key a committed document holds is refused at
	// once; once the transaction moved that document to another key, the
	// key is free for another of its documents.
	sess3, sctx3 := startTxn(t, env.client)
	if _, err := c.InsertOne(sctx3, bson.D{{Key: "_id", Value: int32(3)}, {Key: "email", Value: "a@x"}}); cmdCode(err) != 11000 {
		t.Fatalf("insert of a committed key in a transaction: %v", err)
	}
	_ = sess3.AbortTransaction(ctx)
	sess4, sctx4 := startTxn(t, env.client)
	if _, err := c.UpdateOne(sctx4, bson.D{{Key: "_id", Value: int32(2)}}, bson.D{{Key: "$set", Value: bson.D{{Key: "email", Value: "z@x"}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.InsertOne(sctx4, bson.D{{Key: "_id", Value: int32(3)}, {Key: "email", Value: "a@x"}}); err != nil {
		t.Fatalf("insert of a key the transaction freed: %v", err)
	}
	if _, err := c.InsertOne(sctx4, bson.D{{Key: "_id", Value: int32(4)}, {Key: "email", Value: "z@x"}}); cmdCode(err) != 11000 {
		t.Fatalf("insert of a key the transaction took: %v", err)
	}
	_ = sess4.AbortTransaction(ctx)
}

func TestTxnExpires(t *testing.T) {
	var offset atomic.Int64
	env := newEnv(t, envOptions{cfg: func(c *Config) {
		c.Now = func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	}})
	ctx := ctxT(t)
	c := env.client.Database("d").Collection("e")
	sess, sctx := startTxn(t, env.client)
	if _, err := c.InsertOne(sctx, bson.D{{Key: "_id", Value: "a"}}); err != nil {
		t.Fatal(err)
	}
	offset.Store(int64(DefaultTransactionLifetime + time.Second))
	_, err := c.InsertOne(sctx, bson.D{{Key: "_id", Value: "b"}})
	if cmdCode(err) != 251 || !hasLabel(err, "TransientTransactionError") {
		t.Fatalf("a statement of an expired transaction: %v", err)
	}
	if err := sess.CommitTransaction(ctx); cmdCode(err) != 251 {
		t.Fatalf("commit of an expired transaction: %v", err)
	}
	if got := byID(t, c, "a", "b"); got["a"] != nil || got["b"] != nil {
		t.Fatalf("after: %v", got)
	}
	// Expiry frees the session table.
	offset.Store(int64(3 * DefaultTransactionLifetime))
	env.srv.txns.expire()
	if n := env.srv.txns.len(); n != 0 {
		t.Fatalf("%d sessions left after expiry", n)
	}
}

func TestTxnCommandNotAllowed(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	db := env.client.Database("d")
	sess, sctx := startTxn(t, env.client)
	if _, err := db.Collection("n").InsertOne(sctx, bson.D{{Key: "_id", Value: "a"}}); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []bson.D{
		{{Key: "create", Value: "other"}},
		{{Key: "listCollections", Value: 1}},
		{{Key: "createIndexes", Value: "n"}, {Key: "indexes", Value: bson.A{bson.D{{Key: "key", Value: bson.D{{Key: "v", Value: 1}}}, {Key: "name", Value: "v_1"}}}}},
	} {
		if err := db.RunCommand(sctx, cmd).Err(); cmdCode(err) != 263 {
			t.Fatalf("%v in a transaction: %v", cmd[0].Key, err)
		}
	}
	if err := sess.CommitTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	if got := byID(t, db.Collection("n"), "a"); got["a"] == nil {
		t.Fatalf("after the commit: %v", got)
	}
}

func TestTxnRetryableWriteRefused(t *testing.T) {
	env := newEnv(t, envOptions{})
	err := env.client.Database("d").RunCommand(ctxT(t), bson.D{{Key: "insert", Value: "c"},
		{Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 1}}}}, {Key: "txnNumber", Value: int64(1)}}).Err()
	if cmdCode(err) != 20 {
		t.Fatalf("a retryable write's txnNumber: %v", err)
	}
}

func TestTxnTwoTransactionsOneWins(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	c := env.client.Database("d").Collection("c")
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: "n"}, {Key: "v", Value: int32(0)}}); err != nil {
		t.Fatal(err)
	}
	s1, ctx1 := startTxn(t, env.client)
	s2, ctx2 := startTxn(t, env.client)
	for _, sctx := range []context.Context{ctx1, ctx2} {
		if _, err := c.UpdateOne(sctx, bson.D{{Key: "_id", Value: "n"}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "v", Value: int32(1)}}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.InsertOne(sctx, bson.D{{Key: "_id", Value: "k"}}); err != nil {
			t.Fatal(err)
		}
	}
	// Each sees only its own writes.
	var m bson.M
	if err := c.FindOne(ctx2, bson.D{{Key: "_id", Value: "n"}}).Decode(&m); err != nil || m["v"] != int32(1) {
		t.Fatalf("the second transaction reads %v %v", m, err)
	}
	if err := s1.CommitTransaction(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s2.CommitTransaction(ctx); cmdCode(err) != 112 || !hasLabel(err, "TransientTransactionError") {
		t.Fatalf("the second commit: %v", err)
	}
	if got := byID(t, c, "n", "k"); got["n"]["v"] != int32(1) || got["k"] == nil {
		t.Fatalf("after: %v", got)
	}
}

func TestTxnTooLarge(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	c := env.client.Database("d").Collection("big")
	sess, sctx := startTxn(t, env.client)
	var err error
	n := 0
	for ; n < maxTxnOps+1; n++ {
		if _, err = c.InsertOne(sctx, bson.D{{Key: "_id", Value: int32(n)}}); err != nil {
			break
		}
	}
	if n != maxTxnOps || cmdCode(err) != 257 {
		t.Fatalf("insert %d of a transaction: %v", n, err)
	}
	if err := sess.CommitTransaction(ctx); cmdCode(err) != 251 {
		t.Fatalf("commit of a transaction over the limit: %v", err)
	}
	if k, err := c.CountDocuments(ctx, bson.D{}); err != nil || k != 0 {
		t.Fatalf("%d documents after, %v", k, err)
	}
}

// A document the transaction read and another client changed before the
// transaction wrote it is a write conflict at that write: no lost update
// from a read-modify-write, and withTransaction runs it again.
func TestTxnNoLostUpdate(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	c := env.client.Database("d").Collection("acct")
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: "n"}, {Key: "v", Value: int32(10)}}); err != nil {
		t.Fatal(err)
	}
	other := env.connect(t).Database("d").Collection("acct")
	bump := func() error {
		_, err := other.UpdateOne(context.Background(), bson.D{{Key: "_id", Value: "n"}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "v", Value: int32(1)}}}})
		return err
	}
	read := func(sctx context.Context) (int32, error) {
		var m bson.M
		if err := c.FindOne(sctx, bson.D{{Key: "_id", Value: "n"}}).Decode(&m); err != nil {
			return 0, err
		}
		v, _ := m["v"].(int32)
		return v, nil
	}
	set := func(sctx context.Context, v int32) error {
		_, err := c.UpdateOne(sctx, bson.D{{Key: "_id", Value: "n"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "v", Value: v}}}})
		return err
	}

	// By hand: the write fails at once with 112 and the label.
	_, sctx := startTxn(t, env.client)
	v, err := read(sctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := bump(); err != nil {
		t.Fatal(err)
	}
	if err := set(sctx, v+100); cmdCode(err) != 112 || !hasLabel(err, "TransientTransactionError") {
		t.Fatalf("write of a document changed since the transaction read it: %v", err)
	}
	if got := byID(t, c, "n"); got["n"]["v"] != int32(11) {
		t.Fatalf("after: %v", got)
	}
	// Also when the write would change nothing against the new version:
	// it was computed from the old one.
	_, sctx = startTxn(t, env.client)
	if v, err = read(sctx); err != nil || v != 11 {
		t.Fatalf("read %d %v", v, err)
	}
	if err := bump(); err != nil {
		t.Fatal(err)
	}
	if err := set(sctx, v+1); cmdCode(err) != 112 || !hasLabel(err, "TransientTransactionError") {
		t.Fatalf("a write equal to the concurrent one: %v", err)
	}
	if got := byID(t, c, "n"); got["n"]["v"] != int32(12) {
		t.Fatalf("after: %v", got)
	}
	if _, err := other.UpdateOne(ctx, bson.D{{Key: "_id", Value: "n"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "v", Value: int32(11)}}}}); err != nil {
		t.Fatal(err)
	}

	sess, err := env.client.StartSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.EndSession(ctx)
	var attempts atomic.Int32
	if _, err := sess.WithTransaction(ctx, func(sctx context.Context) (any, error) {
		v, err := read(sctx)
		if err != nil {
			return nil, err
		}
		if attempts.Add(1) == 1 {
			if err := bump(); err != nil {
				return nil, err
			}
		}
		return nil, set(sctx, v+100)
	}); err != nil {
		t.Fatalf("WithTransaction: %v", err)
	}
	if attempts.Load() != 2 {
		t.Fatalf("%d attempts, want 2", attempts.Load())
	}
	if got := byID(t, c, "n"); got["n"]["v"] != int32(112) {
		t.Fatalf("after WithTransaction: %v, want v 112 (11, bumped to 12, plus 100)", got)
	}
}

// Concurrent transfers between accounts of one logical partition, each a
// read-modify-write transaction run by withTransaction, keep the total:
// no transfer is lost or half applied, and a reader outside the
// transactions (one page of the partition, read from one snapshot) never
// sees a total that is off.
func TestTxnConcurrentTransfersKeepTotal(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	db := env.client.Database("bank")
	createSharded(t, db, "acct", "tenant", 10000)
	c := db.Collection("acct")
	const accounts, workers, transfers = 5, 4, 10
	var seed []any
	for i := range accounts {
		seed = append(seed, bson.D{{Key: "_id", Value: int32(i)}, {Key: "tenant", Value: "t"}, {Key: "bal", Value: int32(100)}})
	}
	if _, err := c.InsertMany(ctx, seed); err != nil {
		t.Fatal(err)
	}
	total := func(ctx context.Context, coll *mongo.Collection) (int32, error) {
		cur, err := coll.Find(ctx, bson.D{{Key: "tenant", Value: "t"}})
		if err != nil {
			return 0, err
		}
		var docs []bson.M
		if err := cur.All(ctx, &docs); err != nil {
			return 0, err
		}
		var sum int32
		for _, d := range docs {
			sum += d["bal"].(int32)
		}
		return sum, nil
	}
	errs := make(chan error, workers+1)
	stop := make(chan struct{})
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		rc := env.connect(t).Database("bank").Collection("acct")
		for {
			select {
			case <-stop:
				return
			default:
			}
			sum, err := total(ctx, rc)
			if err != nil {
				errs <- err
				return
			}
			if sum != accounts*100 {
				errs <- errorf("a reader saw a total of %d", sum)
				return
			}
		}
	}()
	done := make(chan struct{})
	for w := range workers {
		go func() {
			defer func() { done <- struct{}{} }()
			cl := env.connect(t)
			coll := cl.Database("bank").Collection("acct")
			sess, err := cl.StartSession()
			if err != nil {
				errs <- err
				return
			}
			defer sess.EndSession(ctx)
			for i := range transfers {
				from, to := int32((w+i)%accounts), int32((w+i+1)%accounts)
				_, err := sess.WithTransaction(ctx, func(sctx context.Context) (any, error) {
					var a, b bson.M
					if err := coll.FindOne(sctx, bson.D{{Key: "_id", Value: from}, {Key: "tenant", Value: "t"}}).Decode(&a); err != nil {
						return nil, err
					}
					if err := coll.FindOne(sctx, bson.D{{Key: "_id", Value: to}, {Key: "tenant", Value: "t"}}).Decode(&b); err != nil {
						return nil, err
					}
					if _, err := coll.UpdateOne(sctx, bson.D{{Key: "_id", Value: from}, {Key: "tenant", Value: "t"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "bal", Value: a["bal"].(int32) - 7}}}}); err != nil {
						return nil, err
					}
					_, err := coll.UpdateOne(sctx, bson.D{{Key: "_id", Value: to}, {Key: "tenant", Value: "t"}}, bson.D{{Key: "$set", Value: bson.D{{Key: "bal", Value: b["bal"].(int32) + 7}}}})
					return nil, err
				})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for range workers {
		<-done
	}
	close(stop)
	<-readerDone
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	sum, err := total(ctx, c)
	if err != nil || sum != accounts*100 {
		t.Fatalf("total after: %d %v", sum, err)
	}
	// Every transfer moved 7 from one account to the next: each account
	// was debited and credited the same number of times.
	for i := range accounts {
		if got := byID2(t, c, int32(i)); got != 100 {
			t.Fatalf("account %d holds %d, want 100", i, got)
		}
	}
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

func byID2(t *testing.T, c *mongo.Collection, id int32) int32 {
	t.Helper()
	var m bson.M
	if err := c.FindOne(ctxT(t), bson.D{{Key: "_id", Value: id}, {Key: "tenant", Value: "t"}}).Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m["bal"].(int32)
}
