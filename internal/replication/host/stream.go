package host

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/parsecdb/parsec/internal/replication"
	"github.com/parsecdb/parsec/internal/replication/raftlog"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
)

// Streamed snapshots. A state machine whose state is large and already
// durable in the store (a physical partition) implements SnapshotStreamer:
// the host never asks it for a snapshot in one piece, nor takes periodic
// ones. When raft needs to send a replica a snapshot (the replica needs
// entries the leader's log no longer holds), the leader's storage answers
// with a snapshot whose data is only a descriptor (the leader's node id and
// a stream id) and whose index is what the state machine has applied, and
// captures that state (OpenSnapshot, a storage snapshot: cheap, in the
// loop). Raft sends the descriptor in its snapshot message. The replica
// does not step that message at once: off the loop, it pulls the state in
// chunks of SnapshotChunkBytes from the leader (Config.FetchSnapshot, served
// there by Host.ServeSnapshot) and stages them durably and invisibly
// (StageSnapshot); then it steps the message, raft takes the snapshot, and
// the host installs the staged state (Restore with the descriptor as its
// data) and records the snapshot in the log (raftlog.ApplySnapshot), as for
// any snapshot. Memory stays bounded by a chunk on both sides, and the
// loop, which every group shares, never waits for the transfer.
//
// The leader keeps its raft progress for the replica in the snapshot state
// until the replica acknowledges the snapshot's index, which raft turns
// into replication. A stream idle for SnapshotTimeout is closed, and the
// leader reports the snapshot failed, so that raft sends another: a
// replica that crashed or could not stage it is not waited for forever.

// The contract's snapshot streaming interfaces (package replication).
type (
	SnapshotStreamer = replication.SnapshotStreamer
	SnapshotReader   = replication.SnapshotReader
)

// A snapshot descriptor: the serving node and its stream id.
const descriptorLen = 16

func descriptor(node, stream uint64) []byte {
	d := binary.BigEndian.AppendUint64(make([]byte, 0, descriptorLen), node)
	return binary.BigEndian.AppendUint64(d, stream)
}

func parseDescriptor(d []byte) (node, stream uint64, ok bool) {
	if len(d) != descriptorLen {
		return 0, 0, false
	}
	return binary.BigEndian.Uint64(d), binary.BigEndian.Uint64(d[8:]), true
}

// outStream is a snapshot this node serves.
type outStream struct {
	mu     sync.Mutex
	group  uint64
	to     uint64 // the replica it was sent to (0 until the message goes)
	r      SnapshotReader
	seq    uint64 // the next chunk's number
	prev   []byte // the chunk seq-1, served again if asked again
	used   time.Time
	closed bool
}

// groupStorage is the raft storage of a group: its log, and for a
// SnapshotStreamer, snapshots captured when raft asks for one.
type groupStorage struct {
	*raftlog.Log
	h *Host
	g *group
}

// Snapshot implements raft.Storage.
func (s *groupStorage) Snapshot() (*raftpb.Snapshot, error) {
	st, ok := s.g.sm.(SnapshotStreamer)
	if !ok {
		return s.Log.Snapshot()
	}
	return s.h.openStream(s.g, st)
}

// openStream captures group g's state for a replica; called by raft, in
// the loop. A state that cannot be captured now (the state machine
// refuses) is reported temporarily unavailable: raft asks again later.
func (h *Host) openStream(g *group, st SnapshotStreamer) (*raftpb.Snapshot, error) {
	if g.stored != g.applied {
		// Called from within a round (a proposal the round makes), before
		// what it applied is committed: the store is behind the index.
		return nil, raft.ErrSnapshotTemporarilyUnavailable
	}
	term, err := g.log.Term(g.applied)
	if err != nil {
		h.cfg.Logf("replication: group %d: no term for the snapshot at %d: %v", g.id, g.applied, err)
		return nil, raft.ErrSnapshotTemporarilyUnavailable
	}
	r, err := st.OpenSnapshot()
	if err != nil {
		h.cfg.Logf("replication: group %d: cannot capture a snapshot: %v", g.id, err)
		return nil, raft.ErrSnapshotTemporarilyUnavailable
	}
	h.smu.Lock()
	h.nextStream++
	id := h.nextStream
	h.streams[id] = &outStream{group: g.id, r: r, used: time.Now()}
	h.smu.Unlock()
	index := g.applied
	return &raftpb.Snapshot{
		Data:     descriptor(h.id, id),
		Metadata: &raftpb.SnapshotMetadata{Index: &index, Term: &term, ConfState: g.cs},
	}, nil
}

// sentStream records the replica a streamed snapshot message goes to.
func (h *Host) sentStream(m *raftpb.Message) {
	node, id, ok := parseDescriptor(m.GetSnapshot().GetData())
	if !ok || node != h.id {
		return
	}
	h.smu.Lock()
	if s := h.streams[id]; s != nil {
		s.to = m.GetTo()
	}
	h.smu.Unlock()
}

