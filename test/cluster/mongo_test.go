package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readconcern"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/topology"
)

// startMongoCluster starts three nodes that also serve MongoDB.
func startMongoCluster(t *testing.T) []*node {
	t.Helper()
	ns := newNodes(t, 3)
	for _, n := range ns {
		n.mongo = freeAddr(t)
	}
	if err := ns[0].start(t); err != nil {
		t.Fatalf("node 1: %v", err)
	}
	for _, n := range ns[1:] {
		if err := n.start(t, "--join", ns[0].clust); err != nil {
			t.Fatalf("node %d: %v", n.id, err)
		}
	}
	return ns
}

func mongoClient(t *testing.T, n *node) *mongo.Client {
	t.Helper()
	c, err := mongo.Connect(options.Client().ApplyURI("mongodb://" + n.mongo + "/?directConnection=true&retryWrites=false").
		SetServerSelectionTimeout(3 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Disconnect(context.Background()) })
	return c
}

// TestClusterMongo runs MongoDB Go-driver clients on all three nodes of a
// cluster: a sharded collection created through one node is used through
// the others; a causally consistent session on each node reads its own
// writes at once, whichever node leads the partition; a majority read
// through one node sees a write acknowledged through another; and writers
// (inserts, updates, transactions) through all three nodes, while the node
// leading the most partitions is SIGKILLed and restarted, get no error
// through a node that stayed up, and every acknowledged write is read back
// through every node.
func TestClusterMongo(t *testing.T) {
	ns := startMongoCluster(t)
	clients := make([]*mongo.Client, 3)
	for i, n := range ns {
		clients[i] = mongoClient(t, n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	db0 := clients[0].Database("shop")
	if err := db0.RunCommand(ctx, bson.D{{Key: "customAction", Value: "CreateCollection"}, {Key: "collection", Value: "orders"},
		{Key: "shardKey", Value: "k"}, {Key: "offerThroughput", Value: 4000}}).Err(); err != nil {
		t.Fatal(err)
	}
	coll := func(i int, rc *readconcern.ReadConcern) *mongo.Collection {
		return clients[i].Database("shop").Collection("orders", options.Collection().SetReadConcern(rc))
	}

	// Read your own writes on every node, and majority reads across nodes.
	for i := range clients {
		sess, err := clients[i].StartSession(options.Session().SetCausalConsistency(true))
		if err != nil {
			t.Fatal(err)
		}
		sctx := mongo.NewSessionContext(ctx, sess)
		for j := range 10 {
			k := fmt.Sprintf("s%d-%d", i, j)
			if _, err := coll(i, nil).InsertOne(sctx, bson.D{{Key: "_id", Value: k}, {Key: "k", Value: k}, {Key: "v", Value: 1}}); err != nil {
				t.Fatalf("node %d: insert %s: %v", i+1, k, err)
			}
			if _, err := coll(i, nil).UpdateOne(sctx, bson.D{{Key: "_id", Value: k}, {Key: "k", Value: k}}, bson.D{{Key: "$set", Value: bson.D{{Key: "v", Value: 2}}}}); err != nil {
				t.Fatalf("node %d: update %s: %v", i+1, k, err)
			}
			var got struct{ V int }
			if err := coll(i, nil).FindOne(sctx, bson.D{{Key: "_id", Value: k}, {Key: "k", Value: k}}).Decode(&got); err != nil || got.V != 2 {
				t.Fatalf("node %d: a causal session read %s: %v, v=%d; want its own update", i+1, k, err, got.V)
			}
			other := (i + 1) % 3
			if err := coll(other, readconcern.Majority()).FindOne(ctx, bson.D{{Key: "_id", Value: k}, {Key: "k", Value: k}}).Decode(&got); err != nil || got.V != 2 {
				t.Fatalf("node %d: a majority read of %s written through node %d: %v, v=%d", other+1, k, i+1, err, got.V)
			}
		}
		sess.EndSession(ctx)
	}

	// Writers through every node across leader kills.
	const writers = 6
	type keyState struct {
		acked   int
		unknown map[int]bool
	}
	state := make([]map[string]*keyState, writers)
	var stop atomic.Bool
	var wg sync.WaitGroup
	var acks, downs atomic.Int64
	var errMu sync.Mutex
	var errs []string
	for w := range writers {
		state[w] = map[string]*keyState{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := clients[w%3]
			c := cl.Database("shop").Collection("orders")
			for v := 1; !stop.Load(); v++ {
				k := fmt.Sprintf("w%d-%d", w, v%10)
				ks := state[w][k]
				if ks == nil {
					ks = &keyState{unknown: map[int]bool{}}
					state[w][k] = ks
				}
				wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
				var err error
				switch {
				case ks.acked == 0:
					_, err = c.InsertOne(wctx, bson.D{{Key: "_id", Value: k}, {Key: "k", Value: k}, {Key: "v", Value: v}})
				case v%3 == 0:
					// A transaction: the item and its companion, one shard key.
					var sess *mongo.Session
					if sess, err = cl.StartSession(); err == nil {
						_, err = sess.WithTransaction(wctx, func(sc context.Context) (any, error) {
							if _, err := c.UpdateOne(sc, bson.D{{Key: "_id", Value: k}, {Key: "k", Value: k}}, bson.D{{Key: "$set", Value: bson.D{{Key: "v", Value: v}}}}); err != nil {
								return nil, err
							}
							_, err := c.UpdateOne(sc, bson.D{{Key: "_id", Value: k + "-b"}, {Key: "k", Value: k}}, bson.D{{Key: "$set", Value: bson.D{{Key: "v", Value: v}}}}, options.UpdateOne().SetUpsert(true))
							return nil, err
						})
						sess.EndSession(wctx)
					}
				default:
					_, err = c.UpdateOne(wctx, bson.D{{Key: "_id", Value: k}, {Key: "k", Value: k}}, bson.D{{Key: "$set", Value: bson.D{{Key: "v", Value: v}}}})
				}
				wcancel()
				if err == nil {
					ks.acked, ks.unknown = v, map[int]bool{}
					acks.Add(1)
					continue
				}
				ks.unknown[v] = true
				if mongo.IsNetworkError(err) || errors.Is(err, mongo.ErrClientDisconnected) || isSelectionError(err) {
					downs.Add(1) // its node is down
				} else {
					errMu.Lock()
					errs = append(errs, fmt.Sprintf("writer %d through node %d: %v", w, w%3+1, err))
					errMu.Unlock()
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}
	for k := range 2 {
		time.Sleep(4 * time.Second)
		victim := mostLeader(t, ns)
		victim.kill()
		t.Logf("kill %d: node %d (SIGKILL), %d writes acknowledged so far", k+1, victim.id, acks.Load())
		time.Sleep(time.Second)
		if err := victim.start(t, "--join", ns[victim.id%3].clust); err != nil {
			t.Fatalf("restarting node %d: %v", victim.id, err)
		}
	}
	time.Sleep(3 * time.Second)
	stop.Store(true)
	wg.Wait()
	t.Logf("%d writes acknowledged; %d failed on a node that was down", acks.Load(), downs.Load())
	if acks.Load() == 0 {
		t.Fatal("no write was acknowledged")
	}
	for _, e := range errs {
		t.Errorf("a write through a node that stayed up failed: %s", e)
	}
	// The restarted nodes' clients reconnect; every acknowledged write,
	// through every node, with a majority read.
	for i, n := range ns {
		c := mongoClient(t, n).Database("shop").Collection("orders", options.Collection().SetReadConcern(readconcern.Majority()))
		for w := range writers {
			for k, ks := range state[w] {
				var got struct{ V int }
				err := c.FindOne(ctx, bson.D{{Key: "_id", Value: k}, {Key: "k", Value: k}}).Decode(&got)
				if errors.Is(err, mongo.ErrNoDocuments) && ks.acked == 0 {
					continue
				}
				if err != nil {
					t.Fatalf("node %d: read %s: %v", i+1, k, err)
				}
				if got.V != ks.acked && !(got.V > ks.acked && ks.unknown[got.V]) {
					t.Fatalf("node %d: %s holds v=%d; acknowledged %d, unknown %v", i+1, k, got.V, ks.acked, ks.unknown)
				}
			}
		}
	}
}

// isSelectionError reports a driver's failure to select its server: the
// node it is connected to directly is down.
func isSelectionError(err error) bool {
	var se topology.ServerSelectionError
	return errors.As(err, &se)
}
