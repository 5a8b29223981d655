package raftlog

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/parsecdb/parsec/internal/replication/logstore"
	"github.com/parsecdb/parsec/internal/storage"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// glog is a group's log as a test expects it: entries trunc+1.. and the
// hard state.
type glog struct {
	trunc, truncTerm uint64
	ents             []*raftpb.Entry
	commit, term     uint64
}

func (g glog) last() uint64 { return g.trunc + uint64(len(g.ents)) }

func (g glog) clone() glog { g.ents = slices.Clone(g.ents); return g }

// checkHS compares the recovered group's hard state with want's.
func checkHS(l *Log, want glog) error {
	if hs := l.HardState(); hs.GetCommit() != want.commit || hs.GetTerm() != want.term {
		return fmt.Errorf("hard state %v, want commit %d term %d", hs, want.commit, want.term)
	}
	return nil
}

// checkLog compares the recovered group's log with want's: the same last
// index, every entry from want's truncation point on, and a first index
// no later than want's.
func checkLog(l *Log, want glog) error {
	first, _ := l.FirstIndex()
	last, _ := l.LastIndex()
	if last != want.last() || first > want.trunc+1 {
		return fmt.Errorf("log [%d, %d], want [≤%d, %d]", first, last, want.trunc+1, want.last())
	}
	if len(want.ents) > 0 {
		got, err := l.Entries(want.trunc+1, last+1, 1<<40)
		if err != nil {
			return err
		}
		for i := range got {
			if !proto.Equal(got[i], want.ents[i]) {
				return fmt.Errorf("entry %d = %v, want %v", want.trunc+1+uint64(i), got[i], want.ents[i])
			}
		}
	}
	return nil
}

// TestCrashContract runs rounds as the host does (entries, hard states and
// snapshots applied in a synced batch; truncations in an unsynced one) on
// a crashable file system holding both the DB and the log store, crashes
// at random points, some between a batch's log store commit and its DB
// commit, and checks after recovery that: no acknowledged entry or hard
// state is lost; the log is the acknowledged one or, for a crash inside a
// batch, possibly that batch's (never a mix); entries up to the commit
// index are all there; and raft restarts on the recovered state.
func TestCrashContract(t *testing.T) {
	seeds := uint64(12)
	if testing.Short() {
		seeds = 4
	}
	for seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { crashContract(t, seed) })
	}
}

