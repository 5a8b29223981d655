package cluster

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// TestClusterSurvivesLeaderKills writes through all three nodes with the
// Go SDK while the node that leads the most partitions is killed with
// SIGKILL and restarted, again and again. At the end every acknowledged
// write is readable through every node with its last acknowledged value
// (or a later one whose outcome the writer could not know), a count
// through every node agrees, and every node reports the same map.
//
// PARSEC_CLUSTER_KILLS sets the number of kills (default 4; the full run
// is 12, one every 10 seconds for two minutes, with
// PARSEC_CLUSTER_KILL_EVERY=10s).
func TestClusterSurvivesLeaderKills(t *testing.T) {
	kills, every := 4, 4*time.Second
	if v, err := strconv.Atoi(os.Getenv("PARSEC_CLUSTER_KILLS")); err == nil && v > 0 {
		kills = v
	}
	if v, err := time.ParseDuration(os.Getenv("PARSEC_CLUSTER_KILL_EVERY")); err == nil && v > 0 {
		every = v
	}
	ns := startCluster(t, "--consistency", "strong")
	c0 := newClient(t, ns[0])
	if _, err := c0.CreateDatabase(ctxT(), azcosmos.DatabaseProperties{ID: "db"}, nil); err != nil {
		t.Fatal(err)
	}
	db, _ := c0.NewDatabase("db")
	tp := azcosmos.NewManualThroughputProperties(4000)
	if _, err := db.CreateContainer(ctxT(), azcosmos.ContainerProperties{ID: "c", PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}},
		&azcosmos.CreateContainerOptions{ThroughputProperties: &tp}); err != nil {
		t.Fatal(err)
	}

	// Each writer owns its keys: key -> last acknowledged value, and the
	// values written since whose outcome is unknown.
	const writers, keysPer = 6, 20
	type keyState struct {
		acked   int
		unknown map[int]bool
	}
	state := make([]map[string]*keyState, writers)
	var stop atomic.Bool
	var wg sync.WaitGroup
	var acks, downs atomic.Int64
	var errMu sync.Mutex
	otherErrors := map[int]int{} // status -> count, errors the SDK gave up on
	for w := range writers {
		state[w] = map[string]*keyState{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := newClient(t, ns[w%3])
			cc, _ := c.NewContainer("db", "c")
			for v := 1; !stop.Load(); v++ {
				k := fmt.Sprintf("w%d-%d", w, v%keysPer)
				ks := state[w][k]
				if ks == nil {
					ks = &keyState{unknown: map[int]bool{}}
					state[w][k] = ks
				}
				doc := fmt.Sprintf(`{"id":%q,"pk":%q,"v":%d,"w":%d}`, k, k, v, w)
				_, err := cc.UpsertItem(ctxT(), azcosmos.NewPartitionKeyString(k), []byte(doc), nil)
				if err == nil {
					ks.acked, ks.unknown = v, map[int]bool{}
					acks.Add(1)
					continue
				}
				ks.unknown[v] = true
				if st := statusOf(err); st != 0 {
					errMu.Lock()
					otherErrors[st]++
					errMu.Unlock()
				} else {
					downs.Add(1) // its gateway node is down
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}

	for k := range kills {
		time.Sleep(every)
		victim := mostLeader(t, ns)
		before := acks.Load()
		victim.kill()
		t.Logf("kill %d: node %d (SIGKILL), %d writes acknowledged so far", k+1, victim.id, before)
		time.Sleep(time.Second)
		if err := victim.start(t, "--consistency", "strong", "--join", ns[(victim.id)%3].clust); err != nil {
			t.Fatalf("restarting node %d: %v", victim.id, err)
		}
	}
	time.Sleep(every)
	stop.Store(true)
	wg.Wait()
	t.Logf("%d writes acknowledged; %d failed on a gateway that was down; errors the SDK returned, by status: %v", acks.Load(), downs.Load(), otherErrors)
	if acks.Load() == 0 {
		t.Fatal("no write was acknowledged")
	}
	for st := range otherErrors {
		if st != http.StatusServiceUnavailable && st != http.StatusRequestTimeout {
			t.Errorf("writes failed with status %d (%d times): only the retryable 503 and 408 may reach a client", st, otherErrors[st])
		}
	}

	// Every acknowledged write, through every node.
	total := 0
	for k, n := range ns {
		c := newClient(t, n)
		cc, _ := c.NewContainer("db", "c")
		found := 0
		for w := range writers {
			for key, ks := range state[w] {
				r, err := cc.ReadItem(ctxT(), azcosmos.NewPartitionKeyString(key), key, nil)
				if statusOf(err) == http.StatusNotFound && ks.acked == 0 {
					continue // never acknowledged, and not written
				}
				if err != nil {
					t.Fatalf("node %d: read %s: %v", k+1, key, err)
				}
				found++
				var doc struct{ V int }
				_ = json.Unmarshal(r.Value, &doc)
				if doc.V != ks.acked && !(doc.V > ks.acked && ks.unknown[doc.V]) {
					t.Fatalf("node %d: %s holds v=%d; acknowledged %d, unknown outcomes %v", k+1, key, doc.V, ks.acked, ks.unknown)
				}
			}
		}
		count := countItems(t, cc)
		if count != found {
			t.Fatalf("node %d counts %d items, and %d were read one by one", k+1, count, found)
		}
		if k == 0 {
			total = found
		} else if found != total {
			t.Fatalf("node %d holds %d items, node 1 %d", k+1, found, total)
		}
	}
	var maps []string
	for _, n := range ns {
		st, err := clusterStatus(n)
		if err != nil {
			t.Fatal(err)
		}
		m := ""
		for _, p := range st.Partitions {
			m += fmt.Sprintf("%s %s %s-%s %v;", p.Container, p.Range, p.Min, p.Max, p.Replicas)
		}
		maps = append(maps, m)
	}
	if maps[0] != maps[1] || maps[0] != maps[2] {
		t.Fatalf("the nodes report different maps:\n%s\n%s\n%s", maps[0], maps[1], maps[2])
	}
	for _, n := range ns {
		n.stop(t)
	}
}

// mostLeader returns the live node that leads the most partitions.
func mostLeader(t *testing.T, ns []*node) *node {
	t.Helper()
	for _, n := range ns {
		st, err := clusterStatus(n)
		if err != nil {
			continue
		}
		best, most := ns[0], -1
		for _, nd := range st.Nodes {
			if nd.Led > most {
				best, most = ns[nd.ID-1], nd.Led
			}
		}
		return best
	}
	t.Fatal("no node answers GET /_cluster")
	return nil
}

func countItems(t *testing.T, cc *azcosmos.ContainerClient) int {
	t.Helper()
	pager := cc.NewQueryItemsPager("SELECT VALUE COUNT(1) FROM c", azcosmos.PartitionKey{}, nil)
	n := 0
	for pager.More() {
		page, err := pager.NextPage(ctxT())
		if err != nil {
			t.Fatalf("count: %v", err)
		}
		for _, v := range page.Items {
			var x int
			if err := json.Unmarshal(v, &x); err != nil {
				t.Fatalf("count: %s: %v", v, err)
			}
			n += x
		}
	}
	return n
}
