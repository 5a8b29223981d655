// Package raftlog keeps the raft logs and raft state of many raft groups in
// the node's one storage.DB, and serves each group to go.etcd.io/raft as a
// raft.Storage.
//
// A node hosts one replica of many groups (one per physical partition), so
// the log is shaped for many small groups sharing one store, as CockroachDB
// keeps its ranges' logs in its one engine:
//
//   - Every group's keys live under its own prefix of the G key family
//     (storage.RaftHardStateKey and its neighbours): hard state,
//     configuration, latest snapshot, truncated state, and one key per log
//     entry, indexed big-endian so that a suffix (conflict) or a prefix
//     (compaction) is one DeleteRange.
//   - Writes never commit on their own. Each write method takes a Batch,
//     which gathers the writes of every group with work in one round of
//     the host's loop, plus whatever else the caller adds to
//     Batch.Storage() (a state machine's writes), into one Pebble commit
//     and one log sync. The per-group state cached in memory changes only
//     when the batch commits, so raft never sees a write that is not
//     durable.
//   - The cache (hard state, configuration, snapshot metadata, truncated
//     and last index and term) makes LastIndex, FirstIndex, InitialState and
//     the Term of the boundary entries free; only Entries and the Term of an
//     inner entry read Pebble.
//
// The semantics follow raft.MemoryStorage exactly (Append replaces a
// conflicting suffix and skips compacted entries, Truncate is Compact,
// ApplySnapshot resets the log, CreateSnapshot records state machine data),
// except that misuse MemoryStorage answers with a panic is an error here.
// TestDifferential checks this on random operation sequences.
//
// Snapshots keep their data in the store, as MemoryStorage does. That suits
// small state machines and tests; the engine will instead stream a
// partition's key span straight from a Pebble snapshot and keep only the
// metadata here.
package raftlog
