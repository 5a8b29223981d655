package replication

import (
	"errors"
	"fmt"
	"time"

	"github.com/parsecdb/parsec/internal/storage"
)

// Entry is one committed log entry handed to a StateMachine. Data is the
// proposed command, or nil for entries the log writes itself (a new
// leader's empty entry, configuration changes, which the log applies).
type Entry struct {
	Index, Term uint64
	Data        []byte
}

// StateMachine is what a group replicates: a physical partition
// (engine.Partition.Replica) or the catalog (engine.Engine.CatalogReplica).
// The log calls it from one goroutine, one call at a time per node, in log
// order.
type StateMachine interface {
	// Applied returns the index of the last entry applied (durably, if the
	// state machine is durable).
	Applied() uint64
	// Apply applies committed entries, in order; their indexes follow
	// Applied() without a gap. The state machine writes its changes, with
	// its applied index, into b, which the log commits for all groups of
	// the round at once. Whether that commit is synced is the log's
	// choice: a log that is itself durable (raft's) commits without a
	// sync, and a crash then only replays entries from it; a log that
	// keeps no entries (a single node's local log) syncs it.
	Apply(b *storage.Batch, entries []Entry) error
	// Snapshot returns the state as of Applied(), to be sent to a replica
	// that lags behind the log.
	Snapshot() ([]byte, error)
	// Restore replaces the state with a snapshot's, writing into b: the
	// state as of entry index of term term. data nil is the empty initial
	// state.
	Restore(b *storage.Batch, index, term uint64, data []byte) error
}

// A Publisher is a state machine that shows what Apply and Restore wrote
// to its readers only once the log has committed it: Published is called
// after the round's batch commits, before the proposals it applied are
// answered.
type Publisher interface {
	Published()
}

// SnapshotEncoder is implemented by a StateMachine whose snapshot is
// costly to encode (it copies its whole state): the log then takes the
// snapshot in two steps, so that its loop, which every group of the node
// shares, never waits for the encoding.
type SnapshotEncoder interface {
	// SnapshotEncoder captures the state as of Applied(), cheaply (the
	// log calls it in its loop, as it calls Apply), and returns a
	// function that encodes that state. The log calls the function on
	// another goroutine, concurrently with later calls of Apply, which
	// must not change what it encodes.
	SnapshotEncoder() (encode func() ([]byte, error), err error)
}

// A SnapshotStreamer is a StateMachine whose snapshots are streamed: its
// state is large and already durable in the store (a physical partition),
// so it is never asked for a snapshot in one piece. The leader captures
// its state (OpenSnapshot) and a lagging replica pulls it in chunks and
// stages it (StageSnapshot); Restore, given the stream's id as its data,
// installs what was staged. See host/stream.go for the protocol.
type SnapshotStreamer interface {
	// OpenSnapshot captures the state as of Applied() for reading in
	// chunks off the loop. The log calls it in its loop: it must be cheap.
	OpenSnapshot() (SnapshotReader, error)
	// StageSnapshot reads the chunks of the snapshot id of the state at
	// index with next (an empty chunk ends it) and keeps them durably, not
	// yet visible, replacing any snapshot staged before. It runs off the
	// loop, concurrently with Apply. Restore, given id as its data,
	// installs the staged state.
	StageSnapshot(id []byte, index uint64, next func() ([]byte, error)) error
	// DiscardStaged removes staged snapshots that were not installed.
	DiscardStaged() error
}

// A SnapshotReader reads a captured state in chunks.
type SnapshotReader interface {
	// Next returns the next chunk, of about maxBytes, or an empty one at
	// the end.
	Next(maxBytes int) ([]byte, error)
	Close()
}

