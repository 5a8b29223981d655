package host

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/cryptotest"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/parsecdb/parsec/internal/replication/raftlog"
	"github.com/parsecdb/parsec/internal/replication/transport"
	"github.com/parsecdb/parsec/internal/storage"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// TestInteraction runs the scripts of testdata/interaction: scenarios of
// several hosts driven one step at a time, whose printed outcome (the
// results of proposals and reads, and each replica's status) is checked
// against the expected output written in the script. Rewrite the expected
// output with -rewrite, then read it: it is only right if it says what the
// scenario should do.
//
// The outcome is deterministic because nothing runs concurrently: the hosts
// use a scripted transport that holds every message until the script
// delivers it (stabilize), messages are delivered to one node at a time,
// and after every step the harness waits until the node's loop has no work
// left (settle) before it takes the next. Ticks are handed one at a time in
// the same way. Raft draws its randomized election timeouts from
// crypto/rand, which cryptotest.SetGlobalRandom makes a seeded stream: with
// the calls in a fixed order, the timeouts are the same on every run.
//
// Commands (ids and groups are numbers; lists are written (1,2,3)):
//
//	start ids=(1,2,3) [truncate=N]   start nodes, each on a new in-memory store
//	stop id=2                        stop a node (its store is kept)
//	restart id=2                     start a stopped node from its store
//	create group=10 voters=(1,2,3) [ids=(4)]
//	                                 create the group on these nodes (default: all running)
//	campaign node=1 group=10         the replica starts an election
//	transfer group=10 from=1 to=2    the leader hands the leadership over
//	propose node=1 group=10 data=x   propose a command; prints its index or error, or pending
//	read-index node=2 group=10       ReadIndex; prints its index or error, or pending
//	add-node group=10 id=4 via=1     propose adding a voter on node via
//	tick [n=1] [ids=(2,3)]           tick the nodes (default: all running) n times
//	partition a=(1) b=(2,3)          cut the links between a and b
//	isolate id=1                     cut node 1 from every other node
//	heal                             restore every link
//	stabilize [trace]                deliver messages until none is left;
//	                                 trace prints each message as it is delivered or lost
//	status group=10                  each node's view of the group
//
// Every command then prints the operations (proposals, reads, changes)
// that finished during it, in the order they were started.
func TestInteraction(t *testing.T) {
	datadriven.Walk(t, "testdata/interaction", func(t *testing.T, path string) {
		// Raft's election timeouts come from crypto/rand: a seeded stream,
		// drawn in a fixed order, makes them the same on every run.
		cryptotest.SetGlobalRandom(t, 1)
		s := newScript(t)
		defer s.close()
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			out, err := s.run(td)
			if err != nil {
				out += "error: " + err.Error() + "\n"
			}
			out += s.finished()
			if out == "" {
				return "ok\n"
			}
			return out
		})
	})
}

// Limits on what a script asks for.
const (
	maxScriptNodes      = 16
	maxScriptTicks      = 1000
	maxScriptDeliveries = 100000
	// settleTimeout only ends a script whose host never becomes idle; no
	// result depends on time.
	settleTimeout = 30 * time.Second
)

// scriptNet is a transport network that holds every message until the
// script delivers it: a queue per link, in the order sent.
type scriptNet struct {
	mu     sync.Mutex
	queues map[[2]uint64][][]transport.Envelope // [from, to]
	cut    map[[2]uint64]bool
}

type scriptTransport struct {
	net     *scriptNet
	id      uint64
	mu      sync.Mutex
	handler transport.Handler
	closed  bool
}

func (tr *scriptTransport) SetHandler(h transport.Handler) {
	tr.mu.Lock()
	tr.handler = h
	tr.mu.Unlock()
}

