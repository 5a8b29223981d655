package tables

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/parsecdb/parsec/internal/server"
)

// TestQuery runs filtered, projected and paged queries through the SDK's
// pager, which echoes x-ms-continuation-NextPartitionKey/NextRowKey back
// as query parameters and stops when neither comes.
func TestQuery(t *testing.T) {
	s := startServer(t, server.Options{})
	ctx := context.Background()
	for _, st := range styles {
		t.Run(st.String(), func(t *testing.T) {
			svc := service(t, s, st, emulatorKey)
			tc := newTable(t, svc, "query"+st.String())
			// 3 partitions × 30 rows.
			for p := range 3 {
				for r := range 30 {
					body, _ := json.Marshal(map[string]any{"PartitionKey": fmt.Sprintf("p%d", p), "RowKey": fmt.Sprintf("r%02d", r),
						"N": r, "Even": r%2 == 0, "Big": fmt.Sprint(int64(1)<<60 + int64(r)), "Big@odata.type": "Edm.Int64"})
					if _, err := tc.AddEntity(ctx, body, nil); err != nil {
						t.Fatal(err)
					}
				}
			}
			cases := []struct {
				filter string
				want   int
			}{
				{"", 90},
				{"PartitionKey eq 'p1'", 30},
				{"PartitionKey eq 'p1' and N ge 10", 20},
				{"PartitionKey eq 'p1' and RowKey ge 'r10' and RowKey lt 'r20'", 10},
				{"N lt 5", 15},
				{"Even eq true and N lt 10", 15},
				{"not (Even eq true)", 45},
				{"PartitionKey eq 'p0' or PartitionKey eq 'p2'", 60},
				{"N eq 3L", 0},                      // an Int64 literal never equals an Int32 property
				{"N eq 3.0", 0},                     // nor a Double one
				{"Big ge 1152921504606846996L", 30}, // 2^60 + 20: Int64 beyond 2^53
				{"PartitionKey eq 'p1' and PartitionKey eq 'p2'", 0},
				{"Missing eq 'x'", 0},
				{"Missing ne 'x'", 0}, // a comparison with a missing property is false
			}
			for _, c := range cases {
				var opts *aztables.ListEntitiesOptions
				if c.filter != "" {
					opts = &aztables.ListEntitiesOptions{Filter: to.Ptr(c.filter)}
				}
				got := listAll(t, tc, opts)
				if len(got) != c.want {
					t.Errorf("%q: %d entities, want %d", c.filter, len(got), c.want)
				}
			}
			// Paging: $top is per page.
			pager := tc.NewListEntitiesPager(&aztables.ListEntitiesOptions{Top: to.Ptr(int32(7)), Filter: to.Ptr("PartitionKey eq 'p2'")})
			pages, total := 0, 0
			var keys []string
			for pager.More() {
				p, err := pager.NextPage(ctx)
				if err != nil {
					t.Fatal(err)
				}
				pages++
				if len(p.Entities) > 7 {
					t.Fatalf("a page of $top=7 holds %d", len(p.Entities))
				}
				total += len(p.Entities)
				for _, e := range p.Entities {
					var m map[string]any
					_ = json.Unmarshal(e, &m)
					keys = append(keys, m["RowKey"].(string))
				}
			}
			if total != 30 || pages < 5 {
				t.Errorf("paged %d entities in %d pages, want 30 in at least 5", total, pages)
			}
			slices.Sort(keys)
			if len(slices.Compact(keys)) != 30 {
				t.Errorf("the pages returned duplicates: %v", keys)
			}
			// $select.
			page := firstPage(t, tc, &aztables.ListEntitiesOptions{Filter: to.Ptr("PartitionKey eq 'p0' and RowKey eq 'r03'"), Select: to.Ptr("N,RowKey")})
			if len(page) != 1 {
				t.Fatalf("select: %v", page)
			}
			var m map[string]any
			_ = json.Unmarshal(page[0], &m)
			if m["N"] != 3.0 || m["RowKey"] != "r03" || m["PartitionKey"] != nil || m["Even"] != nil {
				t.Errorf("$select=N,RowKey returned %v", m)
			}
			// A bad filter is 400 InvalidInput.
			_, err := tc.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: to.Ptr("N eq")}).NextPage(ctx)
			if status(err) != http.StatusBadRequest || code(err) != "InvalidInput" {
				t.Errorf("bad filter: %v", err)
			}
		})
	}
}

func listAll(t *testing.T, tc *aztables.Client, o *aztables.ListEntitiesOptions) [][]byte {
	t.Helper()
	var out [][]byte
	pager := tc.NewListEntitiesPager(o)
	for pager.More() {
		p, err := pager.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p.Entities...)
	}
	return out
}

func firstPage(t *testing.T, tc *aztables.Client, o *aztables.ListEntitiesOptions) [][]byte {
	t.Helper()
	p, err := tc.NewListEntitiesPager(o).NextPage(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return p.Entities
}
