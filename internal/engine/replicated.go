package engine

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	mrand "math/rand/v2"
	"sync"
	"time"

	"github.com/parsecdb/parsec/internal/binfmt"
	"github.com/parsecdb/parsec/internal/replication"
	"github.com/parsecdb/parsec/internal/storage"
)

// The write path of a partition: evaluate, propose, apply. A partition's
// loop does not commit its group of commands: it evaluates them, proposes
// the outcome as one entry of the partition's log (its raft group,
// GroupID, with Options.Replicator; else the single node's local log,
// local.go) and waits. Every replica, the proposer's included, applies an
// entry once the log has committed it, through its state machine
// (Partition.Replica: ApplyEntries, then Publish once the batch the
// entry's writes went into has committed), with the index it reached
// (storage.PartitionAppliedKey). The proposer then reads the commands'
// results from what its own replica recorded for it: an entry carries a
// random token, and a replica records the results of the entries whose
// token one of its own proposals in flight registered, and no others.
// Nothing is applied that the log has not committed, so a replica never
// holds a write the others may lack. A single node is a cluster of one:
// the local log commits the entry with a WAL sync and applies it at once,
// so its outcome is always known, and the rest of this comment is about
// raft.
//
// A proposal whose proposer loses the leadership while its entry is in
// flight (replication.ErrAmbiguous), or that times out
// (replication.ErrTimeout), has an unknown outcome: the entry may still
// commit under the new leader, or never. The proposer settles it (settle)
// rather than answer that: its token's slot stays registered while
// Replicator.Settle has this replica apply everything the group's new
// leader has committed as of a ReadIndex that leader answers. Raft answers
// one only once the leader has committed an entry of its own term, and
// after that no entry of an earlier term that is not already committed can
// commit. So if the slot is filled, the entry committed and its results
// are the answer (no retry, no second write); if not, it never will, and
// the write fails with ErrNotLeader wrapping the log's NotLeaderError
// naming the new leader, which a gateway treats as it treats a follower's
// refusal: it sends the command there, once. If the group cannot be
// settled within settleTimeout (no leader reachable), or a proposal timed
// out on a node that still leads the group (the proposal's term may still
// be running), the outcome stays unknown: ErrOutcomeUnknown, wrapping the
// log's error. A stopping host (replication.ErrStopped) is not settled.
//
// A split is an entry of the parent's log like any command: every replica
// applies it (reading the store as the round's batch leaves it), and once
// it is committed the children replace the parent in the routing table and
// the Replicator creates their groups.
//
// The catalog has a log of its own, the meta group with Options.Catalog,
// else a local one (catalog_log.go): every catalog change is an entry of
// it, which every node applies (Engine.CatalogReplica), and memory follows
// other nodes' entries in the background (WaitCatalog). A container
// created there gets the members of its partitions' groups from
// CatalogReplicator.Placement, stored in its record (Replicas), and every
// node has the Replicator create those groups (CreateGroups) once the
// partitions exist in its memory. An entry of a partition whose records
// the store no longer holds (its container deleted, or the partition
// split) writes nothing (goneIn). What is not replicated through raft yet:
// index builds (refused, and so is a new indexing policy, which would
// start one; the local log runs them), and snapshots of the catalog's
// state machine (its log is kept whole). A partition's snapshots are
// streamed from the store (rangesnap.go).

