package raftlog

import (
	"fmt"
	"math"

	"github.com/parsecdb/parsec/internal/storage"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// reconcile brings the log store's view of the group in line with the
// durable state the DB holds for it (st, loaded from the DB), and sets
// st's last index and term from the log store. See "Two stores" in the
// package documentation for why each rule is safe.
func (l *Log) reconcile(st *state) error {
	ls := l.s.ls
	if err := l.migrate(st); err != nil {
		return err
	}
	trunc, commit := st.truncIndex, st.hs.GetCommit()
	first, last := ls.Range(l.group)
	// lacks: the log store misses an entry the DB's state needs: one after
	// the truncation point, up to the commit index.
	lacks := func() bool {
		return (last >= first && first > trunc+1) || (commit > trunc && (last < commit || first > trunc+1))
	}
	if lacks() || (first > trunc+1 && last < first) {
		// A reset (a snapshot applied, a replica destroyed) reached the
		// log store in a round whose DB commit never happened: undo it.
		if ok, _, _ := ls.CanUndoReset(l.group); ok {
			if err := ls.UndoReset(l.group); err != nil {
				return fmt.Errorf("raftlog: group %d: %w", l.group, err)
			}
			first, last = ls.Range(l.group)
		}
	}
	b := ls.NewBatch()
	switch {
	case last >= first && first > trunc+1:
		return fmt.Errorf("raftlog: group %d: the log store starts at %d, but the truncated index is %d: entries are missing", l.group, first, trunc)
	case last < first && first > trunc+1:
		// Empty, restarting past the truncation point: restart it there.
		b.Reset(l.group, trunc)
	case trunc >= first && trunc <= last:
		if t, err := ls.Term(l.group, trunc); err != nil || t != st.truncTerm {
			// The entries after the truncation point continue an older
			// history than the snapshot the DB holds (its reset never
			// reached the log store): drop them.
			b.Reset(l.group, trunc)
		} else {
			b.Truncate(l.group, trunc)
		}
	default:
		b.Truncate(l.group, trunc)
	}
	if err := ls.Commit(b, true); err != nil {
		return fmt.Errorf("raftlog: group %d: %w", l.group, err)
	}
	if _, last = ls.Range(l.group); last > trunc {
		t, err := ls.Term(l.group, last)
		if err != nil {
			return fmt.Errorf("raftlog: group %d: %w", l.group, err)
		}
		st.lastIndex, st.lastTerm = last, t
	}
	// The hard state: the log store's copy is synced with every round,
	// the DB's may lag (written without a sync) or lead (the log store's
	// copies were in segments since deleted, after a DB sync): raft's hard
	// state only moves forward, so the later one is the last written.
	if v := ls.HardState(l.group); len(v) > 0 {
		hs := &raftpb.HardState{}
		if err := proto.Unmarshal(v, hs); err != nil {
			return fmt.Errorf("raftlog: group %d: bad hard state in the log store: %w", l.group, err)
		}
		if laterHS(hs, st.hs) {
			st.hs = hs
		}
	}
	commit = st.hs.GetCommit()
	if commit > st.lastIndex {
		return fmt.Errorf("raftlog: group %d: committed index %d is past the last entry %d in the log store: entries are missing", l.group, commit, st.lastIndex)
	}
	return nil
}

// migrate moves the group's entries that an earlier version kept in the
// DB into the log store, if the log store has none: the store's format
// changes without a separate step. The DB's copies are deleted after the
// log store has synced its own.
func (l *Log) migrate(st *state) error {
	db, ls := l.s.db, l.s.ls
	lo, hi := storage.RaftEntriesSpan(l.group, 0, math.MaxUint64)
	it, err := db.NewIter(lo, hi)
	if err != nil {
		return err
	}
	var ents []*raftpb.Entry
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.Value()
		if err != nil {
			_ = it.Close()
			return err
		}
		e := &raftpb.Entry{}
		if err := proto.Unmarshal(v, e); err != nil {
			_ = it.Close()
			return fmt.Errorf("raftlog: group %d: bad log entry: %w", l.group, err)
		}
		if len(ents) > 0 && e.GetIndex() != ents[len(ents)-1].GetIndex()+1 {
			_ = it.Close()
			return fmt.Errorf("raftlog: group %d: entry %d missing in the database", l.group, ents[len(ents)-1].GetIndex()+1)
		}
		ents = append(ents, e)
	}
	if err := it.Close(); err != nil {
		return err
	}
	if len(ents) == 0 {
		return nil
	}
	if first, last := ls.Range(l.group); last < first {
		b := ls.NewBatch()
		b.Reset(l.group, ents[0].GetIndex()-1)
		b.Append(l.group, ents)
		if err := ls.Commit(b, true); err != nil {
			return fmt.Errorf("raftlog: group %d: moving entries to the log store: %w", l.group, err)
		}
	} else if ents[len(ents)-1].GetIndex() > last {
		return fmt.Errorf("raftlog: group %d: the database holds entries past the log store's last %d", l.group, last)
	}
	del := db.NewBatch()
	if err := del.DeleteRange(lo, hi); err != nil {
		del.Discard()
		return err
	}
	if err := del.Commit(); err != nil {
		return fmt.Errorf("raftlog: group %d: deleting moved entries: %w", l.group, err)
	}
	return nil
}

// laterHS reports whether a is a later hard state than b: a higher term,
// or in the same term a vote where b has none, or a higher commit index.
func laterHS(a, b *raftpb.HardState) bool {
	if a.GetTerm() != b.GetTerm() {
		return a.GetTerm() > b.GetTerm()
	}
	if (a.GetVote() == 0) != (b.GetVote() == 0) {
		return a.GetVote() != 0
	}
	return a.GetCommit() > b.GetCommit()
}
