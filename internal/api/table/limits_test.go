package table

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/engine"
)

func entityJSONWith(pk, rk string, extra map[string]any) []byte {
	m := map[string]any{"PartitionKey": pk, "RowKey": rk}
	for k, v := range extra {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	return b
}

// TestLimits checks the service's entity limits (252 custom properties,
// names of 255 characters, Cosmos DB's 255-byte RowKey and 1 KiB
// PartitionKey, its 2 MB item) with the service's error codes, each
// just under and just over its bound.
func TestLimits(t *testing.T) {
	ts := newTestServer(t)
	ts.mustDo(t, 201, "POST", "/Tables", []byte(`{"TableName":"lim"}`))
	props := func(n int) map[string]any {
		m := map[string]any{}
		for i := range n {
			m[fmt.Sprintf("P%d", i)] = i
		}
		return m
	}
	cases := []struct {
		name string
		body []byte
		code string // "" for success
	}{
		{"252 properties", entityJSONWith("p", "a1", props(252)), ""},
		{"253 properties", entityJSONWith("p", "a2", props(253)), "TooManyProperties"},
		{"name of 255", entityJSONWith("p", "a3", map[string]any{strings.Repeat("n", 255): 1}), ""},
		{"name of 256", entityJSONWith("p", "a4", map[string]any{strings.Repeat("n", 256): 1}), "PropertyNameTooLong"},
		{"name not an identifier", entityJSONWith("p", "a5", map[string]any{"a-b": 1}), "PropertyNameInvalid"},
		{"RowKey of 255 bytes", entityJSONWith("p", strings.Repeat("é", 127)+"x", nil), ""},
		{"RowKey of 256 bytes", entityJSONWith("p", strings.Repeat("é", 128), nil), "KeyValueTooLarge"},
		{"PartitionKey of 1024 bytes", entityJSONWith(strings.Repeat("k", 1024), "a6", nil), ""},
		{"PartitionKey of 1025 bytes", entityJSONWith(strings.Repeat("k", 1025), "a7", nil), "KeyValueTooLarge"},
		{"RowKey with #", entityJSONWith("p", "a#b", nil), "InvalidInput"},
		{"PartitionKey with \\", entityJSONWith("p\\q", "a8", nil), "InvalidInput"},
		{"RowKey with ?", entityJSONWith("p", "a?", nil), "InvalidInput"},
		{"RowKey with DEL", entityJSONWith("p", "a\x7f", nil), "InvalidInput"},
		// Cosmos DB refuses an empty key (Storage accepts one):
		// microsoft/AzureStorageExplorer#3211, "For one table under a
		// CosmosDB account, fail to insert an entity with PartitionKey or
		// RowKey value empty". The RowKey is the item id here, which
		// cannot be empty; an empty PartitionKey is accepted.
		{"empty RowKey", entityJSONWith("p", "", nil), "PropertiesNeedValue"},
		{"empty PartitionKey", entityJSONWith("", "a13", nil), ""},
		{"no RowKey", []byte(`{"PartitionKey":"p"}`), "PropertiesNeedValue"},
		{"RowKey a number", []byte(`{"PartitionKey":"p","RowKey":5}`), "InvalidInput"},
		{"entity just under 2 MiB", entityJSONWith("p", "a9", spread(MaxEntityBytes-2000)), ""},
		{"entity over 2 MiB", entityJSONWith("p", "a10", spread(MaxEntityBytes)), "EntityTooLarge"},
		// A String holds 32K UTF-16 code units, a Binary 64 KiB (the
		// data model page's "Property types").
		{"string of 32768 units", entityJSONWith("p", "a14", map[string]any{"S": strings.Repeat("s", MaxStringUnits)}), ""},
		{"string of 32769 units", entityJSONWith("p", "a15", map[string]any{"S": strings.Repeat("s", MaxStringUnits+1)}), "PropertyValueTooLarge"},
		{"string of 16385 surrogate pairs", entityJSONWith("p", "a16", map[string]any{"S": strings.Repeat("😀", MaxStringUnits/2+1)}), "PropertyValueTooLarge"},
		{"binary of 65536 bytes", entityJSONWith("p", "a17", map[string]any{"B@odata.type": "Edm.Binary", "B": base64.StdEncoding.EncodeToString(make([]byte, MaxBinaryBytes))}), ""},
		{"binary of 65537 bytes", entityJSONWith("p", "a18", map[string]any{"B@odata.type": "Edm.Binary", "B": base64.StdEncoding.EncodeToString(make([]byte, MaxBinaryBytes+1))}), "PropertyValueTooLarge"},
		{"not JSON", []byte(`{"PartitionKey":`), "InvalidInput"},
		{"not an object", []byte(`[1]`), "InvalidInput"},
		{"a property twice", []byte(`{"PartitionKey":"p","RowKey":"a11","X":1,"X":2}`), "InvalidInput"},
	}
	for _, c := range cases {
		st, h, b := ts.do(t, "POST", "/lim", c.body, nil)
		if c.code == "" {
			if st != http.StatusCreated {
				t.Errorf("%s: %d %.200s, want 201", c.name, st, b)
			}
			continue
		}
		if st != http.StatusBadRequest || errorCode(b) != c.code || h.Get("x-ms-error-code") != c.code {
			t.Errorf("%s: %d %.300s, want 400 %s", c.name, st, b, c.code)
		}
	}
	// A body past 5 MiB is refused before it is read in full.
	big := entityJSONWith("p", "a12", map[string]any{"S": strings.Repeat("s", maxBodyBytes)})
	if st, _, b := ts.do(t, "POST", "/lim", big, nil); st != http.StatusRequestEntityTooLarge || errorCode(b) != "RequestBodyTooLarge" {
		t.Errorf("a 5 MiB body: %d %.200s", st, b)
	}
}

// TestReservedNames stores properties named as the engine's members and
// reads them back under their own names.
func TestReservedNames(t *testing.T) {
	ts := newTestServer(t)
	ts.mustDo(t, 201, "POST", "/Tables", []byte(`{"TableName":"res"}`))
	body := []byte(`{"PartitionKey":"p","RowKey":"r","id":"mine","ttl":5,"_etag":"e","_rid":"x","_ts":1,"_self":"s","_attachments":"a","_lsn":2}`)
	ts.mustDo(t, 201, "POST", "/res", body)
	b := ts.mustDo(t, 200, "GET", "/res(PartitionKey='p',RowKey='r')", nil)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"id": "mine", "ttl": 5.0, "_etag": "e", "_rid": "x", "_ts": 1.0, "_self": "s", "_attachments": "a", "_lsn": 2.0, "RowKey": "r"}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s came back as %v, want %v: %s", k, m[k], v, b)
		}
	}
}

