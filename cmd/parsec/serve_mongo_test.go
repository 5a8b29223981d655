package main

import (
	"context"
	"errors"
	"io"
	"net"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// serveMongo runs `parsec serve --in-memory --listen 127.0.0.1:0
// --mongo-listen 127.0.0.1:0` with args, and returns the Mongo address it
// prints and a stop function that ends it with SIGINT and checks its exit.
func serveMongo(t *testing.T, args ...string) (addr string, stop func()) {
	t.Helper()
	stdout := &lineWatch{want: "MongoDB API on", seen: make(chan struct{})}
	var stderr lineWatch
	done := make(chan int, 1)
	go func() {
		done <- run(append([]string{"serve", "--in-memory", "--listen", "127.0.0.1:0", "--mongo-listen", "127.0.0.1:0"}, args...), stdout, &stderr)
	}()
	select {
	case <-stdout.seen:
	case code := <-done:
		t.Fatalf("parsec serve exited %d: %s %s", code, stdout.String(), stderr.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("parsec serve did not start: %s %s", stdout.String(), stderr.String())
	}
	m := regexp.MustCompile(`mongodb://([0-9.]+:[0-9]+)/`).FindStringSubmatch(stdout.String())
	if m == nil {
		t.Fatalf("no Mongo address in %q", stdout.String())
	}
	return m[1], func() {
		t.Helper()
		if err := syscall.Kill(syscall.Getpid(), syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		select {
		case code := <-done:
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
		case <-time.After(60 * time.Second):
			t.Fatal("parsec serve did not stop on SIGINT")
		}
	}
}

// TestServeMongoListen runs `parsec serve --mongo-listen 127.0.0.1:0`,
// connects the Go driver to the address it prints, writes and reads a
// document, checks that --mongo-max-cursors reaches the server, then stops
// the server with SIGINT.
func TestServeMongoListen(t *testing.T) {
	addr, stop := serveMongo(t, "--mongo-max-cursors", "4")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client, err := mongo.Connect(options.Client().ApplyURI("mongodb://" + addr + "/?directConnection=true"))
	if err != nil {
		t.Fatal(err)
	}
	c := client.Database("shop").Collection("orders")
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: "o1"}, {Key: "qty", Value: int32(3)}}); err != nil {
		t.Fatal(err)
	}
	var got bson.D
	if err := c.FindOne(ctx, bson.D{{Key: "_id", Value: "o1"}}).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[1].Value != int32(3) {
		t.Fatalf("read back %v", got)
	}
	// Unauthenticated connections may keep a quarter of the 4 cursors open.
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: "o2"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Find(ctx, bson.D{}, options.Find().SetBatchSize(1)); err != nil {
		t.Fatal(err)
	}
	var ce mongo.CommandError
	if _, err := c.Find(ctx, bson.D{}, options.Find().SetBatchSize(1)); !errors.As(err, &ce) || ce.Code != 2 {
		t.Fatalf("a second open cursor of an unauthenticated client, with --mongo-max-cursors 4: %v", err)
	}
	client.Disconnect(ctx)
	stop()
}

// TestServeMongoAuthIdleTimeout: with a key of one's own,
// --mongo-auth-idle-timeout closes a connection that sends nothing
// without authenticating, while a client with the key is served.
func TestServeMongoAuthIdleTimeout(t *testing.T) {
	const key = "cHJpbWFyeXByaW1hcnlwcmltYXJ5cHJpbWFyeXByaW1hcnlwcmltYXJ5cHJpbWFyeQ=="
	addr, stop := serveMongo(t, "--key", key, "--mongo-auth-idle-timeout", "100ms")
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := nc.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("a silent connection: %v, want it closed", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client, err := mongo.Connect(options.Client().ApplyURI("mongodb://" + addr + "/?directConnection=true").
		SetAuth(options.Credential{Username: "parsec", Password: key}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Database("d").Collection("c").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	client.Disconnect(ctx)
	stop()
}

// TestServeMongoRefusedOffLoopback: with the emulator key the Mongo
// listener is loopback-only, as the HTTP one is; the message says how to
// use a key of one's own.
func TestServeMongoRefusedOffLoopback(t *testing.T) {
	for _, args := range [][]string{
		{"--mongo-listen", "0.0.0.0:0"},
		{"--mongo-listen", "0.0.0.0:0", "--key", "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="},
	} {
		var stdout, stderr lineWatch
		stdout.seen, stderr.seen = make(chan struct{}), make(chan struct{})
		code := run(append([]string{"serve", "--in-memory", "--listen", "127.0.0.1:0"}, args...), &stdout, &stderr)
		if code != 1 || !strings.Contains(stderr.String(), "MongoDB API") || !strings.Contains(stderr.String(), "--key") || !strings.Contains(stderr.String(), "SCRAM-SHA-256") {
			t.Fatalf("%v: exit %d, stderr %q", args, code, stderr.String())
		}
	}
}
