package cluster

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// TestClusterBoundedStaleness runs three nodes whose account consistency
// is bounded staleness, writes, waits until every replica has applied the
// writes, then reads every item (and counts them) through every node with
// the SDK asking for BoundedStaleness: each read returns the item as
// written, and /metrics shows that every node, the followers of the
// partition included, served reads from its own replica without asking
// the leader, and counted every bounded read one way or the other; then
// the partition's leader is killed and bounded reads through the others
// still find every item.
func TestClusterBoundedStaleness(t *testing.T) {
	ns := startCluster(t, "--consistency", "bounded")
	clients := []*azcosmos.Client{newClient(t, ns[0]), newClient(t, ns[1]), newClient(t, ns[2])}
	if _, err := clients[0].CreateDatabase(ctxT(), azcosmos.DatabaseProperties{ID: "db"}, nil); err != nil {
		t.Fatal(err)
	}
	db, _ := clients[0].NewDatabase("db")
	if _, err := db.CreateContainer(ctxT(), azcosmos.ContainerProperties{ID: "c", PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}, nil); err != nil {
		t.Fatal(err)
	}
	const items = 30
	for i := range items {
		cc, _ := clients[i%3].NewContainer("db", "c")
		doc := fmt.Sprintf(`{"id":"i%d","pk":"k%d","n":%d}`, i, i%7, i)
		if _, err := cc.CreateItem(ctxT(), azcosmos.NewPartitionKeyString(fmt.Sprintf("k%d", i%7)), []byte(doc), nil); err != nil {
			t.Fatalf("create item %d through node %d: %v", i, i%3+1, err)
		}
	}
	// Every replica has applied every write: a bounded read anywhere
	// must then find all of them.
	st := settledStatus(t, ns[0], func(st status) error {
		if len(st.Partitions) != 1 {
			return fmt.Errorf("%d partitions", len(st.Partitions))
		}
		p := st.Partitions[0]
		if p.Leader == 0 || len(p.AppliedLSN) != 3 {
			return fmt.Errorf("partition %+v", p)
		}
		for node, lsn := range p.AppliedLSN {
			if lsn < items {
				return fmt.Errorf("node %s applied LSN %d of %d writes", node, lsn, items)
			}
		}
		return nil
	})
	leader := st.Partitions[0].Leader
	level := azcosmos.ConsistencyLevelBoundedStaleness
	const rounds = 3
	for range rounds {
		for k, c := range clients {
			cc, _ := c.NewContainer("db", "c")
			for i := range items {
				r, err := cc.ReadItem(ctxT(), azcosmos.NewPartitionKeyString(fmt.Sprintf("k%d", i%7)), fmt.Sprintf("i%d", i), &azcosmos.ItemOptions{ConsistencyLevel: &level})
				if err != nil {
					t.Fatalf("bounded read of item %d through node %d: %v", i, k+1, err)
				}
				var doc struct{ N int }
				if err := json.Unmarshal(r.Value, &doc); err != nil || doc.N != i {
					t.Fatalf("bounded read of item %d through node %d: %s", i, k+1, r.Value)
				}
			}
			if n := countItems(t, cc); n != items {
				t.Fatalf("a count through node %d finds %d items, want %d", k+1, n, items)
			}
		}
	}
	// /metrics is rendered at most every few seconds: poll until a page
	// shows the reads.
	for _, n := range ns {
		var local, viaLeader uint64
		deadline := time.Now().Add(30 * time.Second)
		for {
			local = nodeCounter(t, n, "parsec_bounded_reads_local_total")
			viaLeader = nodeCounter(t, n, "parsec_bounded_reads_leader_total")
			if local+viaLeader >= rounds*items || time.Now().After(deadline) {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		t.Logf("node %d (leader %d): %d bounded reads served locally, %d through the leader", n.id, leader, local, viaLeader)
		if local+viaLeader < rounds*items {
			t.Fatalf("node %d counted %d bounded reads, it served at least %d", n.id, local+viaLeader, rounds*items)
		}
		if local == 0 {
			t.Fatalf("node %d served no bounded read from its own replica (%d through the leader)", n.id, viaLeader)
		}
	}
	// The partition's leader dies: the survivors' replicas, quiesced on
	// its word, wake (the liveness check) and elect a new one; bounded
	// reads through them, served locally or through the new leader, find
	// every item all along.
	ns[leader-1].kill()
	survivor := ns[leader%3]
	deadline := time.Now().Add(30 * time.Second)
	for elected := false; ; {
		for k, c := range clients {
			if k == leader-1 {
				continue
			}
			cc, _ := c.NewContainer("db", "c")
			for i := range items {
				r, err := cc.ReadItem(ctxT(), azcosmos.NewPartitionKeyString(fmt.Sprintf("k%d", i%7)), fmt.Sprintf("i%d", i), &azcosmos.ItemOptions{ConsistencyLevel: &level})
				if err != nil {
					t.Fatalf("bounded read of item %d through node %d after node %d died: %v", i, k+1, leader, err)
				}
				var doc struct{ N int }
				if err := json.Unmarshal(r.Value, &doc); err != nil || doc.N != i {
					t.Fatalf("bounded read of item %d through node %d after node %d died: %s", i, k+1, leader, r.Value)
				}
			}
		}
		if elected {
			break // a last round under the new leader
		}
		// Read on, round after round, until the survivors have elected.
		if st, err := clusterStatus(survivor); err == nil && len(st.Partitions) == 1 && st.Partitions[0].Leader != 0 && st.Partitions[0].Leader != leader {
			elected = true
		}
		if time.Now().After(deadline) {
			t.Fatalf("no new leader of the partition after node %d died", leader)
		}
	}
	for _, n := range ns {
		n.stop(t)
	}
}