// TestRequests covers the answers around the entities: preferences,
// missing tables, methods, If-Match rules, the table list's filter and
// paging, and the headers every response has.
func TestRequests(t *testing.T) {
	ts := newTestServer(t)
	st, h, _ := ts.do(t, "POST", "/Tables", []byte(`{"TableName":"req"}`), map[string]string{"Prefer": "return-no-content"})
	if st != http.StatusNoContent || h.Get("Preference-Applied") != "return-no-content" {
		t.Errorf("create with return-no-content: %d %v", st, h)
	}
	for _, n := range []string{"req2", "req3", "other"} {
		ts.mustDo(t, 201, "POST", "/Tables", []byte(`{"TableName":"`+n+`"}`))
	}
	b := ts.mustDo(t, 200, "GET", "/Tables?$filter="+strings.ReplaceAll("TableName ge 'req' and TableName lt 'res'", " ", "%20")+"&$top=2", nil)
	if !bytes.Contains(b, []byte(`"TableName":"req"`)) || !bytes.Contains(b, []byte(`"TableName":"req2"`)) || bytes.Contains(b, []byte("other")) {
		t.Errorf("filtered table list: %s", b)
	}
	st, h, b = ts.do(t, "GET", "/Tables?$top=2&NextTableName=req2", nil, nil)
	if st != 200 || !bytes.Contains(b, []byte(`"req2"`)) || !bytes.Contains(b, []byte(`"req3"`)) || h.Get("x-ms-continuation-NextTableName") != "" {
		t.Errorf("table list from req2: %d %s %v", st, b, h)
	}
	st, h, b = ts.do(t, "POST", "/req", entityJSONWith("p", "r", nil), map[string]string{"Prefer": "return-no-content"})
	if st != http.StatusNoContent || h.Get("Preference-Applied") != "return-no-content" || h.Get("ETag") == "" || len(b) != 0 {
		t.Errorf("insert with return-no-content: %d %v %s", st, h, b)
	}
	for _, c := range []struct {
		method, path string
		hdr          map[string]string
		status       int
		code         string
	}{
		{"GET", "/missing()", nil, 404, "TableNotFound"},
		{"GET", "/req(PartitionKey='p',RowKey='none')", nil, 404, "ResourceNotFound"},
		{"DELETE", "/req(PartitionKey='p',RowKey='r')", nil, 400, "MissingRequiredHeader"},
		{"PUT", "/Tables", nil, 405, "UnsupportedHttpVerb"},
		{"GET", "/req(PartitionKey='p')", nil, 400, "InvalidInput"},
		{"GET", "/req()?$top=1001", nil, 400, "InvalidQueryParameterValue"},
		{"GET", "/req()?$filter=A%20eq", nil, 400, "InvalidInput"},
		{"GET", "/req()?NextPartitionKey=bogus&NextRowKey=x", nil, 400, "InvalidInput"},
		{"DELETE", "/Tables('missing')", nil, 404, "ResourceNotFound"},
		{"PUT", "/req(PartitionKey='p',RowKey='r')", map[string]string{"If-Match": `W/"datetime'2000-01-01T00%3A00%3A00.0000000Z'"`}, 412, "UpdateConditionNotSatisfied"},
		{"GET", "/a/b/c", nil, 400, "InvalidInput"},
		{"GET", "/?restype=service&comp=properties", nil, 501, "NotImplemented"},
	} {
		st, h, b := ts.do(t, c.method, c.path, []byte(`{}`), c.hdr)
		if st != c.status || errorCode(b) != c.code {
			t.Errorf("%s %s: %d %s, want %d %s", c.method, c.path, st, b, c.status, c.code)
		}
		for _, k := range []string{"x-ms-request-id", "x-ms-version", "Date", "x-ms-request-charge", "DataServiceVersion"} {
			if h.Get(k) == "" {
				t.Errorf("%s %s: no %s header", c.method, c.path, k)
			}
		}
	}
}

