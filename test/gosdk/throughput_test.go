package gosdk

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/parsecdb/parsec/internal/auth"
	"github.com/parsecdb/parsec/internal/epk"
	"github.com/parsecdb/parsec/internal/server"
)

type pkRange struct {
	ID      string   `json:"id"`
	Min     string   `json:"minInclusive"`
	Max     string   `json:"maxExclusive"`
	Parents []string `json:"parents"`
}

func ranges(t *testing.T, raw *raw, db, coll string) []pkRange {
	t.Helper()
	r := raw.do(t, "GET", "/dbs/"+db+"/colls/"+coll+"/pkranges", nil, nil)
	var body struct{ PartitionKeyRanges []pkRange }
	must(t, json.Unmarshal(r.Body, &body), "pkranges body")
	return body.PartitionKeyRanges
}

// rangeOfKey returns the id of the range holding the V2 hash of a string key.
func rangeOfKey(t *testing.T, rs []pkRange, key string) string {
	t.Helper()
	e, err := epk.Definition{Kind: epk.Hash, Version: 2, Paths: []string{"/pk"}}.EPK(epk.Key{epk.String(key)})
	must(t, err, "epk")
	for _, r := range rs {
		if (epk.Range{Min: r.Min, Max: r.Max}).Contains(e) {
			return r.ID
		}
	}
	t.Fatalf("no range holds %s", e)
	return ""
}

func TestReadAndReplaceThroughputSplitsRanges(t *testing.T) {
	s := startServer(t, server.Options{})
	c := newClient(t, s, auth.EmulatorKey, nil)
	cc := setup(t, c, "db", "c", hashPK("/pk"), 6000)
	raw := newRaw(t, s, auth.EmulatorKey)
	for i := 0; i < 300; i++ {
		pk := fmt.Sprint("k", i)
		_, err := cc.CreateItem(ctx(), azcosmos.NewPartitionKeyString(pk), []byte(fmt.Sprintf(`{"id":"%d","pk":%q}`, i, pk)), nil)
		must(t, err, "create")
	}
	if rs := ranges(t, raw, "db", "c"); len(rs) != 1 {
		t.Fatalf("6,000 RU/s gave %d ranges, want 1", len(rs))
	}
	tr, err := cc.ReadThroughput(ctx(), nil)
	must(t, err, "read throughput")
	if v, ok := tr.ThroughputProperties.ManualThroughput(); !ok || v != 6000 {
		t.Fatalf("ReadThroughput = %v %v, want 6000", v, ok)
	}
	rr, err := cc.ReplaceThroughput(ctx(), azcosmos.NewManualThroughputProperties(40000), nil)
	must(t, err, "replace throughput")
	if v, _ := rr.ThroughputProperties.ManualThroughput(); v != 40000 {
		t.Fatalf("ReplaceThroughput returned %v, want 40000", v)
	}
	tr, err = cc.ReadThroughput(ctx(), nil)
	must(t, err, "read throughput again")
	if v, _ := tr.ThroughputProperties.ManualThroughput(); v != 40000 {
		t.Fatalf("ReadThroughput after replace = %v, want 40000", v)
	}

	// The SDK's own range cache sees the 4 children...
	fr, err := cc.ReadFeedRanges(ctx(), nil)
	must(t, err, "read feed ranges")
	if len(fr) != 4 {
		t.Fatalf("the SDK sees %d ranges after scaling to 40,000 RU/s, want 4", len(fr))
	}
	// ...each with the old range as parent, and equal widths (power-of-two layout).
	rs := ranges(t, raw, "db", "c")
	want := (epk.Definition{Kind: epk.Hash, Version: 2, Paths: []string{"/pk"}}).EvenRanges(4)
	for i, r := range rs {
		if len(r.Parents) != 1 || r.Parents[0] != "0" {
			t.Errorf("range %s has parents %v, want [0]", r.ID, r.Parents)
		}
		if diffHex(r.Min, want[i].Min) || diffHex(r.Max, want[i].Max) {
			t.Errorf("range %d is [%s, %s), want about [%s, %s)", i, r.Min, r.Max, want[i].Min, want[i].Max)
		}
	}
	// Every item is still readable, and each range's feed holds exactly its own items.
	for i := 0; i < 300; i++ {
		pk := fmt.Sprint("k", i)
		_, err := cc.ReadItem(ctx(), azcosmos.NewPartitionKeyString(pk), fmt.Sprint(i), nil)
		must(t, err, "read after split")
	}
	total := 0
	for _, r := range rs {
		for _, d := range readAll(t, raw, "/dbs/db/colls/c/docs", map[string]string{"x-ms-documentdb-partitionkeyrangeid": r.ID}, 50) {
			if got := rangeOfKey(t, rs, d["pk"].(string)); got != r.ID {
				t.Fatalf("item with pk %v served by range %s, but its EPK belongs to %s", d["pk"], r.ID, got)
			}
			total++
		}
	}
	if total != 300 {
		t.Fatalf("the ranges hold %d items, want 300", total)
	}
	// The retired range is gone for clients that name it.
	if r := raw.do(t, "GET", "/dbs/db/colls/c/docs", nil, map[string]string{"x-ms-documentdb-partitionkeyrangeid": "0"}); r.Status != http.StatusGone || r.Header.Get("x-ms-substatus") != "1002" {
		t.Fatalf("read feed of the retired range: %d substatus %q, want 410/1002", r.Status, r.Header.Get("x-ms-substatus"))
	}
	// Below the minimum: 400.
	_, err = cc.ReplaceThroughput(ctx(), azcosmos.NewManualThroughputProperties(300), nil)
	wantStatus(t, err, http.StatusBadRequest, "throughput below 400")
}

