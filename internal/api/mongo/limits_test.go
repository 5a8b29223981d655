package mongo

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

func TestDocumentLimits(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	c := env.client.Database("d").Collection("big")
	// Over the engine's 2 MB item limit but under 16 MiB: a clear 10334.
	_, err := c.InsertOne(ctx, bson.D{{Key: "s", Value: strings.Repeat("x", 3<<20)}})
	if cmdCode(err) != 10334 || !strings.Contains(err.Error(), "2 MB") {
		t.Fatalf("3 MB document: %v", err)
	}
	// Over 16 MiB (the driver refuses to send it, so over the raw protocol).
	rc := dialRaw(t, env)
	big := mustMarshal(t, bson.D{{Key: "_id", Value: 1}, {Key: "s", Value: strings.Repeat("y", 16<<20)}})
	cmd := mustMarshal(t, bson.D{{Key: "insert", Value: "big"}, {Key: "$db", Value: "d"}})
	_, d := rc.roundTrip(opMsg(1, 0, cmd, "documents", big))
	we, _ := toMap(d)["writeErrors"].(bson.A)
	if len(we) != 1 || toMap(we[0].(bson.D))["code"] != int32(10334) {
		t.Fatalf("17 MB document: %v", d)
	}
}

func TestConnectionLimit(t *testing.T) {
	env := newEnv(t, envOptions{cfg: func(c *Config) { c.MaxConnections = 3 }})
	// One more than the limit (the driver's client may hold some too).
	var conns []*rawConn
	for range 4 {
		rc := dialRaw(t, env)
		conns = append(conns, rc)
	}
	closedOne := false
	for _, rc := range conns {
		if _, err := rc.nc.Write(opMsg(1, 0, mustMarshal(t, bson.D{{Key: "ping", Value: 1}, {Key: "$db", Value: "a"}}), "")); err != nil {
			closedOne = true
			continue
		}
		rc.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		var hdr [1]byte
		if _, err := rc.r.Read(hdr[:]); err != nil {
			closedOne = true
		}
	}
	if !closedOne {
		t.Fatal("more connections than the limit were served")
	}
}

func TestIdleConnectionClosed(t *testing.T) {
	env := newEnv(t, envOptions{cfg: func(c *Config) { c.IdleTimeout = 50 * time.Millisecond }})
	rc := dialRaw(t, env)
	if !rc.closed() {
		t.Fatal("an idle connection stayed open")
	}
}

func TestCursorTimeoutAndCap(t *testing.T) {
	var now atomic.Int64
	now.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	env := newEnv(t, envOptions{cfg: func(c *Config) {
		c.MaxCursors = 2
		c.Now = func() time.Time { return time.Unix(0, now.Load()) }
	}})
	ctx := ctxT(t)
	c := env.client.Database("d").Collection("cur")
	insertN(t, c, 20)
	open := func() (int64, error) {
		cur, err := c.Find(ctx, bson.D{}, options.Find().SetBatchSize(2))
		if err != nil {
			return 0, err
		}
		return cur.ID(), nil
	}
	id1, err := open()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := open(); err != nil {
		t.Fatal(err)
	}
	if _, err := open(); err == nil || !strings.Contains(err.Error(), "too many open cursors") {
		t.Fatalf("third cursor over a cap of 2: %v", err)
	}
	// Ten idle minutes later both are gone.
	now.Add(int64(11 * time.Minute))
	env.srv.cursors.expire()
	if env.srv.cursors.len() != 0 {
		t.Fatal("idle cursors survived the timeout")
	}
	err = env.client.Database("d").RunCommand(context.Background(), bson.D{{Key: "getMore", Value: id1}, {Key: "collection", Value: "cur"}}).Err()
	if cmdCode(err) != 43 {
		t.Fatalf("getMore on an expired cursor: %v", err)
	}
	if _, err := open(); err != nil {
		t.Fatal(err)
	}
}