// Replicator proposes entries to the partitions' logs: a cluster's raft
// groups (replication/host.Host, through the cluster's node), or a single
// node's local logs (localLog).
type Replicator interface {
	// Propose replicates data in group and returns the entry's index once
	// it is committed and applied on this node.
	Propose(ctx context.Context, group uint64, data []byte) (uint64, error)
	// Split is told, on every replica, that the partition of group parent
	// split into the partitions of groups children, once the split is
	// applied: it creates the children's groups, with the parent's members.
	// It is called from the replication loop, so it must not wait for it.
	Split(parent uint64, children []uint64)
	// CreateGroups is told, on every node, that a new container's
	// partitions exist: it creates their groups (groups, the GroupID of
	// each) with the given members (the container record's Replicas). It
	// is called with no engine lock held and outside the replication
	// loop, so it may wait for the loop. Only containers created with
	// Options.Catalog set have Replicas.
	CreateGroups(groups []uint64, members []uint64)
	// Leads reports whether this node leads group: background work that
	// writes (expiring items) is done by the leader only.
	Leads(group uint64) bool
	// Barrier returns once this node has applied every entry committed in
	// the groups when it was called.
	Barrier(ctx context.Context, groups []uint64) error
	// Lead returns once this node leads group, which it asks the current
	// leader to hand over.
	Lead(ctx context.Context, group uint64) error
	// CanSplit fails when group's partition must not split now: while a
	// replica is behind the leader's truncated log, it could catch up on
	// the parent only by a snapshot, and a split parent has none (its
	// state lives on in its children).
	CanSplit(group uint64) error
	// Settle is called after Propose failed with an unknown outcome,
	// cause (replication.ErrAmbiguous, replication.ErrTimeout). It returns, with the
	// group's leader as this node then knows it (0: none), once this node
	// has applied an entry of group committed in a term later than that of
	// the failed proposal: the proposal's entry is then applied here, or
	// can never commit. It fails if it cannot establish that before ctx
	// ends (no leader reachable), or at all (a proposal that timed out on a
	// node that still leads the group: its term may be the proposal's).
	Settle(ctx context.Context, group uint64, cause error) (leader uint64, err error)
}

// GroupPartition returns the partition of a raft group, of a started
// container of a replicated engine, without taking the engine's locks: a
// replication host may call it from its loop (its NewStateMachine).
func (e *Engine) GroupPartition(group uint64) (*Partition, bool) {
	v, ok := e.groups.Load(group)
	if !ok {
		return nil, false
	}
	return v.(*Partition), true
}

// GroupID is the raft group of a partition: a hash of the container's
// resource id and the range id.
func GroupID(rid [storage.RidLen]byte, rangeID string) uint64 {
	h := fnv.New64a()
	h.Write(rid[:])
	h.Write([]byte(rangeID))
	return h.Sum64() | 1 // never 0
}

// groupIDs returns the raft groups of the container's partitions.
func (c *Container) groupIDs() []uint64 {
	parts := c.Partitions()
	ids := make([]uint64, len(parts))
	for i, p := range parts {
		ids[i] = p.GroupID()
	}
	return ids
}

// GroupID returns the partition's raft group.
func (p *Partition) GroupID() uint64 { return GroupID(p.c.rid, p.info.ID) }

// proposeTimeout bounds how long a partition's loop waits for its entry.
const proposeTimeout = 30 * time.Second

// replState is a replicated partition's apply state.
type replState struct {
	mu      sync.Mutex
	loaded  bool
	applied uint64 // the raft index applied
	// published is the raft index whose state is committed and the
	// partition's (Publish): what a read may rely on.
	published uint64
	pending   *partSM      // the state after entries applied but not yet published
	split     *splitResult // a split applied but not yet published
	// alive is one more than the count of container deletions applied
	// when the store last held the partition's records (goneIn); 0 if
	// not known.
	alive uint64
	// waiting holds, by the token its entry carries, a slot for the
	// results of each proposal of this replica in flight; apply fills the
	// slots of the entries it finds there, and records no other results.
	waiting map[uint64]*[]entryResult
	// logs holds, by token, the commands of this replica's proposals in
	// flight that go to the command log (Options.commandLog) once
	// applied, and toLog what the entries applied but not yet published
	// hand it: they are handed in Publish, before a split's children can
	// take writes, so that the command log has the order of the store.
	logs  map[uint64][]*Command
	toLog []LogEntry
}

type entryResult struct {
	res      []OpResult
	next     []byte
	children []RangeInfo
	err      error
}

// Entries of a partition's group. After its token, an entry holds either
// commands, which every replica applies by evaluating them as the local
// path does (applyEntry), or the outcome of commands the proposer has
// already evaluated: the store writes they make, the partition state they
// leave, and the LSN of the state they were evaluated on. A replica applies
// such an entry by adding its writes to the round's batch, without parsing
// a document or computing an index entry: evaluation, the costly part, is
// done once, by the leader. The LSN makes it safe: every command that
// changes the state advances it, so an evaluated entry whose LSN is not the
// replica's current one was evaluated on a state that another entry has
// changed since (a former leader's, committed after this leader read the
// store), and every replica alike rejects it, writing nothing; its
// proposer evaluates again. Splits and index builds, which read the store
// as the entries before them leave it on each replica, travel as commands.
//
//	commands:  token (8) | count (uvarint, > 0) | count commands (uvarint length, bytes)
//	evaluated: token (8) | 0 (uvarint) | base LSN (uvarint) | state (uvarint length, bytes) | writes (uvarint length, batch representation)

