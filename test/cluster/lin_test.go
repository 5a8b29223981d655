package cluster

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/anishathalye/porcupine"

	"github.com/parsecdb/parsec/internal/lincheck"
)

// TestClusterLinearizableAcrossKills records strong reads, upserts and
// If-Match replaces (compare-and-set) of a few items by Go SDK clients on
// all three nodes of a Strong cluster while the node leading the most
// partitions is SIGKILLed and restarted, and checks the history for
// linearizability (package lincheck, porcupine). Writes forwarded to a
// leader that dies are in doubt at the gateway, which sends them again
// under their id (the outcome table): they must be answered with their
// real outcome, exactly once. An operation through the killed node has an
// unknown outcome, which the model allows to take effect at any time.
func TestClusterLinearizableAcrossKills(t *testing.T) {
	ns := startCluster(t, "--consistency", "strong")
	c0 := newClient(t, ns[0])
	if _, err := c0.CreateDatabase(ctxT(), azcosmos.DatabaseProperties{ID: "lin"}, nil); err != nil {
		t.Fatal(err)
	}
	db, _ := c0.NewDatabase("lin")
	tp := azcosmos.NewManualThroughputProperties(4000)
	if _, err := db.CreateContainer(ctxT(), azcosmos.ContainerProperties{ID: "c", PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}},
		&azcosmos.CreateContainerOptions{ThroughputProperties: &tp}); err != nil {
		t.Fatal(err)
	}
	keys := []string{"k0", "k1", "k2", "k3", "k4", "k5"}
	rec := lincheck.NewRecorder()
	var stop atomic.Bool
	var wg sync.WaitGroup
	var errMu sync.Mutex
	var errs []string
	const clients = 6
	for cl := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cc, _ := newClient(t, ns[cl%3]).NewContainer("lin", "c")
			rng := rand.New(rand.NewPCG(7, uint64(cl)))
			fail := func(what string, err error) {
				if statusOf(err) != 0 {
					// An answer from a node that was up: it must not fail.
					errMu.Lock()
					errs = append(errs, fmt.Sprintf("client %d (node %d): %s: %v", cl, cl%3+1, what, err))
					errMu.Unlock()
				}
			}
			read := func(key string) (string, azcore.ETag, bool) {
				call := rec.Now()
				r, err := cc.ReadItem(ctxT(), azcosmos.NewPartitionKeyString(key), key, nil)
				out := lincheck.Output{}
				switch {
				case statusOf(err) == 404:
				case err != nil:
					fail("read "+key, err)
					return "", "", false // a read of unknown outcome says nothing
				default:
					var d struct{ V string }
					if err := json.Unmarshal(r.Value, &d); err != nil {
						t.Errorf("read %s: %v", key, err)
						return "", "", false
					}
					out.Value = d.V
				}
				rec.Add(cl, lincheck.Input{Key: key, Kind: lincheck.Read}, call, out)
				return out.Value, r.ETag, true
			}
			for i := 0; !stop.Load(); i++ {
				key := keys[rng.IntN(len(keys))]
				v := fmt.Sprintf("c%d-%d", cl, i)
				body := fmt.Appendf(nil, `{"id":%q,"pk":%q,"v":%q}`, key, key, v)
				pk := azcosmos.NewPartitionKeyString(key)
				switch rng.IntN(3) {
				case 0:
					read(key)
				case 1:
					call := rec.Now()
					_, err := cc.UpsertItem(ctxT(), pk, body, nil)
					if err != nil {
						fail("upsert "+key, err)
					}
					rec.Add(cl, lincheck.Input{Key: key, Kind: lincheck.Write, Value: v}, call, lincheck.Output{OK: err == nil, Unknown: err != nil})
				default:
					cur, etag, ok := read(key)
					if !ok || cur == "" {
						continue
					}
					call := rec.Now()
					_, err := cc.ReplaceItem(ctxT(), pk, key, body, &azcosmos.ItemOptions{IfMatchEtag: &etag})
					out := lincheck.Output{OK: err == nil}
					if err != nil && statusOf(err) != 412 {
						fail("replace "+key, err)
						out.Unknown = true
					}
					rec.Add(cl, lincheck.Input{Key: key, Kind: lincheck.CAS, Expect: cur, Value: v}, call, out)
				}
				time.Sleep(15 * time.Millisecond) // a history porcupine checks in seconds
			}
		}()
	}
	for k := range 2 {
		time.Sleep(3 * time.Second)
		victim := mostLeader(t, ns)
		victim.kill()
		t.Logf("kill %d: node %d, %d operations so far", k+1, victim.id, rec.Len())
		time.Sleep(time.Second)
		if err := victim.start(t, "--consistency", "strong", "--join", ns[victim.id%3].clust); err != nil {
			t.Fatalf("restarting node %d: %v", victim.id, err)
		}
	}
	time.Sleep(2 * time.Second)
	stop.Store(true)
	wg.Wait()
	for _, e := range errs {
		t.Errorf("through a node that was up: %s", e)
	}
	h := rec.History()
	t.Logf("%d operations, %d of known outcome", len(h), rec.Known())
	if res := lincheck.Check(h, 60*time.Second); res != porcupine.Ok {
		t.Fatalf("the history of %d operations is %s", len(h), res)
	}
}
