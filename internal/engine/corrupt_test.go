package engine

import (
	"errors"
	"strings"
	"testing"

	"github.com/parsecdb/parsec/internal/storage"
)

// TestCorruptStoredDataIsErrCorrupt damages stored records behind the
// engine's back: a point read, a read feed and a query of a damaged item, and
// an open over a damaged partition state, fail with ErrCorrupt naming what is
// damaged, never with ErrUnavailable (a 503 that clients retry).
func TestCorruptStoredDataIsErrCorrupt(t *testing.T) {
	dir := t.TempDir()
	e, st := testEngine(t, dir)
	c := mustContainer(t, e, 400)
	mustWrite(t, c, `{"id":"1","pk":"k"}`)
	op, err := c.PrepareKeyed(OpRead, "1", key("k"), true)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Set(storage.ItemKey(nil, c.rid, op.EPK, "1"), []byte{itemFormat}); err != nil {
		t.Fatal(err)
	}
	check := func(what string, err error, says string) {
		t.Helper()
		if !errors.Is(err, ErrCorrupt) || errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), says) {
			t.Errorf("%s: %v; want ErrCorrupt saying %s", what, err, says)
		}
	}
	const item = `stored data is damaged: item "1" (effective partition key `
	_, _, err = c.ReadItem(op)
	check("read", err, item)
	_, err = c.ReadFeed("", nil, 10)
	check("read feed", err, item)
	_, err = c.Query(compileQuery(t, "SELECT * FROM c"), QueryScope{}, nil, 10)
	check("query", err, item)

	rid := c.rid
	e.Close()
	if err := st.Set(storage.PartitionKey(rid, "0"), []byte{0x80}); err != nil {
		t.Fatal(err)
	}
	_, err = Open(st, Options{PartitionMaxRUs: 1000, NoThrottle: true})
	check("open", err, "the state record of partition key range 0 (80) has no valid LSN")
	st.Close()
}
