package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/auth"
)

// fakeCosmos is a small in-memory Cosmos endpoint that checks what the bench
// sends: every signature, the partition-key header against the body, and
// the size of every item body.
type fakeCosmos struct {
	t        *testing.T
	verifier *auth.Verifier
	itemSize int

	mu    sync.Mutex
	dbs   map[string]bool
	colls map[string]string // db/coll → partition key path
	docs  map[string][]byte // pk|id → body
	etags map[string]int    // pk|id → version of the body, sent as etag
	// conflictEvery, when > 0, changes the item under every n-th replace
	// before it is checked, so that its If-Match fails; conflicts counts them.
	conflictEvery       int64
	replaces, conflicts atomic.Int64

	reads, creates, upserts, bad atomic.Int64
	// throttleEvery, when > 0, answers every n-th item request with 429;
	// failEvery likewise with 500.
	throttleEvery, failEvery int64
	n                        atomic.Int64
}

func newFakeCosmos(t *testing.T, itemSize int) (*fakeCosmos, *httptest.Server) {
	f := &fakeCosmos{
		t: t, verifier: auth.NewVerifier(testKey(t), nil), itemSize: itemSize,
		dbs: map[string]bool{}, colls: map[string]string{}, docs: map[string][]byte{}, etags: map[string]int{},
	}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeCosmos) fail(w http.ResponseWriter, status int, format string, args ...any) {
	switch status {
	case http.StatusBadRequest: // the bench sent something wrong
		f.bad.Add(1)
		f.t.Errorf("fake cosmos: "+format, args...)
	case http.StatusUnauthorized: // TestRunSetupErrors sends a wrong key on purpose
		f.bad.Add(1)
	}
	w.Header().Set("x-ms-request-charge", "1")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"code":%q,"message":%q}`, http.StatusText(status), fmt.Sprintf(format, args...))
}

func (f *fakeCosmos) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	date := r.Header.Get("x-ms-date")
	if err := auth.CheckDate(date, time.Now(), time.Minute); err != nil {
		f.fail(w, http.StatusUnauthorized, "date: %v", err)
		return
	}
	typ, link := auth.Resource(r.URL.Path)
	if _, err := f.verifier.Verify(r.Method, typ, link, date, r.Header.Get("Authorization")); err != nil {
		f.fail(w, http.StatusUnauthorized, "%s %s: %v", r.Method, r.URL.Path, err)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return // the client went away mid-request (TestRunCancelled)
	}
	segs := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	ok := func(status int, charge string, v any) {
		w.Header().Set("x-ms-request-charge", charge)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		switch b := v.(type) {
		case []byte:
			w.Write(b)
		default:
			json.NewEncoder(w).Encode(v)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case r.URL.Path == "/" && r.Method == http.MethodGet:
		ok(200, "1", map[string]string{"id": "fake"})
	case len(segs) == 1 && segs[0] == "dbs" && r.Method == http.MethodPost:
		var in struct{ ID string }
		json.Unmarshal(body, &in)
		if f.dbs[in.ID] {
			f.fail(w, http.StatusConflict, "database exists")
			return
		}
		f.dbs[in.ID] = true
		ok(201, "1", map[string]string{"id": in.ID})
	case len(segs) == 3 && segs[2] == "colls" && r.Method == http.MethodPost:
		var in struct {
			ID           string
			PartitionKey struct {
				Paths   []string
				Kind    string
				Version int
			}
		}
		json.Unmarshal(body, &in)
		if r.Header.Get("x-ms-offer-throughput") == "" || in.PartitionKey.Kind != "Hash" || in.PartitionKey.Version != 2 || len(in.PartitionKey.Paths) != 1 {
			f.fail(w, http.StatusBadRequest, "container create: %s (throughput %q)", body, r.Header.Get("x-ms-offer-throughput"))
			return
		}
		k := segs[1] + "/" + in.ID
		if _, exists := f.colls[k]; exists {
			f.fail(w, http.StatusConflict, "container exists")
			return
		}
		f.colls[k] = in.PartitionKey.Paths[0]
		ok(201, "1", map[string]string{"id": in.ID})
	case len(segs) == 4 && r.Method == http.MethodGet:
		path, exists := f.colls[segs[1]+"/"+segs[3]]
		if !exists {
			f.fail(w, http.StatusNotFound, "no container")
			return
		}
		ok(200, "1", map[string]any{"id": segs[3], "partitionKey": map[string]any{"paths": []string{path}}})
	case len(segs) == 5 && segs[4] == "pkranges":
		ok(200, "1", map[string]any{"PartitionKeyRanges": []any{map[string]string{"id": "0"}, map[string]string{"id": "1"}}})
	case len(segs) >= 5 && segs[4] == "docs":
		f.item(w, r, segs, body, ok)
	default:
		f.fail(w, http.StatusNotFound, "no route for %s %s", r.Method, r.URL.Path)
	}
}

func (f *fakeCosmos) item(w http.ResponseWriter, r *http.Request, segs []string, body []byte, ok func(int, string, any)) {
	pkHdr := r.Header.Get("x-ms-documentdb-partitionkey")
	// Injected failures: 429s on any item request but the marker's (the
	// load retries them), 500s on reads only (the load would stop).
	n := f.n.Add(1)
	read := len(segs) == 6 && segs[5] != markerID
	if f.throttleEvery > 0 && n%f.throttleEvery == 0 && (read || len(segs) == 5 && !strings.Contains(string(body), markerID)) {
		w.Header().Set("x-ms-retry-after-ms", "1")
		f.fail(w, http.StatusTooManyRequests, "Request rate is large")
		return
	}
	if f.failEvery > 0 && n%f.failEvery == 0 && read {
		f.fail(w, http.StatusInternalServerError, "injected failure")
		return
	}
	switch {
	case len(segs) == 6 && r.Method == http.MethodGet:
		f.reads.Add(1)
		var pk []string
		if err := json.Unmarshal([]byte(pkHdr), &pk); err != nil || len(pk) != 1 {
			f.fail(w, http.StatusBadRequest, "bad partition key header %q", pkHdr)
			return
		}
		doc, exists := f.docs[pk[0]+"|"+segs[5]]
		if !exists {
			f.fail(w, http.StatusNotFound, "no item %s in partition %s", segs[5], pk[0])
			return
		}
		w.Header().Set("etag", strconv.Quote(strconv.Itoa(f.etags[pk[0]+"|"+segs[5]])))
		ok(200, "1", doc)
	case len(segs) == 6 && r.Method == http.MethodPut:
		var in struct{ ID, PK string }
		if err := json.Unmarshal(body, &in); err != nil || in.ID != segs[5] || pkHdr != `["`+in.PK+`"]` || len(body) != f.itemSize {
			f.fail(w, http.StatusBadRequest, "replace of %s with partition key %s: %d bytes %q", segs[5], pkHdr, len(body), body)
			return
		}
		ifMatch := r.Header.Get("If-Match")
		if ifMatch == "" {
			f.fail(w, http.StatusBadRequest, "replace of %s without If-Match", segs[5])
			return
		}
		k := in.PK + "|" + in.ID
		if _, exists := f.docs[k]; !exists {
			f.fail(w, http.StatusNotFound, "no item %s", in.ID)
			return
		}
		if f.conflictEvery > 0 && f.replaces.Add(1)%f.conflictEvery == 0 {
			f.etags[k]++ // a concurrent writer
			f.conflicts.Add(1)
		}
		if cur := strconv.Quote(strconv.Itoa(f.etags[k])); ifMatch != cur {
			f.fail(w, http.StatusPreconditionFailed, "the item's etag is %s, not %s", cur, ifMatch)
			return
		}
		f.docs[k] = body
		f.etags[k]++
		ok(200, "5", body)
	case len(segs) == 5 && r.Method == http.MethodPost:
		var in struct{ ID, PK string }
		if err := json.Unmarshal(body, &in); err != nil {
			f.fail(w, http.StatusBadRequest, "item body is not JSON: %v: %q", err, body)
			return
		}
		if want := `["` + in.PK + `"]`; pkHdr != want {
			f.fail(w, http.StatusBadRequest, "partition key header %q, body says %q", pkHdr, want)
			return
		}
		if in.ID != markerID && len(body) != f.itemSize {
			f.fail(w, http.StatusBadRequest, "item body is %d bytes, want %d", len(body), f.itemSize)
			return
		}
		k := in.PK + "|" + in.ID
		_, exists := f.docs[k]
		if strings.EqualFold(r.Header.Get("x-ms-documentdb-is-upsert"), "true") {
			f.upserts.Add(1)
			f.docs[k] = body
			f.etags[k]++
			if exists {
				ok(200, "5", body)
			} else {
				ok(201, "5", body)
			}
			return
		}
		f.creates.Add(1)
		if exists {
			f.fail(w, http.StatusConflict, "item %s exists", in.ID)
			return
		}
		f.docs[k] = body
		f.etags[k]++
		ok(201, "5", body)
	default:
		f.fail(w, http.StatusBadRequest, "unexpected item request %s %s", r.Method, r.URL.Path)
	}
}

func (f *fakeCosmos) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.docs)
}

func runBench(t *testing.T, o Options) (*Result, string) {
	t.Helper()
	var log strings.Builder
	if o.Duration == 0 {
		o.Duration = 300 * time.Millisecond
	}
	if o.Concurrency == 0 {
		o.Concurrency = 4
	}
	o.Seed = 1
	res, err := Run(context.Background(), o, &log)
	if err != nil {
		t.Fatalf("Run(%+v): %v\nlog:\n%s", o, err, log.String())
	}
	return res, log.String()
}

func TestRunReadLoadsOnce(t *testing.T) {
	f, srv := newFakeCosmos(t, 256)
	o := Options{Endpoint: srv.URL, Workload: "read", Items: 500, ItemSize: 256}
	res, log := runBench(t, o)
	if !strings.Contains(log, "created container bench/items") || !strings.Contains(log, "loading 500 items") {
		t.Fatalf("log:\n%s", log)
	}
	if f.count() != 501 { // the items and the marker
		t.Fatalf("%d documents after the load, want 501", f.count())
	}
	if res.Errors != 0 || res.Throttled != 0 || res.Operations == 0 || res.Requests != res.Operations {
		t.Fatalf("result %+v", res)
	}
	if res.RequestCharge != float64(res.Operations) { // each read charges 1 RU
		t.Fatalf("request charge %v for %d reads", res.RequestCharge, res.Operations)
	}
	if res.Histogram().Count() != res.Operations || res.Latency.P50 <= 0 || res.Latency.P50 > res.Latency.P99 || res.Latency.P99 > res.Latency.Max {
		t.Fatalf("latency %+v over %d values", res.Latency, res.Histogram().Count())
	}
	if res.PartitionKeyRanges != 2 || res.Items != 500 || f.bad.Load() != 0 {
		t.Fatalf("ranges %d items %d", res.PartitionKeyRanges, res.Items)
	}

	// A second run finds the marker and loads nothing.
	upserts := f.upserts.Load()
	_, log = runBench(t, o)
	if f.upserts.Load() != upserts || strings.Contains(log, "loading") || strings.Contains(log, "created") {
		t.Fatalf("second run loaded again (%d upserts):\n%s", f.upserts.Load()-upserts, log)
	}
	// More items: only the missing ones are loaded.
	o.Items = 700
	_, log = runBench(t, o)
	if got := f.upserts.Load() - upserts; got != 201 || !strings.Contains(log, "loading 200 items") {
		t.Fatalf("growing to 700 items: %d upserts (want 200 and the marker):\n%s", got, log)
	}
	// Another item size: everything is reloaded.
	f.mu.Lock()
	f.itemSize = 300
	f.mu.Unlock()
	o.ItemSize = 300
	_, log = runBench(t, o)
	if !strings.Contains(log, "loading 700 items of 300 bytes") {
		t.Fatalf("new item size did not reload:\n%s", log)
	}
}

func TestRunWriteCreatesNewItems(t *testing.T) {
	f, srv := newFakeCosmos(t, 1024)
	o := Options{Endpoint: srv.URL, Workload: "write", Items: 10000, ItemSize: 1024, Concurrency: 8}
	res, _ := runBench(t, o)
	if res.Errors != 0 || res.Operations == 0 || f.bad.Load() != 0 {
		t.Fatalf("result %+v", res)
	}
	if int(res.Operations) != f.count() || f.creates.Load() != int64(res.Operations) {
		t.Fatalf("%d creates acknowledged, %d stored, %d received", res.Operations, f.count(), f.creates.Load())
	}
	if res.RequestCharge != 5*float64(res.Operations) || res.Items != 0 {
		t.Fatalf("charge %v for %d writes; items %d", res.RequestCharge, res.Operations, res.Items)
	}
	// A second run uses new ids: no conflicts.
	res, _ = runBench(t, o)
	if res.Errors != 0 || int(res.Operations)+int(f.creates.Load()-int64(res.Operations)) != f.count() {
		t.Fatalf("second run: %+v (stored %d)", res, f.count())
	}
}

func TestRunUpsertOverwritesLoadedItems(t *testing.T) {
	f, srv := newFakeCosmos(t, 512)
	res, _ := runBench(t, Options{Endpoint: srv.URL, Workload: "upsert", Items: 100, ItemSize: 512})
	if res.Errors != 0 || res.Operations == 0 || f.count() != 101 {
		t.Fatalf("result %+v, %d stored", res, f.count())
	}
}

// TestRunRMWUsesEtags: every read-modify-write replaces the item with
// If-Match: the etag its read returned and the version it read plus one;
// when the item changed in between, the replace gets 412 and counts as an
// error, and no update is lost.
func TestRunRMWUsesEtags(t *testing.T) {
	f, srv := newFakeCosmos(t, 400)
	f.conflictEvery = 4
	for _, client := range []string{ClientNetHTTP, ClientRaw} {
		f.mu.Lock()
		for k := range f.docs { // start every run from version 0
			delete(f.docs, k)
		}
		f.mu.Unlock()
		f.conflicts.Store(0)
		res, log := runBench(t, Options{Endpoint: srv.URL, Workload: "rmw", Client: client, Items: 50, ItemSize: 400,
			Concurrency: 3, Operations: 400, Duration: time.Minute, Container: "rmw-" + client})
		rmw := res.ByOperation["rmw"]
		if f.bad.Load() != 0 || rmw == nil || res.Operations+res.Errors != 400 || res.Throttled != 0 {
			t.Fatalf("%s: %+v\n%s", client, res, log)
		}
		// Injected conflicts all fail; concurrent workers on one item may add some.
		if res.ErrorsByStatus["412"] != res.Errors || res.Errors < uint64(f.conflicts.Load()) || f.conflicts.Load() < 50 {
			t.Fatalf("%s: %d injected conflicts, errors %v", client, f.conflicts.Load(), res.ErrorsByStatus)
		}
		if rmw.Requests != 2*400 || rmw.Operations != res.Operations {
			t.Fatalf("%s: %d requests for 400 read-modify-writes", client, rmw.Requests)
		}
		// The versions add up to the successful read-modify-writes.
		var sum uint64
		f.mu.Lock()
		for k, b := range f.docs {
			if !strings.HasPrefix(k, markerID) {
				sum += parseVersion(b)
			}
		}
		f.mu.Unlock()
		if sum != res.Operations {
			t.Fatalf("%s: versions sum to %d after %d successful read-modify-writes", client, sum, res.Operations)
		}
	}
}

func TestRunCountsThrottlesAndErrors(t *testing.T) {
	f, srv := newFakeCosmos(t, 256)
	f.throttleEvery, f.failEvery = 7, 11
	res, _ := runBench(t, Options{Endpoint: srv.URL, Workload: "read", Items: 50, ItemSize: 256})
	if res.Throttled == 0 || res.Errors == 0 || res.ErrorsByStatus["500"] != res.Errors {
		t.Fatalf("result %+v", res)
	}
	if !strings.Contains(res.ErrorSamples["500"], "injected failure") {
		t.Fatalf("samples %v", res.ErrorSamples)
	}
	if res.Requests != res.Operations+res.Throttled+res.Errors || res.Histogram().Count() != res.Operations {
		t.Fatalf("counts %+v", res)
	}
	var b strings.Builder
	res.WriteText(&b)
	if !strings.Contains(b.String(), "500") || !strings.Contains(b.String(), "throttled (429) ") {
		t.Fatalf("report:\n%s", b.String())
	}
}

func TestRunTrivial(t *testing.T) {
	var n, signed atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		if r.Header.Get("Authorization") != "" || r.URL.Path != "/" || r.Method != http.MethodGet {
			signed.Add(1)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok":true}`))
	}))
	defer srv.Close()
	res, log := runBench(t, Options{Endpoint: srv.URL, Workload: "trivial"})
	if res.Errors != 0 || res.Operations == 0 || int64(res.Operations) != n.Load()-1 || signed.Load() != 0 || log != "" {
		t.Fatalf("result %+v, %d requests seen, %d not plain GET /, log %q", res, n.Load(), signed.Load(), log)
	}
	var b strings.Builder
	if err := res.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(b.String()), &out); err != nil {
		t.Fatalf("JSON %q: %v", b.String(), err)
	}
	for _, k := range []string{"throughput", "latencyMs", "errors", "throttled", "requestCharge"} {
		if _, ok := out[k]; !ok {
			t.Fatalf("JSON lacks %q: %s", k, b.String())
		}
	}
	lat := out["latencyMs"].(map[string]any)
	for _, k := range []string{"p50", "p95", "p99", "p999"} {
		if _, ok := lat[k]; !ok {
			t.Fatalf("latencyMs lacks %q: %s", k, b.String())
		}
	}
}

