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
