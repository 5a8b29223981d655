package cosmos

import (
	"net/http"
	"strings"
	"testing"
)

// The partition key delete: it needs the primary key and a partition key,
// and deletes exactly that logical partition.
func TestDeletePartitionKey(t *testing.T) {
	ts := newTestServer(t, Config{})
	ts.seed(t)
	if st, b := ts.do(ts.primary, http.MethodPost, "/dbs/db/colls/c/docs", []byte(`{"id":"3","pk":"other"}`), map[string]string{hdrPartitionKey: `["other"]`}); st != http.StatusCreated {
		t.Fatalf("create: %d %s", st, b)
	}
	const path = "/dbs/db/colls/c/operations/partitionkeydelete"
	if st, b := ts.do(ts.readOnly, http.MethodPost, path, nil, map[string]string{hdrPartitionKey: `["p"]`}); st != http.StatusForbidden {
		t.Fatalf("with the read-only key: %d %s", st, b)
	}
	if st, b := ts.do(ts.primary, http.MethodPost, path, nil, nil); st != http.StatusBadRequest || !strings.Contains(string(b), "x-ms-documentdb-partitionkey") {
		t.Fatalf("without a partition key: %d %s", st, b)
	}
	if st, b := ts.do(ts.primary, http.MethodPost, path, nil, map[string]string{hdrPartitionKey: `["p"]`}); st != http.StatusOK {
		t.Fatalf("delete: %d %s", st, b)
	}
	for id, want := range map[string]int{"1": 404, "2": 404, "3": 200} {
		pk := `["p"]`
		if id == "3" {
			pk = `["other"]`
		}
		if st, _ := ts.do(ts.primary, http.MethodGet, "/dbs/db/colls/c/docs/"+id, nil, map[string]string{hdrPartitionKey: pk}); st != want {
			t.Errorf("item %s after the delete: %d, want %d", id, st, want)
		}
	}
}