func TestRunSetupErrors(t *testing.T) {
	f := func(o Options, want string) {
		t.Helper()
		if o.Duration == 0 {
			o.Duration = 100 * time.Millisecond
		}
		_, err := Run(context.Background(), o, io.Discard)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("Run(%+v) error %v, want one containing %q", o, err, want)
		}
	}
	// Unreachable: a port that was just closed.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	f(Options{Endpoint: "http://" + addr, Workload: "read", Items: 10}, "cannot reach http://"+addr)
	f(Options{Endpoint: "http://" + addr, Workload: "trivial"}, "is the server running?")

	// A server with another key.
	_, srv := newFakeCosmos(t, 256)
	other := "b3RoZXJrZXlvdGhlcmtleW90aGVya2V5b3RoZXJrZXk="
	f(Options{Endpoint: srv.URL, Key: other, Workload: "read", Items: 10}, "rejected the key (401")

	// An existing container with another partition key.
	fk, srv2 := newFakeCosmos(t, 256)
	fk.colls["bench/items"] = "/other"
	fk.dbs["bench"] = true
	f(Options{Endpoint: srv2.URL, Workload: "read", Items: 10}, "already exists with partition key [/other]")

	// Bad options.
	f(Options{Endpoint: "localhost:8081"}, "must start with http:// or https://")
	f(Options{Endpoint: "http://127.0.0.1:1/x"}, "without a path")
	f(Options{Workload: "nope"}, `--workload "nope" is unknown; choose one of query-cross, query-pk, read, rmw, sproc, trivial, upsert, vector, write, ycsb-a, ycsb-b, ycsb-c, ycsb-d, ycsb-e, ycsb-f`)
	f(Options{Key: "not base64!"}, "--key")
	f(Options{Workload: "read"}, "--items must be at least 1")
	f(Options{Items: 1, ItemSize: 10}, "--item-size must be between")
	f(Options{Items: 1, Concurrency: -1}, "--concurrency")
	f(Options{Items: 1, Duration: -time.Second}, "--duration must be positive")
	f(Options{Items: 1, Container: "a/b"}, "--container")
	f(Options{Items: 1, Throughput: 100}, "--throughput must be at least 400")
	f(Options{Items: 1, Distribution: "pareto"}, `--distribution "pareto" is unknown; choose one of uniform, zipfian, latest`)
	for _, theta := range []float64{-0.5, 1, 1.5, math.NaN()} {
		f(Options{Items: 1, Distribution: DistZipfian, ZipfTheta: theta}, "--zipf-theta must be above 0 and below 1")
	}
	for _, rate := range []float64{-1, math.Inf(1), math.NaN()} {
		f(Options{Items: 1, Rate: rate}, "--rate must be a positive number")
	}
	f(Options{Items: 1, Operations: -3}, "--operations must not be negative")
	f(Options{Items: 1, PageSize: -2}, "--page-size must be")
	f(Options{Workload: "ycsb-e"}, "--items must be at least 1 for the ycsb-e workload")
}

