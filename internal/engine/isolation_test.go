package engine

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/parsecdb/parsec/internal/storage"
)

// TestGroupCommitIsolatesFailedCommand puts commands that fail inside apply
// (a replace of an item whose stored value is corrupt, documents that slipped
// past the validation at the edge, such as a number beyond float64, and a
// panic) in one group with honest writes: the failing commands get their own
// errors and the honest ones commit, durably.
func TestGroupCommitIsolatesFailedCommand(t *testing.T) {
	dir := t.TempDir()
	e, st := testEngine(t, dir)
	c := mustContainer(t, e, 400)

	// An item whose stored value is then corrupted behind the engine's back.
	op, err := c.PrepareWrite(OpCreate, []byte(`{"id":"bad","pk":"a"}`), key("a"), true)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Execute(&Command{Ops: []Op{op}}, ""); err != nil {
		t.Fatal(err)
	}
	b := st.NewBatch()
	if err := b.Set(storage.ItemKey(nil, c.rid, op.EPK, "bad"), []byte{0xff, 1, 2}); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}

	p := c.PartitionFor(op.EPK)
	lsn := p.LSN()
	cmd := func(atomic bool, ops ...Op) *request {
		return &request{cmd: &Command{Ops: ops, Atomic: atomic, Ts: 1}, done: make(chan struct{})}
	}
	write := func(kind OpKind, body string) Op {
		t.Helper()
		op, err := c.PrepareWrite(kind, []byte(body), key("a"), true)
		if err != nil {
			t.Fatal(err)
		}
		return op
	}
	// unreadable is a document the edge refuses, built here without that
	// validation: reaching apply, it is a bug, and fails its command alone.
	unreadable := func(id string) Op {
		return Op{Kind: OpUpsert, ID: id, Key: key("a"), EPK: op.EPK, Body: []byte(`{"id":"` + id + `","pk":"a","x":1e400}`)}
	}
	var group, honest []*request
	for i := 0; i < 16; i++ {
		r := cmd(false, write(OpCreate, fmt.Sprintf(`{"id":"h%d","pk":"a","v":%d}`, i, i)))
		group, honest = append(group, r), append(honest, r)
		switch i {
		case 3:
			group = append(group, cmd(false, write(OpReplace, `{"id":"bad","pk":"a","v":1}`)))
		case 7:
			group = append(group, cmd(false, unreadable("u1")))
		case 11:
			// A non-atomic batch with such a document fails as a whole.
			group = append(group, cmd(false, write(OpCreate, `{"id":"nb","pk":"a"}`), unreadable("u2")))
		case 13:
			// An atomic batch with a bad operation writes nothing.
			group = append(group, cmd(true, write(OpCreate, `{"id":"ab","pk":"a"}`), unreadable("u3")))
		case 14:
			// A command that panics in apply (an operation of no known
			// kind, which no caller prepares, stands for a bug).
			op, err := c.PrepareKeyed(OpPatch, "h0", key("a"), true)
			if err != nil {
				t.Fatal(err)
			}
			op.Kind = 99
			group = append(group, cmd(false, op))
		}
	}
	p.commitGroup(group)

	for _, r := range honest {
		if r.err != nil || !r.res[0].Created {
			t.Fatalf("honest command %s: err %v, result %+v", r.cmd.Ops[0].ID, r.err, r.res)
		}
	}
	if r := group[4]; !errors.Is(r.err, ErrCorrupt) || !strings.Contains(r.err.Error(), `item "bad"`) {
		t.Fatalf("replace of a corrupt item: err %v, want its own ErrCorrupt naming the item", r.err)
	}
	for _, i := range []int{9, 14, 17} {
		if r := group[i]; !errors.Is(r.err, ErrInternal) || !strings.Contains(r.err.Error(), "BUG") {
			t.Fatalf("command %d with an unvalidated document: err %v, result %+v, want its own ErrInternal from a BUG panic", i, r.err, r.res)
		}
	}
	if r := group[19]; !errors.Is(r.err, ErrInternal) || !strings.Contains(r.err.Error(), "a command panicked in apply") {
		t.Fatalf("a command that panics: err %v, want its own ErrInternal", r.err)
	}
	// Every command took one LSN but the five that failed with an error
	// (failed operations take theirs, as before).
	if got, want := p.LSN(), lsn+uint64(len(group))-5; got != want {
		t.Fatalf("LSN %d, want %d", got, want)
	}

	// Durable: restart from disk and read everything back.
	e.Close()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	e, st = testEngine(t, dir)
	defer func() { e.Close(); st.Close() }()
	if c, err = e.Container("db", "c"); err != nil {
		t.Fatal(err)
	}
	read := func(id string) string {
		op, _ := c.PrepareKeyed(OpRead, id, key("a"), true)
		r, _, err := c.ReadItem(op)
		if err != nil && !errors.Is(err, ErrNotFound) {
			t.Fatalf("read %s: %v", id, err)
		}
		return outcome(OpRead, r)
	}
	for i := 0; i < 16; i++ {
		if s := read(fmt.Sprintf("h%d", i)); s != "ok" {
			t.Fatalf("h%d: %s after restart", i, s)
		}
	}
	for id, want := range map[string]string{"nb": "not found", "ab": "not found", "u1": "not found", "u2": "not found", "u3": "not found"} {
		if s := read(id); s != want {
			t.Fatalf("%s: %s after restart, want %s", id, s, want)
		}
	}
	var items int64
	for _, p := range c.Partitions() {
		items += p.state.Items
	}
	if items != 17 { // bad, h0..h15
		t.Fatalf("partition state counts %d items, want 17", items)
	}
}
