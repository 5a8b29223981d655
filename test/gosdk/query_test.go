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

// queryAll pages through a query with the Go SDK and returns every row.
func queryAll(t *testing.T, cc *azcosmos.ContainerClient, q string, pk azcosmos.PartitionKey, page int32, params ...azcosmos.QueryParameter) []json.RawMessage {
	t.Helper()
	pager := cc.NewQueryItemsPager(q, pk, &azcosmos.QueryOptions{PageSizeHint: page, QueryParameters: params})
	var out []json.RawMessage
	pages := 0
	for pager.More() {
		r, err := pager.NextPage(ctx())
		must(t, err, "query "+q)
		for _, it := range r.Items {
			out = append(out, json.RawMessage(it))
		}
		if pages++; pages > 1000 {
			t.Fatalf("query %q does not end", q)
		}
	}
	return out
}

func TestQueriesAcrossPartitions(t *testing.T) {
	s := startServer(t, server.Options{})
	c := newClient(t, s, auth.EmulatorKey, nil)
	cc := setup(t, c, "db", "q", hashPK("/pk"), 24000)
	if rs := ranges(t, newRaw(t, s, auth.EmulatorKey), "db", "q"); len(rs) != 4 {
		t.Fatalf("%d ranges", len(rs))
	}
	// 60 items over 20 keys: n = 0..59, grp = n % 3, tags.
	for n := 0; n < 60; n++ {
		pk := fmt.Sprint("k", n%20)
		doc := fmt.Sprintf(`{"id":"%d","pk":%q,"n":%d,"grp":"g%d","tags":["t%d","t%d"]}`, n, pk, n, n%3, n%2, n%5)
		_, err := cc.CreateItem(ctx(), azcosmos.NewPartitionKeyString(pk), []byte(doc), nil)
		must(t, err, "create")
	}
	all := azcosmos.NewPartitionKey() // no partition key: cross-partition

	// ORDER BY on two keys across 4 partitions, 3 rows a page.
	rows := queryAll(t, cc, "SELECT c.n, c.grp FROM c ORDER BY c.grp DESC, c.n ASC", all, 3)
	if len(rows) != 60 {
		t.Fatalf("ORDER BY returned %d rows, want 60", len(rows))
	}
	var prevG string
	prevN := -1
	for i, r := range rows {
		var v struct {
			N   int
			Grp string
		}
		must(t, json.Unmarshal(r, &v), "row")
		if i > 0 && (v.Grp > prevG || (v.Grp == prevG && v.N <= prevN)) {
			t.Fatalf("row %d (%s, %d) out of order after (%s, %d)", i, v.Grp, v.N, prevG, prevN)
		}
		prevG, prevN = v.Grp, v.N
	}
	check := func(q string, pk azcosmos.PartitionKey, want string, params ...azcosmos.QueryParameter) {
		t.Helper()
		rows := queryAll(t, cc, q, pk, 4, params...)
		var parts []string
		for _, r := range rows {
			parts = append(parts, string(r))
		}
		if got := "[" + strings.Join(parts, ",") + "]"; got != want {
			t.Errorf("%s\n got %s\nwant %s", q, got, want)
		}
	}
	check("SELECT TOP 3 VALUE c.n FROM c ORDER BY c.n DESC", all, "[59,58,57]")
	check("SELECT VALUE COUNT(1) FROM c", all, "[60]")
	check("SELECT VALUE SUM(c.n) FROM c WHERE c.grp = 'g1'", all, "[590]")
	check("SELECT VALUE MAX(c.n) FROM c", all, "[59]")
	check("SELECT DISTINCT VALUE c.grp FROM c ORDER BY c.grp", all, `["g0","g1","g2"]`)
	check("SELECT c.grp, COUNT(1) AS cnt FROM c GROUP BY c.grp", all, `[{"grp":"g0","cnt":20},{"grp":"g1","cnt":20},{"grp":"g2","cnt":20}]`)
	check("SELECT VALUE c.n FROM c ORDER BY c.n OFFSET 10 LIMIT 5", all, "[10,11,12,13,14]")
	check("SELECT VALUE COUNT(1) FROM c JOIN t IN c.tags WHERE t = 't4'", all, "[12]")
	check("SELECT VALUE c.n FROM c WHERE c.pk = @pk ORDER BY c.n", azcosmos.NewPartitionKeyString("k7"), "[7,27,47]", azcosmos.QueryParameter{Name: "@pk", Value: "k7"})
	check("SELECT VALUE c.n FROM c WHERE c.n IN (1, 21, 41) ORDER BY c.n", all, "[1,21,41]")

	// ReadManyItems hashes the keys itself and sends one query per range.
	var ids []azcosmos.ItemIdentity
	for _, n := range []int{0, 5, 13, 22, 37, 59} {
		ids = append(ids, azcosmos.ItemIdentity{ID: fmt.Sprint(n), PartitionKey: azcosmos.NewPartitionKeyString(fmt.Sprint("k", n%20))})
	}
	ids = append(ids, azcosmos.ItemIdentity{ID: "nope", PartitionKey: azcosmos.NewPartitionKeyString("k1")})
	rm, err := cc.ReadManyItems(ctx(), ids, nil)
	must(t, err, "ReadManyItems")
	if len(rm.Items) != 6 {
		t.Fatalf("ReadManyItems returned %d items, want 6", len(rm.Items))
	}

	// Bad queries: 400 with the problem and its position.
	raw := newRaw(t, s, auth.EmulatorKey)
	for q, want := range map[string]string{
		"SELECT * FORM c":                "line 1, column",
		"SELECT NOPE(c.n) FROM c":        "unknown function",
		"SELECT * FROM c WHERE c.n = @x": "@x",
		"SELECT ABS(c.n, 1) FROM c":      "argument",
	} {
		r := raw.do(t, "POST", "/dbs/db/colls/q/docs", []byte(fmt.Sprintf(`{"query":%q}`, q)), map[string]string{"Content-Type": "application/query+json", "x-ms-documentdb-isquery": "true"})
		if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), want) {
			t.Errorf("%s: %d %s (want 400 mentioning %q)", q, r.Status, r.Body, want)
		}
	}
	r := raw.do(t, "POST", "/dbs/db/colls/q/docs", []byte(`{"query":"SELECT * FROM c"}`), map[string]string{"Content-Type": "application/query+json",
		"x-ms-documentdb-query-enablecrosspartition": "true", "x-ms-continuation": "bogus"})
	if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "continuation") {
		t.Errorf("bogus continuation: %d %s", r.Status, r.Body)
	}

	// A query not scoped to one key needs the client's consent, on four
	// partitions and on one alike; a filter that pins a key needs none.
	setup(t, c, "db", "one", hashPK("/pk"), 400)
	for _, coll := range []string{"q", "one"} {
		path := "/dbs/db/colls/" + coll + "/docs"
		for _, consent := range []string{"", "false"} {
			hdr := map[string]string{"Content-Type": "application/query+json", "x-ms-documentdb-isquery": "true"}
			if consent != "" {
				hdr["x-ms-documentdb-query-enablecrosspartition"] = consent
			}
			r = raw.do(t, "POST", path, []byte(`{"query":"SELECT * FROM c WHERE c.n > 1"}`), hdr)
			if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "Cross partition query is required but disabled") {
				t.Errorf("%s, consent %q: %d %s", coll, consent, r.Status, r.Body)
			}
			r = raw.do(t, "POST", path, []byte(`{"query":"SELECT * FROM c WHERE c.pk = 'k1' AND c.n > 1"}`), hdr)
			if r.Status != http.StatusOK {
				t.Errorf("%s, a filter on one key, consent %q: %d %s", coll, consent, r.Status, r.Body)
			}
		}
	}
}
