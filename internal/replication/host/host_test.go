package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/parsecdb/parsec/internal/replication/raftlog"
	"github.com/parsecdb/parsec/internal/replication/transport"
	"github.com/parsecdb/parsec/internal/storage"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// kv is a test state machine: the list of commands applied. A durable kv
// writes its whole state into the apply batch (under a test-only key) and
// reloads it at start; a volatile one starts empty.
type kv struct {
	key      []byte // nil: volatile
	mu       sync.Mutex
	applied  uint64
	cmds     []string
	restores int    // restores from a snapshot with data
	loaded   uint64 // the applied index read from the store at start
}

type kvState struct {
	Applied uint64
	Cmds    []string
}

func (s *kv) Applied() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.applied
}

func (s *kv) Apply(b *storage.Batch, ents []Entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range ents {
		if e.Index != s.applied+1 {
			return fmt.Errorf("entry %d applied after %d", e.Index, s.applied)
		}
		if e.Data != nil {
			s.cmds = append(s.cmds, string(e.Data))
		}
		s.applied = e.Index
	}
	return s.save(b)
}

func (s *kv) save(b *storage.Batch) error {
	if s.key == nil {
		return nil
	}
	v, err := json.Marshal(kvState{s.applied, s.cmds})
	if err != nil {
		return err
	}
	return b.Set(s.key, v)
}

func loadKV(db *storage.DB, key []byte) (*kv, error) {
	s := &kv{key: key}
	v, err := db.Get(nil, key)
	if errors.Is(err, storage.ErrNotFound) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	var st kvState
	if err := json.Unmarshal(v, &st); err != nil {
		return nil, err
	}
	s.applied, s.cmds, s.loaded = st.Applied, st.Cmds, st.Applied
	return s, nil
}

func (s *kv) Snapshot() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return json.Marshal(kvState{s.applied, s.cmds})
}

func (s *kv) Restore(b *storage.Batch, index, term uint64, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := kvState{Applied: index}
	if data != nil {
		if err := json.Unmarshal(data, &st); err != nil {
			return err
		}
		if st.Applied != index {
			return fmt.Errorf("snapshot data at %d, metadata at %d", st.Applied, index)
		}
		s.restores++
	}
	s.applied, s.cmds = index, slices.Clone(st.Cmds)
	return s.save(b)
}

// encodingKV is a kv whose snapshot is encoded off the host's loop.
type encodingKV struct{ *kv }

func (s encodingKV) SnapshotEncoder() (func() ([]byte, error), error) {
	s.mu.Lock()
	st := kvState{s.applied, slices.Clone(s.cmds)}
	s.mu.Unlock()
	return func() ([]byte, error) { return json.Marshal(st) }, nil
}

func (s *kv) state() (uint64, []string, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.applied, slices.Clone(s.cmds), s.restores
}

type node struct {
	id  uint64
	fs  vfs.FS
	dir string
	db  *storage.DB
	tr  *transport.Mem
	h   *Host
	mu  sync.Mutex
	sms map[uint64]*kv
	// staged holds a streaming state machine's staged snapshots, by group
	// (kept across restarts, like a store's files).
	staged          map[uint64]*staged
	installedChunks int  // chunks of the staged snapshots installed
	failInstall     bool // the next install of a staged snapshot fails (a crash)
}

func (n *node) sm(g uint64) *kv {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.sms[g]
}

type cluster struct {
	t      testing.TB
	net    *transport.Network
	nodes  map[uint64]*node
	groups []uint64
	mod    func(*Config)
	// durable makes the state machines keep their state in the store.
	durable bool
	// encoding makes them encode their snapshots off the loop.
	encoding bool
	// streaming makes them stream their snapshots (stream_test.go), and
	// fetch, when set, stands between a replica and ServeSnapshot.
	streaming bool
	fetch     func(ctx context.Context, from, to, id, seq uint64) ([]byte, error)
}

var voters = []uint64{1, 2, 3}

func newCluster(t testing.TB, groups int, mod func(*Config)) *cluster {
	return newClusterOn(t, groups, mod, memStore, false)
}

func memStore(uint64) (vfs.FS, string) { return vfs.NewMem(), "/n" }

// newClusterOn starts a cluster whose node id keeps its store in the
// directory dir of fs.
func newClusterOn(t testing.TB, groups int, mod func(*Config), store func(id uint64) (fs vfs.FS, dir string), durable bool) *cluster {
	return newClusterNet(t, groups, mod, store, durable, 0, false)
}

