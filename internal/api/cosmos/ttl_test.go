package cosmos

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/epk"
	"github.com/parsecdb/parsec/internal/testclock"
)

// TestBatchReadsHideExpiredItems checks that the Read operations of a
// transactional batch and of a bulk request find an item past its time to
// live as a point read does: not found (404), and in a transactional batch
// the whole batch fails with it. An item that has not expired is read.
func TestBatchReadsHideExpiredItems(t *testing.T) {
	clk := testclock.New(time.Unix(1_800_000_000, 0))
	ts := newTestServerEngine(t, Config{}, engine.Options{Now: clk.Now, NoThrottle: true, TTLSweepInterval: -1})
	if _, err := ts.eng.CreateDatabase("db", engine.Throughput{}); err != nil {
		t.Fatal(err)
	}
	def := epk.Definition{Kind: "Hash", Version: 2, Paths: []string{"/pk"}}
	ttl := int64(-1)
	if _, err := ts.eng.CreateContainer("db", engine.ContainerSpec{ID: "c", PartitionKey: def, DefaultTTL: &ttl}, engine.Throughput{RUs: 400}); err != nil {
		t.Fatal(err)
	}
	pk := map[string]string{hdrPartitionKey: `["p"]`}
	for _, item := range []string{`{"id":"short","pk":"p","ttl":5}`, `{"id":"long","pk":"p","ttl":100}`} {
		if st, b := ts.do(ts.primary, http.MethodPost, "/dbs/db/colls/c/docs", []byte(item), pk); st != http.StatusCreated {
			t.Fatalf("cannot create %s: %d %s", item, st, b)
		}
	}
	clk.Add(10 * time.Second)
	if st, _ := ts.do(ts.primary, http.MethodGet, "/dbs/db/colls/c/docs/short", nil, pk); st != http.StatusNotFound {
		t.Fatalf("a point read of the expired item: status %d, want 404", st)
	}
	batch := func(atomic string, ops string) (int, []batchResult) {
		t.Helper()
		hdr := map[string]string{hdrPartitionKey: `["p"]`, "x-ms-cosmos-is-batch-request": "True", "x-ms-cosmos-batch-atomic": atomic}
		st, b := ts.do(ts.primary, http.MethodPost, "/dbs/db/colls/c/docs", []byte(ops), hdr)
		var out []batchResult
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("batch (atomic %s): status %d, body %s: %v", atomic, st, b, err)
		}
		return st, out
	}
	const reads = `[{"operationType":"Read","id":"long","partitionKey":"[\"p\"]"},{"operationType":"Read","id":"short","partitionKey":"[\"p\"]"}]`

	st, res := batch("false", reads)
	if st != http.StatusMultiStatus || len(res) != 2 || res[0].StatusCode != http.StatusOK || res[1].StatusCode != http.StatusNotFound {
		t.Fatalf("bulk reads: status %d, results %v; want 207 with 200 for the live item and 404 for the expired one", st, statuses(res))
	}
	if len(res[1].ResourceBody) != 0 {
		t.Fatalf("bulk read of the expired item returned it: %s", res[1].ResourceBody)
	}

	// The bulk read above deleted the expired item; expire the other one
	// and read it in a transactional batch.
	clk.Add(100 * time.Second)
	st, res = batch("true", `[{"operationType":"Read","id":"long"}]`)
	if st == http.StatusOK || len(res) != 1 || res[0].StatusCode != http.StatusNotFound {
		t.Fatalf("transactional batch read of an expired item: status %d, results %v; want a failed batch with 404", st, statuses(res))
	}
	if len(res[0].ResourceBody) != 0 {
		t.Fatalf("transactional batch read of the expired item returned it: %s", res[0].ResourceBody)
	}
}

func statuses(res []batchResult) []int {
	out := make([]int, len(res))
	for i, r := range res {
		out[i] = r.StatusCode
	}
	return out
}
