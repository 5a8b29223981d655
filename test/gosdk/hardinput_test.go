package gosdk

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/parsecdb/parsec/internal/auth"
	"github.com/parsecdb/parsec/internal/server"
)

// hardInputs is a server with container db/c (partition key /pk) and the
// raw client, for the tests of inputs the service refuses.
type hardInputs struct {
	t   *testing.T
	cc  *azcosmos.ContainerClient
	raw *raw
}

func newHardInputs(t *testing.T) *hardInputs {
	s := startServer(t, server.Options{})
	c := newClient(t, s, auth.EmulatorKey, nil)
	cc := setup(t, c, "db", "c", hashPK("/pk"), 10000)
	return &hardInputs{t: t, cc: cc, raw: newRaw(t, s, auth.EmulatorKey)}
}

var pkP = map[string]string{"x-ms-documentdb-partitionkey": `["p"]`}

// refused checks that r is a 400 (or want) whose message mentions msg.
func (h *hardInputs) refused(what string, r rawResp, want int, msg string) {
	h.t.Helper()
	if r.Status != want {
		h.t.Errorf("%s: status %d, want %d: %.300s", what, r.Status, want, r.Body)
		return
	}
	if m, _ := r.JSON(h.t)["message"].(string); !strings.Contains(m, msg) {
		h.t.Errorf("%s: message %q does not mention %q", what, m, msg)
	}
}

// writes sends body as create, upsert, replace (of item "keep") and as the
// resource body of a transactional batch create, and checks that each is
// refused with status want and a message that mentions msg.
func (h *hardInputs) writes(name, body string, want int, msg string) {
	h.t.Helper()
	h.refused(name+" (create)", h.raw.do(h.t, "POST", "/dbs/db/colls/c/docs", []byte(body), pkP), want, msg)
	h.refused(name+" (upsert)", h.raw.do(h.t, "POST", "/dbs/db/colls/c/docs", []byte(body),
		map[string]string{"x-ms-documentdb-partitionkey": `["p"]`, "x-ms-documentdb-is-upsert": "true"}), want, msg)
	h.refused(name+" (replace)", h.raw.do(h.t, "PUT", "/dbs/db/colls/c/docs/keep", []byte(body), pkP), want, msg)
	batch := `[{"operationType":"Create","resourceBody":` + body + `}]`
	if !json.Valid([]byte(batch)) {
		// The batch envelope is decoded by encoding/json, which refuses
		// invalid UTF-8 nowhere but refuses malformed text: send the raw
		// body only when it is syntactically JSON.
		return
	}
	h.refused(name+" (batch)", h.batch(batch, true), want, msg)
}

func (h *hardInputs) batch(body string, atomic bool) rawResp {
	h.t.Helper()
	return h.raw.do(h.t, "POST", "/dbs/db/colls/c/docs", []byte(body), map[string]string{
		"x-ms-documentdb-partitionkey": `["p"]`, "x-ms-cosmos-is-batch-request": "true",
		"x-ms-cosmos-batch-atomic": fmt.Sprint(atomic), "Content-Type": "application/json",
	})
}

func (h *hardInputs) patch(id, ops string) rawResp {
	h.t.Helper()
	return h.raw.do(h.t, "PATCH", "/dbs/db/colls/c/docs/"+id, []byte(`{"operations":`+ops+`}`), pkP)
}

func (h *hardInputs) query(body string) rawResp {
	h.t.Helper()
	return h.raw.do(h.t, "POST", "/dbs/db/colls/c/docs", []byte(body), map[string]string{
		"Content-Type": "application/query+json", "x-ms-documentdb-isquery": "true",
		"x-ms-documentdb-query-enablecrosspartition": "true",
	})
}

// seed creates item "keep" in partition "p".
func (h *hardInputs) seed() {
	h.t.Helper()
	r := h.raw.do(h.t, "POST", "/dbs/db/colls/c/docs", []byte(`{"id":"keep","pk":"p","v":1}`), pkP)
	if r.Status != http.StatusCreated {
		h.t.Fatalf("seed: %d %s", r.Status, r.Body)
	}
}

