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
	"github.com/parsecdb/parsec/internal/storage"
	"go.etcd.io/raft/v3"
)

// streamKV is a kv whose snapshots are streamed: its state, encoded, is
// served in chunks, and a replica stages the chunks it receives (on its
// node, as a store would keep files) until raft installs them.
type streamKV struct {
	*kv
	n *node
	g uint64
}

// staged is a node's staged snapshot of a group.
type staged struct {
	id     string
	index  uint64
	data   []byte
	chunks int
}

type chunkReader struct {
	data   []byte
	closed *atomic.Bool
}

func (r *chunkReader) Next(max int) ([]byte, error) {
	if r.closed.Load() {
		return nil, errors.New("read after close")
	}
	n := min(max, len(r.data))
	c := r.data[:n]
	r.data = r.data[n:]
	return c, nil
}

func (r *chunkReader) Close() { r.closed.Store(true) }

func (s *streamKV) OpenSnapshot() (SnapshotReader, error) {
	data, err := s.kv.Snapshot()
	if err != nil {
		return nil, err
	}
	return &chunkReader{data: data, closed: new(atomic.Bool)}, nil
}

func (s *streamKV) StageSnapshot(id []byte, index uint64, next func() ([]byte, error)) error {
	st := &staged{id: string(id), index: index}
	for {
		c, err := next()
		if err != nil {
			return err
		}
		if len(c) == 0 {
			break
		}
		st.data = append(st.data, c...)
		st.chunks++
	}
	s.n.mu.Lock()
	defer s.n.mu.Unlock()
	if s.n.staged == nil {
		s.n.staged = map[uint64]*staged{}
	}
	s.n.staged[s.g] = st
	return nil
}

func (s *streamKV) DiscardStaged() error {
	s.n.mu.Lock()
	defer s.n.mu.Unlock()
	delete(s.n.staged, s.g)
	return nil
}

func (s *streamKV) Restore(b *storage.Batch, index, term uint64, data []byte) error {
	if data == nil {
		return s.kv.Restore(b, index, term, nil)
	}
	s.n.mu.Lock()
	if s.n.failInstall {
		s.n.failInstall = false
		s.n.mu.Unlock()
		return errors.New("injected: the node crashed while installing the snapshot")
	}
	st := s.n.staged[s.g]
	delete(s.n.staged, s.g)
	s.n.mu.Unlock()
	if st == nil || st.id != string(data) || st.index != index {
		return fmt.Errorf("no staged snapshot %x at %d", data, index)
	}
	s.n.mu.Lock()
	s.n.installedChunks += st.chunks
	s.n.mu.Unlock()
	return s.kv.Restore(b, index, term, st.data)
}

func (s *streamKV) Snapshot() ([]byte, error) {
	return nil, errors.New("a streaming state machine is never asked for a whole snapshot")
}

// serve is ServeSnapshot on node from, if it runs.
func (c *cluster) serve(from, id, seq uint64) ([]byte, error) {
	n := c.nodes[from]
	if n == nil || n.h == nil {
		return nil, fmt.Errorf("node %d is down", from)
	}
	return n.h.ServeSnapshot(id, seq)
}

// TestCatchUpThroughStreamedSnapshot stops a follower, commits and
// truncates the log well past what it holds (a streaming state machine's
// leader does not wait for a replica that is down), and restarts it: it
// catches up by a snapshot streamed in many small chunks, the first stream
// of which breaks midway for good (the leader gives it up and sends another), then
// from the log. Its restarted store has exactly the commands of the others.
func TestCatchUpThroughStreamedSnapshot(t *testing.T) {
	const every = 40
	c := &cluster{t: t, net: transport.NewNetwork(uint64(len(t.Name())), 0), nodes: make(map[uint64]*node), durable: true, streaming: true,
		mod: func(cfg *Config) {
			cfg.SnapshotEntries = 1 << 62
			cfg.TruncateEntries = every
			cfg.SnapshotChunkBytes = 64
			cfg.SnapshotTimeout = 300 * time.Millisecond
		}}
	// The first stream breaks at its fourth chunk, for good (every retry
	// fails too): the leader must give it up and send another.
	var failed atomic.Int64
	var mu sync.Mutex
	var broken uint64 // the first stream's id
	c.fetch = func(ctx context.Context, from, to, id, seq uint64) ([]byte, error) {
		mu.Lock()
		if broken == 0 {
			broken = id
		}
		fail := id == broken && seq == 3
		mu.Unlock()
		if fail {
			failed.Add(1)
			return nil, errors.New("injected: the stream broke")
		}
		return c.serve(from, id, seq)
	}
	c.startAll(1, memStore)
	g := c.groups[0]
	lead, down, want := c.downPastTruncation(g, 50, 400)
	if behind, err := c.nodes[lead].h.Behind(g); err != nil || !slices.Equal(behind, []uint64{down}) {
		t.Fatalf("the leader reports %v behind its log (%v), want [%d]", behind, err, down)
	}
	c.start(down)
	c.converge(g, want)
	c.waitFor("no replica behind the log", func() bool {
		behind, err := c.nodes[lead].h.Behind(g)
		return err == nil && len(behind) == 0
	})
	if _, _, restores := c.nodes[down].sm(g).state(); restores == 0 {
		t.Fatal("the stopped node caught up without a snapshot")
	}
	n := c.nodes[down]
	n.mu.Lock()
	chunks := n.installedChunks
	n.mu.Unlock()
	if chunks < 10 {
		t.Fatalf("the snapshot came in %d chunks of at most 64 bytes", chunks)
	}
	if failed.Load() != 3 {
		t.Fatalf("%d fetches failed, want the three attempts injected", failed.Load())
	}
	if st := c.nodes[down].h.Stats(); st.Restores == 0 || st.SnapshotBytesReceived == 0 {
		t.Fatalf("follower stats %+v", st)
	}
	if st := c.nodes[lead].h.Stats(); st.SnapshotBytesSent == 0 || st.Snapshots != 0 {
		t.Fatalf("leader stats %+v: it served no bytes, or took whole snapshots", st)
	}
	// The installed state is durable: restarted alone, the node has it.
	c.stop(down)
	c.net.Isolate(down)
	c.start(down)
	if _, cmds, _ := c.nodes[down].sm(g).state(); !slices.Equal(cmds, want) {
		t.Fatalf("after a restart the node has %d commands, want %d", len(cmds), len(want))
	}
	c.net.Heal()
}

