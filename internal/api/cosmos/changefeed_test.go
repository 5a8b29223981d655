package cosmos

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The change feed over the protocol: a page from the beginning, its etag
// as the position, 304 when nothing is new, and the modes not served.
func TestChangeFeedOverTheProtocol(t *testing.T) {
	ts := newTestServer(t, Config{})
	ts.seed(t)
	hdr := map[string]string{"A-IM": "Incremental feed", hdrRangeID: "0"}
	st, body := ts.do(ts.primary, http.MethodGet, "/dbs/db/colls/c/docs", nil, hdr)
	if st != http.StatusOK || !strings.Contains(string(body), `"_count":2`) {
		t.Fatalf("from the beginning: %d %s", st, body)
	}
	r, _ := ts.request(ts.primary, http.MethodGet, "/dbs/db/colls/c/docs", nil, hdr)
	w := httptest.NewRecorder()
	ts.api.ServeHTTP(w, r)
	etag := clientHeader(w.Header()).Get("Etag")
	if !strings.HasPrefix(etag, `"`) {
		t.Fatalf("etag %q", etag)
	}
	hdr["If-None-Match"] = etag
	if st, body := ts.do(ts.primary, http.MethodGet, "/dbs/db/colls/c/docs", nil, hdr); st != http.StatusNotModified {
		t.Fatalf("nothing new: %d %s", st, body)
	}
	hdr["A-IM"] = "Full-Fidelity Feed"
	if st, body := ts.do(ts.primary, http.MethodGet, "/dbs/db/colls/c/docs", nil, hdr); st != http.StatusBadRequest || !strings.Contains(string(body), "changeFeedPolicy.retentionDuration") {
		t.Fatalf("all versions mode on a container without a change feed policy: %d %s", st, body)
	}
}
