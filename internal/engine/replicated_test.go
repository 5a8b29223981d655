package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"go.etcd.io/raft/v3"

	"github.com/parsecdb/parsec/internal/replication/host"
	"github.com/parsecdb/parsec/internal/replication/raftlog"
	"github.com/parsecdb/parsec/internal/replication/transport"
	"github.com/parsecdb/parsec/internal/storage"
)

// lateReplicator lets an engine be opened before the host it proposes to.
// A split's children get groups with the same members, and the replica
// that led the parent campaigns for them.
type lateReplicator struct {
	h       atomic.Pointer[host.Host]
	members []uint64
	splits  sync.WaitGroup
	// settled and unsettled count Settle's successes and failures.
	settled, unsettled atomic.Int64
}

func (l *lateReplicator) Propose(ctx context.Context, g uint64, data []byte) (uint64, error) {
	return l.h.Load().Propose(ctx, g, data)
}

func (l *lateReplicator) Split(parent uint64, children []uint64) {
	h := l.h.Load()
	led := false
	l.splits.Add(1)
	go func() { // the host's loop is calling: do not wait for it here
		defer l.splits.Done()
		if st, err := h.Status(parent); err == nil && st.Lead == st.ID {
			led = true
		}
		for _, g := range children {
			if err := h.CreateGroup(g, l.members); err != nil && !errors.Is(err, host.ErrStopped) {
				panic(err)
			}
			if led {
				_ = h.Campaign(g)
			}
		}
	}()
}

// CreateGroups creates the groups of a new container's partitions with
// the members its record names.
func (l *lateReplicator) Leads(g uint64) bool {
	st, err := l.h.Load().Status(g)
	return err == nil && st.Lead == st.ID
}

func (l *lateReplicator) Barrier(ctx context.Context, groups []uint64) error {
	for _, g := range groups {
		for {
			_, err := l.h.Load().ReadIndex(ctx, g)
			var nl *host.NotLeaderError
			if err == nil {
				break
			}
			if !errors.As(err, &nl) || (nl.Leader != 0 && !errors.Is(err, host.ErrReadLost)) || ctx.Err() != nil {
				return err
			}
			time.Sleep(time.Millisecond)
		}
	}
	return nil
}

// Settle asks the group's leader for a read index, which this node
// applies before the read returns; as the cluster's Node does, it refuses
// after a timeout (not a lost leadership) while this node leads.
func (l *lateReplicator) Settle(ctx context.Context, g uint64, cause error) (uint64, error) {
	h := l.h.Load()
	if !errors.Is(cause, host.ErrAmbiguous) {
		st, err := h.Status(g)
		if err != nil {
			return 0, err
		}
		if st.RaftState == raft.StateLeader {
			l.unsettled.Add(1)
			return 0, errors.New("this node still leads the group")
		}
	}
	if err := l.Barrier(ctx, []uint64{g}); err != nil {
		l.unsettled.Add(1)
		return 0, err
	}
	l.settled.Add(1)
	lead, _ := h.Leader(g)
	return lead, nil
}

// Lead refuses unless this node leads group: the tests' nodes have no
// way to ask one another.
func (l *lateReplicator) Lead(_ context.Context, g uint64) error {
	if l.Leads(g) {
		return nil
	}
	st, _ := l.h.Load().Status(g)
	return &host.NotLeaderError{Group: g, Node: st.ID, Leader: st.Lead}
}

func (l *lateReplicator) CanSplit(g uint64) error {
	behind, err := l.h.Load().Behind(g)
	if err == nil && len(behind) > 0 {
		err = fmt.Errorf("replicas %v are behind the log", behind)
	}
	return err
}

func (l *lateReplicator) CreateGroups(groups []uint64, members []uint64) {
	h := l.h.Load()
	for _, g := range groups {
		if err := h.CreateGroup(g, members); err != nil && !errors.Is(err, host.ErrStopped) {
			panic(err)
		}
	}
}

// replNode is one node: a store, an engine whose partitions replicate
// through a host on that store, and the host.
type replNode struct {
	id  uint64
	st  *storage.DB
	e   *Engine
	h   *host.Host
	rep *lateReplicator
}

