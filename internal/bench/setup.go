package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// ping checks that the endpoint answers and, for a signed workload, that it
// accepts the key: GET / is the account read, signed, or for the trivial
// workload the unsigned baseline request.
func (c *client) ping(ctx context.Context, endpoint string, signed bool) error {
	r, err := c.call(ctx, http.MethodGet, "/", nil, nil, signed)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("cannot reach %s: %v (is the server running?)", endpoint, err)
	}
	switch {
	case !signed:
		return nil // the trivial baseline: any answer will do
	case r.status == http.StatusUnauthorized || r.status == http.StatusForbidden:
		return fmt.Errorf("%s rejected the key (%d %s): %s; pass the server's master key with --key", endpoint, r.status, http.StatusText(r.status), r.message())
	case r.status != http.StatusOK:
		return unexpected("read the account at "+endpoint, r)
	}
	return nil
}

// ensureContainer creates the database and the container if they are
// missing and checks that an existing container is partitioned on /pk. It
// returns the number of partition key ranges (0 if the server does not say).
func (c *client) ensureContainer(ctx context.Context, o *Options, log io.Writer) (int, error) {
	db, _ := json.Marshal(map[string]string{"id": o.Database})
	r, err := c.call(ctx, http.MethodPost, "/dbs", nil, db, true)
	if err != nil {
		return 0, fmt.Errorf("cannot create database %q: %w", o.Database, err)
	}
	switch r.status {
	case http.StatusCreated:
		fmt.Fprintf(log, "created database %s\n", o.Database)
	case http.StatusConflict:
	default:
		return 0, unexpected(fmt.Sprintf("create database %q", o.Database), r)
	}

	coll, _ := json.Marshal(map[string]any{
		"id":           o.Container,
		"partitionKey": map[string]any{"paths": []string{"/pk"}, "kind": "Hash", "version": 2},
	})
	collsPath := "/dbs/" + o.Database + "/colls"
	r, err = c.call(ctx, http.MethodPost, collsPath, map[string]string{"x-ms-offer-throughput": strconv.Itoa(o.Throughput)}, coll, true)
	if err != nil {
		return 0, fmt.Errorf("cannot create container %q: %w", o.Container, err)
	}
	created := false
	switch r.status {
	case http.StatusCreated:
		created = true
	case http.StatusConflict:
		r, err = c.call(ctx, http.MethodGet, collsPath+"/"+o.Container, nil, nil, true)
		if err != nil {
			return 0, fmt.Errorf("cannot read container %q: %w", o.Container, err)
		}
		if r.status != http.StatusOK {
			return 0, unexpected(fmt.Sprintf("read container %q", o.Container), r)
		}
		var got struct {
			PartitionKey struct {
				Paths []string `json:"paths"`
			} `json:"partitionKey"`
		}
		if err := json.Unmarshal(r.body, &got); err != nil {
			return 0, fmt.Errorf("cannot read container %q: its body is not JSON: %v", o.Container, err)
		}
		if !slices.Equal(got.PartitionKey.Paths, []string{"/pk"}) {
			return 0, fmt.Errorf("container %s/%s already exists with partition key %v; the bench needs /pk: choose another --container", o.Database, o.Container, got.PartitionKey.Paths)
		}
	default:
		return 0, unexpected(fmt.Sprintf("create container %q", o.Container), r)
	}

	ranges := 0
	r, err = c.call(ctx, http.MethodGet, collsPath+"/"+o.Container+"/pkranges", nil, nil, true)
	if err == nil && r.status == http.StatusOK {
		var feed struct {
			Ranges []json.RawMessage `json:"PartitionKeyRanges"`
		}
		if json.Unmarshal(r.body, &feed) == nil {
			ranges = len(feed.Ranges)
		}
	}
	if created {
		fmt.Fprintf(log, "created container %s/%s (partition key /pk, %d RU/s, %d partition key ranges)\n", o.Database, o.Container, o.Throughput, ranges)
	}
	return ranges, nil
}

// loadedMarker is the body of the marker item that records a finished load.
type loadedMarker struct {
	ID       string `json:"id"`
	PK       string `json:"pk"`
	Items    int    `json:"items"`
	ItemSize int    `json:"itemSize"`
	Format   int    `json:"format"`
}

