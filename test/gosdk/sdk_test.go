package gosdk

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/parsecdb/parsec/internal/auth"
	"github.com/parsecdb/parsec/internal/server"
)

func TestDatabases(t *testing.T) {
	s := startServer(t, server.Options{})
	c := newClient(t, s, auth.EmulatorKey, nil)

	resp, err := c.CreateDatabase(ctx(), azcosmos.DatabaseProperties{ID: "shop"}, nil)
	must(t, err, "create database")
	if resp.DatabaseProperties.ID != "shop" || resp.ETag == "" || resp.RequestCharge <= 0 {
		t.Fatalf("create database returned %+v (etag %q, charge %v)", resp.DatabaseProperties, resp.ETag, resp.RequestCharge)
	}
	_, err = c.CreateDatabase(ctx(), azcosmos.DatabaseProperties{ID: "shop"}, nil)
	wantStatus(t, err, http.StatusConflict, "duplicate database")

	db, _ := c.NewDatabase("shop")
	rd, err := db.Read(ctx(), nil)
	must(t, err, "read database")
	if rd.DatabaseProperties.ID != "shop" || rd.DatabaseProperties.ResourceID == "" {
		t.Fatalf("read database: %+v", rd.DatabaseProperties)
	}
	if b, _ := base64.StdEncoding.DecodeString(rd.DatabaseProperties.ResourceID); len(b) != 4 {
		t.Errorf("database _rid %q decodes to %d bytes, want 4", rd.DatabaseProperties.ResourceID, len(b))
	}

	_, err = c.CreateDatabase(ctx(), azcosmos.DatabaseProperties{ID: "other"}, nil)
	must(t, err, "create second database")
	list := newRaw(t, s, auth.EmulatorKey).do(t, "GET", "/dbs", nil, nil).JSON(t)
	if list["_count"].(float64) != 2 || len(list["Databases"].([]any)) != 2 {
		t.Fatalf("list databases: %v", list)
	}

	_, err = db.Delete(ctx(), nil)
	must(t, err, "delete database")
	_, err = db.Read(ctx(), nil)
	wantStatus(t, err, http.StatusNotFound, "read deleted database")
	_, err = db.Delete(ctx(), nil)
	wantStatus(t, err, http.StatusNotFound, "delete deleted database")
}

