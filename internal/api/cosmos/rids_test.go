package cosmos

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/auth"
	"github.com/parsecdb/parsec/internal/engine"
)

// ridRequest builds a request to a rid-based path, signed as the SDKs sign
// rid links: with the last resource id, lower-cased.
func (ts *testServer) ridRequest(t *testing.T, method, path string, body string, hdr map[string]string) (int, []byte) {
	t.Helper()
	r, err := http.NewRequest(method, "http://parsec.test"+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	date := time.Now().UTC().Format(http.TimeFormat)
	typ, link := auth.RidLink(path)
	r.Header.Set("x-ms-date", date)
	r.Header.Set("x-ms-version", "2018-12-31")
	r.Header.Set("Authorization", auth.Header(auth.Sign(ts.primary, method, typ, link, date)))
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	return ts.serve(r)
}

func TestRidAddressing(t *testing.T) {
	ts := newTestServer(t, Config{})
	ts.seed(t)
	var db, coll, doc struct {
		Rid  string `json:"_rid"`
		Self string `json:"_self"`
	}
	for _, x := range []struct {
		path string
		into any
	}{{"/dbs/db", &db}, {"/dbs/db/colls/c", &coll}, {"/dbs/db/colls/c/docs/1", &doc}} {
		st, b := ts.do(ts.primary, http.MethodGet, x.path, nil, map[string]string{hdrPartitionKey: `["p"]`})
		if st != http.StatusOK {
			t.Fatalf("GET %s: %d %s", x.path, st, b)
		}
		if err := json.Unmarshal(b, x.into); err != nil {
			t.Fatal(err)
		}
	}
	if !isDatabaseRid(db.Rid) || doc.Self != "dbs/"+db.Rid+"/colls/"+coll.Rid+"/docs/"+doc.Rid+"/" {
		t.Fatalf("unexpected rids: db %q, coll %q, doc self %q", db.Rid, coll.Rid, doc.Self)
	}
	pk := map[string]string{hdrPartitionKey: `["p"]`}

	// The item's _self link reads it, with the signature over its rid.
	st, b := ts.ridRequest(t, http.MethodGet, "/"+doc.Self, "", pk)
	if st != http.StatusOK || !strings.Contains(string(b), `"id":"1"`) {
		t.Fatalf("GET %s: %d %s", doc.Self, st, b)
	}
	// The database and the container by rid.
	if st, b := ts.ridRequest(t, http.MethodGet, "/dbs/"+db.Rid, "", nil); st != http.StatusOK || !strings.Contains(string(b), `"id":"db"`) {
		t.Fatalf("GET database by rid: %d %s", st, b)
	}
	if st, b := ts.ridRequest(t, http.MethodGet, "/dbs/"+db.Rid+"/colls/"+coll.Rid, "", nil); st != http.StatusOK || !strings.Contains(string(b), `"id":"c"`) {
		t.Fatalf("GET container by rid: %d %s", st, b)
	}
	// A user and its permission by their rids (the seed's "u" and "p").
	var user, perm struct {
		Rid string `json:"_rid"`
	}
	for _, x := range []struct {
		path string
		into any
	}{{"/dbs/db/users/u", &user}, {"/dbs/db/users/u/permissions/p", &perm}} {
		st, b := ts.do(ts.primary, http.MethodGet, x.path, nil, nil)
		if st != http.StatusOK || json.Unmarshal(b, x.into) != nil {
			t.Fatalf("GET %s: %d %s", x.path, st, b)
		}
	}
	userLink := "/dbs/" + db.Rid + "/users/" + user.Rid
	if st, b := ts.ridRequest(t, http.MethodGet, userLink, "", nil); st != http.StatusOK || !strings.Contains(string(b), `"id":"u"`) {
		t.Fatalf("GET user by rid: %d %s", st, b)
	}
	if st, b := ts.ridRequest(t, http.MethodGet, userLink+"/permissions/"+perm.Rid, "", nil); st != http.StatusOK || !strings.Contains(string(b), `"id":"p"`) {
		t.Fatalf("GET permission by rid: %d %s", st, b)
	}
	// A name-based signature does not authorize a rid link.
	r, _ := ts.request(ts.primary, http.MethodGet, "/"+doc.Self, nil, pk)
	if st, _ := ts.serve(r); st != http.StatusUnauthorized {
		t.Fatalf("a rid link signed with its path: %d, want 401", st)
	}
	// Create, list, replace and delete through rid links.
	collLink := "/dbs/" + db.Rid + "/colls/" + coll.Rid
	if st, b := ts.ridRequest(t, http.MethodPost, collLink+"/docs", `{"id":"3","pk":"p"}`, pk); st != http.StatusCreated {
		t.Fatalf("create by rid: %d %s", st, b)
	}
	st, b = ts.ridRequest(t, http.MethodGet, collLink+"/docs", "", nil)
	if st != http.StatusOK || strings.Count(string(b), `"pk":"p"`) != 3 {
		t.Fatalf("read feed by rid: %d %s", st, b)
	}
	// The rid stays the item's through a replace.
	if st, b := ts.ridRequest(t, http.MethodPut, "/"+doc.Self, `{"id":"1","pk":"p","v":2}`, pk); st != http.StatusOK || !strings.Contains(string(b), `"_rid":"`+doc.Rid+`"`) {
		t.Fatalf("replace by rid: %d %s", st, b)
	}
	if st, b := ts.ridRequest(t, http.MethodGet, "/"+doc.Self, "", pk); st != http.StatusOK || !strings.Contains(string(b), `"v":2`) {
		t.Fatalf("read after replace by rid: %d %s", st, b)
	}
	if st, b := ts.ridRequest(t, http.MethodDelete, "/"+doc.Self, "", pk); st != http.StatusNoContent {
		t.Fatalf("delete by rid: %d %s", st, b)
	}
	// Once deleted, its rid designates nothing: 404, and an unknown rid too.
	if st, b := ts.ridRequest(t, http.MethodGet, "/"+doc.Self, "", pk); st != http.StatusNotFound {
		t.Fatalf("read of a deleted item by rid: %d %s", st, b)
	}
	bad := collLink + "/docs/" + engine.EncodeRid(append([]byte("12345678"), make([]byte, 8)...))
	if st, b := ts.ridRequest(t, http.MethodGet, bad, "", pk); st != http.StatusNotFound {
		t.Fatalf("read by a foreign rid: %d %s", st, b)
	}
	// An unknown rid is not disclosed before authentication.
	r, _ = http.NewRequest(http.MethodGet, "http://parsec.test"+bad, nil)
	if st, _ := ts.serve(r); st != http.StatusUnauthorized {
		t.Fatalf("unsigned rid request: %d, want 401", st)
	}
}

// A database whose name has the shape of a resource id is still addressed
// by that name.
func TestRidShapedName(t *testing.T) {
	ts := newTestServer(t, Config{})
	if _, err := ts.eng.CreateDatabase("AAAAAA==", engine.Throughput{}); err != nil {
		t.Fatal(err)
	}
	if st, b := ts.do(ts.primary, http.MethodGet, "/dbs/AAAAAA==", nil, nil); st != http.StatusOK || !strings.Contains(string(b), `"id":"AAAAAA=="`) {
		t.Fatalf("GET a database named like a rid: %d %s", st, b)
	}
}