// newClusterNet is newClusterOn with the in-memory network's inboxes
// holding queue batches (0: the default), and state machines that encode
// their snapshots off the loop if encoding.
func newClusterNet(t testing.TB, groups int, mod func(*Config), store func(id uint64) (fs vfs.FS, dir string), durable bool, queue int, encoding bool) *cluster {
	c := &cluster{t: t, net: transport.NewNetwork(uint64(len(t.Name())), queue), nodes: make(map[uint64]*node), mod: mod, durable: durable, encoding: encoding}
	return c.startAll(groups, store)
}

// startAll starts c's nodes with groups groups, node id keeping its store
// in the directory dir of fs.
func (c *cluster) startAll(groups int, store func(id uint64) (fs vfs.FS, dir string)) *cluster {
	t := c.t
	for g := range groups {
		c.groups = append(c.groups, uint64(100+g))
	}
	for _, id := range voters {
		fs, dir := store(id)
		c.nodes[id] = &node{id: id, fs: fs, dir: dir}
		c.start(id)
	}
	t.Cleanup(func() {
		for id, n := range c.nodes {
			if n.h != nil {
				c.stop(id)
			}
		}
	})
	return c
}

func (c *cluster) start(id uint64) {
	c.t.Helper()
	n := c.nodes[id]
	db, err := storage.Open(storage.Options{Dir: n.dir, FS: n.fs, Reserve: -1, CacheBytes: 1 << 20})
	if err != nil {
		c.t.Fatal(err)
	}
	n.db = db
	n.tr = c.net.Join(id)
	n.mu.Lock()
	n.sms = make(map[uint64]*kv)
	n.mu.Unlock()
	cfg := Config{NodeID: id, Store: raftlog.Open(db), Transport: n.tr, Logf: c.t.Logf,
		NewStateMachine: func(g uint64) (StateMachine, error) {
			s := &kv{}
			if c.durable {
				var err error
				if s, err = loadKV(db, []byte(fmt.Sprintf("test-sm-%d", g))); err != nil {
					return nil, err
				}
			}
			n.mu.Lock()
			n.sms[g] = s
			n.mu.Unlock()
			if c.streaming {
				return &streamKV{kv: s, n: n, g: g}, nil
			}
			if c.encoding {
				return encodingKV{s}, nil
			}
			return s, nil
		}}
	if c.streaming {
		cfg.FetchSnapshot = func(ctx context.Context, from, sid, seq uint64) ([]byte, error) {
			if c.fetch != nil {
				return c.fetch(ctx, from, id, sid, seq)
			}
			return c.serve(from, sid, seq)
		}
	}
	if c.mod != nil {
		c.mod(&cfg)
	}
	h, err := New(cfg)
	if err != nil {
		c.t.Fatal(err)
	}
	n.h = h
	for _, g := range c.groups {
		if err := h.CreateGroup(g, voters); err != nil {
			c.t.Fatal(err)
		}
	}
}

func (c *cluster) stop(id uint64) {
	n := c.nodes[id]
	n.h.Stop()
	_ = n.tr.Close()
	_ = n.db.Close()
	n.h = nil
}

// firstIndex returns the first index of group g's log on node id, as its
// host has it (another raftlog.Store over the same store would keep the
// state it read when opened).
func (c *cluster) firstIndex(id, g uint64) uint64 {
	var first uint64
	_ = c.nodes[id].h.do(func() error { first, _ = c.nodes[id].h.groups[g].log.FirstIndex(); return nil })
	return first
}

func (c *cluster) tick() {
	for _, n := range c.nodes {
		if n.h != nil {
			n.h.Tick()
		}
	}
}

// waitFor ticks every node until fn holds. The deadline only ends a test
// that cannot make progress; no assertion depends on time.
func (c *cluster) waitFor(what string, fn func() bool) {
	c.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !fn() {
		if time.Now().After(deadline) {
			c.t.Fatalf("gave up waiting for %s", what)
		}
		c.tick()
		time.Sleep(time.Millisecond)
	}
}

