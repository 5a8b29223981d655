// Package storage is Parsec's only door to the storage engine, Pebble.
//
// Everything Parsec keeps lives in one Pebble database, under nine key families
// (the layout is stable: changing it needs a migration):
//
//	M 0x00 "db"   0x00 <esc(database id)>                           database record (JSON)
//	M 0x00 "coll" 0x00 <esc(database id)> 0x00 <esc(container id)>  container record (JSON)
//	M 0x00 "seq"                                           resource-id allocator high-water mark
//	M 0x00 "catapplied"                                    the catalog log's (meta group's) applied raft index
//	D <container rid, 8 bytes> <EPK, uppercase hex> 0x00 <item id>   one item
//	P <container rid, 8 bytes> <range id>                  one physical partition's state (LSN, stats)
//	P <container rid, 8 bytes> <range id> 0x00 'i'         its index record (generation, policy)
//	L <container rid, 8 bytes> <EPK, uppercase hex> 0x00 <key JSON>  one logical partition's size
//	I <container rid, 8 bytes> <generation> <term> <EPK> 0x00 <item id>  one index entry (see IndexPrefix)
//	C <container rid, 8 bytes> <sequence number, 8 bytes>  the change index: an item's current version → its key
//	V <container rid, 8 bytes> <sequence number, 8 bytes>  the version log: each version written and each delete
//	R <container rid, 8 bytes> <sequence number, 8 bytes>  the resource-id index: an item's creation → its key
//	G <raft group id, 8 bytes> <kind> ...                  a raft group's log and state (raftkeys.go)
//
// Items are keyed by their container, then their effective partition key (EPK),
// then their id. A physical partition owns a contiguous EPK range, so it is one
// contiguous span of keys, and splitting it is a metadata change: no item
// moves. The EPK is stored as its hex text, which sorts exactly as the EPK
// strings Cosmos compares, and never contains the 0x00 separator that precedes
// the id, so a shorter EPK always sorts before a longer one that extends it.
// Names in catalog keys are escaped (esc: 0x00 → 0x01 0x01, 0x01 → 0x01 0x02),
// so no two resources share a key (see keys.go for the whole argument).
//
// Writes reach Pebble through two calls, both synced and both refused
// (ErrNoSpace, ErrFailed) when the store cannot take writes:
//
//   - Batch.Commit. The engine's per-partition apply loop commits item writes
//     with it, many commands to one batch and one WAL sync (group commit), and
//     Pebble further merges concurrent syncs of different partitions. Splits
//     and reindex chunks (also in the loop), every catalog change (database
//     and container records, offers, deletions, the end of an index build)
//     and the catalog key rewrite at open commit their own batches.
//   - DB.Set, one key at a time, for the resource-id allocator's high-water
//     mark.
//
// With replication (engine Options.Replicator and Options.Catalog) the
// replication host applies what raft committed, partitions' entries and
// the catalog's alike, into one batch per round with their applied indexes
// (P ... 0x00 'a', M 0x00 "catapplied") and commits it with
// Batch.CommitNoSync (raft.go): the raft log, synced, is what a crash
// replays.
//
// DB.WriteFile writes small files beside the store, outside Pebble and its
// log (the engine's record of acknowledged LSNs, and the store's record of
// the MANIFEST it stopped with, stopFile in manifest.go).
//
// Open refuses a store whose files are damaged (ErrDataLoss) unless
// Options.AcceptDataLoss: a write-ahead log unreadable before its synced
// end (wal.go), and a MANIFEST unreadable before its end (manifest.go),
// which Pebble alone would take for a torn edit and read up to the damage.
package storage
