package cosmos

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	adv "github.com/parsecdb/parsec/internal/advise"
)

// The advise endpoint runs the advisor on the container's own documents:
// the current key is ranked beside the candidates given, on the container's
// real partitions, with what the container holds.
func TestAdviseOnALiveContainer(t *testing.T) {
	ts := newTestServer(t, Config{})
	ts.seed(t)
	for i := 0; i < 40; i++ {
		body := fmt.Sprintf(`{"id":"d%d","pk":"k%d","day":"2026-11-%02d","v":%d}`, i, i%8, 1+i%3, i)
		if st, b := ts.do(ts.primary, http.MethodPost, "/dbs/db/colls/c/docs", []byte(body), map[string]string{hdrPartitionKey: fmt.Sprintf(`["k%d"]`, i%8)}); st != http.StatusCreated {
			t.Fatalf("create: %d %s", st, b)
		}
	}
	st, b := ts.do(ts.readOnly, http.MethodPost, "/dbs/db/colls/c/advise", []byte(`{"candidates":["/day"]}`), nil)
	if st != http.StatusOK {
		t.Fatalf("advise: %d %s", st, b)
	}
	var rep adv.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Source.Documents != 42 || !rep.Source.Live || rep.Source.Name != "db/c" {
		t.Errorf("source = %+v, want the 42 documents of db/c, live", rep.Source)
	}
	if rep.Partitions != 1 || rep.PartitionsFrom != "the container's ranges" {
		t.Errorf("partitions = %d from %q, want the container's one range", rep.Partitions, rep.PartitionsFrom)
	}
	var keys []string
	for _, c := range rep.Candidates {
		keys = append(keys, c.Key)
		if c.Key == "/pk" && (!c.Current || c.DistinctValues != 9) {
			t.Errorf("current key: current=%v distinct=%d, want true and 9 (p and k0..k7)", c.Current, c.DistinctValues)
		}
		if c.Key == "/day" && c.DistinctValues != 4 {
			t.Errorf("/day: distinct=%d, want 4 (three days, and none in the two seeded items)", c.DistinctValues)
		}
	}
	if len(keys) != 2 || !strings.Contains(strings.Join(keys, " "), "/pk") || !strings.Contains(strings.Join(keys, " "), "/day") {
		t.Errorf("candidates = %v, want the current /pk and the given /day", keys)
	}

	// The HTML report, for a client that asks for it.
	st, b = ts.do(ts.primary, http.MethodPost, "/dbs/db/colls/c/advise", nil, map[string]string{"Accept": "text/html"})
	if st != http.StatusOK || !strings.HasPrefix(string(b), "<!DOCTYPE html>") || !strings.Contains(string(b), "Partition key advice") {
		t.Errorf("HTML report: %d %.80s", st, b)
	}
}

func TestAdviseRefusesWhatItCannotDo(t *testing.T) {
	ts := newTestServer(t, Config{})
	ts.seed(t)
	for _, tc := range []struct {
		name, path, body string
		status           int
		msg              string
	}{
		{"more documents than allowed", "/dbs/db/colls/c/advise", `{"maxDocuments":1}`, 400, "holds 2 documents, more than the 1"},
		{"maxDocuments out of range", "/dbs/db/colls/c/advise", `{"maxDocuments":-3}`, 400, "maxDocuments must be between 1 and"},
		{"bad candidate", "/dbs/db/colls/c/advise", `{"candidates":["concat(/a"]}`, 400, `at column 10: expected`},
		{"unknown field", "/dbs/db/colls/c/advise", `{"candidate":["/a"]}`, 400, `unknown field \"candidate\"`},
		{"not JSON", "/dbs/db/colls/c/advise", `{"candidates":`, 400, "not"},
		{"no container", "/dbs/db/colls/nope/advise", ``, 404, "nope"},
		{"GET", "/dbs/db/colls/c/advise", ``, 405, "GET is not allowed on the partition-key advisor"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			method := http.MethodPost
			if tc.name == "GET" {
				method = http.MethodGet
			}
			st, b := ts.do(ts.primary, method, tc.path, []byte(tc.body), nil)
			if st != tc.status || !strings.Contains(string(b), tc.msg) {
				t.Errorf("%d %s, want %d with %q", st, b, tc.status, tc.msg)
			}
		})
	}
	// An empty container has nothing to analyze.
	if st, b := ts.do(ts.primary, http.MethodPost, "/dbs/db/colls", []byte(`{"id":"empty","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2}}`), nil); st != http.StatusCreated {
		t.Fatalf("create container: %d %s", st, b)
	}
	if st, b := ts.do(ts.primary, http.MethodPost, "/dbs/db/colls/empty/advise", nil, nil); st != 400 || !strings.Contains(string(b), "holds no documents") {
		t.Errorf("empty container: %d %s", st, b)
	}
	// One analysis at a time.
	ts.api.advising.Store(true)
	if st, b := ts.do(ts.primary, http.MethodPost, "/dbs/db/colls/c/advise", nil, nil); st != http.StatusTooManyRequests || !strings.Contains(string(b), "another partition-key analysis is running") {
		t.Errorf("second analysis: %d %s", st, b)
	}
	ts.api.advising.Store(false)
	if st, b := ts.do(ts.primary, http.MethodPost, "/dbs/db/colls/c/advise", nil, nil); st != http.StatusOK {
		t.Errorf("after the first finished: %d %s", st, b)
	}
}

// The advise endpoint holds at most advise.DefaultSampleBytes of the
// container's documents, whatever their number: over 76 MB of documents
// it analyzes an even sample within the budget, and its report says so.
func TestAdviseSampleWithinItsBudget(t *testing.T) {
	ts := newTestServer(t, Config{})
	ts.seed(t)
	pad := strings.Repeat("x", 1900<<10)
	const n = 40
	for i := 0; i < n; i++ {
		body := fmt.Sprintf(`{"id":"d%d","pk":"k%d","pad":%q}`, i, i, pad)
		if st, b := ts.do(ts.primary, http.MethodPost, "/dbs/db/colls/c/docs", []byte(body), map[string]string{hdrPartitionKey: fmt.Sprintf(`["k%d"]`, i)}); st != http.StatusCreated {
			t.Fatalf("create: %d %.200s", st, b)
		}
	}
	st, b := ts.do(ts.readOnly, http.MethodPost, "/dbs/db/colls/c/advise", nil, nil)
	if st != http.StatusOK {
		t.Fatalf("advise: %d %.300s", st, b)
	}
	var rep adv.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Source.Bytes > adv.DefaultSampleBytes || rep.Source.Documents < n/4 || rep.Source.Documents >= n {
		t.Errorf("source = %+v, want part of the %d documents, within %d bytes", rep.Source, n+2, adv.DefaultSampleBytes)
	}
	if len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], fmt.Sprintf("the sample's budget of %d bytes", adv.DefaultSampleBytes)) {
		t.Errorf("warnings = %q, want one saying the sample was capped", rep.Warnings)
	}
}
