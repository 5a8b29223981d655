// Package engine holds Parsec's data model: databases, containers, their
// partition maps, and the items in them.
//
// The model in one sentence: an Engine holds Databases; a Database holds
// Containers; a Container hash-partitions its items by effective partition key
// (EPK) over Partitions, each owning one contiguous EPK range; every mutation of
// a Partition goes through that partition's single apply loop.
//
// # The write path
//
//  1. The caller prepares a Command outside any lock: it validates the body,
//     computes the EPK, and fixes everything non-deterministic (the
//     timestamp). New resource ids and etags derive from the partition's own
//     sequence numbers, which apply hands out (partState.takeSeqs).
//  2. The command is routed to the Partition whose range holds its EPK and queued
//     on that partition's apply loop.
//  3. The loop drains every queued command, assigns each the next LSN, and runs
//     apply for each into one storage batch. apply is deterministic: the result
//     depends only on the command, the LSN and the state it reads, never on the
//     clock, randomness or map order. This is the seam where replication will
//     later put a consensus log: the same commands, applied in the same order,
//     give the same state on every replica.
//  4. The partition's state record (LSN, item count, bytes) is written into the
//     same batch, and the batch is committed with a WAL sync. Only then are the
//     callers answered: an acknowledged write is durable, and all commands of a
//     group share one sync (group commit).
//
// Two other commands run in the loop, each alone in its own batch after the
// writes queued before it, since they read the committed store: a split
// (applySplit, split.go), whose children start at its LSN, and a chunk of an
// index build (applyReindex, index_build.go), which writes index entries for
// committed items and switches the partition's writes to the new generation.
// Every command takes an LSN, and applyEntry applies every kind.
// Every command has a stable encoding (command.go). Catalog changes
// (databases, container records, offers, deletions) are batches of key
// writes committed by commitCatalog. Both kinds are handed, once durable,
// to an optional log that ApplyLog replays into another store with the same
// result byte for byte (log.go, replay.go). With Options.Replicator and
// Options.Catalog, both logs are raft groups' (replicated.go,
// catalog_repl.go).
//
// Server-side scripts (script.go) run outside the loop, against a
// snapshot and an overlay of their own writes, and submit those writes as
// one atomic item command that applies only if their logical partition
// is still at the version they read (Command.IfVersion): the log carries
// the script's writes, never the script.
//
// Reads go straight to the committed state in storage, or to a snapshot of
// one partition at an applied LSN (Partition.Snapshot), and never wait for
// the apply loop.
//
// # Errors
//
// Every failure the client can cause wraps one of the sentinels in errors.go;
// the API layer maps them to status codes in one place. Stored data that
// cannot be decoded is ErrCorrupt, naming the damaged key; a broken invariant
// panics with "BUG:", or is ErrInternal where a panic could take the server
// down (a partition loop, a parallel query page). The engine speaks no
// HTTP: an operation's OpResult carries its error, or on success whether it
// created its item, and the API layer derives the status from that and the
// operation's kind.
//
// # Storage formats, not wire formats
//
// The engine returns typed values and the API layer renders the Cosmos wire
// formats from them: session tokens from a Session, continuation tokens from
// a read feed's Feed.Next and a query's QueryPage.Next, the /partitions JSON
// from PartitionStats, offers and their links from Offer. No exported type
// carries a JSON tag for the wire, and no message names a header.
//
// The JSON tags that remain mark storage formats: the records stored as JSON
// (DatabaseInfo, ContainerInfo with its RangeInfo, which is partition.Range,
// and the acknowledged-LSN file). They are read back by later versions, so
// a tag is never renamed. The one wire detail the engine writes is the _self
// link stored inside each document (applyCtx.self), kept there so that a read
// returns the stored bytes as they are.
package engine
