// Package mongobench measures YCSB-style point reads and updates through the
// MongoDB API with the official Go driver, next to the same operations on
// the same documents through the NoSQL API with the official Go SDK
// (azcosmos), against one real server.
//
//	go test -run '^$' -bench . -benchtime 10s ./test/mongobench
//
// The server runs in this process on loopback, in memory and without
// throttling, so what differs between the two is the protocol and its
// layer: the wire protocol and BSON against HTTP, JSON and the signature.
package mongobench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/parsecdb/parsec/internal/auth"
	"github.com/parsecdb/parsec/internal/server"
)

const (
	records     = 10_000
	shardKeys   = 1_000
	parallelism = 16 // goroutines per GOMAXPROCS: 32 on this 2-core box, as the other benchmarks
)

// fixture is one server with the records loaded through the MongoDB API
// into a collection sharded on pk, and a client of each API.
type fixture struct {
	srv    *server.Server
	coll   *mongo.Collection
	cosmos *azcosmos.ContainerClient
}

func key(i int) (id, pk string) { return fmt.Sprintf("user%06d", i), fmt.Sprintf("p%04d", i%shardKeys) }

func setup(b *testing.B) *fixture {
	b.Helper()
	srv, err := server.Start(server.Options{Listen: "127.0.0.1:0", InMemory: true, NoThrottle: true, MongoListen: "127.0.0.1:0"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	client, err := mongo.Connect(options.Client().ApplyURI("mongodb://" + srv.MongoAddr() + "/").SetMaxPoolSize(64))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = client.Disconnect(context.Background()) })
	ctx := context.Background()
	db := client.Database("ycsb")
	if err := db.RunCommand(ctx, bson.D{{Key: "customAction", Value: "CreateCollection"}, {Key: "collection", Value: "usertable"},
		{Key: "shardKey", Value: "pk"}, {Key: "offerThroughput", Value: 40000}}).Err(); err != nil {
		b.Fatal(err)
	}
	coll := db.Collection("usertable")
	pad := strings.Repeat("x", 900)
	batch := make([]any, 0, 500)
	for i := range records {
		id, pk := key(i)
		batch = append(batch, bson.D{{Key: "_id", Value: id}, {Key: "pk", Value: pk}, {Key: "n", Value: int32(i)}, {Key: "pad", Value: pad}})
		if len(batch) == cap(batch) {
			if _, err := coll.InsertMany(ctx, batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	cred, err := azcosmos.NewKeyCredential(auth.EmulatorKey)
	if err != nil {
		b.Fatal(err)
	}
	cc, err := azcosmos.NewClientWithKey(srv.URL()+"/", cred, nil)
	if err != nil {
		b.Fatal(err)
	}
	container, err := cc.NewContainer("ycsb", "usertable")
	if err != nil {
		b.Fatal(err)
	}
	// Both APIs see the same document.
	id, pk := key(42)
	r, err := container.ReadItem(ctx, azcosmos.NewPartitionKeyString(pk), id, nil)
	if err != nil || !strings.Contains(string(r.Value), `"n":42`) {
		b.Fatalf("the NoSQL API does not read the document the MongoDB API wrote: %v %s", err, r.Value)
	}
	return &fixture{srv: srv, coll: coll, cosmos: container}
}

// BenchmarkYCSB runs point reads and single-field updates of random records
// through each API.
func BenchmarkYCSB(b *testing.B) {
	f := setup(b)
	ctx := context.Background()
	ops := []struct {
		name string
		op   func(rng *rand.Rand) error
	}{
		{"mongo/read", func(rng *rand.Rand) error {
			id, pk := key(rng.IntN(records))
			var doc bson.M
			return f.coll.FindOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "pk", Value: pk}}).Decode(&doc)
		}},
		{"nosql/read", func(rng *rand.Rand) error {
			id, pk := key(rng.IntN(records))
			_, err := f.cosmos.ReadItem(ctx, azcosmos.NewPartitionKeyString(pk), id, nil)
			return err
		}},
		{"mongo/update", func(rng *rand.Rand) error {
			id, pk := key(rng.IntN(records))
			r, err := f.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "pk", Value: pk}}, bson.D{{Key: "$set", Value: bson.D{{Key: "v", Value: rng.Int32()}}}})
			if err == nil && r.MatchedCount != 1 {
				err = fmt.Errorf("update matched %d documents", r.MatchedCount)
			}
			return err
		}},
		{"nosql/update", func(rng *rand.Rand) error {
			id, pk := key(rng.IntN(records))
			patch := azcosmos.PatchOperations{}
			patch.AppendSet("/v", rng.Int32())
			_, err := f.cosmos.PatchItem(ctx, azcosmos.NewPartitionKeyString(pk), id, patch, nil)
			return err
		}},
	}
	for _, o := range ops {
		b.Run(o.name, func(b *testing.B) {
			b.SetParallelism(parallelism)
			b.RunParallel(func(pb *testing.PB) {
				rng := rand.New(rand.NewPCG(rand.Uint64(), 1))
				for pb.Next() {
					if err := o.op(rng); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkFindByField finds one document by a field that is not the shard
// key (so every partition is read), through the automatic index and, as
// the baseline, by a scan of the collection (hint {$natural: 1}).
func BenchmarkFindByField(b *testing.B) {
	f := setup(b)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		opts *options.FindOneOptionsBuilder
	}{
		{"index", options.FindOne()},
		{"scan", options.FindOne().SetHint(bson.D{{Key: "$natural", Value: 1}})},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetParallelism(parallelism)
			b.RunParallel(func(pb *testing.PB) {
				rng := rand.New(rand.NewPCG(rand.Uint64(), 2))
				for pb.Next() {
					n := rng.IntN(records)
					var doc struct {
						N int32 `bson:"n"`
					}
					if err := f.coll.FindOne(ctx, bson.D{{Key: "n", Value: int32(n)}}, tc.opts).Decode(&doc); err != nil || doc.N != int32(n) {
						b.Errorf("find n = %d: %v (got %d)", n, err, doc.N)
						return
					}
				}
			})
		})
	}
}
