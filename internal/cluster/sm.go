package cluster

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/parsecdb/parsec/internal/replication"
	"github.com/parsecdb/parsec/internal/storage"
)

// Kinds of meta entries: the first byte of the entry.
const (
	metaCatalog = 'c' // a catalog change (engine.Engine.CatalogReplica)
	metaMember  = 'm' // a member's record (Member, JSON)
)

// stateMachine returns the state machine of a group on this node: the
// engine's own adapters (engine.Engine.GroupReplica), and for the meta
// group the engine's catalog with the cluster's member records.
func (n *Node) stateMachine(g uint64) (replication.StateMachine, error) {
	if g == MetaGroup {
		return metaSM{n: n, cat: n.e.CatalogReplica()}, nil
	}
	return n.e.GroupReplica(g), nil
}

// metaSM is the meta group's state machine: the engine's catalog and the
// members. The catalog's entries are handed to the engine's adapter with
// their kind byte taken off; a member's record is the cluster's.
type metaSM struct {
	n   *Node
	cat replication.StateMachine
}

func (s metaSM) Applied() uint64 { return s.cat.Applied() }

func (s metaSM) Apply(b *storage.Batch, ents []replication.Entry) error {
	re := make([]replication.Entry, len(ents))
	for i, e := range ents {
		re[i].Index, re[i].Term = e.Index, e.Term
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
	return s.cat.Apply(b, re)
}

func (s metaSM) Published() {
	s.n.mu.Lock()
	ms := s.n.pending
	s.n.pending = nil
	s.n.mu.Unlock()
	for _, m := range ms {
		s.n.addMember(m)
	}
	if p, ok := s.cat.(replication.Publisher); ok {
		p.Published()
	}
}

func (s metaSM) Snapshot() ([]byte, error) {
	return nil, errors.New("the meta group is not snapshotted: its log is kept whole")
}

func (s metaSM) Restore(b *storage.Batch, index, term uint64, data []byte) error {
	return s.cat.Restore(b, index, term, data)
}
