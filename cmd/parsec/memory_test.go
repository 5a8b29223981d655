package main

import (
	"math"
	"runtime/debug"
	"testing"

	"github.com/parsecdb/parsec/internal/api/mongo"
	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/server"
)

// TestMemoryDefaults: --query-memory and --mongo-max-cursor-bytes default
// to their own defaults, or to a quarter of the Go memory limit when one is
// set and that is lower; a value given is kept.
func TestMemoryDefaults(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	f := func(limit int64, given server.Options, wantQuery, wantCursors int64) {
		t.Helper()
		debug.SetMemoryLimit(limit)
		o := given
		memoryDefaults(&o)
		if o.QueryMemory != wantQuery || o.MongoMaxCursorBytes != wantCursors {
			t.Errorf("memory limit %d: --query-memory %d, --mongo-max-cursor-bytes %d; want %d and %d",
				limit, o.QueryMemory, o.MongoMaxCursorBytes, wantQuery, wantCursors)
		}
	}
	f(math.MaxInt64, server.Options{}, engine.DefaultQueryServerHeld, mongo.DefaultMaxCursorBytes)
	f(256<<20, server.Options{}, 64<<20, 64<<20)
	f(3<<30, server.Options{}, engine.DefaultQueryServerHeld, 768<<20)
	f(64<<30, server.Options{}, engine.DefaultQueryServerHeld, mongo.DefaultMaxCursorBytes)
	f(256<<20, server.Options{QueryMemory: 1 << 30, MongoMaxCursorBytes: 2 << 30}, 1<<30, 2<<30)
}