func crashContract(t *testing.T, seed uint64) {
	deleted := uint64(0)
	defer func() {
		if !t.Failed() && deleted == 0 {
			t.Error("no segment was deleted: the run did not exercise purging")
		}
	}()
	rng := rand.New(rand.NewPCG(seed, 99))
	fs := vfs.NewCrashableMem()
	// Small segments, so that rounds seal, rewrite and delete them.
	logOptions = logstore.Options{SegmentBytes: 1 << 10, KeepSegments: 1, RewriteBytes: 4 << 10}
	defer func() { logOptions = logstore.Options{} }()
	openAll := func(fs vfs.FS) (*storage.DB, *Store) {
		db, err := storage.Open(storage.Options{Dir: "/n", FS: fs, Reserve: -1, CacheBytes: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		return db, Open(db)
	}
	db, s := openAll(fs)
	defer func() { _ = db.Close() }()
	ids := []uint64{3, 4, 5}
	acked := map[uint64]glog{}
	var crashed *vfs.MemFS
	defer func() { testHookBeforeDBCommit = nil }()
	for round := range 120 {
		// The synced batch.
		b := s.NewBatch()
		next := map[uint64]glog{}
		for _, id := range ids {
			if rng.IntN(3) == 0 {
				continue
			}
			l, err := s.Group(id)
			if err != nil {
				t.Fatal(err)
			}
			g := acked[id].clone()
			if rng.IntN(12) == 0 {
				g.term++
				idx := g.last() + 1 + rng.Uint64N(3)
				snap := &raftpb.Snapshot{Metadata: &raftpb.SnapshotMetadata{Index: proto.Uint64(idx), Term: proto.Uint64(g.term), ConfState: &raftpb.ConfState{Voters: []uint64{1}}}}
				if err := l.ApplySnapshot(b, snap); err != nil {
					t.Fatal(err)
				}
				g = glog{trunc: idx, truncTerm: g.term, commit: idx, term: g.term}
			}
			// Append, replacing an uncommitted suffix now and then.
			start := g.last() + 1
			if g.last() > g.commit && rng.IntN(3) == 0 {
				start = g.commit + 1 + rng.Uint64N(g.last()-g.commit)
				g.term++
			}
			ents := make([]*raftpb.Entry, 1+rng.IntN(4))
			for i := range ents {
				ents[i] = ent(start+uint64(i), g.term, fmt.Sprintf("g%d r%d %d", id, round, rng.IntN(1e6)))
			}
			if err := l.Append(b, ents); err != nil {
				t.Fatal(err)
			}
			g.ents = append(g.ents[:start-g.trunc-1], ents...)
			g.commit += rng.Uint64N(g.last() - g.commit + 1)
			if err := l.SetHardState(b, &raftpb.HardState{Term: proto.Uint64(g.term), Commit: proto.Uint64(g.commit)}); err != nil {
				t.Fatal(err)
			}
			next[id] = g
		}
		crashNow := rng.IntN(10) == 0
		if crashNow && rng.IntN(2) == 0 {
			testHookBeforeDBCommit = func() {
				crashed = fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: rng.IntN(101), RNG: rand.New(rand.NewPCG(seed, uint64(round)))})
				testHookBeforeDBCommit = nil
			}
		}
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
		testHookBeforeDBCommit = nil
		inflight := next
		if crashed == nil {
			inflight = nil
			for id, g := range next {
				acked[id] = g
			}
		}
		// The unsynced batch: truncations up to the commit index, as
		// after a snapshot of the state machine.
		if crashed == nil {
			a := s.NewBatch()
			for _, id := range ids {
				g := acked[id]
				if g.commit <= g.trunc || rng.IntN(3) != 0 {
					continue
				}
				l, _ := s.Group(id)
				upTo := g.trunc + 1 + rng.Uint64N(g.commit-g.trunc)
				if err := l.Truncate(a, upTo); err != nil {
					t.Fatal(err)
				}
				// Not acknowledged as durable: acked keeps the old
				// truncation point, which checkLog allows to be passed.
				g.truncTerm = g.ents[upTo-g.trunc-1].GetTerm()
				g.ents = g.ents[upTo-g.trunc:]
				g.trunc = upTo
				acked[id] = g
			}
			if !a.Empty() {
				if err := a.CommitNoSync(); err != nil {
					t.Fatal(err)
				}
			}
		}
		if !crashNow {
			continue
		}
		if crashed == nil {
			crashed = fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: rng.IntN(101), RNG: rand.New(rand.NewPCG(seed, uint64(round)))})
		}
		deleted += s.Log().Stats().SegmentsDeleted
		_ = db.Close()
		fs, crashed = crashed, nil
		db, s = openAll(fs)
		for _, id := range ids {
			l, err := s.Group(id)
			if err != nil {
				t.Fatalf("round %d: group %d: recovery: %v", round, id, err)
			}
			// The hard state is the acknowledged one or, for a crash
			// inside a batch, possibly that batch's; so is the log, and
			// the log is the batch's whenever the hard state is (the log
			// store commits first). The log alone may be ahead: raft takes
			// a log longer than its hard state.
			g, hs, lg := acked[id], false, false
			if f, ok := inflight[id]; ok {
				hs = checkHS(l, f) == nil && checkHS(l, g) != nil
				lg = checkLog(l, f) == nil && checkLog(l, g) != nil
			}
			want := g
			if hs {
				want = inflight[id]
			}
			if err := checkHS(l, want); err != nil {
				t.Fatalf("round %d: group %d: %v", round, id, err)
			}
			if lg {
				want = inflight[id]
				want.commit, want.term = l.HardState().GetCommit(), l.HardState().GetTerm()
			} else if err := checkLog(l, g); err != nil {
				t.Fatalf("round %d: group %d: %v", round, id, err)
			}
			if hs && !lg {
				t.Fatalf("round %d: group %d: the batch's hard state survived without its entries", round, id)
			}
			acked[id] = want
			// Raft restarts on it.
			first, _ := l.FirstIndex()
			if _, err := raft.NewRawNode(&raft.Config{ID: 1, ElectionTick: 10, HeartbeatTick: 1, Storage: l, MaxInflightMsgs: 16, Applied: first - 1, Logger: quietRaft{}}); err != nil {
				t.Fatalf("round %d: group %d: raft: %v", round, id, err)
			}
			// Keep the model's truncation point where recovery put it.
			g = acked[id]
			if first-1 < g.trunc {
				ents, err := l.Entries(first, g.trunc+1, 1<<40)
				if err != nil {
					t.Fatal(err)
				}
				g.ents = append(ents, g.ents...)
				g.trunc = first - 1
				g.truncTerm, _ = l.Term(first - 1)
				acked[id] = g
			}
		}
	}
}

// quietRaft drops raft's log lines.
type quietRaft struct{ raft.Logger }

func (quietRaft) Debug(...any)            {}
func (quietRaft) Debugf(string, ...any)   {}
func (quietRaft) Info(...any)             {}
func (quietRaft) Infof(string, ...any)    {}
func (quietRaft) Warning(...any)          {}
func (quietRaft) Warningf(string, ...any) {}
