package host

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parsecdb/parsec/internal/replication"
	"github.com/parsecdb/parsec/internal/replication/raftlog"
	"github.com/parsecdb/parsec/internal/replication/transport"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"go.etcd.io/raft/v3/tracker"
	"google.golang.org/protobuf/proto"
)

// The contract's types, declared in package replication: the host is one
// implementation of it.
type (
	Entry        = replication.Entry
	StateMachine = replication.StateMachine
	Publisher    = replication.Publisher
)

// Config configures a Host.
type Config struct {
	// NodeID is this node's id in every group (not 0).
	NodeID uint64
	// Store keeps the raft logs; the host owns its writes.
	Store *raftlog.Store
	// Transport carries messages; the host sets its handler.
	Transport transport.Transport
	// NewStateMachine returns the state machine of a group on this node.
	NewStateMachine func(group uint64) (StateMachine, error)
	// ElectionTicks and HeartbeatTicks are raft's timeouts in ticks;
	// defaults 10 and 1.
	ElectionTicks, HeartbeatTicks int
	// SnapshotEntries is the number of entries applied after which a group
	// takes a snapshot of its state machine and truncates its log; 0 means
	// 10000.
	SnapshotEntries uint64
	// KeepEntries is how many entries before the snapshot stay in the log
	// for followers that lag a little; 0 keeps none.
	KeepEntries uint64
	// MaxQueuedMessages bounds the received messages waiting for the loop,
	// separately for bulk messages (appends, snapshots) and the others
	// (heartbeats, votes, responses), so that appends never crowd out
	// what keeps leadership alive; more are dropped. 0 means 1<<16.
	MaxQueuedMessages int
	// MaxProposalBytes bounds a proposal's size; 0 means 8 MiB.
	MaxProposalBytes int
	// MaxInflightProposals bounds, per group, this node's proposals taken
	// and not yet answered (committed and applied, or failed); a Propose
	// beyond it waits, until its context ends, for earlier ones to finish.
	// 0 means 256.
	MaxInflightProposals int
	// MaxInflightProposalBytes bounds the size of those proposals; a
	// proposal larger than it is admitted alone. 0 means 4 MiB.
	MaxInflightProposalBytes int
	// MaxEventsPerRound bounds the queued events (received batches,
	// proposals, reads) one round of the loop takes before it ticks and
	// handles the Readys; the rest wait for the next round. 0 means 1024.
	MaxEventsPerRound int
	// TruncateEntries, when not 0, truncates logs without snapshots: once
	// a group's log holds more than TruncateEntries entries, its leader
	// proposes to truncate it up to the lowest index every voter holds
	// (raft's Match of each), and every replica truncates its own log
	// there when it applies that entry, so no replica ever needs an entry
	// a truncation dropped (no replica may be added to such a group: it
	// would need a snapshot). A voter that is down holds the truncation
	// back until it returns. Truncates, when set, says which groups may be
	// truncated (nil: all).
	TruncateEntries uint64
	Truncates       func(group uint64) bool
	// Quiesce lets idle groups stop ticking: a leader whose followers all
	// hold its whole log, with nothing in flight, tells them so and they all
	// stop ticking and heartbeating until a message or a proposal wakes the
	// group. A quiesced follower no longer notices its leader's failure by
	// itself: NodeDown must be called when a node is known dead (by a
	// liveness mechanism), or its groups stay leaderless.
	Quiesce bool
	// FetchSnapshot asks node for chunk seq of the snapshot stream id it
	// serves (its Host.ServeSnapshot): how a replica of a SnapshotStreamer
	// receives a snapshot (stream.go). SnapshotChunkBytes is the size of a
	// chunk, 0 meaning 1 MiB; SnapshotTimeout bounds a chunk's fetch and
	// how long a stream may stay idle before the leader gives it up, 0
	// meaning 30 s.
	FetchSnapshot      func(ctx context.Context, node, id, seq uint64) ([]byte, error)
	SnapshotChunkBytes int
	SnapshotTimeout    time.Duration
	// Logf logs raft warnings and the host's errors. Default log.Printf.
	Logf func(format string, args ...any)
}

// Errors of proposals and reads: the contract's (package replication).
var (
	ErrStopped       = replication.ErrStopped
	ErrGroupNotFound = replication.ErrGroupNotFound
	ErrTimeout       = replication.ErrTimeout
	ErrTooLarge      = replication.ErrTooLarge
	ErrAmbiguous     = replication.ErrAmbiguous
	ErrReadLost      = replication.ErrReadLost
	ErrBusy          = replication.ErrBusy
)

// NotLeaderError is the contract's refusal of a replica that does not lead
// its group (replication.NotLeaderError).
type NotLeaderError = replication.NotLeaderError

// Stats counts the work of a host's loop.
type Stats struct {
	// Rounds counts loop rounds that handled at least one Ready.
	Rounds uint64
	// Commits counts storage batches committed (one sync each); CommitTime
	// is their total duration.
	Commits    uint64
	CommitTime time.Duration
	// Appended counts entries written; Applied counts entries applied.
	Appended, Applied uint64
	// Snapshots counts snapshots taken, Restores snapshots applied.
	Snapshots, Restores uint64
	// SnapshotBytesSent and SnapshotBytesReceived count the bytes of
	// streamed snapshots served and fetched.
	SnapshotBytesSent, SnapshotBytesReceived uint64
	// DroppedMessages counts received messages dropped (queue full,
	// unknown group, misaddressed); DroppedPriority counts the non-bulk
	// ones (heartbeats, votes, responses) among them dropped for a full
	// queue.
	DroppedMessages, DroppedPriority uint64
	// AdmissionWaits counts proposals that waited for admission (their
	// group had MaxInflightProposals in flight); Waiting is how many wait
	// now.
	AdmissionWaits uint64
	Waiting        int
	// Ticks counts ticks handed to the groups (each tick of Tick once,
	// however many groups it advances).
	Ticks uint64
	// MaxRoundTime is the longest round of the loop (events, ticks and
	// Readys); SnapshotTime is the total time the loop spent taking
	// snapshots (for a SnapshotEncoder, capturing them).
	MaxRoundTime, SnapshotTime time.Duration
}

// Host drives this node's replicas of many raft groups: one loop for all,
// one storage commit per round for all, one tick source for all.
type Host struct {
	cfg Config
	id  uint64

	mu      sync.Mutex
	events  []event
	bulk    int // received bulk messages in events
	prio    int // received other messages in events
	ticks   int
	quotas  map[uint64]*quota // admission of each group's proposals
	signal  chan struct{}
	stopped bool
	err     error
	stats   Stats

	stop chan struct{}
	done chan struct{}
	bg   sync.WaitGroup // snapshots being encoded or fetched off the loop
	// ctx ends when the host stops: it bounds work off the loop.
	ctx    context.Context
	cancel context.CancelFunc

	// streams are the snapshots this node serves (stream.go).
	smu        sync.Mutex
	streams    map[uint64]*outStream
	nextStream uint64

	// leaders holds each group's *atomic.Uint64 leader (Leader).
	leaders sync.Map

	// Owned by the loop.
	groups map[uint64]*group
	dirty  map[*group]struct{} // groups that may have a Ready
	active map[*group]struct{} // groups that tick (not quiesced)
	nextID uint64
	props  map[uint64]*waiter
	reads  map[uint64]*waiter
}

