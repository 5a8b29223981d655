package gateway

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/epk"
	"github.com/parsecdb/parsec/internal/replication"
	"github.com/parsecdb/parsec/internal/replication/transport"
	"github.com/parsecdb/parsec/internal/storage"
)

// fakeNet is an in-process cluster of gateways over one engine: each node
// has its own gateway and view of the leader, calls go straight to the
// target's handler, and a node may be down (its calls not delivered) or
// drop its replies (the command ran, the caller hears nothing).
type fakeNet struct {
	mu       sync.Mutex
	leader   uint64 // the partitions' leader as every node sees it
	down     map[uint64]bool
	dropOnce map[uint64]bool // the next reply of this node is lost
	handlers map[uint64]func([]byte) ([]byte, error)
	sends    []uint64 // the nodes sent to, in order
	notOpen  int      // read indexes that fail as if the group were not open yet
	readIdx  int      // read indexes asked
}

type fakeNode struct {
	id uint64
	n  *fakeNet
}

func (f *fakeNode) ID() uint64 { return f.id }
func (f *fakeNode) LeaderHint(uint64) uint64 {
	f.n.mu.Lock()
	defer f.n.mu.Unlock()
	return f.n.leader
}
func (f *fakeNode) Leader(ctx context.Context, group, not uint64) (uint64, error) {
	for {
		if l := f.LeaderHint(group); l != 0 && l != not {
			return l, nil
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
}
func (f *fakeNode) Hosted(*engine.Partition) error { return nil }
func (f *fakeNode) ReadIndex(context.Context, uint64) (uint64, error) {
	f.n.mu.Lock()
	defer f.n.mu.Unlock()
	f.n.readIdx++
	if f.n.notOpen > 0 {
		f.n.notOpen--
		return 0, fmt.Errorf("group: %w", replication.ErrGroupNotFound)
	}
	return 0, nil
}
func (f *fakeNode) Lag(uint64) (replication.LagInfo, error) { return replication.LagInfo{}, nil }
func (f *fakeNode) SyncCatalog(context.Context) error       { return nil }
func (f *fakeNode) Handle(op string, h func(payload []byte) ([]byte, error)) {
	f.n.mu.Lock()
	defer f.n.mu.Unlock()
	f.n.handlers[f.id] = h
}
func (f *fakeNode) Send(_ context.Context, id uint64, op string, payload []byte) ([]byte, error) {
	f.n.mu.Lock()
	f.n.sends = append(f.n.sends, id)
	h, down, drop := f.n.handlers[id], f.n.down[id], f.n.dropOnce[id]
	delete(f.n.dropOnce, id)
	f.n.mu.Unlock()
	if op != CallCommand {
		return nil, &transport.CallError{Msg: "unknown call " + op}
	}
	if down || h == nil {
		return nil, fmt.Errorf("node %d: connection refused: %w", id, transport.ErrNotDelivered)
	}
	out, err := h(payload)
	if drop {
		return nil, errors.New("connection reset by peer")
	}
	return out, err
}

// newNet returns the fake cluster of three gateways over one engine with
// container db/c, node 2 leading its partition.
func newNet(t *testing.T) (*fakeNet, map[uint64]*Gateway, *engine.Container) {
	t.Helper()
	st, err := storage.Open(storage.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.Open(st, engine.Options{NoThrottle: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		eng.Close()
		st.Close()
	})
	if _, err := eng.CreateDatabase("db", engine.Throughput{}); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.CreateContainer("db", engine.ContainerSpec{ID: "c", PartitionKey: epk.Definition{Kind: "Hash", Version: 2, Paths: []string{"/pk"}}}, engine.Throughput{}); err != nil {
		t.Fatal(err)
	}
	c, err := eng.Container("db", "c")
	if err != nil {
		t.Fatal(err)
	}
	n := &fakeNet{leader: 2, down: map[uint64]bool{}, dropOnce: map[uint64]bool{}, handlers: map[uint64]func([]byte) ([]byte, error){}}
	gws := map[uint64]*Gateway{}
	for id := uint64(1); id <= 3; id++ {
		gws[id] = New(eng, &fakeNode{id: id, n: n})
	}
	return n, gws, c
}

func createOp(t *testing.T, c *engine.Container, id string) engine.Op {
	t.Helper()
	op, err := c.PrepareWrite(engine.OpCreate, []byte(`{"id":"`+id+`","pk":"p"}`), epk.Key{epk.String("p")}, true)
	if err != nil {
		t.Fatal(err)
	}
	return op
}

// TestWriteForwardsToLeader checks that a write through a node that does
// not lead its partition is sent, as an encoded command, to the leader,
// whose engine's results and session come back: the created document,
// its etag and charge, and a 409 as a 409.
func TestWriteForwardsToLeader(t *testing.T) {
	n, gws, c := newNet(t)
	res, s, err := gws[1].Write(context.Background(), c, &engine.Command{Ops: []engine.Op{createOp(t, c, "a")}}, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Err != nil || !res[0].Created || !strings.Contains(string(res[0].Doc), `"id":"a"`) || res[0].Etag == "" || res[0].Charge <= 0 {
		t.Fatalf("results %+v", res)
	}
	if s.RangeID == "" || s.LSN == 0 {
		t.Fatalf("session %+v", s)
	}
	if got := gws[1].Stats().Forwarded; got != 1 || gws[2].Stats().Served != 1 {
		t.Fatalf("forwarded %d, served %d; want 1, 1 (sends %v)", got, gws[2].Stats().Served, n.sends)
	}
	res, _, err = gws[3].Write(context.Background(), c, &engine.Command{Ops: []engine.Op{createOp(t, c, "a")}}, "")
	if err != nil || !errors.Is(res[0].Err, engine.ErrConflict) {
		t.Fatalf("second create: %v, %+v; want a conflict", err, res)
	}
	// The leader runs its own writes locally.
	before := gws[2].Stats().Forwarded
	if _, _, err := gws[2].Write(context.Background(), c, &engine.Command{Ops: []engine.Op{createOp(t, c, "b")}}, ""); err != nil || gws[2].Stats().Forwarded != before {
		t.Fatalf("leader's own write: %v, forwarded %d", err, gws[2].Stats().Forwarded-before)
	}
}

// TestWriteWaitsOutDeadLeader checks that a write whose leader cannot be
// reached waits for the next leader and is sent there; and that a write
// whose leader received it and did not answer gets its real outcome.
func TestWriteWaitsOutDeadLeader(t *testing.T) {
	n, gws, c := newNet(t)
	n.mu.Lock()
	n.down[2] = true
	n.mu.Unlock()
	go func() {
		time.Sleep(50 * time.Millisecond)
		n.mu.Lock()
		n.leader = 3
		n.mu.Unlock()
	}()
	res, _, err := gws[1].Write(context.Background(), c, &engine.Command{Ops: []engine.Op{createOp(t, c, "x")}}, "")
	if err != nil || res[0].Err != nil || !res[0].Created {
		t.Fatalf("write across a dead leader: %v %+v", err, res)
	}
	n.mu.Lock()
	sends := append([]uint64(nil), n.sends...)
	n.dropOnce[3] = true
	n.mu.Unlock()
	if sends[len(sends)-1] != 3 {
		t.Fatalf("sends %v; want the last to node 3", sends)
	}
	// The leader applies the command and its answer is lost: the command
	// is sent again under its id, and the partition answers it from its
	// outcome table: created, once, not a 409 from its own first attempt.
	res, _, err = gws[1].Write(context.Background(), c, &engine.Command{Ops: []engine.Op{createOp(t, c, "y")}}, "")
	if err != nil || res[0].Err != nil || !res[0].Created {
		t.Fatalf("lost reply: %v %+v; want the first attempt's creation", err, res)
	}
	n.mu.Lock()
	if got := len(n.sends) - len(sends); got != 2 {
		t.Errorf("%d sends after the lost reply; want 2", got)
	}
	n.mu.Unlock()
}

// TestWriteNoLeader checks that a write fails with ErrUnavailable, once
// LeaderWait is over, when no leader appears.
func TestWriteNoLeader(t *testing.T) {
	n, gws, c := newNet(t)
	gws[1].leaderWait = 200 * time.Millisecond
	n.mu.Lock()
	n.down[2] = true
	n.mu.Unlock()
	_, _, err := gws[1].Write(context.Background(), c, &engine.Command{Ops: []engine.Op{createOp(t, c, "z")}}, "")
	if !errors.Is(err, engine.ErrUnavailable) || errors.Is(err, engine.ErrOutcomeUnknown) {
		t.Fatalf("no leader: %v", err)
	}
}

// TestWriteFollowsRefusal checks that a refusal by a node that no longer
// leads (it ran nothing) is followed to the leader it names, and that a
// refusal naming no leader waits for one.
func TestWriteFollowsRefusal(t *testing.T) {
	n, gws, c := newNet(t)
	n.mu.Lock()
	n.handlers[2] = func([]byte) ([]byte, error) {
		n.mu.Lock()
		n.leader = 3 // it moved: node 2 learnt it, node 1 not yet
		n.mu.Unlock()
		return encodeReply(reply{err: fmt.Errorf("%w: refused: %w", engine.ErrNotLeader, &replication.NotLeaderError{Group: 9, Node: 2, Leader: 3})}), nil
	}
	n.mu.Unlock()
	res, _, err := gws[1].Write(context.Background(), c, &engine.Command{Ops: []engine.Op{createOp(t, c, "r")}}, "")
	if err != nil || !res[0].Created || gws[3].Stats().Forwarded != 0 {
		t.Fatalf("write: %v %+v", err, res)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.sends) != 2 || n.sends[0] != 2 || n.sends[1] != 3 {
		t.Fatalf("sends %v; want [2 3]", n.sends)
	}
}

// TestStrongReadWaitsForGroup checks that a strong read on a node that has
// not reopened a group yet (it has just restarted) waits for it rather
// than failing, and that a session read past its wait fails with
// SessionNotAvailableError.
func TestStrongReadWaitsForGroup(t *testing.T) {
	n, gws, c := newNet(t)
	n.mu.Lock()
	n.notOpen = 3
	n.mu.Unlock()
	if err := gws[1].PrepareRead(context.Background(), c.Partitions()[:1], ReadOptions{Level: Strong}); err != nil {
		t.Fatal(err)
	}
	n.mu.Lock()
	if n.readIdx != 4 {
		t.Errorf("%d read indexes; want 4", n.readIdx)
	}
	n.mu.Unlock()
	p := c.Partitions()[0]
	err := gws[1].PrepareRead(context.Background(), []*engine.Partition{p}, ReadOptions{Level: Session, SessionWait: 20 * time.Millisecond,
		Session: map[string]uint64{p.Range().ID: p.LSN() + 5}})
	var sna *SessionNotAvailableError
	if !errors.As(err, &sna) || sna.Want != p.LSN()+5 {
		t.Fatalf("a session ahead of the replica: %v", err)
	}
}
