package cluster

import (
	"encoding/json"
	"errors"
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
// Go SDK (creates, upserts, replaces and patches with If-Match,
// transactional batches) while the node that leads the most partitions is
// killed with SIGKILL and restarted, again and again. Every write through
// a node that stayed up gets its real answer: no error at all (no 503 of
// unknown outcome, no 409 of a create meeting its own first attempt). At
// the end every acknowledged write is readable through every node with
// its last acknowledged value (or a later one whose outcome the writer
// could not know, its own node having been killed), every acknowledged
// create exists, a count through every node agrees, and every node
// reports the same map.
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
	// values written since whose outcome is unknown (only writes through a
	// gateway that was down). Writers cycle through creates of new items,
	// upserts, replaces with If-Match, patches and transactional batches
	// (an upsert of the key and of its companion "<key>-b").
	const writers, keysPer = 6, 20
	type keyState struct {
		acked   int
		unknown map[int]bool
	}
	state := make([]map[string]*keyState, writers)
	type createdItem struct {
		pk    string
		acked bool // else its outcome is unknown (its gateway was down)
	}
	created := make([]map[string]createdItem, writers)
	batched := make([]map[string]bool, writers) // keys whose companion a batch acknowledged
	var stop atomic.Bool
	var wg sync.WaitGroup
	var acks, downs atomic.Int64
	var errMu sync.Mutex
	otherErrors := map[string]int{} // "op status" -> count: errors through a node that was up
	for w := range writers {
		state[w] = map[string]*keyState{}
		created[w] = map[string]createdItem{}
		batched[w] = map[string]bool{}
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
				pk := azcosmos.NewPartitionKeyString(k)
				doc := fmt.Appendf(nil, `{"id":%q,"pk":%q,"v":%d,"w":%d}`, k, k, v, w)
				var err error
				op := [...]string{"create", "upsert", "replace", "patch", "batch"}[v%5]
				switch op {
				case "create":
					id := fmt.Sprintf("w%d-new%d", w, v)
					_, err = cc.CreateItem(ctxT(), pk, fmt.Appendf(nil, `{"id":%q,"pk":%q,"v":%d}`, id, k, v), nil)
					created[w][id] = createdItem{pk: k, acked: err == nil}
				case "upsert":
					_, err = cc.UpsertItem(ctxT(), pk, doc, nil)
				case "replace", "patch":
					if ks.acked == 0 {
						_, err = cc.UpsertItem(ctxT(), pk, doc, nil)
						break
					}
					var r azcosmos.ItemResponse
					if r, err = cc.ReadItem(ctxT(), pk, k, nil); err != nil {
						break
					}
					if op == "replace" {
						_, err = cc.ReplaceItem(ctxT(), pk, k, doc, &azcosmos.ItemOptions{IfMatchEtag: &r.ETag})
					} else {
						var ops azcosmos.PatchOperations
						ops.AppendSet("/v", v)
						ops.AppendSet("/w", w)
						_, err = cc.PatchItem(ctxT(), pk, k, ops, &azcosmos.ItemOptions{IfMatchEtag: &r.ETag})
					}
				case "batch":
					b := cc.NewTransactionalBatch(pk)
					b.UpsertItem(doc, nil)
					b.UpsertItem(fmt.Appendf(nil, `{"id":%q,"pk":%q,"v":%d}`, k+"-b", k, v), nil)
					var br azcosmos.TransactionalBatchResponse
					if br, err = cc.ExecuteTransactionalBatch(ctxT(), b, nil); err == nil && !br.Success {
						err = fmt.Errorf("%w: %+v", errBatchFailed, br.OperationResults)
					}
				}
				if err == nil {
					if op != "create" {
						ks.acked, ks.unknown = v, map[int]bool{}
					}
					if op == "batch" {
						batched[w][k] = true
					}
					acks.Add(1)
					continue
				}
				if op != "create" {
					ks.unknown[v] = true
				}
				if st := statusOf(err); st != 0 || errors.Is(err, errBatchFailed) {
					errMu.Lock()
					otherErrors[fmt.Sprintf("%s %d", op, st)]++
					if otherErrors[fmt.Sprintf("%s %d", op, st)] == 1 {
						t.Logf("writer %d: %s through node %d: %v", w, op, w%3+1, err)
					}
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
	// Through a node that stayed up, every write gets its real answer:
	// no 503 of unknown outcome, no 409 of a create's own first attempt,
	// no 412 of a replace that applied twice.
	for what, n := range otherErrors {
		t.Errorf("writes through nodes that stayed up failed: %s (%d times)", what, n)
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
		for w := range writers {
			for id, ci := range created[w] {
				_, err := cc.ReadItem(ctxT(), azcosmos.NewPartitionKeyString(ci.pk), id, nil)
				switch {
				case err == nil:
					found++
				case statusOf(err) == http.StatusNotFound && !ci.acked:
				default:
					t.Fatalf("node %d: read created item %s (acknowledged %v): %v", k+1, id, ci.acked, err)
				}
			}
			for key := range state[w] {
				_, err := cc.ReadItem(ctxT(), azcosmos.NewPartitionKeyString(key), key+"-b", nil)
				switch {
				case err == nil:
					found++
				case statusOf(err) == http.StatusNotFound && !batched[w][key]:
				default:
					t.Fatalf("node %d: read %s-b (a batch acknowledged: %v): %v", k+1, key, batched[w][key], err)
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

// errBatchFailed is a transactional batch that the server answered with a
// failure.
var errBatchFailed = errors.New("the batch failed")

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