type group struct {
	id       uint64
	rn       *raft.RawNode
	log      *raftlog.Log
	sm       StateMachine
	applied  uint64
	stored   uint64            // the applied index whose state is committed to the store
	snapshot uint64            // index of the latest snapshot
	term     uint64            // term of the last applied entry
	reads    []*waiter         // read index requests with a known index
	inflight int               // this node's proposals and reads not yet answered
	cs       *raftpb.ConfState // the configuration as of applied
	quiesced bool
	propTerm uint64 // the term of this node's latest proposal
	encoding bool   // a snapshot is being encoded off the loop
	staging  bool   // a streamed snapshot is being received off the loop
	// truncTerm is the term in which this node, leading, proposed a
	// truncation not yet applied (0: none); truncated is the index the
	// latest applied truncation dropped the log to (the log's first index
	// follows only once the round's batch commits).
	truncTerm, truncated uint64
	// lead is the leader as of the last Ready (Leader reads it without
	// the loop).
	lead atomic.Uint64
	lag  lagState // what the leader's messages told (lag.go)
	// leadTick is the tick count when the group's leader last changed.
	leadTick uint64
}

type waiter struct {
	group uint64
	index uint64
	known bool
	// A read's start, and the term this node led in then (0 if it did
	// not lead): see lagState.confirmed.
	at   time.Time
	term uint64
	done chan result
	q    *quota // a proposal's admission, released when answered
	size int
}

// event is a function for the loop; bulk and prio count the received
// messages it carries.
type event struct {
	fn         func()
	bulk, prio int
}

type result struct {
	index uint64
	err   error
}

// New returns a host over cfg.Store with a replica of every group the store
// holds, and starts its loop.
func New(cfg Config) (*Host, error) {
	if cfg.NodeID == 0 || cfg.Store == nil || cfg.Transport == nil || cfg.NewStateMachine == nil {
		return nil, errors.New("replication: a node id, store, transport and state machine constructor are required")
	}
	if cfg.ElectionTicks <= 0 {
		cfg.ElectionTicks = 10
	}
	if cfg.HeartbeatTicks <= 0 {
		cfg.HeartbeatTicks = 1
	}
	if cfg.HeartbeatTicks >= cfg.ElectionTicks {
		return nil, errors.New("replication: the heartbeat must be shorter than the election timeout")
	}
	if cfg.SnapshotEntries == 0 {
		cfg.SnapshotEntries = 10000
	}
	if cfg.MaxQueuedMessages <= 0 {
		cfg.MaxQueuedMessages = 1 << 16
	}
	if cfg.MaxProposalBytes <= 0 {
		cfg.MaxProposalBytes = 8 << 20
	}
	if cfg.MaxInflightProposals <= 0 {
		cfg.MaxInflightProposals = 256
	}
	if cfg.MaxInflightProposalBytes <= 0 {
		cfg.MaxInflightProposalBytes = 4 << 20
	}
	if cfg.MaxEventsPerRound <= 0 {
		cfg.MaxEventsPerRound = 1024
	}
	if cfg.Logf == nil {
		cfg.Logf = log.Printf
	}
	if cfg.SnapshotChunkBytes <= 0 {
		cfg.SnapshotChunkBytes = 1 << 20
	}
	if cfg.SnapshotTimeout <= 0 {
		cfg.SnapshotTimeout = 30 * time.Second
	}
	h := &Host{cfg: cfg, id: cfg.NodeID, signal: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
		groups: make(map[uint64]*group), quotas: make(map[uint64]*quota), dirty: make(map[*group]struct{}), active: make(map[*group]struct{}), props: make(map[uint64]*waiter), reads: make(map[uint64]*waiter),
		streams: make(map[uint64]*outStream)}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	ids, err := cfg.Store.Groups()
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		if err := h.openGroup(id, nil); err != nil {
			return nil, err
		}
	}
	cfg.Transport.SetHandler(h.receive)
	go h.loop()
	return h, nil
}

// Raft's flow control settings (see openGroup).
const (
	maxSizePerMsg        = 256 << 10
	maxInflightMsgs      = 64
	maxInflightBytes     = 8 << 20
	maxCommittedPerReady = 1 << 20
)

// Bootstrap index and term of a new group's log, the same on every replica.
const (
	bootstrapIndex = 10
	bootstrapTerm  = 5
)

// openGroup starts the replica of group id; peers, when given, bootstrap
// it if the store has no state for it. Called before the loop starts or
// from it.
func (h *Host) openGroup(id uint64, peers []uint64) error {
	if _, ok := h.groups[id]; ok {
		return nil
	}
	l, err := h.cfg.Store.Group(id)
	if err != nil {
		return err
	}
	if last, _ := l.LastIndex(); last == 0 {
		if len(peers) == 0 {
			return fmt.Errorf("replication: group %d has no state and no peers to bootstrap it with", id)
		}
		b := h.cfg.Store.NewBatch()
		if err := l.Bootstrap(b, bootstrapIndex, bootstrapTerm, &raftpb.ConfState{Voters: peers}); err != nil {
			b.Discard()
			return err
		}
		if err := b.Commit(); err != nil {
			return err
		}
	}
	sm, err := h.cfg.NewStateMachine(id)
	if err != nil {
		return err
	}
	snap, err := l.Snapshot()
	if err != nil {
		return err
	}
	si, st := snap.GetMetadata().GetIndex(), snap.GetMetadata().GetTerm()
	if sm.Applied() < si {
		b := h.cfg.Store.NewBatch()
		if err := sm.Restore(b.Storage(), si, st, snap.GetData()); err != nil {
			b.Discard()
			return fmt.Errorf("replication: group %d: restoring the state machine: %w", id, err)
		}
		if err := b.Commit(); err != nil {
			return err
		}
	}
	if st, ok := sm.(SnapshotStreamer); ok {
		// A snapshot staged and not installed before a restart is stale.
		if err := st.DiscardStaged(); err != nil {
			return fmt.Errorf("replication: group %d: %w", id, err)
		}
	}
	applied := sm.Applied()
	g := &group{id: id, log: l, sm: sm, applied: applied, stored: applied, snapshot: si}
	// Flow control inside raft: an append message carries up to
	// maxSizePerMsg of entries and a follower has up to maxInflightMsgs
	// of them (maxInflightBytes in all) unacknowledged; a Ready hands over
	// up to maxCommittedPerReady of committed entries, so one round's work
	// is bounded. The uncommitted log is bounded by the admission of
	// proposals (MaxInflightProposalBytes); raft's own bound is a backstop.
	rn, err := raft.NewRawNode(&raft.Config{
		ID:                        h.id,
		ElectionTick:              h.cfg.ElectionTicks,
		HeartbeatTick:             h.cfg.HeartbeatTicks,
		Storage:                   &groupStorage{Log: l, h: h, g: g},
		Applied:                   applied,
		MaxSizePerMsg:             maxSizePerMsg,
		MaxInflightMsgs:           maxInflightMsgs,
		MaxInflightBytes:          maxInflightBytes,
		MaxCommittedSizePerReady:  maxCommittedPerReady,
		MaxUncommittedEntriesSize: uint64(2*h.cfg.MaxInflightProposalBytes + h.cfg.MaxProposalBytes + headerLen),
		CheckQuorum:               true,
		PreVote:                   true,
		ReadOnlyOption:            raft.ReadOnlySafe,
		DisableProposalForwarding: true,
		Logger:                    raftLogger{h.cfg.Logf},
	})
	if err != nil {
		return fmt.Errorf("replication: group %d: %w", id, err)
	}
	_, cs, err := l.InitialState()
	if err != nil {
		return err
	}
	g.rn, g.cs = rn, cs
	h.groups[id] = g
	h.leaders.Store(id, &g.lead)
	h.mu.Lock()
	h.quotas[id] = &quota{changed: make(chan struct{})}
	h.mu.Unlock()
	h.dirty[g] = struct{}{}
	h.active[g] = struct{}{}
	return nil
}