func TestContainersOfEveryPartitionKeyKind(t *testing.T) {
	s := startServer(t, server.Options{})
	c := newClient(t, s, auth.EmulatorKey, nil)
	_, err := c.CreateDatabase(ctx(), azcosmos.DatabaseProperties{ID: "db"}, nil)
	must(t, err, "create database")
	db, _ := c.NewDatabase("db")

	cases := []struct {
		id          string
		def         azcosmos.PartitionKeyDefinition
		wantKind    string
		wantVersion int
	}{
		{"hash-default", azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}, "Hash", 2},
		{"hash-v1", azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}, Version: 1}, "Hash", 1},
		{"hash-v2", azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}, Version: 2}, "Hash", 2},
		{"nested", azcosmos.PartitionKeyDefinition{Paths: []string{"/a/b"}, Version: 2}, "Hash", 2},
		{"multi2", azcosmos.PartitionKeyDefinition{Kind: azcosmos.PartitionKeyKindMultiHash, Paths: []string{"/tenant", "/user"}, Version: 2}, "MultiHash", 2},
		{"multi3", azcosmos.PartitionKeyDefinition{Kind: azcosmos.PartitionKeyKindMultiHash, Paths: []string{"/a", "/b", "/c"}, Version: 2}, "MultiHash", 2},
	}
	for _, tc := range cases {
		ttl := int32(3600)
		_, err := db.CreateContainer(ctx(), azcosmos.ContainerProperties{ID: tc.id, PartitionKeyDefinition: tc.def, DefaultTimeToLive: &ttl}, nil)
		must(t, err, "create "+tc.id)
		cc, _ := db.NewContainer(tc.id)
		r, err := cc.Read(ctx(), nil)
		must(t, err, "read "+tc.id)
		p := r.ContainerProperties
		if string(p.PartitionKeyDefinition.Kind) != tc.wantKind || p.PartitionKeyDefinition.Version != tc.wantVersion ||
			strings.Join(p.PartitionKeyDefinition.Paths, ",") != strings.Join(tc.def.Paths, ",") {
			t.Errorf("%s: partition key %+v, want kind %s version %d paths %v", tc.id, p.PartitionKeyDefinition, tc.wantKind, tc.wantVersion, tc.def.Paths)
		}
		if p.DefaultTimeToLive == nil || *p.DefaultTimeToLive != 3600 {
			t.Errorf("%s: defaultTtl not echoed: %v", tc.id, p.DefaultTimeToLive)
		}
		if p.IndexingPolicy == nil || !p.IndexingPolicy.Automatic || len(p.IndexingPolicy.IncludedPaths) == 0 {
			t.Errorf("%s: default indexing policy not echoed: %+v", tc.id, p.IndexingPolicy)
		}
		if b, _ := base64.StdEncoding.DecodeString(strings.ReplaceAll(p.ResourceID, "-", "/")); len(b) != 8 {
			t.Errorf("%s: container _rid %q decodes to %d bytes, want 8", tc.id, p.ResourceID, len(b))
		}
	}

	// The echoed version is in the raw body too (the JS SDK hashes V1 without it).
	body := newRaw(t, s, auth.EmulatorKey).do(t, "GET", "/dbs/db/colls/hash-default", nil, nil).JSON(t)
	if v := body["partitionKey"].(map[string]any)["version"]; v != float64(2) {
		t.Errorf("partitionKey.version = %v, want 2", v)
	}

	_, err = db.CreateContainer(ctx(), azcosmos.ContainerProperties{ID: "hash-v2", PartitionKeyDefinition: hashPK("/pk")}, nil)
	wantStatus(t, err, http.StatusConflict, "duplicate container")
	_, err = db.CreateContainer(ctx(), azcosmos.ContainerProperties{ID: "bad", PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Kind: azcosmos.PartitionKeyKindMultiHash, Paths: []string{"/a", "/b", "/c", "/d"}, Version: 2}}, nil)
	wantStatus(t, err, http.StatusBadRequest, "MultiHash with 4 paths")
	_, err = db.CreateContainer(ctx(), azcosmos.ContainerProperties{ID: "bad", PartitionKeyDefinition: hashPK("nope")}, nil)
	wantStatus(t, err, http.StatusBadRequest, "path without a slash")

	// Replace: indexing policy and TTL change; the partition key cannot.
	cc, _ := db.NewContainer("hash-v2")
	r, err := cc.Read(ctx(), nil)
	must(t, err, "read")
	p := *r.ContainerProperties
	p.IndexingPolicy = &azcosmos.IndexingPolicy{Automatic: true, IndexingMode: azcosmos.IndexingModeConsistent,
		IncludedPaths: []azcosmos.IncludedPath{{Path: "/name/?"}}, ExcludedPaths: []azcosmos.ExcludedPath{{Path: "/*"}}}
	ttl := int32(-1)
	p.DefaultTimeToLive = &ttl
	rr, err := cc.Replace(ctx(), p, nil)
	must(t, err, "replace container")
	if rr.ContainerProperties.IndexingPolicy.IncludedPaths[0].Path != "/name/?" || *rr.ContainerProperties.DefaultTimeToLive != -1 {
		t.Errorf("replace not applied: %+v", rr.ContainerProperties.IndexingPolicy)
	}
	r2, err := cc.Read(ctx(), nil)
	must(t, err, "read after replace")
	if r2.ContainerProperties.IndexingPolicy.IncludedPaths[0].Path != "/name/?" {
		t.Errorf("replace did not persist: %+v", r2.ContainerProperties.IndexingPolicy)
	}
	p.PartitionKeyDefinition = hashPK("/other")
	_, err = cc.Replace(ctx(), p, nil)
	wantStatus(t, err, http.StatusBadRequest, "changing the partition key")

	_, err = cc.Delete(ctx(), nil)
	must(t, err, "delete container")
	_, err = cc.Read(ctx(), nil)
	wantStatus(t, err, http.StatusNotFound, "read deleted container")
}

type order struct {
	ID       string   `json:"id"`
	PK       string   `json:"pk"`
	Customer string   `json:"customer"`
	Total    float64  `json:"total"`
	Tags     []string `json:"tags,omitempty"`
}

