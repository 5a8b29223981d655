package raftlog

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/parsecdb/parsec/internal/replication/logstore"
	"github.com/parsecdb/parsec/internal/storage"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

func openDB(t testing.TB, fs vfs.FS) *storage.DB {
	t.Helper()
	db, err := storage.Open(storage.Options{Dir: "/raft", FS: fs, Reserve: -1, CacheBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// bothModes runs a test with the entries in the DB and in a log store.
func bothModes(t *testing.T, test func(t *testing.T, files bool)) {
	t.Run("db", func(t *testing.T) { test(t, false) })
	t.Run("files", func(t *testing.T) { test(t, true) })
}

// openStore opens the raft store over db, with a log store on fs (small
// segments, so that rounds seal and purge them) if files is set.
func openStore(t testing.TB, db *storage.DB, fs vfs.FS, files bool) *Store {
	t.Helper()
	if !files {
		return OpenInDB(db)
	}
	ls, err := logstore.Open(logstore.Options{FS: fs, Dir: "/raftlog", SegmentBytes: 2048, KeepSegments: 2, CacheBytes: 2048})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ls.Close() })
	return OpenWith(db, Options{Log: ls})
}

func closeStore(t testing.TB, s *Store) {
	t.Helper()
	if s.Log() != nil {
		if err := s.Log().Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func ent(index, term uint64, data string) *raftpb.Entry {
	return &raftpb.Entry{Index: &index, Term: &term, Data: []byte(data)}
}

// model is one group checked against MemoryStorage.
type model struct {
	id   uint64
	ms   *raft.MemoryStorage
	term uint64
	// commit is the last hard state's commit index: as in raft, entries
	// up to it are never replaced.
	commit uint64
}

func msBounds(t *testing.T, ms *raft.MemoryStorage) (first, last uint64) {
	t.Helper()
	first, _ = ms.FirstIndex()
	last, _ = ms.LastIndex()
	return first, last
}

// sameErr reports whether two errors are both nil or wrap the same raft
// sentinel.
func sameErr(a, b error) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	for _, s := range []error{raft.ErrCompacted, raft.ErrUnavailable, raft.ErrSnapOutOfDate} {
		if errors.Is(a, s) != errors.Is(b, s) {
			return false
		}
	}
	return true
}

// compare checks every read of the raft.Storage interface on l against ms.
func compare(t *testing.T, rng *rand.Rand, ms *raft.MemoryStorage, l *Log) {
	t.Helper()
	first, last := msBounds(t, ms)
	gf, _ := l.FirstIndex()
	gl, _ := l.LastIndex()
	if gf != first || gl != last {
		t.Fatalf("group %d: bounds [%d, %d], want [%d, %d]", l.group, gf, gl, first, last)
	}
	for i := first - min(first, 2); i <= last+1; i++ {
		wt, werr := ms.Term(i)
		gt, gerr := l.Term(i)
		if wt != gt || !sameErr(werr, gerr) {
			t.Fatalf("group %d: Term(%d) = %d, %v; want %d, %v", l.group, i, gt, gerr, wt, werr)
		}
	}
	for range 8 {
		lo := first - 1 + rng.Uint64N(last-first+2)
		hi := lo + rng.Uint64N(last+2-lo)
		if hi < lo {
			hi = lo
		}
		maxSize := rng.Uint64N(200)
		if rng.IntN(3) == 0 {
			maxSize = 1 << 40
		}
		want, werr := ms.Entries(lo, hi, maxSize)
		got, gerr := l.Entries(lo, hi, maxSize)
		if !sameErr(werr, gerr) || len(want) != len(got) {
			t.Fatalf("group %d: Entries(%d, %d, %d) = %d entries, %v; want %d, %v", l.group, lo, hi, maxSize, len(got), gerr, len(want), werr)
		}
		for i := range want {
			if !proto.Equal(want[i], got[i]) {
				t.Fatalf("group %d: Entries(%d, %d): entry %d = %v, want %v", l.group, lo, hi, i, got[i], want[i])
			}
		}
	}
	ws, _ := ms.Snapshot()
	gs, _ := l.Snapshot()
	if !proto.Equal(raftpb.EnsureSnapshot(ws), gs) {
		t.Fatalf("group %d: Snapshot = %v, want %v", l.group, gs, ws)
	}
	whs, wcs, _ := ms.InitialState()
	ghs, gcs, err := l.InitialState()
	if err != nil {
		t.Fatal(err)
	}
	if whs.GetTerm() != ghs.GetTerm() || whs.GetVote() != ghs.GetVote() || whs.GetCommit() != ghs.GetCommit() {
		t.Fatalf("group %d: hard state %v, want %v", l.group, ghs, whs)
	}
	if !proto.Equal(raftpb.EnsureConfState(wcs), raftpb.EnsureConfState(gcs)) {
		t.Fatalf("group %d: conf state %v, want %v", l.group, gcs, wcs)
	}
}

// step applies one random operation to both m.ms and the group's log (in
// batch b).
func step(t *testing.T, rng *rand.Rand, m *model, l *Log, b *Batch) string {
	t.Helper()
	first, last := msBounds(t, m.ms)
	switch op := rng.IntN(10); {
	case op < 5: // append, possibly overwriting a suffix
		start := first + rng.Uint64N(last-first+2)
		if start > first && rng.IntN(2) == 0 {
			start = first - 1 + rng.Uint64N(2) // sometimes overlap the compacted prefix
			if start == 0 {
				start = 1
			}
		}
		if start > last+1 {
			start = last + 1
		}
		start = max(start, m.commit+1)
		m.term += rng.Uint64N(2)
		n := 1 + rng.IntN(6)
		ents := make([]*raftpb.Entry, n)
		for i := range ents {
			ents[i] = ent(start+uint64(i), m.term, fmt.Sprintf("g%d-%d-%d", m.id, start+uint64(i), rng.IntN(1000)))
		}
		if err := m.ms.Append(ents); err != nil {
			t.Fatal(err)
		}
		if err := l.Append(b, ents); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("append %d..%d term %d", start, start+uint64(n)-1, m.term)
	case op < 6: // compact, sometimes an already compacted index
		if last < first {
			return "noop"
		}
		upTo := first - 1 + rng.Uint64N(last-first+2)
		werr := m.ms.Compact(upTo)
		gerr := l.Truncate(b, upTo)
		if !sameErr(werr, gerr) {
			t.Fatalf("truncate %d: %v, want %v", upTo, gerr, werr)
		}
		return fmt.Sprintf("truncate %d", upTo)
	case op < 7:
		m.commit = max(m.commit, rng.Uint64N(last+1))
		hs := &raftpb.HardState{Term: proto.Uint64(m.term), Vote: proto.Uint64(rng.Uint64N(4)), Commit: proto.Uint64(m.commit)}
		_ = m.ms.SetHardState(hs)
		if err := l.SetHardState(b, hs); err != nil {
			t.Fatal(err)
		}
		return "hardstate"
	case op < 9: // create a snapshot, sometimes an out of date one
		if last < first {
			return "noop"
		}
		i := first - 1 + rng.Uint64N(last-first+2)
		var cs *raftpb.ConfState
		if rng.IntN(2) == 0 {
			cs = &raftpb.ConfState{Voters: []uint64{1, 2, rng.Uint64N(5) + 3}}
		}
		data := []byte(fmt.Sprintf("state@%d", i))
		ws, werr := m.ms.CreateSnapshot(i, cs, data)
		gs, gerr := l.CreateSnapshot(b, i, cs, data)
		if !sameErr(werr, gerr) || (werr == nil && !proto.Equal(raftpb.EnsureSnapshot(ws), raftpb.EnsureSnapshot(gs))) {
			t.Fatalf("create snapshot %d: %v, %v; want %v, %v", i, gs, gerr, ws, werr)
		}
		return fmt.Sprintf("snapshot %d", i)
	default: // a snapshot from the leader, sometimes out of date
		idx := last + rng.Uint64N(5)
		if rng.IntN(4) == 0 {
			idx = first - 1
		}
		m.term++
		snap := &raftpb.Snapshot{Data: []byte(fmt.Sprintf("leader@%d", idx)), Metadata: &raftpb.SnapshotMetadata{
			Index: proto.Uint64(idx), Term: proto.Uint64(m.term), ConfState: &raftpb.ConfState{Voters: []uint64{1, 2, 3}, Learners: []uint64{4}}}}
		werr := m.ms.ApplySnapshot(snap)
		gerr := l.ApplySnapshot(b, snap)
		if !sameErr(werr, gerr) {
			t.Fatalf("apply snapshot %d: %v, want %v", idx, gerr, werr)
		}
		return fmt.Sprintf("apply snapshot %d", idx)
	}
}

// TestDifferential runs random appends (with conflicting suffixes),
// compactions, hard state changes and snapshots on several groups whose
// writes share batches, and checks every read against raft.MemoryStorage
// after each commit and again after the store is reopened from disk.
func TestDifferential(t *testing.T) { bothModes(t, testDifferential) }

func testDifferential(t *testing.T, files bool) {
	for seed := range uint64(12) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			fs := vfs.NewMem()
			db := openDB(t, fs)
			s := openStore(t, db, fs, files)
			models := make([]*model, 3)
			for i := range models {
				models[i] = &model{id: uint64(i+1) * 1000, ms: raft.NewMemoryStorage(), term: 1}
			}
			for round := range 120 {
				b := s.NewBatch()
				var ops []string
				for range 1 + rng.IntN(5) {
					m := models[rng.IntN(len(models))]
					l, err := s.Group(m.id)
					if err != nil {
						t.Fatal(err)
					}
					ops = append(ops, fmt.Sprintf("g%d %s", m.id, step(t, rng, m, l, b)))
				}
				if err := b.Commit(); err != nil {
					t.Fatal(err)
				}
				for _, m := range models {
					l, _ := s.Group(m.id)
					if t.Failed() {
						return
					}
					func() {
						defer func() {
							if t.Failed() {
								t.Logf("round %d ops %v", round, ops)
							}
						}()
						compare(t, rng, m.ms, l)
					}()
				}
			}
			closeStore(t, s)
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			db = openDB(t, fs)
			defer db.Close()
			s = openStore(t, db, fs, files)
			ids, err := s.Groups()
			if err != nil {
				t.Fatal(err)
			}
			if len(ids) != len(models) {
				t.Fatalf("groups after reopen: %v", ids)
			}
			for i, m := range models {
				if ids[i] != m.id {
					t.Fatalf("groups after reopen: %v", ids)
				}
				l, err := s.Group(m.id)
				if err != nil {
					t.Fatal(err)
				}
				compare(t, rng, m.ms, l)
			}
		})
	}
}