// Errors of proposals and reads. A proposal that fails with ErrStopped,
// ErrTimeout or ErrAmbiguous has an unknown outcome: its entry may still
// commit. The others say it was not proposed.
var (
	// ErrStopped means the log stopped; the outcome of a proposal in
	// flight is unknown.
	ErrStopped = errors.New("replication: host stopped")
	// ErrGroupNotFound means the node hosts no replica of the group.
	ErrGroupNotFound = errors.New("replication: group not found on this node")
	// ErrTimeout means the context ended first; a proposal may still
	// commit later.
	ErrTimeout = errors.New("replication: timed out, outcome unknown")
	// ErrTooLarge means a proposal exceeds the log's bound on its size.
	ErrTooLarge = errors.New("replication: proposal too large")
	// ErrAmbiguous means this node lost the leadership while a proposal
	// was in flight: it may still commit under the new leader, or not.
	ErrAmbiguous = errors.New("replication: leadership lost, outcome unknown")
	// ErrReadLost means a ReadIndex lost its way as the group's leader
	// changed; nothing was read, and it may be asked again.
	ErrReadLost = errors.New("replication: the read was lost as the leadership changed; ask again")
	// ErrBusy means the group's uncommitted log is full; the proposal was
	// not taken.
	ErrBusy = errors.New("replication: group busy, proposal not taken")
)

// OutcomeUnknown reports whether a proposal that failed with err may still
// commit: its proposer lost the leadership, or stopped waiting, or
// stopped, while the entry was in flight.
func OutcomeUnknown(err error) bool {
	return errors.Is(err, ErrAmbiguous) || errors.Is(err, ErrTimeout) || errors.Is(err, ErrStopped)
}

// NotLeaderError is returned by a proposal or a read on a replica that is
// not the group's leader: nothing was proposed. Leader is the leader this
// replica knows, 0 if it knows none (an election is under way): where a
// gateway sends the command instead.
type NotLeaderError struct {
	Group, Node, Leader uint64
}

func (e *NotLeaderError) Error() string {
	if e.Leader == 0 {
		return fmt.Sprintf("replication: group %d: node %d is not the leader and knows of none", e.Group, e.Node)
	}
	return fmt.Sprintf("replication: group %d: node %d is not the leader; node %d is", e.Group, e.Node, e.Leader)
}

// LagInfo is what a replica of a group knows of how far it lags behind
// its leader: what a bounded-staleness read served by it, without asking
// the leader, would miss.
//
// A follower learns the leader's whole commit index only from the
// messages that carry it: appends (raft puts the leader's commit index in
// every append) and the quiesce marker. A heartbeat carries the commit
// index only up to what the follower is known to hold, so it says nothing
// of entries the follower has not received: it counts as word from the
// leader (LeaderHeard) but never makes the replica synced.
type LagInfo struct {
	// Leader is true if this replica leads the group (as raft sees it
	// now); Lead is the leader it knows, 0 if none.
	Leader bool
	Lead   uint64
	// Commit is the highest index this replica knows to be committed:
	// its own commit index, or the leader's as an append or a quiesce
	// marker told it, which may be ahead of the entries it holds.
	// Applied is the index its state machine has applied. Commit-Applied
	// entries are committed and not yet visible to reads here.
	Commit, Applied uint64
	// LeaderHeard is when this replica last stepped a message of its
	// current leader (any: append, heartbeat, quiesce marker); now on a
	// leader, zero if it never heard from this leader.
	LeaderHeard time.Time
	// Synced is the latest time T such that this replica has applied
	// every entry its leader had committed when it sent a message this
	// replica received at T: the writes a read here misses were all
	// committed after the leader sent that message. On a leader that has
	// applied its whole commit index it is when the latest of its own
	// ReadIndex calls that a quorum confirmed began: the quorum's
	// acknowledgements were sent after it, in the leader's term, so no
	// other leader can have been elected, nor have committed anything,
	// before it. A leader paused or cut off, which raft sees as the leader
	// until its next election timeout of ticks, thus ages like a follower
	// that stopped hearing from its leader, whatever it receives late
	// (acknowledgements that waited in its socket while it was paused
	// confirm only the reads they answer). Zero if unknown.
	Synced time.Time
	// Quiesced is true if the group is quiesced here on its leader's
	// word (the leader had nothing pending and this replica held all of
	// its log), everything that word named is applied, and this host has
	// dropped no received message since: the replica has nothing to apply
	// unless the leader has woken the group since, which the leader's next
	// heartbeat (it heartbeats a woken group every HeartbeatTicks), or
	// NodeDown when the leader's node is unreachable, reveals by waking the
	// group here. That relies on the liveness mechanism and on the
	// leader's messages reaching this replica; a reader that cannot rely
	// on them forever bounds how long it trusts the quiescence by
	// QuiescedAt, when the leader's last quiesce marker came.
	Quiesced   bool
	QuiescedAt time.Time
}
