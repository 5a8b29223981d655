package gosdk

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/parsecdb/parsec/internal/auth"
	"github.com/parsecdb/parsec/internal/server"
)

// indexMetrics runs one page of a query with index metrics and returns
// the index paths it used and could have used, and the page's charge.
func indexMetrics(t *testing.T, cc *azcosmos.ContainerClient, q string, params ...azcosmos.QueryParameter) (used, potential []string, charge float32) {
	t.Helper()
	pager := cc.NewQueryItemsPager(q, azcosmos.NewPartitionKey(), &azcosmos.QueryOptions{PopulateIndexMetrics: true, QueryParameters: params})
	for pager.More() {
		r, err := pager.NextPage(ctx())
		must(t, err, "query "+q)
		charge += r.RequestCharge
		if r.IndexMetrics == nil {
			t.Fatalf("%s: no index metrics in the response", q)
		}
		raw, err := base64.StdEncoding.DecodeString(*r.IndexMetrics)
		must(t, err, "index metrics are base64")
		var m struct {
			UtilizedSingleIndexes, PotentialSingleIndexes []struct{ IndexSpec string }
		}
		must(t, json.Unmarshal(raw, &m), "index metrics are JSON")
		for _, x := range m.UtilizedSingleIndexes {
			used = append(used, x.IndexSpec)
		}
		for _, x := range m.PotentialSingleIndexes {
			potential = append(potential, x.IndexSpec)
		}
	}
	return used, potential, charge
}

