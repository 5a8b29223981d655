package host

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/parsecdb/parsec/internal/replication/raftlog"
	"github.com/parsecdb/parsec/internal/replication/transport"
	"github.com/parsecdb/parsec/internal/storage"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

func (c *cluster) lag(id, g uint64) LagInfo {
	c.t.Helper()
	l, err := c.nodes[id].h.Lag(g)
	if err != nil {
		c.t.Fatalf("lag of group %d on node %d: %v", g, id, err)
	}
	return l
}

// readIndex runs a ReadIndex of group g on node id.
func (c *cluster) readIndex(id, g uint64) uint64 {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	idx, err := c.nodes[id].h.ReadIndex(ctx, g)
	if err != nil {
		c.t.Fatalf("read index of group %d on node %d: %v", g, id, err)
	}
	return idx
}

// TestLag checks what replicas know of their lag: a leader has applied
// its commit index and is synced; a follower that caught up is synced by
// its leader's appends; a follower cut off learns nothing of the entries
// committed meanwhile, its applied index stays behind the leader's and
// its leader's word stops; once healed it is synced again past the cut.
func TestLag(t *testing.T) {
	c := newCluster(t, 1, nil)
	g := c.groups[0]
	var want []string
	var last uint64
	for i := range 5 {
		cmd := fmt.Sprintf("c%d", i)
		last = c.propose(g, cmd)
		want = append(want, cmd)
	}
	c.converge(g, want)
	lead := c.leader(g)
	f := voters[(slices.Index(voters, lead)+1)%len(voters)]
	o := voters[(slices.Index(voters, lead)+2)%len(voters)]

	// A leader is synced as of its latest read a quorum confirmed.
	if l := c.lag(lead, g); !l.Leader || !l.Synced.IsZero() {
		t.Fatalf("leader's lag %+v before any read, want a leader not synced", l)
	}
	started := time.Now()
	c.readIndex(lead, g)
	if l := c.lag(lead, g); !l.Leader || l.Lead != lead || l.Applied < last || l.Commit != l.Applied || l.Synced.Before(started) || l.LeaderHeard.IsZero() {
		t.Fatalf("leader's lag %+v, want a leader synced at its commit index, at least %d, since %v", l, last, started)
	}
	var before LagInfo
	c.waitFor("the follower to be synced at the last entry", func() bool {
		before = c.lag(f, g)
		return before.Applied >= last && !before.Synced.IsZero()
	})
	if before.Leader || before.Lead != lead || before.Commit < last || before.LeaderHeard.IsZero() || before.Synced.After(before.LeaderHeard) {
		t.Fatalf("follower's lag %+v, want one following %d, synced no later than it last heard from it", before, lead)
	}

	// Cut the follower off; what was in flight to it arrives or not, then
	// it hears nothing more.
	c.net.Isolate(f)
	var idx uint64
	for i := range 20 {
		cmd := fmt.Sprintf("cut-%d", i)
		idx = c.propose(g, cmd, lead, o)
		want = append(want, cmd)
	}
	c.converge(g, want, lead, o)
	if l := c.lag(lead, g); l.Applied < idx || l.Commit < idx {
		t.Fatalf("leader's lag %+v after the proposals up to %d", l, idx)
	}
	// Tick past an election timeout: the follower gives its leader up (a
	// pre-candidate knows none) or keeps it, but hears nothing new.
	for range 30 {
		c.tick()
		time.Sleep(time.Millisecond)
	}
	during := c.lag(f, g)
	if during.Applied >= idx || during.Commit >= idx {
		t.Fatalf("cut-off follower's lag %+v: it knows of entries committed after the cut, up to %d", during, idx)
	}
	// Its leader's word has stopped: more ticks bring nothing new (the
	// times stay, or are gone with the leader it gave up).
	for range 30 {
		c.tick()
		time.Sleep(time.Millisecond)
	}
	later := c.lag(f, g)
	same := func(a, b time.Time) bool { return a.IsZero() || a.Equal(b) }
	if !same(later.LeaderHeard, during.LeaderHeard) || !same(later.Synced, during.Synced) || later.Applied != during.Applied {
		t.Fatalf("cut-off follower's lag went from %+v to %+v", during, later)
	}
	if _, cmds, _ := c.nodes[f].sm(g).state(); len(cmds) > 5 {
		t.Fatalf("cut-off follower applied %v", cmds)
	}

	c.net.Heal()
	healed := time.Now()
	c.converge(g, want)
	c.waitFor("the follower to be synced again", func() bool {
		l := c.lag(f, g)
		return l.Applied >= idx && l.Synced.After(healed)
	})
	if l := c.lag(f, g); l.Leader || l.Lead == 0 || l.Commit < idx || !l.LeaderHeard.After(healed) {
		t.Fatalf("healed follower's lag %+v", l)
	}
	if _, err := c.nodes[f].h.Lag(999); !errors.Is(err, ErrGroupNotFound) {
		t.Fatalf("lag of an unknown group: %v", err)
	}
}