// leader waits until one of the live nodes in among leads group g with
// every other live node in among following it, and returns it.
func (c *cluster) leader(g uint64, among ...uint64) uint64 {
	c.t.Helper()
	if len(among) == 0 {
		among = voters
	}
	var lead uint64
	c.waitFor(fmt.Sprintf("a leader of group %d among %v", g, among), func() bool {
		lead = 0
		var term uint64
		for _, id := range among {
			st, err := c.nodes[id].h.Status(g)
			if err != nil {
				return false
			}
			if lead == 0 {
				lead, term = st.Lead, st.GetTerm()
			}
			if st.Lead == 0 || st.Lead != lead || st.GetTerm() != term {
				return false
			}
			if id == lead && st.RaftState != raft.StateLeader {
				return false
			}
		}
		return slices.Contains(among, lead)
	})
	return lead
}

// propose proposes cmd in g until a leader among the given nodes takes it.
func (c *cluster) propose(g uint64, cmd string, among ...uint64) uint64 {
	c.t.Helper()
	for attempt := 0; ; attempt++ {
		lead := c.leader(g, among...)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		idx, err := c.nodes[lead].h.Propose(ctx, g, []byte(cmd))
		cancel()
		if err == nil {
			return idx
		}
		var nl *NotLeaderError
		if !errors.As(err, &nl) || attempt > 20 {
			c.t.Fatalf("propose %q in group %d on node %d: %v", cmd, g, lead, err)
		}
	}
}

// converge waits until every live node of among has applied exactly want in
// group g.
func (c *cluster) converge(g uint64, want []string, among ...uint64) {
	c.t.Helper()
	if len(among) == 0 {
		among = voters
	}
	c.waitFor(fmt.Sprintf("group %d to converge on %d commands", g, len(want)), func() bool {
		for _, id := range among {
			_, cmds, _ := c.nodes[id].sm(g).state()
			if len(cmds) < len(want) {
				return false
			}
		}
		return true
	})
	for _, id := range among {
		_, cmds, _ := c.nodes[id].sm(g).state()
		if !slices.Equal(cmds, want) {
			c.t.Fatalf("group %d on node %d applied %v, want %v", g, id, cmds, want)
		}
	}
}

// TestReplication elects a leader in each of several groups, replicates
// proposals, and checks every node applied the same commands in the same
// order; a follower refuses proposals naming the leader; ReadIndex returns
// an index covering what was committed before it.
func TestReplication(t *testing.T) {
	c := newCluster(t, 4, nil)
	want := map[uint64][]string{}
	var lastIndex map[uint64]uint64 = map[uint64]uint64{}
	for i := range 25 {
		for _, g := range c.groups {
			cmd := fmt.Sprintf("g%d-c%d", g, i)
			lastIndex[g] = c.propose(g, cmd)
			want[g] = append(want[g], cmd)
		}
	}
	for _, g := range c.groups {
		c.converge(g, want[g])
		lead := c.leader(g)
		follower := voters[(slices.Index(voters, lead)+1)%len(voters)]
		_, err := c.nodes[follower].h.Propose(context.Background(), g, []byte("x"))
		var nl *NotLeaderError
		if !errors.As(err, &nl) || nl.Leader != lead {
			t.Fatalf("group %d: proposal on follower %d: %v, want a NotLeaderError naming %d", g, follower, err, lead)
		}
		for _, id := range []uint64{lead, follower} {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			idx, err := c.nodes[id].h.ReadIndex(ctx, g)
			cancel()
			if err != nil {
				t.Fatalf("group %d: read index on node %d: %v", g, id, err)
			}
			applied, _, _ := c.nodes[id].sm(g).state()
			if idx < lastIndex[g] || applied < idx {
				t.Fatalf("group %d: read index %d on node %d, last proposal at %d, applied %d", g, idx, id, lastIndex[g], applied)
			}
		}
	}
	st := c.nodes[1].h.Stats()
	if st.Commits == 0 || st.Applied == 0 || st.Rounds == 0 {
		t.Fatalf("stats %+v", st)
	}
	if _, err := c.nodes[1].h.Propose(context.Background(), 999, []byte("x")); !errors.Is(err, ErrGroupNotFound) {
		t.Fatalf("proposal to an unknown group: %v", err)
	}
}

