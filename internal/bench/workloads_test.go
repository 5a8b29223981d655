package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/auth"
	"github.com/parsecdb/parsec/internal/server"
)

// startParsec starts an in-memory Parsec server in this process that never
// throttles, so that every operation of a run must succeed.
func startParsec(t *testing.T) string {
	t.Helper()
	s, err := server.Start(server.Options{InMemory: true, Listen: "127.0.0.1:0", NoThrottle: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	})
	return s.URL()
}

// checkMix checks that each operation kind of the workload ran about its
// share of the operations: within five standard deviations of the binomial
// count, plus one.
func checkMix(t *testing.T, res *Result) {
	t.Helper()
	wl := Workloads[res.Workload]
	total := 0
	for _, w := range wl.Mix {
		total += w.Weight
	}
	n := float64(res.Operations)
	for _, w := range wl.Mix {
		p := float64(w.Weight) / float64(total)
		or := res.ByOperation[w.Op.String()]
		if or == nil {
			t.Fatalf("%s: no %s operations: %v", res.Workload, w.Op, res.ByOperation)
		}
		want := n * p
		if got := float64(or.Operations); math.Abs(got-want) > 5*math.Sqrt(n*p*(1-p))+1 {
			t.Fatalf("%s: %v %s operations of %v, want about %.0f", res.Workload, got, w.Op, n, want)
		}
	}
	if len(res.ByOperation) != len(wl.Mix) {
		t.Fatalf("%s: operation kinds %v", res.Workload, res.ByOperation)
	}
}

// TestWorkloadsAgainstParsec runs every workload that addresses items for
// a fixed number of operations against a real Parsec server, and checks
// that all of them succeeded, in the workload's proportions, and that the
// queries returned what the loaded items imply: with 2000 items every
// partition key has exactly two.
func TestWorkloadsAgainstParsec(t *testing.T) {
	url := startParsec(t)
	const items = 2000
	run := func(o Options) *Result {
		t.Helper()
		o.Endpoint, o.Items, o.ItemSize, o.Duration = url, items, 512, 2*time.Minute
		if o.Client == "" {
			o.Client = ClientRaw
		}
		res, log := runBench(t, o)
		if res.Errors != 0 || res.Throttled != 0 || res.Operations != uint64(o.Operations) || res.Interrupted {
			t.Fatalf("%s: %d of %d operations succeeded, errors %v %v\n%s", o.Workload, res.Operations, o.Operations, res.ErrorsByStatus, res.ErrorSamples, log)
		}
		checkMix(t, res)
		t.Logf("%s: %.0f ops/s, p99 %.2f ms, %.1f RU/op", o.Workload, res.Throughput, res.Latency.P99, res.RequestCharge/float64(res.Operations))
		return res
	}

	// Container "ro": its items never change id, key or number.
	res := run(Options{Workload: "query-pk", Container: "ro", Operations: 400})
	if q := res.ByOperation["query-pk"]; q.Rows != 2*q.Operations || q.Requests != q.Operations {
		t.Fatalf("query-pk: %d rows in %d requests for %d queries, want 2 rows a query", q.Rows, q.Requests, q.Operations)
	}
	// One item a page: every query follows the continuation to a second
	// page at least, and still gets both items.
	for _, client := range []string{ClientNetHTTP, ClientRaw} {
		res = run(Options{Workload: "query-pk", Container: "ro", Operations: 200, PageSize: 1, Client: client})
		if q := res.ByOperation["query-pk"]; q.Rows != 2*q.Operations || q.Requests < 2*q.Operations {
			t.Fatalf("query-pk, 1 item a page, %s: %d rows in %d requests for %d queries", client, q.Rows, q.Requests, q.Operations)
		}
	}
	res = run(Options{Workload: "query-cross", Container: "ro", Operations: 40})
	if q := res.ByOperation["query-cross"]; q.Rows != 10*q.Operations {
		t.Fatalf("query-cross: %d rows for %d queries, want 10 each", q.Rows, q.Operations)
	}
	// Three items a page: the cross-partition continuation is followed too.
	res = run(Options{Workload: "query-cross", Container: "ro", Operations: 20, PageSize: 3, Client: ClientNetHTTP})
	if q := res.ByOperation["query-cross"]; q.Rows != 10*q.Operations || q.Requests < 4*q.Operations {
		t.Fatalf("query-cross, 3 items a page: %d rows in %d requests for %d queries", q.Rows, q.Requests, q.Operations)
	}
	// Vector search across partitions: ten rows, in pages of three.
	res = run(Options{Workload: "vector", Container: "ro", Operations: 20, PageSize: 3, Client: ClientNetHTTP})
	if q := res.ByOperation["vector"]; q.Rows != 10*q.Operations || q.Requests < 4*q.Operations {
		t.Fatalf("vector, 3 items a page: %d rows in %d requests for %d queries", q.Rows, q.Requests, q.Operations)
	}
	for _, wl := range []string{"ycsb-a", "ycsb-b", "ycsb-c"} {
		run(Options{Workload: wl, Container: "ro", Operations: 2000, Distribution: DistZipfian})
	}

	// Container "rmw": skewed read-modify-writes, so that workers collide on
	// hot items. The versions must add up to the successful ones: none lost.
	var rmwOK uint64
	for _, o := range []Options{
		{Workload: "rmw", Operations: 1000, Client: ClientNetHTTP},
		{Workload: "ycsb-f", Operations: 2000},
	} {
		o.Container, o.Distribution, o.Concurrency = "rmw", DistZipfian, 8
		o.Endpoint, o.Items, o.ItemSize, o.Duration = url, items, 512, 2*time.Minute
		res, log := runBench(t, o)
		// 412s are the conflicts; nothing else may fail.
		if res.Errors != res.ErrorsByStatus["412"] || res.Throttled != 0 || res.Operations+res.Errors != uint64(o.Operations) {
			t.Fatalf("%s: %+v\n%s", o.Workload, res, log)
		}
		checkMixOf(t, res, o.Operations)
		rmw := res.ByOperation["rmw"]
		if rmw.Requests < 2*rmw.Operations {
			t.Fatalf("%s: %d requests for %d read-modify-writes", o.Workload, rmw.Requests, rmw.Operations)
		}
		rmwOK += rmw.Operations
		t.Logf("%s: %d read-modify-writes, %d conflicts", o.Workload, rmw.Operations, res.Errors)
	}
	if sum := sumVersions(t, url, "rmw", items); sum != rmwOK {
		t.Fatalf("versions sum to %d after %d successful read-modify-writes", sum, rmwOK)
	}

	// Container "ins": inserts. The latest distribution reads only items
	// whose insert was answered, so none of its reads may miss.
	res = run(Options{Workload: "ycsb-d", Container: "ins", Operations: 3000, Concurrency: 8})
	if res.Distribution != DistLatest || res.ByOperation["create"].Operations == 0 {
		t.Fatalf("ycsb-d: distribution %q, %d creates", res.Distribution, res.ByOperation["create"].Operations)
	}
	res = run(Options{Workload: "ycsb-e", Container: "ins", Operations: 600})
	if s := res.ByOperation["scan"]; s.Rows < s.Operations || s.Rows > MaxScanLength*s.Operations {
		t.Fatalf("ycsb-e: %d rows for %d scans", s.Rows, s.Operations)
	}
}