// newPartitionHost starts node id's host on the store st, whose groups
// are the partitions of c (each created with members), and points rep at it.
func newPartitionHost(t testing.TB, st *storage.DB, net *transport.Network, id uint64, members []uint64, c *Container, rep *lateReplicator) *host.Host {
	t.Helper()
	h, err := host.New(host.Config{NodeID: id, Store: raftlog.Open(st), Transport: net.Join(id), SnapshotEntries: 1 << 60,
		Logf: func(string, ...any) {},
		NewStateMachine: func(g uint64) (host.StateMachine, error) {
			for _, p := range c.Partitions() {
				if p.GroupID() == g {
					return p.Replica(), nil
				}
			}
			return nil, fmt.Errorf("no partition of group %d", g)
		}})
	if err != nil {
		t.Fatal(err)
	}
	rep.h.Store(h)
	for _, p := range c.Partitions() {
		if err := h.CreateGroup(p.GroupID(), members); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// ticking ticks the hosts every tick until the returned function is called.
func ticking(tick time.Duration, hosts ...*host.Host) (stop func()) {
	var stopped atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stopped.Load() {
			for _, h := range hosts {
				h.Tick()
			}
			time.Sleep(tick)
		}
	}()
	return func() { stopped.Store(true); wg.Wait() }
}

// startReplicated starts nodes with the given ids on net, each with the
// same catalog (a database and container "c" of 4 partitions, created in
// the same order, so with the same resource ids), and a raft group per
// partition over all of them, led by the first; every node ticks once per
// tick (the election timeout is 10 ticks).
func startReplicated(t testing.TB, net *transport.Network, ids []uint64, tick time.Duration) []*replNode {
	var nodes []*replNode
	for _, id := range ids {
		st, err := storage.Open(storage.Options{InMemory: true})
		if err != nil {
			t.Fatal(err)
		}
		rep := &lateReplicator{members: ids}
		e, err := Open(st, Options{PartitionMaxRUs: 1000, NoThrottle: true, manualStorageSplits: true, TTLSweepInterval: -1,
			Now: func() time.Time { return time.Unix(1_800_000_000, 0) }, Replicator: rep})
		if err != nil {
			t.Fatal(err)
		}
		h := newPartitionHost(t, st, net, id, ids, mustContainer(t, e, 4000), rep)
		nodes = append(nodes, &replNode{id: id, st: st, e: e, h: h, rep: rep})
	}
	hosts := make([]*host.Host, len(nodes))
	for i, n := range nodes {
		hosts[i] = n.h
	}
	stopTicking := ticking(tick, hosts...)
	t.Cleanup(func() {
		stopTicking()
		for _, n := range nodes {
			n.rep.splits.Wait()
			n.e.Close()
			n.h.Stop()
			n.st.Close()
		}
	})
	c, _ := nodes[0].e.Container("db", "c")
	for _, p := range c.Partitions() {
		if err := nodes[0].h.Campaign(p.GroupID()); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			st, err := nodes[0].h.Status(p.GroupID())
			if err == nil && st.Lead == nodes[0].id {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("group of range %s elects no leader", p.ID())
			}
			time.Sleep(time.Millisecond)
		}
	}
	return nodes
}

// TestReplicatedPartitionsMatchLocal runs one random sequence of item
// commands (every kind of write, batches, conditional patches, scripts) on
// an engine whose partitions replicate through a one-node raft group, and
// on a single node's engine (its local log): every outcome, and the
// stores' contents (but for the applied-index records), are the same.
func TestReplicatedPartitionsMatchLocal(t *testing.T) {
	nodes := startReplicated(t, transport.NewNetwork(1, 0), []uint64{1}, time.Millisecond)
	plain, st0 := testEngineOpts(t, "", Options{PartitionMaxRUs: 1000, NoThrottle: true, manualStorageSplits: true, TTLSweepInterval: -1,
		Now: func() time.Time { return time.Unix(1_800_000_000, 0) }})
	defer plain.Close()
	c0 := mustContainer(t, plain, 4000)
	c1, _ := nodes[0].e.Container("db", "c")
	for _, c := range []*Container{c0, c1} {
		if _, err := c.CreateScript(StoredProcedure, ScriptSpec{ID: "bump", Body: replayProcedure}); err != nil {
			t.Fatal(err)
		}
	}
	r0, r1 := rand.New(rand.NewPCG(4, 4)), rand.New(rand.NewPCG(4, 4))
	for i := range 400 {
		e0, e1 := randomCommand(c0, r0), randomCommand(c1, r1)
		if fmt.Sprint(e0) != fmt.Sprint(e1) {
			t.Fatalf("command %d: plain %v, replicated %v", i, e0, e1)
		}
	}
	want, got := containerState(t, st0, c0.rid), containerState(t, nodes[0].st, c1.rid)
	// Raft's own entries (a new leader's) take indexes too: the applied
	// indexes differ, the rest is the same.
	for _, p := range c1.Partitions() {
		delete(got, string(storage.PartitionAppliedKey(c1.rid, p.ID())))
		delete(want, string(storage.PartitionAppliedKey(c0.rid, p.ID())))
	}
	if len(got) != len(want) || len(want) < 400 {
		t.Fatalf("replicated store has %d keys, plain %d", len(got), len(want))
	}
	for _, p := range c1.Partitions() {
		idx, err := p.AppliedIndex()
		if err != nil || idx < 10 || p.LSN() < 10 {
			t.Fatalf("range %s: applied index %d, LSN %d (%v): the writes did not go through raft", p.ID(), idx, p.LSN(), err)
		}
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("key %x: replicated %q, plain %q", k, got[k], v)
		}
	}
}