// TestBatchInvisibleUntilCommit checks that raft reads see a batch's writes
// only once it commits, and never after a discard.
func TestBatchInvisibleUntilCommit(t *testing.T) { bothModes(t, testBatchInvisibleUntilCommit) }

func testBatchInvisibleUntilCommit(t *testing.T, files bool) {
	fs := vfs.NewMem()
	db := openDB(t, fs)
	defer db.Close()
	s := openStore(t, db, fs, files)
	l, err := s.Group(9)
	if err != nil {
		t.Fatal(err)
	}
	b := s.NewBatch()
	if err := l.Append(b, []*raftpb.Entry{ent(1, 1, "a"), ent(2, 1, "b")}); err != nil {
		t.Fatal(err)
	}
	if last, _ := l.LastIndex(); last != 0 {
		t.Fatalf("uncommitted append visible: last index %d", last)
	}
	b.Discard()
	if last, _ := l.LastIndex(); last != 0 {
		t.Fatalf("discarded append visible: last index %d", last)
	}
	b = s.NewBatch()
	if err := l.Append(b, []*raftpb.Entry{ent(1, 1, "a"), ent(2, 1, "b")}); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	got, err := l.Entries(1, 3, 1<<20)
	if err != nil || len(got) != 2 || string(got[1].GetData()) != "b" {
		t.Fatalf("entries after commit: %v, %v", got, err)
	}
	if err := l.Append(b, []*raftpb.Entry{ent(3, 1, "c")}); err == nil {
		t.Fatal("append to a committed batch succeeded")
	}
}

