package mongo

import (
	"context"
	"io"
	"log"
	"net"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/parsecdb/parsec/internal/accept/accepttest"
	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/storage"
)

// TestServeOutlastsAcceptFailures checks that Serve keeps serving after its
// listener ran out of file descriptors (EMFILE) for a while: a client that
// connects afterwards gets its answer.
func TestServeOutlastsAcceptFailures(t *testing.T) {
	st, err := storage.Open(storage.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	eng, err := engine.Open(st, engine.Options{NoThrottle: true})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := accepttest.New(tcp, 5)
	srv := New(Config{Engine: eng, Logger: log.New(io.Discard, "", 0)})
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	c, err := mongo.Connect(options.Client().ApplyURI("mongodb://" + tcp.Addr().String() + "/?directConnection=true").
		SetServerSelectionTimeout(10 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(ctxT(t), nil); err != nil {
		t.Fatalf("ping after %d failed accepts: %v", ln.Failed.Load(), err)
	}
	c.Disconnect(context.Background())
	srv.Close()
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
	if n := ln.Failed.Load(); n != 5 {
		t.Errorf("%d accepts failed, want 5", n)
	}
}
