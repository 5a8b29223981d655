package gosdk

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/parsecdb/parsec/internal/auth"
	"github.com/parsecdb/parsec/internal/server"
)

// TestQueriesOverDatabasesAndContainers: the SDK's database and container
// queries, with any alias and parameters, and the conflicts feed, which an
// account with one write region has empty.
func TestQueriesOverDatabasesAndContainers(t *testing.T) {
	s := startServer(t, server.Options{NoThrottle: true})
	c := newClient(t, s, auth.EmulatorKey, nil)
	for _, id := range []string{"alpha", "beta", "gamma"} {
		setup(t, c, id, "c1", hashPK("/pk"), 400)
	}
	setup(t, c, "beta", "c2", hashPK("/pk"), 400)

	var dbs []string
	pager := c.NewQueryDatabasesPager("SELECT * FROM root r WHERE r.id = @a OR STARTSWITH(r.id, 'g')", &azcosmos.QueryDatabasesOptions{
		QueryParameters: []azcosmos.QueryParameter{{Name: "@a", Value: "alpha"}}})
	for pager.More() {
		page, err := pager.NextPage(ctx())
		must(t, err, "query databases")
		for _, d := range page.Databases {
			dbs = append(dbs, d.ID)
		}
	}
	slices.Sort(dbs)
	if !slices.Equal(dbs, []string{"alpha", "gamma"}) {
		t.Fatalf("databases: %v", dbs)
	}

	beta, err := c.NewDatabase("beta")
	must(t, err, "database")
	var colls []string
	cp := beta.NewQueryContainersPager("SELECT * FROM x WHERE x.id != 'c1'", nil)
	for cp.More() {
		page, err := cp.NextPage(ctx())
		must(t, err, "query containers")
		for _, cc := range page.Containers {
			colls = append(colls, cc.ID)
			if len(cc.PartitionKeyDefinition.Paths) != 1 || cc.PartitionKeyDefinition.Paths[0] != "/pk" {
				t.Errorf("container %s comes back without its partition key: %+v", cc.ID, cc.PartitionKeyDefinition)
			}
		}
	}
	if !slices.Equal(colls, []string{"c2"}) {
		t.Fatalf("containers: %v", colls)
	}

	raw := newRaw(t, s, auth.EmulatorKey)
	r := raw.do(t, "POST", "/dbs", []byte(`{"query":"SELECT VALUE COUNT(1) FROM d"}`), map[string]string{"Content-Type": "application/query+json", "x-ms-documentdb-isquery": "true"})
	if r.Status != 200 || !strings.Contains(string(r.Body), `"Databases":[3]`) {
		t.Fatalf("count of databases: %d %s", r.Status, r.Body)
	}
	r = raw.do(t, "POST", "/dbs", []byte(`{"query":"SELECT * FROM d WHERE"}`), map[string]string{"Content-Type": "application/query+json", "x-ms-documentdb-isquery": "true"})
	if r.Status != 400 {
		t.Fatalf("a bad query over databases: %d %s", r.Status, r.Body)
	}
	r = raw.do(t, "GET", "/dbs/beta/colls/c1/conflicts", nil, nil)
	if r.Status != 200 || !strings.Contains(string(r.Body), `"Conflicts":[]`) || !strings.Contains(string(r.Body), `"_count":0`) {
		t.Fatalf("conflicts feed: %d %s", r.Status, r.Body)
	}
	r = raw.do(t, "GET", "/dbs/beta/colls/c1/conflicts/x", nil, nil)
	if r.Status != 404 {
		t.Fatalf("a conflict: %d %s", r.Status, r.Body)
	}
	r = raw.do(t, "GET", "/dbs/beta/colls/nope/conflicts", nil, nil)
	if r.Status != 404 {
		t.Fatalf("conflicts of a missing container: %d %s", r.Status, r.Body)
	}
}

// TestReadFeedByPartitionKey: a read feed that names a partition key returns
// that logical partition only, paged.
func TestReadFeedByPartitionKey(t *testing.T) {
	s := startServer(t, server.Options{NoThrottle: true})
	c := newClient(t, s, auth.EmulatorKey, nil)
	cc := setup(t, c, "db", "c", hashPK("/pk"), 24000)
	for i := range 60 {
		pk := []string{"a", "b", "c"}[i%3]
		_, err := cc.CreateItem(ctx(), azcosmos.NewPartitionKeyString(pk), []byte(fmt.Sprintf(`{"id":"i%03d","pk":%q}`, i, pk)), nil)
		must(t, err, "create")
	}
	raw := newRaw(t, s, auth.EmulatorKey)
	var ids []string
	cont := ""
	for range 10 {
		hdr := map[string]string{"x-ms-documentdb-partitionkey": `["b"]`, "x-ms-max-item-count": "7"}
		if cont != "" {
			hdr["x-ms-continuation"] = cont
		}
		r := raw.do(t, "GET", "/dbs/db/colls/c/docs", nil, hdr)
		if r.Status != 200 {
			t.Fatalf("read feed by key: %d %s", r.Status, r.Body)
		}
		for _, d := range r.JSON(t)["Documents"].([]any) {
			doc := d.(map[string]any)
			if doc["pk"] != "b" {
				t.Fatalf("the feed of key b returned %v", doc)
			}
			ids = append(ids, doc["id"].(string))
		}
		if cont = r.Header.Get("x-ms-continuation"); cont == "" {
			break
		}
	}
	if len(ids) != 20 || !slices.IsSorted(ids) {
		t.Fatalf("key b: %d items %v, want its 20 in id order", len(ids), ids)
	}
}

// TestItemIDWithQuestionMark: the gateway takes '?' in an item id; the SDK
// sends it percent-encoded, and signs the id as it is.
func TestItemIDWithQuestionMark(t *testing.T) {
	s := startServer(t, server.Options{NoThrottle: true})
	c := newClient(t, s, auth.EmulatorKey, nil)
	cc := setup(t, c, "db", "c", hashPK("/pk"), 400)
	pk := azcosmos.NewPartitionKeyString("p")
	_, err := cc.CreateItem(ctx(), pk, []byte(`{"id":"who?","pk":"p","v":1}`), nil)
	must(t, err, "create an id with '?'")
	r, err := cc.ReadItem(ctx(), pk, "who?", nil)
	must(t, err, "read it")
	if !strings.Contains(string(r.Value), `"id":"who?"`) {
		t.Fatalf("read %s", r.Value)
	}
	_, err = cc.ReplaceItem(ctx(), pk, "who?", []byte(`{"id":"who?","pk":"p","v":2}`), nil)
	must(t, err, "replace it")
	_, err = cc.DeleteItem(ctx(), pk, "who?", nil)
	must(t, err, "delete it")
}
