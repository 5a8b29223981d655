package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/jsondoc"
	"github.com/parsecdb/parsec/internal/replication/host"
	"github.com/parsecdb/parsec/internal/replication/transport"
)

// TestReplicatedFailoverSettlesWrites cuts the leader of every partition
// off while writes are in flight on it, lets the other two nodes elect new
// leaders, and heals the network, again and again. Each writer increments
// a counter item of its own, one patch at a time, through node 1 (its
// gateway), and follows a refusal to the leader it names, as a gateway
// forwards it. Every increment must end acknowledged, or refused and then
// acknowledged by the leader it was sent on to; none may end with an
// unknown outcome (a new leader always exists, and the old one reaches it
// once healed). An acknowledged increment returns the counter one above the
// writer's previous one, and each counter ends equal to its acknowledged
// increments: a refused write was never applied, and none was applied
// twice. The rounds go on until the old leader has settled proposals in
// doubt (Replicator.Settle) both ways: some had committed, some never
// would.
func TestReplicatedFailoverSettlesWrites(t *testing.T) {
	net := transport.NewNetwork(5, 0)
	nodes := startReplicated(t, net, []uint64{1, 2, 3}, time.Millisecond)
	cs := make([]*Container, len(nodes))
	for i, n := range nodes {
		cs[i], _ = n.e.Container("db", "c")
	}
	const writers = 6
	// exec runs one write on node at (an index of nodes).
	exec := func(at int, op Op) (OpResult, error) {
		res, _, err := cs[at].Execute(&Command{Ops: []Op{op}}, "")
		if err != nil {
			return OpResult{}, err
		}
		return res[0], res[0].Err
	}
	for w := range writers {
		op, err := cs[0].PrepareWrite(OpCreate, []byte(fmt.Sprintf(`{"id":"n%d","pk":"n%d","n":0}`, w, w)), key(fmt.Sprint("n", w)), true)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := exec(0, op); err != nil {
			t.Fatal(err)
		}
	}

	var done atomic.Bool
	var wg sync.WaitGroup
	acked := make([]int, writers)
	var unknown, refusals, lost atomic.Int64
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprint("n", w)
			for !done.Load() {
				op, err := cs[0].PrepareKeyed(OpPatch, id, key(id), true)
				if err != nil {
					t.Error(err)
					return
				}
				op.Patch = []jsondoc.PatchOp{{Op: "incr", Path: "/n", Value: json.RawMessage(`1`)}}
				at := 0 // the gateway
				for hop := 0; ; hop++ {
					res, err := exec(at, op)
					if err == nil {
						var doc struct{ N int }
						if err := json.Unmarshal(res.Doc, &doc); err != nil {
							t.Error(err)
							return
						}
						if doc.N != acked[w]+1 {
							t.Errorf("writer %d: an increment acknowledged after %d others left the counter at %d", w, acked[w], doc.N)
							return
						}
						acked[w]++
						break
					}
					if errors.Is(err, host.ErrBusy) {
						// Not proposed (a leader handing over takes none).
						time.Sleep(time.Millisecond)
						continue
					}
					var nl *host.NotLeaderError
					if errors.Is(err, host.ErrAmbiguous) || errors.Is(err, host.ErrTimeout) || !errors.As(err, &nl) {
						// An unknown outcome, or a failure that is no refusal.
						unknown.Add(1)
						t.Errorf("writer %d: increment %d on node %d: %v", w, acked[w]+1, at+1, err)
						return
					}
					refusals.Add(1)
					if errors.Is(err, errNeverCommitted) {
						lost.Add(1)
					}
					if hop == 1000 {
						t.Errorf("writer %d: increment %d refused %d times: %v", w, acked[w]+1, hop, err)
						return
					}
					if nl.Leader != 0 {
						at = int(nl.Leader) - 1
					} else {
						at = (at + 1) % len(nodes) // an election: try another node
						time.Sleep(time.Millisecond)
					}
				}
			}
		}()
	}

	c0 := cs[0]
	groups := c0.groupIDs()
	// leads waits until one of the nodes in among leads every group, and
	// reports whether they did within a minute.
	leads := func(among []*replNode, want uint64) bool {
		deadline := time.Now().Add(time.Minute)
		for _, g := range groups {
			for {
				ok := false
				for _, n := range among {
					if st, err := n.h.Status(g); err == nil && st.Lead == n.id && (want == 0 || n.id == want) {
						ok = true
					}
				}
				if ok {
					break
				}
				if time.Now().After(deadline) {
					return false
				}
				time.Sleep(time.Millisecond)
			}
		}
		return true
	}
	rep := nodes[0].rep
	rounds := 0
	for ; rounds < 200 && !t.Failed() && (lost.Load() == 0 || rep.settled.Load() <= lost.Load() || rounds < 3); rounds++ {
		// Node 1 leads every group again, with writes in flight.
		for _, g := range groups {
			for _, n := range nodes[1:] {
				if st, err := n.h.Status(g); err == nil && st.Lead == n.id {
					_ = n.h.TransferLeadership(g, 1)
				}
			}
		}
		if !leads(nodes[:1], 1) {
			t.Fatal("node 1 does not take the leadership back")
		}
		time.Sleep(20 * time.Millisecond)
		net.Isolate(1)
		if !leads(nodes[1:], 0) {
			t.Fatal("nodes 2 and 3 elect no leader")
		}
		net.Heal()
	}
	done.Store(true)
	wg.Wait()
	t.Logf("%d rounds; node 1 settled %d proposals (%d failed to); %d writes refused, %d of them as never committed; increments %v",
		rounds, rep.settled.Load(), rep.unsettled.Load(), refusals.Load(), lost.Load(), acked)
	if t.Failed() {
		return
	}
	if unknown.Load() != 0 {
		t.Fatalf("%d writes ended with an unknown outcome", unknown.Load())
	}
	// A settled proposal ends as applied or as never committed, each of
	// the latter with at least one write refused as such: more settled
	// proposals than such refusals means some had committed.
	if lost.Load() == 0 || rep.settled.Load() <= lost.Load() {
		t.Fatalf("after %d rounds node 1 settled %d proposals, and %d writes were refused as never committed: both outcomes are needed", rounds,
			rep.settled.Load(), lost.Load())
	}
	// Every replica ends with each counter at its acknowledged increments.
	for i := range nodes {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err := nodes[i].rep.Barrier(ctx, groups)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		for w := range writers {
			id := fmt.Sprint("n", w)
			op, err := cs[i].PrepareKeyed(OpRead, id, key(id), true)
			if err != nil {
				t.Fatal(err)
			}
			r, _, err := cs[i].ReadItem(op)
			if err != nil {
				t.Fatalf("node %d: %s: %v", i+1, id, err)
			}
			var doc struct{ N int }
			if err := json.Unmarshal(r.Doc, &doc); err != nil {
				t.Fatal(err)
			}
			if doc.N != acked[w] {
				t.Fatalf("node %d: counter %s is %d, with %d increments acknowledged", i+1, id, doc.N, acked[w])
			}
		}
	}
}
