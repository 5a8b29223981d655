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
// One path, evaluate, propose, apply, for a single node and a cluster
// alike: a single node is a cluster of one, whose logs are local.
//
//  1. The caller prepares a Command outside any lock: it validates the body,
//     computes the EPK, and fixes everything non-deterministic (the
//     timestamp). New resource ids and etags derive from the partition's own
//     sequence numbers, which apply hands out (partState.takeSeqs).
//  2. The command is routed to the Partition whose range holds its EPK and queued
//     on that partition's apply loop.
//  3. The loop drains every queued command (a group, up to 512 commands or
//     2 MiB) and evaluates them (commitGroup, replicated.go): it runs apply
//     for each, on the partition's published state, into one storage batch
//     that it does not commit, each command at the next LSN. apply is
//     deterministic: the result depends only on the command, the LSN and
//     the state it reads, never on the clock, randomness or map order. A
//     command that fails fails alone.
//  4. The loop proposes the outcome (the batch's writes, the partition
//     state they leave and the LSN they were evaluated on) as one entry of
//     the partition's log: the Replicator, which is a cluster's raft group
//     (Options.Replicator) or the single node's local log (local.go), which
//     gives the entry the next index at once.
//  5. The log hands the committed entry to the partition's state machine,
//     Partition.Replica (replica.go), the same adapter on every node and in
//     every test: ApplyEntries adds the entry's writes, the state record
//     and the applied index to the log's batch; the local log commits that
//     batch with a WAL sync (raft has synced its own log instead), and
//     Publish makes the new state the partition's. Only then are the
//     callers answered, from the results their own replica recorded: an
//     acknowledged write is durable, and all commands of a group share one
//     sync (group commit).
//
// Two other commands travel as commands, each alone in its entry after the
// writes queued before it, since they read the store as the entries before
// them leave it: a split (applySplit, split.go), whose children start at
// its LSN, and a chunk of an index build (applyReindex, index_build.go),
// which writes index entries for committed items and switches the
// partition's writes to the new generation; every replica evaluates them.
// Every command takes an LSN, and applyEntry applies every kind. Every
// command has a stable encoding (command.go). Catalog changes (databases,
// container records, offers, deletions) are batches of key writes, each
// one entry of the catalog's log (the meta group with Options.Catalog,
// else the local one) applied through Engine.CatalogReplica
// (catalog_log.go). The entries, once durable, may be handed to a command
// log that ApplyLog replays into another store with the same result byte
// for byte (log.go, replay.go).
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