// TestBadInput checks that misuse is an error, not a panic.
func TestBadInput(t *testing.T) { bothModes(t, testBadInput) }

func testBadInput(t *testing.T, files bool) {
	fs := vfs.NewMem()
	db := openDB(t, fs)
	defer db.Close()
	s := openStore(t, db, fs, files)
	l, _ := s.Group(1)
	b := s.NewBatch()
	defer b.Discard()
	if err := l.Append(b, []*raftpb.Entry{ent(1, 1, ""), ent(3, 1, "")}); err == nil {
		t.Error("non-consecutive entries accepted")
	}
	if err := l.Append(b, []*raftpb.Entry{ent(5, 1, "")}); err == nil {
		t.Error("append with a gap accepted")
	}
	if err := l.Truncate(b, 4); err == nil {
		t.Error("truncation beyond the log accepted")
	}
	if _, err := l.CreateSnapshot(b, 4, nil, nil); err == nil {
		t.Error("snapshot beyond the log accepted")
	}
	if _, err := l.Entries(1, 10, 100); !errors.Is(err, raft.ErrUnavailable) {
		t.Errorf("entries beyond the log: %v", err)
	}
	other := OpenInDB(db)
	if err := l.Append(other.NewBatch(), []*raftpb.Entry{ent(1, 1, "")}); err == nil {
		t.Error("batch of another store accepted")
	}
	cs := &raftpb.ConfState{Voters: []uint64{1, 2, 3}}
	if err := l.Bootstrap(b, 10, 5, cs); err != nil {
		t.Fatal(err)
	}
	if err := l.Bootstrap(b, 10, 5, cs); err == nil {
		t.Error("second bootstrap accepted")
	}
}

