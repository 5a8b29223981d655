package tables

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/parsecdb/parsec/internal/api/cosmos"
	"github.com/parsecdb/parsec/internal/api/table"
	"github.com/parsecdb/parsec/internal/auth"
	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/epk"
	"github.com/parsecdb/parsec/internal/server"
)

func cosmosClient(t *testing.T, s *server.Server) *azcosmos.Client {
	t.Helper()
	cred, err := azcosmos.NewKeyCredential(emulatorKey)
	if err != nil {
		t.Fatal(err)
	}
	o := &azcosmos.ClientOptions{}
	o.Retry.MaxRetries = -1
	c, err := azcosmos.NewClientWithKey(s.URL()+"/", cred, o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestNoSQLRoundTrip reads a table's entity as an item through the NoSQL
// API, writes it back changed there, and reads it through the Table API:
// the types the annotations carry (an Int64 beyond 2^53, a DateTime with
// 100 ns) survive both ways.
func TestNoSQLRoundTrip(t *testing.T) {
	s := startServer(t, server.Options{})
	ctx := context.Background()
	tc := newTable(t, service(t, s, hostStyle, emulatorKey), "shared")
	when := time.Date(2021, 6, 7, 8, 9, 10, 987654300, time.UTC)
	in := aztables.EDMEntity{Entity: aztables.Entity{PartitionKey: "p", RowKey: "r"}, Properties: map[string]any{
		"Big": aztables.EDMInt64(1<<62 + 3), "When": aztables.EDMDateTime(when), "N": int32(7), "id": "a property named id",
	}}
	body, _ := json.Marshal(in)
	if _, err := tc.AddEntity(ctx, body, nil); err != nil {
		t.Fatal(err)
	}
	cc, err := cosmosClient(t, s).NewContainer(table.Database, "shared")
	if err != nil {
		t.Fatal(err)
	}
	item, err := cc.ReadItem(ctx, azcosmos.NewPartitionKeyString("p"), "r", nil)
	if err != nil {
		t.Fatalf("NoSQL read of the entity: %v", err)
	}
	var doc map[string]any
	if err := json.Unmarshal(item.Value, &doc); err != nil {
		t.Fatal(err)
	}
	if doc["id"] != "r" || doc["PartitionKey"] != "p" || doc["Big"] != "4611686018427387907" || doc["Big@odata.type"] != "Edm.Int64" ||
		doc["When"] != "2021-06-07T08:09:10.9876543Z" || doc["N"] != 7.0 || doc["id~"] != "a property named id" {
		t.Errorf("the stored item is %s", item.Value)
	}
	// A NoSQL query sees the properties.
	pager := cc.NewQueryItemsPager("SELECT VALUE c.N FROM c WHERE c.N > 5", azcosmos.NewPartitionKeyString("p"), nil)
	page, err := pager.NextPage(ctx)
	if err != nil || len(page.Items) != 1 || string(page.Items[0]) != "7" {
		t.Errorf("NoSQL query: %v %q", err, page.Items)
	}
	// Written back through the NoSQL API with other values.
	doc["Big"] = "-9223372036854775807"
	doc["When"] = "1999-12-31T23:59:59.0000001Z"
	doc["Added"] = "from NoSQL"
	doc["Flag"] = true
	for _, k := range []string{"_rid", "_self", "_etag", "_ts", "_attachments"} {
		delete(doc, k)
	}
	nb, _ := json.Marshal(doc)
	if _, err := cc.UpsertItem(ctx, azcosmos.NewPartitionKeyString("p"), nb, nil); err != nil {
		t.Fatal(err)
	}
	got, err := tc.GetEntity(ctx, "p", "r", nil)
	if err != nil {
		t.Fatal(err)
	}
	var out aztables.EDMEntity
	if err := json.Unmarshal(got.Value, &out); err != nil {
		t.Fatal(err)
	}
	dt, _ := out.Properties["When"].(aztables.EDMDateTime)
	if out.Properties["Big"] != aztables.EDMInt64(-9223372036854775807) || !time.Time(dt).Equal(time.Date(1999, 12, 31, 23, 59, 59, 100, time.UTC)) ||
		out.Properties["Added"] != "from NoSQL" || out.Properties["Flag"] != true || out.Properties["N"] != int32(7) || out.Properties["id"] != "a property named id" {
		t.Errorf("the Table API read back %s", got.Value)
	}
	// An item created through the NoSQL API alone is an entity too.
	if _, err := cc.CreateItem(ctx, azcosmos.NewPartitionKeyString("p"), []byte(`{"id":"nosql","PartitionKey":"p","S":"x","F":1.5,"Obj":{"a":[1,2]},"Nil":null}`), nil); err != nil {
		t.Fatal(err)
	}
	if p := getProps(t, tc, "p", "nosql"); p["S"] != "x" || p["F"] != 1.5 || p["Obj"] != `{"a":[1,2]}` || p["Nil"] != nil {
		t.Errorf("an item written through the NoSQL API reads as %v", p)
	}
}

// TestThrottling runs a hot PartitionKey on a table of four physical
// partitions (4,000 RU/s at 1,000 per partition): it is throttled with
// 429 and x-ms-retry-after-ms, it is named in its partition's hot keys,
// a key on another partition still takes writes, and the table's
// throughput is an ordinary container offer the NoSQL API reads and
// raises.
func TestThrottling(t *testing.T) {
	s := startServer(t, server.Options{PartitionMaxRUs: 1000, TableThroughput: 4000})
	ctx := context.Background()
	tc := newTable(t, service(t, s, pathStyle, emulatorKey), "hot")
	c, err := s.Engine().Container(table.Database, "hot")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(c.Partitions()); n != 4 {
		t.Fatalf("the table has %d physical partitions, want 4", n)
	}
	var throttled *azcore.ResponseError
	big := strings.Repeat("x", 8000)
	for i := 0; i < 5000 && throttled == nil; i++ {
		body := ent("hotkey", "r"+strconv.Itoa(i), map[string]any{"Pad": big})
		_, err := tc.AddEntity(ctx, body, nil)
		var re *azcore.ResponseError
		if errors.As(err, &re) && re.StatusCode == http.StatusTooManyRequests {
			throttled = re
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if throttled == nil {
		t.Fatal("5000 writes of 8 KB to one PartitionKey at 1,000 RU/s were never throttled")
	}
	if throttled.ErrorCode != "TooManyRequests" || throttled.RawResponse.Header.Get("x-ms-retry-after-ms") == "" {
		t.Errorf("the 429 has code %q and x-ms-retry-after-ms %q", throttled.ErrorCode, throttled.RawResponse.Header.Get("x-ms-retry-after-ms"))
	}
	// The partition map `parsec partitions` prints, from the same REST
	// endpoint: the throttled partition names the hot key first.
	tel := telemetry(t, s, table.Database, "hot")
	if len(tel.Partitions) != 4 || tel.Throughput != 4000 {
		t.Errorf("telemetry: %d partitions at %d RU/s, want 4 at 4000", len(tel.Partitions), tel.Throughput)
	}
	hotRange := ""
	for _, p := range tel.Partitions {
		if p.Throttled > 0 {
			hotRange = p.ID
			if len(p.HotByRU) == 0 || p.HotByRU[0].Key != `["hotkey"]` {
				t.Errorf("the throttled partition %s names %+v as its hottest keys, want [\"hotkey\"] first", p.ID, p.HotByRU)
			}
		}
	}
	if hotRange == "" {
		t.Errorf("no partition counts the 429: %+v", tel.Partitions)
	}
	// A key in another partition still takes writes: find one.
	wrote := false
	for i := 0; i < 64 && !wrote; i++ {
		pk := "cold" + strconv.Itoa(i)
		if c.PartitionFor(mustEPK(t, c, pk)).Range().ID == hotRange {
			continue
		}
		if _, err := tc.AddEntity(ctx, ent(pk, "r", nil), nil); err != nil {
			t.Fatalf("a write to %s, in another partition: %v", pk, err)
		}
		wrote = true
	}
	if !wrote {
		t.Fatal("found no key outside the hot partition")
	}
	// The table's offer, through the NoSQL API.
	cc, _ := cosmosClient(t, s).NewContainer(table.Database, "hot")
	tp, err := cc.ReadThroughput(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := tp.ThroughputProperties.ManualThroughput(); v != 4000 {
		t.Errorf("the table's throughput is %d RU/s, want 4000", v)
	}
	if _, err := cc.ReplaceThroughput(ctx, azcosmos.NewManualThroughputProperties(8000), nil); err != nil {
		t.Fatalf("raising the table's throughput: %v", err)
	}
	tp, err = cc.ReadThroughput(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := tp.ThroughputProperties.ManualThroughput(); v != 8000 {
		t.Errorf("after the raise the table's throughput is %d RU/s, want 8000", v)
	}
}

// mustEPK is the effective partition key of a PartitionKey in c.
func mustEPK(t *testing.T, c *engine.Container, pk string) string {
	t.Helper()
	op, err := c.PrepareKeyed(engine.OpRead, "x", epk.Key{epk.String(pk)}, true)
	if err != nil {
		t.Fatal(err)
	}
	return op.EPK
}

// telemetry reads a container's partition map as `parsec partitions` does
// (GET /dbs/{db}/colls/{coll}/partitions, signed with the account key).
func telemetry(t *testing.T, s *server.Server, db, coll string) cosmos.ContainerTelemetry {
	t.Helper()
	req, err := http.NewRequest("GET", s.URL()+"/dbs/"+db+"/colls/"+coll+"/partitions", nil)
	if err != nil {
		t.Fatal(err)
	}
	key, _ := auth.DecodeKey(emulatorKey)
	auth.SignRequest(req, key, time.Now())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tel cosmos.ContainerTelemetry
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("partition telemetry: %s", resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&tel); err != nil {
		t.Fatal(err)
	}
	return tel
}