// healthy checks that the partition still takes writes and that a Go SDK
// query over the container reads every item.
func (h *hardInputs) healthy(wantItems int) {
	h.t.Helper()
	r := h.raw.do(h.t, "POST", "/dbs/db/colls/c/docs", []byte(`{"id":"after","pk":"p"}`),
		map[string]string{"x-ms-documentdb-partitionkey": `["p"]`, "x-ms-documentdb-is-upsert": "true"})
	if r.Status != http.StatusCreated && r.Status != http.StatusOK {
		h.t.Fatalf("write after the refused inputs: %d %s", r.Status, r.Body)
	}
	n := 0
	pager := h.cc.NewQueryItemsPager("SELECT * FROM c", azcosmos.NewPartitionKeyString("p"), nil)
	for pager.More() {
		page, err := pager.NextPage(ctx())
		must(h.t, err, "Go SDK query after the refused inputs")
		n += len(page.Items)
	}
	if n != wantItems+1 {
		h.t.Errorf("the query read %d items, want %d", n, wantItems+1)
	}
}

// Numbers must be finite IEEE 754 doubles. 1e400, -1e400 and an integer of
// 100,000 digits used to be stored and then fail the partition's commit.
func TestPoisonNumbers(t *testing.T) {
	h := newHardInputs(t)
	h.seed()
	huge := "1" + strings.Repeat("0", 100000)
	for _, n := range []string{"1e400", "-1e400", huge, "-" + huge, "1.5e99999999999999999999", "0.0000001e316"} {
		h.writes("number "+n[:min(len(n), 12)], `{"id":"n","pk":"p","v":[1,{"w":`+n+`}]}`, 400, "out of range")
		h.refused("patch value "+n[:min(len(n), 12)], h.patch("keep", `[{"op":"set","path":"/v","value":{"w":`+n+`}}]`), 400, "out of range")
		h.refused("incr value "+n[:min(len(n), 12)], h.patch("keep", `[{"op":"incr","path":"/v","value":`+n+`}]`), 400, "out of range")
		h.refused("query parameter "+n[:min(len(n), 12)], h.query(`{"query":"SELECT * FROM c WHERE c.v = @v","parameters":[{"name":"@v","value":`+n+`}]}`), 400, "out of range")
	}
	// The message names the value, abbreviated.
	r := h.raw.do(t, "POST", "/dbs/db/colls/c/docs", []byte(`{"id":"n","pk":"p","v":`+huge+`}`), pkP)
	if m, _ := r.JSON(t)["message"].(string); len(m) > 1000 || !strings.Contains(m, "100001 digits") {
		t.Errorf("the message for a 100,001-digit number does not abbreviate it: %.300q", m)
	}
	// In range, however written, is accepted.
	for i, n := range []string{"1e308", "-1.7976931348623157e308", "12345678901234567890123", "1e-400", "0.0000001e300", "0e999999"} {
		id := fmt.Sprintf("ok%d", i)
		r := h.raw.do(t, "POST", "/dbs/db/colls/c/docs", []byte(`{"id":"`+id+`","pk":"p","v":`+n+`}`), pkP)
		if r.Status != http.StatusCreated {
			t.Errorf("number %s: %d %s", n, r.Status, r.Body)
		}
	}
	h.healthy(7)
}

func nested(depth int, leaf string) string {
	return strings.Repeat(`{"a":`, depth) + leaf + strings.Repeat("}", depth)
}

