package cosmos

import (
	"net/http"
	"strings"
	"testing"
)

// TestClassify pins the operation of the requests the SDKs send and of the
// header combinations that mix reads and writes: the first header in
// classify's order wins, and the kind decides writes.
func TestClassify(t *testing.T) {
	f := func(method, path, headers, want string, wantWrites bool) {
		t.Helper()
		h := http.Header{}
		for _, kv := range strings.Fields(headers) {
			k, v, _ := strings.Cut(kv, "=")
			h.Set(k, v)
		}
		segs, err := splitPath(path)
		if err != nil {
			t.Fatal(err)
		}
		op := classify(method, segs, h)
		if op.kind.String() != want || op.writes != wantWrites {
			t.Errorf("classify(%s %s %s) = %s (writes %v), want %s (writes %v)", method, path, headers, op.kind, op.writes, want, wantWrites)
		}
	}
	const docs = "/dbs/d/colls/c/docs"
	f("GET", "/", "", "read account", false)
	f("POST", "/", "x-ms-documentdb-isquery=True", "error", true)
	f("GET", "/dbs", "", "list databases", false)
	f("POST", "/dbs", "", "create database", true)
	f("POST", "/dbs", "x-ms-cosmos-is-query-plan-request=True", "create database", true)
	f("POST", "/dbs", "x-ms-documentdb-isquery=True", "query databases", false)
	f("DELETE", "/dbs/d", "x-ms-documentdb-isquery=True", "delete database", true)
	f("POST", "/dbs/d/colls", "x-ms-cosmos-is-batch-request=True", "create container", true)
	f("POST", "/dbs/d/colls", "Content-Type=application/query+json", "query containers", false)
	f("PUT", "/dbs/d/colls/c", "", "replace container", true)
	f("GET", docs, "", "read items feed", false)
	f("GET", docs, "A-IM=Incremental feed", "read the change feed", false)
	f("POST", docs, "", "create item", true)
	f("POST", docs, "x-ms-documentdb-is-upsert=true", "upsert item", true)
	f("POST", docs, "x-ms-documentdb-isquery=True", "query items", false)
	f("POST", docs, "x-ms-documentdb-query=TRUE x-ms-documentdb-is-upsert=True", "query items", false)
	f("POST", docs, "x-ms-cosmos-is-batch-request=True", "batch", true)
	f("POST", docs, "x-ms-cosmos-is-batch-request=True x-ms-documentdb-isquery=True", "batch", true)
	f("POST", docs, "x-ms-cosmos-is-batch-request=True Content-Type=application/query+json", "batch", true)
	f("POST", docs, "x-ms-cosmos-is-query-plan-request=True x-ms-cosmos-is-batch-request=True", "query plan", false)
	f("PUT", docs, "x-ms-documentdb-isquery=True", "error", true)
	f("GET", docs+"/i", "", "read item", false)
	f("PATCH", docs+"/i", "x-ms-documentdb-isquery=True", "patch item", true)
	f("DELETE", docs+"/i", "", "delete item", true)
	f("HEAD", docs+"/i", "", "error", false)
	f("GET", "/dbs/d/colls/c/pkranges", "", "read partition key ranges", false)
	f("POST", "/dbs/d/colls/c/pkranges", "x-ms-documentdb-isquery=True", "error", true)
	f("GET", "/dbs/d/colls/c/partitions", "", "read partition statistics", false)
	f("GET", "/offers", "", "list offers", false)
	f("POST", "/offers", "x-ms-documentdb-isquery=True", "query offers", false)
	f("POST", "/offers", "", "error", true)
	f("PUT", "/offers/abc", "x-ms-documentdb-isquery=True", "replace offer", true)
	f("GET", "/dbs/d/users", "", "list users", false)
	f("POST", "/dbs/d/users", "", "create user", true)
	f("POST", "/dbs/d/users", "x-ms-documentdb-isquery=True", "query users", false)
	f("POST", "/dbs/d/users", "x-ms-documentdb-is-upsert=True", "upsert user", true)
	f("PUT", "/dbs/d/users/u", "", "replace user", true)
	f("DELETE", "/dbs/d/users/u", "", "delete user", true)
	f("GET", "/dbs/d/users/u/permissions", "", "list permissions", false)
	f("POST", "/dbs/d/users/u/permissions", "Content-Type=application/query+json", "query permissions", false)
	f("POST", "/dbs/d/users/u/permissions", "", "create permission", true)
	f("GET", "/dbs/d/users/u/permissions/p", "", "read permission", false)
	f("PUT", "/dbs/d/users/u/permissions/p", "", "replace permission", true)
	f("DELETE", "/dbs/d/users/u/permissions/p", "", "delete permission", true)
	f("PATCH", "/dbs/d/users/u/permissions/p", "", "error", true)
	f("GET", "/dbs/d/users/u/other", "", "error", false)
	f("POST", "/dbs/d/colls/c/sprocs", "", "create script", true)
	f("POST", "/dbs/d/colls/c/sprocs/p", "", "execute stored procedure", true)
	f("POST", "/dbs/d/colls/c/triggers/t", "", "error", true)
	f("GET", "/dbs/d/colls/c/udfs", "", "list scripts", false)
	f("POST", "/dbs/d/colls/c/udfs", "Content-Type=application/query+json", "query scripts", false)
	f("PUT", "/dbs/d/colls/c/udfs/u", "", "replace script", true)
	f("DELETE", "/dbs/d/colls/c/triggers/t", "", "delete script", true)
	f("GET", "/dbs/d/colls/c/sprocs/p/x", "", "error", false)
	f("get", "/dbs", "", "error", true) // methods are case-sensitive: not a read
	f("post", docs, "x-ms-documentdb-isquery=True", "error", true)
}

