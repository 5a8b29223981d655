package host

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/replication/transport"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// poll waits, without ticking, until fn holds. The deadline only ends a
// test that cannot make progress; no assertion depends on time.
func poll(t *testing.T, what string, fn func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !fn() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

type proposed struct {
	index uint64
	err   error
}

// TestAdmission checks the bound on a group's proposals in flight: with
// the leader cut off from its followers (and no ticks, so it stays
// leader), two proposals are taken and cannot commit; two more wait for
// admission; a cancelled one returns with its context's error without any
// commit having happened; the caller of an admitted one that stops
// waiting gets ErrTimeout, but its entry keeps its place; once the
// network heals, the first two commit and the waiting one is admitted and
// commits after them.
func TestAdmission(t *testing.T) {
	c := newCluster(t, 1, func(cfg *Config) { cfg.MaxInflightProposals = 2 })
	g := c.groups[0]
	lead := c.leader(g)
	var others []uint64
	for _, id := range voters {
		if id != lead {
			others = append(others, id)
		}
	}
	h := c.nodes[lead].h
	c.net.Partition([]uint64{lead}, others)
	propose := func(ctx context.Context, cmd string) chan proposed {
		ch := make(chan proposed, 1)
		go func() {
			idx, err := h.Propose(ctx, g, []byte(cmd))
			ch <- proposed{idx, err}
		}()
		return ch
	}
	inflight := func() int {
		h.mu.Lock()
		q := h.quotas[g]
		h.mu.Unlock()
		q.mu.Lock()
		defer q.mu.Unlock()
		return q.count
	}
	ctx1, cancel1 := context.WithCancel(context.Background())
	p1 := propose(ctx1, "p1")
	p2 := propose(context.Background(), "p2")
	poll(t, "two proposals in flight", func() bool { return inflight() == 2 })
	p3 := propose(context.Background(), "p3")
	ctx4, cancel4 := context.WithCancel(context.Background())
	p4 := propose(ctx4, "p4")
	poll(t, "two proposals waiting for admission", func() bool { return h.Stats().Waiting == 2 })
	if n := inflight(); n != 2 {
		t.Fatalf("%d proposals in flight, the bound is 2", n)
	}
	cancel4()
	r4 := <-p4
	if !errors.Is(r4.err, context.Canceled) || errors.Is(r4.err, ErrTimeout) {
		t.Fatalf("cancelled while waiting for admission: %v, want context.Canceled (and not ErrTimeout: it was never proposed)", r4.err)
	}
	for name, p := range map[string]chan proposed{"p1": p1, "p2": p2, "p3": p3} {
		select {
		case r := <-p:
			t.Fatalf("%s returned %+v while its leader is cut off", name, r)
		default:
		}
	}
	if applied, cmds, _ := c.nodes[lead].sm(g).state(); len(cmds) != 0 {
		t.Fatalf("applied %v (up to %d) while the leader is cut off", cmds, applied)
	}
	if st := h.Stats(); st.Waiting != 1 || st.AdmissionWaits != 2 {
		t.Fatalf("stats after the cancellation: %+v, want 1 waiting of 2 that waited", st)
	}
	// p1's caller stops waiting: its entry is still in raft, so it keeps
	// its place and p3 still waits.
	cancel1()
	if r1 := <-p1; !errors.Is(r1.err, ErrTimeout) {
		t.Fatalf("p1 cancelled after it was proposed: %v, want ErrTimeout (outcome unknown)", r1.err)
	}
	if n, st := inflight(), h.Stats(); n != 2 || st.Waiting != 1 {
		t.Fatalf("after p1's caller left: %d in flight, %d waiting; want 2 and 1", n, st.Waiting)
	}
	c.net.Heal()
	results := map[string]proposed{}
	c.waitFor("the two proposals", func() bool {
		for name, p := range map[string]chan proposed{"p2": p2, "p3": p3} {
			select {
			case r := <-p:
				results[name] = r
			default:
			}
		}
		return len(results) == 2
	})
	for name, r := range results {
		if r.err != nil {
			t.Fatalf("%s: %v", name, r.err)
		}
	}
	if r := results["p3"]; r.index <= results["p2"].index {
		t.Fatalf("p3 committed at %d, before p2 (%d) it waited for", r.index, results["p2"].index)
	}
	// p1 committed too, though its caller left.
	_, cmds, _ := c.nodes[lead].sm(g).state()
	if len(cmds) != 3 || cmds[2] != "p3" || !slices.Contains(cmds, "p1") || slices.Contains(cmds, "p4") {
		t.Fatalf("applied %v, want p1 and p2 in some order, then p3, and never p4", cmds)
	}
	if n := inflight(); n != 0 || h.Stats().Waiting != 0 {
		t.Fatalf("after all answered: %d in flight, %d waiting", n, h.Stats().Waiting)
	}
}

// TestSaturatedGroupKeepsLeader loads one group with many more concurrent
// proposers than it admits, through queues small enough that appends
// overflow them, for 200 ticks (20 election timeouts), each tick given
// once the leader applied more entries (or stalled) and every node handled
// the previous tick. The leadership must not change (same leader, same term
// on every node), every proposal must commit, every node must apply them
// all, and admission must have made proposers wait.
func TestSaturatedGroupKeepsLeader(t *testing.T) {
	const (
		proposers = 48
		ticks     = 200
		perTick   = 5 // entries applied between two ticks, at least
	)
	c := newClusterNet(t, 1, func(cfg *Config) {
		cfg.MaxInflightProposals = 8
		cfg.MaxQueuedMessages = 16
		cfg.SnapshotEntries = 400
		cfg.KeepEntries = 50
	}, memStore, false, 4, false)
	g := c.groups[0]
	lead := c.leader(g)
	st0, err := c.nodes[lead].h.Status(g)
	if err != nil {
		t.Fatal(err)
	}
	term := st0.GetTerm()
	h := c.nodes[lead].h
	var stop atomic.Bool
	var ok atomic.Int64
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for p := range proposers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				_, err := h.Propose(context.Background(), g, fmt.Appendf(nil, "p%d-%d", p, i))
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
				ok.Add(1)
			}
		}()
	}
	ticked := map[uint64]uint64{}
	for _, id := range voters {
		ticked[id] = c.nodes[id].h.Stats().Ticks
	}
	// Load-driven pacing: before each tick the leader applies perTick more
	// entries, unless it stalls for a while (a message lost to a full
	// queue is resent only when a heartbeat round shows it missing, which
	// takes a tick). The pacing bounds no assertion.
	progressed := 0
	for range ticks {
		applied, _, _ := c.nodes[lead].sm(g).state()
		for range 50 {
			if a, _, _ := c.nodes[lead].sm(g).state(); a >= applied+perTick {
				progressed++
				break
			}
			time.Sleep(time.Millisecond)
		}
		c.tick()
		for _, id := range voters {
			ticked[id]++
			poll(t, fmt.Sprintf("node %d to handle its tick", id), func() bool { return c.nodes[id].h.Stats().Ticks >= ticked[id] })
		}
	}
	stop.Store(true)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	c.waitFor("the proposers to finish", func() bool {
		select {
		case <-done:
			return true
		default:
			return false
		}
	})
	if len(errs) > 0 {
		t.Fatalf("%d proposals failed under load, the first with: %v", len(errs), errs[0])
	}
	for _, id := range voters {
		st, err := c.nodes[id].h.Status(g)
		if err != nil {
			t.Fatal(err)
		}
		if st.Lead != lead || st.GetTerm() != term || (id == lead) != (st.RaftState == raft.StateLeader) {
			t.Fatalf("node %d: leader %d in term %d (%v), want leader %d in term %d throughout", id, st.Lead, st.GetTerm(), st.RaftState, lead, term)
		}
	}
	n := int(ok.Load())
	if n < progressed*perTick || progressed == 0 {
		t.Fatalf("%d proposals committed, with progress before %d of %d ticks", n, progressed, ticks)
	}
	c.waitFor("every node to apply every proposal", func() bool {
		for _, id := range voters {
			if _, cmds, _ := c.nodes[id].sm(g).state(); len(cmds) != n {
				return false
			}
		}
		return true
	})
	st := h.Stats()
	if st.AdmissionWaits == 0 {
		t.Fatalf("no proposer waited for admission with %d proposers and a bound of 8: %+v", proposers, st)
	}
	t.Logf("%d proposals, progress before %d of %d ticks; leader stats %+v; network %+v", n, progressed, ticks, st, c.net.Stats())
}

