package cosmos

import (
	"net/http"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/auth"
)

// TestFarDatesAreRejected signs requests correctly but with an x-ms-date far
// from the server clock, each twice (the second use of a date text takes the
// parsed-date cache), and expects 401; dates at the window's edges pass.
func TestFarDatesAreRejected(t *testing.T) {
	now := time.Date(2026, 11, 23, 22, 30, 0, 0, time.UTC)
	ts := newTestServer(t, Config{Now: func() time.Time { return now }})
	get := func(date string) int {
		t.Helper()
		r, err := ts.request(ts.primary, http.MethodGet, "/dbs", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		r.Header.Set("x-ms-date", date)
		r.Header.Set("Authorization", auth.Header(auth.Sign(ts.primary, http.MethodGet, "dbs", "", date)))
		status, _ := ts.serve(r)
		return status
	}
	for _, date := range []string{
		"Sat, 01 Jan 2400 00:00:00 GMT",
		"Fri, 31 Dec 9999 23:59:59 GMT",
		"Mon, 01 Jan 0001 00:00:00 GMT",
		now.Add(15*time.Minute + time.Second).Format(http.TimeFormat),
		now.Add(-15*time.Minute - time.Second).Format(http.TimeFormat),
	} {
		for i := 0; i < 2; i++ {
			if status := get(date); status != http.StatusUnauthorized {
				t.Errorf("x-ms-date %q (try %d): status %d, want 401", date, i+1, status)
			}
		}
	}
	for _, date := range []string{
		now.Format(http.TimeFormat),
		now.Add(15 * time.Minute).Format(http.TimeFormat),
		now.Add(-15 * time.Minute).Format(http.TimeFormat),
	} {
		for i := 0; i < 2; i++ {
			if status := get(date); status != http.StatusOK {
				t.Errorf("x-ms-date %q (try %d): status %d, want 200", date, i+1, status)
			}
		}
	}
}
