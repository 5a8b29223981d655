package cosmos

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Container definitions and headers as the service gives them: MultiHash of
// one path, '?' in item ids, the range id on item responses, quota and
// usage on a container read, and the quota of triggers.
func TestContainerAsTheServiceHasIt(t *testing.T) {
	ts := newTestServer(t, Config{})
	ts.seed(t)
	if st, b := ts.do(ts.primary, http.MethodPost, "/dbs/db/colls", []byte(`{"id":"mh","partitionKey":{"paths":["/pk"],"kind":"MultiHash","version":2}}`), nil); st != http.StatusCreated {
		t.Fatalf("MultiHash of one path: %d %s", st, b)
	}
	if st, b := ts.do(ts.primary, http.MethodPost, "/dbs/db/colls", []byte(`{"id":"empty","partitionKey":{"paths":["/pk"]},"indexingPolicy":{ }}`), nil); st != http.StatusCreated ||
		!strings.Contains(string(b), `"excludedPaths":[{"path":"/\"_etag\"/?"}]`) {
		t.Fatalf("an empty indexing policy is the default one: %d %s", st, b)
	}
	if st, b := ts.do(ts.primary, http.MethodPost, "/dbs/db/colls", []byte(`{"id":"bad","partitionKey":{"paths":["pk"],"kind":"Hash"}}`), nil); st != 400 ||
		strings.Count(string(b), "invalid partition key definition") != 1 {
		t.Fatalf("a path without '/': %d %s", st, b)
	}
	if st, b := ts.do(ts.primary, http.MethodPost, "/dbs/db/colls/c/docs", []byte(`{"id":"what?","pk":"p"}`), map[string]string{hdrPartitionKey: `["p"]`}); st != http.StatusCreated {
		t.Fatalf("an id with '?': %d %s", st, b)
	}
	get := func(path string, hdr map[string]string) http.Header {
		r, _ := ts.request(ts.primary, http.MethodGet, path, nil, hdr)
		w := httptest.NewRecorder()
		ts.api.ServeHTTP(w, r)
		if w.Code != 200 {
			t.Fatalf("GET %s: %d %s", path, w.Code, w.Body)
		}
		return clientHeader(w.Header())
	}
	if h := get("/dbs/db/colls/c/docs/what?", map[string]string{hdrPartitionKey: `["p"]`}); h.Get("x-ms-documentdb-partitionkeyrangeid") != "0" {
		t.Errorf("item read: range id %q, want 0", h.Get("x-ms-documentdb-partitionkeyrangeid"))
	}
	h := get("/dbs/db/colls/c", nil)
	if got := h.Get("x-ms-resource-usage"); !strings.Contains(got, "documentsCount=3;") || !strings.Contains(got, "storedProcedures=0;") {
		t.Errorf("usage %q, want the 3 items", got)
	}
	if got := h.Get("x-ms-resource-quota"); !strings.Contains(got, "triggers=25;") || !strings.Contains(got, "documentSize=2048;") {
		t.Errorf("quota %q", got)
	}
	if got := h.Get("x-ms-documentdb-collection-index-transformation-progress"); got != "100" {
		t.Errorf("index transformation progress %q, want 100", got)
	}
	for i := 0; i <= 25; i++ {
		body := fmt.Sprintf(`{"id":"t%d","body":"function () {}","triggerType":"Pre","triggerOperation":"All"}`, i)
		st, b := ts.do(ts.primary, http.MethodPost, "/dbs/db/colls/c/triggers", []byte(body), nil)
		if i < 25 && st != http.StatusCreated || i == 25 && (st != http.StatusForbidden || !strings.Contains(string(b), "quota")) {
			t.Fatalf("trigger %d: %d %s", i, st, b)
		}
	}
}