func TestItemCRUD(t *testing.T) {
	s := startServer(t, server.Options{})
	c := newClient(t, s, auth.EmulatorKey, &azcosmos.ClientOptions{EnableContentResponseOnWrite: true})
	cc := setup(t, c, "db", "orders", hashPK("/pk"), 0)
	pk := azcosmos.NewPartitionKeyString("alice")

	item, _ := json.Marshal(order{ID: "o1", PK: "alice", Customer: "Alice", Total: 12.5})
	cr, err := cc.CreateItem(ctx(), pk, item, nil)
	must(t, err, "create")
	if cr.RequestCharge <= 0 || cr.ETag == "" || cr.SessionToken == nil || *cr.SessionToken == "" || cr.ActivityID == "" {
		t.Fatalf("create response headers: charge %v etag %q session %v activity %q", cr.RequestCharge, cr.ETag, cr.SessionToken, cr.ActivityID)
	}
	var sys map[string]any
	must(t, json.Unmarshal(cr.Value, &sys), "create body")
	checkSystemProperties(t, sys)
	if sys["customer"] != "Alice" || sys["_etag"] != string(cr.ETag) {
		t.Errorf("created body %v, etag header %q", sys, cr.ETag)
	}

	_, err = cc.CreateItem(ctx(), pk, item, nil)
	wantStatus(t, err, http.StatusConflict, "duplicate create")

	// The same id under another partition key is another item.
	other, _ := json.Marshal(order{ID: "o1", PK: "bob", Customer: "Bob"})
	_, err = cc.CreateItem(ctx(), azcosmos.NewPartitionKeyString("bob"), other, nil)
	must(t, err, "same id, other key")

	rd, err := cc.ReadItem(ctx(), pk, "o1", nil)
	must(t, err, "read")
	var got order
	must(t, json.Unmarshal(rd.Value, &got), "read body")
	if got.Customer != "Alice" || got.Total != 12.5 || rd.ETag != cr.ETag {
		t.Fatalf("read %+v etag %q, want Alice/12.5 etag %q", got, rd.ETag, cr.ETag)
	}
	rb, err := cc.ReadItem(ctx(), azcosmos.NewPartitionKeyString("bob"), "o1", nil)
	must(t, err, "read bob")
	must(t, json.Unmarshal(rb.Value, &got), "read bob body")
	if got.Customer != "Bob" {
		t.Fatalf("bob's o1 is %+v", got)
	}

	// Replace with the right etag, then with a stale one.
	item2, _ := json.Marshal(order{ID: "o1", PK: "alice", Customer: "Alice", Total: 20})
	rp, err := cc.ReplaceItem(ctx(), pk, "o1", item2, &azcosmos.ItemOptions{IfMatchEtag: &cr.ETag})
	must(t, err, "replace")
	if rp.ETag == cr.ETag {
		t.Fatalf("replace kept the etag %q", rp.ETag)
	}
	_, err = cc.ReplaceItem(ctx(), pk, "o1", item2, &azcosmos.ItemOptions{IfMatchEtag: &cr.ETag})
	wantStatus(t, err, http.StatusPreconditionFailed, "replace with stale etag")
	_, err = cc.DeleteItem(ctx(), pk, "o1", &azcosmos.ItemOptions{IfMatchEtag: &cr.ETag})
	wantStatus(t, err, http.StatusPreconditionFailed, "delete with stale etag")

	// If-None-Match with the current etag: 304.
	// (The Go SDK has no If-None-Match option on reads; the raw request shows the server's side.)
	raw := newRaw(t, s, auth.EmulatorKey)
	if r := raw.do(t, "GET", "/dbs/db/colls/orders/docs/o1", nil, map[string]string{"x-ms-documentdb-partitionkey": `["alice"]`, "If-None-Match": string(rp.ETag)}); r.Status != http.StatusNotModified || len(r.Body) != 0 {
		t.Fatalf("If-None-Match current etag: status %d body %q", r.Status, r.Body)
	}
	if r := raw.do(t, "GET", "/dbs/db/colls/orders/docs/o1", nil, map[string]string{"x-ms-documentdb-partitionkey": `["alice"]`, "If-None-Match": string(cr.ETag)}); r.Status != http.StatusOK {
		t.Fatalf("If-None-Match stale etag: status %d", r.Status)
	}

	// Upsert: 201 when new, 200 when it replaces.
	up, _ := json.Marshal(order{ID: "o2", PK: "alice", Total: 1})
	ur, err := cc.UpsertItem(ctx(), pk, up, nil)
	must(t, err, "upsert new")
	if ur.RawResponse.StatusCode != http.StatusCreated {
		t.Errorf("upsert of a new item: status %d, want 201", ur.RawResponse.StatusCode)
	}
	up, _ = json.Marshal(order{ID: "o2", PK: "alice", Total: 2})
	ur, err = cc.UpsertItem(ctx(), pk, up, nil)
	must(t, err, "upsert existing")
	if ur.RawResponse.StatusCode != http.StatusOK {
		t.Errorf("upsert of an existing item: status %d, want 200", ur.RawResponse.StatusCode)
	}
	rd, err = cc.ReadItem(ctx(), pk, "o2", nil)
	must(t, err, "read upserted")
	must(t, json.Unmarshal(rd.Value, &got), "read upserted body")
	if got.Total != 2 {
		t.Errorf("upserted total = %v, want 2", got.Total)
	}

	_, err = cc.DeleteItem(ctx(), pk, "o1", nil)
	must(t, err, "delete")
	_, err = cc.ReadItem(ctx(), pk, "o1", nil)
	wantStatus(t, err, http.StatusNotFound, "read deleted")
	_, err = cc.DeleteItem(ctx(), pk, "o1", nil)
	wantStatus(t, err, http.StatusNotFound, "delete deleted")
	if _, err := cc.ReadItem(ctx(), azcosmos.NewPartitionKeyString("bob"), "o1", nil); err != nil {
		t.Fatalf("deleting alice's o1 touched bob's: %v", err)
	}
}

