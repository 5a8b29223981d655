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

func TestBadInput(t *testing.T) {
	s := startServer(t, server.Options{})
	c := newClient(t, s, auth.EmulatorKey, nil)
	cc := setup(t, c, "db", "c", hashPK("/pk"), 0)
	pk := azcosmos.NewPartitionKeyString("p")
	_, err := cc.CreateItem(ctx(), pk, []byte(`{"id":"keep","pk":"p","v":1}`), nil)
	must(t, err, "seed")

	cases := []struct {
		name   string
		body   string
		status int
		msg    string
	}{
		{"malformed JSON", `{"id":"x","pk":"p",`, 400, "not valid JSON"},
		{"trailing garbage", `{"id":"x","pk":"p"} x`, 400, "not valid JSON"},
		{"array body", `[{"id":"x"}]`, 400, "must be a JSON object"},
		{"string body", `"hello"`, 400, "must be a JSON object"},
		{"missing id", `{"pk":"p"}`, 400, "no \"id\""},
		{"numeric id", `{"id":5,"pk":"p"}`, 400, "must be a string"},
		{"empty id", `{"id":"","pk":"p"}`, 400, "empty"},
		{"long id", `{"id":"` + strings.Repeat("a", 1024) + `","pk":"p"}`, 400, "limit is 1023 bytes"},
		{"slash in id", `{"id":"a/b","pk":"p"}`, 400, "cannot contain"},
		{"backslash in id", `{"id":"a\\b","pk":"p"}`, 400, "cannot contain"},
		{"hash in id", `{"id":"a#b","pk":"p"}`, 400, "cannot contain"},
		{"key mismatch", `{"id":"x","pk":"q"}`, 400, "doesn't match the one specified in the header"},
		{"object key", `{"id":"x","pk":{"a":1}}`, 400, "doesn't match the one specified in the header"},
		{"over 2 MB", `{"id":"big","pk":"p","s":"` + strings.Repeat("x", 2<<20) + `"}`, 413, "Request size is too large (the request body"},
	}
	raw := newRaw(t, s, auth.EmulatorKey)
	for _, tc := range cases {
		for _, upsert := range []string{"", "true"} {
			r := raw.do(t, "POST", "/dbs/db/colls/c/docs", []byte(tc.body), map[string]string{"x-ms-documentdb-partitionkey": `["p"]`, "x-ms-documentdb-is-upsert": upsert})
			if r.Status != tc.status {
				t.Errorf("%s (upsert=%q): status %d, want %d: %s", tc.name, upsert, r.Status, tc.status, r.Body)
				continue
			}
			if m := r.JSON(t)["message"].(string); !strings.Contains(m, tc.msg) {
				t.Errorf("%s: message %q does not mention %q", tc.name, m, tc.msg)
			}
		}
	}
	// The SDK sees the same statuses.
	_, err = cc.CreateItem(ctx(), pk, []byte(`{"id":"x","pk":"q"}`), nil)
	wantStatus(t, err, http.StatusBadRequest, "SDK create with mismatched key")
	r := raw.do(t, "POST", "/dbs/db/colls/c/docs", []byte(`{"id":"x","pk":"q"}`), map[string]string{"x-ms-documentdb-partitionkey": `["p"]`})
	if r.Header.Get("x-ms-substatus") != "1001" {
		t.Errorf("key mismatch substatus %q, want 1001", r.Header.Get("x-ms-substatus"))
	}
	// An object or an array where the key is is the undefined component,
	// as the service has it: the document is written and read with the
	// undefined key ([{}]), like one without the path.
	if r := raw.do(t, "POST", "/dbs/db/colls", []byte(`{"id":"u","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2}}`), nil); r.Status != 201 {
		t.Fatalf("create container u: %d %s", r.Status, r.Body)
	}
	for i, body := range []string{`{"id":"o1","pk":{"a":1}}`, `{"id":"o2","pk":[1,2]}`, `{"id":"o3","pk":{}}`, `{"id":"o4"}`} {
		id := fmt.Sprintf("o%d", i+1)
		r := raw.do(t, "POST", "/dbs/db/colls/u/docs", []byte(body), map[string]string{"x-ms-documentdb-partitionkey": `[{}]`})
		if r.Status != 201 {
			t.Errorf("create %s with the undefined key: %d %s", body, r.Status, r.Body)
		}
		if r := raw.do(t, "GET", "/dbs/db/colls/u/docs/"+id, nil, map[string]string{"x-ms-documentdb-partitionkey": `[{}]`}); r.Status != 200 {
			t.Errorf("read %s with the undefined key: %d %s", id, r.Status, r.Body)
		}
	}
	r = raw.do(t, "POST", "/dbs/db/colls/c/docs", []byte(`{"id":"x","pk":"p"}`), nil)
	if r.Status != 400 {
		t.Errorf("create without a partition key header: %d, want 400", r.Status)
	}
	r = raw.do(t, "GET", "/dbs/db/colls/c/docs/keep", nil, nil)
	if r.Status != 400 {
		t.Errorf("read without a partition key header: %d, want 400", r.Status)
	}
	r = raw.do(t, "GET", "/dbs/db/colls/c/docs/keep", nil, map[string]string{"x-ms-documentdb-partitionkey": `["p"`})
	if r.Status != 400 {
		t.Errorf("read with a malformed partition key header: %d, want 400", r.Status)
	}
	r = raw.do(t, "PUT", "/dbs/db/colls/c/docs/keep", []byte(`{"id":"other","pk":"p"}`), map[string]string{"x-ms-documentdb-partitionkey": `["p"]`})
	if r.Status != 400 {
		t.Errorf("replace with another id in the body: %d, want 400", r.Status)
	}
	r = raw.do(t, "PATCH", "/dbs/db/colls/c/docs/keep", []byte(`{"operations":[{"op":"explode","path":"/v"}]}`), map[string]string{"x-ms-documentdb-partitionkey": `["p"]`})
	if r.Status != 400 {
		t.Errorf("patch with an unknown op: %d, want 400", r.Status)
	}
	r = raw.do(t, "POST", "/dbs/db/colls", []byte(`{"id":`), nil)
	if r.Status != 400 {
		t.Errorf("malformed container body: %d, want 400", r.Status)
	}
	r = raw.do(t, "POST", "/dbs/db/colls", []byte(`{"id":"badkey","partitionKey":{"paths":["/a","/b"],"kind":"Hash"}}`), nil)
	if r.Status != 400 {
		t.Errorf("Hash partition key with two paths: %d, want 400", r.Status)
	}
	r = raw.do(t, "POST", "/dbs", []byte(`{"id":"bad/id"}`), nil)
	if r.Status != 400 {
		t.Errorf("database id with a slash: %d, want 400", r.Status)
	}

	// Unknown database, container, item.
	_, err = cc.ReadItem(ctx(), pk, "nope", nil)
	wantStatus(t, err, http.StatusNotFound, "unknown item")
	nc, _ := c.NewContainer("db", "nope")
	_, err = nc.ReadItem(ctx(), pk, "keep", nil)
	wantStatus(t, err, http.StatusNotFound, "unknown container")
	nd, _ := c.NewContainer("nodb", "c")
	_, err = nd.ReadItem(ctx(), pk, "keep", nil)
	wantStatus(t, err, http.StatusNotFound, "unknown database")

	// The service's messages where clients match on them: a continuation
	// token it cannot use, and a batch operation for another key (with
	// substatus 1001, as a single write).
	for _, h := range []map[string]string{
		{"x-ms-continuation": "garbage"},
		{"x-ms-continuation": "garbage", "x-ms-documentdb-partitionkeyrangeid": "0"},
	} {
		r := raw.do(t, "GET", "/dbs/db/colls/c/docs", nil, h)
		if m, _ := r.JSON(t)["message"].(string); r.Status != 400 || !strings.HasPrefix(m, "The continuation token specified in the request is malformed. Re-run the query without it and iterate.") {
			t.Errorf("read feed with a bad continuation (%v): %d %s", h, r.Status, r.Body)
		}
	}
	r = raw.do(t, "POST", "/dbs/db/colls/c/docs", []byte(`{"query":"SELECT * FROM c"}`), map[string]string{
		"Content-Type": "application/query+json", "x-ms-documentdb-isquery": "true", "x-ms-documentdb-partitionkey": `["p"]`, "x-ms-continuation": "eyJyaWQiOjF9"})
	if m, _ := r.JSON(t)["message"].(string); r.Status != 400 || !strings.HasPrefix(m, "The continuation token specified in the request is malformed.") {
		t.Errorf("query with a bad continuation: %d %s", r.Status, r.Body)
	}
	r = raw.do(t, "POST", "/dbs/db/colls/c/docs", []byte(`[{"operationType":"Create","resourceBody":{"id":"b1","pk":"q"}}]`), map[string]string{
		"x-ms-documentdb-partitionkey": `["p"]`, "x-ms-cosmos-is-batch-request": "true", "x-ms-cosmos-batch-atomic": "true", "Content-Type": "application/json"})
	if m, _ := r.JSON(t)["message"].(string); r.Status != 400 || r.Header.Get("x-ms-substatus") != "1001" || !strings.Contains(m, "PartitionKey extracted from document doesn't match the one specified in the header") {
		t.Errorf("batch operation for another key: %d substatus %q %s", r.Status, r.Header.Get("x-ms-substatus"), r.Body)
	}

	// Nothing above changed stored data.
	rd, err := cc.ReadItem(ctx(), pk, "keep", nil)
	must(t, err, "read seed")
	var v map[string]any
	must(t, json.Unmarshal(rd.Value, &v), "seed body")
	if v["v"] != float64(1) {
		t.Fatalf("seed item changed: %v", v)
	}
	docs := readAll(t, raw, "/dbs/db/colls/c/docs", nil, 100)
	if len(docs) != 1 {
		t.Fatalf("bad requests stored items: the container holds %d, want 1", len(docs))
	}
}

