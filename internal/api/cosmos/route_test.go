package cosmos

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestFailedRequestKeepsHandlerHeaders checks that an error response sent by
// the router carries what the handler set before it failed: the container
// path, the request charge and the session token of the failed write or
// read (not the neutral one).
func TestFailedRequestKeepsHandlerHeaders(t *testing.T) {
	ts := newTestServer(t, Config{})
	ts.seed(t)
	rid := ts.eng.Offers()[1].ResourceRid
	pk := map[string]string{hdrPartitionKey: `["p"]`}
	f := func(name, method, path, body string, hdr map[string]string, wantStatus int, wantCode string) {
		t.Helper()
		r, err := ts.request(ts.primary, method, path, []byte(body), hdr)
		if err != nil {
			t.Fatal(err)
		}
		w := httptest.NewRecorder()
		ts.api.ServeHTTP(w, r)
		h := clientHeader(w.Result().Header)
		if w.Code != wantStatus {
			t.Fatalf("%s: status %d, want %d: %s", name, w.Code, wantStatus, w.Body)
		}
		if !strings.Contains(w.Body.String(), `"code":"`+wantCode+`"`) {
			t.Fatalf("%s: body %s, want code %s", name, w.Body, wantCode)
		}
		if got := h.Get("x-ms-content-path"); got != rid {
			t.Fatalf("%s: x-ms-content-path %q, want %q", name, got, rid)
		}
		if got := h.Get("x-ms-request-charge"); got == "" {
			t.Fatalf("%s: no x-ms-request-charge", name)
		}
		if got := h.Get("x-ms-session-token"); !strings.HasPrefix(got, "0:-1#") || got == vNeutralSession[0] {
			t.Fatalf("%s: x-ms-session-token %q, want the partition's session", name, got)
		}
	}
	f("create conflict", http.MethodPost, "/dbs/db/colls/c/docs", `{"id":"1","pk":"p"}`, pk, http.StatusConflict, "Conflict")
	f("replace precondition", http.MethodPut, "/dbs/db/colls/c/docs/1", `{"id":"1","pk":"p"}`,
		map[string]string{hdrPartitionKey: `["p"]`, "If-Match": `"stale"`}, http.StatusPreconditionFailed, "PreconditionFailed")
	f("read missing", http.MethodGet, "/dbs/db/colls/c/docs/nope", "", pk, http.StatusNotFound, "NotFound")
}