// Nesting is limited to 128 levels (the root object is level 1). A document
// 9,999 levels deep used to be stored and then fail every Go SDK query.
func TestNestingDepth(t *testing.T) {
	h := newHardInputs(t)
	h.seed()
	h.writes("depth 129", `{"id":"d","pk":"p","x":`+nested(128, "1")+`}`, 400, "nesting")
	h.writes("depth 129 in arrays", `{"id":"d","pk":"p","x":`+strings.Repeat("[", 128)+strings.Repeat("]", 128)+`}`, 400, "nesting")
	h.writes("depth 9999", `{"id":"d","pk":"p","x":`+nested(9998, "1")+`}`, 400, "nesting")
	h.refused("patch value depth 129", h.patch("keep", `[{"op":"set","path":"/v","value":`+nested(128, "1")+`}]`), 400, "nesting")
	// A value that is shallow enough alone but too deep where it goes.
	r := h.raw.do(t, "POST", "/dbs/db/colls/c/docs", []byte(`{"id":"deep","pk":"p","x":`+nested(100, "1")+`}`), pkP)
	if r.Status != http.StatusCreated {
		t.Fatalf("depth 102: %d %s", r.Status, r.Body)
	}
	h.refused("patch making depth 129", h.patch("deep", `[{"op":"set","path":"/x/a/a","value":`+nested(126, "1")+`}]`), 400, "nesting")
	h.refused("query parameter depth 129", h.query(`{"query":"SELECT * FROM c WHERE c.v = @v","parameters":[{"name":"@v","value":`+nested(129, "1")+`}]}`), 400, "nesting")
	// 128 levels exactly is accepted.
	r = h.raw.do(t, "POST", "/dbs/db/colls/c/docs", []byte(`{"id":"d128","pk":"p","x":`+nested(127, "1")+`}`), pkP)
	if r.Status != http.StatusCreated {
		t.Fatalf("depth 128: %d %s", r.Status, r.Body)
	}
	// So is a query parameter of 128 levels, though the body wraps it in 3 more.
	if r := h.query(`{"query":"SELECT * FROM c WHERE c.v = @v","parameters":[{"name":"@v","value":` + nested(128, "1") + `}]}`); r.Status != http.StatusOK {
		t.Fatalf("query parameter depth 128: %d %.300s", r.Status, r.Body)
	}
	h.healthy(3)
}

// Property names must not repeat in one object, at any depth. The first
// "id" used to be the stored id and the last the queried one.
func TestDuplicatePropertyNames(t *testing.T) {
	h := newHardInputs(t)
	h.seed()
	many := func(n int, last string) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, `"k%d":%d,`, i, i)
		}
		return b.String() + `"` + last + `":0`
	}
	for _, tc := range []struct{ name, body, dup string }{
		{"id", `{"id":"dupA","pk":"p","id":"dupB"}`, `"id"`},
		{"partition key", `{"id":"dupA","pk":"p","pk":"q"}`, `"pk"`},
		{"nested", `{"id":"x","pk":"p","a":[{"b":1,"c":{"d":1,"d":2}}]}`, `"d"`},
		{"escaped", `{"id":"x","pk":"p","\u0061":1,"a":2}`, `"a"`},
		{"both escaped", `{"id":"x","pk":"p","\u00e9":1,"\u00E9":2}`, `"é"`},
		{"large object", `{"id":"x","pk":"p",` + many(200, "k117") + `}`, `"k117"`},
		{"large nested object", `{"id":"x","pk":"p","o":{` + many(40, "k0") + `}}`, `"k0"`},
	} {
		h.writes("duplicate "+tc.name, tc.body, 400, "duplicate property name "+tc.dup)
	}
	h.refused("patch value with duplicates", h.patch("keep", `[{"op":"add","path":"/o","value":{"a":1,"a":2}}]`), 400, "duplicate property name")
	h.refused("query parameter with duplicates", h.query(`{"query":"SELECT * FROM c WHERE c.v = @v","parameters":[{"name":"@v","value":{"a":1,"a":2}}]}`), 400, "duplicate property name")
	// Same names in different objects are fine.
	r := h.raw.do(t, "POST", "/dbs/db/colls/c/docs", []byte(`{"id":"ok","pk":"p","a":{"a":{"a":1}},"b":[{"a":1},{"a":2}],`+many(100, "z")+`}`), pkP)
	if r.Status != http.StatusCreated {
		t.Fatalf("no duplicates: %d %s", r.Status, r.Body)
	}
	h.healthy(2)
}

