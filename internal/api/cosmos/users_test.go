package cosmos

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/epk"
)

// doToken serves one request authorized by a resource token, sent as the
// JS SDK sends it: percent-encoded, with no x-ms-date.
func (ts *testServer) doToken(token, method, path string, body []byte, hdr map[string]string) (int, []byte) {
	r, err := ts.request(ts.primary, method, path, body, hdr)
	if err != nil {
		panic("BUG: cannot build test request: " + err.Error())
	}
	r.Header.Del("x-ms-date")
	r.Header.Set("Authorization", url.QueryEscape(token))
	return ts.serve(r)
}

func decodeJSON(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("body %s: %v", b, err)
	}
	return m
}

// TestUsersAndPermissionsREST drives the users and permissions resources
// over the protocol: create, read, list, query, replace, upsert and delete,
// the system properties and the _token with its expiry header.
func TestUsersAndPermissionsREST(t *testing.T) {
	ts := newTestServer(t, Config{})
	ts.seed(t)
	want := func(st int, body []byte) func(int, string) {
		return func(status int, sub string) {
			t.Helper()
			if st != status || !strings.Contains(string(body), sub) {
				t.Fatalf("status %d body %s; want %d containing %q", st, body, status, sub)
			}
		}
	}
	st, body := ts.do(ts.primary, "POST", "/dbs/db/users", []byte(`{"id":"alice"}`), nil)
	want(st, body)(http.StatusCreated, `"_permissions":"permissions/"`)
	u := decodeJSON(t, body)
	db, _ := ts.eng.Database("db")
	if u["id"] != "alice" || u["_self"] != "dbs/"+db.Rid+"/users/"+u["_rid"].(string)+"/" || u["_etag"] == "" || u["_ts"] == nil {
		t.Fatalf("user %v", u)
	}
	want(ts.do(ts.primary, "POST", "/dbs/db/users", []byte(`{"id":"alice"}`), nil))(http.StatusConflict, "already exists")
	want(ts.do(ts.primary, "POST", "/dbs/db/users", []byte(`{"name":"x"}`), nil))(http.StatusBadRequest, `no \"id\"`)
	want(ts.do(ts.primary, "POST", "/dbs/nope/users", []byte(`{"id":"x"}`), nil))(http.StatusNotFound, `database \"nope\"`)
	want(ts.do(ts.primary, "POST", "/dbs/db/users", []byte(`{"id":"bob"}`), map[string]string{"x-ms-documentdb-is-upsert": "True"}))(http.StatusCreated, `"id":"bob"`)
	want(ts.do(ts.primary, "POST", "/dbs/db/users", []byte(`{"id":"bob"}`), map[string]string{"x-ms-documentdb-is-upsert": "True"}))(http.StatusOK, `"id":"bob"`)
	want(ts.do(ts.primary, "GET", "/dbs/db/users", nil, nil))(http.StatusOK, `"_count":3`) // and the seeded u
	want(ts.do(ts.primary, "POST", "/dbs/db/users", []byte(`{"query":"SELECT * FROM root r WHERE r.id = @id","parameters":[{"name":"@id","value":"bob"}]}`),
		map[string]string{"x-ms-documentdb-isquery": "True", "Content-Type": "application/query+json"}))(http.StatusOK, `"_count":1`)
	want(ts.do(ts.primary, "PUT", "/dbs/db/users/bob", []byte(`{"id":"robert"}`), nil))(http.StatusOK, `"id":"robert"`)
	want(ts.do(ts.primary, "GET", "/dbs/db/users/bob", nil, nil))(http.StatusNotFound, `user \"bob\"`)
	want(ts.do(ts.primary, "DELETE", "/dbs/db/users/robert", nil, nil))(http.StatusNoContent, "")

	perm := []byte(`{"id":"p","permissionMode":"All","resource":"dbs/db/colls/c","resourcePartitionKey":["p"]}`)
	st, body = ts.do(ts.primary, "POST", "/dbs/db/users/alice/permissions", perm, map[string]string{hdrExpirySeconds: "60"})
	want(st, body)(http.StatusCreated, `"permissionMode":"All"`)
	p := decodeJSON(t, body)
	if p["resource"] != "dbs/db/colls/c" || !strings.HasPrefix(p["_token"].(string), "type=resource&ver=1.0&sig=") ||
		!strings.HasPrefix(p["_self"].(string), "dbs/"+db.Rid+"/users/"+u["_rid"].(string)+"/permissions/") {
		t.Fatalf("permission %v", p)
	}
	if k, _ := json.Marshal(p["resourcePartitionKey"]); string(k) != `["p"]` {
		t.Fatalf("resourcePartitionKey %s", k)
	}
	want(ts.do(ts.primary, "POST", "/dbs/db/users/alice/permissions", perm, nil))(http.StatusConflict, "already exists")
	for _, v := range []string{"0", "-1", "18001", "1.5", "soon"} {
		want(ts.do(ts.primary, "GET", "/dbs/db/users/alice/permissions/p", nil, map[string]string{hdrExpirySeconds: v}))(http.StatusBadRequest, hdrExpirySeconds)
	}
	want(ts.do(ts.primary, "GET", "/dbs/db/users/alice/permissions/p", nil, map[string]string{hdrExpirySeconds: "18000"}))(http.StatusOK, `"_token"`)
	want(ts.do(ts.primary, "POST", "/dbs/db/users/alice/permissions", []byte(`{"id":"q","permissionMode":"Write","resource":"dbs/db/colls/c"}`), nil))(http.StatusBadRequest, "permissionMode")
	want(ts.do(ts.primary, "POST", "/dbs/db/users/alice/permissions", []byte(`{"id":"q","permissionMode":"Read"}`), nil))(http.StatusBadRequest, `no \"resource\"`)
	want(ts.do(ts.primary, "POST", "/dbs/db/users/alice/permissions", []byte(`{"id":"q","permissionMode":"Read","resource":"dbs/db/colls/zz"}`), nil))(http.StatusNotFound, `container \"zz\"`)
	want(ts.do(ts.primary, "PUT", "/dbs/db/users/alice/permissions/p", []byte(`{"id":"other","permissionMode":"Read","resource":"dbs/db/colls/c"}`), nil))(http.StatusBadRequest, "does not match")
	want(ts.do(ts.primary, "PUT", "/dbs/db/users/alice/permissions/p", []byte(`{"id":"p","permissionMode":"Read","resource":"dbs/db/colls/c"}`), nil))(http.StatusOK, `"permissionMode":"Read"`)
	upsert := map[string]string{"x-ms-documentdb-is-upsert": "True"}
	want(ts.do(ts.primary, "POST", "/dbs/db/users/alice/permissions", []byte(`{"id":"up","permissionMode":"Read","resource":"dbs/db/colls/c"}`), upsert))(http.StatusCreated, `"id":"up"`)
	want(ts.do(ts.primary, "POST", "/dbs/db/users/alice/permissions", []byte(`{"id":"up","permissionMode":"All","resource":"dbs/db/colls/c"}`), upsert))(http.StatusOK, `"permissionMode":"All"`)
	want(ts.do(ts.primary, "DELETE", "/dbs/db/users/alice/permissions/up", nil, nil))(http.StatusNoContent, "")
	want(ts.do(ts.primary, "GET", "/dbs/db/users/alice/permissions", nil, nil))(http.StatusOK, `"_count":1`)
	want(ts.do(ts.primary, "POST", "/dbs/db/users/alice/permissions", []byte(`{"query":"SELECT VALUE r.permissionMode FROM r"}`),
		map[string]string{"Content-Type": "application/query+json"}))(http.StatusOK, `["Read"]`)
	// The read-only key reads users but never permissions, whose tokens
	// would give it writes.
	want(ts.do(ts.readOnly, "GET", "/dbs/db/users/alice", nil, nil))(http.StatusOK, `"id":"alice"`)
	want(ts.do(ts.readOnly, "GET", "/dbs/db/users/alice/permissions/p", nil, nil))(http.StatusForbidden, "read-only key cannot read permission")
	want(ts.do(ts.readOnly, "GET", "/dbs/db/users/alice/permissions", nil, nil))(http.StatusForbidden, "read-only key")
	want(ts.do(ts.readOnly, "POST", "/dbs/db/users", []byte(`{"id":"x"}`), nil))(http.StatusForbidden, "read-only key")
	want(ts.do(ts.primary, "DELETE", "/dbs/db/users/alice/permissions/p", nil, nil))(http.StatusNoContent, "")
	want(ts.do(ts.primary, "GET", "/dbs/db/users/alice/permissions/p", nil, nil))(http.StatusNotFound, `permission \"p\"`)
}

