// Package gateway runs a node's writes where their partition's leader is
// and makes its reads fit for their consistency level, for every API of
// the node (the Cosmos NoSQL API, the MongoDB API, and any other): an API
// parses its protocol into engine commands and reads, calls the gateway,
// and maps the results and errors back onto its protocol. Nothing here
// speaks a client protocol, so a stateful protocol (SCRAM, cursors,
// transactions) keeps its state on the node the client is connected to,
// and only commands travel.
//
// Writes. Write runs a command on the local engine when this node leads
// the command's partition (always, on a single node); otherwise it sends
// the encoded command (engine.EncodeCommand, in the frame of wire.go)
// over the cluster transport, a typed cluster call (CallCommand) that is
// authenticated and encrypted as every cluster call, to the leader's
// gateway, which runs it on its engine and answers the results and the
// partition's session. Errors travel as the engine sentinel they wrap,
// so the client's API answers as if the command had run on its own node.
// A refusal (engine.ErrNotLeader: nothing was proposed) is followed to
// the leader it names, a leader that cannot be reached
// (transport.ErrNotDelivered: the call never arrived) is waited out for
// the next one, both within LeaderWait and maxHops.
//
// No write in doubt. In a cluster every command gets an id (newID) before
// it runs anywhere, and the partition that applies it records its results
// under the id in its replicated outcome table (engine/outcome.go). A
// command whose outcome is unknown (engine.ErrOutcomeUnknown: its leader
// died or lost the leadership with it in flight, or a call arrived and
// went unanswered) is sent again, with its id, to the leader there is
// now: the partition answers it from the table if the first attempt
// committed, and applies it otherwise, after which the first attempt can
// never commit. So a client whose node stays up gets every write's real
// answer, and a retried create never meets its own first attempt.
//
// Reads. PrepareRead makes this node's replicas fit for a read at a
// consistency level (strong, bounded staleness, session, consistent
// prefix, eventual): a ReadIndex, a bounded lag (bounded.go), or the
// client's session LSNs. SyncCatalog waits for this node's catalog to
// follow the meta group.
//
// The gateway declares the small Cluster interface it needs (leaders,
// leader hints, hosting, read index, lag, typed calls); package cluster's
// Node implements it, and a single node passes none. The shape follows
// rqlite's proxy (run locally first, forward through the cluster client on
// not-leader) and CockroachDB's DistSender (the gateway node sends a
// batch to the leaseholder and learns an ambiguous result's fate).
package gateway