func (tr *scriptTransport) Send(to uint64, batch []transport.Envelope) {
	tr.mu.Lock()
	closed := tr.closed
	tr.mu.Unlock()
	if closed {
		return
	}
	c := make([]transport.Envelope, len(batch))
	for i, e := range batch {
		c[i] = transport.Envelope{Group: e.Group, Msg: proto.Clone(e.Msg).(*raftpb.Message)}
	}
	n := tr.net
	n.mu.Lock()
	k := [2]uint64{tr.id, to}
	n.queues[k] = append(n.queues[k], c)
	n.mu.Unlock()
}

func (tr *scriptTransport) Close() error {
	tr.mu.Lock()
	tr.closed = true
	tr.mu.Unlock()
	return nil
}

// scriptNode is one node of a script: its store survives a stop.
type scriptNode struct {
	id       uint64
	fs       vfs.FS
	truncate uint64
	db       *storage.DB
	tr       *scriptTransport
	h        *Host
	mu       sync.Mutex
	sms      map[uint64]*kv
}

// op is a proposal, read or configuration change in flight.
type op struct {
	seq  int
	node uint64
	desc string
	done chan result
	res  *result
}

type script struct {
	t       *testing.T
	net     *scriptNet
	nodes   map[uint64]*scriptNode
	ops     []*op // started and not yet reported, in order
	nextSeq int
}

func newScript(t *testing.T) *script {
	return &script{t: t, net: &scriptNet{queues: make(map[[2]uint64][][]transport.Envelope), cut: make(map[[2]uint64]bool)}, nodes: make(map[uint64]*scriptNode)}
}

func (s *script) close() {
	for _, id := range s.running() {
		s.stopNode(id)
	}
}

