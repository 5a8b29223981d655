package storage

import "encoding/binary"

// Raft keys (family G). Each raft group (one replicated physical partition)
// keeps its log and its durable raft state under its own prefix:
//
//	G <group id, 8 bytes big-endian> 'h'                    hard state (term, vote, commit)
//	G <group id> 'c'                                       configuration (voters, learners)
//	G <group id> 's'                                       the latest snapshot (metadata and data)
//	G <group id> 't'                                       truncated state: index and term of the last entry dropped from the log
//	G <group id> 'l' <index, 8 bytes big-endian>            one log entry
//
// The group id has a fixed length, so one group's keys never fall in
// another's span, and the fixed-width big-endian index makes a group's
// entries sort in index order, so a log suffix or prefix is one range.
const prefixRaft = 'G'

// RaftGroupLen is the length of a raft key's group prefix: 'G' and the id.
const RaftGroupLen = 1 + 8

// raft key kinds, the byte after the group id.
const (
	raftHardState = 'h'
	raftConfState = 'c'
	raftSnapshot  = 's'
	raftTruncated = 't'
	raftEntry     = 'l'
)

func raftGroupKey(dst []byte, group uint64, kind byte) []byte {
	dst = append(dst, prefixRaft)
	dst = binary.BigEndian.AppendUint64(dst, group)
	return append(dst, kind)
}

// RaftHardStateKey is the key of a group's hard state.
func RaftHardStateKey(group uint64) []byte { return raftGroupKey(nil, group, raftHardState) }

// RaftConfStateKey is the key of a group's configuration.
func RaftConfStateKey(group uint64) []byte { return raftGroupKey(nil, group, raftConfState) }

// RaftSnapshotKey is the key of a group's latest snapshot.
func RaftSnapshotKey(group uint64) []byte { return raftGroupKey(nil, group, raftSnapshot) }

// RaftTruncatedKey is the key of a group's truncated state.
func RaftTruncatedKey(group uint64) []byte { return raftGroupKey(nil, group, raftTruncated) }

// RaftEntryKey appends the key of a group's log entry at index to dst.
func RaftEntryKey(dst []byte, group, index uint64) []byte {
	dst = raftGroupKey(dst, group, raftEntry)
	return binary.BigEndian.AppendUint64(dst, index)
}

// RaftEntryIndex returns the index of a log entry key, and whether key is
// one.
func RaftEntryIndex(key []byte) (uint64, bool) {
	if len(key) != RaftGroupLen+1+8 || key[0] != prefixRaft || key[RaftGroupLen] != raftEntry {
		return 0, false
	}
	return binary.BigEndian.Uint64(key[RaftGroupLen+1:]), true
}

// RaftEntriesSpan returns the span of a group's log entries with index in
// [lo, hi).
func RaftEntriesSpan(group, lo, hi uint64) (from, to []byte) {
	return RaftEntryKey(nil, group, lo), RaftEntryKey(nil, group, hi)
}

// RaftGroupSpan returns the span of all of a group's raft keys.
func RaftGroupSpan(group uint64) (lo, hi []byte) {
	lo = binary.BigEndian.AppendUint64([]byte{prefixRaft}, group)
	return lo, PrefixEnd(lo)
}

// RaftSpan returns the span of every group's raft keys.
func RaftSpan() (lo, hi []byte) { return []byte{prefixRaft}, []byte{prefixRaft + 1} }

// RaftGroupOf returns the group id of a raft key, and whether key is one.
func RaftGroupOf(key []byte) (uint64, bool) {
	if len(key) < RaftGroupLen || key[0] != prefixRaft {
		return 0, false
	}
	return binary.BigEndian.Uint64(key[1:RaftGroupLen]), true
}

// Cluster keys. Group id 0 is never a raft group: its prefix holds the
// node's cluster records, which the meta group writes on every node:
//
//	G <0, 8 bytes> 'i'                      the cluster's identity and this node's id
//	G <0, 8 bytes> 'm' <node id, 8 bytes>   a member of the cluster
const (
	clusterIdentity = 'i'
	clusterMember   = 'm'
)

// ClusterIdentityKey is the key of the record naming the cluster this
// store belongs to.
func ClusterIdentityKey() []byte { return raftGroupKey(nil, 0, clusterIdentity) }

// ClusterMemberKey is the key of a member's record.
func ClusterMemberKey(id uint64) []byte {
	return binary.BigEndian.AppendUint64(raftGroupKey(nil, 0, clusterMember), id)
}

// ClusterMemberPrefix is the prefix of every member's record.
func ClusterMemberPrefix() []byte { return raftGroupKey(nil, 0, clusterMember) }
