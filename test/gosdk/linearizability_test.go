package gosdk

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/anishathalye/porcupine"

	"github.com/parsecdb/parsec/internal/auth"
	"github.com/parsecdb/parsec/internal/lincheck"
	"github.com/parsecdb/parsec/internal/server"
)

// TestLinearizableUnderSplits records concurrent reads, upserts and
// If-Match replaces of a few items through the Go SDK while the
// container's throughput is raised twice, which splits its partitions
// online, and checks the history for linearizability (package lincheck).
// The server is one node at Strong consistency, so every history must be
// linearizable.
func TestLinearizableUnderSplits(t *testing.T) {
	for seed := range uint64(2) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			s := startServer(t, server.Options{Consistency: "strong", NoThrottle: true})
			c := newClient(t, s, auth.EmulatorKey, nil)
			cc := setup(t, c, "lin", "c", hashPK("/pk"), 400)
			keys := []string{"k0", "k1", "k2", "k3"}
			rec := lincheck.NewRecorder()
			const clients, opsEach = 6, 70
			var wg sync.WaitGroup
			for cl := range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					runLinClient(t, cc, rec, cl, keys, opsEach, rand.New(rand.NewPCG(seed, uint64(cl))))
				}()
			}
			// Splits while the clients run: 400 → 25,000 → 45,000 RU/s.
			for _, rus := range []int32{25000, 45000} {
				for rec.Len() < clients*opsEach/3*(1+int(rus/40000)) {
					time.Sleep(time.Millisecond)
				}
				if _, err := cc.ReplaceThroughput(ctx(), azcosmos.NewManualThroughputProperties(rus), nil); err != nil {
					t.Errorf("raise the throughput to %d: %v", rus, err)
				}
			}
			wg.Wait()
			h := rec.History()
			if res := lincheck.Check(h, 30*time.Second); res != porcupine.Ok {
				t.Fatalf("the history of %d operations is %s", len(h), res)
			}
			ranges, err := cc.NewQueryItemsPager("SELECT * FROM c", azcosmos.NewPartitionKey(), nil).NextPage(ctx())
			if err != nil {
				t.Fatal(err)
			}
			if len(ranges.Items) != len(keys) {
				t.Fatalf("%d items at the end, want %d", len(ranges.Items), len(keys))
			}
		})
	}
}

// runLinClient runs one client's random operations, recording each: a
// read; an upsert of a value no one else writes; or a read followed by a
// replace If-Match the etag read (a compare-and-set of the value read).
func runLinClient(t *testing.T, cc *azcosmos.ContainerClient, rec *lincheck.Recorder, cl int, keys []string, n int, rng *rand.Rand) {
	read := func(key string) (string, azcore.ETag, bool) {
		call := rec.Now()
		r, err := cc.ReadItem(ctx(), azcosmos.NewPartitionKeyString(key), key, nil)
		out := lincheck.Output{}
		switch {
		case statusOf(err) == 404:
		case err != nil:
			t.Errorf("read %s: %v", key, err)
			return "", "", false
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
	for i := range n {
		key := keys[rng.IntN(len(keys))]
		v := fmt.Sprintf("c%d-%d", cl, i)
		body := []byte(fmt.Sprintf(`{"id":%q,"pk":%q,"v":%q}`, key, key, v))
		pk := azcosmos.NewPartitionKeyString(key)
		switch rng.IntN(3) {
		case 0:
			read(key)
		case 1:
			call := rec.Now()
			_, err := cc.UpsertItem(ctx(), pk, body, nil)
			if err != nil {
				t.Errorf("upsert %s: %v", key, err)
				return
			}
			rec.Add(cl, lincheck.Input{Key: key, Kind: lincheck.Write, Value: v}, call, lincheck.Output{OK: true})
		default:
			cur, etag, ok := read(key)
			if !ok || cur == "" {
				continue // nothing to compare with
			}
			call := rec.Now()
			_, err := cc.ReplaceItem(ctx(), pk, key, body, &azcosmos.ItemOptions{IfMatchEtag: &etag})
			out := lincheck.Output{OK: err == nil}
			if err != nil && statusOf(err) != 412 {
				t.Errorf("replace %s: %v", key, err)
				return
			}
			rec.Add(cl, lincheck.Input{Key: key, Kind: lincheck.CAS, Expect: cur, Value: v}, call, out)
		}
	}
}
