// Package replication is the root of Parsec's replication: every physical
// partition becomes a raft group replicated on three nodes, multi-raft in
// the manner of CockroachDB, on go.etcd.io/raft/v3 (RawNode). This file is
// the design; the code is in three packages, each self-contained and not
// yet used by the engine, the API or the server.
//
// # The packages
//
//   - raftlog: the raft log and raft state of many groups in the node's one
//     Pebble store (key family G), served to raft as raft.Storage. Writes
//     of any number of groups go into one batch and one WAL sync; the
//     per-group state raft reads on every step (last index and term, first
//     index, hard state, configuration) is cached in memory and published
//     only when the batch commits.
//   - transport: messages between nodes. Envelopes tag each raft message
//     with its group; a node sends a peer the messages of all groups in
//     frames over one TCP connection, authenticated with HMAC-SHA256 under
//     the cluster key; queues are bounded and drop rather than block. An
//     in-memory network with seeded faults serves the tests.
//   - host: the multi-raft driver of one node. One loop, one tick source,
//     one synced commit of all groups' raft writes per round, then the
//     messages, then the committed entries to each group's StateMachine
//     (into one shared unsynced batch), then Advance. Propose returns once
//     committed and applied, or a NotLeaderError naming the leader;
//     ReadIndex gives linearizable reads on any replica; CheckQuorum and
//     PreVote are on; idle groups can quiesce.
//
// # Why this shape
//
// The unit of cost on a node must be the node, not the group: a node holds
// thousands of partitions, most idle. So the groups share one store (one
// WAL, one sync per round for all of them, the way the engine's apply loop
// already group-commits), one connection per peer (heartbeats of a
// thousand groups in a few frames), one loop and one clock (no goroutine
// or timer per group), and idle groups quiesce. The raft log lives in the
// same Pebble as the data, so a state machine's applied index commits
// atomically with its data (the engine's LSN is the raft index) and needs
// no second storage engine.
//
// Raft's ordering rule is kept by construction: hard state, entries and
// snapshots are durable (synced) before any message of the round is sent,
// and a proposal is answered only after its entry is committed by a
// quorum and its effect applied and visible. Applied state is committed
// without a sync: the log is durable, so a crash only replays entries.
//
// Everything a peer controls is bounded: frame size, messages per batch,
// queued messages, proposal size; malformed frames close the connection
// and malformed messages are dropped. Peers that hold the cluster key are
// trusted to run raft correctly (raft itself panics on some impossible
// messages from a correct leader's point of view, such as a commit index
// beyond the log).
//
// # Measured
//
// BenchmarkPropose (host package): three in-process nodes on the in-memory
// transport, 64 concurrent clients proposing 256-byte commands to the
// leaders (a client refused by a node that lost leadership goes to the
// leader it names), -benchtime 3s, on a shared 2-core machine (figures vary
// by tens of percent from run to run):
//
//	stores       groups  proposals/s  ms per synced commit  entries per commit  redirects
//	in memory       100       ~49000                 0.008                 4.2          0
//	disk (ext4)     100       ~17700                  0.37                 9.6          0
//	in memory         1      700-1100                 0.01                 3.5   1200-22000
//	disk (ext4)       1         ~1600                  0.33                 7.1        ~640
//
// Spread over 100 groups, the load is carried and group commit does its
// work (several entries per sync). Concentrated on ONE group, the same
// load makes leadership churn: the leader's loop falls behind, followers
// miss heartbeats and elect, and every election costs the in-flight
// proposals (short runs of a second or less do not show it and reach
// 40,000/s). Flow control is missing: the leader should stop taking
// proposals (and the transport should stop queueing appends) before its
// heartbeats are delayed past the election timeout. That, and a scheduler
// with several workers instead of one loop, come before the engine uses
// this host.
//
// # What is next
//
//   - The engine as the StateMachine: a partition's apply loop becomes
//     Apply (the command encoding of the engine is already deterministic
//     and replayable), its LSN the raft index, its state record written
//     into the apply batch; snapshots stream the partition's key span from
//     a Pebble snapshot in chunks over their own connection instead of
//     living in the raft store.
//   - The meta group: one raft group holding the catalog, the partition
//     maps, placement and membership; node liveness in it, which drives
//     NodeDown and so lets quiescence be on by default.
//   - Membership: adding and removing replicas by configuration changes
//     (learner first, then voter, through joint consensus), splits as a
//     command in the parent's log creating the children on every replica.
//   - Gateway routing: every node routes a request by EPK to the leader
//     (NotLeaderError carries the hint) for writes and strong reads, or to
//     a replica that satisfies the consistency level: bounded staleness and
//     session by LSN (the applied index), consistent prefix, eventual.
//     Leader leases on top of ReadIndex would spare strong reads their
//     heartbeat round.
//   - A raft scheduler with several workers, each owning a share of the
//     groups, when one loop is no longer enough.
package replication