// running returns the ids of the running nodes, in order.
func (s *script) running() []uint64 {
	var ids []uint64
	for id, n := range s.nodes {
		if n.h != nil {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

func (s *script) run(td *datadriven.TestData) (string, error) {
	a := args{td}
	switch td.Cmd {
	case "start":
		ids, err := a.list("ids", true)
		if err != nil {
			return "", err
		}
		trunc, _, err := a.uint("truncate", false)
		if err != nil {
			return "", err
		}
		for _, id := range ids {
			if s.nodes[id] != nil {
				return "", fmt.Errorf("node %d exists", id)
			}
			if len(s.nodes) >= maxScriptNodes {
				return "", fmt.Errorf("at most %d nodes", maxScriptNodes)
			}
			s.nodes[id] = &scriptNode{id: id, fs: vfs.NewMem(), truncate: trunc}
			if err := s.startNode(id); err != nil {
				return "", err
			}
		}
		return "", nil
	case "stop":
		n, err := s.node(a, "id", true)
		if err != nil {
			return "", err
		}
		s.stopNode(n.id)
		return "", nil
	case "restart":
		id, _, err := a.uint("id", true)
		if err != nil {
			return "", err
		}
		n := s.nodes[id]
		if n == nil || n.h != nil {
			return "", fmt.Errorf("node %d is not a stopped node", id)
		}
		return "", s.startNode(id)
	case "create":
		g, _, err := a.uint("group", true)
		if err != nil {
			return "", err
		}
		vs, err := a.list("voters", true)
		if err != nil {
			return "", err
		}
		ids, err := a.list("ids", false)
		if err != nil {
			return "", err
		}
		if ids == nil {
			ids = s.running()
		}
		for _, id := range ids {
			n := s.nodes[id]
			if n == nil || n.h == nil {
				return "", fmt.Errorf("node %d is not running", id)
			}
			if err := n.h.CreateGroup(g, vs); err != nil {
				return "", fmt.Errorf("node %d: %w", id, err)
			}
			if err := s.settle(n); err != nil {
				return "", err
			}
		}
		return "", nil
	case "campaign":
		n, g, err := s.nodeGroup(a)
		if err != nil {
			return "", err
		}
		if err := n.h.Campaign(g); err != nil {
			return "", err
		}
		return "", s.settle(n)
	case "transfer":
		g, _, err := a.uint("group", true)
		if err != nil {
			return "", err
		}
		n, err := s.node(a, "from", true)
		if err != nil {
			return "", err
		}
		to, _, err := a.uint("to", true)
		if err != nil {
			return "", err
		}
		if err := n.h.TransferLeadership(g, to); err != nil {
			return "", err
		}
		return "", s.settle(n)
	case "propose":
		n, g, err := s.nodeGroup(a)
		if err != nil {
			return "", err
		}
		data, _, err := a.str("data", true)
		if err != nil {
			return "", err
		}
		return s.start(n, "propose "+data, func(ctx context.Context) (uint64, error) {
			return n.h.Propose(ctx, g, []byte(data))
		})
	case "read-index":
		n, g, err := s.nodeGroup(a)
		if err != nil {
			return "", err
		}
		return s.start(n, "read-index", func(ctx context.Context) (uint64, error) {
			return n.h.ReadIndex(ctx, g)
		})
	case "add-node":
		g, _, err := a.uint("group", true)
		if err != nil {
			return "", err
		}
		id, _, err := a.uint("id", true)
		if err != nil {
			return "", err
		}
		n, err := s.node(a, "via", true)
		if err != nil {
			return "", err
		}
		return s.start(n, fmt.Sprintf("add-node %d", id), func(ctx context.Context) (uint64, error) {
			typ := raftpb.ConfChangeAddNode
			return n.h.ProposeConfChange(ctx, g, &raftpb.ConfChangeV2{Changes: []*raftpb.ConfChangeSingle{{Type: &typ, NodeId: &id}}})
		})
	case "tick":
		times, ok, err := a.uint("n", false)
		if err != nil {
			return "", err
		}
		if !ok {
			times = 1
		}
		if times > maxScriptTicks {
			return "", fmt.Errorf("at most %d ticks", maxScriptTicks)
		}
		ids, err := a.list("ids", false)
		if err != nil {
			return "", err
		}
		if ids == nil {
			ids = s.running()
		}
		for range times {
			for _, id := range ids {
				n := s.nodes[id]
				if n == nil || n.h == nil {
					return "", fmt.Errorf("node %d is not running", id)
				}
				n.h.Tick()
				if err := s.settle(n); err != nil {
					return "", err
				}
			}
		}
		return "", nil
	case "partition":
		x, err := a.list("a", true)
		if err != nil {
			return "", err
		}
		y, err := a.list("b", true)
		if err != nil {
			return "", err
		}
		s.partition(x, y)
		return "", nil
	case "isolate":
		id, _, err := a.uint("id", true)
		if err != nil {
			return "", err
		}
		var others []uint64
		for o := range s.nodes {
			if o != id {
				others = append(others, o)
			}
		}
		s.partition([]uint64{id}, others)
		return "", nil
	case "heal":
		s.net.mu.Lock()
		clear(s.net.cut)
		s.net.mu.Unlock()
		return "", nil
	case "stabilize":
		return s.stabilize(td.HasArg("trace"))
	case "status":
		g, _, err := a.uint("group", true)
		if err != nil {
			return "", err
		}
		return s.status(g)
	}
	return "", fmt.Errorf("unknown command %q", td.Cmd)
}

func (s *script) partition(a, b []uint64) {
	s.net.mu.Lock()
	defer s.net.mu.Unlock()
	for _, x := range a {
		for _, y := range b {
			s.net.cut[[2]uint64{x, y}] = true
			s.net.cut[[2]uint64{y, x}] = true
		}
	}
}

func (s *script) node(a args, key string, required bool) (*scriptNode, error) {
	id, _, err := a.uint(key, required)
	if err != nil {
		return nil, err
	}
	n := s.nodes[id]
	if n == nil || n.h == nil {
		return nil, fmt.Errorf("node %d is not running", id)
	}
	return n, nil
}

func (s *script) nodeGroup(a args) (*scriptNode, uint64, error) {
	n, err := s.node(a, "node", true)
	if err != nil {
		return nil, 0, err
	}
	g, _, err := a.uint("group", true)
	return n, g, err
}

func (s *script) startNode(id uint64) error {
	n := s.nodes[id]
	db, err := storage.Open(storage.Options{Dir: "/n", FS: n.fs, Reserve: -1, CacheBytes: 1 << 20})
	if err != nil {
		return err
	}
	n.db = db
	n.tr = &scriptTransport{net: s.net, id: id}
	n.mu.Lock()
	n.sms = make(map[uint64]*kv)
	n.mu.Unlock()
	h, err := New(Config{
		NodeID: id, Store: raftlog.Open(db), Transport: n.tr, Logf: s.t.Logf,
		SnapshotEntries: 1 << 62, TruncateEntries: n.truncate,
		NewStateMachine: func(g uint64) (StateMachine, error) {
			sm, err := loadKV(db, fmt.Appendf(nil, "test-sm-%d", g))
			if err != nil {
				return nil, err
			}
			n.mu.Lock()
			n.sms[g] = sm
			n.mu.Unlock()
			return sm, nil
		},
	})
	if err != nil {
		_ = db.Close()
		n.db = nil
		return err
	}
	n.h = h
	return s.settle(n)
}

// stopNode stops a node; messages queued for it are lost.
func (s *script) stopNode(id uint64) {
	n := s.nodes[id]
	n.h.Stop()
	_ = n.tr.Close()
	_ = n.db.Close()
	n.h, n.db = nil, nil
	s.net.mu.Lock()
	for k := range s.net.queues {
		if k[1] == id {
			delete(s.net.queues, k)
		}
	}
	s.net.mu.Unlock()
}

// settle waits until n's loop is idle: two calls through the loop between
// which no round handled a Ready. The first call's round ran after every
// event queued before it; if it handled no Ready, no group has work left,
// and nothing but the script can give it more.
func (s *script) settle(n *scriptNode) error {
	deadline := time.Now().Add(settleTimeout)
	noop := func() error { return nil }
	for {
		before := n.h.Stats().Rounds
		if err := n.h.do(noop); err != nil {
			return fmt.Errorf("node %d: %w", n.id, err)
		}
		if err := n.h.do(noop); err != nil {
			return fmt.Errorf("node %d: %w", n.id, err)
		}
		if n.h.Stats().Rounds == before {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("node %d never became idle", n.id)
		}
	}
}

// waiting returns how many proposals and reads n's host has in flight.
func waiting(n *scriptNode) (int, error) {
	var w int
	err := n.h.do(func() error { w = len(n.h.props) + len(n.h.reads); return nil })
	return w, err
}

// start runs fn (a proposal, read or change on n) in the background. It
// returns once the host has either answered it or taken it in flight
// (pending), so that the script's next step finds it in place.
func (s *script) start(n *scriptNode, desc string, fn func(context.Context) (uint64, error)) (string, error) {
	before, err := waiting(n)
	if err != nil {
		return "", err
	}
	o := &op{seq: s.nextSeq, node: n.id, desc: desc, done: make(chan result, 1)}
	s.nextSeq++
	s.ops = append(s.ops, o)
	go func() {
		idx, err := fn(context.Background())
		o.done <- result{index: idx, err: err}
	}()
	deadline := time.Now().Add(settleTimeout)
	for {
		if o.poll() {
			return "", nil // reported by finished
		}
		w, err := waiting(n)
		if err != nil {
			return "", err
		}
		if w > before {
			if err := s.settle(n); err != nil {
				return "", err
			}
			if err := s.collect(n); err != nil {
				return "", err
			}
			if o.res == nil {
				return fmt.Sprintf("node %d: %s: pending\n", n.id, desc), nil
			}
			return "", nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("node %d: %s neither answered nor in flight", n.id, desc)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

func (o *op) poll() bool {
	if o.res != nil {
		return true
	}
	select {
	case r := <-o.done:
		o.res = &r
		return true
	default:
		return false
	}
}

// collect waits for the results of n's operations its host has answered:
// once the host is idle, every operation of n not among its waiters has
// been answered, and its result is on its way.
func (s *script) collect(n *scriptNode) error {
	var mine []*op
	for _, o := range s.ops {
		if o.node == n.id && !o.poll() {
			mine = append(mine, o)
		}
	}
	if len(mine) == 0 {
		return nil
	}
	w := 0
	if n.h != nil {
		var err error
		if w, err = waiting(n); err != nil {
			return err
		}
	}
	deadline := time.Now().Add(settleTimeout)
	for {
		open := 0
		for _, o := range mine {
			if !o.poll() {
				open++
			}
		}
		if open <= w {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("node %d: %d answered operations never returned", n.id, open-w)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// finished reports the operations that finished, in the order they were
// started, and forgets them.
func (s *script) finished() string {
	var b strings.Builder
	for _, id := range s.running() {
		if err := s.settle(s.nodes[id]); err != nil {
			fmt.Fprintf(&b, "error: %v\n", err)
		}
	}
	for id := range s.nodes {
		if err := s.collect(s.nodes[id]); err != nil {
			fmt.Fprintf(&b, "error: %v\n", err)
		}
	}
	kept := s.ops[:0]
	for _, o := range s.ops {
		if !o.poll() {
			kept = append(kept, o)
			continue
		}
		if o.res.err != nil {
			fmt.Fprintf(&b, "node %d: %s: error: %v\n", o.node, o.desc, o.res.err)
		} else {
			fmt.Fprintf(&b, "node %d: %s: index %d\n", o.node, o.desc, o.res.index)
		}
	}
	s.ops = kept
	return b.String()
}

// stabilize delivers every queued message, one link at a time in order of
// (receiver, sender), letting the receiver settle after each delivery,
// until no message is left. Messages to a stopped node or over a cut link
// are lost. With trace, every message is printed.
func (s *script) stabilize(trace bool) (string, error) {
	var delivered, lost int
	var b strings.Builder
	for {
		s.net.mu.Lock()
		var links [][2]uint64
		for k, q := range s.net.queues {
			if len(q) > 0 {
				links = append(links, k)
			}
		}
		if len(links) == 0 {
			s.net.mu.Unlock()
			break
		}
		slices.SortFunc(links, func(x, y [2]uint64) int {
			if c := cmp.Compare(x[1], y[1]); c != 0 {
				return c
			}
			return cmp.Compare(x[0], y[0])
		})
		k := links[0]
		var batch []transport.Envelope
		for _, b := range s.net.queues[k] {
			batch = append(batch, b...)
		}
		delete(s.net.queues, k)
		cut := s.net.cut[k]
		s.net.mu.Unlock()
		n := s.nodes[k[1]]
		down := cut || n == nil || n.h == nil
		if trace {
			for _, e := range batch {
				b.WriteString(raft.DescribeMessage(e.Msg, describeData))
				if down {
					b.WriteString(" (lost)")
				}
				b.WriteString("\n")
			}
		}
		if down {
			lost += len(batch)
			continue
		}
		delivered += len(batch)
		if delivered > maxScriptDeliveries {
			return "", fmt.Errorf("still delivering after %d messages", maxScriptDeliveries)
		}
		// One call: the batch is one event of the receiver's loop.
		n.tr.mu.Lock()
		h := n.tr.handler
		n.tr.mu.Unlock()
		h(k[0], batch)
		if err := s.settle(n); err != nil {
			return "", err
		}
	}
	if lost > 0 {
		fmt.Fprintf(&b, "lost %d messages (cut links or stopped nodes)\n", lost)
	}
	return b.String(), nil
}

// describeData shows an entry's data: a command, the host's own
// truncation entry, or the id of a read request.
func describeData(d []byte) string {
	if len(d) == 8 {
		return fmt.Sprintf("read request %d", binary.BigEndian.Uint64(d))
	}
	if len(d) < headerLen {
		return fmt.Sprintf("%q", d)
	}
	if binary.BigEndian.Uint64(d) == truncationNode {
		return fmt.Sprintf("truncate to %d", binary.BigEndian.Uint64(d[8:]))
	}
	return fmt.Sprintf("%q from node %d", d[headerLen:], binary.BigEndian.Uint64(d))
}

// status prints each node's view of group g.
func (s *script) status(g uint64) (string, error) {
	var ids []uint64
	for id := range s.nodes {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var b strings.Builder
	for _, id := range ids {
		n := s.nodes[id]
		if n.h == nil {
			fmt.Fprintf(&b, "node %d: down\n", id)
			continue
		}
		st, err := n.h.Status(g)
		if errors.Is(err, ErrGroupNotFound) {
			fmt.Fprintf(&b, "node %d: no replica\n", id)
			continue
		}
		if err != nil {
			return "", err
		}
		vs, err := n.h.Voters(g)
		if err != nil {
			return "", err
		}
		slices.Sort(vs)
		var first, last uint64
		if err := n.h.do(func() error {
			l := n.h.groups[g].log
			var err error
			if first, err = l.FirstIndex(); err != nil {
				return err
			}
			last, err = l.LastIndex()
			return err
		}); err != nil {
			return "", err
		}
		n.mu.Lock()
		sm := n.sms[g]
		n.mu.Unlock()
		applied, cmds, _ := sm.state()
		fmt.Fprintf(&b, "node %d: %s leader=%d term=%d commit=%d applied=%d log=%d..%d voters=%s\n",
			id, strings.TrimPrefix(st.RaftState.String(), "State"), st.Lead, st.GetTerm(), st.GetCommit(), applied, first, last, fmtList(vs))
		if len(cmds) == 0 {
			cmds = []string{"-"}
		}
		fmt.Fprintf(&b, "  cmds: %s\n", strings.Join(cmds, " "))
	}
	return b.String(), nil
}

func fmtList(xs []uint64) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.FormatUint(x, 10)
	}
	return "(" + strings.Join(s, ",") + ")"
}

// args reads a command's arguments, reporting bad ones as errors.
type args struct{ td *datadriven.TestData }

func (a args) vals(key string, required bool) ([]string, bool, error) {
	for _, arg := range a.td.CmdArgs {
		if arg.Key == key {
			return arg.Vals, true, nil
		}
	}
	if required {
		return nil, false, fmt.Errorf("missing argument %s", key)
	}
	return nil, false, nil
}

func (a args) str(key string, required bool) (string, bool, error) {
	v, ok, err := a.vals(key, required)
	if err != nil || !ok {
		return "", ok, err
	}
	if len(v) != 1 {
		return "", false, fmt.Errorf("argument %s takes one value", key)
	}
	return v[0], true, nil
}

func (a args) uint(key string, required bool) (uint64, bool, error) {
	v, ok, err := a.str(key, required)
	if err != nil || !ok {
		return 0, ok, err
	}
	x, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("argument %s: %w", key, err)
	}
	return x, true, nil
}

func (a args) list(key string, required bool) ([]uint64, error) {
	v, ok, err := a.vals(key, required)
	if err != nil || !ok {
		return nil, err
	}
	if len(v) == 0 || len(v) > maxScriptNodes {
		return nil, fmt.Errorf("argument %s takes 1 to %d values", key, maxScriptNodes)
	}
	out := make([]uint64, len(v))
	for i, s := range v {
		if out[i], err = strconv.ParseUint(s, 10, 64); err != nil || out[i] == 0 {
			return nil, fmt.Errorf("argument %s: bad id %q", key, s)
		}
	}
	return out, nil
}