// TestBootstrapAndDestroy checks a bootstrapped group's initial state and
// that Destroy leaves nothing behind.
func TestBootstrapAndDestroy(t *testing.T) { bothModes(t, testBootstrapAndDestroy) }

func testBootstrapAndDestroy(t *testing.T, files bool) {
	fs := vfs.NewMem()
	db := openDB(t, fs)
	defer db.Close()
	s := openStore(t, db, fs, files)
	l, _ := s.Group(42)
	b := s.NewBatch()
	if err := l.Bootstrap(b, 10, 5, &raftpb.ConfState{Voters: []uint64{1, 2, 3}}); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	hs, cs, _ := l.InitialState()
	first, _ := l.FirstIndex()
	last, _ := l.LastIndex()
	term, _ := l.Term(10)
	if hs.GetCommit() != 10 || hs.GetTerm() != 5 || len(cs.GetVoters()) != 3 || first != 11 || last != 10 || term != 5 {
		t.Fatalf("bootstrapped: hs %v cs %v first %d last %d term %d", hs, cs, first, last, term)
	}
	b = s.NewBatch()
	if err := l.Destroy(b); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	ids, err := s.Groups()
	if err != nil || len(ids) != 0 {
		t.Fatalf("groups after destroy: %v, %v", ids, err)
	}
}

// TestManyGroupsOneBatch writes the logs of 100 groups in one batch and
// checks each group reads back only its own entries, before and after a
// reopen, and that one group's truncation and snapshot leave the others
// alone.
func TestManyGroupsOneBatch(t *testing.T) { bothModes(t, testManyGroupsOneBatch) }

