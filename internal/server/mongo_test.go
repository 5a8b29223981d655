package server

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/parsecdb/parsec/internal/auth"
)

// The MongoDB API off loopback needs a key of one's own, as the NoSQL API
// does.
func TestValidateMongoListen(t *testing.T) {
	strong := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", 64)))
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Listen: "127.0.0.1:8081", MongoListen: "0.0.0.0:10255"}, "emulator key"},
		{Options{Listen: "127.0.0.1:8081", MongoListen: "0.0.0.0:10255", Key: auth.EmulatorKey}, "SCRAM-SHA-256"},
		{Options{Listen: "127.0.0.1:8081", MongoListen: "nonsense"}, "HOST:PORT"},
		{Options{Listen: "127.0.0.1:8081", MongoListen: "0.0.0.0:10255", Key: strong}, ""},
		{Options{Listen: "127.0.0.1:8081", MongoListen: "127.0.0.1:10255"}, ""},
	} {
		c.o.InMemory = true
		err := c.o.Validate()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("Validate(mongo %q, key %q): %v, want nil", c.o.MongoListen, c.o.Key, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("Validate(mongo %q, key %q) = %v, want an error saying %q", c.o.MongoListen, c.o.Key, err, c.want)
		}
	}
}

// With --tls and a key of one's own, the MongoDB API speaks TLS with the
// same certificate and requires SCRAM with the account name and the key.
func TestMongoTLSAndAuthentication(t *testing.T) {
	key := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("m", 64)))
	s, err := Start(Options{Listen: "127.0.0.1:0", InMemory: true, DataDir: t.TempDir(), TLS: true, Key: key, MongoListen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	connect := func(query string, cred *options.Credential) *mongo.Client {
		o := options.Client().ApplyURI("mongodb://" + s.MongoAddr() + "/?directConnection=true" + query).SetServerSelectionTimeout(3 * time.Second)
		if cred != nil {
			o.SetAuth(*cred)
		}
		c, err := mongo.Connect(o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Disconnect(context.Background()) })
		return c
	}
	cred := &options.Credential{Username: "parsec", Password: key}
	c := connect("&tls=true&tlsInsecure=true", cred)
	coll := c.Database("d").Collection("c")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: "a"}, {Key: "n", Value: 1}}); err != nil {
		t.Fatalf("insert over TLS with SCRAM: %v", err)
	}
	var got bson.M
	if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: "a"}}).Decode(&got); err != nil || got["n"] != int32(1) {
		t.Fatalf("find over TLS with SCRAM: %v %v", got, err)
	}
	// Without credentials: refused; without TLS: no connection at all.
	if _, err := connect("&tls=true&tlsInsecure=true", nil).Database("d").Collection("c").InsertOne(ctx, bson.D{{Key: "_id", Value: "b"}}); err == nil {
		t.Fatal("an unauthenticated insert was accepted")
	}
	if err := connect("", cred).Ping(ctx, nil); err == nil {
		t.Fatal("a plain-TCP client reached a TLS listener")
	}
}
