// Package host drives one node's replicas of many raft groups: the
// multi-raft loop.
//
// A node of a Parsec cluster holds a replica of thousands of physical
// partitions, each its own raft group (go.etcd.io/raft/v3 RawNode). Running
// a goroutine, a timer, a log file and an fsync per group would not scale,
// so, as CockroachDB does, the groups share everything that costs:
//
//   - One loop. Everything that touches a RawNode (received messages,
//     proposals, read requests, ticks) is an event queued for the loop, which
//     drains all queued events, then handles the Ready of every group that
//     may have work (a dirty set, so idle groups cost nothing per round).
//   - One storage commit per round. The hard states, new entries and
//     received snapshots of all those groups go into one raftlog.Batch,
//     committed with one WAL sync, before any of their messages is sent:
//     raft's rule that what a message promises is durable first.
//   - One transport. Messages of all groups are grouped per destination
//     node and handed to the transport in one Send each.
//   - One apply batch. Committed entries go to each group's StateMachine,
//     which writes its changes into one shared storage batch, committed
//     without a sync: the log is already durable, so a crash only makes the
//     entries apply again. Proposals and reads are answered only after that
//     commit, when their effect is visible.
//   - One clock. Tick advances every group; the caller drives it (a ticker
//     in a server, the test itself in tests), so tests need no timing.
//
// Then every group is Advanced. A snapshot sent to a follower is reported
// finished after the send, since the transport carries it whole, unless
// the state machine streams its snapshots (stream.go: the message carries
// a descriptor, the follower pulls the state in chunks off the loop).
//
// Proposals carry a 16-byte header (proposing node, proposal id) so the
// proposer recognises its entry at apply and returns its index: Propose
// returns when the entry is committed and applied on this node. Only the
// leader proposes (proposal forwarding is off): a follower answers with a
// *NotLeaderError naming the leader it knows, for the gateway to retry
// there. A proposal whose context ends is reported with ErrTimeout, and one
// whose proposer loses the leadership with ErrAmbiguous: either may still
// commit, so the caller must treat the outcome as unknown (CockroachDB's
// ambiguous results) and retry only idempotent commands.
//
// Flow control. A group admits at most MaxInflightProposals proposals of
// this node (and MaxInflightProposalBytes of them) between Propose and
// their answer; further callers wait, with their context, and one whose
// context ends while it waits gets the context's error and knows its
// command was not proposed. A caller that stops waiting after admission
// keeps its place until the entry commits or the leadership is lost, so
// the bound holds for what raft really has in flight. Raft bounds the
// rest: 256 KiB per append message, 64 messages and 8 MiB unacknowledged
// per follower, 1 MiB of committed entries per Ready, and an uncommitted
// log bound that admission keeps well below (ErrBusy if it is reached). A
// round of the loop takes at most MaxEventsPerRound queued events, so a
// backlog is worked off over several rounds, each of which ticks, persists
// and sends. Appends and snapshots (bulk) and the other messages
// (heartbeats, votes, responses) are queued and bounded separately, in the
// host and in both transports, and the others are delivered first, so
// appends filling a queue never drop what keeps a leader in place.
//
// What flow control cannot fix is a loop that stops: everything a round
// calls runs in it, for every group of the node, so StateMachine.Apply and
// Snapshot must be cheap. A snapshot that encodes the whole state (the
// tests' kv does) stops every group of the node for as long as it takes,
// and once that passes the election timeout, leadership churns. A state
// machine whose snapshot is costly implements SnapshotEncoder: the loop
// only captures the state, the encoding runs on its own goroutine, and a
// later round records the snapshot and truncates the log (unless a
// snapshot from the leader overtook it).
//
// Reads: ReadIndex (raft's ReadOnlySafe, a heartbeat round confirming the
// leadership) returns an index that covers every write committed before
// the call, once this node has applied it, so a read of the local state
// machine after it is linearizable, on the leader or on a follower.
// CheckQuorum and PreVote are on: a leader that loses its quorum steps
// down, and a partitioned node that rejoins does not depose a healthy
// leader. Lag (lag.go) tells what a replica knows of its lag behind its
// leader without asking it, for reads that may be a little stale
// (bounded staleness): the committed entries it has not applied, and
// when it last held everything its leader had committed when it sent an
// append or a quiesce marker (a heartbeat carries the commit index only up
// to what the follower holds, so it cannot tell). It is recorded in the
// loop as messages are stepped and read through it.
//
// Logs are compacted by the host: every SnapshotEntries applied entries a
// group takes a snapshot of its state machine, records it in the raft log
// store, and truncates the log up to KeepEntries before it. A follower
// behind the truncation receives that snapshot. A SnapshotStreamer (a
// state machine whose state is already in the store) takes no periodic
// snapshots: TruncateEntries truncates its log up to what its live
// replicas hold, and a replica that was down past it receives a snapshot
// captured and streamed when raft asks for one (stream.go).
//
// A new group is bootstrapped identically on every replica (an empty log
// after index 10 of term 5 with the given voters, as CockroachDB starts
// its ranges), so no replica needs a message to agree on the beginning.
//
// Quiescence (Config.Quiesce): a leader whose followers all hold its whole
// log, with nothing in flight, sends them a marked heartbeat (consumed by
// the host, never seen by raft) and stops ticking; a follower that holds
// exactly that log and commit index stops too. A quiesced group costs
// nothing per tick and sends nothing; any message, proposal or read wakes
// it. As in CockroachDB, a quiesced follower cannot notice its leader's
// death, so the host must be told (NodeDown) by a liveness mechanism,
// which does not exist yet: Quiesce is off by default until it does.
//
// Not yet: node liveness (for NodeDown), a scheduler with several workers,
// configuration changes driven from outside (the host applies them when
// they commit). See the replication
// package documentation.
package host