// tokenFor creates user u (if needed) and permission id with the given
// body fields, and returns its token, valid for expiry seconds.
func (ts *testServer) tokenFor(t *testing.T, u, id, fields string, expiry int) string {
	t.Helper()
	if _, err := ts.eng.User("db", u); err != nil {
		if _, err := ts.eng.CreateUser("db", u); err != nil {
			t.Fatal(err)
		}
	}
	st, body := ts.do(ts.primary, "POST", "/dbs/db/users/"+u+"/permissions", []byte(`{"id":"`+id+`",`+fields+`}`),
		map[string]string{hdrExpirySeconds: itoa(expiry)})
	if st != http.StatusCreated {
		t.Fatalf("cannot create permission %s: %d %s", id, st, body)
	}
	return decodeJSON(t, body)["_token"].(string)
}

// TestResourceTokens checks what each kind of resource token may do: the
// container, partition-key and item grants, the modes, the account-level
// endpoints, expiry and revocation.
func TestResourceTokens(t *testing.T) {
	// The clock is near the real one, which signs the master-key requests.
	now := time.Now().Truncate(time.Second)
	clock := now
	ts := newTestServer(t, Config{Now: func() time.Time { return clock }})
	ts.seed(t)
	def := epk.Definition{Kind: "Hash", Version: 2, Paths: []string{"/pk"}}
	if _, err := ts.eng.CreateContainer("db", engine.ContainerSpec{ID: "other", PartitionKey: def}, engine.Throughput{}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"q"} {
		if st, b := ts.do(ts.primary, "POST", "/dbs/db/colls/c/docs", []byte(`{"id":"3","pk":"`+k+`"}`), map[string]string{hdrPartitionKey: `["` + k + `"]`}); st != http.StatusCreated {
			t.Fatalf("seed: %d %s", st, b)
		}
	}
	keyP := map[string]string{hdrPartitionKey: `["p"]`}
	keyQ := map[string]string{hdrPartitionKey: `["q"]`}
	query := []byte(`{"query":"SELECT VALUE c.id FROM c"}`)
	qh := func(extra map[string]string) map[string]string {
		h := map[string]string{"x-ms-documentdb-isquery": "True", "Content-Type": "application/query+json", "x-ms-documentdb-query-enablecrosspartition": "True"}
		for k, v := range extra {
			h[k] = v
		}
		return h
	}
	type check struct {
		method, path, body string
		hdr                map[string]string
		status             int
		sub                string
	}
	run := func(name, tok string, cs []check) {
		t.Helper()
		for _, c := range cs {
			st, body := ts.doToken(tok, c.method, c.path, []byte(c.body), c.hdr)
			var e struct{ Message string }
			_ = json.Unmarshal(body, &e)
			if st != c.status || !strings.Contains(string(body), c.sub) && !strings.Contains(e.Message, c.sub) {
				t.Errorf("%s: %s %s %v: %d %s; want %d containing %q", name, c.method, c.path, c.hdr, st, body, c.status, c.sub)
			}
		}
	}

	keyAll := ts.tokenFor(t, "u", "key-all", `"permissionMode":"All","resource":"dbs/db/colls/c","resourcePartitionKey":["p"]`, 60)
	run("partition key, All", keyAll, []check{
		{"GET", "/", "", nil, 200, `"writableLocations"`},
		{"GET", "/dbs/db/colls/c", "", nil, 200, `"id":"c"`},
		{"GET", "/dbs/db/colls/c/pkranges", "", nil, 200, `"PartitionKeyRanges"`},
		{"GET", "/dbs/db/colls/c/docs/1", "", keyP, 200, `"id":"1"`},
		{"POST", "/dbs/db/colls/c/docs", `{"id":"9","pk":"p"}`, keyP, 201, `"id":"9"`},
		{"POST", "/dbs/db/colls/c/docs", `{"id":"10","pk":"p"}`, nil, 201, `"id":"10"`}, // the key is the grant's
		{"PUT", "/dbs/db/colls/c/docs/9", `{"id":"9","pk":"p","v":2}`, keyP, 200, `"v":2`},
		{"DELETE", "/dbs/db/colls/c/docs/9", "", keyP, 204, ""},
		// A query without a key is scoped to the granted one.
		{"POST", "/dbs/db/colls/c/docs", string(query), qh(nil), 200, `"Documents":["1","10","2"]`},
		{"POST", "/dbs/db/colls/c/docs", string(query), qh(keyP), 200, `"_count":3`},
		{"POST", "/dbs/db/colls/c/docs", string(query), qh(keyQ), 403, `does not cover partition key ["q"]`},
		{"GET", "/dbs/db/colls/c/docs/3", "", keyQ, 403, `covers only partition key ["p"] of container dbs/db/colls/c (permission mode All)`},
		{"POST", "/dbs/db/colls/c/docs", `{"id":"11","pk":"q"}`, keyQ, 403, "does not cover"},
		// A document of another key under the granted key is the engine's 400.
		{"POST", "/dbs/db/colls/c/docs", `{"id":"11","pk":"q"}`, nil, 400, "partition key"},
		{"POST", "/dbs/db/colls/c/docs", `[{"operationType":"Create","resourceBody":{"id":"12","pk":"p"}}]`,
			map[string]string{"x-ms-cosmos-is-batch-request": "True", hdrPartitionKey: `["p"]`}, 200, `"statusCode":201`},
		// A bulk request names a key per operation.
		{"POST", "/dbs/db/colls/c/docs", `[{"operationType":"Create","partitionKey":"[\"q\"]","resourceBody":{"id":"13","pk":"q"}}]`,
			map[string]string{"x-ms-cosmos-is-batch-request": "True", "x-ms-cosmos-batch-atomic": "false"}, 403, `operation 0 of the batch is for partition key ["q"]`},
		// A read feed too: the items of the granted key only.
		{"GET", "/dbs/db/colls/c/docs", "", nil, 200, `"_count":4`},
		// And the change feed.
		{"GET", "/dbs/db/colls/c/docs", "", map[string]string{"A-IM": "Incremental feed", hdrRangeID: "0"}, 200, `"_count":4`},
		{"GET", "/dbs/db/colls/c/docs", "", keyQ, 403, "does not cover partition key"},
		{"GET", "/dbs/db/colls/other/docs/1", "", keyP, 403, "does not cover GET /dbs/db/colls/other/docs/1"},
		{"GET", "/dbs/db", "", nil, 403, "does not cover GET /dbs/db"},
		{"GET", "/dbs", "", nil, 403, "covers only"},
		{"POST", "/dbs", `{"id":"x"}`, nil, 403, "covers only"},
		{"POST", "/dbs/db/colls", `{"id":"x"}`, nil, 403, "covers only"},
		{"DELETE", "/dbs/db/colls/c", "", nil, 403, "cannot delete container"},
		{"PUT", "/dbs/db/colls/c", `{"id":"c"}`, nil, 403, "cannot replace container"},
		{"GET", "/offers", "", nil, 403, "covers only"},
		{"GET", "/dbs/db/colls/c/partitions", "", nil, 403, "cannot read partition statistics"},
		{"GET", "/dbs/db/users", "", nil, 403, "covers only"},
		{"GET", "/dbs/db/users/u/permissions/key-all", "", nil, 403, "covers only"},
		{"GET", MetricsPath, "", nil, 403, "(read metrics): that needs the primary key"},
	})

	readColl := ts.tokenFor(t, "u", "coll-read", `"permissionMode":"Read","resource":"/dbs/db/colls/c/"`, 60)
	run("container, Read", readColl, []check{
		{"GET", "/dbs/db/colls/c/docs/3", "", keyQ, 200, `"id":"3"`},
		{"GET", "/dbs/db/colls/c/docs", "", nil, 200, `"_count":`},
		{"POST", "/dbs/db/colls/c/docs", string(query), qh(nil), 200, `"3"`},
		{"POST", "/dbs/db/colls/c/docs", `{"id":"20","pk":"p"}`, keyP, 403, "read-only: it covers container dbs/db/colls/c (permission mode Read); it cannot create item"},
		{"DELETE", "/dbs/db/colls/c/docs/1", "", keyP, 403, "read-only"},
		{"PATCH", "/dbs/db/colls/c/docs/1", `[{"op":"set","path":"/v","value":2}]`, keyP, 403, "read-only"},
		{"POST", "/dbs/db/colls/c/docs", `[{"operationType":"Read","id":"1"}]`, map[string]string{"x-ms-cosmos-is-batch-request": "True", hdrPartitionKey: `["p"]`}, 403, "read-only"},
	})

	item := ts.tokenFor(t, "u", "item", `"permissionMode":"All","resource":"dbs/db/colls/c/docs/2"`, 60)
	run("item, All", item, []check{
		{"GET", "/dbs/db/colls/c/docs/2", "", keyP, 200, `"id":"2"`},
		{"PUT", "/dbs/db/colls/c/docs/2", `{"id":"2","pk":"p","v":3}`, keyP, 200, `"v":3`},
		{"GET", "/dbs/db/colls/c/docs/1", "", keyP, 403, "covers only item dbs/db/colls/c/docs/2"},
		{"POST", "/dbs/db/colls/c/docs", string(query), qh(keyP), 403, "covers only item"},
		// Without resourcePartitionKey the id is covered in every partition,
		// as in Cosmos DB: an absent key is a superset of all keys.
		{"GET", "/dbs/db/colls/c/docs/2", "", keyQ, 404, "NotFound"},
	})

	// With one, an item grant covers that id in that partition alone.
	itemKey := ts.tokenFor(t, "u", "item-key", `"permissionMode":"All","resource":"dbs/db/colls/c/docs/1","resourcePartitionKey":["p"]`, 60)
	run("item of a partition key, All", itemKey, []check{
		{"GET", "/dbs/db/colls/c/docs/1", "", keyP, 200, `"id":"1"`},
		{"GET", "/dbs/db/colls/c/docs/1", "", nil, 200, `"id":"1"`}, // the key is the grant's
		{"GET", "/dbs/db/colls/c/docs/1", "", keyQ, 403, `covers only item dbs/db/colls/c/docs/1 of partition key ["p"] (permission mode All); it does not cover partition key ["q"]`},
		{"PUT", "/dbs/db/colls/c/docs/1", `{"id":"1","pk":"q"}`, keyQ, 403, "does not cover partition key"},
		{"DELETE", "/dbs/db/colls/c/docs/1", "", keyQ, 403, "does not cover partition key"},
		{"PUT", "/dbs/db/colls/c/docs/1", `{"id":"1","pk":"q"}`, keyP, 400, "partition key"},
		{"GET", "/dbs/db/colls/c/docs/2", "", keyP, 403, "covers only item"},
	})

	// Tokens are refused once expired, or once their permission, its user
	// or its database is gone or replaced; a forged or foreign one always.
	run("garbage", "type=resource&ver=1.0&sig=abc.def", []check{{"GET", "/dbs/db/colls/c", "", nil, 401, "malformed"}})
	clock = now.Add(59 * time.Second)
	run("last second", keyAll, []check{{"GET", "/dbs/db/colls/c/docs/1", "", keyP, 200, `"id":"1"`}})
	clock = now.Add(60 * time.Second)
	run("expired", keyAll, []check{{"GET", "/dbs/db/colls/c/docs/1", "", keyP, 401, "expired"}})
	clock = now
	if st, b := ts.do(ts.primary, "PUT", "/dbs/db/users/u/permissions/item", []byte(`{"id":"item","permissionMode":"Read","resource":"dbs/db/colls/c/docs/2"}`), nil); st != 200 {
		t.Fatalf("replace: %d %s", st, b)
	}
	run("replaced", item, []check{{"GET", "/dbs/db/colls/c/docs/2", "", keyP, 401, "no longer exists or was replaced"}})
	if st, b := ts.do(ts.primary, "DELETE", "/dbs/db/users/u/permissions/coll-read", nil, nil); st != 204 {
		t.Fatalf("delete: %d %s", st, b)
	}
	run("deleted permission", readColl, []check{{"GET", "/dbs/db/colls/c/docs/3", "", keyQ, 401, "no longer exists"}})
	run("still live", keyAll, []check{{"GET", "/dbs/db/colls/c/docs/1", "", keyP, 200, `"id":"1"`}})
	if st, b := ts.do(ts.primary, "DELETE", "/dbs/db/users/u", nil, nil); st != 204 {
		t.Fatalf("delete user: %d %s", st, b)
	}
	run("deleted user", keyAll, []check{{"GET", "/dbs/db/colls/c/docs/1", "", keyP, 401, "no longer exists"}})

	// A container deleted and created again is not the one granted.
	coll := ts.tokenFor(t, "v", "coll", `"permissionMode":"All","resource":"dbs/db/colls/other"`, 60)
	run("live container", coll, []check{{"GET", "/dbs/db/colls/other", "", nil, 200, `"id":"other"`}})
	if err := ts.eng.DeleteContainer("db", "other"); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.eng.CreateContainer("db", engine.ContainerSpec{ID: "other", PartitionKey: def}, engine.Throughput{}); err != nil {
		t.Fatal(err)
	}
	run("recreated container", coll, []check{{"GET", "/dbs/db/colls/other", "", nil, 403, "deleted and created again"}})
	if err := ts.eng.DeleteDatabase("db"); err != nil {
		t.Fatal(err)
	}
	run("deleted database", coll, []check{{"GET", "/", "", nil, 401, "no longer exists"}})
}