// diffHex reports whether two range bounds differ by more than rounding.
func diffHex(a, b string) bool {
	if a == b {
		return false
	}
	if len(a) != len(b) || len(a) < 4 {
		return true
	}
	return a[:len(a)-2] != b[:len(b)-2]
}

func TestHotKeyIsThrottledAndNamedWhileOtherPartitionProceeds(t *testing.T) {
	s := startServer(t, server.Options{PartitionMaxRUs: 1000})
	c := newClient(t, s, auth.EmulatorKey, nil)
	setup(t, c, "db", "c", hashPK("/pk"), 2000)
	raw := newRaw(t, s, auth.EmulatorKey)
	rs := ranges(t, raw, "db", "c")
	if len(rs) != 2 {
		t.Fatalf("2,000 RU/s at 1,000 per partition gave %d ranges", len(rs))
	}
	hot := "hot-device"
	cold := ""
	for i := 0; cold == ""; i++ {
		if k := fmt.Sprint("cold-", i); rangeOfKey(t, rs, k) != rangeOfKey(t, rs, hot) {
			cold = k
		}
	}
	var hot429, cold429, hotOK, coldOK atomic.Int64
	var body429 atomic.Value
	var wg sync.WaitGroup
	stop := time.Now().Add(2500 * time.Millisecond)
	pad := strings.Repeat("x", 900)
	write := func(pk string, n int, ok, throttled *atomic.Int64) {
		r := raw.do(t, "POST", "/dbs/db/colls/c/docs", []byte(fmt.Sprintf(`{"id":"%s-%d","pk":%q,"pad":%q}`, pk, n, pk, pad)), map[string]string{"x-ms-documentdb-partitionkey": fmt.Sprintf("[%q]", pk)})
		switch r.Status {
		case http.StatusCreated:
			ok.Add(1)
		case http.StatusTooManyRequests:
			throttled.Add(1)
			if r.Header.Get("x-ms-substatus") != "3200" || r.Header.Get("x-ms-retry-after-ms") == "" {
				t.Errorf("429 without substatus 3200 and x-ms-retry-after-ms: %v", r.Header)
			}
			body429.Store(string(r.Body))
			// Back off as the SDKs do, so that every client gets a share.
			if ms, err := strconv.Atoi(r.Header.Get("x-ms-retry-after-ms")); err == nil {
				time.Sleep(time.Duration(ms) * time.Millisecond)
			}
		default:
			t.Errorf("write to %s: %d %s", pk, r.Status, r.Body)
		}
	}
	// Four writers drive the hot key as fast as the budget lets them (each
	// backs off for x-ms-retry-after-ms after a 429), ~3.5 RU a write against
	// a 1,000 RU/s budget; one writer sends 20 writes/s to the cold key.
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; time.Now().Before(stop); i++ {
				write(hot, w*1_000_000+i, &hotOK, &hot429)
			}
		}(w)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; time.Now().Before(stop); i++ {
			write(cold, i, &coldOK, &cold429)
			time.Sleep(50 * time.Millisecond)
		}
	}()
	// Meanwhile the Go SDK writes to the hot key too: it receives 429s and
	// retries them by itself (honouring x-ms-retry-after-ms) until they succeed.
	counter := &countingTransport{}
	cred, _ := azcosmos.NewKeyCredential(auth.EmulatorKey)
	retrying, _ := azcosmos.NewClientWithKey(s.URL()+"/", cred, &azcosmos.ClientOptions{ClientOptions: azcore.ClientOptions{
		Transport: counter, Retry: policy.RetryOptions{MaxRetries: 500, RetryDelay: 5 * time.Millisecond, MaxRetryDelay: 100 * time.Millisecond}}})
	rc, _ := retrying.NewContainer("db", "c")
	var sdkErrs []error
	for i := 0; time.Now().Before(stop); i++ {
		if _, err := rc.CreateItem(ctx(), azcosmos.NewPartitionKeyString(hot), []byte(fmt.Sprintf(`{"id":"sdk-%d","pk":%q,"pad":%q}`, i, hot, pad)), nil); err != nil {
			sdkErrs = append(sdkErrs, err)
		}
	}
	wg.Wait()
	t.Logf("hot key: %d written, %d throttled; cold key: %d written, %d throttled", hotOK.Load(), hot429.Load(), coldOK.Load(), cold429.Load())
	if hot429.Load() == 0 {
		t.Fatal("the hot key was never throttled")
	}
	if cold429.Load() != 0 || coldOK.Load() == 0 {
		t.Fatalf("the other partition saw %d 429s and %d successful writes; want none throttled", cold429.Load(), coldOK.Load())
	}
	var e map[string]any
	must(t, json.Unmarshal([]byte(body429.Load().(string)), &e), "429 body")
	if e["code"] != "TooManyRequests" || e["hotPartitionKey"] != `["hot-device"]` || !strings.Contains(e["message"].(string), `["hot-device"]`) {
		t.Fatalf("429 body does not name the hot key: %v", e)
	}

	if len(sdkErrs) > 0 {
		t.Fatalf("%d SDK writes to the hot key failed despite retries, first: %v", len(sdkErrs), sdkErrs[0])
	}
	if counter.throttled.Load() == 0 {
		t.Fatal("the SDK never received a 429 while the hot key was over budget")
	}
	t.Logf("the SDK received %d 429s and retried every one", counter.throttled.Load())

	// Telemetry names the hot key too.
	st := raw.do(t, "GET", "/dbs/db/colls/c/partitions", nil, nil).JSON(t)
	found := false
	for _, p := range st["partitions"].([]any) {
		pm := p.(map[string]any)
		if pm["id"] == rangeOfKey(t, rs, hot) {
			top := pm["topKeysByRU"].([]any)
			found = len(top) > 0 && top[0].(map[string]any)["key"] == `["hot-device"]` && pm["throttled"].(float64) > 0
		}
	}
	if !found {
		t.Fatalf("partition telemetry does not show the hot key first: %v", st)
	}
}

