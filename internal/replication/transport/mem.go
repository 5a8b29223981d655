package transport

import (
	"math/rand/v2"
	"sync"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// Faults are the failures a Network injects, each drawn from its seeded
// random source.
type Faults struct {
	// Drop is the probability that a message is lost.
	Drop float64
	// Duplicate is the probability that a message is delivered twice.
	Duplicate float64
	// MaxDelay, when positive, delays each batch by a random time up to it,
	// which also reorders batches.
	MaxDelay time.Duration
	// Reorder shuffles the messages within each batch.
	Reorder bool
}

// NetStats counts what a Network did. Dropped counts the messages the
// Drop fault lost; Overflowed and OverflowedPriority the bulk and the
// other messages lost to a full inbox.
type NetStats struct {
	Sent, Delivered, Dropped, Duplicated, Cut uint64
	Overflowed, OverflowedPriority            uint64
}

// Network is an in-memory network of Mem transports for tests: messages are
// copied (as a real network would), and faults and partitions are injected
// from a seeded random source.
type Network struct {
	mu     sync.Mutex
	rng    *rand.Rand
	faults Faults
	nodes  map[uint64]*Mem
	cut    map[[2]uint64]bool
	stats  NetStats
	queue  int
}

// NewNetwork returns a network whose fault decisions come from seed. Each
// node has two inboxes, one for bulk messages (appends, snapshots) and one
// for the others, each holding up to queue batches (more are dropped); 0
// means 4096. The priority inbox is delivered first.
func NewNetwork(seed uint64, queue int) *Network {
	if queue <= 0 {
		queue = 4096
	}
	return &Network{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), nodes: make(map[uint64]*Mem), cut: make(map[[2]uint64]bool), queue: queue}
}

// SetFaults sets the faults injected from now on.
func (n *Network) SetFaults(f Faults) {
	n.mu.Lock()
	n.faults = f
	n.mu.Unlock()
}

// Partition cuts every link between a node of a and a node of b, both ways.
func (n *Network) Partition(a, b []uint64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, x := range a {
		for _, y := range b {
			n.cut[[2]uint64{x, y}] = true
			n.cut[[2]uint64{y, x}] = true
		}
	}
}

// Isolate cuts node id off from every other node that has joined.
func (n *Network) Isolate(id uint64) {
	var others []uint64
	n.mu.Lock()
	for o := range n.nodes {
		if o != id {
			others = append(others, o)
		}
	}
	n.mu.Unlock()
	n.Partition([]uint64{id}, others)
}

// Heal restores every link.
func (n *Network) Heal() {
	n.mu.Lock()
	n.cut = make(map[[2]uint64]bool)
	n.mu.Unlock()
}

// Stats returns the network's counters.
func (n *Network) Stats() NetStats {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.stats
}

// Join adds node id to the network (replacing a previous transport of the
// same id, as a restarted node does) and returns its transport.
func (n *Network) Join(id uint64) *Mem {
	m := &Mem{net: n, id: id, inbox: make(chan delivery, n.queue), prio: make(chan delivery, n.queue), done: make(chan struct{})}
	n.mu.Lock()
	if old := n.nodes[id]; old != nil {
		old.stop()
	}
	n.nodes[id] = m
	n.mu.Unlock()
	return m
}

type delivery struct {
	from  uint64
	batch []Envelope
}

// Mem is one node's transport on a Network.
type Mem struct {
	net     *Network
	id      uint64
	inbox   chan delivery // bulk messages
	prio    chan delivery // the others
	mu      sync.Mutex
	handler Handler
	once    sync.Once
	done    chan struct{}
	wg      sync.WaitGroup
}

var _ Transport = (*Mem)(nil)

// SetHandler implements Transport and starts delivering to h.
func (m *Mem) SetHandler(h Handler) {
	m.mu.Lock()
	start := m.handler == nil
	m.handler = h
	m.mu.Unlock()
	if start {
		m.wg.Add(1)
		go m.deliver()
	}
}

func (m *Mem) deliver() {
	defer m.wg.Done()
	for {
		var d delivery
		select {
		case <-m.done:
			return
		case d = <-m.prio:
		default:
			select {
			case <-m.done:
				return
			case d = <-m.prio:
			case d = <-m.inbox:
			}
		}
		m.mu.Lock()
		h := m.handler
		m.mu.Unlock()
		h(d.from, d.batch)
		m.net.mu.Lock()
		m.net.stats.Delivered += uint64(len(d.batch))
		m.net.mu.Unlock()
	}
}

// Send implements Transport.
func (m *Mem) Send(to uint64, batch []Envelope) {
	n := m.net
	n.mu.Lock()
	n.stats.Sent += uint64(len(batch))
	dst := n.nodes[to]
	if dst == nil || n.cut[[2]uint64{m.id, to}] || m.stopped() {
		n.stats.Cut += uint64(len(batch))
		n.mu.Unlock()
		return
	}
	f := n.faults
	out := make([]Envelope, 0, len(batch))
	for _, e := range batch {
		if f.Drop > 0 && n.rng.Float64() < f.Drop {
			n.stats.Dropped++
			continue
		}
		c := Envelope{Group: e.Group, Msg: proto.Clone(e.Msg).(*raftpb.Message)}
		out = append(out, c)
		if f.Duplicate > 0 && n.rng.Float64() < f.Duplicate {
			n.stats.Duplicated++
			out = append(out, Envelope{Group: e.Group, Msg: proto.Clone(e.Msg).(*raftpb.Message)})
		}
	}
	if f.Reorder {
		n.rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	}
	var delay time.Duration
	if f.MaxDelay > 0 {
		delay = time.Duration(n.rng.Int64N(int64(f.MaxDelay)))
	}
	n.mu.Unlock()
	if len(out) == 0 {
		return
	}
	prio, bulk := Split(out)
	for _, b := range [][]Envelope{prio, bulk} {
		if len(b) == 0 {
			continue
		}
		d := delivery{from: m.id, batch: b}
		if delay > 0 {
			time.AfterFunc(delay, func() { dst.enqueue(d) })
			continue
		}
		dst.enqueue(d)
	}
}

// enqueue queues d, a batch of only bulk or only priority messages, in its
// inbox, or drops it if that inbox is full.
func (m *Mem) enqueue(d delivery) {
	if m.stopped() {
		return
	}
	q, bulk := m.prio, Bulk(d.batch[0].Msg)
	if bulk {
		q = m.inbox
	}
	select {
	case q <- d:
	default:
		m.net.mu.Lock()
		if bulk {
			m.net.stats.Overflowed += uint64(len(d.batch))
		} else {
			m.net.stats.OverflowedPriority += uint64(len(d.batch))
		}
		m.net.mu.Unlock()
	}
}

func (m *Mem) stopped() bool {
	select {
	case <-m.done:
		return true
	default:
		return false
	}
}

func (m *Mem) stop() { m.once.Do(func() { close(m.done) }) }

// Close implements Transport: the node stops sending and receiving.
func (m *Mem) Close() error {
	m.stop()
	m.wg.Wait()
	return nil
}