// errStaleEvaluation is an evaluated entry's rejection: it was evaluated on
// a state that has changed since.
var errStaleEvaluation = errors.New("the write was evaluated on a state that changed before it committed")

// evaluatedMaxBytes bounds an evaluated entry; a group whose writes are
// larger is replicated as commands, which are smaller.
const evaluatedMaxBytes = 6 << 20

// maxEvaluations bounds how often a group of commands is evaluated again
// after its entry was rejected (a leadership change under way).
const maxEvaluations = 4

// commitGroup is the write path of every partition, replicated or a single
// node's (whose log is local.go's): it evaluates a group of commands on
// the partition's published state, proposes the outcome (or, for a split
// or an index build, the commands) as one entry of the partition's log,
// and answers every request with the results the partition's own replica
// recorded when it applied the entry, once the entry is committed and
// applied. A command that fails in evaluation fails alone (its writes sit
// in its own overlay, see txn), and the others go on; a failure of the
// entry fails every command that had not failed on its own.
func (p *Partition) commitGroup(group []*request) {
	defer func() {
		for _, r := range group {
			close(r.done)
		}
	}()
	if group[0].cmd.Reindex != nil && p.c.e.logKeepsEntries() {
		for _, r := range group {
			r.err = fmt.Errorf("%w: index builds of replicated partitions are not supported yet", ErrBadRequest)
		}
		return
	}
	if runsAlone(group[0].cmd) {
		p.proposeCommands(group)
		return
	}
	for attempt := 1; ; attempt++ {
		data, err := p.evaluate(group)
		if err != nil || data == nil {
			return // the results are the commands' (none to replicate) or err's
		}
		if len(data) > evaluatedMaxBytes {
			p.proposeCommands(group)
			return
		}
		res, idx, err := p.replicate(data, evaluated(group))
		stale := err == nil && len(res) == 1 && errors.Is(res[0].err, errStaleEvaluation)
		switch {
		case err != nil:
		case len(res) != 1:
			err = internalError("evaluated entry %d was applied with results %v", idx, res)
		case stale && attempt < maxEvaluations:
			continue
		case stale:
			err = fmt.Errorf("%w: %v; retry", ErrUnavailable, res[0].err)
		default:
			// The entry's own failure: its partition was gone when it
			// applied (the container deleted, or the partition split:
			// skipEntries), and it wrote nothing.
			err = res[0].err
		}
		if err != nil {
			for _, r := range group {
				r.res, r.next = nil, nil
				if r.err == nil {
					r.err = err
				}
			}
			return
		}
		p.c.maybeSplitForStorage(p)
		return
	}
}

// evaluate applies group's commands to the partition's published state in
// a batch it discards, recording each command's results in its request,
// and returns the evaluated entry, or nil if every command failed.
func (p *Partition) evaluate(group []*request) ([]byte, error) {
	c := p.c
	// Publish, in the replication loop, changes the state under the lock.
	p.repl.mu.Lock()
	sm := partSM{st: p.state, ix: p.ix}
	ac := c.applyCtx(p)
	p.repl.mu.Unlock()
	base := sm.st.LSN
	b := c.e.store.NewBatch()
	defer b.Discard()
	applied := 0
	for _, r := range group {
		// The batch is the reader: later commands see earlier ones'
		// writes, over a store whose state may have moved past base (the
		// entry is then rejected, since the LSN moved too).
		out, cerr, broken := applyEntry(b, b, ac, p.info.ID, &sm, r.cmd)
		r.res, r.next, r.err = out.res, out.next, cerr
		if broken {
			for _, r := range group {
				r.res, r.next = nil, nil
				if r.err == nil {
					r.err = fmt.Errorf("%w: cannot evaluate write: %v", ErrUnavailable, cerr)
				}
			}
			return nil, cerr
		}
		if cerr == nil && !out.recorded {
			applied++ // a command answered from the outcome table writes nothing
		}
	}
	if applied == 0 {
		return nil, nil
	}
	st, repr := sm.st.encode(), b.Repr()
	data := make([]byte, 0, 8+4*binary.MaxVarintLen64+len(st)+len(repr))
	data = binary.BigEndian.AppendUint64(data, entryToken())
	data = binary.AppendUvarint(data, 0)
	data = binary.AppendUvarint(data, base)
	data = appendBytes(data, st)
	return appendBytes(data, repr), nil
}