func TestRunCancelled(t *testing.T) {
	_, srv := newFakeCosmos(t, 256)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	res, err := Run(ctx, Options{Endpoint: srv.URL, Workload: "write", ItemSize: 256, Concurrency: 2, Duration: time.Hour}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || time.Since(start) > 10*time.Second || res.Errors != 0 {
		t.Fatalf("interrupted %v after %v, result %+v", res.Interrupted, time.Since(start), res)
	}
}

func TestBodiesAndIDs(t *testing.T) {
	pad := randomPad(2000, 1)
	for _, size := range []int{MinItemSize, 1024, 2000} {
		for _, nv := range []struct {
			n int
			v uint64
		}{{0, 0}, {9, 10}, {123456789, 1<<64 - 1}} {
			b := appendBody(nil, []byte("c1a2b3c4d5e6f-1234567890123"), []byte("p999"), nv.n, nv.v, size, pad)
			var v struct {
				ID, PK, Pad string
				N           int
				V           uint64
			}
			if len(b) != size || json.Unmarshal(b, &v) != nil || v.ID != "c1a2b3c4d5e6f-1234567890123" || v.PK != "p999" || v.N != nv.n || v.V != nv.v {
				t.Fatalf("size %d: %d bytes %q", size, len(b), b)
			}
			if got := parseVersion(b); got != nv.v {
				t.Fatalf("parseVersion(%q) = %d", b, got)
			}
		}
	}
	if string(appendItemID(nil, 42)) != "i42" {
		t.Fatal("appendItemID")
	}
	ks := &keyspace{loaded: 10, run: "abc"}
	if string(ks.appendID(nil, 9)) != "i9" || string(ks.appendID(nil, 10)) != "cabc-10" {
		t.Fatal("keyspace.appendID")
	}
	if parseVersion([]byte(`{"id":"x","v": 17,"_etag":"\"1\""}`)) != 17 || parseVersion([]byte(`{"id":"x"}`)) != 0 {
		t.Fatal("parseVersion")
	}
}
