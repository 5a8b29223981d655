package resource

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"
)

// requests sends the same signed request from n attackers in a loop until
// the attack stops, and counts each status it gets (and one body of each).
func (a *attack) requests(p *proc, n int, name, method, path string, body []byte, hdr ...string) {
	client := &http.Client{Timeout: 60 * time.Second}
	var statuses sync.Map
	a.spawn(n, func() {
		st, b, err := call(context.Background(), client, p.url, method, path, body, hdr...)
		a.count(name)
		key := strconv.Itoa(st)
		if err != nil {
			key = "error"
		}
		if _, loaded := statuses.LoadOrStore(key, true); !loaded {
			a.count(fmt.Sprintf("%s answered %s e.g. %.160s", name, key, b))
		}
		if err != nil {
			time.Sleep(50 * time.Millisecond)
		}
	})
}

// TestScriptAllocations: four clients at once run a stored procedure that
// allocates a 1 GiB typed array and fills it, the allocation that took the
// server down when two ran at once. Each run is refused before it
// allocates (its memory budget is 512 MiB), and the server stays within its
// budget while an honest client reads.
func TestScriptAllocations(t *testing.T) {
	p := start(t)
	seed(t, p)
	must(t, p, "POST", "/dbs/db/colls/c/sprocs", []byte(`{"id":"alloc","body":"function () { var a = new Uint8Array(Math.pow(2, 30)); a.fill(1); getContext().getResponse().setBody(a.length); }"}`), 201)
	run(t, p, 4*time.Second, func(a *attack) {
		a.requests(p, 4, "1 GiB typed arrays", "POST", "/dbs/db/colls/c/sprocs/alloc", []byte(`[]`),
			"x-ms-documentdb-partitionkey", `["s"]`, "Content-Type", "application/json")
	})
}

// TestHugeContainer: clients ask again and again for a container of
// 1,000,000,000 RU/s, which would need 100,000 physical partitions (2.6 GB
// of memory, kept across restarts). Each create is refused with 400 before
// anything is created, and the server stays within its budget while an
// honest client reads.
func TestHugeContainer(t *testing.T) {
	p := start(t)
	seed(t, p)
	run(t, p, 3*time.Second, func(a *attack) {
		a.requests(p, 2, "containers of 1e9 RU/s", "POST", "/dbs/db/colls",
			[]byte(`{"id":"huge","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2}}`),
			"x-ms-offer-throughput", "1000000000")
	})
	st, b, err := call(context.Background(), setupClient, p.url, "GET", "/dbs/db/colls/huge", nil)
	if err != nil || st != http.StatusNotFound {
		t.Fatalf("the refused container: %d %.200s %v, want 404", st, b, err)
	}
}
