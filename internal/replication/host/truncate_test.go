package host

import (
	"fmt"
	"testing"
)

// TestTruncateWithoutSnapshots checks log truncation without snapshots:
// the logs of all three replicas shrink as entries are applied, never
// below what a stopped follower holds, and the follower, restarted, catches
// up from the log and applies every command in order.
func TestTruncateWithoutSnapshots(t *testing.T) {
	const every = 40
	c := newClusterOn(t, 1, func(cfg *Config) {
		cfg.SnapshotEntries = 1 << 62
		cfg.TruncateEntries = every
	}, memStore, true)
	g := c.groups[0]
	first := func(id uint64) uint64 { return c.firstIndex(id, g) }
	var want []string
	for i := range 300 {
		cmd := fmt.Sprintf("c%d", i)
		c.propose(g, cmd)
		want = append(want, cmd)
	}
	c.converge(g, want)
	c.waitFor("every log truncated", func() bool {
		for _, id := range voters {
			if first(id) < 300-2*every {
				return false
			}
		}
		return true
	})
	// Stop a follower: the others truncate no further than it holds.
	lead := c.leader(g)
	down := voters[0]
	if down == lead {
		down = voters[1]
	}
	held := first(down)
	var last uint64
	_ = c.nodes[down].h.do(func() error { last, _ = c.nodes[down].h.groups[g].log.LastIndex(); return nil })
	c.stop(down)
	var up []uint64
	for _, id := range voters {
		if id != down {
			up = append(up, id)
		}
	}
	for i := 300; i < 600; i++ {
		cmd := fmt.Sprintf("c%d", i)
		c.propose(g, cmd, up...)
		want = append(want, cmd)
	}
	c.converge(g, want, up...)
	for _, id := range up {
		if f := first(id); f > last+1 {
			t.Fatalf("node %d truncated its log to %d, past what stopped node %d holds (%d)", id, f-1, down, last)
		}
	}
	c.start(down)
	c.converge(g, want)
	if f := first(down); f < held {
		t.Fatalf("node %d's log starts at %d after the restart, before %d", down, f, held)
	}
	c.waitFor("the logs truncated again", func() bool { return first(lead) > last+every })
}
