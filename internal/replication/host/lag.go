package host

import (
	"time"

	"github.com/parsecdb/parsec/internal/replication"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
)

// LagInfo is the contract's replication.LagInfo.
type LagInfo = replication.LagInfo

// lagPending bounds the (commit index, time) pairs a group keeps while
// waiting for its applied index to reach them.
const lagPending = 8

// lagState is a group's record of its leader's word (owned by the loop).
type lagState struct {
	term   uint64    // the term the record is for
	heard  time.Time // the last message of the leader stepped
	commit uint64    // the highest commit index the leader announced
	synced time.Time // see LagInfo.Synced
	// pending are the leader's announced commit indexes not yet applied
	// here, oldest first, with when they were received; when full, the
	// newest is overwritten, which only makes Synced older.
	pending [lagPending]struct {
		commit uint64
		at     time.Time
	}
	n int
	// quiesceCommit is the commit index of the quiesce marker that
	// quiesced the group here, quiesceAt when it came; quiesceDrops the
	// host's dropped-message count then.
	quiesceCommit, quiesceDrops uint64
	quiesceAt                   time.Time
	// termEntry is the index of an entry of the leader's term, 0 if none
	// is known yet.
	termEntry uint64
	// On a leader: the start of its latest ReadIndex a quorum confirmed
	// in term confirmedTerm (see LagInfo.Synced).
	confirmedTerm uint64
	confirmed     time.Time
}

// heard records, after the loop stepped m to g, what m tells of the
// leader's progress: called for every message stepped or consumed from
// another node.
func (h *Host) heard(g *group, m *raftpb.Message) {
	st := g.rn.BasicStatus()
	if st.RaftState != raft.StateFollower || st.Lead == 0 || m.GetFrom() != st.Lead || m.GetTerm() != st.GetTerm() {
		return
	}
	l := &g.lag
	if l.term != st.GetTerm() {
		// A new leader: its announcements start afresh (what an earlier
		// one announced stays committed, so commit is kept).
		l.term, l.n, l.heard, l.synced, l.quiesceCommit, l.termEntry = st.GetTerm(), 0, time.Time{}, time.Time{}, 0, 0
	}
	now := time.Now()
	l.heard = now
	marker := m.GetType() == raftpb.MsgHeartbeat && string(m.GetContext()) == quiesceMarker
	if m.GetType() != raftpb.MsgApp && !marker {
		return
	}
	c := m.GetCommit()
	if !marker && !l.termCommitted(g, m, st.GetTerm()) {
		// A new leader's commit index may lag what its predecessor
		// committed until it commits an entry of its own term (raft's
		// rule for ReadIndex too): it says nothing whole yet.
		l.commit = max(l.commit, c)
		return
	}
	if marker && g.quiesced {
		h.mu.Lock()
		l.quiesceCommit, l.quiesceDrops, l.quiesceAt = c, h.stats.DroppedMessages, now
		h.mu.Unlock()
	}
	l.announce(c, now, g.applied)
}

// confirm records that a ReadIndex this node began at at, leading in
// term (0: it did not lead), was confirmed.
func (l *lagState) confirm(term uint64, at time.Time) {
	if term == 0 {
		return
	}
	if l.confirmedTerm != term || at.After(l.confirmed) {
		l.confirmedTerm, l.confirmed = term, at
	}
}

// termCommitted reports whether the commit index of m, an append of the
// leader of term, covers an entry of term: the leader then knows every
// entry committed before it. A quiesce marker always does (a leader
// quiesces only once its whole log, which holds the entry it appended when
// elected, is committed).
func (l *lagState) termCommitted(g *group, m *raftpb.Message, term uint64) bool {
	if l.termEntry == 0 {
		for _, e := range m.GetEntries() {
			if e.GetTerm() == term {
				l.termEntry = e.GetIndex()
				break
			}
		}
	}
	if l.termEntry == 0 {
		// Received before (in an append whose commit did not reach it,
		// or that this record missed): the stored log tells.
		if t, err := g.log.Term(m.GetCommit()); err == nil && t == term {
			l.termEntry = m.GetCommit()
		}
	}
	return l.termEntry != 0 && m.GetCommit() >= l.termEntry
}

// announce records that the leader's commit index was c when it sent a
// message received at at, on a replica that has applied applied.
func (l *lagState) announce(c uint64, at time.Time, applied uint64) {
	l.commit = max(l.commit, c)
	l.advance(applied)
	switch {
	case c <= applied:
		l.synced = at
	case l.n > 0 && l.pending[l.n-1].commit >= c:
		// An older announcement of at least as much is pending: it is
		// reached first, and this one adds nothing.
	case l.n < lagPending:
		l.pending[l.n].commit, l.pending[l.n].at = c, at
		l.n++
	default:
		l.pending[l.n-1].commit, l.pending[l.n-1].at = c, at
	}
}

// advance moves the pending announcements that applied reaches into
// synced.
func (l *lagState) advance(applied uint64) {
	i := 0
	for i < l.n && l.pending[i].commit <= applied {
		l.synced = l.pending[i].at
		i++
	}
	if i > 0 {
		copy(l.pending[:], l.pending[i:l.n])
		l.n -= i
	}
}

// Lag returns what this node's replica of group knows of its lag behind
// the leader (see LagInfo).
func (h *Host) Lag(group uint64) (LagInfo, error) {
	var info LagInfo
	err := h.do(func() error {
		g := h.groups[group]
		if g == nil {
			return ErrGroupNotFound
		}
		st := g.rn.BasicStatus()
		info.Lead, info.Applied = st.Lead, g.applied
		info.Commit = st.GetCommit()
		if st.RaftState == raft.StateLeader {
			now := time.Now()
			info.Leader, info.LeaderHeard = true, now
			// Its commit index is whole once it covers an entry of its
			// own term (see termCommitted).
			if g.applied >= info.Commit && g.term == st.GetTerm() {
				if l := &g.lag; l.confirmedTerm == st.GetTerm() {
					info.Synced = l.confirmed
				}
			}
			return nil
		}
		l := &g.lag
		if l.term != st.GetTerm() || st.Lead == 0 {
			return nil // nothing heard from this leader
		}
		l.advance(g.applied)
		info.Commit = max(info.Commit, l.commit)
		info.LeaderHeard, info.Synced = l.heard, l.synced
		if g.quiesced && l.quiesceCommit != 0 && g.applied >= l.quiesceCommit {
			h.mu.Lock()
			info.Quiesced = h.stats.DroppedMessages == l.quiesceDrops
			if info.Quiesced {
				info.QuiescedAt = l.quiesceAt
			}
			h.mu.Unlock()
		}
		return nil
	})
	return info, err
}
