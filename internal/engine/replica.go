package engine

import (
	"errors"

	"github.com/parsecdb/parsec/internal/replication"
	"github.com/parsecdb/parsec/internal/storage"
)

// The state machines a log replicates: a partition's (Partition.Replica),
// the catalog's (Engine.CatalogReplica) and a gone partition's
// (Engine.GroupReplica). They are the only adapters of the engine to
// package replication's contract: the cluster hands them to its raft host,
// and the engine's tests to theirs, so that every test that replicates
// runs the production code of apply, publish, snapshot and restore.

// Replica returns the partition as the state machine of its group. Its
// snapshots are streamed from the store (rangesnap.go).
func (p *Partition) Replica() replication.StateMachine { return partitionReplica{p} }

// partitionReplica is a physical partition's replica.
type partitionReplica struct{ p *Partition }

var (
	_ replication.Publisher        = partitionReplica{}
	_ replication.SnapshotStreamer = partitionReplica{}
)

func (s partitionReplica) Applied() uint64 {
	i, err := s.p.AppliedIndex()
	if err != nil {
		// The log asks when it opens the group; a store that cannot be
		// read fails the next Apply too.
		s.p.c.e.opts.Logf("parsec: partition key range %s: %v", s.p.info.ID, err)
		return 0
	}
	return i
}

func (s partitionReplica) Apply(b *storage.Batch, ents []replication.Entry) error {
	return s.p.ApplyEntries(b, ents)
}

func (s partitionReplica) Published() { s.p.Publish() }

func (s partitionReplica) Snapshot() ([]byte, error) {
	return nil, errors.New("a partition's snapshots are streamed, never taken whole")
}

// Restore starts a new partition's group (data nil) or installs a snapshot
// staged by StageSnapshot (data is its id).
func (s partitionReplica) Restore(b *storage.Batch, index, _ uint64, data []byte) error {
	if data != nil {
		return s.p.InstallSnapshot(index, data)
	}
	return s.p.StartAt(b, index)
}

func (s partitionReplica) OpenSnapshot() (replication.SnapshotReader, error) {
	r, err := s.p.OpenSnapshot()
	if err != nil {
		return nil, err
	}
	return r, nil
}

func (s partitionReplica) StageSnapshot(id []byte, index uint64, next func() ([]byte, error)) error {
	return s.p.StageSnapshot(id, index, next)
}

func (s partitionReplica) DiscardStaged() error { return s.p.DiscardStaged() }

// GroupReplica returns the state machine of partition group g on this
// node: its partition's Replica, or, for the group of a partition that is
// gone (its container was deleted, or it split), one whose entries change
// nothing (the engine fails those that come after the partition went), so
// that its replica only follows the log. It takes no engine lock: the
// replication loop may call it.
func (e *Engine) GroupReplica(g uint64) replication.StateMachine {
	if p, ok := e.GroupPartition(g); ok {
		return p.Replica()
	}
	return &goneReplica{}
}

// goneReplica is the state machine of a group whose partition is gone.
type goneReplica struct{ applied uint64 }

func (s *goneReplica) Applied() uint64 { return s.applied }

func (s *goneReplica) Apply(_ *storage.Batch, ents []replication.Entry) error {
	if len(ents) > 0 {
		s.applied = ents[len(ents)-1].Index
	}
	return nil
}

func (s *goneReplica) Snapshot() ([]byte, error) {
	return nil, errors.New("a partition that is gone has no snapshot")
}

func (s *goneReplica) Restore(_ *storage.Batch, index, _ uint64, _ []byte) error {
	s.applied = index
	return nil
}

// CatalogReplica returns the catalog as the state machine of the meta
// group: its entries are the catalog changes of CatalogReplicator's
// proposals. A deployment that carries more than the catalog in its meta
// group (the cluster's member records) wraps it. It needs Options.Catalog.
func (e *Engine) CatalogReplica() replication.StateMachine { return catalogReplica{e} }

type catalogReplica struct{ e *Engine }

var _ replication.Publisher = catalogReplica{}

func (s catalogReplica) Applied() uint64 { return s.e.CatalogApplied() }

func (s catalogReplica) Apply(b *storage.Batch, ents []replication.Entry) error {
	return s.e.ApplyCatalog(b, ents)
}

func (s catalogReplica) Published() { s.e.PublishCatalog() }

func (s catalogReplica) Snapshot() ([]byte, error) {
	return nil, errors.New("the catalog is not snapshotted: its log is kept whole")
}

// Restore starts the meta group (data nil); the catalog has no snapshots.
func (s catalogReplica) Restore(b *storage.Batch, index, _ uint64, data []byte) error {
	if data != nil {
		return errors.New("the catalog has no snapshots")
	}
	return s.e.StartCatalogAt(b, index)
}