// loadItems makes sure items i0..i<N-1> exist with bodies of ItemSize bytes.
//
// A finished load is recorded in a marker item ({"items":N,"itemSize":S,
// "format":F}, id and partition key "bench-loaded"), written after the last
// item. If the marker says at least N items of the same size and format
// were loaded, nothing is done; if it says M < N, items M..N-1 are loaded;
// otherwise all N are. Items are upserted, so a load interrupted half way is
// simply redone. It reports progress to log once a second when progress is
// set, otherwise once at the start and once at the end.
func (c *client) loadItems(ctx context.Context, o *Options, ks *keyspace, log io.Writer, progress bool) error {
	markerPath := ks.docsPath + "/" + markerID
	pkHdr := map[string]string{"x-ms-documentdb-partitionkey": `["` + markerID + `"]`}
	r, err := c.call(ctx, http.MethodGet, markerPath, pkHdr, nil, true)
	if err != nil {
		return fmt.Errorf("cannot read the load marker: %w", err)
	}
	from := 0
	switch r.status {
	case http.StatusOK:
		var m loadedMarker
		if err := json.Unmarshal(r.body, &m); err == nil && m.ItemSize == o.ItemSize && m.Format == itemFormat {
			if m.Items >= o.Items {
				return nil
			}
			from = m.Items
		}
	case http.StatusNotFound:
	default:
		return unexpected("read the load marker", r)
	}

	n := o.Items - from
	fmt.Fprintf(log, "loading %d items of %d bytes into %s/%s (i%d..i%d)\n", n, o.ItemSize, o.Database, o.Container, from, o.Items-1)
	start := time.Now()
	var next, done atomic.Int64
	next.Store(int64(from))
	var (
		mu       sync.Mutex
		firstErr error
	)
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for w := range o.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lw := newWorker(ctx, w, c, o, ks, 0)
			defer lw.s.close()
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= o.Items {
					return
				}
				if err := lw.loadOne(i); err != nil {
					fail(err)
					cancel()
					return
				}
				done.Add(1)
			}
		}()
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	if progress {
		tick := time.NewTicker(time.Second)
	wait:
		for {
			select {
			case <-finished:
				break wait
			case <-tick.C:
				d := done.Load()
				fmt.Fprintf(log, "loading: %d/%d items (%.0f%%), %.0f items/s\n", d, n, 100*float64(d)/float64(n), float64(d)/time.Since(start).Seconds())
			}
		}
		tick.Stop()
	} else {
		<-finished
	}
	if firstErr != nil {
		return firstErr
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	el := time.Since(start)
	fmt.Fprintf(log, "loaded %d items in %v (%.0f items/s)\n", n, el.Round(time.Millisecond), float64(n)/el.Seconds())

	m, _ := json.Marshal(loadedMarker{ID: markerID, PK: markerID, Items: o.Items, ItemSize: o.ItemSize, Format: itemFormat})
	pkHdr["x-ms-documentdb-is-upsert"] = "True"
	r, err = c.call(ctx, http.MethodPost, ks.docsPath, pkHdr, m, true)
	if err != nil {
		return fmt.Errorf("cannot write the load marker: %w", err)
	}
	if r.status != http.StatusOK && r.status != http.StatusCreated {
		return unexpected("write the load marker", r)
	}
	return nil
}

// loadOne upserts loaded item n, retrying 429s after the delay the server
// asks for.
func (w *worker) loadOne(n int) error {
	for attempt := 0; ; attempt++ {
		st, err := w.do(OpUpsert, n)
		switch {
		case err != nil:
			if errors.Is(err, context.Canceled) {
				return err
			}
			return fmt.Errorf("cannot load item i%d: %v", n, err)
		case st == http.StatusOK || st == http.StatusCreated:
			return nil
		case st == http.StatusTooManyRequests && attempt < 100:
			time.Sleep(min(w.retryAfter, maxThrottleWait))
			continue
		}
		return fmt.Errorf("cannot load item i%d: the server answered %d %s: %s", n, st, http.StatusText(st), w.lastMessage())
	}
}

// BenchProcedure is the id of the stored procedure of the sproc workload.
const BenchProcedure = "parsec-bench-noop"

// ensureProcedure creates the sproc workload's procedure if it is missing:
// it sets its response body and touches no document.
func (c *client) ensureProcedure(ctx context.Context, o *Options) error {
	body, _ := json.Marshal(map[string]string{"id": BenchProcedure, "body": `function () { getContext().getResponse().setBody("ok"); }`})
	r, err := c.call(ctx, http.MethodPost, "/dbs/"+o.Database+"/colls/"+o.Container+"/sprocs", nil, body, true)
	if err != nil {
		return fmt.Errorf("cannot create stored procedure %q: %w", BenchProcedure, err)
	}
	if r.status != http.StatusCreated && r.status != http.StatusConflict {
		return unexpected(fmt.Sprintf("create stored procedure %q", BenchProcedure), r)
	}
	return nil
}