// TestStreamedSnapshotInstallAfterCrash fails a replica's install of a
// streamed snapshot after raft has recorded it in the log (the host stops,
// as on a crash): restarted, the host installs the staged snapshot the log
// names, and the replica catches up.
func TestStreamedSnapshotInstallAfterCrash(t *testing.T) {
	c := &cluster{t: t, net: transport.NewNetwork(uint64(len(t.Name())), 0), nodes: make(map[uint64]*node), durable: true, streaming: true,
		mod: func(cfg *Config) {
			cfg.SnapshotEntries = 1 << 62
			cfg.TruncateEntries = 20
		}}
	c.startAll(1, memStore)
	g := c.groups[0]
	_, down, want := c.downPastTruncation(g, 10, 200)
	n := c.nodes[down]
	n.mu.Lock()
	n.failInstall = true
	n.mu.Unlock()
	c.start(down)
	c.waitFor("the install to fail", func() bool {
		n.mu.Lock()
		defer n.mu.Unlock()
		return !n.failInstall
	})
	c.waitFor("the host to stop", func() bool {
		_, err := n.h.Status(g)
		return errors.Is(err, ErrStopped)
	})
	c.stop(down)
	n.mu.Lock()
	staged := n.staged[g] != nil
	n.mu.Unlock()
	if !staged {
		t.Fatal("the staged snapshot is gone before it was installed")
	}
	c.start(down)
	c.converge(g, want)
	if _, _, restores := n.sm(g).state(); restores == 0 {
		t.Fatal("the restarted node caught up without installing the snapshot")
	}
}

// downPastTruncation proposes before commands in group g, stops a follower,
// proposes up to total commands without it, and waits until the leader has
// truncated its log past what the follower holds. It returns the leader,
// the stopped follower, and the commands.
func (c *cluster) downPastTruncation(g uint64, before, total int) (lead, down uint64, want []string) {
	c.t.Helper()
	for i := range before {
		cmd := fmt.Sprintf("c%d", i)
		c.propose(g, cmd)
		want = append(want, cmd)
	}
	c.converge(g, want)
	lead = c.leader(g)
	down = voters[(slices.Index(voters, lead)+1)%len(voters)]
	downApplied, _, _ := c.nodes[down].sm(g).state()
	c.stop(down)
	up := slices.DeleteFunc(slices.Clone(voters), func(id uint64) bool { return id == down })
	for i := before; i < total; i++ {
		cmd := fmt.Sprintf("c%d", i)
		c.propose(g, cmd, up...)
		want = append(want, cmd)
	}
	c.converge(g, want, up...)
	lead = c.leader(g, up...)
	c.waitFor("the leader to truncate past the stopped node", func() bool { return c.firstIndex(lead, g) > downApplied+1 })
	return lead, down, want
}

// TestNewLeaderKeepsLogForLaggingFollower has a follower miss a few
// entries, cut off for a moment, while the leadership moves: the new
// leader has heard from no follower yet, so it must not take the lagging
// one for down and truncate past it. Healed within two election timeouts,
// the follower catches up from the log, with no snapshot.
func TestNewLeaderKeepsLogForLaggingFollower(t *testing.T) {
	c := &cluster{t: t, net: transport.NewNetwork(uint64(len(t.Name())), 0), nodes: make(map[uint64]*node), durable: true, streaming: true,
		mod: func(cfg *Config) {
			cfg.SnapshotEntries = 1 << 62
			cfg.TruncateEntries = 20
			cfg.ElectionTicks = 50
		}}
	c.startAll(1, memStore)
	g := c.groups[0]
	var want []string
	propose := func(n int, among ...uint64) {
		for range n {
			cmd := fmt.Sprintf("c%d", len(want))
			c.propose(g, cmd, among...)
			want = append(want, cmd)
		}
	}
	propose(50)
	c.converge(g, want)
	old := c.leader(g)
	lag := voters[(slices.Index(voters, old)+1)%len(voters)]
	next := voters[(slices.Index(voters, old)+2)%len(voters)]
	c.net.Isolate(lag)
	propose(5, old, next)
	if err := c.nodes[old].h.TransferLeadership(g, next); err != nil {
		t.Fatal(err)
	}
	c.waitFor(fmt.Sprintf("node %d to lead", next), func() bool {
		st, err := c.nodes[next].h.Status(g)
		return err == nil && st.RaftState == raft.StateLeader
	})
	propose(60, old, next)
	c.net.Heal()
	c.converge(g, want)
	for _, id := range voters {
		if st := c.nodes[id].h.Stats(); st.SnapshotBytesSent != 0 || st.Restores != 0 {
			t.Fatalf("node %d: %+v: a replica that lagged for a moment got a snapshot", id, st)
		}
	}
}