// TestLagLeaderCutOff checks that a leader cut off from the others (or
// paused: raft sees it as the leader until its next election timeout of
// ticks) is not synced later than its last read a quorum confirmed: the
// others elect a new leader, which commits writes the old one misses, and
// the old one, still leading as raft sees it, says it is synced only from
// before.
func TestLagLeaderCutOff(t *testing.T) {
	c := newCluster(t, 1, nil)
	g := c.groups[0]
	var want []string
	for i := range 3 {
		cmd := fmt.Sprintf("c%d", i)
		c.propose(g, cmd)
		want = append(want, cmd)
	}
	c.converge(g, want)
	lead := c.leader(g)
	c.readIndex(lead, g)
	if l := c.lag(lead, g); !l.Leader || l.Synced.IsZero() {
		t.Fatalf("leader's lag %+v, want a synced leader", l)
	}
	var oldTerm uint64
	_ = c.nodes[lead].h.do(func() error {
		oldTerm = c.nodes[lead].h.groups[g].rn.BasicStatus().GetTerm()
		return nil
	})
	others := slices.DeleteFunc(slices.Clone(voters), func(id uint64) bool { return id == lead })
	c.net.Isolate(lead)
	// Only the others are ticked from now on, so the old leader keeps its
	// leadership as raft sees it.
	deadline := time.Now().Add(20 * time.Second)
	var next uint64
	for next == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the others elected no leader")
		}
		for _, id := range others {
			c.nodes[id].h.Tick()
		}
		time.Sleep(time.Millisecond)
		for _, id := range others {
			if c.lag(id, g).Leader {
				next = id
			}
		}
	}
	elected := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan error, 1)
	var idx uint64
	go func() {
		var err error
		idx, err = c.nodes[next].h.Propose(ctx, g, []byte("after"))
		done <- err
	}()
	for waiting := true; waiting; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("propose to the new leader %d: %v", next, err)
			}
			waiting = false
		case <-time.After(time.Millisecond):
			for _, id := range others {
				c.nodes[id].h.Tick()
			}
		}
	}
	// Acknowledgements the followers sent in the old leader's term, before
	// they elected another, reach it late (they waited in its socket while
	// it was paused): they prove nothing of now.
	for _, id := range others {
		c.nodes[lead].h.receive(id, []transport.Envelope{{Group: g, Msg: &raftpb.Message{Type: raftpb.MsgHeartbeatResp.Enum(),
			From: proto.Uint64(id), To: proto.Uint64(lead), Term: proto.Uint64(oldTerm)}}})
	}
	old := c.lag(lead, g)
	if !old.Leader || old.Applied >= idx {
		t.Fatalf("old leader's lag %+v: want a leader, as raft sees it, that misses entry %d", old, idx)
	}
	if !old.Synced.Before(elected) {
		t.Fatalf("the old leader says it is synced at %v, after node %d was elected in its place (%v)", old.Synced, next, elected)
	}
}

