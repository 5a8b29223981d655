package host

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/replication/transport"
)

// muting is a node's transport that drops what the node sends to node
// muteTo, and the appends it sends to node bulkTo (0: none): one-way cuts.
type muting struct {
	transport.Transport
	muteTo, bulkTo atomic.Uint64
}

func (m *muting) Send(to uint64, batch []transport.Envelope) {
	if to == m.muteTo.Load() {
		return
	}
	if to == m.bulkTo.Load() {
		batch = slices.DeleteFunc(batch, func(e transport.Envelope) bool { return transport.Bulk(e.Msg) })
	}
	m.Transport.Send(to, batch)
}

// TestReadIndexSettlesAmbiguousProposals checks what a proposer relies on
// to settle a proposal that failed with ErrAmbiguous (the engine's
// Replicator.Settle): a ReadIndex the proposer asks afterwards, as a
// follower, is answered by the new leader once it has committed an entry
// of its own term, and returns once the proposer has applied that far; by
// then the proposal's entry is applied there if it will ever commit, and
// if it is not, it never commits. First the leader's append reaches the
// followers but their answers do not reach it: the leader steps down with
// its entry in doubt, a follower takes over with that entry in its log and
// commits it, and the proposer's read must find it applied. Then the
// leader is cut off before its append leaves: the entry is only in its own
// log, the new leader never has it, and the proposer's read must find it
// not applied, for good.
func TestReadIndexSettlesAmbiguousProposals(t *testing.T) {
	muted := map[uint64]*muting{}
	c := newCluster(t, 1, func(cfg *Config) {
		m := &muting{Transport: cfg.Transport}
		muted[cfg.NodeID] = m
		cfg.Transport = m
	})
	g := c.groups[0]
	c.propose(g, "a")
	want := []string{"a"}
	c.converge(g, want)

	// inDoubt proposes cmd on node lead, after cut, and returns once the
	// proposal has failed, which it must with ErrAmbiguous.
	inDoubt := func(lead uint64, cmd string, cut func()) {
		t.Helper()
		cut()
		done := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			_, err := c.nodes[lead].h.Propose(ctx, g, []byte(cmd))
			done <- err
		}()
		var err error
		c.waitFor("the proposal to fail as its leader steps down", func() bool {
			select {
			case err = <-done:
				return true
			default:
				return false
			}
		})
		if !errors.Is(err, ErrAmbiguous) {
			t.Fatalf("the proposal of %q on the cut-off leader: %v, want ErrAmbiguous", cmd, err)
		}
	}
	// settle asks node id for a ReadIndex until it is answered (the node
	// may know no leader yet, or lose its read to a change of leader) and
	// returns the commands it has applied by then. Each tick it waits,
	// it calls during with the ticks so far.
	settle := func(id uint64, during func(ticks int)) []string {
		t.Helper()
		var cmds []string
		ticks := 0
		c.waitFor("the proposer's read to be answered", func() bool {
			res := make(chan error, 1)
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
				defer cancel()
				_, err := c.nodes[id].h.ReadIndex(ctx, g)
				if err == nil {
					_, cmds, _ = c.nodes[id].sm(g).state()
				}
				res <- err
			}()
			for {
				select {
				case err := <-res:
					var nl *NotLeaderError
					if err != nil && !errors.As(err, &nl) && !errors.Is(err, ErrTimeout) {
						t.Fatalf("the read on node %d: %v", id, err)
					}
					return err == nil
				default:
					c.tick()
					ticks++
					if during != nil {
						during(ticks)
					}
					time.Sleep(time.Millisecond)
				}
			}
		})
		return cmds
	}
	others := func(id uint64) []uint64 {
		return slices.DeleteFunc(slices.Clone(voters), func(x uint64) bool { return x == id })
	}

	// The followers' answers are lost: the entry commits under the new
	// leader.
	lead := c.leader(g)
	inDoubt(lead, "committed", func() {
		for _, id := range others(lead) {
			muted[id].muteTo.Store(lead)
		}
	})
	newLead := c.leader(g, others(lead)...)
	// The new leader's appends reach the proposer only after a while: its
	// read may be answered before it has the entries (it must wait for
	// them).
	muted[newLead].bulkTo.Store(lead)
	for _, id := range others(lead) {
		muted[id].muteTo.Store(0)
	}
	want = append(want, "committed")
	if got := settle(lead, func(ticks int) {
		if ticks == 50 {
			muted[newLead].bulkTo.Store(0)
		}
	}); !slices.Equal(got, want) {
		t.Fatalf("after its read the old leader applied %v, want %v: the entry in doubt committed", got, want)
	}

	// The leader is cut off: its entry never leaves it.
	lead = c.leader(g)
	inDoubt(lead, "lost", func() { c.net.Isolate(lead) })
	newLead = c.leader(g, others(lead)...)
	c.net.Heal()
	if got := settle(lead, nil); !slices.Equal(got, want) {
		t.Fatalf("after its read the old leader applied %v, want %v: the entry in doubt never committed", got, want)
	}
	// It never does: a later entry commits without it everywhere.
	c.propose(g, "after", newLead)
	want = append(want, "after")
	c.converge(g, want)
}
