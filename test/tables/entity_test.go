package tables

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/parsecdb/parsec/internal/server"
)

// TestEntityLifecycle runs every single-entity operation through the SDK
// in both URL styles: the host style sends merges as POST with
// X-HTTP-Method: MERGE, the path style as PATCH (aztables
// cosmos_patch_transform_policy.go), and the server takes both.
func TestEntityLifecycle(t *testing.T) {
	s := startServer(t, server.Options{})
	ctx := context.Background()
	for _, st := range styles {
		t.Run(st.String(), func(t *testing.T) {
			var seen []string
			svc := serviceSeen(t, s, st, emulatorKey, &seen)
			tc := newTable(t, svc, "life"+st.String())

			// A plain map, not an aztables.EDMEntity: EDMEntity.MarshalJSON
			// doubles the quotes of the keys in the body too (aztables
			// v1.4.1 entity.go:51), so that the entity stored by any
			// service has "p''1" as its PartitionKey.
			body, _ := json.Marshal(map[string]any{"PartitionKey": "p'1", "RowKey": "r 1", "Name": "Ada", "Age": 36})
			add, err := tc.AddEntity(ctx, body, nil)
			if err != nil {
				t.Fatalf("add: %v", err)
			}
			if add.ETag == "" {
				t.Fatal("add returned no ETag")
			}
			if _, err := tc.AddEntity(ctx, body, nil); code(err) != "EntityAlreadyExists" || status(err) != http.StatusConflict {
				t.Fatalf("second add: %v, want 409 EntityAlreadyExists", err)
			}
			got, err := tc.GetEntity(ctx, "p'1", "r 1", nil)
			if err != nil {
				t.Fatalf("get: %v", err)
			}
			if got.ETag != add.ETag {
				t.Errorf("get ETag %s, add gave %s", got.ETag, add.ETag)
			}
			var back aztables.EDMEntity
			if err := json.Unmarshal(got.Value, &back); err != nil {
				t.Fatal(err)
			}
			if back.PartitionKey != "p'1" || back.RowKey != "r 1" || back.Properties["Name"] != "Ada" || back.Properties["Age"] != int32(36) {
				t.Errorf("get returned %+v", back)
			}
			if time.Time(back.Timestamp).IsZero() {
				t.Error("the entity has no Timestamp")
			}

			// Merge keeps the other properties.
			merge, _ := json.Marshal(map[string]any{"PartitionKey": "p'1", "RowKey": "r 1", "City": "London"})
			up, err := tc.UpdateEntity(ctx, merge, &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeMerge, IfMatch: &add.ETag})
			if err != nil {
				t.Fatalf("merge: %v", err)
			}
			if up.ETag == add.ETag {
				t.Error("the merge did not change the ETag")
			}
			// The old ETag no longer matches.
			if _, err := tc.UpdateEntity(ctx, merge, &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeReplace, IfMatch: &add.ETag}); code(err) != "UpdateConditionNotSatisfied" || status(err) != http.StatusPreconditionFailed {
				t.Fatalf("replace with a stale ETag: %v, want 412 UpdateConditionNotSatisfied", err)
			}
			props := getProps(t, tc, "p'1", "r 1")
			if props["Name"] != "Ada" || props["City"] != "London" {
				t.Errorf("after merge: %v", props)
			}
			// Replace drops them.
			if _, err := tc.UpdateEntity(ctx, merge, &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeReplace, IfMatch: &up.ETag}); err != nil {
				t.Fatalf("replace: %v", err)
			}
			props = getProps(t, tc, "p'1", "r 1")
			if _, ok := props["Name"]; ok || props["City"] != "London" {
				t.Errorf("after replace: %v", props)
			}
			// Upserts: insert-or-merge and insert-or-replace, of a new
			// entity and of an existing one.
			newEnt, _ := json.Marshal(map[string]any{"PartitionKey": "p'1", "RowKey": "r2", "X": "1"})
			if _, err := tc.UpsertEntity(ctx, newEnt, &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeMerge}); err != nil {
				t.Fatalf("insert-or-merge (insert): %v", err)
			}
			more, _ := json.Marshal(map[string]any{"PartitionKey": "p'1", "RowKey": "r2", "Y": "2"})
			if _, err := tc.UpsertEntity(ctx, more, &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeMerge}); err != nil {
				t.Fatalf("insert-or-merge (merge): %v", err)
			}
			if p := getProps(t, tc, "p'1", "r2"); p["X"] != "1" || p["Y"] != "2" {
				t.Errorf("after insert-or-merge: %v", p)
			}
			if _, err := tc.UpsertEntity(ctx, more, &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace}); err != nil {
				t.Fatalf("insert-or-replace: %v", err)
			}
			if p := getProps(t, tc, "p'1", "r2"); p["X"] != nil || p["Y"] != "2" {
				t.Errorf("after insert-or-replace: %v", p)
			}
			// Merge with If-Match * of a missing entity is 404.
			missing, _ := json.Marshal(map[string]any{"PartitionKey": "p'1", "RowKey": "none"})
			if _, err := tc.UpdateEntity(ctx, missing, &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeMerge}); code(err) != "ResourceNotFound" {
				t.Fatalf("merge of a missing entity: %v, want ResourceNotFound", err)
			}
			// Delete with a stale ETag, then with the current one.
			cur, err := tc.GetEntity(ctx, "p'1", "r2", nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tc.DeleteEntity(ctx, "p'1", "r2", &aztables.DeleteEntityOptions{IfMatch: &add.ETag}); code(err) != "UpdateConditionNotSatisfied" {
				t.Fatalf("delete with a stale ETag: %v", err)
			}
			if _, err := tc.DeleteEntity(ctx, "p'1", "r2", &aztables.DeleteEntityOptions{IfMatch: &cur.ETag}); err != nil {
				t.Fatalf("delete: %v", err)
			}
			if _, err := tc.GetEntity(ctx, "p'1", "r2", nil); code(err) != "ResourceNotFound" || status(err) != http.StatusNotFound {
				t.Fatalf("get after delete: %v", err)
			}
			if _, err := tc.DeleteEntity(ctx, "p'1", "r2", nil); code(err) != "ResourceNotFound" {
				t.Fatalf("delete of a missing entity: %v", err)
			}
			// Which methods went out: MERGE as the style says.
			wantMerge := "PATCH"
			if st == hostStyle {
				wantMerge = "POST+MERGE"
			}
			if !slices.Contains(seen, wantMerge) {
				t.Errorf("the client sent %v; want a %s among them", seen, wantMerge)
			}
		})
	}
}

