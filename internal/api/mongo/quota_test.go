package mongo

import (
	"context"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// quotaEnv is a server with both keys that does not require
// authentication, and a client for each of its users: the primary user,
// the read-only user, and an unauthenticated connection.
func quotaEnv(t *testing.T, cfg func(*Config)) (env *testEnv, primary, readOnly, anon *mongo.Client) {
	t.Helper()
	env = newEnv(t, envOptions{cfg: func(c *Config) {
		c.PrimaryKey, c.ReadOnlyKey = testPrimaryKey, testReadOnlyKey
		cfg(c)
	}})
	primary = env.connectAs(t, DefaultAccountName, testPrimaryKey, "")
	readOnly = env.connectAs(t, DefaultAccountName+"-readonly", testReadOnlyKey, "")
	return env, primary, readOnly, env.client
}

// TestCursorCountQuota: with MaxCursors 8, the read-only user and
// unauthenticated connections may each keep 2 cursors open, and the
// primary user can still open the rest; a user can neither read nor kill
// another's cursor.
func TestCursorCountQuota(t *testing.T) {
	env, primary, readOnly, anon := quotaEnv(t, func(c *Config) { c.MaxCursors = 8 })
	ctx := ctxT(t)
	insertN(t, primary.Database("d").Collection("c"), 20)
	open := func(cl *mongo.Client) (int64, error) {
		cur, err := cl.Database("d").Collection("c").Find(ctx, bson.D{}, options.Find().SetBatchSize(2))
		if err != nil {
			return 0, err
		}
		return cur.ID(), nil
	}
	for _, u := range []struct {
		name   string
		client *mongo.Client
		n      int
	}{{"read-only", readOnly, 2}, {"unauthenticated", anon, 2}, {"primary", primary, 4}} {
		for i := range u.n {
			if _, err := open(u.client); err != nil {
				t.Fatalf("%s user's cursor %d: %v", u.name, i+1, err)
			}
		}
		if _, err := open(u.client); cmdCode(err) != 2 || !strings.Contains(err.Error(), "too many open cursors") {
			t.Fatalf("%s user's cursor %d, past its share: %v", u.name, u.n+1, err)
		}
	}

	// Another user's cursor can be neither read nor killed.
	env.srv.cursors.expire() // nothing is idle: all stay
	id := func() int64 {
		env.srv.cursors.mu.Lock()
		defer env.srv.cursors.mu.Unlock()
		for id, c := range env.srv.cursors.m {
			if c.owner == principalPrimary {
				return id
			}
		}
		t.Fatal("no cursor of the primary user")
		return 0
	}()
	err := readOnly.Database("d").RunCommand(context.Background(), bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "c"}}).Err()
	if cmdCode(err) != 13 {
		t.Fatalf("getMore of the primary user's cursor by the read-only user: %v", err)
	}
	var kill struct {
		CursorsKilled []int64 `bson:"cursorsKilled"`
	}
	if err := readOnly.Database("d").RunCommand(ctx, bson.D{{Key: "killCursors", Value: "c"}, {Key: "cursors", Value: bson.A{id}}}).Decode(&kill); err != nil {
		t.Fatal(err)
	}
	if len(kill.CursorsKilled) != 0 || !cursorOpen(env, id) {
		t.Fatalf("the read-only user killed the primary user's cursor: %v", kill.CursorsKilled)
	}
	if err := primary.Database("d").RunCommand(context.Background(), bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "c"}}).Err(); err != nil {
		t.Fatalf("getMore by the cursor's owner: %v", err)
	}
}