// TestLeaderFailover cuts the leader off, checks a new leader is elected
// among the rest with every committed entry kept, that the old leader's
// proposal in the minority never applies, and that the old leader catches
// up once the partition heals.
func TestLeaderFailover(t *testing.T) {
	c := newCluster(t, 2, nil)
	g := c.groups[0]
	var want []string
	for i := range 10 {
		cmd := fmt.Sprintf("before-%d", i)
		c.propose(g, cmd)
		want = append(want, cmd)
	}
	c.converge(g, want)
	old := c.leader(g)
	c.net.Isolate(old)
	var rest []uint64
	for _, id := range voters {
		if id != old {
			rest = append(rest, id)
		}
	}
	// The old leader takes a proposal it can never commit, and answers it
	// as ambiguous when CheckQuorum makes it step down.
	lost := make(chan error, 1)
	go func() {
		_, err := c.nodes[old].h.Propose(context.Background(), g, []byte("lost"))
		lost <- err
	}()
	lead := c.leader(g, rest...)
	if lead == old {
		t.Fatalf("the isolated node %d is still the leader", old)
	}
	var err error
	c.waitFor("the old leader to give up its proposal", func() bool {
		select {
		case err = <-lost:
			return true
		default:
			return false
		}
	})
	var nl *NotLeaderError
	if !errors.Is(err, ErrAmbiguous) && !errors.As(err, &nl) {
		t.Fatalf("proposal on the isolated leader: %v, want ErrAmbiguous or NotLeaderError", err)
	}
	c.converge(g, want, rest...)
	for i := range 10 {
		cmd := fmt.Sprintf("after-%d", i)
		c.propose(g, cmd, rest...)
		want = append(want, cmd)
	}
	c.converge(g, want, rest...)
	c.net.Heal()
	c.converge(g, want)
	if l := c.leader(g); l == old {
		t.Logf("node %d leads again", old)
	}
}

// TestCatchUpThroughLog isolates a follower while entries commit, and
// checks it catches up from the leader's log, without a snapshot.
func TestCatchUpThroughLog(t *testing.T) {
	c := newCluster(t, 1, nil)
	g := c.groups[0]
	lead := c.leader(g)
	lag := voters[(slices.Index(voters, lead)+1)%len(voters)]
	c.net.Isolate(lag)
	var want []string
	for i := range 40 {
		cmd := fmt.Sprintf("c%d", i)
		c.propose(g, cmd, lead, voters[(slices.Index(voters, lead)+2)%len(voters)])
		want = append(want, cmd)
	}
	if _, cmds, _ := c.nodes[lag].sm(g).state(); len(cmds) != 0 {
		t.Fatalf("isolated node applied %v", cmds)
	}
	c.net.Heal()
	c.converge(g, want)
	if _, _, restores := c.nodes[lag].sm(g).state(); restores != 0 {
		t.Fatalf("the lagging node restored %d snapshots; it should have caught up from the log", restores)
	}
}

// TestCatchUpThroughSnapshot truncates the log past an isolated follower,
// and checks it catches up from a snapshot.
func TestCatchUpThroughSnapshot(t *testing.T) {
	for _, encoding := range []bool{false, true} {
		t.Run(fmt.Sprintf("encoding=%v", encoding), func(t *testing.T) { testCatchUpThroughSnapshot(t, encoding) })
	}
}

// testCatchUpThroughSnapshot with encoding uses state machines that encode
// their snapshots off the loop (SnapshotEncoder).
func testCatchUpThroughSnapshot(t *testing.T, encoding bool) {
	c := newClusterNet(t, 1, func(cfg *Config) { cfg.SnapshotEntries = 10; cfg.KeepEntries = 2 }, memStore, false, 0, encoding)
	g := c.groups[0]
	lead := c.leader(g)
	other := voters[(slices.Index(voters, lead)+2)%len(voters)]
	lag := voters[(slices.Index(voters, lead)+1)%len(voters)]
	c.net.Isolate(lag)
	var want []string
	for i := range 60 {
		cmd := fmt.Sprintf("c%d", i)
		c.propose(g, cmd, lead, other)
		want = append(want, cmd)
	}
	c.converge(g, want, lead, other)
	// The leader's log no longer holds what the follower lacks (an
	// encoded snapshot is recorded, and the log truncated, a few rounds
	// after it is taken).
	lagApplied, _, _ := c.nodes[lag].sm(g).state()
	c.waitFor("the leader to truncate its log", func() bool {
		return c.firstIndex(lead, g) > lagApplied+1 && c.nodes[lead].h.Stats().Snapshots > 0
	})
	c.net.Heal()
	c.converge(g, want)
	if _, _, restores := c.nodes[lag].sm(g).state(); restores == 0 {
		t.Fatal("the lagging node caught up without a snapshot")
	}
	if c.nodes[lag].h.Stats().Restores == 0 || c.nodes[lead].h.Stats().Snapshots == 0 {
		t.Fatalf("stats: follower %+v, leader %+v", c.nodes[lag].h.Stats(), c.nodes[lead].h.Stats())
	}
}