// TestReceiveQueues checks that received appends and the other messages
// are bounded separately: with the loop held, appends beyond the bound are
// dropped while heartbeats are still queued, and heartbeats beyond their
// own bound are dropped and counted apart.
func TestReceiveQueues(t *testing.T) {
	c := newCluster(t, 1, func(cfg *Config) { cfg.MaxQueuedMessages = 16 })
	h := c.nodes[1].h
	held, release := make(chan struct{}), make(chan struct{})
	h.enqueue(event{fn: func() { close(held); <-release }})
	<-held
	before := h.Stats()
	batch := func(typ raftpb.MessageType, n int) []transport.Envelope {
		var b []transport.Envelope
		for range n {
			// Group 999 is not hosted: the loop drops these once it runs.
			b = append(b, transport.Envelope{Group: 999, Msg: &raftpb.Message{Type: typ.Enum(), From: proto.Uint64(2), To: proto.Uint64(1), Term: proto.Uint64(1)}})
		}
		return b
	}
	h.receive(2, batch(raftpb.MsgApp, 20))                                          // over the bound: dropped
	h.receive(2, batch(raftpb.MsgApp, 10))                                          // queued
	h.receive(2, batch(raftpb.MsgApp, 10))                                          // 20 > 16: dropped
	h.receive(2, append(batch(raftpb.MsgHeartbeat, 5), batch(raftpb.MsgApp, 3)...)) // both queued
	h.receive(2, batch(raftpb.MsgVote, 15))                                         // 20 > 16: dropped
	st := h.Stats()
	if d, p := st.DroppedMessages-before.DroppedMessages, st.DroppedPriority-before.DroppedPriority; d != 20+10+15 || p != 15 {
		t.Fatalf("with the loop held: %d dropped, %d of them heartbeats or votes; want 45 and 15", d, p)
	}
	close(release)
	// The queued 13 appends and 5 heartbeats reach the loop, which drops
	// them for their unknown group.
	poll(t, "the queued messages", func() bool { return h.Stats().DroppedMessages-before.DroppedMessages == 45+18 })
}

// TestEventsPerRound checks that a round of the loop takes at most
// MaxEventsPerRound queued events and leaves the rest to later rounds,
// each of which handles the ticks given meanwhile first: of five events
// queued while the loop is held, with a bound of two, the first two run in
// one round, and a tick given by the second is handled before the third
// runs.
func TestEventsPerRound(t *testing.T) {
	c := newCluster(t, 1, func(cfg *Config) { cfg.MaxEventsPerRound = 2 })
	h := c.nodes[1].h
	held, release := make(chan struct{}), make(chan struct{})
	h.enqueue(event{fn: func() { close(held); <-release }})
	<-held
	base := h.Stats().Ticks
	h.Tick()
	seen := make([]uint64, 5)
	done := make(chan struct{})
	for i := range seen {
		h.enqueue(event{fn: func() {
			seen[i] = h.stats.Ticks - base // the loop reads its own counter
			if i == 1 {
				h.Tick()
			}
			if i == len(seen)-1 {
				close(done)
			}
		}})
	}
	close(release)
	<-done
	if want := []uint64{1, 1, 2, 2, 2}; !slices.Equal(seen, want) {
		t.Fatalf("ticks handled when each event ran: %v, want %v", seen, want)
	}
}