func TestFixedContainerAndLogicalPartitionLimit(t *testing.T) {
	s := startServer(t, server.Options{LogicalPartitionMaxBytes: 20 << 10})
	raw := newRaw(t, s, auth.EmulatorKey)
	raw.do(t, "POST", "/dbs", []byte(`{"id":"db"}`), nil)
	if r := raw.do(t, "POST", "/dbs/db/colls", []byte(`{"id":"fixed"}`), nil); r.Status != http.StatusCreated {
		t.Fatalf("create fixed container: %d %s", r.Status, r.Body)
	}
	if r := raw.do(t, "POST", "/dbs/db/colls", []byte(`{"id":"big"}`), map[string]string{"x-ms-offer-throughput": "20000"}); r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "fixed container") {
		t.Fatalf("fixed container with 20,000 RU/s: %d %s", r.Status, r.Body)
	}
	if rs := ranges(t, raw, "db", "fixed"); len(rs) != 1 {
		t.Fatalf("fixed container has %d ranges", len(rs))
	}
	if r := raw.do(t, "POST", "/dbs/db/colls/fixed/docs", []byte(`{"id":"a","x":1}`), nil); r.Status != http.StatusCreated {
		t.Fatalf("write to a fixed container without a key: %d %s", r.Status, r.Body)
	}
	if r := raw.do(t, "GET", "/dbs/db/colls/fixed/docs/a", nil, nil); r.Status != http.StatusOK {
		t.Fatalf("read from a fixed container: %d %s", r.Status, r.Body)
	}
	c := newClient(t, s, auth.EmulatorKey, nil)
	fc, _ := c.NewContainer("db", "fixed")
	_, err := fc.ReplaceThroughput(ctx(), azcosmos.NewManualThroughputProperties(20000), nil)
	wantStatus(t, err, http.StatusBadRequest, "fixed container above 10,000 RU/s")

	cc := setup(t, c, "db", "c", hashPK("/pk"), 0)
	pk := azcosmos.NewPartitionKeyString("tenant-1")
	pad := strings.Repeat("y", 4000)
	var err403 error
	for i := 0; i < 10 && err403 == nil; i++ {
		_, err403 = cc.CreateItem(ctx(), pk, []byte(fmt.Sprintf(`{"id":"%d","pk":"tenant-1","pad":%q}`, i, pad)), nil)
	}
	wantStatus(t, err403, http.StatusForbidden, "write past the logical partition limit")
	r := raw.do(t, "POST", "/dbs/db/colls/c/docs", []byte(fmt.Sprintf(`{"id":"x","pk":"tenant-1","pad":%q}`, pad)), map[string]string{"x-ms-documentdb-partitionkey": `["tenant-1"]`})
	if r.Status != http.StatusForbidden || r.Header.Get("x-ms-substatus") != "1014" || !strings.Contains(string(r.Body), `tenant-1`) || !strings.Contains(string(r.Body), "20480") {
		t.Fatalf("logical partition full: %d %s %s", r.Status, r.Header.Get("x-ms-substatus"), r.Body)
	}
	// Other keys still take writes.
	_, err = cc.CreateItem(ctx(), azcosmos.NewPartitionKeyString("tenant-2"), []byte(`{"id":"1","pk":"tenant-2"}`), nil)
	must(t, err, "write to another key")
}