// TestRestart stops a node, commits more without it, restarts it from its
// store alone (isolated: it must recover what it had from its own log and
// snapshot), then lets it catch up.
func TestRestart(t *testing.T) {
	for _, durable := range []bool{false, true} {
		t.Run(fmt.Sprintf("durable=%v", durable), func(t *testing.T) { testRestart(t, durable) })
	}
}

func testRestart(t *testing.T, durable bool) {
	c := newClusterOn(t, 2, func(cfg *Config) { cfg.SnapshotEntries = 8 }, memStore, durable)
	want := map[uint64][]string{}
	for i := range 20 {
		for _, g := range c.groups {
			cmd := fmt.Sprintf("g%d-a%d", g, i)
			c.propose(g, cmd)
			want[g] = append(want[g], cmd)
		}
	}
	for _, g := range c.groups {
		c.converge(g, want[g])
	}
	const down = 3
	before := map[uint64][]string{}
	appliedBefore := map[uint64]uint64{}
	for _, g := range c.groups {
		appliedBefore[g], before[g], _ = c.nodes[down].sm(g).state()
	}
	c.stop(down)
	for i := range 15 {
		for _, g := range c.groups {
			cmd := fmt.Sprintf("g%d-b%d", g, i)
			c.propose(g, cmd, 1, 2)
			want[g] = append(want[g], cmd)
		}
	}
	c.net.Isolate(down)
	c.start(down)
	c.net.Isolate(down)
	for _, g := range c.groups {
		sm := c.nodes[down].sm(g)
		sm.mu.Lock()
		loaded := sm.loaded
		sm.mu.Unlock()
		if want := map[bool]uint64{true: appliedBefore[g]}[durable]; loaded != want {
			t.Fatalf("group %d: the state machine reopened at %d, want %d", g, loaded, want)
		}
	}
	for _, g := range c.groups {
		c.waitFor("the restarted node to recover its state", func() bool {
			_, cmds, _ := c.nodes[down].sm(g).state()
			return len(cmds) >= len(before[g])
		})
		_, cmds, _ := c.nodes[down].sm(g).state()
		if !slices.Equal(cmds, before[g]) {
			t.Fatalf("group %d: the restarted node recovered %v, want %v", g, cmds, before[g])
		}
	}
	c.net.Heal()
	for _, g := range c.groups {
		c.converge(g, want[g])
	}
}

// TestQuiescence checks that idle groups stop ticking on every node (no
// message flows while the nodes keep ticking), that a proposal wakes its
// group, and that NodeDown lets the followers of a quiesced group whose
// leader died elect a new one.
func TestQuiescence(t *testing.T) {
	c := newCluster(t, 5, func(cfg *Config) { cfg.Quiesce = true })
	want := map[uint64][]string{}
	for i := range 5 {
		for _, g := range c.groups {
			cmd := fmt.Sprintf("g%d-%d", g, i)
			c.propose(g, cmd)
			want[g] = append(want[g], cmd)
		}
	}
	for _, g := range c.groups {
		c.converge(g, want[g])
	}
	allQuiet := func() bool {
		for _, id := range voters {
			if c.nodes[id].h.Quiesced() != len(c.groups) {
				return false
			}
		}
		return true
	}
	c.waitFor("every group to quiesce on every node", allQuiet)
	// Messages sent before the last group quiesced may still wake a group
	// for a moment; then 50 ticks must pass with no message at all (a
	// ticking group would heartbeat at every tick).
	silent := false
	for attempt := 0; attempt < 20 && !silent; attempt++ {
		sent := c.net.Stats().Sent
		for range 50 {
			c.tick()
			time.Sleep(time.Millisecond)
		}
		silent = c.net.Stats().Sent == sent && allQuiet()
	}
	if !silent {
		t.Fatal("quiesced groups kept sending messages while the nodes ticked")
	}

	g := c.groups[0]
	c.propose(g, "wake")
	want[g] = append(want[g], "wake")
	c.converge(g, want[g])
	c.waitFor("the woken group to quiesce again", allQuiet)

	old := c.leader(g)
	c.net.Isolate(old)
	var rest []uint64
	for _, id := range voters {
		if id != old {
			rest = append(rest, id)
			c.nodes[id].h.NodeDown(old)
		}
	}
	if lead := c.leader(g, rest...); lead == old {
		t.Fatalf("node %d still leads", old)
	}
	c.propose(g, "after", rest...)
	want[g] = append(want[g], "after")
	c.converge(g, want[g], rest...)
}