// entryToken returns a random token for an entry: it only tells this
// replica's proposals in flight from one another and from other
// replicas', so it need not be unpredictable.
func entryToken() uint64 { return mrand.Uint64() }

// appendBytes appends b with its uvarint length (binfmt.AppendString's
// encoding, which binfmt.Reader.Bytes reads).
func appendBytes(dst, b []byte) []byte {
	return append(binary.AppendUvarint(dst, uint64(len(b))), b...)
}

// proposeCommands replicates group's commands as they are: every replica
// evaluates them.
func (p *Partition) proposeCommands(group []*request) {
	data := binary.BigEndian.AppendUint64(nil, entryToken())
	data = binary.AppendUvarint(data, uint64(len(group)))
	for _, r := range group {
		data = appendBytes(data, EncodeCommand(nil, r.cmd))
	}
	res, idx, err := p.replicate(data, commands(group))
	if err == nil && len(res) != len(group) {
		err = internalError("entry %d was applied without the results of its %d commands", idx, len(group))
	}
	if err != nil {
		for _, r := range group {
			r.err = err
		}
		return
	}
	for i, r := range group {
		r.res, r.next, r.children, r.err = res[i].res, res[i].next, res[i].children, res[i].err
	}
}

// commands returns the commands of group; evaluated those that did not fail
// as a whole in evaluation, which are the ones an evaluated entry applies.
// A command that failed as a whole wrote nothing, and may have failed for
// a reason of this node (a read error): it does not go to the command log.
// Failed operations inside an applied command do.
func commands(group []*request) []*Command {
	cmds := make([]*Command, len(group))
	for i, r := range group {
		cmds[i] = r.cmd
	}
	return cmds
}

func evaluated(group []*request) []*Command {
	var cmds []*Command
	for _, r := range group {
		if r.err == nil {
			cmds = append(cmds, r.cmd)
		}
	}
	return cmds
}

// discardApplied forgets what ApplyEntries applied into a batch that was
// not committed (the local log's, whose store failed): the partition's
// state is what it last published.
func (p *Partition) discardApplied() {
	p.repl.mu.Lock()
	defer p.repl.mu.Unlock()
	p.repl.applied = p.repl.published
	p.repl.pending, p.repl.split, p.repl.toLog = nil, nil, nil
}

// replicate proposes the entry data, whose first 8 bytes are its token,
// and returns the results this replica's apply recorded for it. cmds are
// the entry's commands, which its apply hands to the command log.
func (p *Partition) replicate(data []byte, cmds []*Command) ([]entryResult, uint64, error) {
	token := binary.BigEndian.Uint64(data)
	slot := new([]entryResult)
	p.repl.mu.Lock()
	if p.repl.waiting == nil {
		p.repl.waiting = map[uint64]*[]entryResult{}
	}
	p.repl.waiting[token] = slot
	if p.c.e.opts.commandLog != nil {
		if p.repl.logs == nil {
			p.repl.logs = map[uint64][]*Command{}
		}
		p.repl.logs[token] = cmds
	}
	p.repl.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), proposeTimeout)
	defer cancel()
	idx, err := p.c.e.log.Propose(ctx, p.GroupID(), data)
	if err != nil && outcomeUnknown(err) {
		// The slot stays registered while the outcome is settled: the
		// entry, if it commits, fills it here.
		err = p.settle(err, slot)
	}
	p.repl.mu.Lock()
	delete(p.repl.waiting, token)
	delete(p.repl.logs, token)
	res := *slot
	p.repl.mu.Unlock()
	if err != nil {
		return nil, idx, proposalError("the write", err)
	}
	return res, idx, nil
}

// proposalError names by its meaning the failure of a proposal of what
// (a write, a catalog change), wrapping the log's error, which stays
// inspectable (a refusal names the leader a gateway should send it to):
// ErrNotLeader for a refusal, or a proposal that settled as never
// committed; ErrOutcomeUnknown for one that may yet commit; ErrUnavailable
// for the others (a full group, a lost quorum's timeout that settled, a
// group this node does not hold), which had no effect.
func proposalError(what string, err error) error {
	var nl *replication.NotLeaderError
	switch {
	case errors.Is(err, errNeverCommitted):
		return fmt.Errorf("%w: %s was not committed: %w", ErrNotLeader, what, err)
	case replication.OutcomeUnknown(err):
		return fmt.Errorf("%w: %s may or may not have been applied: %w", ErrOutcomeUnknown, what, err)
	case errors.As(err, &nl):
		return fmt.Errorf("%w: %s was refused: %w", ErrNotLeader, what, err)
	}
	return fmt.Errorf("%w: %s could not be replicated: %w", ErrUnavailable, what, err)
}

