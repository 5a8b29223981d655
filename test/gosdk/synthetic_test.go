package gosdk

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/parsecdb/parsec/internal/auth"
	"github.com/parsecdb/parsec/internal/server"
	"github.com/parsecdb/parsec/synthkey"
)

// createSynthetic creates a container whose partition key /pk is the
// synthetic key expr (the SDKs cannot send the extension, so this is a raw
// request; everything after it goes through the SDK).
func createSynthetic(t *testing.T, r *raw, db, coll, expr string, rus int) {
	t.Helper()
	r.do(t, "POST", "/dbs", []byte(`{"id":"`+db+`"}`), nil)
	body, _ := json.Marshal(map[string]any{"id": coll, "partitionKey": map[string]any{"paths": []string{"/pk"}, "kind": "Hash", "version": 2}, "parsecSyntheticKey": expr})
	resp := r.do(t, "POST", "/dbs/"+db+"/colls", body, map[string]string{"x-ms-offer-throughput": strconv.Itoa(rus)})
	if resp.Status != http.StatusCreated {
		t.Fatalf("create container with %s: %d %s", expr, resp.Status, resp.Body)
	}
	if got := resp.JSON(t)["parsecSyntheticKey"]; got != expr {
		t.Fatalf("the container echoes parsecSyntheticKey %v, want %s", got, expr)
	}
}

var retrievedDocs = regexp.MustCompile(`retrievedDocumentCount=(\d+)`)

// queryDocsRead runs a query to the end with query metrics and returns its
// rows and the documents the server read (the SDK always asks for query
// metrics).
func queryDocsRead(t *testing.T, cc *azcosmos.ContainerClient, q string, pk azcosmos.PartitionKey, params ...azcosmos.QueryParameter) ([]json.RawMessage, int) {
	t.Helper()
	pager := cc.NewQueryItemsPager(q, pk, &azcosmos.QueryOptions{PageSizeHint: 7, QueryParameters: params})
	var rows []json.RawMessage
	read := 0
	for pager.More() {
		r, err := pager.NextPage(ctx())
		must(t, err, q)
		for _, it := range r.Items {
			rows = append(rows, it)
		}
		if r.QueryMetrics == nil {
			t.Fatal("no query metrics")
		}
		m := retrievedDocs.FindStringSubmatch(*r.QueryMetrics)
		n, _ := strconv.Atoi(m[1])
		read += n
	}
	return rows, read
}

