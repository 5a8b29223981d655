package gateway

import (
	"time"

	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/replication"
)

// Bounded-staleness reads served by a replica without asking its leader.
//
// Cosmos DB's guarantee: a read lags behind the writes by at most K
// operations (--max-staleness-prefix) and at most T time
// (--max-staleness-interval). A replica knows (replication.LagInfo):
//
//   - Commit and Applied: entries the leader told it were committed and
//     that reads here do not see yet. An entry carries up to
//     engine.MaxCommandsPerEntry commands, each one LSN (an "operation"),
//     so (Commit-Applied)*MaxCommandsPerEntry bounds the operations it
//     knows it misses: counting entries alone would be a lower bound, not
//     a bound.
//   - Synced: when it received a message (an append or a quiesce marker,
//     which carry the leader's whole commit index, once the leader has
//     committed an entry of its own term) all of whose committed entries
//     it has applied. Every write a read here misses was committed after
//     the leader sent that message, so it is younger than now-Synced plus
//     the message's delay. On a leader, Synced is when its latest
//     ReadIndex that a quorum confirmed began: no other leader can have
//     committed anything before then. A leader paused (a stopped process,
//     a stalled machine) or cut off still leads as raft sees it until its
//     next election timeout of ticks, while the others may have elected
//     another and committed writes it cannot know of; its Synced ages
//     meanwhile, as a follower's does when its leader falls silent, so it
//     stops serving bounded reads locally and asks for a ReadIndex, which
//     a deposed leader cannot complete. A leader serving bounded reads
//     thus confirms its leadership about once per maxSilence, and serves
//     the reads in between locally.
//
// The replica serves the read when the operations it knows it misses are
// at most K, and Synced is at most min(maxSilence, T/silenceShare) ago.
// The time bound then holds with T-maxSilence (at least 4 s, T being at
// least 5 s) left as a margin for the message's delay in the transport and
// the leader's queue, and for a leader deposed without knowing it (raft's
// CheckQuorum steps it down within an election timeout, half a second by
// default), whose messages may miss what its successor committed. The
// prefix bound holds for every write the replica can know of; writes
// committed after the leader's last message are unknown to it and not
// counted, but they are at most maxSilence old, so the read misses
// nothing older than that.
//
// A quiesced group (its leader had nothing pending and said so, and this
// replica applied all of it) misses nothing for as long as it stays
// quiesced here: a leader that commits again first wakes the group, and
// its heartbeats (every tick) or, if it is unreachable, the liveness
// mechanism (host.NodeDown) wake the group here too. That fails only if
// messages are lost one way (a leadership moved to a node that cannot
// reach this one, the old leader still reachable): so the quiescence is
// trusted for T/quiesceShare after the leader's last quiesce marker, which
// bounds a read's staleness by the time bound even then; past it, one
// read asks the leader (a ReadIndex, which wakes the group; the leader
// quiesces it again with a fresh marker). A replica that dropped a
// received message since cannot rely on the quiescence and is judged by
// Synced as any other.
//
// Any other case falls back to a ReadIndex through the leader, which is
// Strong's path: a stronger read is always allowed.
const (
	maxSilence   = time.Second
	silenceShare = 4
	quiesceShare = 2
)

// boundedLocal reports whether a replica whose lag is l may serve, at now,
// a read that may lag by at most maxOps operations and maxAge, without
// asking its leader (see above).
func boundedLocal(l replication.LagInfo, now time.Time, maxOps int64, maxAge time.Duration) bool {
	if maxOps < 0 || maxAge <= 0 {
		return false
	}
	var behind uint64
	if l.Commit > l.Applied {
		behind = l.Commit - l.Applied
	}
	if behind > uint64(maxOps)/engine.MaxCommandsPerEntry {
		return false
	}
	if l.Quiesced && behind == 0 && !l.QuiescedAt.IsZero() && !l.QuiescedAt.After(now) && now.Sub(l.QuiescedAt) <= maxAge/quiesceShare {
		return true
	}
	if l.Synced.IsZero() || l.Synced.After(now) {
		return false
	}
	return now.Sub(l.Synced) <= min(maxSilence, maxAge/silenceShare)
}