func TestSharedDatabaseThroughputAndAutoscale(t *testing.T) {
	s := startServer(t, server.Options{PartitionMaxRUs: 1000})
	c := newClient(t, s, auth.EmulatorKey, nil)
	tp := azcosmos.NewManualThroughputProperties(1200)
	_, err := c.CreateDatabase(ctx(), azcosmos.DatabaseProperties{ID: "shared"}, &azcosmos.CreateDatabaseOptions{ThroughputProperties: &tp})
	must(t, err, "create database with throughput")
	db, _ := c.NewDatabase("shared")
	dt, err := db.ReadThroughput(ctx(), nil)
	must(t, err, "read database throughput")
	if v, _ := dt.ThroughputProperties.ManualThroughput(); v != 1200 {
		t.Fatalf("database throughput %v, want 1200", v)
	}
	for _, id := range []string{"a", "b"} {
		_, err := db.CreateContainer(ctx(), azcosmos.ContainerProperties{ID: id, PartitionKeyDefinition: hashPK("/pk")}, nil)
		must(t, err, "create shared container "+id)
	}
	ca, _ := db.NewContainer("a")
	_, err = ca.ReadThroughput(ctx(), nil)
	wantStatus(t, err, http.StatusNotFound, "a container without its own throughput has no offer")

	raw := newRaw(t, s, auth.EmulatorKey)
	var budget float64
	for _, id := range []string{"a", "b"} {
		st := raw.do(t, "GET", "/dbs/shared/colls/"+id+"/partitions", nil, nil).JSON(t)
		for _, p := range st["partitions"].([]any) {
			budget += p.(map[string]any)["budgetRUs"].(float64)
		}
		if st["sharedThroughput"] != true {
			t.Errorf("container %s is not reported as sharing its database's throughput", id)
		}
	}
	if budget < 1199 || budget > 1201 {
		t.Fatalf("the shared containers' partitions have %v RU/s in all, want the database's 1200", budget)
	}
	_, err = db.ReplaceThroughput(ctx(), azcosmos.NewManualThroughputProperties(2400), nil)
	must(t, err, "replace database throughput")

	auto := azcosmos.NewAutoscaleThroughputProperties(4000)
	_, err = db.CreateContainer(ctx(), azcosmos.ContainerProperties{ID: "auto", PartitionKeyDefinition: hashPK("/pk")}, &azcosmos.CreateContainerOptions{ThroughputProperties: &auto})
	must(t, err, "create autoscale container")
	cc, _ := db.NewContainer("auto")
	at, err := cc.ReadThroughput(ctx(), nil)
	must(t, err, "read autoscale throughput")
	if v, ok := at.ThroughputProperties.AutoscaleMaxThroughput(); !ok || v != 4000 {
		t.Fatalf("autoscale max %v %v, want 4000", v, ok)
	}
	if rs := ranges(t, raw, "shared", "auto"); len(rs) != 4 {
		t.Fatalf("autoscale 4,000 RU/s at 1,000 per partition gave %d ranges, want 4", len(rs))
	}
}

