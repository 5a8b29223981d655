package mongo

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/storage"
)

// testEnv is an engine on an in-memory store, the Mongo API on a loopback
// port, and a driver client connected to it.
type testEnv struct {
	eng    *engine.Engine
	srv    *Server
	addr   string
	client *mongo.Client
}

type envOptions struct {
	throttle        bool
	partitionMaxRUs int
	// cfg adjusts the server's configuration.
	cfg func(*Config)
	// now is the engine's clock (nil: the system's).
	now func() time.Time
	// queryMemory is the engine's QueryLimits.ServerBytes (0: its default).
	queryMemory int64
}

func newEnv(t testing.TB, o envOptions) *testEnv {
	t.Helper()
	st, err := storage.Open(storage.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	eo := engine.Options{NoThrottle: !o.throttle, PartitionMaxRUs: o.partitionMaxRUs,
		Query: engine.QueryLimits{ServerBytes: o.queryMemory}}
	if o.now != nil {
		eo.Now, eo.TTLSweepInterval = o.now, -1
	}
	eng, err := engine.Open(st, eo)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Engine: eng, Logger: log.New(io.Discard, "", 0)}
	if o.cfg != nil {
		o.cfg(&cfg)
	}
	srv := New(cfg)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	env := &testEnv{eng: eng, srv: srv, addr: ln.Addr().String()}
	env.client = env.connect(t)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		env.client.Disconnect(ctx)
		srv.Close()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		eng.Close()
		st.Close()
	})
	return env
}

func (env *testEnv) connect(t testing.TB) *mongo.Client {
	t.Helper()
	c, err := mongo.Connect(options.Client().ApplyURI("mongodb://" + env.addr + "/?directConnection=true&retryWrites=false").
		SetServerSelectionTimeout(10 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// mustDocs decodes every document of a cursor.
func mustDocs(t testing.TB, cur *mongo.Cursor) []bson.D {
	t.Helper()
	var out []bson.D
	if err := cur.All(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// cmdCode returns the server error code of err: the command error's, or
// the first write error's (0 if err is nil, -1 if it is no server error).
func cmdCode(err error) int {
	if err == nil {
		return 0
	}
	var ce mongo.CommandError
	if errors.As(err, &ce) {
		return int(ce.Code)
	}
	var we mongo.WriteException
	if errors.As(err, &we) {
		if len(we.WriteErrors) > 0 {
			return we.WriteErrors[0].Code
		}
		if we.WriteConcernError != nil {
			return we.WriteConcernError.Code
		}
	}
	return -1
}

// cursorOpen reports whether the server holds cursor id (of the primary
// user, the only one of an unauthenticated server).
func cursorOpen(env *testEnv, id int64) bool {
	_, err := env.srv.cursors.get(id, principalPrimary)
	return err == nil
}