// TestCursorMemoryQuota: the results that open cursors keep between
// getMores count against MaxCursorBytes, of which the read-only user may
// use a quarter; past it a cursor is refused with ExceededMemoryLimit
// (146), and a cursor killed gives its bytes back.
func TestCursorMemoryQuota(t *testing.T) {
	const limit = 300 << 10
	env, primary, readOnly, _ := quotaEnv(t, func(c *Config) { c.MaxCursorBytes = limit })
	ctx := ctxT(t)
	// 100 documents of about 2 KB: 200 KB in all, over the read-only
	// user's 75 KB, within the server's 300 KB, but not twice.
	docs := make([]any, 100)
	pad := strings.Repeat("x", 2<<10)
	for i := range docs {
		docs[i] = bson.D{{Key: "_id", Value: int32(i)}, {Key: "pad", Value: pad}}
	}
	if _, err := primary.Database("d").Collection("c").InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	sorted := func(cl *mongo.Client) (*mongo.Cursor, error) {
		return cl.Database("d").Collection("c").Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: -1}}).SetBatchSize(1))
	}
	if _, err := sorted(readOnly); cmdCode(err) != 146 {
		t.Fatalf("the read-only user's sorted cursor over its share: %v", err)
	}
	first, err := sorted(primary)
	if err != nil {
		t.Fatalf("the primary user's sorted cursor: %v", err)
	}
	if _, err := sorted(primary); cmdCode(err) != 146 {
		t.Fatalf("a second sorted cursor, over the server's limit: %v", err)
	}
	// A cursor that streams keeps the rest of the page it read: charged
	// at the getMore that reads it, and refused then.
	stream, err := primary.Database("d").Collection("c").Find(ctx, bson.D{}, options.Find().SetBatchSize(0))
	if err != nil {
		t.Fatalf("a streaming cursor that has read nothing yet: %v", err)
	}
	err = primary.Database("d").RunCommand(context.Background(), bson.D{{Key: "getMore", Value: stream.ID()}, {Key: "collection", Value: "c"}, {Key: "batchSize", Value: int32(1)}}).Err()
	if cmdCode(err) != 146 {
		t.Fatalf("a getMore that leaves a page in memory, over the server's limit: %v", err)
	}
	if cursorOpen(env, stream.ID()) {
		t.Fatal("the cursor refused at getMore stayed open")
	}
	if err := first.Close(ctx); err != nil {
		t.Fatal(err)
	}
	again, err := sorted(primary)
	if err != nil {
		t.Fatalf("a sorted cursor once the first is closed: %v", err)
	}
	// Reading a cursor gives back what it no longer keeps.
	for again.Next(ctx) {
	}
	if err := again.Err(); err != nil {
		t.Fatal(err)
	}
	env.srv.cursors.mu.Lock()
	used := env.srv.cursors.bytes.total()
	env.srv.cursors.mu.Unlock()
	if used != 0 {
		t.Fatalf("%d bytes still charged once every cursor is read or closed", used)
	}
}

// TestSessionQuota: with MaxSessions 8, the read-only user may hold 2
// sessions with a transaction, and the primary user can still start the
// rest; the same session id names a session of each user.
func TestSessionQuota(t *testing.T) {
	_, primary, readOnly, _ := quotaEnv(t, func(c *Config) { c.MaxSessions = 8 })
	insertN(t, primary.Database("d").Collection("c"), 3)
	begin := func(cl *mongo.Client) error {
		_, sctx := startTxn(t, cl)
		return cl.Database("d").Collection("c").FindOne(sctx, bson.D{{Key: "_id", Value: int32(1)}}).Err()
	}
	for i := range 2 {
		if err := begin(readOnly); err != nil {
			t.Fatalf("the read-only user's transaction %d: %v", i+1, err)
		}
	}
	if err := begin(readOnly); cmdCode(err) != 261 {
		t.Fatalf("the read-only user's third transaction, past its share: %v", err)
	}
	for i := range 6 {
		if err := begin(primary); err != nil {
			t.Fatalf("the primary user's transaction %d: %v", i+1, err)
		}
	}
	if err := begin(primary); cmdCode(err) != 261 {
		t.Fatalf("a transaction past the server's limit: %v", err)
	}
}

// TestCursorResultCap: an aggregate whose result would keep more than
// 100 MB in its cursor (mongod's blocking-stage limit) is refused with
// QueryExceededMemoryLimitNoDiskUseAllowed (292), however small its input.
func TestCursorResultCap(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	c := env.client.Database("d").Collection("c")
	// One document of about 1 MB that $unwind turns into 120.
	arr := make(bson.A, 120)
	for i := range arr {
		arr[i] = int32(i)
	}
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "pad", Value: strings.Repeat("x", 1<<20)}, {Key: "a", Value: arr}}); err != nil {
		t.Fatal(err)
	}
	_, err := c.Aggregate(ctx, mongo.Pipeline{{{Key: "$unwind", Value: "$a"}}}, options.Aggregate().SetBatchSize(1))
	if cmdCode(err) != 292 {
		t.Fatalf("an aggregate keeping about 120 MB: %v", err)
	}
	// Within the limit, the same works.
	cur, err := c.Aggregate(ctx, mongo.Pipeline{{{Key: "$unwind", Value: "$a"}}, {{Key: "$limit", Value: 50}}}, options.Aggregate().SetBatchSize(1))
	if err != nil {
		t.Fatal(err)
	}
	if err := cur.Close(ctx); err != nil {
		t.Fatal(err)
	}
}