// TestMalformedMessages sends a leader messages raft would panic on or
// that are not its own, and checks they are dropped and counted while the
// group keeps working.
func TestMalformedMessages(t *testing.T) {
	c := newCluster(t, 1, nil)
	g := c.groups[0]
	lead := c.leader(g)
	from := voters[(slices.Index(voters, lead)+1)%len(voters)]
	evil := c.net.Join(9)
	defer evil.Close()
	evil.SetHandler(func(uint64, []transport.Envelope) {})
	before := c.nodes[lead].h.Stats().DroppedMessages
	evil.Send(lead, []transport.Envelope{
		{Group: g, Msg: &raftpb.Message{Type: raftpb.MsgHeartbeatResp.Enum(), From: proto.Uint64(from), To: proto.Uint64(lead), Term: proto.Uint64(1 << 20), Context: []byte("abc")}},
		{Group: 999, Msg: &raftpb.Message{Type: raftpb.MsgApp.Enum(), From: proto.Uint64(from), To: proto.Uint64(lead)}},
		{Group: g, Msg: &raftpb.Message{Type: raftpb.MsgApp.Enum(), From: proto.Uint64(from), To: proto.Uint64(77)}},
		{Group: g, Msg: &raftpb.Message{Type: raftpb.MsgHup.Enum(), From: proto.Uint64(from), To: proto.Uint64(lead)}},
	})
	c.waitFor("the messages to be dropped", func() bool { return c.nodes[lead].h.Stats().DroppedMessages == before+4 })
	c.propose(g, "still works")
	c.converge(g, []string{"still works"})
}

// TestReplicationUnderFaults replicates through a network that drops,
// duplicates, delays and reorders messages, and checks that every node
// ends with the same commands in the same order, including every
// acknowledged one. A proposal whose outcome is unknown (timeout) is
// retried, so a command may appear twice, but identically everywhere.
func TestReplicationUnderFaults(t *testing.T) {
	c := newCluster(t, 3, nil)
	for _, g := range c.groups {
		c.leader(g)
	}
	c.net.SetFaults(transport.Faults{Drop: 0.1, Duplicate: 0.1, MaxDelay: 2 * time.Millisecond, Reorder: true})
	acked := map[uint64][]string{}
	for i := range 15 {
		for _, g := range c.groups {
			cmd := fmt.Sprintf("g%d-%d", g, i)
			for attempt := 0; ; attempt++ {
				if attempt > 200 {
					t.Fatalf("proposal %q never succeeded", cmd)
				}
				var lead uint64
				c.waitFor("a leader", func() bool {
					for _, id := range voters {
						if st, err := c.nodes[id].h.Status(g); err == nil && st.RaftState == raft.StateLeader {
							lead = id
							return true
						}
					}
					return false
				})
				ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
				done := make(chan error, 1)
				go func() {
					_, err := c.nodes[lead].h.Propose(ctx, g, []byte(cmd))
					done <- err
				}()
				var err error
				c.waitFor("the proposal to end", func() bool {
					select {
					case err = <-done:
						return true
					default:
						return false
					}
				})
				cancel()
				if err == nil {
					acked[g] = append(acked[g], cmd)
					break
				}
			}
		}
	}
	c.net.SetFaults(transport.Faults{})
	for _, g := range c.groups {
		var ref []string
		c.waitFor(fmt.Sprintf("group %d to converge", g), func() bool {
			_, ref, _ = c.nodes[1].sm(g).state()
			for _, id := range voters[1:] {
				_, cmds, _ := c.nodes[id].sm(g).state()
				if !slices.Equal(cmds, ref) {
					return false
				}
			}
			// Every acknowledged command is there, in acknowledgement order.
			i := 0
			for _, cmd := range ref {
				if i < len(acked[g]) && cmd == acked[g][i] {
					i++
				}
			}
			return i == len(acked[g])
		})
	}
	if st := c.net.Stats(); st.Dropped == 0 || st.Duplicated == 0 {
		t.Fatalf("no faults were injected: %+v", st)
	}
}