// TestReadOnlyKeyReads: the read-only key still reads, queries and asks
// for query plans.
func TestReadOnlyKeyReads(t *testing.T) {
	ts := newTestServer(t, Config{})
	ts.seed(t)
	const q = `{"query":"SELECT * FROM c"}`
	for _, c := range []struct {
		method, path, body string
		hdr                map[string]string
	}{
		{"GET", "/dbs", "", nil},
		{"GET", "/dbs/db/colls/c", "", nil},
		{"GET", "/dbs/db/colls/c/docs/1", "", map[string]string{hdrPartitionKey: `["p"]`}},
		{"GET", "/dbs/db/colls/c/docs", "", nil},
		{"POST", "/dbs/db/colls/c/docs", q, map[string]string{"x-ms-documentdb-isquery": "True", "Content-Type": "application/query+json",
			"x-ms-documentdb-query-enablecrosspartition": "True"}},
		{"POST", "/dbs/db/colls/c/docs", q, map[string]string{"x-ms-cosmos-is-query-plan-request": "True", "Content-Type": "application/query+json"}},
		{"GET", "/dbs/db/colls/c/pkranges", "", nil},
		{"GET", "/offers", "", nil},
		{"POST", "/offers", q, map[string]string{"x-ms-documentdb-isquery": "True"}},
	} {
		if st, body := ts.do(ts.readOnly, c.method, c.path, []byte(c.body), c.hdr); st != http.StatusOK {
			t.Errorf("%s %s with the read-only key: %d, want 200: %s", c.method, c.path, st, body)
		}
	}
}

// TestTriggerHeaderKeys: the trigger headers are looked up by their
// canonical keys.
func TestTriggerHeaderKeys(t *testing.T) {
	for _, k := range []string{hdrPreTriggers, hdrPostTriggers} {
		if http.CanonicalHeaderKey(k) != k {
			t.Errorf("%q is not canonical", k)
		}
	}
	r, _ := http.NewRequest("POST", "/", nil)
	r.Header.Set("x-ms-documentdb-pre-trigger-include", "a, b")
	r.Header.Add("x-ms-documentdb-pre-trigger-include", "c")
	if got := triggerNames(r, hdrPreTriggers); strings.Join(got, "|") != "a|b|c" {
		t.Errorf("triggerNames = %q", got)
	}
}
