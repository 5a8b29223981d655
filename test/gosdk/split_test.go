package gosdk

import (
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/parsecdb/parsec/internal/auth"
	"github.com/parsecdb/parsec/internal/server"
)

// TestStorageSplitsUnderLoad writes and reads through the Go SDK while
// partitions split for storage (a 256 KB limit), and checks that no request
// failed, no acknowledged write was lost, children carry their parents, and
// every item is served by the range that owns its EPK.
func TestStorageSplitsUnderLoad(t *testing.T) {
	s := startServer(t, server.Options{PartitionMaxBytes: 256 << 10, NoThrottle: true})
	c := newClient(t, s, auth.EmulatorKey, nil)
	cc := setup(t, c, "db", "c", hashPK("/pk"), 400)
	raw := newRaw(t, s, auth.EmulatorKey)

	type key struct{ pk, id string }
	var mu sync.Mutex
	var acked []key
	var failures []string
	fail := func(format string, args ...any) {
		mu.Lock()
		failures = append(failures, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	pad := strings.Repeat("z", 1000)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				k := key{pk: fmt.Sprint("p", (w*131+i)%400), id: fmt.Sprintf("w%d-%d", w, i)}
				_, err := cc.CreateItem(ctx(), azcosmos.NewPartitionKeyString(k.pk), []byte(fmt.Sprintf(`{"id":%q,"pk":%q,"pad":%q}`, k.id, k.pk, pad)), nil)
				if err != nil {
					fail("create %v: %v", k, err)
					return
				}
				mu.Lock()
				acked = append(acked, k)
				mu.Unlock()
			}
		}(w)
	}
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(r)))
			for {
				select {
				case <-done:
					return
				default:
				}
				mu.Lock()
				n := len(acked)
				var k key
				if n > 0 {
					k = acked[rng.Intn(n)]
				}
				mu.Unlock()
				if n == 0 {
					time.Sleep(time.Millisecond)
					continue
				}
				if _, err := cc.ReadItem(ctx(), azcosmos.NewPartitionKeyString(k.pk), k.id, nil); err != nil {
					fail("read %v: %v", k, err)
					return
				}
			}
		}(r)
	}
	deadline := time.Now().Add(60 * time.Second)
	var rs []pkRange
	for {
		rs = ranges(t, raw, "db", "c")
		mu.Lock()
		nf := len(failures)
		mu.Unlock()
		if len(rs) >= 8 || nf > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	close(done)
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("%d client-visible errors during splits, first: %s", len(failures), failures[0])
	}
	if len(rs) < 8 {
		t.Fatalf("only %d ranges after 60s of writes with a 256 KB partition limit", len(rs))
	}
	rs = ranges(t, raw, "db", "c")
	t.Logf("%d items written, %d ranges", len(acked), len(rs))
	prev := ""
	for _, r := range rs {
		if r.Min != prev {
			t.Fatalf("ranges are not contiguous at %s: %+v", r.ID, rs)
		}
		prev = r.Max
		if r.ID != "0" && len(r.Parents) == 0 {
			t.Errorf("child range %s has no parents", r.ID)
		}
	}
	if prev != "FF" {
		t.Fatalf("ranges end at %q", prev)
	}
	for _, k := range acked {
		if _, err := cc.ReadItem(ctx(), azcosmos.NewPartitionKeyString(k.pk), k.id, nil); err != nil {
			t.Fatalf("acknowledged item %v is not readable after the splits: %v", k, err)
		}
	}
	total := 0
	for _, r := range rs {
		for _, d := range readAll(t, raw, "/dbs/db/colls/c/docs", map[string]string{"x-ms-documentdb-partitionkeyrangeid": r.ID}, 500) {
			if got := rangeOfKey(t, rs, d["pk"].(string)); got != r.ID {
				t.Fatalf("item %v served by range %s, but its EPK belongs to %s", d["id"], r.ID, got)
			}
			total++
		}
	}
	if total != len(acked) {
		t.Fatalf("the ranges hold %d items, %d were acknowledged", total, len(acked))
	}
}
