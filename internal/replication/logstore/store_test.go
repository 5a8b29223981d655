package logstore

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

func ent(index, term uint64, data string) *raftpb.Entry {
	return &raftpb.Entry{Index: &index, Term: &term, Data: []byte(data)}
}

func open(t testing.TB, fs vfs.FS, opts Options) *Store {
	t.Helper()
	opts.FS, opts.Dir = fs, "/log"
	s, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func commit(t testing.TB, s *Store, b *Batch, sync bool) {
	t.Helper()
	if err := s.Commit(b, sync); err != nil {
		t.Fatal(err)
	}
}

// sameErr reports whether two errors are both nil or wrap the same raft
// sentinel.
func sameErr(a, b error) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	for _, s := range []error{raft.ErrCompacted, raft.ErrUnavailable} {
		if errors.Is(a, s) != errors.Is(b, s) {
			return false
		}
	}
	return true
}

// compareMS checks the store's view of group id against ms.
func compareMS(t *testing.T, rng *rand.Rand, s *Store, id uint64, ms *raft.MemoryStorage) {
	t.Helper()
	first, _ := ms.FirstIndex()
	last, _ := ms.LastIndex()
	gf, gl := s.Range(id)
	if gf != first || gl != last {
		t.Fatalf("group %d: range [%d, %d], want [%d, %d]", id, gf, gl, first, last)
	}
	for i := first; i <= last+1; i++ {
		wt, werr := ms.Term(i)
		gt, gerr := s.Term(id, i)
		if wt != gt || !sameErr(werr, gerr) {
			t.Fatalf("group %d: Term(%d) = %d, %v; want %d, %v", id, i, gt, gerr, wt, werr)
		}
	}
	for range 6 {
		lo := first - 1 + rng.Uint64N(last-first+2)
		hi := lo + rng.Uint64N(last+2-lo)
		maxSize := rng.Uint64N(300)
		if rng.IntN(3) == 0 {
			maxSize = 1 << 40
		}
		want, werr := ms.Entries(lo, hi, maxSize)
		got, gerr := s.Entries(id, lo, hi, maxSize)
		if lo == first-1 && lo > 0 {
			// MemoryStorage answers for its dummy entry; the store
			// leaves the boundary to the caller.
			werr = raft.ErrCompacted
			want = nil
		}
		if !sameErr(werr, gerr) || len(want) != len(got) {
			t.Fatalf("group %d: Entries(%d, %d, %d) = %d entries, %v; want %d, %v", id, lo, hi, maxSize, len(got), gerr, len(want), werr)
		}
		for i := range want {
			if !proto.Equal(want[i], got[i]) {
				t.Fatalf("group %d: Entries(%d, %d): entry %d = %v, want %v", id, lo, hi, i, got[i], want[i])
			}
		}
	}
}

