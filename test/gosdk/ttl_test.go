package gosdk

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/parsecdb/parsec/internal/auth"
	"github.com/parsecdb/parsec/internal/server"
)

// TestTimeToLiveThroughTheSDK: a container with a one-second default time
// to live, items with their own ttl; expired items vanish from reads and
// queries at once, and the background sweep deletes them.
func TestTimeToLiveThroughTheSDK(t *testing.T) {
	s := startServer(t, server.Options{NoThrottle: true})
	c := newClient(t, s, auth.EmulatorKey, nil)
	_, err := c.CreateDatabase(ctx(), azcosmos.DatabaseProperties{ID: "db"}, nil)
	must(t, err, "create database")
	d, _ := c.NewDatabase("db")
	one := int32(1)
	_, err = d.CreateContainer(ctx(), azcosmos.ContainerProperties{ID: "ttl", PartitionKeyDefinition: hashPK("/pk"), DefaultTimeToLive: &one}, nil)
	must(t, err, "create container")
	cc, _ := d.NewContainer("ttl")
	pk := azcosmos.NewPartitionKeyString("p")
	for i := range 20 {
		_, err := cc.CreateItem(ctx(), pk, []byte(fmt.Sprintf(`{"id":"short%d","pk":"p"}`, i)), nil)
		must(t, err, "create")
	}
	_, err = cc.CreateItem(ctx(), pk, []byte(`{"id":"keep","pk":"p","ttl":-1}`), nil)
	must(t, err, "create keep")
	_, err = cc.CreateItem(ctx(), pk, []byte(`{"id":"zero","pk":"p","ttl":0}`), nil)
	if statusOf(err) != 400 || !strings.Contains(err.Error(), "The input ttl '0' is invalid") {
		t.Fatalf("ttl 0: %v", err)
	}
	time.Sleep(2100 * time.Millisecond)

	_, err = cc.ReadItem(ctx(), pk, "short3", nil)
	wantStatus(t, err, 404, "read of an expired item")
	q := cc.NewQueryItemsPager("SELECT VALUE c.id FROM c", pk, nil)
	var ids []string
	for q.More() {
		page, err := q.NextPage(ctx())
		must(t, err, "query")
		for _, it := range page.Items {
			ids = append(ids, strings.Trim(string(it), `"`))
		}
	}
	if len(ids) != 1 || ids[0] != "keep" {
		t.Fatalf("query after expiry: %v, want [keep]", ids)
	}
	_, err = cc.CreateItem(ctx(), pk, []byte(`{"id":"short3","pk":"p","ttl":-1}`), nil)
	must(t, err, "create an expired item's id again")

	// The sweep deletes the expired items: the partition's item count drops
	// to the two that live.
	raw := newRaw(t, s, auth.EmulatorKey)
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := raw.do(t, "GET", "/dbs/db/colls/ttl/partitions", nil, nil)
		parts := r.JSON(t)["partitions"].([]any)
		n := parts[0].(map[string]any)["itemCount"].(float64)
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sweep left %v items, want 2", n)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