func TestReturnMinimalByDefault(t *testing.T) {
	s := startServer(t, server.Options{})
	c := newClient(t, s, auth.EmulatorKey, nil) // EnableContentResponseOnWrite false: Prefer: return=minimal
	cc := setup(t, c, "db", "c", hashPK("/pk"), 0)
	item, _ := json.Marshal(order{ID: "x", PK: "p"})
	r, err := cc.CreateItem(ctx(), azcosmos.NewPartitionKeyString("p"), item, nil)
	must(t, err, "create")
	if len(r.Value) != 0 || r.ETag == "" {
		t.Fatalf("minimal create returned body %q etag %q", r.Value, r.ETag)
	}
}

func checkSystemProperties(t *testing.T, doc map[string]any) {
	t.Helper()
	rid, _ := doc["_rid"].(string)
	if b, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(rid, "-", "/")); err != nil || len(b) != 16 {
		t.Errorf("_rid %q is not 16 bytes of base64", rid)
	}
	self, _ := doc["_self"].(string)
	if !strings.HasPrefix(self, "dbs/") || !strings.Contains(self, "/colls/") || !strings.HasSuffix(self, "/docs/"+rid+"/") {
		t.Errorf("_self %q is not dbs/<rid>/colls/<rid>/docs/<rid>/", self)
	}
	etag, _ := doc["_etag"].(string)
	if len(etag) < 3 || etag[0] != '"' || etag[len(etag)-1] != '"' {
		t.Errorf("_etag %q is not quoted", etag)
	}
	ts, ok := doc["_ts"].(float64)
	if !ok || ts != float64(int64(ts)) || ts < 1.7e9 {
		t.Errorf("_ts %v is not an integer epoch in seconds", doc["_ts"])
	}
	if doc["_attachments"] != "attachments/" {
		t.Errorf("_attachments = %v", doc["_attachments"])
	}
}

