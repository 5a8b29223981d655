package gosdk

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/parsecdb/parsec/internal/auth"
	"github.com/parsecdb/parsec/internal/server"
)

// The Go SDK (azcosmos v1.5.0) has no API for stored procedures, triggers
// or user-defined functions: it only sends the trigger headers of item
// writes (ItemOptions.PreTriggers, PostTriggers) and runs queries. Scripts
// are created and procedures executed here with signed REST requests, as
// the JavaScript SDK sends them; the item writes with triggers and the
// queries with UDFs go through the Go SDK.

func TestScriptsWithTheGoSDK(t *testing.T) {
	s := startServer(t, server.Options{NoThrottle: true, ScriptTimeout: time.Second})
	c := newClient(t, s, auth.EmulatorKey, nil)
	cc := setup(t, c, "sdb", "sc", hashPK("/pk"), 400)
	r := newRaw(t, s, auth.EmulatorKey)
	create := func(feed string, body map[string]any) {
		t.Helper()
		b, _ := json.Marshal(body)
		if resp := r.do(t, "POST", "dbs/sdb/colls/sc/"+feed, b, nil); resp.Status != http.StatusCreated {
			t.Fatalf("create %s: %d %s", feed, resp.Status, resp.Body)
		}
	}
	exec := func(id, pk, args string) rawResp {
		t.Helper()
		return r.do(t, "POST", "dbs/sdb/colls/sc/sprocs/"+id, []byte(args), map[string]string{
			"x-ms-documentdb-partitionkey": fmt.Sprintf("[%q]", pk), "Content-Type": "application/json"})
	}
	count := func(pk string) int {
		t.Helper()
		pager := cc.NewQueryItemsPager("SELECT VALUE COUNT(1) FROM c", azcosmos.NewPartitionKeyString(pk), nil)
		page, err := pager.NextPage(ctx())
		must(t, err, "count")
		var n int
		must(t, json.Unmarshal(page.Items[0], &n), "count result")
		return n
	}

	create("sprocs", map[string]any{"id": "bulk", "body": `function (pk, n, throwAt) {
		var coll = getContext().getCollection();
		for (var i = 0; i < n; i++) {
			if (i === throwAt) throw new Error("stop at " + i);
			coll.createDocument(coll.getSelfLink(), {id: "d" + i, pk: pk});
		}
		getContext().getResponse().setBody({created: n});
	}`})
	resp := exec("bulk", "a", `["a", 100, -1]`)
	if resp.Status != http.StatusOK || string(resp.Body) != `{"created":100}` || resp.Header.Get("x-ms-request-charge") == "" {
		t.Fatalf("execute: %d %s", resp.Status, resp.Body)
	}
	if n := count("a"); n != 100 {
		t.Fatalf("%d documents after the procedure created 100", n)
	}
	if resp = exec("bulk", "b", `["b", 100, 50]`); resp.Status != http.StatusBadRequest || !strings.Contains(string(resp.Body), "stop at 50") {
		t.Fatalf("a throwing procedure: %d %s", resp.Status, resp.Body)
	}
	if n := count("b"); n != 0 {
		t.Fatalf("%d documents after the procedure threw", n)
	}
	if resp = exec("bulk", "b", `{"not": "an array"}`); resp.Status != http.StatusBadRequest {
		t.Fatalf("parameters that are not an array: %d %s", resp.Status, resp.Body)
	}
	if resp = r.do(t, "POST", "dbs/sdb/colls/sc/sprocs/bulk", []byte(`[]`), nil); resp.Status != http.StatusBadRequest || !strings.Contains(string(resp.Body), "partition key") {
		t.Fatalf("no partition key: %d %s", resp.Status, resp.Body)
	}
	if resp = exec("missing", "a", `[]`); resp.Status != http.StatusNotFound {
		t.Fatalf("a missing procedure: %d %s", resp.Status, resp.Body)
	}
	create("sprocs", map[string]any{"id": "spin", "body": `function () { for (;;) {} }`})
	start := time.Now()
	if resp = exec("spin", "a", `[]`); resp.Status != http.StatusRequestTimeout || time.Since(start) > 4*time.Second {
		t.Fatalf("a runaway procedure: %d %s after %v", resp.Status, resp.Body, time.Since(start))
	}
	// Builtins that would run for hours or allocate a gigabyte inside one
	// call are stopped with the timeout's and the size's errors.
	const backtrack = `/^(a+)+\1?b$/.test(s)` // a backreference: regexp2, which backtracks
	create("sprocs", map[string]any{"id": "backtrack", "body": `function (s) { getContext().getResponse().setBody(` + backtrack + `); }`})
	if resp = exec("backtrack", "a", `["aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"]`); resp.Status != http.StatusRequestTimeout || !strings.Contains(string(resp.Body), "regular expression") {
		t.Fatalf("a backtracking regular expression: %d %s", resp.Status, resp.Body)
	}
	create("sprocs", map[string]any{"id": "gigabyte", "body": `function () { new Uint8Array(Math.pow(2, 30)).fill(1); }`})
	if resp = exec("gigabyte", "a", `[]`); resp.Status != http.StatusRequestEntityTooLarge || !strings.Contains(string(resp.Body), "memory limit") {
		t.Fatalf("a 1 GiB typed array: %d %s", resp.Status, resp.Body)
	}
	if resp = r.do(t, "POST", "dbs/sdb/colls/sc/sprocs", []byte(`{"id":"bad","body":"function ( {"}`), nil); resp.Status != http.StatusBadRequest || !strings.Contains(string(resp.Body), "does not compile") {
		t.Fatalf("a procedure that does not compile: %d %s", resp.Status, resp.Body)
	}
	if resp = r.do(t, "POST", "dbs/sdb/colls/sc/sprocs", []byte(`{"id":"nobody"}`), nil); resp.Status != http.StatusBadRequest || !strings.Contains(string(resp.Body), "body") {
		t.Fatalf("a procedure without a body: %d %s", resp.Status, resp.Body)
	}

	// Triggers through the Go SDK's item options.
	create("triggers", map[string]any{"id": "stamp", "triggerType": "Pre", "triggerOperation": "All", "body": `function () {
		var r = getContext().getRequest(), d = r.getBody(); d.stamped = true; r.setBody(d);
	}`})
	create("triggers", map[string]any{"id": "audit", "triggerType": "Post", "triggerOperation": "All", "body": `function () {
		var d = getContext().getResponse().getBody(), c = getContext().getCollection();
		c.createDocument(c.getSelfLink(), {id: "audit-" + d.id, pk: d.pk});
	}`})
	create("triggers", map[string]any{"id": "refuse", "triggerType": "Post", "triggerOperation": "All", "body": `function () { throw new Error("refused"); }`})
	pk := azcosmos.NewPartitionKeyString("t")
	item, err := cc.CreateItem(ctx(), pk, []byte(`{"id":"x","pk":"t"}`), &azcosmos.ItemOptions{
		PreTriggers: []string{"stamp"}, PostTriggers: []string{"audit"}, EnableContentResponseOnWrite: true})
	must(t, err, "create with triggers")
	var doc map[string]any
	must(t, json.Unmarshal(item.Value, &doc), "decode")
	if doc["stamped"] != true {
		t.Fatalf("the pre-trigger's field is missing: %s", item.Value)
	}
	_, err = cc.ReadItem(ctx(), pk, "audit-x", nil)
	must(t, err, "read the audit document")
	_, err = cc.CreateItem(ctx(), pk, []byte(`{"id":"y","pk":"t"}`), &azcosmos.ItemOptions{PostTriggers: []string{"audit", "refuse"}})
	wantStatus(t, err, http.StatusBadRequest, "a throwing post-trigger")
	_, err = cc.ReadItem(ctx(), pk, "y", nil)
	wantStatus(t, err, http.StatusNotFound, "the write a trigger refused")
	_, err = cc.ReadItem(ctx(), pk, "audit-y", nil)
	wantStatus(t, err, http.StatusNotFound, "the audit of the write a trigger refused")
	_, err = cc.CreateItem(ctx(), pk, []byte(`{"id":"z","pk":"t"}`), &azcosmos.ItemOptions{PreTriggers: []string{"nosuch"}})
	wantStatus(t, err, http.StatusNotFound, "a missing trigger")

	// A UDF in a query.
	create("udfs", map[string]any{"id": "twice", "body": `function (x) { return x + x; }`})
	pager := cc.NewQueryItemsPager("SELECT VALUE udf.twice(c.id) FROM c WHERE c.id = 'x'", pk, nil)
	page, err := pager.NextPage(ctx())
	must(t, err, "query with a UDF")
	if len(page.Items) != 1 || string(page.Items[0]) != `"xx"` {
		t.Fatalf("udf.twice: %q", page.Items)
	}
	_, err = cc.NewQueryItemsPager("SELECT VALUE udf.nosuch(c.id) FROM c", pk, nil).NextPage(ctx())
	wantStatus(t, err, http.StatusBadRequest, "a missing UDF")
	create("udfs", map[string]any{"id": "backtrack", "body": `function (s) { return ` + backtrack + `; }`})
	_, err = cc.NewQueryItemsPager("SELECT VALUE udf.backtrack(CONCAT('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', c.id)) FROM c WHERE c.id = 'x'", pk, nil).NextPage(ctx())
	wantStatus(t, err, http.StatusBadRequest, "a backtracking UDF")
	if !strings.Contains(err.Error(), "regular expression") {
		t.Fatalf("a backtracking UDF: %v", err)
	}

	// Listing and deleting.
	resp = r.do(t, "GET", "dbs/sdb/colls/sc/triggers", nil, nil)
	var feed struct {
		Triggers []struct{ ID, TriggerType string }
		Count    int `json:"_count"`
	}
	must(t, json.Unmarshal(resp.Body, &feed), "triggers feed")
	if feed.Count != 3 || feed.Triggers[0].ID != "audit" || feed.Triggers[0].TriggerType != "Post" {
		t.Fatalf("triggers feed: %s", resp.Body)
	}
	if resp = r.do(t, "DELETE", "dbs/sdb/colls/sc/udfs/twice", nil, nil); resp.Status != http.StatusNoContent {
		t.Fatalf("delete udf: %d %s", resp.Status, resp.Body)
	}
	if resp = r.do(t, "GET", "dbs/sdb/colls/sc/udfs/twice", nil, nil); resp.Status != http.StatusNotFound {
		t.Fatalf("read a deleted udf: %d %s", resp.Status, resp.Body)
	}
	// The read-only key cannot change scripts or run procedures.
	ro := newRaw(t, s, readOnlyKey)
	if resp = ro.do(t, "POST", "dbs/sdb/colls/sc/sprocs/bulk", []byte(`["c", 1, -1]`), map[string]string{"x-ms-documentdb-partitionkey": `["c"]`}); resp.Status != http.StatusForbidden {
		t.Fatalf("read-only key executing a procedure: %d %s", resp.Status, resp.Body)
	}
	if resp = ro.do(t, "GET", "dbs/sdb/colls/sc/sprocs/bulk", nil, nil); resp.Status != http.StatusOK {
		t.Fatalf("read-only key reading a procedure: %d %s", resp.Status, resp.Body)
	}
}
