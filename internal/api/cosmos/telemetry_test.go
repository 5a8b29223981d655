package cosmos

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// hotKey is a partition key value that /metrics shows only to key holders.
const hotKey = "customer-7f3a9"

// seedHotKey writes items under hotKey, so that it is the partition's
// largest and busiest logical key.
func (ts *testServer) seedHotKey(t *testing.T) {
	t.Helper()
	for _, id := range []string{"h1", "h2", "h3"} {
		body := `{"id":"` + id + `","pk":"` + hotKey + `","pad":"` + strings.Repeat("x", 500) + `"}`
		if st, b := ts.do(ts.primary, http.MethodPost, "/dbs/db/colls/c/docs", []byte(body),
			map[string]string{hdrPartitionKey: `["` + hotKey + `"]`}); st != http.StatusCreated {
			t.Fatalf("cannot write a hot-key item: %d %s", st, b)
		}
	}
}

// scrape GETs /metrics with the given Authorization header ("" for none).
func (ts *testServer) scrape(authorization string) (int, string) {
	r := httptest.NewRequest(http.MethodGet, MetricsPath, nil)
	if authorization != "" {
		r.Header.Set("Authorization", authorization)
	}
	status, body := ts.serve(r)
	return status, string(body)
}

func TestMetricsNeedAKey(t *testing.T) {
	ts := newTestServer(t, Config{})
	ts.seed(t)
	ts.seedHotKey(t)
	bearer := func(key []byte) string { return "Bearer " + base64.StdEncoding.EncodeToString(key) }

	if st, body := ts.scrape(""); st != http.StatusUnauthorized || strings.Contains(body, hotKey) {
		t.Errorf("anonymous scrape: %d, want 401: %s", st, body)
	}
	for _, h := range []string{"Bearer ", "Bearer nope", bearer([]byte("not the key")), "Bearer " + base64.StdEncoding.EncodeToString(ts.primary[:len(ts.primary)-1]), "Basic " + base64.StdEncoding.EncodeToString(ts.primary)} {
		if st, body := ts.scrape(h); st != http.StatusUnauthorized {
			t.Errorf("scrape with Authorization %q: %d, want 401: %s", h, st, body)
		}
	}
	for name, h := range map[string]string{"primary": bearer(ts.primary), "read-only": bearer(ts.readOnly), "read-only, lower-case scheme": "bearer " + base64.StdEncoding.EncodeToString(ts.readOnly)} {
		st, body := ts.scrape(h)
		if st != http.StatusOK || !strings.Contains(body, `key="[\"`+hotKey+`\"]"`) || !strings.Contains(body, "parsec_partition_items{") {
			t.Errorf("scrape with the %s key as bearer token: %d, want 200 with the hot key: %s", name, st, body)
		}
	}
	// A normal master-key signature works too.
	st, body := ts.do(ts.readOnly, http.MethodGet, MetricsPath, nil, nil)
	if st != http.StatusOK || !strings.Contains(string(body), hotKey) {
		t.Errorf("signed scrape with the read-only key: %d, want 200 with the hot key: %s", st, body)
	}
	if st, _ := ts.do(ts.primary, http.MethodPost, MetricsPath, nil, nil); st != http.StatusMethodNotAllowed {
		t.Errorf("POST /metrics: %d, want 405", st)
	}
}

func TestMetricsPublicHasNoKeyValues(t *testing.T) {
	ts := newTestServer(t, Config{MetricsPublic: true})
	ts.seed(t)
	ts.seedHotKey(t)
	st, body := ts.scrape("")
	if st != http.StatusOK || !strings.Contains(body, `parsec_partition_items{database="db",container="c"`) {
		t.Fatalf("anonymous scrape of public metrics: %d, want 200 with the partition series: %s", st, body)
	}
	if strings.Contains(body, hotKey) || strings.Contains(body, "hot_key") || strings.Contains(body, "key=") {
		t.Errorf("public metrics show partition key values: %s", body)
	}
	// A key holder still gets everything; a wrong key is still refused.
	if st, body := ts.scrape("Bearer " + base64.StdEncoding.EncodeToString(ts.readOnly)); st != http.StatusOK || !strings.Contains(body, hotKey) {
		t.Errorf("scrape of public metrics with the read-only key: %d, want 200 with the hot key", st)
	}
	if st, _ := ts.scrape("Bearer AAAA"); st != http.StatusUnauthorized {
		t.Errorf("scrape of public metrics with a wrong key: %d, want 401", st)
	}
}

// TestMetricsScrapesShareOneWalk scrapes concurrently from many goroutines
// and counts the walks over the partitions: one per refresh period of the
// injected clock, however many scrapers.
func TestMetricsScrapesShareOneWalk(t *testing.T) {
	var offset atomic.Int64 // nanoseconds added to the clock
	base := time.Now()
	now := func() time.Time { return base.Add(time.Duration(offset.Load())) }
	const refresh = 10 * time.Second
	ts := newTestServer(t, Config{Now: now, MetricsRefresh: refresh})
	ts.seed(t)
	ts.seedHotKey(t)
	bearer := "Bearer " + base64.StdEncoding.EncodeToString(ts.readOnly)
	scrapeMany := func(n int) {
		t.Helper()
		var wg sync.WaitGroup
		bodies := make([]string, n)
		statuses := make([]int, n)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses[i], bodies[i] = ts.scrape(bearer)
			}()
		}
		wg.Wait()
		for i := range bodies {
			if statuses[i] != http.StatusOK || !strings.Contains(bodies[i], hotKey) {
				t.Fatalf("scrape %d: %d: %s", i, statuses[i], bodies[i])
			}
		}
	}
	walks := func(want int64) {
		t.Helper()
		if got := ts.api.metrics.walks.Load(); got != want {
			t.Fatalf("partitions walked %d times, want %d", got, want)
		}
	}
	walks(0)
	scrapeMany(64)
	walks(1)
	offset.Store(int64(refresh - time.Nanosecond))
	scrapeMany(64)
	walks(1)
	offset.Store(int64(refresh))
	scrapeMany(64)
	walks(2)
	// A clock that steps back does not keep an old snapshot forever.
	offset.Store(0)
	scrapeMany(8)
	walks(3)
}