// countingTransport sends requests with the default client and counts 429s.
type countingTransport struct{ throttled atomic.Int64 }

func (c *countingTransport) Do(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultClient.Do(r)
	if err == nil && resp.StatusCode == http.StatusTooManyRequests {
		c.throttled.Add(1)
	}
	return resp, err
}

// TestThroughputAndPartitionCaps checks the throughput quota of Cosmos DB
// (1,000,000 RU/s per container and per database with shared throughput,
// https://learn.microsoft.com/azure/cosmos-db/concepts-limits) and the
// server's cap on physical partitions: over either, a create or an offer
// replace is a 400 and creates nothing.
func TestThroughputAndPartitionCaps(t *testing.T) {
	s := startServer(t, server.Options{})
	c := newClient(t, s, auth.EmulatorKey, nil)
	_, err := c.CreateDatabase(ctx(), azcosmos.DatabaseProperties{ID: "db"}, nil)
	must(t, err, "create database")
	db, _ := c.NewDatabase("db")
	for _, tp := range []azcosmos.ThroughputProperties{
		azcosmos.NewManualThroughputProperties(1_000_000_000),
		azcosmos.NewAutoscaleThroughputProperties(2_000_000),
	} {
		_, err := db.CreateContainer(ctx(), azcosmos.ContainerProperties{ID: "huge", PartitionKeyDefinition: hashPK("/pk")}, &azcosmos.CreateContainerOptions{ThroughputProperties: &tp})
		wantStatus(t, err, http.StatusBadRequest, "container above 1,000,000 RU/s")
		if !strings.Contains(err.Error(), "maximum of 1000000 RU/s") {
			t.Errorf("the error does not name the maximum: %v", err)
		}
	}
	huge, _ := db.NewContainer("huge")
	_, err = huge.Read(ctx(), nil)
	wantStatus(t, err, http.StatusNotFound, "the refused container")
	tp := azcosmos.NewManualThroughputProperties(2_000_000)
	_, err = c.CreateDatabase(ctx(), azcosmos.DatabaseProperties{ID: "shared"}, &azcosmos.CreateDatabaseOptions{ThroughputProperties: &tp})
	wantStatus(t, err, http.StatusBadRequest, "database with shared throughput above 1,000,000 RU/s")

	max := azcosmos.NewManualThroughputProperties(1_000_000)
	_, err = db.CreateContainer(ctx(), azcosmos.ContainerProperties{ID: "max", PartitionKeyDefinition: hashPK("/pk")}, &azcosmos.CreateContainerOptions{ThroughputProperties: &max})
	must(t, err, "create a container at 1,000,000 RU/s")
	raw := newRaw(t, s, auth.EmulatorKey)
	// A new container gets ceil(RU / 6,000) partitions, as on the service.
	if rs := ranges(t, raw, "db", "max"); len(rs) != 167 {
		t.Fatalf("1,000,000 RU/s gave %d ranges, want 167", len(rs))
	}
	mc, _ := db.NewContainer("max")
	_, err = mc.ReplaceThroughput(ctx(), azcosmos.NewManualThroughputProperties(2_000_000), nil)
	wantStatus(t, err, http.StatusBadRequest, "offer replace above 1,000,000 RU/s")

	// A server that holds 3 partitions in all.
	s = startServer(t, server.Options{MaxPartitions: 3})
	c = newClient(t, s, auth.EmulatorKey, nil)
	raw = newRaw(t, s, auth.EmulatorKey)
	_, err = c.CreateDatabase(ctx(), azcosmos.DatabaseProperties{ID: "db"}, nil)
	must(t, err, "create database")
	db, _ = c.NewDatabase("db")
	create := func(id string, rus int32) error {
		tp := azcosmos.NewManualThroughputProperties(rus)
		_, err := db.CreateContainer(ctx(), azcosmos.ContainerProperties{ID: id, PartitionKeyDefinition: hashPK("/pk")}, &azcosmos.CreateContainerOptions{ThroughputProperties: &tp})
		return err
	}
	must(t, create("a", 12000), "create a container of 2 partitions")
	err = create("b", 12000)
	wantStatus(t, err, http.StatusBadRequest, "2 more partitions past the server's 3")
	if !strings.Contains(err.Error(), "at most 3") {
		t.Errorf("the error does not name the cap: %v", err)
	}
	must(t, create("b", 6000), "create the third partition")
	ac, _ := db.NewContainer("a")
	_, err = ac.ReplaceThroughput(ctx(), azcosmos.NewManualThroughputProperties(40000), nil)
	wantStatus(t, err, http.StatusBadRequest, "a throughput raise that splits past the server's 3 partitions")
	if rs := ranges(t, raw, "db", "a"); len(rs) != 2 {
		t.Fatalf("the refused raise left %d ranges, want 2", len(rs))
	}
	rt, err := ac.ReadThroughput(ctx(), nil)
	must(t, err, "read the throughput")
	if v, _ := rt.ThroughputProperties.ManualThroughput(); v != 12000 {
		t.Fatalf("the refused raise left %v RU/s, want 12000", v)
	}
	_, err = ac.ReplaceThroughput(ctx(), azcosmos.NewManualThroughputProperties(15000), nil)
	must(t, err, "a change that needs no new partition")
}
