package mongo

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readconcern"

	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/gateway"
	"github.com/parsecdb/parsec/internal/replication"
	"github.com/parsecdb/parsec/internal/replication/transport"
)

// oneNode is a cluster of this node alone, which leads everything and
// counts the read indexes it is asked for: a Strong read asks one per
// partition, a Session or local read none.
type oneNode struct{ reads atomic.Int64 }

func (o *oneNode) ID() uint64                                             { return 1 }
func (o *oneNode) LeaderHint(uint64) uint64                               { return 1 }
func (o *oneNode) Leader(context.Context, uint64, uint64) (uint64, error) { return 1, nil }
func (o *oneNode) Hosted(*engine.Partition) error                         { return nil }
func (o *oneNode) ReadIndex(context.Context, uint64) (uint64, error) {
	o.reads.Add(1)
	return 0, nil
}
func (o *oneNode) Lag(uint64) (replication.LagInfo, error) { return replication.LagInfo{}, nil }
func (o *oneNode) SyncCatalog(context.Context) error       { return nil }
func (o *oneNode) Send(context.Context, uint64, string, []byte) ([]byte, error) {
	return nil, fmt.Errorf("no other node: %w", transport.ErrNotDelivered)
}
func (o *oneNode) Handle(string, func([]byte) ([]byte, error)) {}

// TestReadConcernInCluster checks how a read's readConcern maps onto the
// consistency levels in a cluster: majority and linearizable are Strong (a
// read index), local and none the account's level (Session here: none);
// a causally consistent session's read (afterClusterTime) waits for the
// session's own writes through this node (no read index), and one of a
// session that wrote nothing here is read as Strong. Every reply of a
// session carries an operationTime, which the driver sends back.
func TestReadConcernInCluster(t *testing.T) {
	node := &oneNode{}
	env := newEnv(t, envOptions{cfg: func(c *Config) { c.Gateway = gateway.New(c.Engine, node) }})
	ctx := ctxT(t)
	coll := env.client.Database("db").Collection("c")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	reads := func(rc *readconcern.ReadConcern, sess context.Context) int64 {
		t.Helper()
		before := node.reads.Load()
		c := env.client.Database("db").Collection("c", options.Collection().SetReadConcern(rc))
		if sess == nil {
			sess = ctx
		}
		if err := c.FindOne(sess, bson.D{}).Err(); err != nil {
			t.Fatal(err)
		}
		return node.reads.Load() - before
	}
	if n := reads(readconcern.Majority(), nil); n == 0 {
		t.Error("a majority read asked no read index")
	}
	if n := reads(readconcern.Linearizable(), nil); n == 0 {
		t.Error("a linearizable read asked no read index")
	}
	if n := reads(readconcern.Local(), nil); n != 0 {
		t.Errorf("a local read under a Session account asked %d read indexes", n)
	}
	if n := reads(nil, nil); n != 0 {
		t.Errorf("a read without readConcern asked %d read indexes", n)
	}

	// A causal session that writes, then reads: its token.
	sess, err := env.client.StartSession(options.Session().SetCausalConsistency(true))
	if err != nil {
		t.Fatal(err)
	}
	defer sess.EndSession(ctx)
	sctx := mongo.NewSessionContext(ctx, sess)
	if _, err := coll.InsertOne(sctx, bson.D{{Key: "_id", Value: 2}}); err != nil {
		t.Fatal(err)
	}
	if sess.OperationTime() == nil {
		t.Fatal("the insert's reply carried no operationTime")
	}
	if n := reads(nil, sctx); n != 0 {
		t.Errorf("a causal read after the session's write asked %d read indexes; want its token", n)
	}
	// A causal session that wrote nothing here: Strong.
	other, err := env.client.StartSession(options.Session().SetCausalConsistency(true))
	if err != nil {
		t.Fatal(err)
	}
	defer other.EndSession(ctx)
	octx := mongo.NewSessionContext(ctx, other)
	reads(nil, octx) // its first read: no operationTime yet
	if n := reads(nil, octx); n == 0 {
		t.Error("a causal read of a session unknown here asked no read index")
	}
	// A bad level is refused.
	err = env.client.Database("db").RunCommand(ctx, bson.D{{Key: "find", Value: "c"}, {Key: "readConcern", Value: bson.D{{Key: "level", Value: "someday"}}}}).Err()
	if cmdCode(err) != 9 {
		t.Errorf("readConcern level someday: %v; want FailedToParse", err)
	}
}
