// Package transport carries raft messages between the nodes of a Parsec
// cluster.
//
// A node hosts replicas of many raft groups, and its peers host replicas of
// many of the same groups, so messages travel node to node, not group to
// group: an Envelope tags each raftpb.Message with its group id, and a
// Transport sends a node all its queued messages of all groups together.
// One connection per peer carries them, merged into frames, so a thousand
// groups heartbeating cost a few writes, not a thousand.
//
// Send never blocks the raft loop: each peer has a bounded queue, and a
// message that does not fit is dropped and counted. Raft tolerates loss
// (it retransmits appends and retries elections), so dropping is always
// safe, while blocking would stall every group on the node behind one slow
// peer. Loss is not equal, though: a lost append is resent at the next
// heartbeat, but heartbeats lost for an election timeout depose a healthy
// leader. So the bulk messages (appends and snapshots, see Bulk) and the
// others (heartbeats, votes, responses: small, and few per group and tick)
// have separate bounded queues, the others sent first, and appends that
// fill their queue never cost a heartbeat.
//
// Two implementations:
//
//   - TCP: TLS 1.3 connections, both sides presenting a certificate issued
//     by the cluster's authority (a certificate authority whose key every
//     node derives from the cluster key, so no file is shared: tls.go) and
//     verifying the other's; inside, length-prefixed frames, each
//     authenticated with HMAC-SHA256 under the cluster key, after a mutual
//     challenge-response handshake (see the protocol comment in tcp.go).
//     Frame size and queue length are bounded; a peer that fails a check
//     is disconnected with a logged reason; a sender reconnects with
//     jittered exponential backoff.
//   - Network/Mem: an in-memory network for tests, which copies every
//     message and injects drops, duplicates, delays, reordering and
//     partitions from a seeded random source.
//
// Snapshots travel as ordinary MsgSnap messages, so they are bounded by the
// frame size. Streaming a partition's snapshot in chunks on its own
// connection, as CockroachDB does, is the next step once the engine is the
// state machine.
package transport
