package cosmos

import (
	"net/http"
	"strings"
	"testing"
)

// writeRequest is one request that writes when signed with the primary key.
type writeRequest struct {
	method, path, body string
}

// writeRequests returns every kind of request that changes stored state, on
// the data of testServer.seed.
func (ts *testServer) writeRequests(t testing.TB) []writeRequest {
	t.Helper()
	offers := ts.eng.Offers()
	if len(offers) == 0 {
		t.Fatal("the seeded store has no offer")
	}
	const item = `{"id":"1","pk":"p","v":2}`
	const batch = `[{"operationType":"Delete","id":"1"},{"operationType":"Upsert","resourceBody":{"id":"3","pk":"p"}}]`
	const coll = `{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2},"defaultTtl":60}`
	return []writeRequest{
		{http.MethodPost, "/dbs", `{"id":"new"}`},
		{http.MethodDelete, "/dbs/db", ""},
		{http.MethodPost, "/dbs/db/colls", `{"id":"new","partitionKey":{"paths":["/pk"]}}`},
		{http.MethodPut, "/dbs/db/colls/c", coll},
		{http.MethodDelete, "/dbs/db/colls/c", ""},
		{http.MethodPost, "/dbs/db/colls/c/docs", `{"id":"3","pk":"p"}`},
		{http.MethodPost, "/dbs/db/colls/c/docs", batch},
		{http.MethodPut, "/dbs/db/colls/c/docs/1", item},
		{http.MethodPatch, "/dbs/db/colls/c/docs/1", `{"operations":[{"op":"set","path":"/v","value":3}]}`},
		{http.MethodDelete, "/dbs/db/colls/c/docs/1", ""},
		{http.MethodPut, "/offers/" + offers[0].ID, `{"content":{"offerThroughput":800}}`},
	}
}

// readHeaders are the headers that make a request (or part of it) a read,
// or that select the kind of write: every subset is tried.
var readHeaders = []struct{ name, value string }{
	{"x-ms-documentdb-isquery", "True"},
	{"x-ms-documentdb-query", "true"},
	{"Content-Type", "application/query+json"},
	{"x-ms-cosmos-is-query-plan-request", "True"},
	{"x-ms-documentdb-is-upsert", "True"},
	{"x-ms-cosmos-is-batch-request", "True"},
}

// TestReadOnlyKeyCannotWrite sends every write with the read-only key, with
// every combination of the headers that mark reads and select writes, and
// checks that the store is byte-for-byte unchanged after each. The same
// requests with the primary key do write, so the check is not vacuous.
func TestReadOnlyKeyCannotWrite(t *testing.T) {
	ts := newTestServer(t, Config{})
	ts.seed(t)
	before := ts.state(t)
	for _, wr := range ts.writeRequests(t) {
		for mask := 0; mask < 1<<len(readHeaders); mask++ {
			hdr := map[string]string{hdrPartitionKey: `["p"]`}
			var names []string
			for i, h := range readHeaders {
				if mask&(1<<i) != 0 {
					hdr[h.name] = h.value
					names = append(names, h.name)
				}
			}
			status, body := ts.do(ts.readOnly, wr.method, wr.path, []byte(wr.body), hdr)
			if after := ts.state(t); after != before {
				t.Fatalf("%s %s with the read-only key and headers %v changed the store (status %d: %s)",
					wr.method, wr.path, names, status, body)
			}
			if mask == 0 && status != http.StatusForbidden {
				t.Errorf("%s %s with the read-only key: status %d, want 403: %s", wr.method, wr.path, status, body)
			}
			if status < 300 && wr.method != http.MethodPost {
				t.Errorf("%s %s with the read-only key and headers %v succeeded (%d): %s", wr.method, wr.path, names, status, body)
			}
			if status == http.StatusForbidden && !strings.Contains(string(body), "read-only key") {
				t.Errorf("%s %s: 403 without naming the read-only key: %s", wr.method, wr.path, body)
			}
		}
	}
	// The same requests with the primary key write (each on a fresh store).
	for _, wr := range ts.writeRequests(t) {
		fresh := newTestServer(t, Config{})
		fresh.seed(t)
		before := fresh.state(t)
		hdr := map[string]string{hdrPartitionKey: `["p"]`}
		if strings.HasPrefix(wr.body, "[") {
			hdr["x-ms-cosmos-is-batch-request"] = "True"
		}
		status, body := fresh.do(fresh.primary, wr.method, wr.path, []byte(wr.body), hdr)
		if status >= 300 || fresh.state(t) == before {
			t.Errorf("%s %s with the primary key: status %d, store changed %v; want a write: %s",
				wr.method, wr.path, status, fresh.state(t) != before, body)
		}
	}
}