// do runs fn in the loop and waits for it.
func (h *Host) do(fn func() error) error {
	done := make(chan error, 1)
	if !h.enqueue(event{fn: func() { done <- fn() }}) {
		return h.stoppedErr()
	}
	select {
	case err := <-done:
		return err
	case <-h.done:
		return h.stoppedErr()
	}
}

func (h *Host) stoppedErr() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err != nil {
		return fmt.Errorf("%w: %v", ErrStopped, h.err)
	}
	return ErrStopped
}

// enqueue adds an event for the loop.
func (h *Host) enqueue(ev event) bool {
	h.mu.Lock()
	if h.stopped {
		h.mu.Unlock()
		return false
	}
	h.events = append(h.events, ev)
	h.bulk += ev.bulk
	h.prio += ev.prio
	h.mu.Unlock()
	h.wake()
	return true
}

func (h *Host) wake() {
	select {
	case h.signal <- struct{}{}:
	default:
	}
}

// CreateGroup starts this node's replica of group id, bootstrapping it
// with the given voters if the store has no state for it. Every replica
// must be created with the same voters.
func (h *Host) CreateGroup(id uint64, voters []uint64) error {
	if id == 0 || len(voters) == 0 {
		return errors.New("replication: a group needs an id and voters")
	}
	voters = append([]uint64(nil), voters...)
	return h.do(func() error { return h.openGroup(id, voters) })
}

// ProposeConfChange proposes a change of group's members (raft's
// configuration change, applied by the host on every replica) and returns
// its index once it is committed and applied on this node. A node joins
// a group by creating its replica with the voters the group was created
// with (CreateGroup), which gives it the group's bootstrap state, and
// being added here: the leader then sends it the log from the start, the
// change that adds it included (so the leader must not have truncated
// its log since). Only the
// leader accepts it; errors are those of Propose. Raft takes one change at
// a time and turns a change proposed while another is pending into an
// empty entry, whose proposer would only learn of it when its leadership
// ends: callers make one change at a time and wait for it.
func (h *Host) ProposeConfChange(ctx context.Context, group uint64, cc *raftpb.ConfChangeV2) (uint64, error) {
	return h.submit(ctx, group, headerLen, func(rn *raft.RawNode, header []byte) error {
		cc.Context = header
		return rn.ProposeConfChange(cc)
	})
}

// Tick advances every group's logical clock by one tick. The caller drives
// time (a ticker in a server, the test itself in tests).
func (h *Host) Tick() {
	h.mu.Lock()
	if !h.stopped {
		h.ticks++
	}
	h.mu.Unlock()
	h.wake()
}

// Campaign makes this replica of group start an election at once.
func (h *Host) Campaign(group uint64) error {
	return h.do(func() error {
		g := h.groups[group]
		if g == nil {
			return ErrGroupNotFound
		}
		h.wakeGroup(g)
		return g.rn.Campaign()
	})
}

// TransferLeadership asks this replica of group, which must lead it, to
// hand the leadership to the replica on node to (raft's leader transfer:
// it brings to up to date, then tells it to campaign at once).
func (h *Host) TransferLeadership(group, to uint64) error {
	return h.do(func() error {
		g := h.groups[group]
		if g == nil {
			return ErrGroupNotFound
		}
		if st := g.rn.BasicStatus(); st.RaftState != raft.StateLeader {
			return &NotLeaderError{Group: group, Node: h.id, Leader: st.Lead}
		}
		h.wakeGroup(g)
		g.rn.TransferLeader(to)
		return nil
	})
}

// Status returns raft's status of this node's replica of group.
func (h *Host) Status(group uint64) (raft.BasicStatus, error) {
	var st raft.BasicStatus
	err := h.do(func() error {
		g := h.groups[group]
		if g == nil {
			return ErrGroupNotFound
		}
		st = g.rn.BasicStatus()
		return nil
	})
	return st, err
}

// Leader returns the leader of group as this node last learned it (0 if
// it knows none), without waiting for the loop: a gateway's routing hint,
// which may be a moment stale. ok is false if the node hosts no replica of
// group.
func (h *Host) Leader(group uint64) (leader uint64, ok bool) {
	v, ok := h.leaders.Load(group)
	if !ok {
		return 0, false
	}
	return v.(*atomic.Uint64).Load(), true
}

// Voters returns the voters of this node's replica of group, as its
// configuration stands.
func (h *Host) Voters(group uint64) ([]uint64, error) {
	var v []uint64
	err := h.do(func() error {
		g := h.groups[group]
		if g == nil {
			return ErrGroupNotFound
		}
		v = append(v, g.cs.GetVoters()...)
		return nil
	})
	return v, err
}

// Behind returns the replicas of group that are behind what its log still
// holds, so that only a snapshot can bring them up to date (they were down
// while it was truncated). It asks the leader's view: a node that does not
// lead the group answers a NotLeaderError, and a replica the leader has not
// heard from since it took over counts as behind (its progress is unknown).
func (h *Host) Behind(group uint64) ([]uint64, error) {
	var out []uint64
	err := h.do(func() error {
		g := h.groups[group]
		if g == nil {
			return ErrGroupNotFound
		}
		st := g.rn.Status()
		if st.RaftState != raft.StateLeader {
			return &NotLeaderError{Group: group, Node: h.id, Leader: st.Lead}
		}
		first, err := g.log.FirstIndex()
		if err != nil {
			return err
		}
		for id, pr := range st.Progress {
			if id != h.id && pr.Match+1 < first {
				out = append(out, id)
			}
		}
		slices.Sort(out)
		return nil
	})
	return out, err
}