func TestPatch(t *testing.T) {
	s := startServer(t, server.Options{})
	c := newClient(t, s, auth.EmulatorKey, &azcosmos.ClientOptions{EnableContentResponseOnWrite: true})
	cc := setup(t, c, "db", "c", hashPK("/pk"), 0)
	pk := azcosmos.NewPartitionKeyString("p")
	item := []byte(`{"id":"x","pk":"p","n":1,"name":"a","tags":["t1"],"gone":true,"nested":{"k":1}}`)
	_, err := cc.CreateItem(ctx(), pk, item, nil)
	must(t, err, "create")

	var ops azcosmos.PatchOperations
	ops.AppendIncrement("/n", 4)
	ops.AppendSet("/name", "b")
	ops.AppendAdd("/tags/-", "t2")
	ops.AppendRemove("/gone")
	ops.AppendReplace("/nested/k", 7)
	ops.AppendAdd("/fresh", map[string]any{"x": 1})
	r, err := cc.PatchItem(ctx(), pk, "x", ops, nil)
	must(t, err, "patch")
	var got map[string]any
	must(t, json.Unmarshal(r.Value, &got), "patch body")
	if got["n"] != float64(5) || got["name"] != "b" || fmt.Sprint(got["tags"]) != "[t1 t2]" || got["gone"] != nil ||
		got["nested"].(map[string]any)["k"] != float64(7) || got["fresh"].(map[string]any)["x"] != float64(1) {
		t.Fatalf("patched document: %v", got)
	}
	rd, err := cc.ReadItem(ctx(), pk, "x", nil)
	must(t, err, "read")
	if rd.ETag != r.ETag {
		t.Errorf("patch etag %q, read etag %q", r.ETag, rd.ETag)
	}

	var bad azcosmos.PatchOperations
	bad.AppendReplace("/missing", 1)
	_, err = cc.PatchItem(ctx(), pk, "x", bad, nil)
	wantStatus(t, err, http.StatusBadRequest, "replace of a missing path")
	var pkChange azcosmos.PatchOperations
	pkChange.AppendSet("/pk", "q")
	_, err = cc.PatchItem(ctx(), pk, "x", pkChange, nil)
	wantStatus(t, err, http.StatusBadRequest, "patch of the partition key")
	var notFound azcosmos.PatchOperations
	notFound.AppendSet("/n", 1)
	_, err = cc.PatchItem(ctx(), pk, "nope", notFound, nil)
	wantStatus(t, err, http.StatusNotFound, "patch of a missing item")

	rd, err = cc.ReadItem(ctx(), pk, "x", nil)
	must(t, err, "read after failed patches")
	must(t, json.Unmarshal(rd.Value, &got), "read body")
	if got["n"] != float64(5) || got["pk"] != "p" {
		t.Fatalf("failed patches changed the item: %v", got)
	}

	// A bare array body is accepted too (the JS SDK may send one).
	raw := newRaw(t, s, auth.EmulatorKey)
	resp := raw.do(t, "PATCH", "/dbs/db/colls/c/docs/x", []byte(`[{"op":"incr","path":"/n","value":10}]`), map[string]string{"x-ms-documentdb-partitionkey": `["p"]`})
	if resp.Status != http.StatusOK || resp.JSON(t)["n"] != float64(15) {
		t.Fatalf("bare-array patch: %d %s", resp.Status, resp.Body)
	}
}

