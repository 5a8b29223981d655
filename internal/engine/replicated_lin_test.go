package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/parsecdb/parsec/internal/lincheck"
	"github.com/parsecdb/parsec/internal/replication/host"
	"github.com/parsecdb/parsec/internal/replication/transport"
)

// TestReplicatedLinearizable checks the engine's replicated path end to
// end: clients upsert, read and replace-If-Match three items through
// whichever node leads the item's partition (a refusal names the leader
// to go to), with strong reads (the host's ReadIndex, then the local
// partition once it has applied that index), while the network drops and
// duplicates messages and the leader of a partition is cut off and healed.
// The history must be linearizable (package lincheck). A write whose
// proposal failed ambiguously counts as of unknown outcome; one refused
// outright (a NotLeaderError alone) as without effect.
func TestReplicatedLinearizable(t *testing.T) {
	for seed := range uint64(2) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { testReplicatedLinearizable(t, seed) })
	}
}

func testReplicatedLinearizable(t *testing.T, seed uint64) {
	net := transport.NewNetwork(seed, 0)
	nodes := startReplicated(t, net, []uint64{1, 2, 3}, time.Millisecond)
	net.SetFaults(transport.Faults{Drop: 0.02, Duplicate: 0.02})
	cs := make([]*Container, len(nodes))
	for i, n := range nodes {
		cs[i], _ = n.e.Container("db", "c")
	}
	rec := lincheck.NewRecorder()
	keys := []string{"a", "b", "c"}
	var done atomic.Bool
	var wg sync.WaitGroup
	for cl := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(cl)))
			at := map[string]int{} // the node (index) a client sends a key's operations to
			// refused moves a key's operations to the leader a refusal names,
			// or to another node.
			refused := func(k string, err error) {
				var nl *host.NotLeaderError
				if errors.As(err, &nl) && nl.Leader != 0 {
					at[k] = int(nl.Leader) - 1
				} else {
					at[k] = rng.IntN(len(nodes))
					time.Sleep(time.Millisecond)
				}
			}
			ambiguous := func(err error) bool {
				var nl *host.NotLeaderError
				return errors.Is(err, host.ErrAmbiguous) || !errors.As(err, &nl)
			}
			// read is a strong read: the leader confirms its leadership
			// (ReadIndex), and the node's partition has applied that far.
			read := func(k string) (string, string, bool) {
				n := at[k]
				c := cs[n]
				p := c.PartitionFor(mustEPK(t, c, k))
				ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
				defer cancel()
				call := rec.Now()
				idx, err := nodes[n].h.ReadIndex(ctx, p.GroupID())
				if err != nil {
					refused(k, err)
					return "", "", false
				}
				for {
					if got, err := p.AppliedIndex(); err == nil && got >= idx {
						break
					}
					if ctx.Err() != nil {
						return "", "", false
					}
					time.Sleep(100 * time.Microsecond)
				}
				op, err := c.PrepareKeyed(OpRead, k, key(k), true)
				if err != nil {
					t.Error(err)
					return "", "", false
				}
				r, _, err := c.ReadItem(op)
				var v struct{ V string }
				switch {
				case errors.Is(err, ErrNotFound):
				case err != nil:
					return "", "", false // a failed read has no effect
				default:
					if err := json.Unmarshal(r.Doc, &v); err != nil {
						t.Error(err)
						return "", "", false
					}
				}
				rec.Add(cl, lincheck.Input{Key: k, Kind: lincheck.Read}, call, lincheck.Output{Value: v.V})
				return v.V, r.Etag, true
			}
			for i := 0; !done.Load(); i++ {
				k := keys[rng.IntN(len(keys))]
				val := fmt.Sprintf("c%d-%d", cl, i)
				body := []byte(fmt.Sprintf(`{"id":%q,"pk":%q,"v":%q}`, k, k, val))
				switch rng.IntN(3) {
				case 0:
					read(k)
				case 1:
					c := cs[at[k]]
					op, err := c.PrepareWrite(OpUpsert, body, key(k), true)
					if err != nil {
						t.Error(err)
						return
					}
					call := rec.Now()
					res, _, err := c.Execute(&Command{Ops: []Op{op}}, "")
					if err == nil {
						err = res[0].Err // the operation's own outcome
					}
					in := lincheck.Input{Key: k, Kind: lincheck.Write, Value: val}
					switch {
					case err == nil:
						rec.Add(cl, in, call, lincheck.Output{OK: true})
					case ambiguous(err):
						rec.Add(cl, in, call, lincheck.Output{Unknown: true})
						refused(k, err)
					default:
						refused(k, err)
					}
				default:
					cur, etag, ok := read(k)
					if !ok || cur == "" {
						continue
					}
					c := cs[at[k]]
					op, err := c.PrepareWrite(OpReplace, body, key(k), true)
					if err != nil {
						t.Error(err)
						return
					}
					op.IfMatch = etag
					call := rec.Now()
					res, _, err := c.Execute(&Command{Ops: []Op{op}}, "")
					if err == nil {
						err = res[0].Err // the operation's own outcome: 412 when the etag moved
					}
					in := lincheck.Input{Key: k, Kind: lincheck.CAS, Expect: cur, Value: val}
					switch {
					case err == nil:
						rec.Add(cl, in, call, lincheck.Output{OK: true})
					case errors.Is(err, ErrPreconditionFailed):
						rec.Add(cl, in, call, lincheck.Output{OK: false})
					case errors.Is(err, ErrUnavailable) && ambiguous(err):
						rec.Add(cl, in, call, lincheck.Output{Unknown: true})
						refused(k, err)
					case errors.Is(err, ErrUnavailable):
						refused(k, err)
					default:
						t.Errorf("replace %s: %v", k, err)
						return
					}
				}
			}
		}()
	}
	// Faults: the leader of a key's partition is cut off, then healed.
	frng := rand.New(rand.NewPCG(seed, 77))
	progress := func(n int) {
		if !rec.Await(n, time.Minute) {
			t.Errorf("no progress for a minute (%d operations)", rec.Len())
		}
	}
	for range 8 {
		progress(40 + frng.IntN(40))
		k := keys[frng.IntN(len(keys))]
		g := cs[0].PartitionFor(mustEPK(t, cs[0], k)).GroupID()
		victim := uint64(1 + frng.IntN(3))
		for _, n := range nodes {
			if st, err := n.h.Status(g); err == nil && st.Lead != 0 {
				victim = st.Lead
				break
			}
		}
		net.Isolate(victim)
		time.Sleep(time.Duration(20+frng.IntN(40)) * time.Millisecond)
		net.Heal()
	}
	progress(40)
	done.Store(true)
	wg.Wait()
	h, known := rec.History(), rec.Known()
	if res := lincheck.Check(h, time.Minute); res != porcupine.Ok {
		t.Fatalf("the history of %d operations (%d with a known outcome) is %s", len(h), known, res)
	}
	if known < 300 {
		t.Fatalf("only %d operations with a known outcome", known)
	}
	t.Logf("%d operations, %d with a known outcome", len(h), known)
}
