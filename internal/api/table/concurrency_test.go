package table

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"testing"
)

// TestConcurrentMerges runs insert-or-merges of one entity from several
// clients at once, each adding properties of its own: the read, merge and
// conditional replace of each must lose none of the others' properties.
func TestConcurrentMerges(t *testing.T) {
	ts := newTestServer(t)
	ts.mustDo(t, 201, "POST", "/Tables", []byte(`{"TableName":"conc"}`))
	const clients, each = 6, 5
	var wg sync.WaitGroup
	errs := make(chan string, clients*each)
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				body := []byte(fmt.Sprintf(`{"C%dI%d":%d}`, c, i, i))
				for try := 0; ; try++ {
					st, _, b := ts.do(t, "MERGE", "/conc(PartitionKey='p',RowKey='r')", body, nil)
					if st == http.StatusNoContent {
						break
					}
					// 503 ServerBusy after the server's own retries: a
					// client retries it, as the SDKs do.
					if st != http.StatusServiceUnavailable || try == 20 {
						errs <- fmt.Sprintf("merge: %d %s", st, b)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	b := ts.mustDo(t, 200, "GET", "/conc(PartitionKey='p',RowKey='r')", nil)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for c := range clients {
		for i := range each {
			if m[fmt.Sprintf("C%dI%d", c, i)] != float64(i) {
				t.Errorf("C%dI%d was lost: %s", c, i, b)
			}
		}
	}
}

// TestQueryRouting checks that queries are charged in request units, and
// that one fixing the PartitionKey reads only the physical partition of
// its logical partition, while one that does not reads every partition:
// each partition's consumed request units tell which it served.
func TestQueryRouting(t *testing.T) {
	ts := newTestServerWith(t, 24000) // four physical partitions
	ts.mustDo(t, 201, "POST", "/Tables", []byte(`{"TableName":"charge"}`))
	c, err := ts.eng.Container(Database, "charge")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(c.Partitions()); n != 4 {
		t.Fatalf("%d partitions, want 4", n)
	}
	for k := range 20 {
		for r := range 10 {
			body := fmt.Sprintf(`{"PartitionKey":"k%d","RowKey":"r%d","K":%d}`, k, r, k)
			ts.mustDo(t, 201, "POST", "/charge", []byte(body))
		}
	}
	consumed := func() map[string]float64 {
		st, err := c.Stats(1)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]float64{}
		for _, p := range st {
			m[p.ID] = p.ConsumedRUs
		}
		return m
	}
	query := func(f string) (charged float64, served int) {
		before := consumed()
		st, h, b := ts.do(t, "GET", "/charge()?$filter="+url.QueryEscape(f), nil, nil)
		if st != 200 {
			t.Fatalf("%s: %d %s", f, st, b)
		}
		var page struct{ Value []any }
		_ = json.Unmarshal(b, &page)
		if len(page.Value) != 10 {
			t.Fatalf("%s returned %d entities, want 10", f, len(page.Value))
		}
		charged, err := strconv.ParseFloat(h.Get("x-ms-request-charge"), 64)
		if err != nil || charged <= 0 {
			t.Fatalf("%s: x-ms-request-charge %q", f, h.Get("x-ms-request-charge"))
		}
		for id, ru := range consumed() {
			if ru > before[id] {
				served++
			}
		}
		return charged, served
	}
	if _, n := query("PartitionKey eq 'k7'"); n != 1 {
		t.Errorf("a query fixing the PartitionKey was served by %d partitions, want 1", n)
	}
	// A not is not translated into the prefilter: every partition is read.
	if _, n := query("not (K ne 7)"); n != 4 {
		t.Errorf("a query of every partition was served by %d partitions, want 4", n)
	}
}