func TestAuth(t *testing.T) {
	s := startServer(t, server.Options{})
	good := newClient(t, s, auth.EmulatorKey, nil)
	cc := setup(t, good, "db", "c", hashPK("/pk"), 0)
	_, err := cc.CreateItem(ctx(), azcosmos.NewPartitionKeyString("p"), []byte(`{"id":"1","pk":"p"}`), nil)
	must(t, err, "create")

	wrong := newClient(t, s, readOnlyKey[:len(readOnlyKey)-4]+"AAA=", nil)
	_, err = wrong.CreateDatabase(ctx(), azcosmos.DatabaseProperties{ID: "x"}, nil)
	if statusOf(err) != http.StatusUnauthorized {
		t.Fatalf("wrong key: %v, want 401", err)
	}

	ro := newClient(t, s, readOnlyKey, nil)
	roc, _ := ro.NewContainer("db", "c")
	if _, err := roc.ReadItem(ctx(), azcosmos.NewPartitionKeyString("p"), "1", nil); err != nil {
		t.Fatalf("read with the read-only key: %v", err)
	}
	_, err = roc.CreateItem(ctx(), azcosmos.NewPartitionKeyString("p"), []byte(`{"id":"2","pk":"p"}`), nil)
	wantStatus(t, err, http.StatusForbidden, "write with the read-only key")
	_, err = ro.CreateDatabase(ctx(), azcosmos.DatabaseProperties{ID: "y"}, nil)
	wantStatus(t, err, http.StatusForbidden, "create database with the read-only key")

	raw := newRaw(t, s, auth.EmulatorKey)
	r := raw.do(t, "GET", "/dbs", nil, map[string]string{"Authorization": ""})
	if r.Status != http.StatusUnauthorized {
		t.Errorf("no Authorization header: %d", r.Status)
	}
	r = raw.do(t, "GET", "/dbs", nil, map[string]string{"Authorization": "type=master&ver=1.0&sig=AAAA"})
	if r.Status != http.StatusUnauthorized {
		t.Errorf("bad signature: %d", r.Status)
	}
	copied := *raw
	skewed := &copied
	skewed.date = func() time.Time { return time.Now().Add(-16 * time.Minute) }
	r = skewed.do(t, "GET", "/dbs", nil, nil)
	if r.Status != http.StatusUnauthorized {
		t.Errorf("x-ms-date 16 minutes old: %d, want 401", r.Status)
	}
	skewed.date = func() time.Time { return time.Now().Add(-14 * time.Minute) }
	if r = skewed.do(t, "GET", "/dbs", nil, nil); r.Status != http.StatusOK {
		t.Errorf("x-ms-date 14 minutes old: %d, want 200", r.Status)
	}
	// A signature for one resource does not open another.
	date := time.Now().UTC().Format(http.TimeFormat)
	sig := auth.Header(auth.Sign(raw.key, "GET", "dbs", "dbs/db", date))
	r = raw.do(t, "GET", "/dbs/other", nil, map[string]string{"Authorization": sig, "x-ms-date": date})
	if r.Status != http.StatusUnauthorized {
		t.Errorf("signature for another resource: %d, want 401", r.Status)
	}
	if r := raw.do(t, "GET", "/_ready", nil, map[string]string{"Authorization": ""}); r.Status != http.StatusOK {
		t.Errorf("readiness endpoint: %d", r.Status)
	}
}

