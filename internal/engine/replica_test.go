package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/replication/host"
	"github.com/parsecdb/parsec/internal/replication/raftlog"
	"github.com/parsecdb/parsec/internal/replication/transport"
	"github.com/parsecdb/parsec/internal/storage"
)

// TestReplicaCatchesUpBySnapshot runs the replay test's random commands
// (every kind of write, batches, scripts) on three nodes whose hosts use
// the production adapter (Partition.Replica) and truncate their logs, the
// way the cluster configures them: a follower cut off while the leader
// writes and truncates past it catches up by a snapshot streamed from the
// leader's store, installed through Replica().Restore, then from the log.
// Every node then has the same store (applied indexes included), the same
// applied index and LSN per partition, and reads the same items. A
// divergence planted in the adapter fails it: a Restore that skips the
// install (the follower lacks the leader's items), or one that records
// another applied index (the applied-index records differ, and the host's
// next entry does not follow it).
func TestReplicaCatchesUpBySnapshot(t *testing.T) {
	ids := []uint64{1, 2, 3}
	net := transport.NewNetwork(3, 0)
	type node struct {
		st  *storage.DB
		e   *Engine
		h   *host.Host
		rep *lateReplicator
	}
	nodes := make([]*node, len(ids))
	hostOf := func(id uint64) *host.Host { return nodes[id-1].h }
	for i, id := range ids {
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
		c := mustContainer(t, e, 2000)
		h, err := host.New(host.Config{NodeID: id, Store: raftlog.Open(st), Transport: net.Join(id), Logf: func(string, ...any) {},
			SnapshotEntries: 1 << 62, TruncateEntries: 16, SnapshotChunkBytes: 512,
			// A snapshot the leader sent while node 3 was cut off was
			// lost: the leader sends another once its stream has been
			// idle this long.
			SnapshotTimeout: time.Second,
			FetchSnapshot: func(_ context.Context, from, sid, seq uint64) ([]byte, error) {
				return hostOf(from).ServeSnapshot(sid, seq)
			},
			NewStateMachine: func(g uint64) (host.StateMachine, error) { return e.GroupReplica(g), nil }})
		if err != nil {
			t.Fatal(err)
		}
		rep.h.Store(h)
		nodes[i] = &node{st: st, e: e, h: h, rep: rep}
		for _, p := range c.Partitions() {
			if err := h.CreateGroup(p.GroupID(), ids); err != nil {
				t.Fatal(err)
			}
		}
	}
	stop := ticking(2*time.Millisecond, nodes[0].h, nodes[1].h, nodes[2].h)
	t.Cleanup(func() {
		stop()
		for _, n := range nodes {
			n.rep.splits.Wait()
			n.e.Close()
			n.h.Stop()
			n.st.Close()
		}
	})
	cs := make([]*Container, len(nodes))
	for i, n := range nodes {
		cs[i], _ = n.e.Container("db", "c")
	}
	parts := cs[0].Partitions()
	for _, p := range parts {
		if err := nodes[0].h.Campaign(p.GroupID()); err != nil {
			t.Fatal(err)
		}
	}
	waitUntil(t, "node 1 to lead every partition", func() bool {
		for _, p := range parts {
			if !nodes[0].rep.Leads(p.GroupID()) {
				return false
			}
		}
		return true
	})
	if _, err := cs[0].CreateScript(StoredProcedure, ScriptSpec{ID: "bump", Body: replayProcedure}); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for range 40 {
		_ = randomCommand(cs[0], rng)
	}
	// Cut node 3 off; the leader stops counting it once it has not heard
	// from it for an election timeout, and truncates past it.
	net.Isolate(3)
	for range 300 {
		_ = randomCommand(cs[0], rng)
	}
	waitUntil(t, "the leader to truncate past node 3", func() bool {
		for _, p := range parts {
			if b, err := nodes[0].h.Behind(p.GroupID()); err != nil || len(b) == 0 {
				return false
			}
		}
		return true
	})
	net.Heal()
	for range 40 {
		_ = randomCommand(cs[0], rng)
	}
	converged := func() error {
		for _, p := range parts {
			want, err := p.AppliedIndex()
			if err != nil {
				return err
			}
			for i := 1; i < len(nodes); i++ {
				q := cs[i].PartitionFor(p.Range().Min)
				if got, err := q.AppliedIndex(); err != nil || got != want || q.LSN() != p.LSN() {
					return fmt.Errorf("node %d range %s: applied index %d LSN %d (%v); the leader's %d, %d", i+1, p.ID(), got, q.LSN(), err, want, p.LSN())
				}
			}
		}
		return nil
	}
	deadline := time.Now().Add(20 * time.Second)
	for err := converged(); err != nil; err = converged() {
		if time.Now().After(deadline) {
			for i, n := range nodes {
				st, serr := n.h.Status(parts[0].GroupID())
				t.Logf("node %d: host stats %+v; raft status of range %s's group %+v (%v)", i+1, n.h.Stats(), parts[0].ID(), st, serr)
			}
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if st := nodes[2].h.Stats(); st.Restores == 0 || st.SnapshotBytesReceived == 0 {
		t.Fatalf("node 3 caught up without a snapshot: %+v", st)
	}
	want := containerState(t, nodes[0].st, cs[0].rid)
	if len(want) < 300 {
		t.Fatalf("the leader's store has only %d keys of the container", len(want))
	}
	for i := 1; i < len(nodes); i++ {
		got := containerState(t, nodes[i].st, cs[i].rid)
		for k, v := range want {
			if got[k] != v {
				t.Fatalf("node %d: key %x is %q, the leader's %q", i+1, k, got[k], v)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("node %d has %d keys of the container, the leader %d", i+1, len(got), len(want))
		}
	}
}

// waitUntil polls cond for up to 20 s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