// TestSyntheticKeyThroughSDK: a container declares concat(/date, ".",
// hash(/vin, 400)); the Go SDK writes items without the key, the server
// stores it, reads and queries by the base values touch one logical
// partition, and concurrent writes spread over the 4 partitions exactly as
// the public synthkey package predicts.
func TestSyntheticKeyThroughSDK(t *testing.T) {
	s := startServer(t, server.Options{})
	r := newRaw(t, s, auth.EmulatorKey)
	c := newClient(t, s, auth.EmulatorKey, nil)
	const expr = `concat(/date, ".", hash(/vin, 400))`
	createSynthetic(t, r, "db", "telemetry", expr, 24000)
	cc, err := c.NewContainer("db", "telemetry")
	must(t, err, "container client")
	x := synthkey.MustParse(expr)

	// Concurrent writes without the key (an empty partition key).
	const n = 2000
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				doc := fmt.Sprintf(`{"id":"r%d","date":"2026-11-%02d","vin":"VIN%05d","speed":%d}`, i, 1+i%5, i%300, i)
				if _, err := cc.CreateItem(ctx(), azcosmos.NewPartitionKey(), []byte(doc), nil); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("create without the key: %v", err)
	}

	// The stored key is the computed one; the item reads back by base values.
	date, vin := "2026-11-03", "VIN00042"
	want := fmt.Sprintf("%s.%d", date, synthkey.Hash(vin, 400))
	resp, err := cc.ReadItem(ctx(), azcosmos.NewPartitionKeyString(date).AppendString(vin), "r342", nil)
	must(t, err, "read by base values")
	var item struct{ PK, Date, Vin string }
	must(t, json.Unmarshal(resp.Value, &item), "decode")
	if item.PK != want || item.Vin != vin {
		t.Fatalf("item r342: pk %q vin %q, want pk %q", item.PK, item.Vin, want)
	}
	_, err = cc.ReadItem(ctx(), azcosmos.NewPartitionKeyString(want), "r342", nil)
	must(t, err, "read by the computed key")

	// A query by base values reads one logical partition only.
	rows, read := queryDocsRead(t, cc, "SELECT c.id FROM c WHERE c.date = @d AND c.vin = @v", azcosmos.NewPartitionKey(),
		azcosmos.QueryParameter{Name: "@d", Value: date}, azcosmos.QueryParameter{Name: "@v", Value: vin})
	expected := 0
	for i := range n {
		if fmt.Sprintf("2026-11-%02d", 1+i%5) == date && fmt.Sprintf("VIN%05d", i%300) == vin {
			expected++
		}
	}
	if len(rows) != expected || expected == 0 {
		t.Fatalf("query by base values: %d rows, want %d", len(rows), expected)
	}
	logical := 0
	for i := range n {
		d, v := fmt.Sprintf("2026-11-%02d", 1+i%5), fmt.Sprintf("VIN%05d", i%300)
		if fmt.Sprintf("%s.%d", d, synthkey.Hash(v, 400)) == want {
			logical++
		}
	}
	if read > logical+2 {
		t.Fatalf("the query read %d documents; its logical partition holds %d", read, logical)
	}

	// A correct key is accepted, a wrong one refused naming the right one.
	_, err = cc.CreateItem(ctx(), azcosmos.NewPartitionKeyString(want), []byte(fmt.Sprintf(`{"id":"ok","date":%q,"vin":%q,"pk":%q}`, date, vin, want)), nil)
	must(t, err, "create with the correct key")
	_, err = cc.CreateItem(ctx(), azcosmos.NewPartitionKey(), []byte(fmt.Sprintf(`{"id":"bad","date":%q,"vin":%q,"pk":"%s.1"}`, date, vin, date)), nil)
	if statusOf(err) != http.StatusBadRequest || !strings.Contains(err.Error(), want) {
		t.Fatalf("create with a wrong key: %v; want 400 naming %s", err, want)
	}
	// Upsert, replace, patch and batch keep the key computed.
	_, err = cc.UpsertItem(ctx(), azcosmos.NewPartitionKey(), []byte(fmt.Sprintf(`{"id":"up","date":%q,"vin":%q}`, date, vin)), nil)
	must(t, err, "upsert without the key")
	_, err = cc.ReplaceItem(ctx(), azcosmos.NewPartitionKeyString(date).AppendString(vin), "up", []byte(fmt.Sprintf(`{"id":"up","date":%q,"vin":%q,"speed":1}`, date, vin)), nil)
	must(t, err, "replace by base values")
	var ops azcosmos.PatchOperations
	ops.AppendSet("/speed", 2)
	_, err = cc.PatchItem(ctx(), azcosmos.NewPartitionKeyString(want), "up", ops, nil)
	must(t, err, "patch")
	var moving azcosmos.PatchOperations
	moving.AppendSet("/vin", "VIN99999")
	if _, err = cc.PatchItem(ctx(), azcosmos.NewPartitionKeyString(want), "up", moving, nil); statusOf(err) != http.StatusBadRequest {
		t.Fatalf("a patch that changes a base value: %v, want 400", err)
	}
	b := cc.NewTransactionalBatch(azcosmos.NewPartitionKeyString(want))
	b.CreateItem([]byte(fmt.Sprintf(`{"id":"b1","date":%q,"vin":%q}`, date, vin)), nil)
	b.UpsertItem([]byte(fmt.Sprintf(`{"id":"b2","date":%q,"vin":%q}`, date, vin)), nil)
	br, err := cc.ExecuteTransactionalBatch(ctx(), b, nil)
	must(t, err, "batch")
	if !br.Success {
		t.Fatalf("batch without keys failed: %+v", br.OperationResults)
	}
	got, err := cc.ReadItem(ctx(), azcosmos.NewPartitionKeyString(date).AppendString(vin), "b1", nil)
	must(t, err, "read a batch-created item by base values")
	if !strings.Contains(string(got.Value), `"pk":"`+want+`"`) {
		t.Fatalf("batch item stored without its key: %s", got.Value)
	}

	// Spread: the per-partition item counts are exactly what the public
	// package and the partition map predict.
	rs := ranges(t, r, "db", "telemetry")
	if len(rs) != 4 {
		t.Fatalf("%d ranges, want 4", len(rs))
	}
	predicted := map[string]int64{}
	for i := range n {
		doc := fmt.Sprintf(`{"date":"2026-11-%02d","vin":"VIN%05d"}`, 1+i%5, i%300)
		k, err := x.Compute([]byte(doc), nil)
		must(t, err, "compute")
		predicted[rangeOfKey(t, rs, k[0].(string))]++
	}
	predicted[rangeOfKey(t, rs, want)] += 4 // ok, up, b1 and b2, added since
	var tel struct {
		Partitions []struct {
			ID    string
			Items int64 `json:"itemCount"`
		}
	}
	must(t, json.Unmarshal(r.do(t, "GET", "/dbs/db/colls/telemetry/partitions", nil, nil).Body, &tel), "telemetry")
	for _, p := range tel.Partitions {
		if p.Items != predicted[p.ID] || p.Items == 0 {
			t.Fatalf("partition %s holds %d items; the synthetic key predicts %d (all: %v)", p.ID, p.Items, predicted[p.ID], predicted)
		}
	}
}