// TestLagQuiesced checks that a follower quiesced on its leader's word
// says so once it has applied everything, and stops saying so when the
// group wakes (here: NodeDown, as the liveness mechanism calls it when
// the leader is unreachable).
func TestLagQuiesced(t *testing.T) {
	c := newCluster(t, 1, func(cfg *Config) { cfg.Quiesce = true })
	g := c.groups[0]
	var want []string
	var last uint64
	for i := range 3 {
		cmd := fmt.Sprintf("q%d", i)
		last = c.propose(g, cmd)
		want = append(want, cmd)
	}
	c.converge(g, want)
	lead := c.leader(g)
	f := voters[(slices.Index(voters, lead)+1)%len(voters)]
	c.waitFor("the follower to quiesce", func() bool {
		l := c.lag(f, g)
		return l.Quiesced
	})
	if l := c.lag(f, g); l.Applied < last || l.Commit != l.Applied || l.Synced.IsZero() || l.QuiescedAt.IsZero() || l.Lead != lead {
		t.Fatalf("quiesced follower's lag %+v, want all of its leader's %d applied", l, last)
	}
	c.net.Isolate(f)
	c.nodes[f].h.NodeDown(lead)
	c.waitFor("the follower to wake", func() bool {
		return !c.lag(f, g).Quiesced
	})
}

// TestLagPending checks the bounded record of announced commit indexes:
// the applied index reaching one makes the replica synced at the time it
// was announced, not later; a full record keeps the oldest.
func TestLagPending(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Second) }
	var l lagState
	for i := range lagPending + 3 {
		l.announce(uint64(10*(i+1)), at(i), 0)
		l.announce(uint64(5*(i+1)), at(i), 0) // no more than pending: adds nothing
	}
	if l.commit != 10*(lagPending+3) {
		t.Fatalf("commit %d after announcements up to %d", l.commit, 10*(lagPending+3))
	}
	l.advance(5)
	if !l.synced.IsZero() || l.n != lagPending {
		t.Fatalf("applied 5: synced %v with %d pending", l.synced, l.n)
	}
	l.advance(25)
	if !l.synced.Equal(at(1)) || l.n != lagPending-2 || l.pending[0].commit != 30 {
		t.Fatalf("applied 25: synced %v, want %v; %d pending from %d", l.synced, at(1), l.n, l.pending[0].commit)
	}
	l.advance(10 * lagPending)
	// The last slot was overwritten by the later announcements: the
	// replica is synced at the one before it.
	if !l.synced.Equal(at(lagPending-2)) || l.n != 1 {
		t.Fatalf("applied %d: synced %v, want %v; %d pending", 10*lagPending, l.synced, at(lagPending-2), l.n)
	}
	l.advance(1 << 20)
	if !l.synced.Equal(at(lagPending+2)) || l.n != 0 {
		t.Fatalf("applied all: synced %v, want %v; %d pending", l.synced, at(lagPending+2), l.n)
	}
	// An announcement already applied syncs the replica at once.
	l.announce(50, at(100), 1<<20)
	if !l.synced.Equal(at(100)) || l.n != 0 {
		t.Fatalf("announcement of an applied index: synced %v, want %v; %d pending", l.synced, at(100), l.n)
	}
}

// TestLagTermCommitted checks that a new leader's appends make a follower
// synced only once their commit index covers an entry of the leader's own
// term: before that, the leader may not know all its predecessor
// committed.
func TestLagTermCommitted(t *testing.T) {
	db, err := storage.Open(storage.Options{Dir: "/n", FS: vfs.NewMem(), Reserve: -1, CacheBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	lg, err := raftlog.Open(db).Group(100)
	if err != nil {
		t.Fatal(err)
	}
	g := &group{id: 100, log: lg}
	const term = 7
	app := func(commit uint64, ents ...*raftpb.Entry) *raftpb.Message {
		return &raftpb.Message{Type: raftpb.MsgApp.Enum(), Term: proto.Uint64(term), Commit: proto.Uint64(commit), Entries: ents}
	}
	ent := func(index, term uint64) *raftpb.Entry {
		return &raftpb.Entry{Index: proto.Uint64(index), Term: proto.Uint64(term)}
	}
	var l lagState
	if l.termCommitted(g, app(20, ent(21, term-1)), term) {
		t.Fatal("an append of earlier terms' entries counts as covering the leader's term")
	}
	if l.termCommitted(g, app(20, ent(21, term-1), ent(22, term)), term) {
		t.Fatal("a commit index below the leader's first entry counts as covering its term")
	}
	if l.termEntry != 22 {
		t.Fatalf("the leader's entry recorded at %d, want 22", l.termEntry)
	}
	if !l.termCommitted(g, app(22), term) || !l.termCommitted(g, app(30, ent(31, term)), term) {
		t.Fatal("a commit index covering the leader's entry does not count")
	}
}
