package host

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// BenchmarkPropose measures replicated proposals per second on three
// in-process nodes over the in-memory transport, with 64 concurrent
// clients spread over the groups, and the time of one storage commit (one
// WAL sync) on the leaders. "mem" keeps the stores in memory (no fsync
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
				c := newClusterOn(b, groups, func(cfg *Config) { cfg.Logf = func(string, ...any) {} }, store, false)
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