// Groups returns the ids of the groups this node hosts.
func (h *Host) Groups() []uint64 {
	var ids []uint64
	_ = h.do(func() error {
		for id := range h.groups {
			ids = append(ids, id)
		}
		return nil
	})
	return ids
}

// Stats returns the host's counters.
func (h *Host) Stats() Stats {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.stats
}

// proposal header: the proposing node and its proposal id, so the node
// that proposed recognises its entry when it applies it.
const headerLen = 16

// Propose replicates data in group and returns the entry's index once it
// is committed and applied on this node. Only the leader accepts
// proposals (a *NotLeaderError names the leader it knows). If ctx ends
// first the error wraps ErrTimeout and the proposal may still commit.
//
// A group admits up to MaxInflightProposals proposals of this node (and
// MaxInflightProposalBytes) at a time; beyond that Propose waits for
// earlier ones to be answered. If ctx ends while it waits, the error wraps
// ctx.Err() and the proposal was not made.
func (h *Host) Propose(ctx context.Context, group uint64, data []byte) (uint64, error) {
	if len(data) > h.cfg.MaxProposalBytes {
		return 0, fmt.Errorf("%w: %d bytes, the limit is %d", ErrTooLarge, len(data), h.cfg.MaxProposalBytes)
	}
	return h.submit(ctx, group, headerLen+len(data), func(rn *raft.RawNode, header []byte) error {
		return rn.Propose(append(header, data...))
	})
}

// submit admits a proposal of size bytes to group, has propose make it on
// the leader's RawNode with the header that names it (this node and a new
// proposal id), and waits until it is committed and applied here.
func (h *Host) submit(ctx context.Context, group uint64, size int, propose func(rn *raft.RawNode, header []byte) error) (uint64, error) {
	h.mu.Lock()
	q := h.quotas[group]
	h.mu.Unlock()
	if q == nil {
		return 0, ErrGroupNotFound
	}
	w := &waiter{group: group, done: make(chan result, 1), q: q, size: size}
	if err := h.admit(ctx, w); err != nil {
		return 0, err
	}
	err := h.do(func() error {
		g := h.groups[group]
		if g == nil {
			return ErrGroupNotFound
		}
		st := g.rn.BasicStatus()
		if st.RaftState != raft.StateLeader {
			return &NotLeaderError{Group: group, Node: h.id, Leader: st.Lead}
		}
		h.nextID++
		id := h.nextID
		header := make([]byte, headerLen, size)
		binary.BigEndian.PutUint64(header, h.id)
		binary.BigEndian.PutUint64(header[8:], id)
		if err := propose(g.rn, header); err != nil {
			if errors.Is(err, raft.ErrProposalDropped) {
				if st := g.rn.BasicStatus(); st.RaftState != raft.StateLeader {
					return &NotLeaderError{Group: group, Node: h.id, Leader: st.Lead}
				}
				return fmt.Errorf("%w: group %d", ErrBusy, group)
			}
			return err
		}
		h.props[id] = w
		g.inflight++
		g.propTerm = st.GetTerm()
		h.wakeGroup(g)
		return nil
	})
	if err != nil {
		w.release()
		return 0, err
	}
	// A proposal whose caller stops waiting stays tracked, and admitted,
	// until it commits or the leadership is lost.
	return h.wait(ctx, w, nil)
}

// quota is the admission of one group's proposals on this node.
type quota struct {
	mu           sync.Mutex
	count, bytes int
	changed      chan struct{} // closed, and replaced, when a proposal is released
}

// admit takes w's place in its group's admission, waiting while the group
// has MaxInflightProposals (or MaxInflightProposalBytes) in flight. A
// proposal is always admitted when nothing else is in flight.
func (h *Host) admit(ctx context.Context, w *waiter) error {
	q := w.q
	waited := false
	defer func() {
		if waited {
			h.mu.Lock()
			h.stats.Waiting--
			h.mu.Unlock()
		}
	}()
	for {
		q.mu.Lock()
		if q.count == 0 || (q.count < h.cfg.MaxInflightProposals && q.bytes+w.size <= h.cfg.MaxInflightProposalBytes) {
			q.count++
			q.bytes += w.size
			q.mu.Unlock()
			return nil
		}
		changed := q.changed
		q.mu.Unlock()
		if !waited {
			waited = true
			h.mu.Lock()
			h.stats.AdmissionWaits++
			h.stats.Waiting++
			h.mu.Unlock()
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("replication: group %d: not proposed, the group has %d proposals in flight: %w", w.group, h.cfg.MaxInflightProposals, ctx.Err())
		case <-h.done:
			return h.stoppedErr()
		}
	}
}

// release gives back a proposal's admission, once; nothing for a read.
func (w *waiter) release() {
	q := w.q
	if q == nil {
		return
	}
	w.q = nil
	q.mu.Lock()
	q.count--
	q.bytes -= w.size
	close(q.changed)
	q.changed = make(chan struct{})
	q.mu.Unlock()
}

func (h *Host) wait(ctx context.Context, w *waiter, forget func()) (uint64, error) {
	select {
	case r := <-w.done:
		return r.index, r.err
	case <-ctx.Done():
		if forget != nil {
			h.enqueue(event{fn: forget})
		}
		return 0, fmt.Errorf("%w: %v", ErrTimeout, ctx.Err())
	case <-h.done:
		return 0, h.stoppedErr()
	}
}

// ReadIndex returns, once this node has applied it, an index at or after
// every entry committed when the call began: a read of this node's state
// machine after it returns is linearizable. The leader confirms its
// leadership with a round of heartbeats (raft's ReadOnlySafe); a
// follower asks the leader.
func (h *Host) ReadIndex(ctx context.Context, group uint64) (uint64, error) {
	w := &waiter{group: group, done: make(chan result, 1)}
	var id uint64
	err := h.do(func() error {
		g := h.groups[group]
		if g == nil {
			return ErrGroupNotFound
		}
		st := g.rn.BasicStatus()
		if st.Lead == 0 {
			return &NotLeaderError{Group: group, Node: h.id}
		}
		w.at = time.Now()
		if st.RaftState == raft.StateLeader {
			w.term = st.GetTerm()
		}
		h.nextID++
		id = h.nextID
		g.rn.ReadIndex(binary.BigEndian.AppendUint64(nil, id))
		h.reads[id] = w
		g.inflight++
		h.wakeGroup(g)
		return nil
	})
	if err != nil {
		return 0, err
	}
	return h.wait(ctx, w, func() {
		if h.reads[id] != nil {
			delete(h.reads, id)
			h.untrack(w)
		}
	})
}

