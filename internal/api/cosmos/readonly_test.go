package cosmos

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/auth"
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
		{http.MethodPost, "/dbs/db/users", `{"id":"new"}`},
		{http.MethodPut, "/dbs/db/users/u", `{"id":"u2"}`},
		{http.MethodDelete, "/dbs/db/users/u", ""},
		{http.MethodPost, "/dbs/db/users/u/permissions", `{"id":"q","permissionMode":"All","resource":"dbs/db/colls/c"}`},
		{http.MethodPut, "/dbs/db/users/u/permissions/p", `{"id":"p","permissionMode":"All","resource":"dbs/db/colls/c"}`},
		{http.MethodDelete, "/dbs/db/users/u/permissions/p", ""},
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

// FuzzReadOnlyNeverWrites sends requests signed with the read-only key, with
// fuzzed methods, paths, header combinations and bodies, to a server over an
// in-memory store. The store must be unchanged after every request, a
// request that classify marks as a write must get 403, and no request may
// fail with a server error.
func FuzzReadOnlyNeverWrites(f *testing.F) {
	ts := newTestServer(f, Config{})
	ts.seed(f)
	before := ts.state(f)
	offer := ts.eng.Offers()[0].ID
	methods := []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut,
		http.MethodPatch, http.MethodDelete, http.MethodOptions}
	paths := []string{"/", "/dbs", "/dbs/db", "/dbs/db/colls", "/dbs/db/colls/c", "/dbs/db/colls/c/docs",
		"/dbs/db/colls/c/docs/1", "/dbs/db/colls/c/pkranges", "/dbs/db/colls/c/partitions", "/offers",
		"/offers/" + offer, "/dbs/db/colls/c/sprocs", "/dbs/db/users", "/dbs/db/users/u", "/dbs/db/users/u/permissions",
		"/dbs/db/users/u/permissions/p", "/dbs/nope/colls/c/docs/1"}
	// Headers by bit, from bit 8 of flags up.
	headers := []struct{ name, value string }{
		{"x-ms-documentdb-isquery", "True"},
		{"x-ms-documentdb-query", "TRUE"},
		{"Content-Type", "application/query+json"},
		{"x-ms-cosmos-is-query-plan-request", "true"},
		{"x-ms-documentdb-is-upsert", "True"},
		{"x-ms-cosmos-is-batch-request", "True"},
		{"x-ms-cosmos-batch-atomic", "false"},
		{"A-IM", "Incremental feed"},
	}
	for _, wr := range ts.writeRequests(f) {
		m := 0
		for m < len(methods) && methods[m] != wr.method {
			m++
		}
		for _, flags := range []uint16{0, 1 << 8, 1 << 10, 1<<13 | 1<<8, 1<<13 | 1<<10, 1<<11 | 1<<12, 0xff00} {
			f.Add(uint8(m), wr.path, flags|0xff, []byte(wr.body))
		}
	}
	f.Add(uint8(2), "/dbs/db/colls/c/docs", uint16(1<<8), []byte(`{"query":"SELECT * FROM c"}`))
	f.Add(uint8(255), "/dbs%2Fdb/colls/c/docs", uint16(0xff), []byte(`{"id":"9","pk":"p"}`))
	f.Add(uint8(2), "//dbs//db/colls/c/docs/", uint16(1<<13|0xff), []byte(`[{"operationType":"Delete","id":"1"}]`))

	f.Fuzz(func(t *testing.T, method uint8, path string, flags uint16, body []byte) {
		m := "BREW"
		if int(method) < len(methods) {
			m = methods[method]
		} else if method < 128 {
			m = strings.ToLower(methods[int(method)%len(methods)])
		}
		// A path from the list, or the fuzzed one used as the raw URL path.
		r := fuzzRequest(m, path, flags, paths, body)
		if r == nil {
			return
		}
		target := r.URL.Path
		date := time.Now().UTC().Format(http.TimeFormat)
		typ, link := auth.Resource(r.URL.Path)
		r.Header.Set("x-ms-date", date)
		r.Header.Set("Authorization", auth.Header(auth.Sign(ts.readOnly, m, typ, link, date)))
		r.Header.Set(hdrPartitionKey, `["p"]`)
		for i, h := range headers {
			if flags&(1<<(8+i)) != 0 {
				r.Header.Set(h.name, h.value)
			}
		}
		status, resp := ts.serve(r)
		if after := ts.state(t); after != before {
			t.Fatalf("%s %s with headers %v changed the store with the read-only key (status %d): %s", m, target, r.Header, status, resp)
		}
		if status >= 500 {
			t.Fatalf("%s %s with headers %v: server error %d: %s", m, target, r.Header, status, resp)
		}
		if r.URL.Path == MetricsPath || r.URL.Path == ReadyPath {
			return
		}
		segs, err := splitPath(r.URL.EscapedPath())
		if err != nil {
			return
		}
		if op := classify(m, segs, r.Header); op.writes && status != http.StatusForbidden {
			t.Fatalf("%s %s with headers %v is %s, a write, but the read-only key got %d: %s", m, target, r.Header, op.kind, status, resp)
		}
	})
}
