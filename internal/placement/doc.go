// Package placement is the decision core of Parsec's scale-out: where each
// physical partition's replicas and leader go, which moves the rebalancer
// makes next, and which partitions split for heat. It is pure: no I/O, no
// clock, no goroutines. State in (members, partition descriptors with
// their load, the moves in flight, the configuration), decisions out; the
// meta group's leader runs it and an executor carries the decisions out
// (learners, snapshots, configuration changes).
//
// # The API
//
//   - Place(new partitions, State) → one Assignment (replicas, leader) per
//     partition, each chosen on its own.
//   - Plan(State) → Schedule: the Changes to start now, each with the Steps
//     the executor performs in order and a Reason, and the partitions that
//     are Blocked and why.
//   - CanRemove(State, node) → nil, or an error saying why the node may not
//     be drained and removed; Holding(State, node) → what it still holds,
//     so `parsec cluster remove` can wait for zero.
//   - HeatSplits(State, History) → a HeatDecision per partition that stayed
//     hot: split at a load median, or a single hot key that cannot be split.
//
// # Placement
//
// Each new partition is placed on its own, seeing those placed before it:
// on live nodes only (never draining, removed, dead or suspect), in
// distinct zones while there are zones left, then on the nodes holding the
// fewest replicas of its container (so one container's partitions spread
// over every node), then the fewest replicas, then the fewest bytes. Its
// leader is the chosen node leading the fewest of the container's
// partitions. Ties are broken by a seeded hash of the range and node ids,
// so the same input gives the same answer and different partitions break
// ties differently.
//
// # The decision order of Plan
//
// The moves in flight are counted as done first (their target holds the
// replica, their source does not) and keep their snapshot slots, the way
// PD adds pending operators' influence before deciding, so the planner
// never decides the same move twice or undoes one under way. A partition
// with a move in flight, or one decided in this plan, gets no other. Then,
// cheapest and most urgent first:
//
//  1. Repair. A voter on a dead or removed node is replaced: a learner on a
//     live node, its snapshot streamed by the leader, promotion, and only
//     then the removal of the lost voter. A partition whose survivors are
//     not a quorum is Blocked (its configuration cannot change). Excess
//     voters are removed.
//  2. Drain. Leadership moves off draining nodes (cheap), then their
//     replicas, each by the same add-then-remove sequence.
//  3. Zones. A partition with two replicas in one zone while a zone without
//     one has a live node moves one there.
//  4. Leaders. Leadership moves from a node above mean+LeaderBand to a voter
//     at least two below it (or from one at least two above to a node below
//     mean−LeaderBand). When no single transfer can (zones can keep two
//     nodes from sharing any partition), two transfers through a third node.
//  5. Replica counts. The same rule with ReplicaBand, by moving replicas.
//     Among candidate moves, the one that also brings the two nodes' bytes
//     closest wins.
//  6. Bytes, then 7. request units (each replica charged its partition's
//     RU/s divided by its voters): only while a node is outside the
//     tolerance around the mean (and farther than the floor), only moves
//     that keep replica counts inside their band, and only a replica
//     smaller than the two nodes' difference that closes at least a tenth of
//     it; when no single move keeps counts in band, a swap of a heavier
//     replica for a lighter one. Moves for request units must not spread the
//     bytes (the sum of squares of node bytes does not grow) nor take a node
//     out of the bytes band.
//
// Only a healthy partition (every voter alive, as many as the replication
// factor) is moved by rules 2 to 7: one below its replication factor is
// repaired first. A suspect node (live or draining, but not heard from
// lately) keeps its replicas, receives nothing and streams nothing until
// it is heard from again or declared dead.
//
// Every replica move respects zones (a move may not reduce a partition's
// distinct zones below what it had or could have), capacity hints, and the
// snapshot limits: at most MaxSnapshotsIn incoming and MaxSnapshotsOut
// outgoing snapshots per node (1 and 1), in-flight ones included, and no
// more snapshot bytes per node than one Interval at RebalanceRate lets
// through (the executor enforces the rate; a larger single snapshot may
// still start alone).
//
// # Why it converges and then stays still
//
// Each rule has a dead-band and each move strictly lowers a measure that
// cannot fall for ever: counts act only outside their band and never push
// a node out of it, and the later rules never push counts out; a leader or
// replica move between nodes two apart lowers the sum of squares of the
// counts; a bytes move or swap closes a gap by a least share, lowering the
// sum of squares of the bytes; a request-unit move lowers the sum of
// squares of the request units without raising that of the bytes. With no
// outside change the sequence of plans ends with an empty one, and an
// empty plan stays empty for the same state. The simulation test checks
// exactly that after random joins, deaths, drains and load changes.
//
// # Anchors
//
// CockroachDB's allocator and replicate queue (repairs before rebalancing;
// a range count must be both 5% and 2 replicas from the mean to move, the
// floor that avoids a condition that always fires; leases before
// replicas; 32 MiB/s snapshot rate; decommission), TiKV PD's
// balance-leader, balance-region and hot-region schedulers (pending
// operators' influence counted first; tolerance so that a move does not
// invert the two stores), YugabyteDB's load balancer (blacklisted nodes
// drained first; per-node remote-bootstrap limits) and MongoDB's balancer
// (a shard takes part in one migration at a time; a size threshold so that
// steady state does not move data). Parsec goes further by balancing on
// the per-partition request units it already measures and by splitting a
// partition at the median of its observed load.
//
// # Split for heat
//
// A partition is hot when every sample since the window began shows it
// consuming at least HeatShare (0.8) of its budget for HeatWindow (60 s).
// It is split at the inner boundary of its load histogram that divides
// the load most evenly, not at the median of its bytes. If one logical
// key (from the hot-key sketch) alone consumes HeatShare of the budget,
// no split can help: the decision says so, and the server puts that reason
// in the 429 and in `parsec partitions`, pointing to synthetic keys.
package placement