// Stop stops the loop. Proposals and reads in flight fail with ErrStopped.
// The caller closes the transport and the store afterwards.
func (h *Host) Stop() {
	h.mu.Lock()
	if !h.stopped {
		h.stopped = true
		close(h.stop)
	}
	h.mu.Unlock()
	h.cancel()
	<-h.done
	h.bg.Wait()
	h.closeStreams()
}

// receive is the transport's handler. Bulk messages (appends, snapshots)
// and the others are bounded separately: a backlog of appends must not
// make the node drop the heartbeats and votes that keep leaders in place.
func (h *Host) receive(from uint64, batch []transport.Envelope) {
	var bulk, prio int
	for _, e := range batch {
		if transport.Bulk(e.Msg) {
			bulk++
		} else {
			prio++
		}
	}
	h.mu.Lock()
	if h.stopped {
		h.mu.Unlock()
		return
	}
	keepBulk := h.bulk+bulk <= h.cfg.MaxQueuedMessages
	keepPrio := h.prio+prio <= h.cfg.MaxQueuedMessages
	if !keepBulk || !keepPrio {
		kept := make([]transport.Envelope, 0, len(batch))
		for _, e := range batch {
			if b := transport.Bulk(e.Msg); (b && keepBulk) || (!b && keepPrio) {
				kept = append(kept, e)
			}
		}
		if !keepBulk {
			h.stats.DroppedMessages += uint64(bulk)
			bulk = 0
		}
		if !keepPrio {
			h.stats.DroppedMessages += uint64(prio)
			h.stats.DroppedPriority += uint64(prio)
			prio = 0
		}
		batch = kept
	}
	if len(batch) == 0 {
		h.mu.Unlock()
		return
	}
	h.events = append(h.events, event{bulk: bulk, prio: prio, fn: func() {
		for _, e := range batch {
			g := h.groups[e.Group]
			if g == nil || e.Msg.GetTo() != h.id || raft.IsLocalMsg(e.Msg.GetType()) {
				h.mu.Lock()
				h.stats.DroppedMessages++
				h.mu.Unlock()
				continue
			}
			if e.Msg.GetType() == raftpb.MsgHeartbeat && string(e.Msg.GetContext()) == quiesceMarker {
				if !h.quiesceFollower(g, e.Msg) && g.rn.BasicStatus().Lead != e.Msg.GetFrom() {
					// A replica that does not know this leader (it restarted
					// while the group was quiesced) learns it from the
					// heartbeat, as a plain one; the leader's next marker
					// quiesces it.
					m := proto.Clone(e.Msg).(*raftpb.Message)
					m.Context = nil
					if last, err := g.log.LastIndex(); err != nil || last < m.GetCommit() {
						// raft commits what a heartbeat says, and panics past
						// the log's end: never more than this replica holds.
						m.Commit = proto.Uint64(min(last, m.GetCommit()))
					}
					h.wakeGroup(g)
					_ = g.rn.Step(m)
				}
				h.heard(g, e.Msg)
				continue
			}
			if t := e.Msg.GetType(); (t == raftpb.MsgHeartbeat || t == raftpb.MsgHeartbeatResp) && len(e.Msg.GetContext()) != 0 && len(e.Msg.GetContext()) != 8 {
				// raft reads a heartbeat's context as an 8-byte read
				// position and would panic on any other length.
				h.mu.Lock()
				h.stats.DroppedMessages++
				h.mu.Unlock()
				continue
			}
			if h.receiveStreamed(g, e.Msg) {
				continue
			}
			h.wakeGroup(g)
			_ = g.rn.Step(e.Msg)
			h.heard(g, e.Msg)
		}
	}})
	h.bulk += bulk
	h.prio += prio
	h.mu.Unlock()
	h.wake()
}

func (h *Host) loop() {
	defer close(h.done)
	for {
		select {
		case <-h.stop:
			h.failAll(ErrStopped)
			return
		case <-h.signal:
		}
		// Take at most MaxEventsPerRound events, so that a backlog is
		// worked off over several rounds, each of which ticks and sends.
		h.mu.Lock()
		n := min(len(h.events), h.cfg.MaxEventsPerRound)
		events, ticks := h.events[:n:n], h.ticks
		if n == len(h.events) {
			h.events = nil
		} else {
			h.events = h.events[n:]
		}
		for _, ev := range events {
			h.bulk -= ev.bulk
			h.prio -= ev.prio
		}
		more := len(h.events) > 0
		h.ticks = 0
		h.stats.Ticks += uint64(ticks)
		h.mu.Unlock()
		if more {
			h.wake()
		}
		roundStart := time.Now()
		for _, ev := range events {
			ev.fn()
		}
		// Quiesce before ticking: a leader that ticks heartbeats.
		if ticks > 0 && h.cfg.Quiesce {
			h.quiesceLeaders()
		}
		if ticks > 0 {
			h.expireStreams(time.Now())
		}
		for range ticks {
			for g := range h.active {
				g.rn.Tick()
				h.dirty[g] = struct{}{}
			}
		}
		if err := h.process(); err != nil {
			h.cfg.Logf("replication: node %d stops: %v", h.id, err)
			h.mu.Lock()
			h.err = err
			h.stopped = true
			h.mu.Unlock()
			h.failAll(fmt.Errorf("%w: %v", ErrStopped, err))
			return
		}
		d := time.Since(roundStart)
		h.mu.Lock()
		h.stats.MaxRoundTime = max(h.stats.MaxRoundTime, d)
		h.mu.Unlock()
	}
}

func (h *Host) failAll(err error) {
	for id, w := range h.props {
		w.release()
		w.done <- result{err: err}
		delete(h.props, id)
	}
	for id, w := range h.reads {
		w.done <- result{err: err}
		delete(h.reads, id)
	}
}

type ready struct {
	g  *group
	rd raft.Ready
}