// checkMixOf is checkMix for a run whose failed operations count too.
func checkMixOf(t *testing.T, res *Result, total int64) {
	t.Helper()
	r := *res
	r.ByOperation = map[string]*OpResult{}
	for k, v := range res.ByOperation {
		c := *v
		c.Operations += c.Errors + c.Throttled
		r.ByOperation[k] = &c
	}
	r.Operations = uint64(total)
	checkMix(t, &r)
}

// testWorker returns a worker for direct requests to a container.
func testWorker(t *testing.T, url, container string, items int) *worker {
	t.Helper()
	o := Options{Endpoint: url, Container: container, Items: items, ItemSize: 512, Client: ClientRaw}
	o.SetDefaults()
	key, _ := auth.DecodeKey(o.Key)
	c, err := newClient(&o, key)
	if err != nil {
		t.Fatal(err)
	}
	ks := newKeyspace(&o, 1)
	ks.run = "test"
	w := newWorker(context.Background(), 0, c, &o, ks, 1)
	t.Cleanup(func() { w.s.close(); c.close() })
	return w
}

// sumVersions reads items 0..items-1 and adds up their "v".
func sumVersions(t *testing.T, url, container string, items int) uint64 {
	t.Helper()
	w := testWorker(t, url, container, items)
	var sum uint64
	for n := range items {
		if st, err := w.do(OpRead, n); err != nil || st != http.StatusOK {
			t.Fatalf("read of item %d: %d %v", n, st, err)
		}
		sum += parseVersion(w.reply.body)
	}
	return sum
}

// queryItems is the n and pk of the documents of the last query page.
type queryItem struct {
	ID string `json:"id"`
	PK string `json:"pk"`
	N  int    `json:"n"`
}