// TestReplicatedPartitionsOnThreeNodes writes through the leader of every
// partition's group (concurrently, so entries carry groups of commands),
// splits two partitions through their logs and writes on, then checks that
// the followers applied the same entries: the same ranges, applied indexes
// and LSNs, the same store contents, and the same items read on them; a
// write on a follower is refused (it does not lead). Then it cuts the
// leader off (see below).
func TestReplicatedPartitionsOnThreeNodes(t *testing.T) {
	net := transport.NewNetwork(2, 0)
	nodes := startReplicated(t, net, []uint64{1, 2, 3}, 5*time.Millisecond)
	cs := make([]*Container, len(nodes))
	for i, n := range nodes {
		cs[i], _ = n.e.Container("db", "c")
		if _, err := cs[i].CreateScript(StoredProcedure, ScriptSpec{ID: "bump", Body: replayProcedure}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	write := func(seed uint64) {
		for w := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(seed, uint64(w)))
				for range 100 {
					if err := randomCommand(cs[0], rng); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
	}
	write(9)
	// Two splits through the log, then more writes, which go to the
	// children's groups (led by the parent's leader).
	leader := cs[0]
	for _, p := range leader.Partitions()[:2] {
		if _, err := leader.splitForStorage(p); err != nil {
			t.Fatalf("split range %s: %v", p.ID(), err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, p := range leader.Partitions() {
		// A child's election may go to another replica, which created its
		// group first: it hands the leadership over.
		for {
			st, err := nodes[0].h.Status(p.GroupID())
			if err == nil && st.Lead == 1 {
				break
			}
			if err == nil && st.Lead != 0 {
				_ = nodes[st.Lead-1].h.TransferLeadership(p.GroupID(), 1)
			}
			if time.Now().After(deadline) {
				t.Fatalf("the group of range %s has no leader on node 1", p.ID())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	if n := len(leader.Partitions()); n != 6 {
		t.Fatalf("%d partitions after two splits, want 6", n)
	}
	write(19)
	for _, p := range leader.Partitions() {
		want, err := p.AppliedIndex()
		if err != nil || want < 10 {
			t.Fatalf("range %s: the leader applied index %d (%v)", p.ID(), want, err)
		}
		for _, c := range cs[1:] {
			fp, err := c.PartitionByID(p.ID())
			if err != nil {
				t.Fatal(err)
			}
			for {
				got, err := fp.AppliedIndex()
				if err != nil {
					t.Fatal(err)
				}
				if got >= want && fp.LSN() == p.LSN() {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("range %s: a follower applied %d (LSN %d), the leader %d (LSN %d)", p.ID(), got, fp.LSN(), want, p.LSN())
				}
				time.Sleep(time.Millisecond)
			}
		}
	}
	for i, c := range cs[1:] {
		if fmt.Sprint(c.Info().Ranges) != fmt.Sprint(leader.Info().Ranges) {
			t.Fatalf("node %d has the ranges %v, the leader %v", i+2, c.Info().Ranges, leader.Info().Ranges)
		}
	}
	want := containerState(t, nodes[0].st, leader.rid)
	for i, n := range nodes[1:] {
		got := containerState(t, n.st, leader.rid)
		if len(got) != len(want) || len(want) < 400 {
			t.Fatalf("node %d has %d keys, the leader %d", i+2, len(got), len(want))
		}
		for k, v := range want {
			if got[k] != v {
				t.Fatalf("node %d: key %x holds %q, the leader %q", i+2, k, got[k], v)
			}
		}
	}
	got := readAllFeed(t, cs[2], "", 50, nil)
	if all := readAllFeed(t, leader, "", 50, nil); len(got) != len(all) || len(all) == 0 {
		t.Fatalf("a follower's feed has %d items, the leader's %d", len(got), len(all))
	}
	op, err := cs[1].PrepareWrite(OpUpsert, []byte(`{"id":"x","pk":"k1"}`), key("k1"), true)
	if err != nil {
		t.Fatal(err)
	}
	var nl *host.NotLeaderError
	if _, _, err := cs[1].Execute(&Command{Ops: []Op{op}}, ""); !errors.Is(err, ErrUnavailable) || !errors.As(err, &nl) || nl.Leader != 1 {
		t.Fatalf("a write on a follower: %v, want a refusal naming node 1", err)
	}

	// Failover: the leader is cut off and nodes 2 and 3 elect new leaders.
	// A write on the old leader is not acknowledged and never applied;
	// writes on the new ones are; once healed, every replica has applied
	// exactly the same.
	net.Isolate(1)
	lost := make(chan error, 1)
	go func() {
		op, err := cs[0].PrepareWrite(OpUpsert, []byte(`{"id":"lost","pk":"k1"}`), key("k1"), true)
		if err == nil {
			_, _, err = cs[0].Execute(&Command{Ops: []Op{op}}, "")
		}
		lost <- err
	}()
	// Each group elects node 2 or 3; writes go to the leader of their
	// key's partition, as a gateway would send them.
	leaderOf := func(g uint64) uint64 {
		for {
			for _, n := range nodes[1:] {
				if st, err := n.h.Status(g); err == nil && (st.Lead == 2 || st.Lead == 3) && st.Lead == n.id {
					return n.id
				}
			}
			if time.Now().After(deadline.Add(60 * time.Second)) {
				t.Fatalf("nodes 2 and 3 elect no leader of group %d", g)
			}
			time.Sleep(time.Millisecond)
		}
	}
	for i := range 120 {
		k := fmt.Sprint("k", i%40)
		p := leader.PartitionFor(mustEPK(t, leader, k))
		for attempt := 0; ; attempt++ {
			c := cs[leaderOf(p.GroupID())-1]
			op, err := c.PrepareWrite(OpUpsert, []byte(fmt.Sprintf(`{"id":"after%d","pk":%q,"n":%d}`, i, k, i)), key(k), true)
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = c.Execute(&Command{Ops: []Op{op}}, "")
			if err == nil {
				break
			}
			if attempt > 50 {
				t.Fatalf("write %d: %v", i, err)
			}
			time.Sleep(2 * time.Millisecond) // leadership moved: find the leader again
		}
	}
	if err := <-lost; !errors.Is(err, ErrUnavailable) {
		t.Fatalf("a write on the cut-off leader: %v, want it refused", err)
	}
	net.Heal()
	deadline = time.Now().Add(30 * time.Second)
	for _, p := range leader.Partitions() {
		lead := cs[leaderOf(p.GroupID())-1]
		lp, _ := lead.PartitionByID(p.ID())
		want, _ := lp.AppliedIndex()
		for _, c := range cs {
			fp, _ := c.PartitionByID(p.ID())
			for {
				if got, _ := fp.AppliedIndex(); got >= want && fp.LSN() == lp.LSN() {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("range %s: a replica does not catch up with the new leader", p.ID())
				}
				time.Sleep(time.Millisecond)
			}
		}
	}
	want = containerState(t, nodes[1].st, leader.rid)
	for i, n := range nodes {
		got := containerState(t, n.st, leader.rid)
		if len(got) != len(want) {
			t.Fatalf("after failover, node %d has %d keys, the new leader %d", i+1, len(got), len(want))
		}
		for k, v := range want {
			if got[k] != v {
				t.Fatalf("after failover, node %d: key %x holds %q, the new leader %q", i+1, k, got[k], v)
			}
		}
		op, _ := cs[i].PrepareKeyed(OpRead, "lost", key("k1"), true)
		if _, _, err := cs[i].ReadItem(op); !errors.Is(err, ErrNotFound) {
			t.Fatalf("node %d: the write the cut-off leader did not acknowledge is there (%v)", i+1, err)
		}
		for w := range 120 {
			op, _ := cs[i].PrepareKeyed(OpRead, fmt.Sprint("after", w), key(fmt.Sprint("k", w%40)), true)
			if _, _, err := cs[i].ReadItem(op); err != nil {
				t.Fatalf("node %d: write %d acknowledged after the failover: %v", i+1, w, err)
			}
		}
	}
}

func mustEPK(t *testing.T, c *Container, pk string) string {
	t.Helper()
	e, err := c.epkOf(key(pk))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// BenchmarkReplicatedCreate measures 1 KB creates from 32 goroutines into a
// 4-partition container: on a plain engine, through one-node raft groups,
// and through three-node groups (all in memory, so it is the replication
// path's own cost: proposals, the host's rounds, the messages), ticking
// every 10 ms (a 100 ms election timeout).
func BenchmarkReplicatedCreate(b *testing.B) {
	pad := strings.Repeat("x", 950)
	for _, setup := range []string{"local", "raft-1", "raft-3"} {
		b.Run(setup, func(b *testing.B) {
			var c *Container
			switch setup {
			case "local":
				e, _ := testEngineOpts(b, "", Options{PartitionMaxRUs: 1000, NoThrottle: true, manualStorageSplits: true, TTLSweepInterval: -1})
				b.Cleanup(func() { e.Close() })
				c = mustContainer(b, e, 4000)
			case "raft-1":
				c, _ = startReplicated(b, transport.NewNetwork(3, 0), []uint64{1}, 10*time.Millisecond)[0].e.Container("db", "c")
			default:
				c, _ = startReplicated(b, transport.NewNetwork(3, 0), []uint64{1, 2, 3}, 10*time.Millisecond)[0].e.Container("db", "c")
			}
			var n atomic.Int64
			b.SetParallelism(16)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := n.Add(1)
					pk := fmt.Sprint("p", i%1000)
					w, err := c.PrepareWrite(OpCreate, fmt.Appendf(nil, `{"id":"i%d","pk":%q,"pad":%q}`, i, pk, pad), key(pk), true)
					if err == nil {
						_, _, err = c.Execute(&Command{Ops: []Op{w}}, "")
					}
					if err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// TestReplicatedRestart stops a one-node replicated engine (engine, host
// and store) in the middle of a random sequence of commands and opens it
// again from its files, once cleanly and twice from a crash image (synced
// data only): it goes on from its raft log and applied index, and ends with
// the same outcomes and the same store as a plain engine that ran the whole
// sequence. (The host commits applied state without a sync, but the next
// synced raft write syncs the write-ahead log before it, so these images
// have lost nothing applied: the re-application of the log after a lost
// apply batch is not exercised here.)
func TestReplicatedRestart(t *testing.T) {
	now := func() time.Time { return time.Unix(1_800_000_000, 0) }
	plain, st0 := testEngineOpts(t, "", Options{PartitionMaxRUs: 1000, NoThrottle: true, manualStorageSplits: true, TTLSweepInterval: -1, Now: now})
	defer plain.Close()
	c0 := mustContainer(t, plain, 4000)
	if _, err := c0.CreateScript(StoredProcedure, ScriptSpec{ID: "bump", Body: replayProcedure}); err != nil {
		t.Fatal(err)
	}
	fs := vfs.NewCrashableMem()
	net := transport.NewNetwork(5, 0)
	type instance struct {
		st   *storage.DB
		e    *Engine
		h    *host.Host
		c    *Container
		stop func()
	}
	start := func(first bool) *instance {
		st, err := storage.Open(storage.Options{Dir: "/n1", FS: fs, Reserve: -1})
		if err != nil {
			t.Fatal(err)
		}
		rep := &lateReplicator{members: []uint64{1}}
		e, err := Open(st, Options{PartitionMaxRUs: 1000, NoThrottle: true, manualStorageSplits: true, TTLSweepInterval: -1, Now: now, Replicator: rep})
		if err != nil {
			t.Fatal(err)
		}
		var c *Container
		if first {
			c = mustContainer(t, e, 4000)
			if _, err := c.CreateScript(StoredProcedure, ScriptSpec{ID: "bump", Body: replayProcedure}); err != nil {
				t.Fatal(err)
			}
		} else if c, err = e.Container("db", "c"); err != nil {
			t.Fatal(err)
		}
		h := newPartitionHost(t, st, net, 1, []uint64{1}, c, rep)
		stopTicking := ticking(time.Millisecond, h)
		for _, p := range c.Partitions() {
			_ = h.Campaign(p.GroupID())
			for {
				if s, err := h.Status(p.GroupID()); err == nil && s.Lead == 1 {
					break
				}
				time.Sleep(time.Millisecond)
			}
		}
		return &instance{st: st, e: e, h: h, c: c, stop: func() {
			stopTicking()
			e.Close()
			h.Stop()
			st.Close()
		}}
	}
	n := start(true)
	r0, r1 := rand.New(rand.NewPCG(6, 6)), rand.New(rand.NewPCG(6, 6))
	applied := map[string]uint64{}
	for round := range 3 {
		for i := range 150 {
			e0, e1 := randomCommand(c0, r0), randomCommand(n.c, r1)
			if fmt.Sprint(e0) != fmt.Sprint(e1) {
				t.Fatalf("round %d, command %d: plain %v, replicated %v", round, i, e0, e1)
			}
		}
		for _, p := range n.c.Partitions() {
			idx, err := p.AppliedIndex()
			if err != nil || idx <= applied[p.ID()] {
				t.Fatalf("round %d: range %s applied index %d after %d (%v)", round, p.ID(), idx, applied[p.ID()], err)
			}
			applied[p.ID()] = idx
		}
		if round == 0 {
			n.stop()
		} else {
			img := fs.CrashClone(vfs.CrashCloneCfg{})
			n.stop()
			fs = img
		}
		n = start(false)
		// The host applies the log from the store's applied index on:
		// every range is back where it was before it takes a command.
		for _, p := range n.c.Partitions() {
			deadline := time.Now().Add(30 * time.Second)
			for {
				if idx, _ := p.AppliedIndex(); idx >= applied[p.ID()] {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("range %s does not get back to applied index %d", p.ID(), applied[p.ID()])
				}
				time.Sleep(time.Millisecond)
			}
		}
	}
	defer n.stop()
	want, got := containerState(t, st0, c0.rid), containerState(t, n.st, n.c.rid)
	for _, p := range n.c.Partitions() {
		delete(got, string(storage.PartitionAppliedKey(n.c.rid, p.ID())))
		delete(want, string(storage.PartitionAppliedKey(c0.rid, p.ID())))
	}
	if len(got) != len(want) {
		t.Fatalf("replicated store has %d keys, plain %d", len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("key %x: replicated %q, plain %q", k, got[k], v)
		}
	}
}

// TestEvaluatedEntryOnChangedStateRejected evaluates two creations of the
// same item on the same state and replicates both: the second was
// evaluated on a state the first changed, so the replica rejects it,
// writing nothing, and the item is the first's (without the check, the
// second would overwrite it and the partition would count two items).
func TestEvaluatedEntryOnChangedStateRejected(t *testing.T) {
	nodes := startReplicated(t, transport.NewNetwork(2, 0), []uint64{1}, time.Millisecond)
	c, _ := nodes[0].e.Container("db", "c")
	create := func(n int) *request {
		op, err := c.PrepareWrite(OpCreate, fmt.Appendf(nil, `{"id":"x","pk":"a","n":%d}`, n), key("a"), true)
		if err != nil {
			t.Fatal(err)
		}
		return &request{cmd: &Command{Ops: []Op{op}, Ts: 1}, done: make(chan struct{})}
	}
	first, second := create(1), create(2)
	p := c.PartitionFor(first.cmd.Ops[0].EPK)
	var entries [][]byte
	for _, r := range []*request{first, second} {
		data, err := p.evaluate([]*request{r})
		if err != nil || data == nil || r.err != nil || r.res[0].Err != nil {
			t.Fatalf("evaluation: %v, %v, %+v", err, r.err, r.res)
		}
		entries = append(entries, data)
	}
	for i, data := range entries {
		res, _, err := p.replicate(data, nil)
		if err != nil || len(res) != 1 {
			t.Fatalf("entry %d: %v, %+v", i, err, res)
		}
		if i == 0 && res[0].err != nil {
			t.Fatalf("the first entry was rejected: %v", res[0].err)
		}
		if i == 1 && !errors.Is(res[0].err, errStaleEvaluation) {
			t.Fatalf("the entry evaluated on the state before the first was applied: %v", res[0].err)
		}
	}
	op, err := c.PrepareKeyed(OpRead, "x", key("a"), true)
	if err != nil {
		t.Fatal(err)
	}
	r, _, err := c.ReadItem(op)
	if err != nil || r.Err != nil || !strings.Contains(string(r.Doc), `"n":1`) {
		t.Fatalf("the item is %s (%v, %v), want the first's", r.Doc, err, r.Err)
	}
	if n := p.items.Load(); n != 1 {
		t.Fatalf("the partition counts %d items", n)
	}
}
