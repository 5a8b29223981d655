package cluster

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/parsecdb/parsec/internal/auth"
	"github.com/parsecdb/parsec/internal/bench"
)

// BenchmarkClusterVsSingle runs the load generator against one node
// without cluster options and against a three-node cluster (replication
// factor 3), through all three nodes at once: durable 1 KB creates, and
// point reads at the strong, session and eventual levels (the account is
// strong, so a request may ask for any). Each sub-benchmark runs once for
// benchDuration whatever b.N is, and reports operations per second and
// latency percentiles.
//
//	go test ./test/cluster -run '^$' -bench ClusterVsSingle -benchtime 1x
func BenchmarkClusterVsSingle(b *testing.B) {
	const benchDuration = 15 * time.Second
	workloads := []struct{ name, workload, consistency string }{
		{"write-1KB", "write", ""},
		{"read-strong", "read", "Strong"},
		{"read-session", "read", "Session"},
		{"read-eventual", "read", "Eventual"},
	}
	for _, setup := range []string{"single", "cluster"} {
		var ns []*node
		if setup == "single" {
			ns = newNodes(b, 1)
			if err := ns[0].run(b, "--consistency", "strong"); err != nil {
				b.Fatal(err)
			}
		} else {
			ns = startCluster(b, "--consistency", "strong")
		}
		for _, w := range workloads {
			b.Run(setup+"/"+w.name, func(b *testing.B) {
				var mu sync.Mutex
				var total float64
				var p50s, p99s []float64
				var wg sync.WaitGroup
				for i, n := range ns {
					wg.Add(1)
					go func() {
						defer wg.Done()
						o := bench.Options{Endpoint: n.url(), Workload: w.workload, Items: 10000, ItemSize: 1024,
							Concurrency: 48 / len(ns), Duration: benchDuration, Consistency: w.consistency, Throughput: 40000,
							Container: "bench", Seed: uint64(i + 1)}
						if i > 0 {
							time.Sleep(2 * time.Second) // the first run creates the container and loads it
						}
						r, err := bench.Run(context.Background(), o, io.Discard)
						if err != nil {
							b.Error(err)
							return
						}
						mu.Lock()
						total += r.Throughput
						p50s = append(p50s, r.Latency.P50)
						p99s = append(p99s, r.Latency.P99)
						mu.Unlock()
					}()
				}
				wg.Wait()
				b.ReportMetric(total, "ops/s")
				b.ReportMetric(slices.Max(p50s), "p50-ms")
				b.ReportMetric(slices.Max(p99s), "p99-ms")
			})
		}
		for _, n := range ns {
			n.stop(b)
		}
	}
}

// BenchmarkFailover kills the leader of a one-partition container with
// SIGKILL twenty times and measures, each time, how long it takes until a
// write through another node succeeds; it reports the p50 and p99.
//
//	go test ./test/cluster -run '^$' -bench Failover -benchtime 1x
func BenchmarkFailover(b *testing.B) {
	const kills = 20
	ns := startCluster(b)
	c := newClient(b, ns[0])
	if _, err := c.CreateDatabase(ctxT(), azcosmos.DatabaseProperties{ID: "db"}, nil); err != nil {
		b.Fatal(err)
	}
	db, _ := c.NewDatabase("db")
	if _, err := db.CreateContainer(ctxT(), azcosmos.ContainerProperties{ID: "c", PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}, nil); err != nil {
		b.Fatal(err)
	}
	var took []time.Duration
	for k := range kills {
		victim := leaderOf(b, ns, "db/c", "0")
		other := ns[victim.id%3]
		// The partition is healthy: a write succeeds before the kill.
		if err := writeOnce(other, fmt.Sprintf("before-%d", k)); err != nil {
			b.Fatalf("write before kill %d: %v", k, err)
		}
		victim.kill()
		start := time.Now()
		for i := 0; ; i++ {
			if writeOnce(other, fmt.Sprintf("after-%d-%d", k, i)) == nil {
				break
			}
			if time.Since(start) > time.Minute {
				b.Fatalf("kill %d: no write succeeded within a minute", k)
			}
			time.Sleep(5 * time.Millisecond)
		}
		took = append(took, time.Since(start))
		if err := victim.start(b, "--join", other.clust); err != nil {
			b.Fatal(err)
		}
	}
	slices.Sort(took)
	p := func(q float64) float64 {
		return float64(took[int(q*float64(len(took)-1)+0.5)]) / float64(time.Millisecond)
	}
	b.Logf("time from SIGKILL of the leader to the first successful write, ms: %v", took)
	b.ReportMetric(p(0.5), "p50-ms")
	b.ReportMetric(p(0.99), "p99-ms")
}

