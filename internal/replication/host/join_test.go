package host

import (
	"context"
	"slices"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"
)

// TestJoinGroup grows a group from one voter to three by configuration
// changes: the new members start from the group's bootstrap state
// (CreateGroup with the first voter alone), receive the log from the
// leader, and apply the commands proposed before and after they
// joined, in order; a fourth change then removes a member, whose
// proposals the group no longer needs to commit.
func TestJoinGroup(t *testing.T) {
	c := newCluster(t, 0, nil)
	const g = 7
	if err := c.nodes[1].h.CreateGroup(g, []uint64{1}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []uint64{2, 3} {
		if err := c.nodes[id].h.CreateGroup(g, []uint64{1}); err != nil {
			t.Fatal(err)
		}
	}
	c.leader(g, 1)
	var want []string
	for i := range 5 {
		cmd := "before-" + string(rune('a'+i))
		c.propose(g, cmd, 1)
		want = append(want, cmd)
	}
	change := func(typ raftpb.ConfChangeType, id uint64) {
		t.Helper()
		var err error
		c.waitFor("a configuration change", func() bool {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			lead := c.leader(g, 1)
			_, err = c.nodes[lead].h.ProposeConfChange(ctx, g, &raftpb.ConfChangeV2{Changes: []*raftpb.ConfChangeSingle{{Type: &typ, NodeId: &id}}})
			return err == nil
		})
	}
	change(raftpb.ConfChangeAddNode, 2)
	change(raftpb.ConfChangeAddNode, 3)
	for i := range 5 {
		cmd := "after-" + string(rune('a'+i))
		c.propose(g, cmd)
		want = append(want, cmd)
	}
	c.converge(g, want)
	// Every replica knows all three voters.
	for _, id := range voters {
		var cs []uint64
		_ = c.nodes[id].h.do(func() error { cs = slices.Clone(c.nodes[id].h.groups[g].cs.GetVoters()); return nil })
		slices.Sort(cs)
		if !slices.Equal(cs, voters) {
			t.Fatalf("node %d sees voters %v, want %v", id, cs, voters)
		}
	}
	// Remove node 3, stop it: two voters of two commit alone.
	lead := c.leader(g)
	if lead == 3 {
		if err := c.nodes[3].h.TransferLeadership(g, 1); err != nil {
			t.Fatal(err)
		}
		c.waitFor("node 3 to hand over", func() bool { return c.leader(g) != 3 })
	}
	change(raftpb.ConfChangeRemoveNode, 3)
	c.stop(3)
	c.propose(g, "without-3", 1, 2)
	want = append(want, "without-3")
	c.converge(g, want, 1, 2)
}