func TestTransactionalBatch(t *testing.T) {
	s := startServer(t, server.Options{})
	c := newClient(t, s, auth.EmulatorKey, nil)
	cc := setup(t, c, "db", "c", hashPK("/pk"), 0)
	pk := azcosmos.NewPartitionKeyString("cart")
	_, err := cc.CreateItem(ctx(), pk, []byte(`{"id":"existing","pk":"cart","v":1}`), nil)
	must(t, err, "seed")

	b := cc.NewTransactionalBatch(pk)
	b.CreateItem([]byte(`{"id":"a","pk":"cart","v":1}`), nil)
	b.UpsertItem([]byte(`{"id":"b","pk":"cart","v":2}`), nil)
	b.ReplaceItem("existing", []byte(`{"id":"existing","pk":"cart","v":3}`), nil)
	b.ReadItem("existing", nil)
	var ops azcosmos.PatchOperations
	ops.AppendIncrement("/v", 1)
	b.PatchItem("a", ops, nil)
	r, err := cc.ExecuteTransactionalBatch(ctx(), b, nil)
	must(t, err, "batch")
	if !r.Success || len(r.OperationResults) != 5 {
		t.Fatalf("batch success=%v results=%d", r.Success, len(r.OperationResults))
	}
	var read map[string]any
	must(t, json.Unmarshal(r.OperationResults[3].ResourceBody, &read), "batch read body")
	if read["v"] != float64(3) {
		t.Errorf("batch read sees v=%v, want 3 (the replace before it)", read["v"])
	}
	rd, err := cc.ReadItem(ctx(), pk, "a", nil)
	must(t, err, "read a")
	must(t, json.Unmarshal(rd.Value, &read), "a body")
	if read["v"] != float64(2) {
		t.Errorf("a.v = %v, want 2 after patch", read["v"])
	}

	// Atomic failure: the duplicate create fails with 409, the others 424, nothing applied.
	b = cc.NewTransactionalBatch(pk)
	b.CreateItem([]byte(`{"id":"c","pk":"cart"}`), nil)
	b.CreateItem([]byte(`{"id":"existing","pk":"cart"}`), nil)
	b.DeleteItem("a", nil)
	r, err = cc.ExecuteTransactionalBatch(ctx(), b, nil)
	must(t, err, "failing batch")
	if r.Success {
		t.Fatal("a batch with a duplicate create succeeded")
	}
	want := []int32{424, 409, 424}
	for i, o := range r.OperationResults {
		if o.StatusCode != want[i] {
			t.Errorf("operation %d: status %d, want %d", i, o.StatusCode, want[i])
		}
	}
	_, err = cc.ReadItem(ctx(), pk, "c", nil)
	wantStatus(t, err, http.StatusNotFound, "item created by a failed batch")
	_, err = cc.ReadItem(ctx(), pk, "a", nil)
	must(t, err, "item deleted by a failed batch must still exist")

	// A batch whose item belongs to another partition key is rejected whole.
	b = cc.NewTransactionalBatch(pk)
	b.CreateItem([]byte(`{"id":"d","pk":"elsewhere"}`), nil)
	_, err = cc.ExecuteTransactionalBatch(ctx(), b, nil)
	wantStatus(t, err, http.StatusBadRequest, "batch item with another partition key")

	// More than 100 operations.
	b = cc.NewTransactionalBatch(pk)
	for i := 0; i < 101; i++ {
		b.ReadItem("a", nil)
	}
	_, err = cc.ExecuteTransactionalBatch(ctx(), b, nil)
	wantStatus(t, err, http.StatusBadRequest, "batch of 101 operations")
}

func TestHierarchicalAndNestedKeys(t *testing.T) {
	s := startServer(t, server.Options{})
	c := newClient(t, s, auth.EmulatorKey, &azcosmos.ClientOptions{EnableContentResponseOnWrite: true})
	mh := setup(t, c, "db", "mh", azcosmos.PartitionKeyDefinition{Kind: azcosmos.PartitionKeyKindMultiHash, Paths: []string{"/tenant", "/user"}, Version: 2}, 24000)
	key := azcosmos.NewPartitionKeyString("acme").AppendString("u1")
	_, err := mh.CreateItem(ctx(), key, []byte(`{"id":"1","tenant":"acme","user":"u1"}`), nil)
	must(t, err, "create hierarchical")
	_, err = mh.ReadItem(ctx(), key, "1", nil)
	must(t, err, "read hierarchical")
	_, err = mh.ReadItem(ctx(), azcosmos.NewPartitionKeyString("acme").AppendString("u2"), "1", nil)
	wantStatus(t, err, http.StatusNotFound, "read under another user")
	_, err = mh.ReadItem(ctx(), azcosmos.NewPartitionKeyString("acme"), "1", nil)
	wantStatus(t, err, http.StatusBadRequest, "point read with a key prefix")

	nested := setup(t, c, "db", "nested", hashPK("/a/b"), 0)
	nk := azcosmos.NewPartitionKeyNumber(42)
	_, err = nested.CreateItem(ctx(), nk, []byte(`{"id":"1","a":{"b":42}}`), nil)
	must(t, err, "create nested")
	_, err = nested.ReadItem(ctx(), nk, "1", nil)
	must(t, err, "read nested")
	_, err = nested.CreateItem(ctx(), nk, []byte(`{"id":"2","a":{"b":43}}`), nil)
	wantStatus(t, err, http.StatusBadRequest, "nested key mismatch")

	// Items without the key property live under the undefined/none key.
	none := azcosmos.NullPartitionKey
	_, err = nested.CreateItem(ctx(), none, []byte(`{"id":"3","a":{"b":null}}`), nil)
	must(t, err, "create with a null key")
	_, err = nested.ReadItem(ctx(), none, "3", nil)
	must(t, err, "read with a null key")
}