func testManyGroupsOneBatch(t *testing.T, files bool) {
	fs := vfs.NewMem()
	db := openDB(t, fs)
	s := openStore(t, db, fs, files)
	b := s.NewBatch()
	const groups = 100
	for g := uint64(1); g <= groups; g++ {
		l, err := s.Group(g)
		if err != nil {
			t.Fatal(err)
		}
		var ents []*raftpb.Entry
		for i := uint64(1); i <= g%7+1; i++ {
			ents = append(ents, ent(i, g, fmt.Sprintf("%d/%d", g, i)))
		}
		if err := l.Append(b, ents); err != nil {
			t.Fatal(err)
		}
		if err := l.SetHardState(b, &raftpb.HardState{Term: proto.Uint64(g), Commit: proto.Uint64(1)}); err != nil {
			t.Fatal(err)
		}
	}
	if b.Groups() != groups {
		t.Fatalf("batch changes %d groups", b.Groups())
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	l50, _ := s.Group(50)
	b = s.NewBatch()
	if _, err := l50.CreateSnapshot(b, 1, &raftpb.ConfState{Voters: []uint64{1}}, []byte("s")); err != nil {
		t.Fatal(err)
	}
	if err := l50.Truncate(b, 1); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	check := func(s *Store) {
		t.Helper()
		for g := uint64(1); g <= groups; g++ {
			l, err := s.Group(g)
			if err != nil {
				t.Fatal(err)
			}
			n := g%7 + 1
			first, _ := l.FirstIndex()
			wantFirst := uint64(1)
			if g == 50 {
				wantFirst = 2
			}
			last, _ := l.LastIndex()
			hs, _, _ := l.InitialState()
			if first != wantFirst || last != n || hs.GetTerm() != g {
				t.Fatalf("group %d: [%d, %d] term %d", g, first, last, hs.GetTerm())
			}
			if first > last {
				continue
			}
			got, err := l.Entries(first, last+1, 1<<20)
			if err != nil || uint64(len(got)) != last-first+1 {
				t.Fatalf("group %d: %d entries, %v", g, len(got), err)
			}
			for _, e := range got {
				if string(e.GetData()) != fmt.Sprintf("%d/%d", g, e.GetIndex()) || e.GetTerm() != g {
					t.Fatalf("group %d holds %v", g, e)
				}
			}
		}
	}
	check(s)
	closeStore(t, s)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openDB(t, fs)
	defer db.Close()
	s = openStore(t, db, fs, files)
	if ids, _ := s.Groups(); len(ids) != groups {
		t.Fatalf("%d groups after reopen", len(ids))
	}
	check(s)
}

// TestKeys checks the raft key encoding: entries sort by index, each
// group's keys stay in its span, and keys parse back.
func TestKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		g, h := rng.Uint64(), rng.Uint64()
		i, j := rng.Uint64(), rng.Uint64()
		if rng.IntN(2) == 0 {
			g = h
		}
		ki, kj := storage.RaftEntryKey(nil, g, i), storage.RaftEntryKey(nil, h, j)
		if g == h && (i < j) != (string(ki) < string(kj)) {
			t.Fatalf("entries %d and %d of group %d sort wrongly", i, j, g)
		}
		if idx, ok := storage.RaftEntryIndex(ki); !ok || idx != i {
			t.Fatalf("entry key of %d parses as %d, %v", i, idx, ok)
		}
		if grp, ok := storage.RaftGroupOf(ki); !ok || grp != g {
			t.Fatalf("entry key of group %d parses as %d, %v", g, grp, ok)
		}
		lo, hi := storage.RaftGroupSpan(g)
		for _, k := range [][]byte{ki, storage.RaftHardStateKey(g), storage.RaftConfStateKey(g), storage.RaftSnapshotKey(g), storage.RaftTruncatedKey(g)} {
			if string(k) < string(lo) || (hi != nil && string(k) >= string(hi)) {
				t.Fatalf("key %x outside group %d's span", k, g)
			}
		}
		if g != h {
			if string(kj) >= string(lo) && (hi == nil || string(kj) < string(hi)) {
				t.Fatalf("group %d's key inside group %d's span", h, g)
			}
		}
		elo, ehi := storage.RaftEntriesSpan(g, 0, ^uint64(0))
		if string(storage.RaftHardStateKey(g)) >= string(elo) && string(storage.RaftHardStateKey(g)) < string(ehi) {
			t.Fatal("the hard state key is inside the entries span")
		}
	}
	if _, ok := storage.RaftEntryIndex(storage.RaftHardStateKey(1)); ok {
		t.Fatal("a hard state key parsed as an entry key")
	}
}
