package resource

import (
	"context"
	"encoding/binary"
	"fmt"
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
	var wg sync.WaitGroup
	var ops int
	var failures []string
	run(t, p, 6*time.Second, func(a *attack) {
		a.mongoPartial(p, 16)
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
	})
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
}