func TestPartitionKeyRanges(t *testing.T) {
	s := startServer(t, server.Options{})
	c := newClient(t, s, auth.EmulatorKey, nil)
	cc := setup(t, c, "db", "big", hashPK("/pk"), 24000)
	ranges, err := cc.ReadFeedRanges(ctx(), nil) // the SDK's incremental pkranges feed, until 304
	must(t, err, "read feed ranges")
	if len(ranges) != 4 {
		t.Fatalf("24,000 RU/s gave %d ranges, want 4", len(ranges))
	}
	raw := newRaw(t, s, auth.EmulatorKey)
	resp := raw.do(t, "GET", "/dbs/db/colls/big/pkranges", nil, nil)
	body := resp.JSON(t)
	list := body["PartitionKeyRanges"].([]any)
	prev := ""
	for i, r := range list {
		m := r.(map[string]any)
		if m["minInclusive"] != prev {
			t.Fatalf("range %d starts at %v, want %q (contiguous)", i, m["minInclusive"], prev)
		}
		prev = m["maxExclusive"].(string)
	}
	if prev != "FF" {
		t.Fatalf("ranges end at %q, want FF", prev)
	}
	etag := resp.Header.Get("etag")
	if etag == "" {
		t.Fatal("pkranges response without etag")
	}
	if r := raw.do(t, "GET", "/dbs/db/colls/big/pkranges", nil, map[string]string{"A-IM": "Incremental feed", "If-None-Match": etag}); r.Status != http.StatusNotModified {
		t.Fatalf("incremental pkranges with the current etag: %d, want 304", r.Status)
	}

	// Write 200 items and check that a per-range read feed returns each exactly once.
	for i := 0; i < 200; i++ {
		pk := fmt.Sprintf("k%d", i)
		_, err := cc.CreateItem(ctx(), azcosmos.NewPartitionKeyString(pk), []byte(fmt.Sprintf(`{"id":"i%d","pk":%q}`, i, pk)), nil)
		must(t, err, "create")
	}
	seen := map[string]bool{}
	for _, r := range list {
		id := r.(map[string]any)["id"].(string)
		n := 0
		for _, d := range readAll(t, raw, "/dbs/db/colls/big/docs", map[string]string{"x-ms-documentdb-partitionkeyrangeid": id}, 7) {
			if seen[d["id"].(string)] {
				t.Fatalf("item %v returned by two ranges", d["id"])
			}
			seen[d["id"].(string)] = true
			n++
		}
		if n == 0 || n > 100 {
			t.Errorf("range %s holds %d of 200 items; want an even share", id, n)
		}
	}
	if len(seen) != 200 {
		t.Fatalf("per-range feeds returned %d items, want 200", len(seen))
	}
	if r := raw.do(t, "GET", "/dbs/db/colls/big/docs", nil, map[string]string{"x-ms-documentdb-partitionkeyrangeid": "99"}); r.Status != http.StatusGone || r.Header.Get("x-ms-substatus") != "1002" {
		t.Fatalf("read feed of an unknown range: %d substatus %q, want 410/1002", r.Status, r.Header.Get("x-ms-substatus"))
	}
}

// readAll pages through a read feed with the given page size.
func readAll(t *testing.T, raw *raw, path string, hdr map[string]string, page int) []map[string]any {
	t.Helper()
	var out []map[string]any
	cont := ""
	for pages := 0; ; pages++ {
		h := map[string]string{"x-ms-max-item-count": fmt.Sprint(page), "x-ms-continuation": cont}
		for k, v := range hdr {
			h[k] = v
		}
		r := raw.do(t, "GET", path, nil, h)
		if r.Status != http.StatusOK {
			t.Fatalf("read feed: %d %s", r.Status, r.Body)
		}
		var f struct {
			Documents []map[string]any
			Count     int `json:"_count"`
		}
		must(t, json.Unmarshal(r.Body, &f), "feed body")
		if len(f.Documents) > page || f.Count != len(f.Documents) {
			t.Fatalf("page of %d documents (_count %d) for page size %d", len(f.Documents), f.Count, page)
		}
		out = append(out, f.Documents...)
		cont = r.Header.Get("x-ms-continuation")
		if cont == "" {
			return out
		}
		if pages > 10000 {
			t.Fatal("read feed does not end")
		}
	}
}

