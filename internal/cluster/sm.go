package cluster

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/replication/host"
	"github.com/parsecdb/parsec/internal/storage"
)

// Kinds of meta entries: the first byte of the entry.
const (
	metaCatalog = 'c' // a catalog change (engine.ApplyCatalog)
	metaMember  = 'm' // a member's record (Member, JSON)
)

// stateMachine returns the state machine of a group on this node.
func (n *Node) stateMachine(g uint64) (host.StateMachine, error) {
	if g == MetaGroup {
		return metaSM{n}, nil
	}
	if p, ok := n.e.GroupPartition(g); ok {
		return partitionSM{p}, nil
	}
	// The group of a partition that is gone: its container was deleted or
	// it split. Its entries change nothing (the engine fails those that
	// come after), so its replica only follows the log.
	return &retiredSM{}, nil
}

// retiredSM is the state machine of a group whose partition is gone.
type retiredSM struct{ applied uint64 }

func (s *retiredSM) Applied() uint64 { return s.applied }

func (s *retiredSM) Apply(_ *storage.Batch, ents []host.Entry) error {
	s.applied = ents[len(ents)-1].Index
	return nil
}

func (s *retiredSM) Snapshot() ([]byte, error) {
	return nil, errors.New("a retired partition has no snapshot")
}

func (s *retiredSM) Restore(_ *storage.Batch, index, _ uint64, _ []byte) error {
	s.applied = index
	return nil
}

// metaSM is the meta group's state machine: the engine's catalog and the
// members.
type metaSM struct{ n *Node }

func (s metaSM) Applied() uint64 { return s.n.e.CatalogApplied() }

func (s metaSM) Apply(b *storage.Batch, ents []host.Entry) error {
	re := make([]engine.ReplicaEntry, len(ents))
	for i, e := range ents {
		re[i].Index = e.Index
		if len(e.Data) == 0 {
			continue
		}
		switch e.Data[0] {
		case metaCatalog:
			re[i].Data = e.Data[1:]
		case metaMember:
			var m Member
			if err := json.Unmarshal(e.Data[1:], &m); err != nil {
				return fmt.Errorf("meta entry %d: a member record: %v", e.Index, err)
			}
			if err := b.Set(storage.ClusterMemberKey(m.ID), e.Data[1:]); err != nil {
				return err
			}
			s.n.mu.Lock()
			s.n.pending = append(s.n.pending, m)
			s.n.mu.Unlock()
		default:
			return fmt.Errorf("meta entry %d has unknown kind %q", e.Index, e.Data[0])
		}
	}
	return s.n.e.ApplyCatalog(b, re)
}

func (s metaSM) Published() {
	s.n.mu.Lock()
	ms := s.n.pending
	s.n.pending = nil
	s.n.mu.Unlock()
	for _, m := range ms {
		s.n.addMember(m)
	}
	s.n.e.PublishCatalog()
}

func (s metaSM) Snapshot() ([]byte, error) {
	return nil, errors.New("the meta group is not snapshotted: its log is kept whole")
}

func (s metaSM) Restore(b *storage.Batch, index, _ uint64, data []byte) error {
	if data != nil {
		return errors.New("the meta group has no snapshots")
	}
	return s.n.e.StartCatalogAt(b, index)
}

// partitionSM is a physical partition's replica.
type partitionSM struct{ p *engine.Partition }

func (s partitionSM) Applied() uint64 {
	i, err := s.p.AppliedIndex()
	if err != nil {
		// The host asks when it opens the group; a store that cannot be
		// read fails the next Apply too.
		return 0
	}
	return i
}

func (s partitionSM) Apply(b *storage.Batch, ents []host.Entry) error {
	return s.p.ApplyEntries(b, ents)
}

func (s partitionSM) Published() { s.p.Publish() }

func (s partitionSM) Snapshot() ([]byte, error) {
	return nil, errors.New("a partition's snapshots are streamed, never taken whole")
}

// Restore starts a new partition's group (data nil) or installs a snapshot
// staged by StageSnapshot (data is its id).
func (s partitionSM) Restore(b *storage.Batch, index, _ uint64, data []byte) error {
	if data != nil {
		return s.p.InstallSnapshot(index, data)
	}
	return s.p.StartAt(b, index)
}

func (s partitionSM) OpenSnapshot() (host.SnapshotReader, error) {
	r, err := s.p.OpenSnapshot()
	if err != nil {
		return nil, err
	}
	return r, nil
}

func (s partitionSM) StageSnapshot(id []byte, index uint64, next func() ([]byte, error)) error {
	return s.p.StageSnapshot(id, index, next)
}

func (s partitionSM) DiscardStaged() error { return s.p.DiscardStaged() }