// TestDifferential runs random appends (with conflicting suffixes and
// overlaps of the truncated prefix), truncations and resets on several
// groups sharing batches, over small segments with purges and a small
// cache, and checks every read against raft.MemoryStorage after each
// commit and after reopening.
func TestDifferential(t *testing.T) {
	for seed := range uint64(10) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 11))
			fs := vfs.NewMem()
			opts := Options{SegmentBytes: 2048, CacheBytes: 1500, KeepSegments: 2, RewriteBytes: 1 << 10}
			s := open(t, fs, opts)
			ids := []uint64{1, 7, 1 << 40}
			ms := map[uint64]*raft.MemoryStorage{}
			terms := map[uint64]uint64{}
			for _, id := range ids {
				ms[id] = raft.NewMemoryStorage()
				terms[id] = 1
			}
			for round := range 200 {
				b := s.NewBatch()
				for range 1 + rng.IntN(4) {
					id := ids[rng.IntN(len(ids))]
					m := ms[id]
					first, _ := m.FirstIndex()
					last, _ := m.LastIndex()
					switch op := rng.IntN(10); {
					case op < 6:
						start := first + rng.Uint64N(last-first+2)
						if rng.IntN(4) == 0 && first > 1 {
							start = first - 1
						}
						terms[id] += rng.Uint64N(2)
						ents := make([]*raftpb.Entry, 1+rng.IntN(5))
						for i := range ents {
							ents[i] = ent(start+uint64(i), terms[id], fmt.Sprintf("%d-%d-%s", id, start+uint64(i), make([]byte, rng.IntN(120))))
						}
						if err := m.Append(ents); err != nil {
							t.Fatal(err)
						}
						b.Append(id, ents)
					case op < 8:
						if last < first {
							continue
						}
						upTo := first + rng.Uint64N(last-first+1)
						if err := m.Compact(upTo); err != nil {
							t.Fatal(err)
						}
						b.Truncate(id, upTo)
					default:
						idx := last + rng.Uint64N(4)
						terms[id]++
						snap := &raftpb.Snapshot{Metadata: &raftpb.SnapshotMetadata{Index: proto.Uint64(idx), Term: proto.Uint64(terms[id])}}
						if err := m.ApplySnapshot(snap); err != nil {
							continue
						}
						b.Reset(id, idx)
					}
				}
				commit(t, s, b, rng.IntN(2) == 0)
				if rng.IntN(4) == 0 {
					if err := s.Purge(); err != nil {
						t.Fatal(err)
					}
				}
				for _, id := range ids {
					compareMS(t, rng, s, id, ms[id])
					if t.Failed() {
						t.Fatalf("round %d", round)
					}
				}
				if rng.IntN(4) == 0 {
					// Recovery rebuilds the same logs from the files as
					// they are now.
					reopenCheck(t, fs, opts, func(s2 *Store) {
						for _, id := range ids {
							first, _ := ms[id].FirstIndex()
							last, _ := ms[id].LastIndex()
							f2, l2 := s2.Range(id)
							if (last >= first && (l2 != last || f2 > first)) || (last < first && l2 > last) {
								t.Logf("round %d group %d: reopened [%d,%d] want [%d,%d]", round, id, f2, l2, first, last)
								t.FailNow()
							}
						}
					})
				}
			}
			st := s.Stats()
			if st.SegmentsDeleted == 0 || st.CacheHits == 0 || st.CacheMisses == 0 {
				t.Errorf("the run did not exercise deletion and the cache: %+v", st)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s = open(t, fs, opts)
			defer s.Close()
			for _, id := range ids {
				// Truncations are not logged: the caller truncates again.
				first, _ := ms[id].FirstIndex()
				b := s.NewBatch()
				b.Truncate(id, first-1)
				commit(t, s, b, false)
				compareMS(t, rng, s, id, ms[id])
			}
		})
	}
}

