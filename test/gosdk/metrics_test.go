package gosdk

import (
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/parsecdb/parsec/internal/auth"
	"github.com/parsecdb/parsec/internal/server"
)

// getMetrics fetches /metrics with an optional bearer key (base64).
func getMetrics(t *testing.T, s *server.Server, bearer string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.URL()+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestMetricsAuthentication: /metrics needs a key by default, and with
// MetricsPublic (--metrics-public) it is anonymous but shows no partition
// key values.
func TestMetricsAuthentication(t *testing.T) {
	const secret = "tenant-b41c"
	for _, public := range []bool{false, true} {
		s := startServer(t, server.Options{MetricsPublic: public})
		cc := setup(t, newClient(t, s, auth.EmulatorKey, nil), "db", "c", hashPK("/pk"), 0)
		_, err := cc.CreateItem(ctx(), azcosmos.NewPartitionKeyString(secret), []byte(`{"id":"1","pk":"`+secret+`"}`), nil)
		must(t, err, "create")

		st, body := getMetrics(t, s, "")
		switch {
		case !public && st != http.StatusUnauthorized:
			t.Errorf("anonymous scrape: %d, want 401", st)
		case public && (st != http.StatusOK || !strings.Contains(body, "parsec_partition_items{")):
			t.Errorf("anonymous scrape with --metrics-public: %d, want 200 with partition series: %s", st, body)
		case strings.Contains(body, secret):
			t.Errorf("anonymous scrape (public %v) shows the partition key value %q", public, secret)
		}
		st, body = getMetrics(t, s, readOnlyKey)
		if st != http.StatusOK || !strings.Contains(body, secret) {
			t.Errorf("scrape with the read-only key (public %v): %d, want 200 with the hot key %q: %s", public, st, secret, body)
		}
		wrong := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("w", 64)))
		if st, _ := getMetrics(t, s, wrong); st != http.StatusUnauthorized {
			t.Errorf("scrape with a wrong key (public %v): %d, want 401", public, st)
		}
	}
}
