package host

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/parsecdb/parsec/internal/storage"
)

// counter is the benchmark's state machine: it counts and hashes what it
// applies, so its state, and its snapshot, have the same size at any log
// length, as a partition's snapshot handle will. The tests' kv keeps every
// command and encodes them all in each snapshot, in the loop: on one busy
// group that took 130 ms at 10,000 entries (more than the election
// timeout) and grew with the log, which is what made leadership churn.
type counter struct {
	mu               sync.Mutex
	applied, n, hash uint64
}

func (s *counter) Applied() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.applied
}

func (s *counter) Apply(_ *storage.Batch, ents []Entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range ents {
		if e.Index != s.applied+1 {
			return fmt.Errorf("entry %d applied after %d", e.Index, s.applied)
		}
		if e.Data != nil {
			h := fnv.New64a()
			_ = binary.Write(h, binary.BigEndian, s.hash)
			h.Write(e.Data)
			s.hash, s.n = h.Sum64(), s.n+1
		}
		s.applied = e.Index
	}
	return nil
}

func (s *counter) Snapshot() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, s.applied), s.n), s.hash), nil
}

func (s *counter) Restore(_ *storage.Batch, index, _ uint64, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if data == nil {
		s.applied, s.n, s.hash = index, 0, 0
		return nil
	}
	if len(data) != 24 || binary.BigEndian.Uint64(data) != index {
		return fmt.Errorf("bad counter snapshot of %d bytes at %d", len(data), index)
	}
	s.applied, s.n, s.hash = index, binary.BigEndian.Uint64(data[8:]), binary.BigEndian.Uint64(data[16:])
	return nil
}

// BenchmarkPropose measures replicated proposals per second on three
// in-process nodes over the in-memory transport, with 64 concurrent
// clients spread over the groups, and the time of one storage commit (one
// WAL sync) on the leaders. The state machine is counter. With -v it logs
// each node's ticks, rounds, longest round, snapshots and drops. "mem" keeps the stores in memory (no fsync
// cost); "disk" puts them in a temporary directory.
func BenchmarkPropose(b *testing.B) {
	for _, where := range []string{"mem", "disk"} {
		for _, groups := range []int{1, 100} {
			b.Run(fmt.Sprintf("%s/groups=%d", where, groups), func(b *testing.B) {
				store := func(uint64) (vfs.FS, string) { return vfs.NewMem(), "/n" }
				if where == "disk" {
					root := b.TempDir()
					store = func(id uint64) (vfs.FS, string) { return vfs.Default, filepath.Join(root, fmt.Sprint(id)) }
				}
				c := newClusterOn(b, groups, func(cfg *Config) {
					cfg.Logf = func(string, ...any) {}
					cfg.NewStateMachine = func(uint64) (StateMachine, error) { return &counter{}, nil }
				}, store, false)
				leaders := make(map[uint64]uint64)
				for _, g := range c.groups {
					leaders[g] = c.leader(g)
				}
				// A ticker keeps leases and heartbeats going, as a server's would.
				stop := make(chan struct{})
				var tw sync.WaitGroup
				tw.Add(1)
				go func() {
					defer tw.Done()
					for {
						select {
						case <-stop:
							return
						case <-time.After(10 * time.Millisecond):
							c.tick()
						}
					}
				}()
				before := map[uint64]Stats{}
				for _, id := range voters {
					before[id] = c.nodes[id].h.Stats()
				}
				payload := make([]byte, 256)
				var next atomic.Int64
				var failed, redirected atomic.Int64
				var firstErr atomic.Value
				var leadMu sync.Mutex
				// propose sends one proposal to the group's leader as a
				// gateway would: a busy box can move leadership, so a
				// proposal refused by a node that is no longer leader (or
				// whose outcome its lost leadership left unknown; the
				// payload is opaque, so applying it twice is harmless here)
				// goes to the leader it names, a few times at most.
				propose := func(g uint64) error {
					var err error
					for range 20 {
						leadMu.Lock()
						lead := leaders[g]
						leadMu.Unlock()
						ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
						_, err = c.nodes[lead].h.Propose(ctx, g, payload)
						cancel()
						var nl *NotLeaderError
						switch {
						case err == nil:
							return nil
						case errors.As(err, &nl):
							if nl.Leader != 0 {
								leadMu.Lock()
								leaders[g] = nl.Leader
								leadMu.Unlock()
							}
						case !errors.Is(err, ErrAmbiguous):
							return err
						}
						redirected.Add(1)
						time.Sleep(10 * time.Millisecond) // an election takes a few ticks
					}
					return err
				}
				b.ResetTimer()
				start := time.Now()
				var wg sync.WaitGroup
				for w := range 64 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
							if err := propose(c.groups[(int(i)+w)%len(c.groups)]); err != nil {
								if failed.Add(1) == 1 {
									firstErr.Store(err.Error())
								}
							}
						}
					}()
				}
				wg.Wait()
				elapsed := time.Since(start)
				b.StopTimer()
				close(stop)
				tw.Wait()
				if f := failed.Load(); f > 0 {
					b.Fatalf("%d of %d proposals failed, the first with: %v", f, b.N, firstErr.Load())
				}
				var commits uint64
				var commitTime time.Duration
				for _, id := range voters {
					st := c.nodes[id].h.Stats()
					commits += st.Commits - before[id].Commits
					commitTime += st.CommitTime - before[id].CommitTime
				}
				if testing.Verbose() {
					for _, id := range voters {
						st, bs := c.nodes[id].h.Stats(), before[id]
						b.Logf("node %d: %d ticks, %d rounds, max round %v, %d snapshots taking %v, %d dropped, %d admission waits; network %+v",
							id, st.Ticks-bs.Ticks, st.Rounds-bs.Rounds, st.MaxRoundTime, st.Snapshots-bs.Snapshots, st.SnapshotTime-bs.SnapshotTime, st.DroppedMessages-bs.DroppedMessages, st.AdmissionWaits-bs.AdmissionWaits, c.net.Stats())
					}
				}
				b.ReportMetric(float64(b.N)/elapsed.Seconds(), "proposals/s")
				b.ReportMetric(float64(redirected.Load()), "redirects")
				if commits > 0 {
					b.ReportMetric(float64(commitTime.Microseconds())/1000/float64(commits), "ms/commit")
					b.ReportMetric(float64(b.N)*3/float64(commits), "entries/commit")
				}
			})
		}
	}
}
