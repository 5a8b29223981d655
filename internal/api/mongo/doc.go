// Package mongo serves the MongoDB wire protocol over Parsec's engine, so
// that unmodified MongoDB drivers read and write Parsec's partitioned
// containers: a Mongo database is a Parsec database, a collection is a
// container, and a sharded collection's shard key is the container's
// (hashed) partition key.
//
// The layers, from the socket inwards:
//
//   - wire.go frames messages: OP_MSG (kind-1 document sequences folded
//     into the command as arrays, the CRC-32C checksum verified, moreToCome
//     answered with nothing) and the legacy OP_QUERY handshake, answered
//     with OP_REPLY. A message that breaks the protocol closes its
//     connection with a logged reason. Before anything recurses into a
//     command, checkDepth walks it without recursion and refuses one
//     nested deeper than MaxCommandDepth (code 15), so that no message can
//     exhaust a goroutine's stack; before authentication (when it is
//     required) only the handshake commands are decoded at all. BSON is
//     the driver's (bson, bsoncore, wiremessage); this package writes no
//     codec of its own.
//
//   - server.go runs one goroutine per connection, bounded in number,
//     closing connections idle past Config.IdleTimeout; a handler's panic
//     becomes an InternalError reply, never a crash. Connections that have
//     not authenticated are held to tighter limits (Config): a short wait
//     for each message, a small message size, and a share of the slots
//     that a newcomer takes from the oldest of them.
//
//   - commands.go maps a command's name to its handler; handlers return a
//     reply document or an error, and toCmdError (errors.go) is the one
//     place engine and query-language errors become MongoDB codes
//     (engine throttling is Cosmos's 16500 RequestRateTooLarge with
//     RetryAfterMs).
//
//   - crud.go, write.go and ddl.go are the commands. They evaluate filters,
//     projections, sorts, updates and pipelines with package mql, which
//     is pure; this package does the I/O around it.
//
//   - maxtime.go is maxTimeMS: a deadline on Config.Now that scans check
//     before each page and cursors carry over their getMores (50
//     MaxTimeMSExpired).
//
//   - stats.go answers the statistics and maintenance commands (dbStats,
//     collStats, $collStats, dataSize, validate, compact) from the
//     engine's usage counts, and users.go the user commands over the
//     account's built-in users and the engine's users.
//
//   - coll.go maps a collection onto the engine: a filter that fixes the
//     shard key by equality reads one logical partition (a point read when
//     it fixes _id too); any other reads each partition in turn. Writes that
//     read first (update, findAndModify) replace with the etag they read and
//     retry on a concurrent change.
//
//   - storage.go is the document's stored form: see DESIGN.md. Because the
//     engine keeps an item's JSON bytes as written, every BSON type round-trips
//     exactly, and the items stay readable and queryable through the NoSQL
//     API.
//
//   - cursors.go holds server-side cursors: they belong to the server and
//     the user who opened them, not a connection; a getMore reads the page
//     a cursor holds again, so no batch returns a document deleted since;
//     they expire after Config.CursorTimeout idle, and are capped at
//     Config.MaxCursors and at Config.MaxCursorBytes of results kept
//     between getMores. quota.go
//     shares these caps, and the sessions', between the users.
//
//   - txn.go is multi-document transactions, as Cosmos offers them: within
//     one logical partition of one collection. A server-side table of
//     sessions (by lsid) holds each transaction's writes, buffered per
//     document with the etag of the version it replaced; reads in the
//     transaction lay them over what the scanner reads, and the commit is
//     one atomic engine command whose If-Match preconditions turn a
//     concurrent change into WriteConflict (112, TransientTransactionError).
//
//   - auth.go authenticates with SCRAM-SHA-256 (account name and key, as
//     Cosmos does) and holds a read-only user to reads; package server
//     requires it whenever a key other than the emulator's is in use, and
//     serves the listener with TLS when the HTTP one has it.
//
// # Transactions
//
// Multi-document transactions are Cosmos's: all the writes of one
// transaction fall in one logical partition of one collection (a write
// elsewhere is code 263 and aborts it), because the engine makes a batch
// atomic only within a logical partition, through that partition's log.
// Nothing reaches the engine before commitTransaction: writes are buffered
// per document with the etag of the committed version they replace, reads
// see committed data with the buffered writes laid over it, and the commit
// is one engine Command{Atomic: true} whose If-Match preconditions make a
// concurrent change a WriteConflict (112) with TransientTransactionError,
// which drivers' withTransaction retries. Sessions live in a bounded table;
// a transaction idle for 60 s is aborted (NoSuchTransaction, 251). See
// DESIGN.md, "Transactions".
package mongo
