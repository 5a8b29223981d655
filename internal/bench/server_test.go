package bench

import (
	"context"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/server"
)

// TestAgainstParsec runs each workload briefly against a real in-memory
// Parsec server in this process.
func TestAgainstParsec(t *testing.T) {
	s, err := server.Start(server.Options{InMemory: true, Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	}()
	for _, tc := range []struct{ wl, client string }{
		{"read", ClientNetHTTP}, {"write", ClientNetHTTP}, {"upsert", ClientNetHTTP},
		{"read", ClientRaw}, {"write", ClientRaw}, {"upsert", ClientRaw},
		{"sproc", ClientNetHTTP}, {"sproc", ClientRaw},
	} {
		wl := tc.wl + "/" + tc.client
		res, log := runBench(t, Options{Endpoint: s.URL(), Workload: tc.wl, Client: tc.client, Items: 300, ItemSize: 1024})
		// The server throttles at 10,000 RU/s per partition: 429s may come,
		// but nothing else may fail.
		if res.Errors != 0 || res.Operations == 0 {
			t.Fatalf("%s: %+v\n%s", wl, res, log)
		}
		if res.RequestCharge < float64(res.Operations) {
			t.Fatalf("%s: %.2f RU for %d operations", wl, res.RequestCharge, res.Operations)
		}
		if res.PartitionKeyRanges != 4 { // 24,000 RU/s at 6,000 per new partition
			t.Fatalf("%s: %d partition key ranges, want 4", wl, res.PartitionKeyRanges)
		}
		t.Logf("%s: %.0f ops/s, p99 %.2f ms, %.2f RU/op, %d throttled", wl, res.Throughput, res.Latency.P99, res.RequestCharge/float64(res.Operations), res.Throttled)
	}
}