// TestIndexedQueriesThroughSDK: over 4 partitions, equality, IN and range
// filters and ORDER BY use the index (the index metrics say so, the charge
// is a fraction of a scan's), return exactly the rows a scan returns (in
// the same order with ORDER BY), and a policy change through
// ReplaceContainer re-indexes online.
func TestIndexedQueriesThroughSDK(t *testing.T) {
	s := startServer(t, server.Options{})
	c := newClient(t, s, auth.EmulatorKey, nil)
	indexed := setup(t, c, "db", "indexed", hashPK("/pk"), 24000)
	d, _ := c.NewDatabase("db")
	tp := azcosmos.NewManualThroughputProperties(24000)
	_, err := d.CreateContainer(ctx(), azcosmos.ContainerProperties{ID: "scanned", PartitionKeyDefinition: hashPK("/pk"),
		IndexingPolicy: &azcosmos.IndexingPolicy{IndexingMode: azcosmos.IndexingModeNone}}, &azcosmos.CreateContainerOptions{ThroughputProperties: &tp})
	must(t, err, "create the unindexed container")
	scanned, _ := d.NewContainer("scanned")
	const n = 2000
	for i := range n {
		pk := fmt.Sprint("k", i%50)
		doc := fmt.Sprintf(`{"id":"%d","pk":%q,"cat":"c%d","n":%d,"nested":{"v":%d}}`, i, pk, i%100, i, i%7)
		for _, cc := range []*azcosmos.ContainerClient{indexed, scanned} {
			_, err := cc.CreateItem(ctx(), azcosmos.NewPartitionKeyString(pk), []byte(doc), nil)
			must(t, err, "create")
		}
	}
	queries := []struct {
		q      string
		spec   string
		rows   int
		params []azcosmos.QueryParameter
	}{
		{"SELECT c.id, c.cat, c.n, c.nested FROM c WHERE c.cat = @cat", "/cat/?", n / 100, []azcosmos.QueryParameter{{Name: "@cat", Value: "c42"}}},
		{"SELECT c.id FROM c WHERE c.cat IN ('c1', 'c2', 'c3')", "/cat/?", 3 * n / 100, nil},
		{"SELECT VALUE c.n FROM c WHERE c.n >= 100 AND c.n < 120", "/n/?", 20, nil},
		{"SELECT VALUE COUNT(1) FROM c WHERE c.nested.v = 3 AND c.cat = 'c10'", "/cat/?", 1, nil},
		{"SELECT TOP 5 c.n FROM c WHERE c.n > 1990 ORDER BY c.n DESC", "/n/?", 5, nil},
		// ORDER BY an indexed path reads each partition in index order,
		// only as far as the page needs.
		{"SELECT TOP 10 c.id, c.n FROM c ORDER BY c.n DESC", "/n/?", 10, nil},
		{"SELECT TOP 10 VALUE c.id FROM c ORDER BY c.n", "/n/?", 10, nil},
		{"SELECT c.id, c.cat FROM c ORDER BY c.cat DESC, c.n OFFSET 3 LIMIT 9", "/cat/?", 9, nil},
	}
	for _, q := range queries {
		got := queryAll(t, indexed, q.q, azcosmos.NewPartitionKey(), 7, q.params...)
		want := queryAll(t, scanned, q.q, azcosmos.NewPartitionKey(), 7, q.params...)
		if !strings.Contains(q.q, "ORDER BY") {
			got, want = sortedRaw(got), sortedRaw(want)
		}
		if len(got) != q.rows || !slices.EqualFunc(got, want, func(a, b json.RawMessage) bool { return string(a) == string(b) }) {
			t.Fatalf("%s: indexed %d rows %s, scanned %d rows %s", q.q, len(got), got, len(want), want)
		}
		used, _, ci := indexMetrics(t, indexed, q.q, q.params...)
		_, potential, cs := indexMetrics(t, scanned, q.q, q.params...)
		if !slices.Contains(used, q.spec) || !slices.Contains(potential, q.spec) {
			t.Fatalf("%s: used %v on the indexed container, potential %v on the other; want %s", q.q, used, potential, q.spec)
		}
		if ci*5 > cs {
			t.Fatalf("%s: the indexed query cost %.1f RU, the scan %.1f RU; want at most a fifth", q.q, ci, cs)
		}
		t.Logf("%s: %.1f RU with the index, %.1f RU scanning", q.q, ci, cs)
	}

	// Exclude /cat from the index: queries on it stay correct while the
	// index is rebuilt and then scan; /n keeps its index.
	props, err := indexed.Read(ctx(), nil)
	must(t, err, "read container")
	p := *props.ContainerProperties
	p.IndexingPolicy = &azcosmos.IndexingPolicy{IndexingMode: azcosmos.IndexingModeConsistent, Automatic: true,
		IncludedPaths: []azcosmos.IncludedPath{{Path: "/*"}}, ExcludedPaths: []azcosmos.ExcludedPath{{Path: "/cat/?"}}}
	_, err = indexed.Replace(ctx(), p, nil)
	must(t, err, "replace the indexing policy")
	deadline := time.Now().Add(2 * time.Minute)
	for {
		rows := queryAll(t, indexed, queries[0].q, azcosmos.NewPartitionKey(), 7, queries[0].params...)
		if len(rows) != queries[0].rows {
			t.Fatalf("during re-indexing: %d rows, want %d", len(rows), queries[0].rows)
		}
		// While the new index is built, queries scan; once it is complete,
		// /n is served by it again and /cat never is.
		used, potential, _ := indexMetrics(t, indexed, queries[0].q, queries[0].params...)
		if len(used) != 0 || !slices.Contains(potential, "/cat/?") {
			t.Fatalf("the excluded path /cat: used %v, potential %v", used, potential)
		}
		if used, _, _ := indexMetrics(t, indexed, queries[2].q); slices.Contains(used, "/n/?") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the index was not rebuilt within 2 minutes")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func sortedRaw(rows []json.RawMessage) []json.RawMessage {
	out := slices.Clone(rows)
	slices.SortFunc(out, func(a, b json.RawMessage) int { return strings.Compare(string(a), string(b)) })
	return out
}

// TestHierarchicalPrefixQueries: with a [/tenant, /user] key over 4
// partitions, a query given a tenant prefix (in the header or in the WHERE
// clause) or a full key returns exactly that tenant's or user's items.
func TestHierarchicalPrefixQueries(t *testing.T) {
	s := startServer(t, server.Options{})
	c := newClient(t, s, auth.EmulatorKey, nil)
	def := azcosmos.PartitionKeyDefinition{Kind: azcosmos.PartitionKeyKindMultiHash, Version: 2, Paths: []string{"/tenant", "/user"}}
	cc := setup(t, c, "db", "h", def, 24000)
	for i := range 300 {
		tenant, user := fmt.Sprint("t", i%6), fmt.Sprint("u", i%15)
		doc := fmt.Sprintf(`{"id":"%d","tenant":%q,"user":%q,"n":%d}`, i, tenant, user, i)
		_, err := cc.CreateItem(ctx(), azcosmos.NewPartitionKeyString(tenant).AppendString(user), []byte(doc), nil)
		must(t, err, "create")
	}
	check := func(what string, rows []json.RawMessage, want func(n int) bool) {
		t.Helper()
		var got []int
		for _, r := range rows {
			var v struct{ N int }
			must(t, json.Unmarshal(r, &v), "row")
			got = append(got, v.N)
		}
		var exp []int
		for n := range 300 {
			if want(n) {
				exp = append(exp, n)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, exp) {
			t.Fatalf("%s: got %v, want %v", what, got, exp)
		}
	}
	rows := queryAll(t, cc, "SELECT c.n FROM c", azcosmos.NewPartitionKeyString("t2"), 4)
	check("tenant prefix in the header", rows, func(n int) bool { return n%6 == 2 })
	rows = queryAll(t, cc, "SELECT c.n FROM c WHERE c.tenant = 't2'", azcosmos.NewPartitionKey(), 4)
	check("tenant prefix in WHERE", rows, func(n int) bool { return n%6 == 2 })
	rows = queryAll(t, cc, "SELECT c.n FROM c ORDER BY c.n DESC", azcosmos.NewPartitionKeyString("t2").AppendString("u5"), 4)
	check("full key in the header", rows, func(n int) bool { return n%6 == 2 && n%15 == 5 })
	rows = queryAll(t, cc, "SELECT c.n FROM c WHERE c.tenant = 't3' AND c.user = 'u3'", azcosmos.NewPartitionKey(), 4)
	check("full key in WHERE", rows, func(n int) bool { return n%6 == 3 && n%15 == 3 })
	rows = queryAll(t, cc, "SELECT c.n FROM c WHERE c.n < 100", azcosmos.NewPartitionKeyString("t4"), 3)
	check("prefix and filter", rows, func(n int) bool { return n%6 == 4 && n < 100 })
}

// TestConditionalPatch: a patch with a condition applies when the item
// satisfies it and answers 412 when it does not; a malformed condition is
// a 400 naming the problem.
func TestConditionalPatch(t *testing.T) {
	s := startServer(t, server.Options{})
	c := newClient(t, s, auth.EmulatorKey, nil)
	cc := setup(t, c, "db", "p", hashPK("/pk"), 0)
	pk := azcosmos.NewPartitionKeyString("a")
	_, err := cc.CreateItem(ctx(), pk, []byte(`{"id":"1","pk":"a","stock":3,"state":"open"}`), nil)
	must(t, err, "create")
	patch := func(cond string) error {
		var ops azcosmos.PatchOperations
		ops.SetCondition(cond)
		ops.AppendIncrement("/stock", -1)
		_, err := cc.PatchItem(ctx(), pk, "1", ops, nil)
		return err
	}
	must(t, patch("FROM c WHERE c.stock > 0 AND c.state = 'open'"), "patch whose condition holds")
	if err := patch("from c where c.stock > 5"); statusOf(err) != http.StatusPreconditionFailed {
		t.Fatalf("patch whose condition fails: %v, want 412", err)
	}
	err = patch("FROM c WHERE c.stock >")
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != http.StatusBadRequest || !strings.Contains(err.Error(), "condition") {
		t.Fatalf("malformed condition: %v, want 400 naming the condition", err)
	}
	r, err := cc.ReadItem(ctx(), pk, "1", nil)
	must(t, err, "read")
	var v struct{ Stock int }
	must(t, json.Unmarshal(r.Value, &v), "decode")
	if v.Stock != 2 {
		t.Fatalf("stock %d after one applied patch, want 2", v.Stock)
	}
}
