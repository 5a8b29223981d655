// Package logstore keeps the raft log entries of all of a node's groups in
// segmented append-only files of their own, outside Pebble.
//
// Raft entries are written once, read back at most once (to apply them,
// and usually not even then: see the cache) and then truncated. In an LSM
// every entry also costs a memtable insert, a flush and compactions that
// only carry it until its tombstone catches up. Here an entry costs its
// bytes in one sequential write and its share of one fsync per round.
//
// # Format
//
// The store is a directory of segments, 0000000000000001.seg and up. A
// segment starts with a 16-byte header (magic "PRSCRLOG", the segment's
// number) followed by records:
//
//	length uint32 LE | CRC-32C(body) uint32 LE | body
//	body: kind | seq | group | index | count | count × (term | len | entry)
//
// (uvarints but the kind byte; entry is a marshaled raftpb.Entry). kind
// is append (entries from index on, replacing any suffix from there, as
// raft's Append does), reset (the group's log is emptied and restarts
// after index; entries, if any, follow from index+1), rewrite (a reset
// that Purge or UndoReset writes to move a live log; never undone), or
// hard (the group's hard state, a marshaled raftpb.HardState as the one
// entry, so that it is durable with the round's entries by the same
// fsync; the last one read wins). seq numbers the
// Commit the record belongs to. A record is at most MaxRecordBytes, which
// bounds what recovery reads for a length; a big round is split into
// several records.
//
// # Writing
//
// Commit writes all of a round's records, for every group of the node, in
// one write to the active segment and, when asked, one fsync: the
// etcd-WAL shape (CRC per record, one sync per batch) shared by all groups,
// as TiKV's Raft Engine shares one log among its regions. The active
// segment is sealed once it passes SegmentBytes; sealing syncs it, so only
// the last segment can ever have a torn tail.
//
// # Index and cache
//
// Each group has an in-memory index, entry index → (segment, offset,
// length, term), so Term never reads a file, and a cache of its most
// recent entries within a global byte budget (CockroachDB's raft entry
// cache), so applying committed entries normally reads nothing back.
//
// # Truncation and purging
//
// Truncate is an in-memory operation and is not logged. The caller (the
// raftlog package) keeps the authoritative truncated index in Pebble,
// together with the applied state it depends on, and those Pebble writes
// may be committed without a sync; a truncation logged here could reach the
// disk before them and lose entries that the state machine, after a crash,
// still needs. So recovery brings truncated entries back and the caller
// truncates again.
//
// Space is freed by Purge, which the caller runs only when its truncation
// state is durable (PurgeDue says when there is work, so that the caller
// syncs its own store only then). A segment holds a count of the live entries whose
// newest copy it stores. Segments are deleted in order only: the oldest
// ones, while they have no live entry. So that one slow group cannot pin
// old segments forever (Raft Engine's purge by rewriting), once more than
// KeepSegments sealed segments exist Purge rewrites the whole live log of
// each group that still has entries in the older ones, if it is no longer
// than RewriteBytes, as a rewrite record plus appends into the active
// segment, syncs, and then deletes what became free.
//
// # Invariants
//
//  1. Every record in a sealed segment is durable; only the active (last)
//     segment can end in a torn or partial record.
//  2. A group's live entries sit in segments of non-decreasing number as
//     the index grows: appends, replacements and rewrites all go to the
//     active segment.
//  3. A deleted segment held no live entry, and every segment before it
//     was deleted first.
//
// From 2 and 3: if a replayed append record starts before the group's
// recovered log or after its end, the entries it would have followed or
// replaced were in deleted segments, so they were dead when those were
// deleted, and by 2 so was every entry before them. Recovery therefore
// restarts the group's log at such a record.
//
// # Recovery
//
// Open reads the segments in order and replays their records into the
// index. A record that is short, has a zero or oversized length, or fails
// its CRC ends the log if it is in the last segment: the valid prefix is
// copied to a temporary file that replaces the segment (vfs has no
// truncate), durably, so the torn bytes can never be mistaken for records
// later. The same damage in an earlier segment is an error. A record whose
// CRC holds but whose body does not decode is an error anywhere. New
// writes go to a new segment.
//
// Hard state records are not counted as live: a segment whose only
// record of a group's hard state is deleted loses it, so the caller keeps
// its own copy, made durable before any Purge, and takes the later of the
// two (raft's hard state only moves forward).
//
// A reset found at recovery keeps the log (and hard state) it replaced,
// and pins its segments, until the group's next write, so that UndoReset
// can take it back: the caller needs that when the Pebble commit that went
// with the reset (a snapshot applied) never happened. See the raftlog package for
// the whole contract between the two stores.
package logstore