// ServeSnapshot returns chunk seq of stream id, which this node serves:
// chunks are asked in order, the last one may be asked again (its answer
// was lost), and an empty chunk is the end.
func (h *Host) ServeSnapshot(id, seq uint64) ([]byte, error) {
	h.smu.Lock()
	s := h.streams[id]
	h.smu.Unlock()
	if s == nil {
		return nil, fmt.Errorf("replication: snapshot stream %d is unknown here, or expired", id)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.used = time.Now()
	switch {
	case seq+1 == s.seq:
		return s.prev, nil
	case seq != s.seq:
		return nil, fmt.Errorf("replication: snapshot stream %d: chunk %d asked, %d expected", id, seq, s.seq)
	case s.closed:
		return nil, fmt.Errorf("replication: snapshot stream %d is closed", id)
	}
	c, err := s.r.Next(h.cfg.SnapshotChunkBytes)
	if err != nil {
		return nil, fmt.Errorf("replication: snapshot stream %d: %w", id, err)
	}
	if len(c) == 0 {
		s.r.Close()
		s.closed = true
	}
	s.prev, s.seq = c, s.seq+1
	h.mu.Lock()
	h.stats.SnapshotBytesSent += uint64(len(c))
	h.mu.Unlock()
	return c, nil
}

// expireStreams closes the streams idle for SnapshotTimeout, in the loop,
// and reports each one's snapshot failed to raft, which sends another if
// the replica still needs one (a replica that has caught up ignores it).
func (h *Host) expireStreams(now time.Time) {
	h.smu.Lock()
	var gone []*outStream
	for id, s := range h.streams {
		s.mu.Lock()
		if now.Sub(s.used) > h.cfg.SnapshotTimeout {
			if !s.closed {
				s.r.Close()
				s.closed = true
			}
			gone = append(gone, s)
			delete(h.streams, id)
		}
		s.mu.Unlock()
	}
	h.smu.Unlock()
	for _, s := range gone {
		if g := h.groups[s.group]; g != nil && s.to != 0 {
			g.rn.ReportSnapshot(s.to, raft.SnapshotFailure)
			h.wakeGroup(g)
		}
	}
}

// closeStreams closes every stream (the host stops).
func (h *Host) closeStreams() {
	h.smu.Lock()
	defer h.smu.Unlock()
	for id, s := range h.streams {
		s.mu.Lock()
		if !s.closed {
			s.r.Close()
			s.closed = true
		}
		s.mu.Unlock()
		delete(h.streams, id)
	}
}

// receiveStreamed takes, in the loop, a snapshot message for a
// SnapshotStreamer: it fetches and stages the state off the loop, then
// steps the message. It reports false for a message to step as it is (not
// a streamed snapshot, or one not newer than what the replica has, which
// raft answers by itself).
func (h *Host) receiveStreamed(g *group, m *raftpb.Message) bool {
	st, ok := g.sm.(SnapshotStreamer)
	if !ok || m.GetType() != raftpb.MsgSnap {
		return false
	}
	node, id, ok := parseDescriptor(m.GetSnapshot().GetData())
	index := m.GetSnapshot().GetMetadata().GetIndex()
	if !ok || index <= g.applied {
		return false
	}
	if g.staging {
		return true // one at a time; the leader sends again if this one fails
	}
	g.staging = true
	h.bg.Add(1)
	go func() {
		defer h.bg.Done()
		err := h.stage(st, g.id, node, id, index, m.GetSnapshot().GetData())
		h.enqueue(event{fn: func() {
			g.staging = false
			if h.groups[g.id] != g {
				return
			}
			if err != nil {
				h.cfg.Logf("replication: group %d: receiving a snapshot at %d from node %d: %v", g.id, index, node, err)
				return
			}
			h.wakeGroup(g)
			_ = g.rn.Step(m)
		}})
	}()
	return true
}

// stage pulls the chunks of stream id from node and stages them; a chunk
// whose fetch fails is asked again a few times.
func (h *Host) stage(st SnapshotStreamer, group, node, id, index uint64, desc []byte) error {
	if h.cfg.FetchSnapshot == nil {
		return errors.New("no way to fetch a streamed snapshot (Config.FetchSnapshot)")
	}
	var seq uint64
	next := func() ([]byte, error) {
		var err error
		for attempt := 0; attempt < 3; attempt++ {
			if h.ctx.Err() != nil {
				return nil, ErrStopped
			}
			ctx, cancel := context.WithTimeout(h.ctx, h.cfg.SnapshotTimeout)
			var c []byte
			c, err = h.cfg.FetchSnapshot(ctx, node, id, seq)
			cancel()
			if err == nil {
				seq++
				h.mu.Lock()
				h.stats.SnapshotBytesReceived += uint64(len(c))
				h.mu.Unlock()
				return c, nil
			}
		}
		return nil, fmt.Errorf("fetching chunk %d: %w", seq, err)
	}
	return st.StageSnapshot(desc, index, next)
}