// Strings must be valid UTF-8, in ids, names and values.
func TestInvalidUTF8(t *testing.T) {
	h := newHardInputs(t)
	h.seed()
	for _, tc := range []struct{ name, body string }{
		{"id", "{\"id\":\"a\xffb\",\"pk\":\"p\"}"},
		{"value", "{\"id\":\"x\",\"pk\":\"p\",\"v\":\"\xc3\"}"},
		{"name", "{\"id\":\"x\",\"pk\":\"p\",\"\xed\xa0\x80\":1}"},
		{"overlong", "{\"id\":\"x\",\"pk\":\"p\",\"v\":[\"\xc0\xaf\"]}"},
	} {
		h.writes("invalid UTF-8 in "+tc.name, tc.body, 400, "UTF-8")
	}
	h.refused("invalid UTF-8 in a patch value", h.patch("keep", "[{\"op\":\"set\",\"path\":\"/v\",\"value\":\"\xff\"}]"), 400, "UTF-8")
	h.refused("invalid UTF-8 in the id of a read", h.raw.do(t, "GET", "/dbs/db/colls/c/docs/a\xffb", nil, pkP), 400, "UTF-8")
	h.refused("invalid UTF-8 in the id of a patch", h.patch("a\xffb", `[{"op":"set","path":"/v","value":1}]`), 400, "UTF-8")
	h.refused("invalid UTF-8 in a container id", h.raw.do(t, "POST", "/dbs/db/colls", []byte("{\"id\":\"c\xff\",\"partitionKey\":{\"paths\":[\"/pk\"],\"kind\":\"Hash\"}}"), nil), 400, "UTF-8")
	r := h.raw.do(t, "POST", "/dbs/db/colls/c/docs", []byte(`{"id":"ok","pk":"p","v":"h\u00e9llo ☃ 😀"}`), pkP)
	if r.Status != http.StatusCreated {
		t.Fatalf("valid UTF-8: %d %s", r.Status, r.Body)
	}
	h.healthy(2)
}

// An id with a \u escape of a UTF-16 surrogate without its pair is valid
// JSON text but no Unicode string (RFC 8259, section 8.2): decoded, it
// would become U+FFFD and meet the id that holds U+FFFD itself, so it is
// refused, for every kind of resource. Ids in the path must be UTF-8.
func TestUnpairedSurrogateInIDs(t *testing.T) {
	h := newHardInputs(t)
	h.seed()
	h.writes("an unpaired surrogate in an item id", `{"id":"a\ud800b","pk":"p"}`, 400, `\ud800, a UTF-16 surrogate without its pair`)
	h.writes("an unpaired low surrogate in an item id", `{"id":"\udc00","pk":"p"}`, 400, `\udc00, a UTF-16 surrogate without its pair`)
	for _, tc := range []struct{ what, path, body string }{
		{"database", "/dbs", `{"id":"d\ud800"}`},
		{"container", "/dbs/db/colls", `{"id":"c\ud800","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2}}`},
		{"user", "/dbs/db/users", `{"id":"u\udfff"}`},
		{"stored procedure", "/dbs/db/colls/c/sprocs", `{"id":"s\ud800","body":"function () {}"}`},
	} {
		h.refused("an unpaired surrogate in a "+tc.what+" id", h.raw.do(t, "POST", tc.path, []byte(tc.body), nil), 400, "a UTF-16 surrogate without its pair")
	}
	h.refused("invalid UTF-8 in the id of a database read", h.raw.do(t, "GET", "/dbs/d\xffb", nil, nil), 400, "UTF-8")
	h.refused("invalid UTF-8 in the id of a container read", h.raw.do(t, "GET", "/dbs/db/colls/c\xff", nil, nil), 400, "UTF-8")

	// A pair is one character, and U+FFFD itself is a character.
	for _, id := range []string{`\ud83d\ude00`, `\ufffd`} {
		if r := h.raw.do(t, "POST", "/dbs/db/colls/c/docs", []byte(`{"id":"`+id+`","pk":"p"}`), pkP); r.Status != http.StatusCreated {
			t.Errorf("item id %s: %d %s", id, r.Status, r.Body)
		}
		if r := h.raw.do(t, "POST", "/dbs", []byte(`{"id":"`+id+`"}`), nil); r.Status != http.StatusCreated {
			t.Errorf("database id %s: %d %s", id, r.Status, r.Body)
		}
	}
	h.healthy(3)
}

