package engine

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestLocalLogIndexes checks that a single node's writes go through its
// partitions' local log: each group of commands is one entry, applied
// through the partition's replica with the next index, which is durable
// with the data (it survives a reopen) and goes on from there.
func TestLocalLogIndexes(t *testing.T) {
	dir := t.TempDir()
	e, st := testEngine(t, dir)
	c := mustContainer(t, e, 400)
	p := c.Partitions()[0]
	write := func(from, n int) {
		for i := from; i < from+n; i++ {
			op, err := c.PrepareWrite(OpCreate, []byte(fmt.Sprintf(`{"id":"i%d","pk":"a"}`, i)), key("a"), true)
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := c.Execute(&Command{Ops: []Op{op}}, ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(0, 10)
	idx, err := p.AppliedIndex()
	if err != nil || idx != 10 || p.Replica().Applied() != 10 || p.LSN() != 10 {
		t.Fatalf("after 10 writes one at a time: applied index %d (%v), replica %d, LSN %d; want 10", idx, err, p.Replica().Applied(), p.LSN())
	}
	e.Close()
	st.Close()
	e, st = testEngine(t, dir)
	defer st.Close()
	defer e.Close()
	c, err = e.Container("db", "c")
	if err != nil {
		t.Fatal(err)
	}
	p = c.Partitions()[0]
	if idx, err := p.AppliedIndex(); err != nil || idx != 10 || p.LSN() != 10 {
		t.Fatalf("reopened: applied index %d (%v), LSN %d; want 10", idx, err, p.LSN())
	}
	write(10, 1)
	if idx, _ := p.AppliedIndex(); idx != 11 || p.LSN() != 11 {
		t.Fatalf("a write after the reopen: applied index %d, LSN %d; want 11", idx, p.LSN())
	}
}

// TestLocalCatalogLog checks that a single node's catalog changes go
// through the catalog's local log, one entry each, applied through the
// catalog's replica, with an index that is durable with them and goes on
// after a reopen; a change that fails (a conflict) takes no index.
func TestLocalCatalogLog(t *testing.T) {
	dir := t.TempDir()
	e, st := testEngine(t, dir)
	mustContainer(t, e, 400) // a database and a container: two entries
	if got := e.CatalogApplied(); got != 2 || e.CatalogReplica().Applied() != 2 {
		t.Fatalf("after two catalog changes the catalog's log is at %d (replica %d), want 2", got, e.CatalogReplica().Applied())
	}
	if _, err := e.CreateDatabase("db", Throughput{}); err == nil {
		t.Fatal("a second database db was created")
	}
	if got := e.CatalogApplied(); got != 2 {
		t.Fatalf("a refused change moved the catalog's log to %d", got)
	}
	e.Close()
	st.Close()
	e, st = testEngine(t, dir)
	defer st.Close()
	defer e.Close()
	if got := e.CatalogApplied(); got != 2 {
		t.Fatalf("reopened, the catalog's log is at %d, want 2", got)
	}
	if err := e.DeleteContainer("db", "c"); err != nil {
		t.Fatal(err)
	}
	if got := e.CatalogApplied(); got != 3 {
		t.Fatalf("after a deletion the catalog's log is at %d, want 3", got)
	}
	if _, err := e.Container("db", "c"); err == nil {
		t.Fatal("the deleted container is still there")
	}
}

// TestLocalDeletionLeavesNothing deletes a container while writers keep
// writing to it: the deletion commits before the partitions' loops stop,
// so entries of theirs are applied after it, and each must see that its
// partition is gone and write nothing (goneIn), as on a raft replica.
// No key of the container may remain.
func TestLocalDeletionLeavesNothing(t *testing.T) {
	for round := range 3 {
		e, st := testEngine(t, "")
		c := mustContainer(t, e, 4000)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					pk := fmt.Sprint("k", w, "-", i%50)
					op, err := c.PrepareWrite(OpUpsert, []byte(fmt.Sprintf(`{"id":"i%d","pk":%q}`, i, pk)), key(pk), true)
					if err != nil {
						t.Error(err)
						return
					}
					if _, _, err := c.Execute(&Command{Ops: []Op{op}}, ""); err != nil && !errors.Is(err, ErrNotFound) {
						t.Errorf("a write racing the deletion: %v", err)
						return
					}
				}
			}()
		}
		time.Sleep(time.Duration(20+10*round) * time.Millisecond)
		if err := e.DeleteContainer("db", "c"); err != nil {
			t.Fatal(err)
		}
		close(stop)
		wg.Wait()
		if left := containerState(t, st, c.rid); len(left) > 0 {
			for k := range left {
				t.Fatalf("round %d: %d keys of the deleted container remain, such as %q", round, len(left), k)
			}
		}
		e.Close()
		st.Close()
	}
}
