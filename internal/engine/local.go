package engine

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/parsecdb/parsec/internal/replication"
)

// The local log: a single node is a cluster of one. Without
// Options.Replicator a partition's writes take the same path as a
// replicated partition's (evaluate, propose, apply: replicated.go), and
// localLog stands where raft would: Propose gives the entry the next index
// of the partition's log, applies it at once through the partition's
// state machine (Partition.Replica, the adapter a raft host is given), and
// commits the batch with a WAL sync, so that an acknowledged write is
// durable, as it is once raft has synced its log. The entries are not
// kept: the store the state machine wrote is the log's whole state, so a
// crash loses nothing an answer acknowledged, and nothing is replayed on
// restart. A proposal has a certain outcome: it was applied and committed,
// or it failed and changed nothing (the batch is discarded, and the
// partition forgets what it applied into it).
//
// The partition's loop is the only proposer of its group, one entry at a
// time, so Propose needs no lock of its own; the leadership questions of
// the Replicator (Leads, Lead, Barrier, Settle, CanSplit) have the answers
// of a group with one voter.
type localLog struct{ e *Engine }

var _ Replicator = (*localLog)(nil)

// Propose applies data as the next entry of group's log and commits it.
func (l *localLog) Propose(_ context.Context, group uint64, data []byte) (uint64, error) {
	p, ok := l.e.GroupPartition(group)
	if !ok {
		return 0, fmt.Errorf("%w: group %d", replication.ErrGroupNotFound, group)
	}
	// A catalog entry (a container's deletion) is not committed between
	// this entry's check that its partition still exists (goneIn) and its
	// commit, as raft's one loop applies the groups' entries one by one.
	l.e.localMu.RLock()
	defer l.e.localMu.RUnlock()
	sm := p.Replica()
	idx := sm.Applied() + 1
	b := l.e.store.NewBatch()
	if err := sm.Apply(b, []replication.Entry{{Index: idx, Data: data}}); err != nil {
		b.Discard()
		p.discardApplied()
		return 0, err
	}
	if err := b.Commit(); err != nil {
		p.discardApplied()
		return 0, fmt.Errorf("cannot commit write: %w", err)
	}
	sm.(replication.Publisher).Published()
	return idx, nil
}

// Split has nothing to create: a partition's group is its own log.
func (l *localLog) Split(uint64, []uint64) {}

// CreateGroups has nothing to create either.
func (l *localLog) CreateGroups([]uint64, []uint64) {}

// Leads: the only voter leads.
func (l *localLog) Leads(uint64) bool { return true }

// Barrier returns at once: every committed entry is applied before
// Propose returns.
func (l *localLog) Barrier(context.Context, []uint64) error { return nil }

// Lead returns at once: this node leads every group.
func (l *localLog) Lead(context.Context, uint64) error { return nil }

// CanSplit allows every split: no replica can be behind.
func (l *localLog) CanSplit(uint64) error { return nil }

// Settle is never needed: a local proposal's outcome is always known.
func (l *localLog) Settle(_ context.Context, group uint64, cause error) (uint64, error) {
	return 0, internalError("group %d: a local proposal has no outcome to settle (%v)", group, cause)
}

// logKeepsEntries reports whether the engine's partitions replicate
// through a log that keeps its entries apart from the store (raft's):
// their applied state is then committed without a sync and caught up from
// the log after a crash, and index builds are not replicated yet. The
// local log keeps none: the store is its state.
func (e *Engine) logKeepsEntries() bool {
	_, local := e.log.(*localLog)
	return !local
}

// localCatalog is the catalog's local log, as localLog is a partition's:
// ProposeCatalog gives the change the next index of the catalog's log,
// applies it at once through the catalog's state machine
// (Engine.CatalogReplica, the adapter a cluster's meta group is given) and
// commits it with a WAL sync; then it hands the entry to the optional
// command log. Proposals are applied one at a time, in the order of their
// indexes.
type localCatalog struct{ e *Engine }

var _ CatalogReplicator = (*localCatalog)(nil)

func (l *localCatalog) ProposeCatalog(_ context.Context, data []byte) (uint64, error) {
	e := l.e
	e.localMu.Lock()
	defer e.localMu.Unlock()
	sm := e.CatalogReplica()
	idx := sm.Applied() + 1
	r := e.cat
	r.mu.Lock()
	fence := r.fence
	r.mu.Unlock()
	b := e.store.NewBatch()
	err := sm.Apply(b, []replication.Entry{{Index: idx, Data: data}})
	if err != nil {
		b.Discard()
	} else if err = b.Commit(); err != nil {
		err = fmt.Errorf("cannot commit the catalog change: %w", err)
	}
	if err != nil {
		// Forget what was applied into the batch: the catalog is as it
		// last published, and the proposal failed.
		r.mu.Lock()
		r.applied, r.fence = r.published, fence
		if len(data) >= 8 {
			if slot := r.waiting[binary.BigEndian.Uint64(data)]; slot != nil {
				*slot = catalogSlot{}
			}
		}
		r.mu.Unlock()
		return 0, err
	}
	sm.(replication.Publisher).Published()
	if log := e.opts.commandLog; log != nil {
		log(LogEntry{Index: idx, Data: data})
	}
	return idx, nil
}

// Placement is nobody: a single node's partitions have no replicas.
func (l *localCatalog) Placement() []uint64 { return nil }

// catalogKeepsEntries reports whether the catalog replicates through a
// log that keeps its entries apart from the store (the meta group's): a
// container missing from the store may then be one whose deletion the log
// applied before the record of acknowledged LSNs forgot it, and version
// logs are not trimmed yet.
func (e *Engine) catalogKeepsEntries() bool {
	_, local := e.catLog.(*localCatalog)
	return !local
}
