package logstore

import (
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// TestPurge: a busy group that truncates behind itself and a slow group
// that never truncates its few entries. Purge rewrites the slow group's
// log so that old segments can go, the segment count stays bounded, and
// the slow group's entries survive the rewrite and a reopen. A slow group
// whose log is over RewriteBytes keeps its segments instead.
func TestPurge(t *testing.T) {
	for _, bigSlow := range []bool{false, true} {
		t.Run(fmt.Sprint("bigSlow=", bigSlow), func(t *testing.T) {
			fs := vfs.NewMem()
			opts := Options{SegmentBytes: 4 << 10, KeepSegments: 2, RewriteBytes: 2 << 10}
			s := open(t, fs, opts)
			slowN := 3
			if bigSlow {
				slowN = 40
			}
			var slow []*raftpb.Entry
			for i := range uint64(slowN) {
				slow = append(slow, ent(i+1, 1, fmt.Sprintf("slow %d %0100d", i, 0)))
			}
			b := s.NewBatch()
			b.Append(1, slow)
			commit(t, s, b, true)
			maxSegs := 0
			for i := range uint64(600) {
				b := s.NewBatch()
				b.Append(2, []*raftpb.Entry{ent(i+1, 1, fmt.Sprintf("busy %d %0100d", i, 0))})
				if i > 4 {
					b.Truncate(2, i-4)
				}
				commit(t, s, b, true)
				if err := s.Purge(); err != nil {
					t.Fatal(err)
				}
				maxSegs = max(maxSegs, s.Stats().Segments)
			}
			st := s.Stats()
			if bigSlow {
				if st.RewrittenEntries != 0 || st.Segments < 10 {
					t.Fatalf("a log over RewriteBytes was rewritten or stopped pinning: %+v", st)
				}
			} else {
				if st.RewrittenEntries == 0 || st.SegmentsDeleted == 0 || maxSegs > opts.KeepSegments+3 {
					t.Fatalf("old segments were not freed: max %d segments, %+v", maxSegs, st)
				}
				if n := st.RewrittenEntries / uint64(slowN); n > uint64(st.SegmentsDeleted) {
					t.Fatalf("the slow log was rewritten %d times for %d deleted segments", n, st.SegmentsDeleted)
				}
			}
			_ = s.Close()
			s = open(t, fs, opts)
			defer s.Close()
			got, err := s.Entries(1, 1, uint64(slowN)+1, 1<<30)
			if err != nil || len(got) != slowN {
				t.Fatalf("slow group after reopen: %d entries, %v", len(got), err)
			}
			for i := range got {
				if !proto.Equal(got[i], slow[i]) {
					t.Fatalf("slow entry %d: %v", i+1, got[i])
				}
			}
			if first, last := s.Range(2); last != 600 || first > 596 {
				t.Fatalf("busy group after reopen: [%d, %d]", first, last)
			}
		})
	}
}

// TestUndoReset: a round that reset a group's log (a snapshot applied) and
// appended after it reached the log store, but, as far as the caller's
// own state shows, never committed. UndoReset brings the old log back,
// durably.
func TestUndoReset(t *testing.T) {
	fs := vfs.NewMem()
	s := open(t, fs, Options{})
	var old []*raftpb.Entry
	for i := range uint64(5) {
		old = append(old, ent(i+1, 1, fmt.Sprint("old ", i)))
	}
	b := s.NewBatch()
	b.Append(4, old)
	b.Append(5, []*raftpb.Entry{ent(1, 1, "other")})
	commit(t, s, b, true)
	b = s.NewBatch()
	b.Reset(4, 20)
	b.Append(4, []*raftpb.Entry{ent(21, 3, "new")})
	b.Reset(5, 30)
	commit(t, s, b, true)
	b = s.NewBatch()
	b.Append(5, []*raftpb.Entry{ent(31, 3, "later")})
	commit(t, s, b, true)
	if ok, _, _ := s.CanUndoReset(4); ok {
		t.Fatal("a reset is undoable in the running store")
	}
	_ = s.Close()

	s = open(t, fs, Options{})
	if ok, first, last := s.CanUndoReset(4); !ok || first != 1 || last != 5 {
		t.Fatalf("CanUndoReset(4) = %v, %d, %d", ok, first, last)
	}
	if ok, _, _ := s.CanUndoReset(5); ok {
		t.Fatal("a reset followed by a later round is undoable")
	}
	if first, last := s.Range(4); first != 21 || last != 21 {
		t.Fatalf("before the undo: [%d, %d]", first, last)
	}
	if err := s.UndoReset(4); err != nil {
		t.Fatal(err)
	}
	if err := s.UndoReset(5); err == nil {
		t.Fatal("UndoReset of a group without one succeeded")
	}
	check := func(s *Store) {
		t.Helper()
		if first, last := s.Range(4); first != 1 || last != 5 {
			t.Fatalf("after the undo: [%d, %d]", first, last)
		}
		got, err := s.Entries(4, 1, 6, 1<<20)
		if err != nil || len(got) != 5 || !proto.Equal(got[4], old[4]) {
			t.Fatalf("after the undo: %v, %v", got, err)
		}
	}
	check(s)
	_ = s.Close()
	s = open(t, fs, Options{})
	defer s.Close()
	check(s)
	if ok, _, _ := s.CanUndoReset(4); ok {
		t.Fatal("the undone reset is undoable again")
	}
}

// TestCacheBudget: the cache stays within its budget and reads outside it
// come from the files.
func TestCacheBudget(t *testing.T) {
	s := open(t, vfs.NewMem(), Options{CacheBytes: 8 << 10})
	defer s.Close()
	for i := range uint64(500) {
		b := s.NewBatch()
		b.Append(1+i%3, []*raftpb.Entry{ent(i/3+1, 1, fmt.Sprintf("%0200d", i))})
		commit(t, s, b, false)
		if c := s.Stats().CacheBytes; c > 8<<10 {
			t.Fatalf("cache at %d bytes", c)
		}
	}
	before := s.Stats()
	got, err := s.Entries(2, 1, 167, 1<<30)
	if err != nil || len(got) != 166 {
		t.Fatalf("%d entries, %v", len(got), err)
	}
	after := s.Stats()
	if after.CacheMisses == before.CacheMisses || after.CacheHits == before.CacheHits {
		t.Fatalf("reads did not use both the cache and the files: %+v then %+v", before, after)
	}
}

// TestHardState: the last hard state recorded survives a reopen and a
// rewrite by Purge, and UndoReset restores the one from before the reset.
func TestHardState(t *testing.T) {
	fs := vfs.NewMem()
	opts := Options{SegmentBytes: 1 << 10, KeepSegments: 1}
	s := open(t, fs, opts)
	b := s.NewBatch()
	b.Append(1, []*raftpb.Entry{ent(1, 1, "a")})
	b.SetHardState(1, []byte("hs1"))
	commit(t, s, b, true)
	// Fill segments with another group so that group 1's are rewritten.
	for i := range uint64(60) {
		b := s.NewBatch()
		b.Append(2, []*raftpb.Entry{ent(i+1, 1, fmt.Sprintf("%0100d", i))})
		b.Truncate(2, i)
		commit(t, s, b, true)
		if err := s.Purge(); err != nil {
			t.Fatal(err)
		}
	}
	if st := s.Stats(); st.RewrittenEntries == 0 || st.SegmentsDeleted == 0 {
		t.Fatalf("group 1 was not rewritten: %+v", st)
	}
	_ = s.Close()
	s = open(t, fs, opts)
	if got := string(s.HardState(1)); got != "hs1" {
		t.Fatalf("hard state after its segment was deleted: %q", got)
	}
	b = s.NewBatch()
	b.SetHardState(1, []byte("hs2"))
	commit(t, s, b, true)
	_ = s.Close()
	s = open(t, fs, opts)
	if got := string(s.HardState(1)); got != "hs2" {
		t.Fatalf("hard state after reopen: %q", got)
	}
	b = s.NewBatch()
	b.Reset(1, 10)
	b.SetHardState(1, []byte("hs3"))
	commit(t, s, b, true)
	_ = s.Close()
	s = open(t, fs, opts)
	defer s.Close()
	if got := string(s.HardState(1)); got != "hs3" {
		t.Fatalf("hard state after the reset: %q", got)
	}
	if err := s.UndoReset(1); err != nil {
		t.Fatal(err)
	}
	if got := string(s.HardState(1)); got != "hs2" {
		t.Fatalf("hard state after the undo: %q", got)
	}
	if first, last := s.Range(1); first != 1 || last != 1 {
		t.Fatalf("log after the undo: [%d, %d]", first, last)
	}
}