// settleTimeout bounds how long a partition's loop waits, after a
// proposal of unknown outcome, for the group's new leader to settle it.
const settleTimeout = 3 * time.Second

// outcomeUnknown reports whether a proposal failed with an outcome still
// to learn: its proposer lost the leadership, or stopped waiting, while
// the entry was in flight. A stopping host (replication.ErrStopped) is not
// settled: the process is going down.
func outcomeUnknown(err error) bool {
	return (errors.Is(err, replication.ErrAmbiguous) || errors.Is(err, replication.ErrTimeout)) && !errors.Is(err, replication.ErrStopped)
}

// settle learns the outcome of the partition's proposal that failed with
// cause, whose results slot is still registered: once the Replicator has
// settled the group, the entry has committed and been applied here (its
// results are in slot: settle returns nil) or it never will (settle
// returns a refusal that names the new leader, so that a gateway sends
// the write there: it is not a second write). If the group cannot be
// settled, the outcome stays unknown and cause is returned.
func (p *Partition) settle(cause error, slot *[]entryResult) error {
	ctx, cancel := context.WithTimeout(context.Background(), settleTimeout)
	defer cancel()
	leader, err := p.c.e.log.Settle(ctx, p.GroupID(), cause)
	if err != nil {
		return fmt.Errorf("%w (and it could not be settled: %v)", cause, err)
	}
	p.repl.mu.Lock()
	applied := len(*slot) > 0
	p.repl.mu.Unlock()
	if applied {
		return nil
	}
	nl := &replication.NotLeaderError{Group: p.GroupID(), Leader: leader}
	var was *replication.NotLeaderError
	if errors.As(cause, &was) {
		nl.Node = was.Node
	}
	return fmt.Errorf("%w (the group's leadership moved while it was in flight): %w", errNeverCommitted, nl)
}

// errNeverCommitted is the cause of a write whose proposal settled as never
// committed: it had no effect.
var errNeverCommitted = errors.New("the entry was not committed, and can no longer be")

// AppliedIndex returns the raft index up to which the partition's state is
// committed and published: a read of the partition sees every entry up to
// it.
func (p *Partition) AppliedIndex() (uint64, error) {
	p.repl.mu.Lock()
	defer p.repl.mu.Unlock()
	if err := p.loadApplied(); err != nil {
		return 0, err
	}
	return p.repl.published, nil
}

func (p *Partition) loadApplied() error {
	if p.repl.loaded {
		return nil
	}
	v, err := p.c.e.store.Get(nil, storage.PartitionAppliedKey(p.c.rid, p.info.ID))
	switch {
	case errors.Is(err, storage.ErrNotFound):
	case err != nil:
		return fmt.Errorf("%w: cannot read the applied index: %v", ErrUnavailable, err)
	case len(v) != 8:
		return corrupt("the applied index of partition key range %s has %d bytes", p.info.ID, len(v))
	default:
		p.repl.applied = binary.BigEndian.Uint64(v)
		p.repl.published = p.repl.applied
	}
	p.repl.loaded = true
	return nil
}

