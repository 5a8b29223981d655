package engine

import (
	"errors"
	"fmt"
	"testing"
)

// TestPartitionSnapshot: a partition's snapshot holds exactly the commands
// applied up to its LSN, while the partition applies more; a split
// partition has none, and its children start at the split's LSN with its
// items.
func TestPartitionSnapshot(t *testing.T) {
	e, st := testEngine(t, "")
	defer st.Close()
	defer e.Close()
	c := mustContainer(t, e, 400)
	p := c.Partitions()[0]
	items := func(s *PartitionSnapshot) int {
		n := 0
		lo, hi := s.ItemSpan()
		if err := s.Iterate(lo, hi, func(_, _ []byte) (bool, error) { n++; return true, nil }); err != nil {
			t.Fatal(err)
		}
		return n
	}
	s0, err := p.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer s0.Close()
	for i := range 10 {
		if _, err := write(t, c, fmt.Sprint("k", i), fmt.Sprint(i), 10); err != nil {
			t.Fatal(err)
		}
	}
	s1, err := p.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer s1.Close()
	for i := 10; i < 15; i++ {
		if _, err := write(t, c, fmt.Sprint("k", i), fmt.Sprint(i), 10); err != nil {
			t.Fatal(err)
		}
	}
	if s0.LSN != 0 || items(s0) != 0 {
		t.Fatalf("snapshot before any write: LSN %d, %d items", s0.LSN, items(s0))
	}
	if s1.LSN != 10 || items(s1) != 10 || s1.Session() != (Session{RangeID: p.ID(), LSN: 10}) {
		t.Fatalf("snapshot after 10 writes: LSN %d, %d items, session %+v", s1.LSN, items(s1), s1.Session())
	}
	children, err := c.splitForStorage(p)
	if err != nil || len(children) != 2 {
		t.Fatalf("split: %v, %v", children, err)
	}
	if _, err := p.Snapshot(); !errors.Is(err, ErrPartitionGone) {
		t.Fatalf("snapshot of a split partition: %v, want ErrPartitionGone", err)
	}
	total := 0
	for _, q := range c.Partitions() {
		s, err := q.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		if s.LSN != 16 {
			t.Fatalf("child %s starts at LSN %d, want 16, the LSN of the split after its parent's 15 writes", q.ID(), s.LSN)
		}
		total += items(s)
		s.Close()
	}
	if total != 15 {
		t.Fatalf("the children hold %d items, want 15", total)
	}
}

// TestPartitionSequenceNumbers: every item version gets its resource id
// and etag from its partition's own sequence, which survives restarts and
// splits: no two items of a container share a resource id, and no two
// versions an etag.
func TestPartitionSequenceNumbers(t *testing.T) {
	dir := t.TempDir()
	e, st := testEngine(t, dir)
	c := mustContainer(t, e, 400)
	rids, etags := map[string]string{}, map[string]bool{}
	write := func(round int) {
		for i := range 60 {
			pk, id := fmt.Sprint("k", i%9), fmt.Sprint(i)
			op, err := c.PrepareWrite(OpUpsert, fmt.Appendf(nil, `{"id":%q,"pk":%q,"r":%d}`, id, pk, round), key(pk), true)
			if err != nil {
				t.Fatal(err)
			}
			res, _, err := c.Execute(&Command{Ops: []Op{op}}, "")
			if err != nil || res[0].Err != nil {
				t.Fatalf("write: %v %v", err, res)
			}
			rid := ridOf(res[0].Doc)
			if prev, ok := rids[rid]; ok && prev != pk+"/"+id {
				t.Fatalf("items %s and %s/%s share the resource id %s", prev, pk, id, rid)
			}
			rids[rid] = pk + "/" + id
			if etags[res[0].Etag] {
				t.Fatalf("the etag %s was given twice", res[0].Etag)
			}
			etags[res[0].Etag] = true
		}
	}
	write(0)
	if _, err := c.splitForStorage(c.Partitions()[0]); err != nil {
		t.Fatal(err)
	}
	write(1)
	e.Close()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	e, st = testEngine(t, dir)
	defer func() { e.Close(); st.Close() }()
	var err error
	if c, err = e.Container("db", "c"); err != nil {
		t.Fatal(err)
	}
	write(2)
	if len(rids) != 60 || len(etags) != 180 {
		t.Fatalf("%d resource ids for 60 items, %d etags for 180 versions", len(rids), len(etags))
	}

	// The limits of the numbering.
	s := partState{Seqs: 1<<seqCountBits - 1}
	if first, err := s.takeSeqs("3", 1); err != nil || first != 1<<63|3<<seqCountBits|(1<<seqCountBits-1) {
		t.Fatalf("the last number of range 3: %x, %v", first, err)
	}
	if _, err := s.takeSeqs("3", 1); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("past the last number: %v, want ErrUnavailable", err)
	}
	for _, id := range []string{"x", "-1", fmt.Sprint(seqRangeLimit)} {
		if _, err := (&partState{}).takeSeqs(id, 1); !errors.Is(err, ErrInternal) {
			t.Fatalf("range id %q: %v, want ErrInternal", id, err)
		}
	}
}