// The id may be up to 1,023 bytes; partition key strings up to 2,048.
func TestIDAndKeyLength(t *testing.T) {
	h := newHardInputs(t)
	for _, n := range []int{1023, 1024} {
		id := strings.Repeat("é", n/2) + strings.Repeat("i", n%2) // n bytes
		if len(id) != n {
			t.Fatalf("id of %d bytes, want %d", len(id), n)
		}
		pk := azcosmos.NewPartitionKeyString("p")
		_, err := h.cc.CreateItem(ctx(), pk, []byte(`{"id":"`+id+`","pk":"p"}`), nil)
		if n <= 1023 {
			must(t, err, fmt.Sprintf("create with a %d-byte id", n))
			rd, err := h.cc.ReadItem(ctx(), pk, id, nil)
			must(t, err, "read it")
			var v struct{ ID string }
			must(t, json.Unmarshal(rd.Value, &v), "decode")
			if v.ID != id {
				t.Errorf("read back id of %d bytes, want %d", len(v.ID), n)
			}
			_, err = h.cc.UpsertItem(ctx(), pk, []byte(`{"id":"`+id+`","pk":"p","v":1}`), nil)
			must(t, err, "upsert it")
			ops := azcosmos.PatchOperations{}
			ops.AppendSet("/v", 2)
			_, err = h.cc.PatchItem(ctx(), pk, id, ops, nil)
			must(t, err, "patch it")
			_, err = h.cc.DeleteItem(ctx(), pk, id, nil)
			must(t, err, "delete it")
			continue
		}
		_, err = h.cc.CreateItem(ctx(), pk, []byte(`{"id":"`+id+`","pk":"p"}`), nil)
		wantStatus(t, err, http.StatusBadRequest, "create with a 1,024-byte id")
		_, err = h.cc.ReadItem(ctx(), pk, id, nil)
		wantStatus(t, err, http.StatusBadRequest, "read with a 1,024-byte id")
	}
	long := strings.Repeat("k", 2049)
	ok := strings.Repeat("k", 2048)
	_, err := h.cc.CreateItem(ctx(), azcosmos.NewPartitionKeyString(ok), []byte(`{"id":"a","pk":"`+ok+`"}`), nil)
	must(t, err, "create with a 2,048-byte partition key")
	_, err = h.cc.CreateItem(ctx(), azcosmos.NewPartitionKeyString(long), []byte(`{"id":"a","pk":"`+long+`"}`), nil)
	wantStatus(t, err, http.StatusBadRequest, "create with a 2,049-byte partition key")
	_, err = h.cc.ReadItem(ctx(), azcosmos.NewPartitionKeyString(long), "a", nil)
	wantStatus(t, err, http.StatusBadRequest, "read with a 2,049-byte partition key")
	r := h.raw.do(t, "POST", "/dbs/db/colls/c/docs", []byte(`{"id":"a","pk":"`+long+`"}`), map[string]string{"x-ms-documentdb-partitionkey": `["` + long + `"]`})
	h.refused("raw create with a 2,049-byte partition key", r, 400, "2048")
}

// A transactional batch is one logical partition: operations that name
// another partition key are refused.
func TestBatchMixedPartitionKeys(t *testing.T) {
	h := newHardInputs(t)
	h.seed()
	for _, body := range []string{
		`[{"operationType":"Create","resourceBody":{"id":"b1","pk":"p"}},{"operationType":"Create","partitionKey":"[\"q\"]","resourceBody":{"id":"b2","pk":"q"}}]`,
		`[{"operationType":"Read","id":"keep"},{"operationType":"Delete","partitionKey":"[\"q\"]","id":"keep"}]`,
	} {
		h.refused("batch with two partition keys", h.batch(body, true), 400, "partition key")
	}
	h.healthy(1)
}