// leaderOf returns the node that leads range rangeID of container (as
// "db/coll"), waiting until all three nodes are live and one leads it.
func leaderOf(t testing.TB, ns []*node, container, rangeID string) *node {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		st, err := clusterStatus(ns[0])
		if err == nil {
			live := 0
			for _, n := range st.Nodes {
				if n.Live {
					live++
				}
			}
			for _, p := range st.Partitions {
				if p.Container == container && p.Range == rangeID && p.Leader != 0 && live == 3 {
					return ns[p.Leader-1]
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no leader of %s range %s", container, rangeID)
	return nil
}

// writeOnce creates one item through n, without retries.
func writeOnce(n *node, id string) error {
	body := fmt.Sprintf(`{"id":%q,"pk":"p"}`, id)
	req, _ := http.NewRequest("POST", n.url()+"/dbs/db/colls/c/docs", strings.NewReader(body))
	auth.SignRequest(req, key, time.Now())
	req.Header.Set("x-ms-documentdb-partitionkey", `["p"]`)
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("status %d: %s", resp.StatusCode, msg)
	}
	return nil
}

// BenchmarkSnapshotCatchUp kills a node, writes 1 KB items through another
// for 15 seconds (every partition's log is truncated past the dead node:
// --raft-log-entries 1000), restarts it and measures how long until its
// replicas have applied what the others have, and how many snapshot bytes
// it received to get there.
//
//	go test ./test/cluster -run '^$' -bench SnapshotCatchUp -benchtime 1x
func BenchmarkSnapshotCatchUp(b *testing.B) {
	ns := startCluster(b, "--raft-log-entries", "1000")
	ns[2].kill()
	o := bench.Options{Endpoint: ns[0].url(), Workload: "write", Items: 1000, ItemSize: 1024, Concurrency: 32,
		Duration: 15 * time.Second, Throughput: 4000, Container: "bench", Seed: 1}
	r, err := bench.Run(context.Background(), o, io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if err := ns[2].start(b, "--join", ns[0].clust, "--raft-log-entries", "1000"); err != nil {
		b.Fatal(err)
	}
	for {
		st, err := clusterStatus(ns[0])
		caught := err == nil && len(st.Partitions) > 0
		for _, p := range st.Partitions {
			var top uint64
			for _, lsn := range p.AppliedLSN {
				top = max(top, lsn)
			}
			caught = caught && p.AppliedLSN["3"] == top
		}
		if caught {
			break
		}
		if time.Since(start) > 5*time.Minute {
			b.Fatal("node 3 did not catch up within 5 minutes")
		}
		time.Sleep(20 * time.Millisecond)
	}
	took := time.Since(start)
	bytes := nodeCounter(b, ns[2], "parsec_raft_snapshot_bytes_received_total")
	installed := nodeCounter(b, ns[2], "parsec_raft_snapshots_installed_total")
	if installed == 0 {
		b.Fatal("node 3 caught up without a snapshot")
	}
	b.Logf("%d writes while node 3 was down; it caught up in %v with %d snapshots of %d bytes in all", r.Operations, took, installed, bytes)
	b.ReportMetric(took.Seconds(), "catch-up-s")
	b.ReportMetric(float64(bytes)/(1<<20), "snapshot-MB")
	b.ReportMetric(float64(bytes)/(1<<20)/took.Seconds(), "MB/s")
}