func TestBadInput(t *testing.T) {
	s := open(t, vfs.NewMem(), Options{MaxRecordBytes: 1 << 10})
	defer s.Close()
	for name, ents := range map[string][]*raftpb.Entry{
		"gap":             {ent(3, 1, "")},
		"not consecutive": {ent(1, 1, ""), ent(3, 1, "")},
		"too large":       {ent(1, 1, string(make([]byte, 2<<10)))},
	} {
		b := s.NewBatch()
		b.Append(5, ents)
		if err := s.Commit(b, true); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, last := s.Range(5); last != 0 {
		t.Fatalf("a refused batch left entries: last %d", last)
	}
	// A big append is split into records within the limit.
	b := s.NewBatch()
	var ents []*raftpb.Entry
	for i := range uint64(40) {
		ents = append(ents, ent(i+1, 1, string(make([]byte, 100))))
	}
	b.Append(5, ents)
	commit(t, s, b, true)
	got, err := s.Entries(5, 1, 41, 1<<30)
	if err != nil || len(got) != 40 {
		t.Fatalf("entries: %d, %v", len(got), err)
	}
	if _, err := s.Entries(5, 1, 50, 1<<30); !errors.Is(err, raft.ErrUnavailable) {
		t.Fatalf("entries past the end: %v", err)
	}
}

// state is a group's log as the test expects it.
type state struct {
	trunc uint64
	ents  []*raftpb.Entry
}

func (m state) last() uint64 { return m.trunc + uint64(len(m.ents)) }

func (m state) clone() state { return state{m.trunc, slices.Clone(m.ents)} }

// matches reports whether the recovered log of id agrees with want: the
// same last index, and the same entries above want's truncation point
// (truncations are not logged, so older entries may come back).
func matches(s *Store, id uint64, want state) error {
	first, last := s.Range(id)
	if len(want.ents) == 0 {
		if last > want.trunc {
			return fmt.Errorf("group %d: entries up to %d survive a log empty after %d", id, last, want.trunc)
		}
		return nil
	}
	if last != want.last() || first > want.trunc+1 {
		return fmt.Errorf("group %d: range [%d, %d], want [≤%d, %d]", id, first, last, want.trunc+1, want.last())
	}
	got, err := s.Entries(id, want.trunc+1, last+1, 1<<40)
	if err != nil {
		return fmt.Errorf("group %d: %w", id, err)
	}
	for i := range got {
		if !proto.Equal(got[i], want.ents[i]) {
			return fmt.Errorf("group %d: entry %d = %v, want %v", id, want.trunc+1+uint64(i), got[i], want.ents[i])
		}
	}
	return nil
}

// crashRun drives random rounds on a crashable file system, crashes at
// random points keeping a random part of the unsynced writes, recovers,
// and checks that every group's log is one it had at or after its last
// synced round: nothing synced is lost, and nothing torn or foreign
// appears.
func crashRun(t *testing.T, seed uint64, rounds int) {
	rng := rand.New(rand.NewPCG(seed, 3))
	fs := vfs.NewCrashableMem()
	opts := Options{SegmentBytes: 1 << 10, CacheBytes: 1 << 10, KeepSegments: 1, RewriteBytes: 600}
	s := open(t, fs, opts)
	ids := []uint64{2, 3, 5}
	cur := map[uint64]state{}
	// hist holds each group's states since the last synced round; the
	// first is the synced one.
	hist := map[uint64][]state{}
	for _, id := range ids {
		hist[id] = []state{{}}
	}
	term := uint64(1)
	for round := range rounds {
		b := s.NewBatch()
		touched := map[uint64]bool{}
		for range 1 + rng.IntN(3) {
			id := ids[rng.IntN(len(ids))]
			m := cur[id].clone()
			touched[id] = true
			switch op := rng.IntN(10); {
			case op < 7:
				start := m.trunc + 1 + rng.Uint64N(uint64(len(m.ents))+1)
				term += rng.Uint64N(2)
				ents := make([]*raftpb.Entry, 1+rng.IntN(4))
				for i := range ents {
					ents[i] = ent(start+uint64(i), term, fmt.Sprintf("r%d-%d", round, rng.IntN(1e6)))
				}
				b.Append(id, ents)
				m.ents = append(m.ents[:start-m.trunc-1], ents...)
			case op < 9:
				if len(m.ents) == 0 {
					continue
				}
				n := 1 + rng.IntN(len(m.ents))
				b.Truncate(id, m.trunc+uint64(n))
				m.trunc += uint64(n)
				m.ents = m.ents[n:]
			default:
				idx := m.last() + rng.Uint64N(3)
				b.Reset(id, idx)
				m = state{trunc: idx}
			}
			cur[id] = m
		}
		sync := rng.IntN(3) == 0
		for _, o := range b.ops {
			t.Logf("round %d: op %d g%d idx %d n %d sync %v", round, o.kind, o.group, o.index, len(o.ents), sync)
		}
		commit(t, s, b, sync)
		for id := range touched {
			hist[id] = append(hist[id], cur[id].clone())
		}
		if sync {
			for _, id := range ids {
				hist[id] = []state{cur[id].clone()}
			}
			if rng.IntN(2) == 0 {
				if err := s.Purge(); err != nil {
					t.Fatal(err)
				}
			}
		}
		if rng.IntN(8) != 0 {
			continue
		}
		// Crash.
		crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: rng.IntN(101), RNG: rand.New(rand.NewPCG(seed, uint64(round)))})
		_ = s.Close()
		fs = crashed
		s = open(t, fs, opts)
		for _, id := range ids {
			var found bool
			var errs []error
			for _, h := range slices.Backward(hist[id]) {
				if err := matches(s, id, h); err != nil {
					errs = append(errs, err)
					continue
				}
				found = true
				cur[id] = h.clone()
				break
			}
			if !found {
				t.Fatalf("seed %d round %d: recovered log matches no state since the last sync: %v", seed, round, errs)
			}
			b := s.NewBatch()
			b.Truncate(id, cur[id].trunc)
			commit(t, s, b, false)
			hist[id] = []state{cur[id].clone()}
		}
		// What recovery found is durable now (the torn tail was cut).
		commit(t, s, &Batch{ops: []op{{kind: kindReset, group: 1 << 50}}}, true)
	}
	_ = s.Close()
}

func TestCrash(t *testing.T) {
	seeds := uint64(30)
	if testing.Short() {
		seeds = 8
	}
	for seed := range seeds {
		crashRun(t, seed, 150)
	}
}
