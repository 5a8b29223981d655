// Package raftlog keeps the raft logs and raft state of many raft groups in
// the node's one storage.DB (or the entries in a log store of their own
// beside it, see "Two stores"), and serves each group to go.etcd.io/raft as
// a raft.Storage.
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
// # Two stores: entries in the log store
//
// Open (or OpenWith and a logstore.Store) keeps the entries out of Pebble,
// in the node's log store (package logstore: segment files shared by all
// groups, one write and one fsync per round, an entry cache, purge by
// rewriting); OpenInDB keeps them in the DB as before. The configuration,
// the snapshot and the truncated state stay in the DB, because they must
// commit atomically with the state machines' applied state, which is in
// the DB. The hard state is written to both: to the log store, durable
// with the round's entries by the same fsync, and to the DB, where it may
// commit without a sync. One Batch still gathers a round, and Commit
// orders it:
//
//  1. The log store's records (appends, hard states, resets for
//     ApplySnapshot and Destroy) are written and fsynced, even by
//     CommitNoSync.
//  2. The DB batch commits, synced only if Commit was asked for and the
//     batch holds more than hard states and truncations: what Storage()
//     was given, a snapshot applied, a replica destroyed. A round of
//     entries and hard states costs one sync, the log store's.
//  3. The new state is published; raft hears the entries are persisted,
//     and may send messages that depend on the hard state, only now.
//  4. When the log store has segments to free, the DB's log is synced
//     first (storage.DB.SyncLog), so every truncation so far is durable
//     there, then logstore.Purge deletes them.
//
// Truncations are never logged in the log store (it drops them in memory
// only): the DB's truncated state, committed with the applied state it
// depends on and possibly without a sync, is the authority, and a
// truncation that reached the disk before it could lose entries that the
// state machine still needs after a crash.
//
// The invariant: the log store never lacks an entry the DB's state needs,
// that is, one after the truncated index up to the hard state's commit
// index (the applied index never passes it). It may hold more: entries at
// or below the truncated index, which recovery drops.
//
// Recovery (Group, the first time) reconciles the two, per group:
//
//   - If the log store lacks needed entries and its last change was a
//     reset found at recovery, the round that applied a snapshot (or
//     destroyed the replica) reached the log store but not the DB: the
//     reset, and what came with it, hard state included, are undone
//     (logstore.UndoReset).
//   - Entries at or below the truncated index are dropped; if the entry
//     at the truncated index has another term than the DB's truncated
//     term, the entries after it belong to an older history (a snapshot
//     whose reset never reached the log store) and are dropped too.
//   - The hard state is the later of the two copies (raft's hard state
//     only moves forward): the log store's is normally the newer; the
//     DB's wins when the log store's records were in deleted segments.
//   - A log that still starts past the truncated index, or a commit index
//     past the last entry, is reported as an error, never papered over.
//
// Entries an earlier version kept in the DB are moved to the log store
// the first time a group is loaded. The converse is not done: a node that
// ran with the log store must keep using it. TestCrashContract checks the
// whole contract on a crashable file system, crashing between steps 1
// and 2 among other points.
//
// Snapshots keep their data in the store, as MemoryStorage does. That suits
// small state machines and tests; the engine will instead stream a
// partition's key span straight from a Pebble snapshot and keep only the
// metadata here.
package raftlog