// process handles the Ready of every group with work: one storage commit
// for all their hard states, entries and snapshots, then their messages,
// then the committed entries, then Advance.
func (h *Host) process() error {
	var rds []ready
	for g := range h.dirty {
		delete(h.dirty, g)
		if g.rn.HasReady() {
			rds = append(rds, ready{g, g.rn.Ready()})
		}
	}
	if len(rds) == 0 {
		return nil
	}
	// 1. Persist, all groups in one batch and one sync.
	b := h.cfg.Store.NewBatch()
	var appended uint64
	for _, r := range rds {
		if !raft.IsEmptySnap(r.rd.Snapshot) {
			if err := r.g.log.ApplySnapshot(b, r.rd.Snapshot); err != nil {
				b.Discard()
				return fmt.Errorf("group %d: %w", r.g.id, err)
			}
		}
		if err := r.g.log.Append(b, r.rd.Entries); err != nil {
			b.Discard()
			return fmt.Errorf("group %d: %w", r.g.id, err)
		}
		appended += uint64(len(r.rd.Entries))
		if !raft.IsEmptyHardState(r.rd.HardState) {
			if err := r.g.log.SetHardState(b, r.rd.HardState); err != nil {
				b.Discard()
				return fmt.Errorf("group %d: %w", r.g.id, err)
			}
		}
	}
	if err := h.commit(b); err != nil {
		return err
	}
	for _, r := range rds {
		if ss := r.rd.SoftState; ss != nil {
			if r.g.lead.Swap(ss.Lead) != ss.Lead {
				h.failReads(r.g, ss.Lead)
				r.g.leadTick = h.stats.Ticks
			}
		}
	}
	// 2. Send, batched per destination node.
	out := make(map[uint64][]transport.Envelope)
	var snaps []func()
	for _, r := range rds {
		for _, m := range r.rd.Messages {
			out[m.GetTo()] = append(out[m.GetTo()], transport.Envelope{Group: r.g.id, Msg: m})
			if _, ok := r.g.sm.(SnapshotStreamer); ok && m.GetType() == raftpb.MsgSnap {
				// Raft hears of it when the replica acknowledges the
				// snapshot, or the stream expires (stream.go).
				h.sentStream(m)
			} else if m.GetType() == raftpb.MsgSnap {
				g, to := r.g, m.GetTo()
				snaps = append(snaps, func() {
					g.rn.ReportSnapshot(to, raft.SnapshotFinish)
					h.dirty[g] = struct{}{}
				})
			}
		}
	}
	for to, batch := range out {
		h.cfg.Transport.Send(to, batch)
	}
	// 3. Apply, then Advance.
	after := h.cfg.Store.NewBatch()
	var applied, restores, snapshots uint64
	var acks []ack
	for _, r := range rds {
		g := r.g
		if !raft.IsEmptySnap(r.rd.Snapshot) {
			md := r.rd.Snapshot.GetMetadata()
			if err := g.sm.Restore(after.Storage(), md.GetIndex(), md.GetTerm(), r.rd.Snapshot.GetData()); err != nil {
				after.Discard()
				return fmt.Errorf("group %d: restoring a snapshot: %w", g.id, err)
			}
			g.applied, g.snapshot, g.term = md.GetIndex(), md.GetIndex(), md.GetTerm()
			g.cs = md.GetConfState()
			restores++
		}
		n, err := h.apply(g, r.rd.CommittedEntries, after, &acks)
		if err != nil {
			after.Discard()
			return err
		}
		applied += n
		for _, rs := range r.rd.ReadStates {
			if len(rs.RequestCtx) != 8 {
				continue
			}
			// A duplicated answer (messages may arrive twice) reports a read
			// again: the first one counts, since a waiter gets one result.
			if w := h.reads[binary.BigEndian.Uint64(rs.RequestCtx)]; w != nil && w.group == g.id && !w.known {
				w.index, w.known = rs.Index, true
				g.reads = append(g.reads, w)
				g.lag.confirm(w.term, w.at)
			}
		}
		h.maybeTruncate(g)
		took, err := h.maybeSnapshot(g, after)
		if err != nil {
			after.Discard()
			return err
		}
		if took {
			snapshots++
		}
	}
	if !after.Empty() {
		if err := after.CommitNoSync(); err != nil {
			return fmt.Errorf("committing applied state: %w", err)
		}
	} else {
		after.Discard()
	}
	for _, r := range rds {
		r.g.stored = r.g.applied
	}
	for _, r := range rds {
		if p, ok := r.g.sm.(Publisher); ok && (len(r.rd.CommittedEntries) > 0 || !raft.IsEmptySnap(r.rd.Snapshot)) {
			p.Published()
		}
	}
	// The applied state is visible: answer proposals and reads.
	for _, a := range acks {
		a.w.release()
		a.w.done <- result{index: a.index}
	}
	for _, r := range rds {
		h.finishReads(r.g)
		if r.g.inflight == 0 {
			continue
		}
		// Proposals of a leader that stepped down, or of an earlier term
		// (the node lost and won the leadership between two Readys), may
		// never commit.
		if ss := r.rd.SoftState; ss != nil && ss.RaftState != raft.StateLeader {
			h.failProposals(r.g, ss.Lead)
		} else if t := r.rd.HardState.GetTerm(); t > r.g.propTerm && r.g.propTerm != 0 {
			h.failProposals(r.g, r.g.rn.BasicStatus().Lead)
		}
	}
	for _, r := range rds {
		r.g.rn.Advance(r.rd)
		// Advance may have more work (the leader's own acknowledgement
		// of its append can commit entries): another round takes it.
		if r.g.rn.HasReady() {
			h.dirty[r.g] = struct{}{}
		}
	}
	for _, f := range snaps {
		f()
	}
	h.mu.Lock()
	h.stats.Rounds++
	h.stats.Appended += appended
	h.stats.Applied += applied
	h.stats.Restores += restores
	h.stats.Snapshots += snapshots
	h.mu.Unlock()
	if len(h.dirty) > 0 {
		h.wake()
	}
	return nil
}

func (h *Host) commit(b *raftlog.Batch) error {
	if b.Groups() == 0 {
		b.Discard()
		return nil
	}
	start := time.Now()
	if err := b.Commit(); err != nil {
		return fmt.Errorf("committing raft state: %w", err)
	}
	d := time.Since(start)
	h.mu.Lock()
	h.stats.Commits++
	h.stats.CommitTime += d
	h.mu.Unlock()
	return nil
}

type ack struct {
	w     *waiter
	index uint64
}

