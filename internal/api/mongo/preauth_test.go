package mongo

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/xdg-go/scram"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// authEnv is a server that requires authentication, adjusted by cfg.
func authEnv(t *testing.T, cfg func(*Config)) *testEnv {
	return newEnv(t, envOptions{cfg: func(c *Config) {
		c.PrimaryKey, c.RequireAuth = testPrimaryKey, true
		if cfg != nil {
			cfg(c)
		}
	}})
}

// A connection that has not authenticated may not send a message over
// MaxUnauthenticatedMessageBytes, even a handshake; one that has may.
func TestUnauthenticatedMessageLimit(t *testing.T) {
	env := authEnv(t, nil)
	c := dialRaw(t, env)
	pad := make([]byte, DefaultMaxUnauthenticatedMessageBytes)
	if _, err := c.nc.Write(opMsg(1, 0, mustMarshal(t, bson.D{{Key: "hello", Value: 1}, {Key: "pad", Value: pad}, {Key: "$db", Value: "admin"}}), "")); err != nil {
		t.Fatal(err)
	}
	if !c.closed() {
		t.Fatal("a connection that has not authenticated sent a message over the limit and was not closed")
	}
	coll := env.connectAs(t, DefaultAccountName, testPrimaryKey, "").Database("d").Collection("c")
	if _, err := coll.InsertOne(ctxT(t), bson.D{{Key: "_id", Value: 1}, {Key: "b", Value: pad}}); err != nil {
		t.Fatalf("an authenticated insert of %d bytes: %v", len(pad), err)
	}
}

// Before authentication a message must arrive whole within MessageTimeout
// of its first bytes.
func TestUnauthenticatedMessageTimeout(t *testing.T) {
	env := authEnv(t, func(c *Config) { c.MessageTimeout, c.AuthIdleTimeout = 100*time.Millisecond, time.Hour })
	c := dialRaw(t, env)
	msg := opMsg(1, 0, mustMarshal(t, bson.D{{Key: "hello", Value: 1}, {Key: "$db", Value: "admin"}}), "")
	if _, err := c.nc.Write(msg[:len(msg)-1]); err != nil {
		t.Fatal(err)
	}
	if !c.closed() {
		t.Error("a message that never arrived whole did not close the connection")
	}
}

// Before authentication a connection may wait at most AuthIdleTimeout for
// its next message; once authenticated, IdleTimeout.
func TestUnauthenticatedIdleTimeout(t *testing.T) {
	env := authEnv(t, func(c *Config) { c.MessageTimeout, c.AuthIdleTimeout = time.Hour, 100*time.Millisecond })
	c := env.connectAs(t, DefaultAccountName, testPrimaryKey, "")
	ctx := ctxT(t)
	if err := c.Ping(ctx, nil); err != nil {
		t.Fatal(err)
	}
	raw := dialRaw(t, env)
	if _, d := raw.roundTrip(opMsg(1, 0, mustMarshal(t, bson.D{{Key: "hello", Value: 1}, {Key: "$db", Value: "admin"}}), "")); toMap(d)["ok"] != 1.0 {
		t.Fatalf("hello: %v", d)
	}
	if !raw.closed() {
		t.Fatal("a connection that sent nothing more without authenticating was not closed")
	}
	// The authenticated client's connection, idle meanwhile, still serves.
	if _, err := c.Database("d").Collection("c").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatalf("an authenticated client after a wait: %v", err)
	}
}

// Connections that have not authenticated hold at most
// MaxUnauthenticatedConnections slots: one more closes the oldest of them,
// never an authenticated one, so that a client with the key can connect
// while silent sockets are held open.
func TestUnauthenticatedSlots(t *testing.T) {
	env := authEnv(t, func(c *Config) { c.MaxConnections = 8 })
	authed := func() []*slot {
		env.srv.mu.Lock()
		defer env.srv.mu.Unlock()
		var out []*slot
		for _, sl := range env.srv.conns {
			if !sl.unauth && !sl.evicted {
				out = append(out, sl)
			}
		}
		return out
	}
	first := dialRaw(t, env)
	for range 8 {
		dialRaw(t, env)
	}
	if !first.closed() {
		t.Fatal("the oldest connection that had not authenticated kept its slot")
	}
	ctx := ctxT(t)
	c := env.connectAs(t, DefaultAccountName, testPrimaryKey, "")
	if err := c.Ping(ctx, nil); err != nil {
		t.Fatalf("a client with the key could not connect while silent connections were open: %v", err)
	}
	before := authed()
	if len(before) == 0 {
		t.Fatal("no authenticated connection is counted")
	}
	for range 8 {
		dialRaw(t, env)
	}
	for _, sl := range before {
		if sl.evicted {
			t.Fatal("an authenticated connection was closed for a newcomer")
		}
	}
	if err := c.Ping(ctx, nil); err != nil {
		t.Fatal(err)
	}
	env.srv.mu.Lock()
	open, unauth := env.srv.open, env.srv.unauth
	env.srv.mu.Unlock()
	if unauth > 4 || open > 8 {
		t.Fatalf("%d connections are open, %d of them not authenticated: over the limits 8 and 4", open, unauth)
	}
}

// Each failed authentication on a connection is answered after a longer
// delay.
func TestAuthFailureDelay(t *testing.T) {
	var mu sync.Mutex
	var slept []time.Duration
	env := authEnv(t, func(c *Config) {
		c.sleep = func(d time.Duration) {
			mu.Lock()
			slept = append(slept, d)
			mu.Unlock()
		}
	})
	raw := dialRaw(t, env)
	for i := range 3 {
		client, err := scram.SHA256.NewClient("nobody", "wrong", "")
		if err != nil {
			t.Fatal(err)
		}
		first, err := client.NewConversation().Step("")
		if err != nil {
			t.Fatal(err)
		}
		_, d := raw.roundTrip(opMsg(int32(i+1), 0, mustMarshal(t, bson.D{{Key: "saslStart", Value: 1}, {Key: "mechanism", Value: scramMechanism},
			{Key: "payload", Value: bson.Binary{Data: []byte(first)}}, {Key: "$db", Value: "admin"}}), ""))
		if m := toMap(d); m["code"] != int32(18) {
			t.Fatalf("saslStart as an unknown user: %v", d)
		}
	}
	// A wrong password through the driver fails the same way.
	if err := env.connectAs(t, DefaultAccountName, "wrong", "").Ping(ctxT(t), nil); err == nil {
		t.Fatal("a wrong password was accepted")
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}; len(slept) < 4 || !slices.Equal(slept[:3], want) || slept[3] != time.Second {
		t.Fatalf("delays after failures: %v, want %v on one connection, then 1s on another", slept, want)
	}
}