// TestReadFeedByPartitionKey: a read feed with a partition key header
// returns that logical partition's items, page by page.
func TestReadFeedByPartitionKey(t *testing.T) {
	ts := newTestServer(t, Config{})
	ts.seed(t) // items 1 and 2 in key "p"
	for _, id := range []string{"3", "4", "5"} {
		if st, b := ts.do(ts.primary, "POST", "/dbs/db/colls/c/docs", []byte(`{"id":"`+id+`","pk":"q"}`), map[string]string{hdrPartitionKey: `["q"]`}); st != http.StatusCreated {
			t.Fatalf("seed: %d %s", st, b)
		}
	}
	var ids []string
	hdr := map[string]string{hdrPartitionKey: `["q"]`, "x-ms-max-item-count": "2"}
	for page := 0; ; page++ {
		r, err := ts.request(ts.primary, "GET", "/dbs/db/colls/c/docs", nil, hdr)
		if err != nil {
			t.Fatal(err)
		}
		w := httptest.NewRecorder()
		ts.api.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			t.Fatalf("page %d: %d %s", page, w.Code, w.Body)
		}
		var out struct{ Documents []struct{ ID string } }
		if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
			t.Fatal(err)
		}
		for _, d := range out.Documents {
			ids = append(ids, d.ID)
		}
		next := clientHeader(w.Header()).Get("x-ms-continuation")
		if next == "" {
			break
		}
		hdr["x-ms-continuation"] = next
	}
	if strings.Join(ids, ",") != "3,4,5" {
		t.Fatalf("read feed of key q: %v", ids)
	}
	if st, b := ts.do(ts.primary, "GET", "/dbs/db/colls/c/docs", nil, nil); st != http.StatusOK || !strings.Contains(string(b), `"_count":5`) {
		t.Fatalf("read feed without a key: %d %s", st, b)
	}
}