// TestStop checks that a stopped host refuses work with ErrStopped.
func TestStop(t *testing.T) {
	c := newCluster(t, 1, nil)
	g := c.groups[0]
	c.propose(g, "x")
	h := c.nodes[1].h
	h.Stop()
	if _, err := h.Propose(context.Background(), g, []byte("y")); !errors.Is(err, ErrStopped) {
		t.Fatalf("propose after stop: %v", err)
	}
	if _, err := h.ReadIndex(context.Background(), g); !errors.Is(err, ErrStopped) {
		t.Fatalf("read index after stop: %v", err)
	}
	if _, err := h.Status(g); !errors.Is(err, ErrStopped) {
		t.Fatalf("status after stop: %v", err)
	}
	h.Stop() // twice is fine
	_ = c.nodes[1].tr.Close()
	_ = c.nodes[1].db.Close()
	c.nodes[1].h = nil
	if _, err := c.nodes[2].h.Propose(context.Background(), g, make([]byte, 9<<20)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("oversized proposal: %v", err)
	}
}

// TestOverTCP runs three hosts over the TCP transport on loopback.
func TestOverTCP(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	trs := map[uint64]*transport.TCP{}
	for _, id := range voters {
		tr, err := transport.NewTCP(transport.TCPConfig{NodeID: id, ClusterKey: key, Listen: "127.0.0.1:0", Logf: t.Logf,
			MinBackoff: 5 * time.Millisecond, MaxBackoff: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		trs[id] = tr
	}
	for _, id := range voters {
		for _, p := range voters {
			if p != id {
				trs[id].AddPeer(p, trs[p].Addr().String())
			}
		}
	}
	hosts := map[uint64]*Host{}
	sms := map[uint64]*kv{}
	var mu sync.Mutex
	for _, id := range voters {
		db, err := storage.Open(storage.Options{Dir: "/n", FS: vfs.NewMem(), Reserve: -1, CacheBytes: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		h, err := New(Config{NodeID: id, Store: raftlog.Open(db), Transport: trs[id], Logf: t.Logf,
			NewStateMachine: func(uint64) (StateMachine, error) {
				s := &kv{}
				mu.Lock()
				sms[id] = s
				mu.Unlock()
				return s, nil
			}})
		if err != nil {
			t.Fatal(err)
		}
		hosts[id] = h
		t.Cleanup(func() {
			h.Stop()
			_ = trs[id].Close()
			_ = db.Close()
		})
		if err := h.CreateGroup(7, voters); err != nil {
			t.Fatal(err)
		}
	}
	tickUntil := func(what string, fn func() bool) {
		deadline := time.Now().Add(60 * time.Second)
		for !fn() {
			if time.Now().After(deadline) {
				t.Fatalf("gave up waiting for %s", what)
			}
			for _, h := range hosts {
				h.Tick()
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	var want []string
	for i := range 20 {
		cmd := fmt.Sprintf("tcp-%d", i)
		tickUntil("a proposal to succeed", func() bool {
			for _, h := range hosts {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				_, err := h.Propose(ctx, 7, []byte(cmd))
				cancel()
				if err == nil {
					return true
				}
			}
			return false
		})
		want = append(want, cmd)
	}
	tickUntil("every node to apply everything", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, id := range voters {
			if _, cmds, _ := sms[id].state(); !slices.Equal(cmds, want) {
				return false
			}
		}
		return true
	})
}

// TestTransferLeadership hands a group's leadership to another replica,
// which then takes proposals; a follower cannot hand it over.
func TestTransferLeadership(t *testing.T) {
	c := newCluster(t, 1, nil)
	g := c.groups[0]
	old := c.leader(g)
	to := voters[0]
	if to == old {
		to = voters[1]
	}
	var nl *NotLeaderError
	if err := c.nodes[to].h.TransferLeadership(g, old); !errors.As(err, &nl) {
		t.Fatalf("a follower handed the leadership over: %v", err)
	}
	if err := c.nodes[old].h.TransferLeadership(g, to); err != nil {
		t.Fatal(err)
	}
	c.waitFor(fmt.Sprintf("node %d to lead", to), func() bool {
		st, err := c.nodes[to].h.Status(g)
		return err == nil && st.Lead == to && st.RaftState == raft.StateLeader
	})
	if lead := c.leader(g); lead != to {
		t.Fatalf("node %d leads, want %d", lead, to)
	}
	c.propose(g, "after-transfer", to)
	c.converge(g, []string{"after-transfer"})
}

// TestReadIndexDuplicateResponses duplicates every message, so a
// follower's ReadIndex request and the leader's answer can arrive twice
// and raft reports the read's state twice: each read must be answered once,
// and the node's loop must go on (a second answer to a waiter that has
// its one answer would block the loop for good).
func TestReadIndexDuplicateResponses(t *testing.T) {
	c := newCluster(t, 1, nil)
	g := c.groups[0]
	lead := c.leader(g)
	follower := voters[0]
	if follower == lead {
		follower = voters[1]
	}
	c.net.SetFaults(transport.Faults{Duplicate: 1})
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			c.tick()
			time.Sleep(time.Millisecond)
		}
	}()
	defer func() { stop.Store(true); wg.Wait() }()
	for i := range 100 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := c.nodes[follower].h.ReadIndex(ctx, g)
		cancel()
		if err != nil {
			t.Fatalf("read %d on the follower: %v", i, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := c.nodes[lead].h.Propose(ctx, g, []byte("still-alive")); err != nil {
		t.Fatalf("a proposal after the reads: %v", err)
	}
}

// TestQuiescedRestart restarts a follower while its group is quiesced: it
// must learn the leader (which only ever sends it quiescing heartbeats)
// and serve a ReadIndex, and the group must quiesce again.
func TestQuiescedRestart(t *testing.T) {
	c := newClusterOn(t, 1, func(cfg *Config) { cfg.Quiesce = true }, memStore, true)
	g := c.groups[0]
	c.propose(g, "a")
	c.converge(g, []string{"a"})
	quiet := func(ids ...uint64) func() bool {
		return func() bool {
			for _, id := range ids {
				if c.nodes[id].h.Quiesced() != 1 {
					return false
				}
			}
			return true
		}
	}
	c.waitFor("the group to quiesce", quiet(voters...))
	lead := c.leader(g)
	down := voters[0]
	if down == lead {
		down = voters[1]
	}
	c.stop(down)
	c.start(down)
	c.waitFor("the restarted follower to learn the leader", func() bool {
		st, err := c.nodes[down].h.Status(g)
		return err == nil && st.Lead == lead
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var idx uint64
	var err error
	c.waitFor("a read on the restarted follower", func() bool {
		idx, err = c.nodes[down].h.ReadIndex(ctx, g)
		return err == nil
	})
	if idx < 11 {
		t.Fatalf("read index %d, before the committed command", idx)
	}
	c.waitFor("the group to quiesce again", quiet(voters...))
}

// TestReadIndexLostWithLeader asks a follower for a ReadIndex while its
// leader is cut off: raft forwards the read to that leader and nothing
// answers it, so once the follower learns of a new leader the read must
// fail with ErrReadLost (and succeed when asked again), not wait forever.
func TestReadIndexLostWithLeader(t *testing.T) {
	c := newCluster(t, 1, nil)
	g := c.groups[0]
	c.propose(g, "a")
	c.converge(g, []string{"a"})
	lead := c.leader(g)
	var follower uint64
	for _, id := range voters {
		if id != lead {
			follower = id
			break
		}
	}
	c.net.Isolate(lead)
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		_, err := c.nodes[follower].h.ReadIndex(ctx, g)
		done <- err
	}()
	var err error
	c.waitFor("the read to end once another leader is elected", func() bool {
		select {
		case err = <-done:
			return true
		default:
			return false
		}
	})
	if err != nil && !errors.Is(err, ErrReadLost) {
		t.Fatalf("the read failed with %v, want ErrReadLost or success", err)
	}
	var others []uint64
	for _, id := range voters {
		if id != lead {
			others = append(others, id)
		}
	}
	c.leader(g, others...)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := c.nodes[follower].h.ReadIndex(ctx, g); err != nil {
		t.Fatalf("the read asked again: %v", err)
	}
	c.net.Heal()
}