// Patch cannot grow an item past 2 MB, alone or in a batch.
func TestPatchItemSizeLimit(t *testing.T) {
	h := newHardInputs(t)
	h.seed()
	big := strings.Repeat("x", 1900*1024)
	set := func(prop string) string { return `[{"op":"add","path":"/` + prop + `","value":"` + big + `"}]` }
	r := h.patch("keep", set("a"))
	if r.Status != http.StatusOK {
		t.Fatalf("first patch: %d %.300s", r.Status, r.Body)
	}
	h.refused("second patch", h.patch("keep", set("b")), http.StatusRequestEntityTooLarge, "limit")
	br := h.batch(`[{"operationType":"Patch","id":"keep","resourceBody":{"operations":`+set("c")+`}}]`, true)
	var res []struct{ StatusCode int }
	if err := json.Unmarshal(br.Body, &res); err != nil || len(res) != 1 || res[0].StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("batch patch past 2 MB: %d %.300s", br.Status, br.Body)
	}
	rd, err := h.cc.ReadItem(ctx(), azcosmos.NewPartitionKeyString("p"), "keep", nil)
	must(t, err, "read")
	if len(rd.Value) > 2<<20 {
		t.Errorf("the item grew to %d bytes", len(rd.Value))
	}
	h.healthy(1)
}

// Property names and strings far longer than index terms keep queries
// exact: equality and ORDER BY on values that agree on their first
// kilobytes, and filters on long property names.
func TestLongNamesAndValuesQueryExactly(t *testing.T) {
	h := newHardInputs(t)
	name := strings.Repeat("n", 60*1024)
	prefix := strings.Repeat("v", 4096)
	for i, suffix := range []string{"c", "a", "b"} {
		body := fmt.Sprintf(`{"id":"%d","pk":"p","s":"%s","%s":{"%s":%d}}`, i, prefix+suffix, name, name, i)
		r := h.raw.do(t, "POST", "/dbs/db/colls/c/docs", []byte(body), pkP)
		if r.Status != http.StatusCreated {
			t.Fatalf("create %d: %d %.300s", i, r.Status, r.Body)
		}
	}
	ids := func(q string, params []azcosmos.QueryParameter) string {
		t.Helper()
		var out []string
		pager := h.cc.NewQueryItemsPager(q, azcosmos.NewPartitionKey(), &azcosmos.QueryOptions{QueryParameters: params})
		for pager.More() {
			page, err := pager.NextPage(ctx())
			must(t, err, q)
			for _, it := range page.Items {
				var v struct{ ID string }
				must(t, json.Unmarshal(it, &v), "decode")
				out = append(out, v.ID)
			}
		}
		return strings.Join(out, ",")
	}
	if got := ids("SELECT c.id FROM c WHERE c.s = @s", []azcosmos.QueryParameter{{Name: "@s", Value: prefix + "b"}}); got != "2" {
		t.Errorf("equality on a long string: %q, want 2", got)
	}
	if got := ids("SELECT c.id FROM c WHERE c.s > @s", []azcosmos.QueryParameter{{Name: "@s", Value: prefix + "a"}}); got != "0,2" && got != "2,0" {
		t.Errorf("range on a long string: %q, want 0 and 2", got)
	}
	if got := ids("SELECT TOP 2 c.id FROM c ORDER BY c.s DESC", nil); got != "0,2" {
		t.Errorf("ORDER BY DESC on long strings: %q, want 0,2", got)
	}
	if got := ids("SELECT c.id FROM c ORDER BY c.s", nil); got != "1,2,0" {
		t.Errorf("ORDER BY on long strings: %q, want 1,2,0", got)
	}
	q := fmt.Sprintf(`SELECT c.id FROM c WHERE c["%s"]["%s"] = 1`, name, name)
	if got := ids(q, nil); got != "1" {
		t.Errorf("filter on a long property name: %q, want 1", got)
	}
	// Paths deeper than the index reaches are filtered by reading documents.
	r := h.raw.do(t, "POST", "/dbs/db/colls/c/docs", []byte(`{"id":"deep","pk":"p","x":`+nested(40, "7")+`}`), pkP)
	if r.Status != http.StatusCreated {
		t.Fatalf("create deep: %d %.300s", r.Status, r.Body)
	}
	if got := ids("SELECT c.id FROM c WHERE c.x"+strings.Repeat(".a", 40)+" = 7", nil); got != "deep" {
		t.Errorf("filter on a path 41 levels deep: %q, want deep", got)
	}
	if got := ids("SELECT c.id FROM c WHERE c.x"+strings.Repeat(".a", 40)+" > 6 ORDER BY c.x"+strings.Repeat(".a", 40), nil); got != "deep" {
		t.Errorf("ORDER BY a path 41 levels deep: %q, want deep", got)
	}
}
