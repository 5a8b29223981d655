package engine

import (
	"errors"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/replication/transport"
)

// newLeader waits for a node other than old to lead group g (as it sees
// it itself) and returns it.
func newLeader(t *testing.T, nodes []*replNode, g, old uint64) *replNode {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		for _, n := range nodes {
			if st, err := n.h.Status(g); n.id != old && err == nil && st.Lead == n.id {
				return n
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no node but %d leads group %d", old, g)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// countKey counts the items of key "p" that node n's replica holds, once
// it holds at least want (or a few seconds passed).
func countKey(t *testing.T, c *Container, want int) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		f, err := c.ReadKeyFeed(key("p"), nil, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Docs) >= want || time.Now().After(deadline) {
			return len(f.Docs)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestOutcomeTableAcrossLeaders checks, on three replicated nodes, the
// two ways a write's outcome is in doubt when its leader goes away:
//
//   - the leader committed it and its answer was lost (it died): the same
//     command, sent again under its id to the next leader, is answered
//     from the replicated outcome table: created, with the first
//     attempt's etag, not a 409, and written once;
//   - the leader was cut off before the entry committed: the command sent
//     to the next leader is applied there, and the first attempt, whose
//     proposer learns it lost the leadership, never commits (its
//     proposal settles as not committed), so the item is written once.
func TestOutcomeTableAcrossLeaders(t *testing.T) {
	net := transport.NewNetwork(3, 0)
	nodes := startReplicated(t, net, []uint64{1, 2, 3}, time.Millisecond)
	containerOf := func(n *replNode) *Container {
		c, err := n.e.Container("db", "c")
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c1 := containerOf(nodes[0])
	const ts = 1_800_000_000

	// Committed on node 1, its answer lost with node 1.
	cmd := createCmd(t, c1, "a", "n1.x.1", ts)
	g := c1.PartitionFor(cmd.Ops[0].EPK).GroupID()
	first, _, err := c1.Execute(cmd, "")
	if err != nil || !first[0].Created {
		t.Fatalf("first attempt: %v %+v", err, first)
	}
	net.Isolate(1)
	second := newLeader(t, nodes, g, 1)
	c2 := containerOf(second)
	again, _, err := c2.Execute(createCmd(t, c2, "a", "n1.x.1", ts), "")
	if err != nil || again[0].Err != nil || !again[0].Created || again[0].Etag != first[0].Etag {
		t.Fatalf("retry on the new leader: %v %+v; want the first attempt's creation %s", err, again, first[0].Etag)
	}
	if n := countKey(t, c2, 1); n != 1 {
		t.Fatalf("%d items after the retry", n)
	}
	net.Heal()

	// Another node leads now; cut it off, and write through it: the entry
	// cannot commit.
	net.Isolate(second.id)
	type outcome struct {
		res []OpResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, _, err := c2.Execute(createCmd(t, c2, "b", "n2.x.1", ts), "")
		done <- outcome{res, err}
	}()
	time.Sleep(50 * time.Millisecond)
	c3 := containerOf(newLeader(t, nodes, g, second.id))
	retry, _, err := c3.Execute(createCmd(t, c3, "b", "n2.x.1", ts), "")
	if err != nil || retry[0].Err != nil || !retry[0].Created {
		t.Fatalf("retry on the third leader: %v %+v", err, retry)
	}
	net.Heal()
	var o outcome
	select {
	case o = <-done:
	case <-time.After(40 * time.Second):
		t.Fatal("the cut-off attempt never returned")
	}
	// The cut-off attempt did not commit: it says so (no effect), or, had
	// it committed, it would be its own outcome; what must never be is a
	// second item, or a 409 for it.
	if o.err == nil && (o.res[0].Err != nil || !o.res[0].Created) {
		t.Fatalf("the cut-off attempt: %+v", o.res)
	}
	if o.err != nil && !errors.Is(o.err, ErrNotLeader) && !errors.Is(o.err, ErrOutcomeUnknown) {
		t.Fatalf("the cut-off attempt: %v", o.err)
	}
	for i, n := range nodes {
		if got := countKey(t, containerOf(n), 2); got != 2 {
			t.Fatalf("node %d holds %d items of key p; want 2", i+1, got)
		}
	}
}