func lastPage(t *testing.T, w *worker) []queryItem {
	t.Helper()
	var page struct {
		Documents []queryItem
		Count     int `json:"_count"`
	}
	if err := json.Unmarshal(w.reply.body, &page); err != nil {
		t.Fatalf("query page %q: %v", w.reply.body, err)
	}
	if page.Count != len(page.Documents) || w.reply.itemCount != page.Count {
		t.Fatalf("page of %d documents says _count %d, x-ms-item-count %d", len(page.Documents), page.Count, w.reply.itemCount)
	}
	return page.Documents
}

// TestQueriesReturnTheirItems sends single queries and checks their results
// item by item: query-pk returns exactly the loaded items of the key,
// query-cross the ten largest n in descending order, a scan the items of
// one key from n on in ascending order, at most its TOP of them.
func TestQueriesReturnTheirItems(t *testing.T) {
	url := startParsec(t)
	const items = 3000 // three items a key: k, k+1000, k+2000
	runBench(t, Options{Endpoint: url, Workload: "read", Container: "q", Items: items, ItemSize: 512, Operations: 1, Duration: time.Minute})
	w := testWorker(t, url, "q", items)
	ids := func(docs []queryItem) []string {
		var out []string
		for _, d := range docs {
			out = append(out, d.ID)
		}
		slices.Sort(out)
		return out
	}
	for _, k := range []int{0, 7, 999} {
		if st, err := w.do(OpQueryPK, k+1000); err != nil || st != http.StatusOK {
			t.Fatalf("query-pk p%d: %d %v", k, st, err)
		}
		want := []string{fmt.Sprintf("i%d", k), fmt.Sprintf("i%d", k+1000), fmt.Sprintf("i%d", k+2000)}
		slices.Sort(want)
		if got := ids(lastPage(t, w)); !slices.Equal(got, want) {
			t.Fatalf("query-pk p%d returned %v, want %v", k, got, want)
		}
	}

	if st, err := w.do(OpQueryCross, 0); err != nil || st != http.StatusOK {
		t.Fatalf("query-cross: %d %v", st, err)
	}
	var ns []int
	for _, d := range lastPage(t, w) {
		ns = append(ns, d.N)
	}
	if want := []int{2999, 2998, 2997, 2996, 2995, 2994, 2993, 2992, 2991, 2990}; !slices.Equal(ns, want) {
		t.Fatalf("query-cross returned n %v, want %v", ns, want)
	}

	for _, tc := range []struct{ n, top int }{{5, 100}, {5, 2}, {1005, 100}, {2005, 1}, {2005, 50}} {
		if st, err := w.query(OpScan, tc.n, tc.top, time.Now()); err != nil || st != http.StatusOK {
			t.Fatalf("scan from %d: %d %v", tc.n, st, err)
		}
		var got []int
		for _, d := range lastPage(t, w) {
			if d.PK != "p"+strconv.Itoa(tc.n%PartitionKeys) {
				t.Fatalf("scan from %d returned item %s of key %s", tc.n, d.ID, d.PK)
			}
			got = append(got, d.N)
		}
		var want []int
		for m := tc.n; m < items && len(want) < tc.top; m += PartitionKeys {
			want = append(want, m)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("scan TOP %d from %d returned n %v, want %v", tc.top, tc.n, got, want)
		}
	}

	// A read-modify-write sends the etag of its read and bumps the version.
	for range 3 {
		if st, err := w.do(OpRMW, 42); err != nil || st != http.StatusOK {
			t.Fatalf("rmw: %d %v: %s", st, err, w.reply.body)
		}
	}
	if st, err := w.do(OpRead, 42); err != nil || st != http.StatusOK || parseVersion(w.reply.body) != 3 || len(w.reply.etag) == 0 {
		t.Fatalf("after 3 read-modify-writes item 42 has v %d, etag %q (%d %v)", parseVersion(w.reply.body), w.reply.etag, st, err)
	}
	// A replace with a stale etag fails with 412.
	etag := string(w.reply.etag)
	if st, _ := w.do(OpUpsert, 42); st != http.StatusOK {
		t.Fatalf("upsert: %d", st)
	}
	c := w.newCall()
	tg := w.ks.item(42)
	c.method, c.path, c.rawPath, c.pk, c.ifMatch = http.MethodPut, tg.path, tg.rawPath, w.ks.pkHeader[42], []byte(etag)
	c.body = appendBody(w.s.buffer(), []byte("i42"), w.ks.pkName[42], 42, 9, 512, w.ks.pad)
	if st, err := w.roundTrip(tg.put, time.Now()); err != nil || st != http.StatusPreconditionFailed {
		t.Fatalf("replace with a stale etag: %d %v", st, err)
	}
}