// apply hands committed entries to the group's state machine, applies
// configuration changes, and lists in acks this node's proposals among
// them.
func (h *Host) apply(g *group, ents []*raftpb.Entry, b *raftlog.Batch, acks *[]ack) (uint64, error) {
	if len(ents) == 0 {
		return 0, nil
	}
	out := make([]Entry, 0, len(ents))
	var mine []struct{ id, index uint64 }
	var trunc uint64
	for _, e := range ents {
		if e.GetIndex() <= g.applied {
			continue // already in the state machine (restart replay)
		}
		ent := Entry{Index: e.GetIndex(), Term: e.GetTerm()}
		switch e.GetType() {
		case raftpb.EntryNormal:
			if d := e.GetData(); len(d) == headerLen && binary.BigEndian.Uint64(d) == truncationNode {
				// The host's own: truncate the log (after the state
				// machine has the entries before it, below).
				trunc = max(trunc, binary.BigEndian.Uint64(d[8:]))
			} else if len(d) >= headerLen {
				ent.Data = d[headerLen:]
				if binary.BigEndian.Uint64(d) == h.id {
					mine = append(mine, struct{ id, index uint64 }{binary.BigEndian.Uint64(d[8:]), e.GetIndex()})
				}
			}
		case raftpb.EntryConfChange, raftpb.EntryConfChangeV2:
			var cc raftpb.ConfChangeI
			if e.GetType() == raftpb.EntryConfChange {
				c := &raftpb.ConfChange{}
				if err := proto.Unmarshal(e.GetData(), c); err != nil {
					return 0, fmt.Errorf("group %d: bad configuration change at %d: %w", g.id, e.GetIndex(), err)
				}
				cc = c
			} else {
				c := &raftpb.ConfChangeV2{}
				if err := proto.Unmarshal(e.GetData(), c); err != nil {
					return 0, fmt.Errorf("group %d: bad configuration change at %d: %w", g.id, e.GetIndex(), err)
				}
				cc = c
			}
			if ctx := cc.AsV2().Context; len(ctx) == headerLen && binary.BigEndian.Uint64(ctx) == h.id {
				mine = append(mine, struct{ id, index uint64 }{binary.BigEndian.Uint64(ctx[8:]), e.GetIndex()})
			}
			cs := g.rn.ApplyConfChange(cc)
			if err := g.log.SetConfState(b, cs); err != nil {
				return 0, err
			}
			g.cs = cs
		}
		out = append(out, ent)
	}
	if len(out) == 0 {
		return 0, nil
	}
	if err := g.sm.Apply(b.Storage(), out); err != nil {
		return 0, fmt.Errorf("group %d: applying entries %d..%d: %w", g.id, out[0].Index, out[len(out)-1].Index, err)
	}
	last := out[len(out)-1]
	g.applied, g.term = last.Index, last.Term
	if trunc != 0 {
		g.truncTerm = 0
		g.truncated = max(g.truncated, min(trunc, g.applied))
		if err := g.log.Truncate(b, min(trunc, g.applied)); err != nil && !errors.Is(err, raft.ErrCompacted) {
			return 0, fmt.Errorf("group %d: truncating the log to %d: %w", g.id, trunc, err)
		}
	}
	for _, p := range mine {
		if w := h.props[p.id]; w != nil {
			*acks = append(*acks, ack{w, p.index})
			delete(h.props, p.id)
			g.inflight--
		}
	}
	return uint64(len(out)), nil
}

func (h *Host) finishReads(g *group) {
	kept := g.reads[:0]
	for _, w := range g.reads {
		if w.index <= g.applied {
			w.done <- result{index: w.index}
			for id, x := range h.reads {
				if x == w {
					delete(h.reads, id)
					g.inflight--
				}
			}
			continue
		}
		kept = append(kept, w)
	}
	g.reads = kept
}

// truncationNode is the proposing node of the host's own truncation
// entries: no node has id 0. Their proposal id is the index to truncate to.
const truncationNode = 0

// maybeTruncate has a leader propose to truncate its group's log once it
// holds more than TruncateEntries entries (see Config.TruncateEntries).
func (h *Host) maybeTruncate(g *group) {
	n := h.cfg.TruncateEntries
	if n == 0 || (h.cfg.Truncates != nil && !h.cfg.Truncates(g.id)) {
		return
	}
	first, _ := g.log.FirstIndex()
	first = max(first, g.truncated+1)
	if g.applied < first+n {
		return
	}
	st := g.rn.BasicStatus()
	if st.RaftState != raft.StateLeader || g.truncTerm == st.GetTerm() {
		return
	}
	// A replica that is down holds the truncation back, unless the state
	// machine's snapshots are streamed: it then catches up by a snapshot.
	// Down means not recently active in the view of a leader that has led
	// for two election timeouts: a new leader has heard from no one yet.
	_, streamed := g.sm.(SnapshotStreamer)
	streamed = streamed && h.stats.Ticks-g.leadTick >= uint64(2*h.cfg.ElectionTicks)
	upTo := g.applied
	for id, pr := range g.rn.Status().Progress {
		if streamed && id != h.id && !pr.RecentActive {
			continue
		}
		if slices.Contains(g.cs.GetVoters(), id) || slices.Contains(g.cs.GetLearners(), id) {
			upTo = min(upTo, pr.Match)
		}
	}
	if upTo < first+n/2 {
		return // a lagging replica holds it back: not worth an entry yet
	}
	d := make([]byte, headerLen)
	binary.BigEndian.PutUint64(d, truncationNode)
	binary.BigEndian.PutUint64(d[8:], upTo)
	if g.rn.Propose(d) == nil {
		g.truncTerm = st.GetTerm()
		h.wakeGroup(g)
	}
}

// SnapshotEncoder is the contract's replication.SnapshotEncoder.
type SnapshotEncoder = replication.SnapshotEncoder

// maybeSnapshot takes a snapshot of the group's state machine and truncates
// its log once SnapshotEntries entries were applied since the last one. A
// SnapshotEncoder's snapshot is encoded off the loop and recorded by a
// later round (recordSnapshot); it reports false then.
func (h *Host) maybeSnapshot(g *group, b *raftlog.Batch) (bool, error) {
	if _, ok := g.sm.(SnapshotStreamer); ok || g.applied < g.snapshot+h.cfg.SnapshotEntries || g.encoding {
		return false, nil
	}
	start := time.Now()
	defer func() {
		d := time.Since(start)
		h.mu.Lock()
		h.stats.SnapshotTime += d
		h.mu.Unlock()
	}()
	if enc, ok := g.sm.(SnapshotEncoder); ok {
		encode, err := enc.SnapshotEncoder()
		if err != nil {
			return false, fmt.Errorf("group %d: snapshot: %w", g.id, err)
		}
		index, cs := g.applied, g.cs
		g.encoding = true
		h.bg.Add(1)
		go func() {
			defer h.bg.Done()
			data, err := encode()
			h.enqueue(event{fn: func() { h.recordSnapshot(g, index, cs, data, err) }})
		}()
		return false, nil
	}
	data, err := g.sm.Snapshot()
	if err != nil {
		return false, fmt.Errorf("group %d: snapshot: %w", g.id, err)
	}
	if err := h.snapshotInto(b, g, g.applied, g.cs, data); err != nil {
		return false, err
	}
	return true, nil
}

// snapshotInto records in b the snapshot data of group g at index, and
// truncates the log up to KeepEntries before it.
func (h *Host) snapshotInto(b *raftlog.Batch, g *group, index uint64, cs *raftpb.ConfState, data []byte) error {
	if _, err := g.log.CreateSnapshot(b, index, cs, data); err != nil {
		return fmt.Errorf("group %d: snapshot: %w", g.id, err)
	}
	g.snapshot = index
	if index > h.cfg.KeepEntries {
		first, _ := g.log.FirstIndex()
		if upTo := index - h.cfg.KeepEntries; upTo >= first {
			if err := g.log.Truncate(b, upTo); err != nil {
				return fmt.Errorf("group %d: truncation: %w", g.id, err)
			}
		}
	}
	return nil
}