func TestReadFeedPaging(t *testing.T) {
	s := startServer(t, server.Options{})
	c := newClient(t, s, auth.EmulatorKey, nil)
	cc := setup(t, c, "db", "c", hashPK("/pk"), 18000)
	for i := 0; i < 57; i++ {
		pk := fmt.Sprintf("p%d", i%5)
		_, err := cc.CreateItem(ctx(), azcosmos.NewPartitionKeyString(pk), []byte(fmt.Sprintf(`{"id":"%d","pk":%q}`, i, pk)), nil)
		must(t, err, "create")
	}
	raw := newRaw(t, s, auth.EmulatorKey)
	for _, page := range []int{1, 5, 10, 57, 100} {
		docs := readAll(t, raw, "/dbs/db/colls/c/docs", nil, page)
		ids := map[string]bool{}
		for _, d := range docs {
			ids[d["id"].(string)+"/"+d["pk"].(string)] = true
		}
		if len(docs) != 57 || len(ids) != 57 {
			t.Fatalf("page size %d: %d documents, %d distinct, want 57", page, len(docs), len(ids))
		}
	}
	for _, bad := range []string{"garbage", "eyJyaWQiOiJ4In0", base64.RawURLEncoding.EncodeToString([]byte(`{"rid":"AAAAAAAAAAA=","after":""}`))} {
		r := raw.do(t, "GET", "/dbs/db/colls/c/docs", nil, map[string]string{"x-ms-continuation": bad})
		if r.Status != http.StatusBadRequest {
			t.Errorf("continuation %q: status %d, want 400", bad, r.Status)
		}
	}
	if r := raw.do(t, "GET", "/dbs/db/colls/c/docs", nil, map[string]string{"x-ms-max-item-count": "ten"}); r.Status != http.StatusBadRequest {
		t.Errorf("non-numeric max item count: status %d, want 400", r.Status)
	}
}

func TestAwkwardIDsAndKeys(t *testing.T) {
	s := startServer(t, server.Options{})
	c := newClient(t, s, auth.EmulatorKey, nil)
	cc := setup(t, c, "db", "c", hashPK("/pk"), 12000)
	for _, tc := range []struct{ id, pk string }{
		{"item 1", "with space"},
		{"100%", "per%25cent"},
		{"día-ü-日本", "ключ"},
		{"emoji-😀", "😀"},
		{"quote\"d", "tab\there"},
		{"plus+and&amp=", "a+b"},
		// The service takes control characters in item ids
		// (https://learn.microsoft.com/rest/api/cosmos-db/documents), and
		// '?' too, though the documentation of Resource.Id lists it among
		// the restricted characters: the SDKs' emulator tests create
		// "Disallowed?Chars" (201), then read (200), replace (200) and
		// delete (204) it through the gateway and in direct mode
		// (IdWithDisallowedCharQuestionMark in the .NET SDK's
		// Microsoft.Azure.Cosmos.EmulatorTests/CosmosItemIdEncodingTestsBase.cs,
		// idWithDisallowedCharQuestionMark in the Java SDK's
		// azure-cosmos-tests/.../CosmosItemIdEncodingTest.java).
		{"tab\there", "k"},
		{"cr\rlf\n", "k"},
		{"what?x=1", "q"},
		{"Disallowed?Chars", "q"},
		{"?", "q"},
		{"trailing?", "q"},
	} {
		body, _ := json.Marshal(map[string]string{"id": tc.id, "pk": tc.pk})
		pk := azcosmos.NewPartitionKeyString(tc.pk)
		_, err := cc.CreateItem(ctx(), pk, body, nil)
		must(t, err, "create "+tc.id)
		r, err := cc.ReadItem(ctx(), pk, tc.id, nil)
		must(t, err, "read "+tc.id)
		var got map[string]any
		must(t, json.Unmarshal(r.Value, &got), "body")
		if got["id"] != tc.id || got["pk"] != tc.pk {
			t.Errorf("read back %v, want id %q pk %q", got, tc.id, tc.pk)
		}
		body, _ = json.Marshal(map[string]any{"id": tc.id, "pk": tc.pk, "v": 2})
		_, err = cc.ReplaceItem(ctx(), pk, tc.id, body, nil)
		must(t, err, "replace "+tc.id)
		_, err = cc.DeleteItem(ctx(), pk, tc.id, nil)
		must(t, err, "delete "+tc.id)
	}
}