// TestSyntheticRandomSuffix: with a random suffix the server picks the
// suffix; a query on the base values reads exactly the suffixed logical
// partitions and merges them, and a point read by base values finds the
// item among them.
func TestSyntheticRandomSuffix(t *testing.T) {
	s := startServer(t, server.Options{})
	r := newRaw(t, s, auth.EmulatorKey)
	c := newClient(t, s, auth.EmulatorKey, nil)
	const expr = `concat(/date, "|", /site, ".", random(1, 10))`
	createSynthetic(t, r, "db", "events", expr, 24000)
	cc, err := c.NewContainer("db", "events")
	must(t, err, "container client")
	suffixes := map[string]bool{}
	for i := range 300 {
		doc := fmt.Sprintf(`{"id":"e%d","date":"d%d","site":"s%d","n":%d}`, i, i%3, i%2, i)
		resp, err := cc.CreateItem(ctx(), azcosmos.NewPartitionKey(), []byte(doc), &azcosmos.ItemOptions{EnableContentResponseOnWrite: true})
		must(t, err, "create")
		var v struct{ PK string }
		must(t, json.Unmarshal(resp.Value, &v), "decode")
		suffixes[v.PK] = true
	}
	if len(suffixes) < 40 { // 6 (date, site) pairs × up to 10 suffixes
		t.Fatalf("only %d distinct keys: the random suffix does not spread", len(suffixes))
	}
	rows, _ := queryDocsRead(t, cc, "SELECT VALUE c.n FROM c WHERE c.date = 'd1' AND c.site = 's0' ORDER BY c.n", azcosmos.NewPartitionKey())
	var want []string
	for i := range 300 {
		if i%3 == 1 && i%2 == 0 {
			want = append(want, strconv.Itoa(i))
		}
	}
	var got []string
	for _, r := range rows {
		got = append(got, string(r))
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("query on the base values: %v, want %v", got, want)
	}
	// Streaming (no ORDER BY, which reads its partitions on every page), the
	// documents read are the matches and a read-ahead per page.
	rows, read := queryDocsRead(t, cc, "SELECT VALUE c.n FROM c WHERE c.date = 'd1' AND c.site = 's0'", azcosmos.NewPartitionKey())
	if len(rows) != len(want) || read > len(want)+10 {
		t.Fatalf("the query read %d documents for %d matches (%d rows): it did not stay within the suffixed keys", read, len(want), len(rows))
	}
	resp, err := cc.ReadItem(ctx(), azcosmos.NewPartitionKeyString("d1").AppendString("s0"), "e4", nil)
	must(t, err, "point read by base values")
	if !strings.Contains(string(resp.Value), `"n":4`) {
		t.Fatalf("read e4: %s", resp.Value)
	}
	if _, err := cc.ReadItem(ctx(), azcosmos.NewPartitionKeyString("d1").AppendString("s1"), "e4", nil); statusOf(err) != http.StatusNotFound {
		t.Fatalf("read with other base values: %v, want 404", err)
	}

	// Bad declarations are refused with the position of the error.
	resp2 := r.do(t, "POST", "/dbs/db/colls", []byte(`{"id":"bad","partitionKey":{"paths":["/pk"]},"parsecSyntheticKey":"concat(/a, ,)"}`), nil)
	if resp2.Status != http.StatusBadRequest || !strings.Contains(string(resp2.Body), "column") {
		t.Fatalf("invalid expression: %d %s", resp2.Status, resp2.Body)
	}
}