// ApplyEntries applies committed entries of the partition's group, in
// order, into b, which the caller commits before it calls Publish. An
// entry with no data (raft's own) only advances the index. A failure that
// is not a command's own (the store's) is returned: the replica must stop.
func (p *Partition) ApplyEntries(b *storage.Batch, entries []ReplicaEntry) error {
	p.repl.mu.Lock()
	defer p.repl.mu.Unlock()
	if err := p.loadApplied(); err != nil {
		return err
	}
	c := p.c
	if gone, err := p.goneIn(b); err != nil {
		return err
	} else if gone {
		return p.skipEntries(entries)
	}
	ac := c.applyCtx(p)
	sm := partSM{st: p.state, ix: p.ix}
	if p.repl.pending != nil {
		sm = *p.repl.pending
	}
	for _, en := range entries {
		if en.Index != p.repl.applied+1 {
			return fmt.Errorf("partition key range %s: entry %d applied after %d", p.info.ID, en.Index, p.repl.applied)
		}
		p.repl.applied = en.Index
		if en.Data == nil {
			continue
		}
		if len(en.Data) < 8 {
			return corrupt("partition key range %s: entry %d has no token", p.info.ID, en.Index)
		}
		token := binary.BigEndian.Uint64(en.Data)
		slot, logs := p.repl.waiting[token], p.repl.logs[token]
		r := binfmt.NewReader(en.Data[8:], errBadCommand)
		n := r.Count(1)
		if n == 0 {
			err := p.applyEvaluated(b, &sm, &r)
			if err != nil && !errors.Is(err, errStaleEvaluation) {
				return err
			}
			if slot != nil {
				*slot = []entryResult{{err: err}}
			}
			if err == nil {
				for _, cmd := range logs {
					p.toLog(en.Index, EncodeCommand(nil, cmd))
				}
			}
			continue
		}
		out := make([]entryResult, 0, n)
		for range n {
			enc := r.Bytes()
			cmd, err := DecodeCommand(enc)
			if err != nil {
				return err
			}
			if p.repl.split != nil {
				return internalError("partition key range %s: an entry follows its split in the same round", p.info.ID)
			}
			// The batch is the reader: a split reads the store as the
			// entries before it leave it.
			res, cerr, broken := applyEntry(b, b, ac, p.info.ID, &sm, cmd)
			if broken {
				return cerr
			}
			er := entryResult{res: res.res, next: res.next, err: cerr}
			if res.split != nil {
				p.repl.split, er.children = res.split, res.split.children
			}
			if cerr == nil && logs != nil {
				p.toLog(en.Index, enc)
			}
			out = append(out, er)
		}
		if err := r.Err(); err != nil {
			return err
		}
		if slot != nil {
			*slot = out
		}
	}
	if p.repl.split == nil {
		// A split deleted the parent's state record.
		if err := b.Set(storage.PartitionKey(ac.rid, p.info.ID), sm.st.encode()); err != nil {
			return err
		}
	}
	if err := b.Set(storage.PartitionAppliedKey(ac.rid, p.info.ID), binary.BigEndian.AppendUint64(nil, p.repl.applied)); err != nil {
		return err
	}
	p.repl.pending = &sm
	return nil
}

// applyEvaluated applies the evaluated entry r reads (after its token and
// its 0) into b and sm, or rejects it with errStaleEvaluation, writing
// nothing, if it was evaluated on another state than sm's, or follows a
// split of the partition. Any other error is the replica's.
func (p *Partition) applyEvaluated(b *storage.Batch, sm *partSM, r *binfmt.Reader) error {
	base := r.Uvarint()
	st := r.Bytes()
	writes := r.Bytes()
	if err := r.Err(); err != nil {
		return err
	}
	if base != sm.st.LSN || p.repl.split != nil {
		return errStaleEvaluation
	}
	next, err := decodePartState(p.info.ID, st)
	if err != nil {
		return err
	}
	if next.LSN <= base {
		return corrupt("partition key range %s: an evaluated entry moves LSN %d to %d", p.info.ID, base, next.LSN)
	}
	if err := b.ApplyRepr(writes); err != nil {
		return fmt.Errorf("%w: partition key range %s: cannot apply an evaluated entry's writes: %v", ErrUnavailable, p.info.ID, err)
	}
	sm.st = next
	return nil
}

// goneIn reports whether the partition's container has been deleted, as
// the store the round's batch b leaves says: neither its state record nor
// its index record is there (a container's creation, and a split, write
// the index record; every applied entry writes the state record; the
// deletion removes both). The catalog's log deletes a container, the
// partitions' logs keep going: an entry committed before the deletion may
// be applied after it on some replica.
//
// The store is read only when it may have changed: the records found are
// remembered with the count of container deletions this node's catalog
// has applied (Engine.deletions), and a later entry, of a partition that
// has not split since, trusts them while the count stays. The caller
// holds p.repl.mu.
func (p *Partition) goneIn(b *storage.Batch) (bool, error) {
	dels := p.c.e.deletions.Load()
	if p.repl.alive == dels+1 && p.repl.split == nil && !p.retired.Load() {
		return false, nil
	}
	for _, k := range [][]byte{storage.PartitionIndexKey(p.c.rid, p.info.ID), storage.PartitionKey(p.c.rid, p.info.ID)} {
		_, err := b.Get(nil, k)
		if err == nil {
			p.repl.alive = dels + 1
			return false, nil
		}
		if !errors.Is(err, storage.ErrNotFound) {
			return false, fmt.Errorf("%w: cannot read partition key range %s: %v", ErrUnavailable, p.info.ID, err)
		}
	}
	return true, nil
}

