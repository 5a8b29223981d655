// Package cluster runs a Parsec node as a member of a cluster: the
// replication host, the cluster transport, membership and the meta group,
// wired to the engine.
//
// A cluster is one raft group for the catalog and membership (the meta
// group, MetaGroup) plus one raft group per physical partition, all
// driven by the node's one replication host (package replication/host)
// over one TLS transport, encrypted and authenticated under the cluster
// key. The engine proposes through the Node: a partition's writes and
// splits (engine.Replicator), the catalog's changes
// (engine.CatalogReplicator); the host hands committed entries back to the
// engine on every member.
//
// Membership. The first node bootstraps the meta group alone and records
// the cluster's identity (a random id and the bootstrap node) in its
// store. A node started with --join calls a member over the cluster
// transport (transport.TCP.Call, authenticated with the cluster key); the
// meta group's leader checks it (its id unused, the same account key),
// records it as a member (an entry every node applies: the transport
// learns its address) and adds it to the meta group by a configuration
// change. The new node creates its replica of the meta group from the
// bootstrap state and receives the whole meta log, so the meta log is
// never truncated (its entries are catalog changes: few and small).
//
// Placement. A container's partitions are created, on every member, with
// the replicas named in the container's record, chosen when it is
// created (Placement: up to the replication factor of the members).
// Splits give the children the parent's voters. Replicas are not yet
// added to the partitions of containers created before a node joined.
//
// Logs and snapshots. A partition's log is truncated past replicas that
// are down (Config.LogEntries), which catch up by a snapshot of the
// partition streamed from its leader's store over the "snapshot" call
// (host.SnapshotStreamer, implemented by partitionSM with the engine's
// range snapshots).
//
// The gateway half (forwarding a request to the leader of its partition)
// is in the API package, through the Node's Leader and Address methods.
package cluster
