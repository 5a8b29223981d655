package mongo

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/xdg-go/scram"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

const (
	testPrimaryKey  = "cHJpbWFyeXByaW1hcnlwcmltYXJ5cHJpbWFyeXByaW1hcnlwcmltYXJ5cHJpbWFyeQ=="
	testReadOnlyKey = "cmVhZG9ubHlyZWFkb25seXJlYWRvbmx5cmVhZG9ubHlyZWFkb25seXJlYWRvbmx5"
)

// connectAs connects with SCRAM credentials (mechanism "" lets the driver
// choose from the server's saslSupportedMechs).
func (env *testEnv) connectAs(t *testing.T, user, password, mechanism string) *mongo.Client {
	t.Helper()
	cred := options.Credential{Username: user, Password: password, AuthMechanism: mechanism, AuthSource: "admin"}
	c, err := mongo.Connect(options.Client().ApplyURI("mongodb://" + env.addr + "/?directConnection=true&retryWrites=false").
		SetAuth(cred).SetServerSelectionTimeout(5 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Disconnect(context.Background()) })
	return c
}

func TestSCRAMAuthentication(t *testing.T) {
	env := newEnv(t, envOptions{cfg: func(c *Config) {
		c.PrimaryKey, c.ReadOnlyKey, c.RequireAuth = testPrimaryKey, testReadOnlyKey, true
	}})
	ctx := ctxT(t)

	// Without credentials only the handshake runs: a write is code 13.
	_, err := env.client.Database("d").Collection("c").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}})
	if code := cmdCode(err); code != 13 {
		t.Fatalf("an unauthenticated insert: %v (code %d), want 13", err, code)
	}
	if err := env.client.Ping(ctx, nil); err != nil {
		t.Fatalf("ping needs no authentication: %v", err)
	}

	// The account name and the primary key: everything runs.
	rw := env.connectAs(t, DefaultAccountName, testPrimaryKey, "")
	coll := rw.Database("d").Collection("c")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "v", Value: "x"}}); err != nil {
		t.Fatalf("insert as %s: %v", DefaultAccountName, err)
	}
	// SCRAM-SHA-256 named explicitly works the same.
	if err := env.connectAs(t, DefaultAccountName, testPrimaryKey, "SCRAM-SHA-256").Ping(ctx, nil); err != nil {
		t.Fatalf("explicit SCRAM-SHA-256: %v", err)
	}

	// The read-only user reads and cannot write.
	ro := env.connectAs(t, DefaultAccountName+"-readonly", testReadOnlyKey, "")
	var got bson.M
	if err := ro.Database("d").Collection("c").FindOne(ctx, bson.D{{Key: "_id", Value: 1}}).Decode(&got); err != nil || got["v"] != "x" {
		t.Fatalf("read as the read-only user: %v %v", got, err)
	}
	for what, err := range map[string]error{
		"insert": func() error {
			_, err := ro.Database("d").Collection("c").InsertOne(ctx, bson.D{{Key: "_id", Value: 2}})
			return err
		}(),
		"drop": ro.Database("d").Collection("c").Drop(ctx),
		"CreateCollection": ro.Database("d").RunCommand(ctx, bson.D{{Key: "customAction", Value: "CreateCollection"},
			{Key: "collection", Value: "x"}}).Err(),
	} {
		if code := cmdCode(err); code != 13 {
			t.Errorf("%s as the read-only user: %v (code %d), want 13", what, err, code)
		}
	}
	if n, err := rw.Database("d").Collection("c").CountDocuments(ctx, bson.D{}); err != nil || n != 1 {
		t.Fatalf("after the read-only user's attempts: %d documents, %v; want 1", n, err)
	}

	// Wrong password, unknown user, the read-only key for the primary user,
	// and a mechanism the server does not have: all refused.
	for _, c := range []struct{ user, password, mech string }{
		{DefaultAccountName, testReadOnlyKey, ""},
		{DefaultAccountName, "wrong", ""},
		{"someone", testPrimaryKey, ""},
		{DefaultAccountName, testPrimaryKey, "SCRAM-SHA-1"},
	} {
		err := env.connectAs(t, c.user, c.password, c.mech).Ping(ctx, nil)
		if err == nil || !strings.Contains(strings.ToLower(err.Error()), "auth") {
			t.Errorf("user %q, mechanism %q with a wrong password or mechanism: %v, want an authentication error", c.user, c.mech, err)
		}
	}
}

