package cosmos

import (
	"net/http"
	"strings"
	"testing"
)

// TestAccountEndpoint checks that the account advertises its endpoint with
// exactly one trailing slash, whatever --advertise ends with.
func TestAccountEndpoint(t *testing.T) {
	for _, adv := range []string{"http://db.example:8081", "http://db.example:8081/", "http://db.example:8081//"} {
		ts := newTestServer(t, Config{Advertise: adv})
		st, b := ts.do(ts.primary, http.MethodGet, "/", nil, nil)
		if st != http.StatusOK || !strings.Contains(string(b), `"databaseAccountEndpoint":"http://db.example:8081/"`) {
			t.Fatalf("--advertise %s: %d %s", adv, st, b)
		}
	}
}