// recordSnapshot records, in the loop, a snapshot encoded off it. One
// that a snapshot received from the leader has overtaken meanwhile is
// dropped; so is one that failed to encode (logged; a later round tries
// again).
func (h *Host) recordSnapshot(g *group, index uint64, cs *raftpb.ConfState, data []byte, err error) {
	g.encoding = false
	if h.groups[g.id] != g || index <= g.snapshot {
		return
	}
	if err != nil {
		h.cfg.Logf("replication: group %d: encoding a snapshot at %d: %v", g.id, index, err)
		return
	}
	b := h.cfg.Store.NewBatch()
	if err := h.snapshotInto(b, g, index, cs, data); err != nil {
		b.Discard()
		h.cfg.Logf("replication: %v", err)
		return
	}
	if err := b.CommitNoSync(); err != nil {
		h.cfg.Logf("replication: group %d: recording a snapshot at %d: %v", g.id, index, err)
		return
	}
	h.mu.Lock()
	h.stats.Snapshots++
	h.mu.Unlock()
}

// raftLogger passes raft's warnings and errors to logf and drops the rest.
type raftLogger struct{ logf func(string, ...any) }

func (l raftLogger) Debug(...any)          {}
func (l raftLogger) Debugf(string, ...any) {}
func (l raftLogger) Info(...any)           {}
func (l raftLogger) Infof(string, ...any)  {}
func (l raftLogger) Warning(v ...any)      { l.logf("raft: %s", fmt.Sprint(v...)) }
func (l raftLogger) Warningf(f string, v ...any) {
	l.logf("raft: "+f, v...)
}
func (l raftLogger) Error(v ...any)            { l.logf("raft: %s", fmt.Sprint(v...)) }
func (l raftLogger) Errorf(f string, v ...any) { l.logf("raft: "+f, v...) }
func (l raftLogger) Fatal(v ...any)            { panic(fmt.Sprint(v...)) }
func (l raftLogger) Fatalf(f string, v ...any) { panic(fmt.Sprintf(f, v...)) }
func (l raftLogger) Panic(v ...any)            { panic(fmt.Sprint(v...)) }
func (l raftLogger) Panicf(f string, v ...any) { panic(fmt.Sprintf(f, v...)) }

func (h *Host) untrack(w *waiter) {
	if g := h.groups[w.group]; g != nil && g.inflight > 0 {
		g.inflight--
	}
}

// quiesceMarker is the context of the heartbeat by which a leader tells
// its followers to quiesce. The host consumes it; raft never sees it.
const quiesceMarker = "quiesce!!"

// wakeGroup makes a quiesced group tick again, and marks it for the next
// round.
func (h *Host) wakeGroup(g *group) {
	if g.quiesced {
		g.quiesced = false
		h.active[g] = struct{}{}
	}
	h.dirty[g] = struct{}{}
}

// idle reports whether the group has nothing to do on this node: nothing in
// flight, no Ready, everything committed applied.
func (h *Host) idle(g *group, st raft.BasicStatus) bool {
	return g.inflight == 0 && len(g.reads) == 0 && !g.rn.HasReady() && g.applied == st.GetCommit() && st.LeadTransferee == 0
}

// quiesceLeaders quiesces every ticking group this node leads whose
// followers all hold its whole log, telling them with a marked heartbeat.
func (h *Host) quiesceLeaders() {
	for g := range h.active {
		st := g.rn.BasicStatus()
		if st.RaftState != raft.StateLeader || !h.idle(g, st) {
			continue
		}
		last, err := g.log.LastIndex()
		if err != nil || st.GetCommit() != last {
			continue
		}
		caughtUp := true
		var followers []uint64
		g.rn.WithProgress(func(id uint64, _ raft.ProgressType, pr tracker.Progress) {
			if pr.Match != last {
				caughtUp = false
			}
			if id != h.id {
				followers = append(followers, id)
			}
		})
		if !caughtUp {
			continue
		}
		term, commit := st.GetTerm(), st.GetCommit()
		for _, to := range followers {
			m := &raftpb.Message{Type: raftpb.MsgHeartbeat.Enum(), From: proto.Uint64(h.id), To: proto.Uint64(to),
				Term: proto.Uint64(term), Commit: proto.Uint64(commit), Index: proto.Uint64(last), Context: []byte(quiesceMarker)}
			h.cfg.Transport.Send(to, []transport.Envelope{{Group: g.id, Msg: m}})
		}
		g.quiesced = true
		delete(h.active, g)
	}
}

// quiesceFollower quiesces a follower on its leader's request if it
// holds exactly the leader's log and commit index and serves no read. What
// it has still to apply or answer (a heartbeat response) goes out in this
// round whether it ticks or not.
func (h *Host) quiesceFollower(g *group, m *raftpb.Message) bool {
	if !h.cfg.Quiesce || g.quiesced {
		return g.quiesced
	}
	st := g.rn.BasicStatus()
	last, err := g.log.LastIndex()
	if err != nil || st.RaftState != raft.StateFollower || st.Lead != m.GetFrom() || st.GetTerm() != m.GetTerm() ||
		st.GetCommit() != m.GetCommit() || last != m.GetIndex() || g.inflight > 0 || len(g.reads) > 0 {
		return false
	}
	g.quiesced = true
	delete(h.active, g)
	return true
}

// NodeDown tells the host that node id is down: every quiesced group it
// leads here wakes up, so that its followers elect a new leader.
func (h *Host) NodeDown(id uint64) {
	h.enqueue(event{fn: func() {
		for _, g := range h.groups {
			if g.quiesced && g.rn.BasicStatus().Lead == id {
				h.wakeGroup(g)
			}
		}
	}})
}

// Quiesced returns how many of this node's groups are quiesced.
func (h *Host) Quiesced() int {
	n := 0
	_ = h.do(func() error {
		for _, g := range h.groups {
			if g.quiesced {
				n++
			}
		}
		return nil
	})
	return n
}

// failProposals answers the group's proposals in flight on a replica that
// is no longer the leader: their outcome is unknown.
// failReads fails the reads of g whose index is not known yet when its
// leader changes: raft forwards a follower's read to the leader it knows
// and drops it silently if that one no longer leads, so such a read would
// never be answered. The caller asks again (ErrReadLost).
func (h *Host) failReads(g *group, lead uint64) {
	for id, w := range h.reads {
		if w.group == g.id && !w.known {
			w.done <- result{err: fmt.Errorf("%w: %w", ErrReadLost, &NotLeaderError{Group: g.id, Node: h.id, Leader: lead})}
			delete(h.reads, id)
			g.inflight--
		}
	}
}

func (h *Host) failProposals(g *group, lead uint64) {
	for id, w := range h.props {
		if w.group == g.id {
			w.release()
			w.done <- result{err: fmt.Errorf("%w: %w", ErrAmbiguous, &NotLeaderError{Group: g.id, Node: h.id, Leader: lead})}
			delete(h.props, id)
			g.inflight--
		}
	}
}