// With the emulator key (RequireAuth off) a client may still authenticate,
// as connection strings for the emulator carry credentials.
func TestSCRAMOptional(t *testing.T) {
	env := newEnv(t, envOptions{cfg: func(c *Config) { c.PrimaryKey = testPrimaryKey }})
	ctx := ctxT(t)
	if _, err := env.client.Database("d").Collection("c").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatalf("an unauthenticated insert without RequireAuth: %v", err)
	}
	c := env.connectAs(t, DefaultAccountName, testPrimaryKey, "")
	if n, err := c.Database("d").Collection("c").CountDocuments(ctx, bson.D{}); err != nil || n != 1 {
		t.Fatalf("authenticated count: %d %v", n, err)
	}
	if err := env.connectAs(t, DefaultAccountName, "wrong", "").Ping(ctx, nil); err == nil {
		t.Fatal("a wrong password was accepted")
	}
}

// TestSpeculativeAuthentication runs SCRAM's first step inside hello, as
// drivers do at connect: hello answers the server's first message, the
// conversation ends with saslContinue on the same connection, the server's
// signature verifies, and the connection may then write. A wrong
// mechanism gets a hello without speculativeAuthenticate.
func TestSpeculativeAuthentication(t *testing.T) {
	env := newEnv(t, envOptions{cfg: func(c *Config) {
		c.PrimaryKey, c.RequireAuth = testPrimaryKey, true
	}})
	ctx := ctxT(t)
	c, err := mongo.Connect(options.Client().ApplyURI("mongodb://" + env.addr + "/?directConnection=true&retryWrites=false&maxPoolSize=1"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Disconnect(context.Background())
	admin := c.Database("admin")
	client, err := scram.SHA256.NewClient(DefaultAccountName, testPrimaryKey, "")
	if err != nil {
		t.Fatal(err)
	}
	conv := client.NewConversation()
	first, err := conv.Step("")
	if err != nil {
		t.Fatal(err)
	}
	hello := func(mech string) bson.D {
		var out bson.D
		if err := admin.RunCommand(ctx, bson.D{{Key: "hello", Value: 1}, {Key: "speculativeAuthenticate", Value: bson.D{
			{Key: "saslStart", Value: 1}, {Key: "mechanism", Value: mech}, {Key: "payload", Value: bson.Binary{Data: []byte(first)}}, {Key: "db", Value: "admin"}}}}).Decode(&out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if sa := field(hello("PLAIN"), "speculativeAuthenticate"); sa != nil {
		t.Fatalf("a mechanism the server does not offer was answered: %v", sa)
	}
	sa, ok := field(hello(scramMechanism), "speculativeAuthenticate").(bson.D)
	if !ok || field(sa, "done") != false {
		t.Fatalf("hello did not answer the first step: %v", sa)
	}
	serverFirst := field(sa, "payload").(bson.Binary)
	final, err := conv.Step(string(serverFirst.Data))
	if err != nil {
		t.Fatal(err)
	}
	var cont bson.D
	if err := admin.RunCommand(ctx, bson.D{{Key: "saslContinue", Value: 1}, {Key: "conversationId", Value: field(sa, "conversationId")},
		{Key: "payload", Value: bson.Binary{Data: []byte(final)}}}).Decode(&cont); err != nil {
		t.Fatal(err)
	}
	if field(cont, "done") != true {
		t.Fatalf("saslContinue: %v", cont)
	}
	if _, err := conv.Step(string(field(cont, "payload").(bson.Binary).Data)); err != nil || !conv.Valid() {
		t.Fatalf("the server's signature does not verify: %v", err)
	}
	if _, err := c.Database("d").Collection("c").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatalf("a write after speculative authentication: %v", err)
	}
}
