package cosmos

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/epk"
)

// stateOutside returns a digest of the store's keys and values but those
// that a write to the logical partition with EPK keyEPK may change: the
// item, index and logical-partition keys holding that EPK, and the
// partitions' state records (LSN, counts). Any other change (another key's
// items, the catalog) changes it.
func (ts *testServer) stateOutside(t testing.TB, keyEPK string) [sha256.Size]byte {
	t.Helper()
	return ts.stateExcept(t, func(k, v []byte) bool {
		// A change-index (C) or resource-id index (R) entry belongs to
		// the item its value names.
		return k[0] == 'P' || k[0] != 'M' && bytes.Contains(k, []byte(keyEPK)) || (k[0] == 'C' || k[0] == 'R') && bytes.Contains(v, []byte(keyEPK))
	})
}

// FuzzResourceTokenStaysInGrant sends requests authorized by resource
// tokens, with fuzzed methods, paths, headers and bodies: a token for one
// partition key in mode All changes nothing outside that logical
// partition, a token in mode Read changes nothing at all, and no request
// gets a server error.
func FuzzResourceTokenStaysInGrant(f *testing.F) {
	ts := newTestServer(f, Config{})
	ts.seed(f)
	if st, b := ts.do(ts.primary, "POST", "/dbs/db/colls/c/docs", []byte(`{"id":"1","pk":"q"}`), map[string]string{hdrPartitionKey: `["q"]`}); st != http.StatusCreated {
		f.Fatalf("seed: %d %s", st, b)
	}
	if _, err := ts.eng.CreateContainer("db", engine.ContainerSpec{ID: "d", PartitionKey: epk.Definition{Kind: "Hash", Version: 2, Paths: []string{"/pk"}}}, engine.Throughput{}); err != nil {
		f.Fatal(err)
	}
	c, _ := ts.eng.Container("db", "c")
	keyEPK, err := c.Info().PartitionKey.EPK(epk.Key{epk.String("p")})
	if err != nil {
		f.Fatal(err)
	}
	mint := func(id, fields string) string {
		st, b := ts.do(ts.primary, "POST", "/dbs/db/users/u/permissions", []byte(`{"id":"`+id+`",`+fields+`}`), nil)
		if st != http.StatusCreated {
			f.Fatalf("permission %s: %d %s", id, st, b)
		}
		var p struct {
			Token string `json:"_token"`
		}
		if err := json.Unmarshal(b, &p); err != nil {
			f.Fatal(err)
		}
		return p.Token
	}
	keyAll := mint("key-all", `"permissionMode":"All","resource":"dbs/db/colls/c","resourcePartitionKey":["p"]`)
	read := mint("read", `"permissionMode":"Read","resource":"dbs/db/colls/c"`)
	methods := []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut,
		http.MethodPatch, http.MethodDelete, http.MethodOptions}
	paths := []string{"/", "/dbs", "/dbs/db", "/dbs/db/colls", "/dbs/db/colls/c", "/dbs/db/colls/c/docs",
		"/dbs/db/colls/c/docs/1", "/dbs/db/colls/d/docs", "/dbs/db/colls/d", "/dbs/db/colls/c/pkranges",
		"/dbs/db/colls/c/partitions", "/offers", "/dbs/db/users", "/dbs/db/users/u", "/dbs/db/users/u/permissions",
		"/dbs/db/users/u/permissions/key-all", "/dbs/db/colls/c/sprocs", "/metrics", "/dbs/db/colls/c/docs/2"}
	headers := []struct{ name, value string }{
		{"x-ms-documentdb-isquery", "True"},
		{"Content-Type", "application/query+json"},
		{"x-ms-cosmos-is-query-plan-request", "true"},
		{"x-ms-documentdb-is-upsert", "True"},
		{"x-ms-cosmos-is-batch-request", "True"},
		{"x-ms-cosmos-batch-atomic", "false"},
		{hdrPartitionKey, `["q"]`},
		{hdrPartitionKey, `["p"]`},
	}
	for i := range paths {
		for m := range methods {
			for _, flags := range []uint16{0, 1 << 8, 1 << 11, 1 << 12, 1<<12 | 1<<13, 1 << 14, 1 << 15, 1<<12 | 1<<13 | 1<<14} {
				f.Add(uint8(m), "", flags|uint16(i), false, []byte(`{"id":"9","pk":"q"}`))
			}
		}
	}
	f.Add(uint8(2), "", uint16(5|1<<12|1<<13), false, []byte(`[{"operationType":"Create","partitionKey":"[\"q\"]","resourceBody":{"id":"7","pk":"q"}}]`))
	f.Add(uint8(2), "", uint16(5|1<<12), false, []byte(`[{"operationType":"Delete","id":"1"}]`))
	f.Add(uint8(5), "", uint16(6|1<<14), true, []byte{})
	f.Add(uint8(3), "/dbs/db/users/u/permissions/read", uint16(0xff), true, []byte(`{"id":"read","permissionMode":"All","resource":"dbs/db/colls/c"}`))

	f.Fuzz(func(t *testing.T, method uint8, path string, flags uint16, useRead bool, body []byte) {
		m := "BREW"
		if int(method) < len(methods) {
			m = methods[method]
		}
		r := fuzzRequest(m, path, flags, paths, body)
		if r == nil {
			return
		}
		target := r.URL.Path
		tok := keyAll
		if useRead {
			tok = read
		}
		r.Header.Set("Authorization", url.QueryEscape(tok))
		for i, h := range headers {
			if flags&(1<<(8+i)) != 0 {
				r.Header.Set(h.name, h.value)
			}
		}
		outside, full := ts.stateOutside(t, keyEPK), ts.state(t)
		status, resp := ts.serve(r)
		if status >= 500 {
			t.Fatalf("%s %s with headers %v: server error %d: %s", m, target, r.Header, status, resp)
		}
		if useRead {
			if ts.state(t) != full {
				t.Fatalf("%s %s with headers %v changed the store with a Read token (status %d): %s", m, target, r.Header, status, resp)
			}
			return
		}
		if ts.stateOutside(t, keyEPK) != outside {
			t.Fatalf("%s %s with headers %v changed the store outside the granted key (status %d): %s", m, target, r.Header, status, resp)
		}
	})
}