// TestTimestampsDistinct gives writes in the same 100 ns tick distinct,
// increasing Timestamps, so that their ETags differ.
func TestTimestampsDistinct(t *testing.T) {
	at := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	s := New(Config{Now: func() time.Time { return at }})
	prev := s.timestamp()
	for range 100 {
		ts := s.timestamp()
		if !ts.After(prev) || tableETag(ts) == tableETag(prev) {
			t.Fatalf("timestamp %v after %v", ts, prev)
		}
		prev = ts
	}
}

// TestThrottledError maps the engine's throttling to 429 with
// x-ms-retry-after-ms.
func TestThrottledError(t *testing.T) {
	err := fmt.Errorf("write: %w", &engine.ThrottledError{RetryAfter: 1500 * time.Millisecond, RangeID: "0", RUs: 400})
	te := toTableError(err)
	if te.status != http.StatusTooManyRequests || te.code != "TooManyRequests" || retryAfterMs(err) != "1500" {
		t.Errorf("throttled: %d %s %q", te.status, te.code, retryAfterMs(err))
	}
	if retryAfterMs(fmt.Errorf("other")) != "" {
		t.Error("a retry-after for an error that is not throttling")
	}
}

// spread returns string properties of n characters in all, each within a
// property's limit.
func spread(n int) map[string]any {
	m := map[string]any{}
	for i := 0; n > 0; i++ {
		k := min(n, MaxStringUnits)
		m[fmt.Sprintf("S%d", i)] = strings.Repeat("s", k)
		n -= k
	}
	return m
}
