package resource

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// mongoPartial: MongoDB connections that announce a 48 MB message and send
// 24 MB of it, never authenticating. A connection still open when the
// attack stops is held until release.
func (a *attack) mongoPartial(p *proc, n int) {
	hdr := binary.LittleEndian.AppendUint32(nil, 48_000_000)
	hdr = append(hdr, 1, 0, 0, 0, 0, 0, 0, 0, 0xdd, 7, 0, 0) // requestID 1, OP_MSG
	chunk := make([]byte, 1<<20)
	a.spawn(n, func() {
		c, err := dialAddr(a, p.mongoAddr)
		if err != nil {
			return
		}
		if _, err := c.Write(hdr); err != nil {
			c.Close()
			return
		}
		a.count("partial messages started")
		for range 24 {
			if _, err := c.Write(chunk); err != nil {
				a.count("partial messages cut off")
				c.Close()
				time.Sleep(50 * time.Millisecond)
				return
			}
		}
		a.count("partial messages of 24 MB sent")
		for !a.stopped() {
			time.Sleep(50 * time.Millisecond)
		}
		a.hold(c)
	})
}

// TestMongoPartialMessages: 16 clients that have not authenticated each
// send 24 MB of a 48 MB message (384 MB in all, over the budget) while an
// honest MongoDB client with the key inserts and reads beside the honest
// HTTP one.
func TestMongoPartialMessages(t *testing.T) {
	p := start(t, "--mongo-listen", "127.0.0.1:0")
	seed(t, p)
	client, err := mongo.Connect(options.Client().ApplyURI("mongodb://" + p.mongoAddr + "/?directConnection=true").
		SetAuth(options.Credential{Username: "parsec", Password: serverKey}).SetMaxPoolSize(1))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Disconnect(context.Background())
	coll := client.Database("m").Collection("c")
	if _, err := coll.InsertOne(context.Background(), bson.D{{Key: "_id", Value: -1}}); err != nil {
		t.Fatalf("first honest MongoDB insert: %v", err)
	}
	var check func()
	run(t, p, 6*time.Second, func(a *attack) {
		a.mongoPartial(p, 16)
		check = honestMongo(t, a, coll)
	})
	check()
}

// readOnlyKey is the server's read-only key: MongoDB clients that
// authenticate as parsec-readonly with it run no command that writes.
const readOnlyKey = "cmVhZG9ubHlrZXktcmVhZG9ubHlrZXktcmVhZG9ubHlrZXktcmVhZG9ubHlrZXkt"

// mongoClient connects to the server's MongoDB API as user with password.
func mongoClient(t *testing.T, p *proc, user, password string, pool uint64) *mongo.Client {
	t.Helper()
	client, err := mongo.Connect(options.Client().ApplyURI("mongodb://" + p.mongoAddr + "/?directConnection=true").
		SetAuth(options.Credential{Username: user, Password: password}).SetMaxPoolSize(pool))
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// sortedCursors: n read-only clients at once open sorted finds of coll with
// batchSize 1, each of which reads the whole collection into memory, and
// keep every cursor they get open; a refused find is retried. When the
// attack stops they disconnect (the server keeps their cursors).
func (a *attack) sortedCursors(coll *mongo.Collection, n int) {
	var mu sync.Mutex
	var open []*mongo.Cursor
	find := options.Find().SetSort(bson.D{{Key: "n", Value: -1}}).SetBatchSize(1)
	a.spawn(n, func() {
		cur, err := coll.Find(context.Background(), bson.D{}, find)
		if err != nil {
			var ce mongo.CommandError
			if errors.As(err, &ce) && ce.Code != 0 {
				a.count(fmt.Sprintf("sorted finds refused with code %d", ce.Code))
			} else {
				a.count("sorted finds failed otherwise")
			}
			time.Sleep(10 * time.Millisecond)
			return
		}
		a.count("sorted cursors kept open")
		mu.Lock()
		open = append(open, cur)
		mu.Unlock()
	})
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		<-a.stop
		coll.Database().Client().Disconnect(context.Background())
	}()
}

// TestMongoSortedCursors: 16 clients of the read-only user at once open
// sorted cursors with batchSize 1 over 24 MB of large documents, each sort
// holding the whole collection while it runs and its cursor the rest
// after, while an honest MongoDB client with the primary key inserts and
// reads beside the honest HTTP one. The sorts share the server's query
// memory, and the cursors' results the cursor quota of the read-only user,
// both a quarter of GOMEMLIMIT: the server stays within its budget and
// every honest operation succeeds.
func TestMongoSortedCursors(t *testing.T) {
	p := start(t, "--mongo-listen", "127.0.0.1:0", "--read-only-key", readOnlyKey)
	seed(t, p)
	client := mongoClient(t, p, "parsec", serverKey, 1)
	defer client.Disconnect(context.Background())
	ctx := context.Background()
	big := client.Database("m").Collection("big")
	pad := strings.Repeat("x", 1<<20)
	for i := range 24 {
		if _, err := big.InsertOne(ctx, bson.D{{Key: "_id", Value: i}, {Key: "n", Value: i}, {Key: "pad", Value: pad}}); err != nil {
			t.Fatalf("seeding large documents: %v", err)
		}
	}
	coll := client.Database("m").Collection("c")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: -1}}); err != nil {
		t.Fatalf("first honest MongoDB insert: %v", err)
	}
	reader := mongoClient(t, p, "parsec-readonly", readOnlyKey, 64)
	if err := reader.Ping(ctx, nil); err != nil {
		t.Fatalf("the read-only user cannot connect: %v", err)
	}
	var check func()
	run(t, p, 8*time.Second, func(a *attack) {
		a.sortedCursors(reader.Database("m").Collection("big"), 16)
		check = honestMongo(t, a, coll)
	})
	check()
}

// honestMongo inserts and reads back documents of coll until the attack
// stops; the function it returns waits for it and fails t unless some
// succeeded and none failed.
func honestMongo(t *testing.T, a *attack, coll *mongo.Collection) (check func()) {
	var wg sync.WaitGroup
	var ops int
	var failures []string
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; !a.stopped(); i++ {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			_, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: i}})
			if err == nil {
				err = coll.FindOne(ctx, bson.D{{Key: "_id", Value: i}}).Err()
			}
			cancel()
			if err != nil {
				failures = append(failures, fmt.Sprint(err))
			} else {
				ops++
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	return func() {
		t.Helper()
		wg.Wait()
		t.Logf("honest MongoDB inserts and reads during the attack: %d", ops)
		if ops == 0 {
			t.Error("no honest MongoDB insert and read succeeded")
		}
		for i, f := range failures {
			if i == 5 {
				break
			}
			t.Errorf("honest MongoDB operation failed: %s", f)
		}
		if len(failures) > 0 {
			t.Errorf("%d of %d honest MongoDB operations failed", len(failures), len(failures)+ops)
		}
	}
}