func TestAccountAdvertisesReachableEndpoint(t *testing.T) {
	s := startServer(t, server.Options{})
	r := newRaw(t, s, auth.EmulatorKey).do(t, "GET", "/", nil, nil)
	m := r.JSON(t)
	for _, k := range []string{"writableLocations", "readableLocations"} {
		locs := m[k].([]any)
		if len(locs) != 1 || locs[0].(map[string]any)["databaseAccountEndpoint"] != s.URL()+"/" {
			t.Errorf("%s = %v, want %s/", k, locs, s.URL())
		}
	}
	if m["id"] == "localhost" || m["userConsistencyPolicy"].(map[string]any)["defaultConsistencyLevel"] != "Session" {
		t.Errorf("account body: %v", m)
	}
	if _, ok := m["queryEngineConfiguration"].(string); !ok {
		t.Errorf("queryEngineConfiguration is not a string")
	}

	adv := startServer(t, server.Options{Advertise: "https://db.example.com:443"})
	m = newRaw(t, adv, auth.EmulatorKey).do(t, "GET", "/", nil, nil).JSON(t)
	if ep := m["writableLocations"].([]any)[0].(map[string]any)["databaseAccountEndpoint"]; ep != "https://db.example.com:443/" {
		t.Errorf("advertised endpoint %v", ep)
	}
}

func TestRefusesEmulatorKeyOffLoopback(t *testing.T) {
	_, err := server.Start(server.Options{InMemory: true, Listen: "0.0.0.0:0"})
	if err == nil || !strings.Contains(err.Error(), "--key") {
		t.Fatalf("starting on 0.0.0.0 without --key: %v, want a refusal that mentions --key", err)
	}
	s, err := server.Start(server.Options{InMemory: true, Listen: "0.0.0.0:0", Key: readOnlyKey})
	if err != nil {
		t.Fatalf("starting on 0.0.0.0 with --key: %v", err)
	}
	s.Shutdown(ctx())
}