// skipEntries applies entries of a deleted container's partition: they
// write nothing (what they would write is what the deletion removed, so
// replicas that applied them before it and those that apply them after
// end the same), and their commands fail with errDeleted. The same holds
// for a partition that has split (the split deleted its records): an
// entry its group committed after the split raced it, and fails with
// ErrPartitionGone, for the client to route it again. The caller holds
// p.repl.mu.
func (p *Partition) skipEntries(entries []ReplicaEntry) error {
	fail := errDeleted
	if p.retired.Load() {
		fail = fmt.Errorf("%w: partition key range %s has split; the write was not applied", ErrPartitionGone, p.info.ID)
	}
	for _, en := range entries {
		if en.Index != p.repl.applied+1 {
			return fmt.Errorf("partition key range %s: entry %d applied after %d", p.info.ID, en.Index, p.repl.applied)
		}
		p.repl.applied = en.Index
		if len(en.Data) < 8 {
			continue
		}
		slot := p.repl.waiting[binary.BigEndian.Uint64(en.Data)]
		if slot == nil {
			continue
		}
		r := binfmt.NewReader(en.Data[8:], errBadCommand)
		n := max(r.Count(1), 1) // an evaluated entry (0) has one result
		out := make([]entryResult, n)
		for i := range out {
			out[i].err = fail
		}
		*slot = out
	}
	return nil
}

// StartAt records that the group of a partition that has applied nothing
// of it starts at raft index (its bootstrap snapshot, which holds no
// data), writing into b.
func (p *Partition) StartAt(b *storage.Batch, index uint64) error {
	p.repl.mu.Lock()
	defer p.repl.mu.Unlock()
	if err := p.loadApplied(); err != nil {
		return err
	}
	// A new container's partition starts empty, a split's child with its
	// parent's state; neither has applied an entry of its own group.
	if p.repl.applied != 0 || p.repl.pending != nil {
		return internalError("partition key range %s has applied raft index %d: it cannot start over at index %d", p.info.ID, p.repl.applied, index)
	}
	p.repl.applied, p.repl.published = index, index // nothing to read before it
	return b.Set(storage.PartitionAppliedKey(p.c.rid, p.info.ID), binary.BigEndian.AppendUint64(nil, index))
}

// ReplicaEntry is a committed entry of a partition's or the catalog's
// group, as the replication host hands it to its state machine (its Data
// is nil for raft's own entries).
type ReplicaEntry = replication.Entry

// toLog records that the command enc of this replica's proposal was
// applied by entry index, for Publish to hand to the command log. The
// caller holds p.repl.mu.
func (p *Partition) toLog(index uint64, enc []byte) {
	p.repl.toLog = append(p.repl.toLog, LogEntry{Container: p.c.rid, Range: p.info.ID, Index: index, Data: enc})
}

// Publish makes the state ApplyEntries reached the partition's, once the
// batch it wrote into has committed: sessions, counts and the state later
// entries start from.
func (p *Partition) Publish() {
	p.repl.mu.Lock()
	defer p.repl.mu.Unlock()
	sm := p.repl.pending
	p.repl.published = p.repl.applied
	if sm == nil {
		return
	}
	p.repl.pending = nil
	p.state, p.ix = sm.st, sm.ix
	p.lsn.Store(sm.st.LSN)
	p.items.Store(sm.st.Items)
	p.bytes.Store(sm.st.Bytes)
	p.commits.Add(1)
	if log := p.c.e.opts.commandLog; log != nil {
		for _, en := range p.repl.toLog {
			log(en)
		}
	}
	p.repl.toLog = nil
	if sr := p.repl.split; sr != nil {
		p.repl.split = nil
		c := p.c
		c.mu.Lock()
		p.swapChildren(sr)
		c.mu.Unlock()
		kids := make([]uint64, len(sr.children))
		for i, ch := range sr.children {
			kids[i] = GroupID(c.rid, ch.ID)
		}
		c.e.log.Split(p.GroupID(), kids)
	}
}
