package gosdk

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/parsecdb/parsec/internal/auth"
	"github.com/parsecdb/parsec/internal/server"
)

// TestSDKWorkloadUnderConnectionLimits runs an ordinary concurrent workload,
// 1.9 MB items included, through the SDK against a server with a short idle
// timeout, read and write timeouts far below the defaults (yet above what a
// loaded two-core test machine needs to move 1.9 MB), and a connection cap
// above the client's concurrency: none of it may fail.
func TestSDKWorkloadUnderConnectionLimits(t *testing.T) {
	s := startServer(t, server.Options{ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second,
		IdleTimeout: 3 * time.Second, MaxConnections: 32, NoThrottle: true})
	c := newClient(t, s, auth.EmulatorKey, nil)
	cc := setup(t, c, "db", "w", hashPK("/pk"), 12000)

	const workers, items = 16, 25
	pad := strings.Repeat("z", 1900<<10)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fail := func(what string, err error) { errs <- fmt.Errorf("worker %d: %s: %w", w, what, err) }
			pk := azcosmos.NewPartitionKeyString(fmt.Sprintf("p%d", w))
			for i := range items {
				doc := map[string]any{"id": fmt.Sprintf("i%d", i), "pk": fmt.Sprintf("p%d", w), "n": i}
				if i == 0 {
					doc["pad"] = pad
				}
				b, _ := json.Marshal(doc)
				if _, err := cc.CreateItem(ctx(), pk, b, nil); err != nil {
					fail("create", err)
					return
				}
				r, err := cc.ReadItem(ctx(), pk, fmt.Sprintf("i%d", i/2), nil)
				if err != nil {
					fail("read", err)
					return
				}
				if i/2 == 0 && len(r.Value) < 1900<<10 {
					fail("read", fmt.Errorf("the large item came back with %d bytes", len(r.Value)))
					return
				}
				doc["n"] = -i
				b, _ = json.Marshal(doc)
				if _, err := cc.ReplaceItem(ctx(), pk, fmt.Sprintf("i%d", i), b, nil); err != nil {
					fail("replace", err)
					return
				}
			}
			pager := cc.NewQueryItemsPager("SELECT * FROM c WHERE c.n <= 0", pk, &azcosmos.QueryOptions{PageSizeHint: 7})
			n := 0
			for pager.More() {
				r, err := pager.NextPage(ctx())
				if err != nil {
					fail("query", err)
					return
				}
				n += len(r.Items)
			}
			if n != items {
				fail("query", fmt.Errorf("%d items, want %d", n, items))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := len(queryAll(t, cc, "SELECT c.id FROM c", azcosmos.NewPartitionKey(), -1)); got != workers*items {
		t.Fatalf("cross-partition query: %d items, want %d", got, workers*items)
	}
}