func getProps(t *testing.T, tc *aztables.Client, pk, rk string) map[string]any {
	t.Helper()
	got, err := tc.GetEntity(context.Background(), pk, rk, nil)
	if err != nil {
		t.Fatalf("get %s/%s: %v", pk, rk, err)
	}
	var m map[string]any
	if err := json.Unmarshal(got.Value, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestTables creates, lists (with paging and a filter) and deletes
// tables.
func TestTables(t *testing.T) {
	s := startServer(t, server.Options{})
	ctx := context.Background()
	svc := service(t, s, pathStyle, emulatorKey)
	var names []string
	for i := range 5 {
		n := fmt.Sprintf("tbl%d", i)
		names = append(names, n)
		if _, err := svc.CreateTable(ctx, n, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := svc.CreateTable(ctx, "tbl0", nil); code(err) != "TableAlreadyExists" || status(err) != http.StatusConflict {
		t.Fatalf("second create: %v, want 409 TableAlreadyExists", err)
	}
	for _, bad := range []struct{ name, code string }{{"ab", "OutOfRangeInput"}, {"1abc", "InvalidResourceName"}, {"a-bc", "InvalidResourceName"}} {
		if _, err := svc.CreateTable(ctx, bad.name, nil); code(err) != bad.code || status(err) != http.StatusBadRequest {
			t.Errorf("create %q: %v, want 400 %s", bad.name, err, bad.code)
		}
	}
	pager := svc.NewListTablesPager(&aztables.ListTablesOptions{Top: to.Ptr(int32(2))})
	var got []string
	pages := 0
	for pager.More() {
		p, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if len(p.Tables) > 2 {
			t.Errorf("a page of $top=2 has %d tables", len(p.Tables))
		}
		for _, tb := range p.Tables {
			got = append(got, *tb.Name)
		}
	}
	if !slices.Equal(got, names) || pages != 3 {
		t.Errorf("listed %v in %d pages, want %v in 3", got, pages, names)
	}
	if _, err := svc.DeleteTable(ctx, "tbl3", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.DeleteTable(ctx, "tbl3", nil); status(err) != http.StatusNotFound {
		t.Fatalf("second delete: %v, want 404", err)
	}
	// Writing to a missing table.
	body, _ := json.Marshal(map[string]any{"PartitionKey": "a", "RowKey": "b"})
	if _, err := svc.NewClient("tbl3").AddEntity(ctx, body, nil); code(err) != "TableNotFound" {
		t.Fatalf("insert into a deleted table: %v, want TableNotFound", err)
	}
	var re *azcore.ResponseError
	_ = re
}
