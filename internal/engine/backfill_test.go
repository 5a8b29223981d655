package engine

import (
	"fmt"
	"testing"

	"github.com/parsecdb/parsec/internal/storage"
)

// A store whose items have no change-index or resource-id entries (written
// by a version before those indexes) gets them at the next open: the
// items are then found by rid and read by the change feed.
func TestBackfillItemIndexes(t *testing.T) {
	dir := t.TempDir()
	e, st := testEngine(t, dir)
	c := mustContainer(t, e, 1000)
	const n = 50
	for i := range n {
		put(t, c, fmt.Sprintf("k%d", i%7), fmt.Sprintf(`{"id":"%d","pk":"k%d"}`, i, i%7))
	}
	rids := map[string]string{}
	for i := range n {
		op, err := c.PrepareKeyed(OpRead, fmt.Sprint(i), key(fmt.Sprintf("k%d", i%7)), true)
		if err != nil {
			t.Fatal(err)
		}
		r, _, err := c.ReadItem(op)
		if err != nil {
			t.Fatal(err)
		}
		rids[ridOf(r.Doc)] = fmt.Sprint(i)
	}
	rid := c.rid
	e.Close()
	// Make it an old store: no index entries, no record.
	b := st.NewBatch()
	for _, span := range [][2][]byte{spanOf(storage.ContainerChangesSpan(rid)), spanOf(storage.ContainerRidsSpan(rid))} {
		if err := b.DeleteRange(span[0], span[1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Delete(storage.ItemIndexesKey()); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	st.Close()

	e, _ = testEngine(t, dir)
	defer e.Close()
	c, err := e.Container("db", "c")
	if err != nil {
		t.Fatal(err)
	}
	for r, id := range rids {
		got, err := c.ItemIDByRid(r)
		if err != nil || got != id {
			t.Fatalf("ItemIDByRid(%s) = %q, %v; want %q", r, got, err, id)
		}
	}
	seen := 0
	for _, p := range c.Partitions() {
		pg, err := c.ChangeFeed(ChangeFeedScope{RangeID: p.ID()}, ChangeFeedStart{}, 1000)
		if err != nil {
			t.Fatal(err)
		}
		seen += len(pg.Docs)
	}
	if seen != n {
		t.Fatalf("the change feed from the beginning has %d items after the backfill, want %d", seen, n)
	}
}
