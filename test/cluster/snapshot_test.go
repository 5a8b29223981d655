package cluster

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// TestClusterCatchUpBySnapshot kills a node, writes, replaces and deletes
// through another long enough that the partitions' logs are truncated past
// what the dead node holds (--raft-log-entries 32), and restarts it: its
// replicas catch up by snapshots streamed from the leaders, and it then
// serves, from its own replicas (eventual reads), exactly the state the
// others have: new items, new values, and none of the deleted ones. A
// throughput raise, which splits the partitions, is refused while the node
// is behind the truncated logs, and splits them on every node once it has
// caught up.
func TestClusterCatchUpBySnapshot(t *testing.T) {
	flags := []string{"--raft-log-entries", "32"}
	ns := startCluster(t, flags...)
	c1 := newClient(t, ns[0])
	if _, err := c1.CreateDatabase(ctxT(), azcosmos.DatabaseProperties{ID: "db"}, nil); err != nil {
		t.Fatal(err)
	}
	db, _ := c1.NewDatabase("db")
	tp := azcosmos.NewManualThroughputProperties(2000) // two partitions
	if _, err := db.CreateContainer(ctxT(), azcosmos.ContainerProperties{ID: "c", PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}},
		&azcosmos.CreateContainerOptions{ThroughputProperties: &tp}); err != nil {
		t.Fatal(err)
	}
	cc, _ := c1.NewContainer("db", "c")
	pk := func(i int) azcosmos.PartitionKey { return azcosmos.NewPartitionKeyString(fmt.Sprintf("k%d", i%13)) }
	upsert := func(i, n int) {
		t.Helper()
		doc := fmt.Sprintf(`{"id":"i%d","pk":"k%d","n":%d}`, i, i%13, n)
		// Node 1 sends a write on to its partition's leader: one sent to
		// node 3 as it dies has an unknown outcome, answered 503 until the
		// partition elects another leader. An upsert of the same document,
		// with no other writer, may be sent again.
		for attempt := 0; ; attempt++ {
			_, err := cc.UpsertItem(ctxT(), pk(i), []byte(doc), nil)
			if err == nil {
				return
			}
			if statusOf(err) != http.StatusServiceUnavailable || attempt == 50 {
				t.Fatalf("upsert item %d: %v", i, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	for i := range 60 {
		upsert(i, i)
	}
	ns[2].kill()
	for i := 60; i < 360; i++ {
		upsert(i, i)
	}
	for i := range 20 {
		upsert(i, -i)
	}
	for i := 20; i < 40; i++ {
		if _, err := cc.DeleteItem(ctxT(), pk(i), fmt.Sprintf("i%d", i), nil); err != nil {
			t.Fatalf("delete item %d: %v", i, err)
		}
	}
	// A leader truncates past a replica it has not heard from only once it
	// has led for two election timeouts (1 s at the default tick): give
	// the leaders, the ones elected after node 3 died too, that long, while
	// their heartbeats go on (node 3 lacks entries, so they do not quiesce)
	// and each one truncates its log past node 3.
	time.Sleep(2500 * time.Millisecond)
	// A split now would leave node 3 unable to follow its partitions (a
	// split parent has no snapshot): raising the throughput is refused,
	// naming the node, until node 3 has caught up.
	_, err := cc.ReplaceThroughput(ctxT(), azcosmos.NewManualThroughputProperties(4000), nil)
	if statusOf(err) != http.StatusServiceUnavailable || !strings.Contains(err.Error(), "catching up") {
		t.Fatalf("a split with node 3 behind the truncated logs: %v", err)
	}
	if err := ns[2].start(t, append([]string{"--join", ns[0].clust}, flags...)...); err != nil {
		t.Fatalf("restart node 3: %v", err)
	}
	caughtUp := func(st status) error {
		for _, p := range st.Partitions {
			var top uint64
			for _, lsn := range p.AppliedLSN {
				top = max(top, lsn)
			}
			if got := p.AppliedLSN["3"]; got != top {
				return fmt.Errorf("node 3 applied LSN %d of partition %s, the others %v", got, p.Range, p.AppliedLSN)
			}
		}
		return nil
	}
	settledStatus(t, ns[0], caughtUp)
	if n := nodeCounter(t, ns[2], "parsec_raft_snapshots_installed_total"); n < 1 {
		t.Fatalf("node 3 installed %d snapshots: it caught up from logs that were to be truncated", n)
	}
	if n := nodeCounter(t, ns[2], "parsec_raft_snapshot_bytes_received_total"); n < 1000 {
		t.Fatalf("node 3 received %d bytes of snapshots", n)
	}
	// Caught up, the partitions split, node 3's replicas with them.
	if _, err := cc.ReplaceThroughput(ctxT(), azcosmos.NewManualThroughputProperties(4000), nil); err != nil {
		t.Fatalf("raise the throughput once node 3 has caught up: %v", err)
	}
	settledStatus(t, ns[2], func(st status) error {
		if len(st.Partitions) != 4 {
			return fmt.Errorf("%d partitions", len(st.Partitions))
		}
		for _, p := range st.Partitions {
			if len(p.Replicas) != 3 || p.Leader == 0 {
				return fmt.Errorf("partition %s with replicas %v and leader %d", p.Range, p.Replicas, p.Leader)
			}
		}
		return caughtUp(st)
	})
	// Node 3's own replicas, read through it at eventual consistency.
	c3, _ := newClient(t, ns[2]).NewContainer("db", "c")
	eventual := &azcosmos.ItemOptions{ConsistencyLevel: azcosmos.ConsistencyLevelEventual.ToPtr()}
	for i := range 360 {
		r, err := c3.ReadItem(ctxT(), pk(i), fmt.Sprintf("i%d", i), eventual)
		if i >= 20 && i < 40 {
			if statusOf(err) != http.StatusNotFound {
				t.Fatalf("deleted item %d read through node 3: %v", i, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("read item %d through node 3: %v", i, err)
		}
		var doc struct{ N int }
		want := i
		if i < 20 {
			want = -i
		}
		if err := json.Unmarshal(r.Value, &doc); err != nil || doc.N != want {
			t.Fatalf("item %d through node 3: %s, want n %d", i, r.Value, want)
		}
	}
	if n := countItems(t, c3); n != 340 {
		t.Fatalf("node 3 counts %d items, want 340", n)
	}
	// Writes through node 3 go on.
	c3w, _ := newClient(t, ns[2]).NewContainer("db", "c")
	if _, err := c3w.UpsertItem(ctxT(), pk(1000), []byte(`{"id":"i1000","pk":"k12","n":1000}`), nil); err != nil {
		t.Fatalf("write through node 3 after it caught up: %v", err)
	}
}

// nodeCounter reads a node-wide counter from n's /metrics page.
func nodeCounter(t testing.TB, n *node, name string) uint64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + name + ` ([0-9]+)$`).FindSubmatch(metricsPage(t, n))
	if m == nil {
		t.Fatalf("no %s on node %d's /metrics", name, n.id)
	}
	v, _ := strconv.ParseUint(string(m[1]), 10, 64)
	return v
}
