package gosdk

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/parsecdb/parsec/internal/auth"
	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/server"
)

// TestQueryPageSizeCap: SELECT * over 1 MB items with the server's page
// size (-1) comes back in pages of at most 4 MiB, streaming and ORDER BY,
// in one partition and across four, and the SDK's pager delivers every
// item exactly once (in order, for ORDER BY).
func TestQueryPageSizeCap(t *testing.T) {
	s := startServer(t, server.Options{NoThrottle: true})
	c := newClient(t, s, auth.EmulatorKey, nil)
	pad := strings.Repeat("x", 1<<20)
	const n = 18
	for _, coll := range []struct {
		name string
		rus  int32
	}{{"one", 400}, {"four", 24000}} {
		cc := setup(t, c, "db", coll.name, hashPK("/pk"), coll.rus)
		for i := 0; i < n; i++ {
			doc := fmt.Sprintf(`{"id":"%d","pk":"k%d","n":%d,"pad":%q}`, i, i, n-i, pad)
			_, err := cc.CreateItem(ctx(), azcosmos.NewPartitionKeyString(fmt.Sprint("k", i)), []byte(doc), nil)
			must(t, err, "create")
		}
		for _, q := range []string{"SELECT * FROM c", "SELECT * FROM c ORDER BY c.n"} {
			pager := cc.NewQueryItemsPager(q, azcosmos.NewPartitionKey(), &azcosmos.QueryOptions{PageSizeHint: -1})
			seen := map[string]int{}
			pages, prev := 0, 0
			for pager.More() {
				r, err := pager.NextPage(ctx())
				must(t, err, q)
				size := 0
				for _, it := range r.Items {
					size += len(it)
					var v struct {
						ID string
						N  int
					}
					must(t, json.Unmarshal(it, &v), "item")
					seen[v.ID]++
					if strings.Contains(q, "ORDER BY") && v.N < prev {
						t.Fatalf("%s/%s: n %d after %d", coll.name, q, v.N, prev)
					}
					prev = v.N
				}
				if size > engine.DefaultQueryPageBytes {
					t.Fatalf("%s/%s: a page of %d items holds %d bytes, over %d", coll.name, q, len(r.Items), size, engine.DefaultQueryPageBytes)
				}
				if pages++; pages > 100 {
					t.Fatalf("%s/%s does not end", coll.name, q)
				}
			}
			if pages < n/4 {
				t.Fatalf("%s/%s: %d pages for %d items of 1 MB", coll.name, q, pages, n)
			}
			for i := 0; i < n; i++ {
				if seen[fmt.Sprint(i)] != 1 {
					t.Fatalf("%s/%s: item %d came %d times", coll.name, q, i, seen[fmt.Sprint(i)])
				}
			}
		}
	}
}

// TestQueryMemoryBomb: a 700-byte query that doubles a string through 24
// nested subqueries gets a 400 naming the memory budget.
func TestQueryMemoryBomb(t *testing.T) {
	s := startServer(t, server.Options{})
	c := newClient(t, s, auth.EmulatorKey, nil)
	cc := setup(t, c, "db", "bomb", hashPK("/pk"), 400)
	_, err := cc.CreateItem(ctx(), azcosmos.NewPartitionKeyString("a"), []byte(`{"id":"1","pk":"a","s":"xy"}`), nil)
	must(t, err, "create")
	q := "SELECT VALUE c.s"
	for i := 0; i < 24; i++ {
		q = fmt.Sprintf("SELECT VALUE CONCAT(v%d, v%d) FROM (%s) v%d", i, i, q, i)
	}
	q = "SELECT VALUE LENGTH((" + q + ")) FROM c"
	pager := cc.NewQueryItemsPager(q, azcosmos.NewPartitionKeyString("a"), nil)
	_, err = pager.NextPage(ctx())
	wantStatus(t, err, 400, "string-doubling query")
	if !strings.Contains(err.Error(), "memory budget") {
		t.Fatalf("string-doubling query: %v; want the memory budget named", err)
	}
}
