package bench

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/auth"
)

// simClock is a simulated clock: sleeping and sending advance it, nothing
// else does, so a run on it is exactly reproducible.
type simClock struct{ t time.Time }

func (c *simClock) now() time.Time                           { return c.t }
func (c *simClock) sleep(_ context.Context, d time.Duration) { c.t = c.t.Add(max(d, 0)) }

// simSender answers every request with 200 after cost(i) of simulated time,
// i counting the requests from 0.
type simSender struct {
	clk  *simClock
	cost func(i int) time.Duration
	n    int
	buf  []byte
}

func (s *simSender) buffer() []byte { return s.buf[:0] }
func (s *simSender) close()         {}
func (s *simSender) send(c *call, r *reply) error {
	s.clk.t = s.clk.t.Add(s.cost(s.n))
	s.n++
	*r = reply{status: http.StatusOK, retryAfter: -1}
	return nil
}

// simWorker returns a read worker on a simulated clock and sender.
func simWorker(t *testing.T, interval time.Duration, cost func(int) time.Duration) (*worker, *simClock) {
	t.Helper()
	o := Options{Endpoint: "http://127.0.0.1:1", Items: 100, Concurrency: 1}
	o.SetDefaults()
	key, _ := auth.DecodeKey(o.Key)
	c, err := newClient(&o, key)
	if err != nil {
		t.Fatal(err)
	}
	ks := newKeyspace(&o, 1)
	w := newWorker(context.Background(), 0, c, &o, ks, 1)
	clk := &simClock{t: time.Now()}
	w.clk = clk
	w.s = &simSender{clk: clk, cost: cost, buf: make([]byte, 0, o.ItemSize)}
	w.setMix([]Weighted{{OpRead, 1}})
	w.keys = newKeyDist(DistUniform, 0, o.Items, 1, ks.ins).chooser()
	w.period = float64(interval)
	return w, clk
}

// countAtLeast counts the recorded values of h in buckets that lie wholly
// at or above d.
func countAtLeast(h *Histogram, d time.Duration) uint64 {
	var n uint64
	for i := range h.counts {
		if lo, _ := bucketRange(i); lo >= uint64(d) {
			n += h.counts[i].Load()
		}
	}
	return n
}

// TestOpenLoopCountsQueueing checks the coordinated-omission correction on a
// simulated clock: requests take 1 ms, but request 10 stalls for a second.
// A closed loop records one slow request; an open loop that schedules a
// request every 10 ms records the stall in every request that was due while
// it lasted, each with the time it waited, exactly as a model of the
// schedule says.
func TestOpenLoopCountsQueueing(t *testing.T) {
	const (
		interval = 10 * time.Millisecond
		cost     = time.Millisecond
		stall    = time.Second
		duration = 3 * time.Second
	)
	costOf := func(i int) time.Duration {
		if i == 10 {
			return stall
		}
		return cost
	}

	// The model: request k is due at k*interval, starts when due or when
	// the one before it ends, and its latency runs from when it was due.
	var wantSum time.Duration
	var wantSlow, wantBehind, wantCount uint64
	var wantLag time.Duration
	var end time.Duration
	for k := 0; time.Duration(k)*interval < duration; k++ {
		due := time.Duration(k) * interval
		start := max(due, end)
		end = start + costOf(k)
		lat := end - due
		wantSum += lat
		wantCount++
		if lat >= stall/2 {
			wantSlow++
		}
		if lag := start - due; lag > scheduleSlack {
			wantBehind++
			wantLag = max(wantLag, lag)
		}
	}

	open, clk := simWorker(t, interval, costOf)
	start := clk.t
	open.loop(context.Background(), start, start.Add(duration))
	h := open.perOp[0].hist
	if h.Count() != wantCount || time.Duration(h.sum.Load()) != wantSum {
		t.Fatalf("open loop: %d requests with latencies summing to %v, the model has %d summing to %v", h.Count(), time.Duration(h.sum.Load()), wantCount, wantSum)
	}
	if open.stats.behind.Load() != wantBehind || open.stats.maxLag != wantLag {
		t.Fatalf("open loop: %d behind schedule (max %v), the model has %d (max %v)", open.stats.behind.Load(), open.stats.maxLag, wantBehind, wantLag)
	}
	// About a second's worth of due requests (100) waited; the first 50 or
	// so of them for more than half a second.
	slowOpen := countAtLeast(h, stall/2)
	if slowOpen != wantSlow || slowOpen < 50 {
		t.Fatalf("open loop: %d requests took at least %v, the model has %d", slowOpen, stall/2, wantSlow)
	}

	closed, clk := simWorker(t, 0, costOf)
	start = clk.t
	closed.loop(context.Background(), start, start.Add(duration))
	hc := closed.perOp[0].hist
	if slow := countAtLeast(hc, stall/2); slow != 1 || hc.Max() != stall {
		t.Fatalf("closed loop: %d requests took at least %v (max %v), want just the stalled one", slow, stall/2, hc.Max())
	}
	// The closed loop sent back to back: 2 s of 1 ms requests and the stall.
	if hc.Count() != 2001 || closed.stats.behind.Load() != 0 {
		t.Fatalf("closed loop: %d requests, %d behind schedule", hc.Count(), closed.stats.behind.Load())
	}
	if p := h.Quantile(0.75); p < 10*hc.Quantile(0.75) {
		t.Fatalf("open loop p75 %v is not far above the closed loop's %v", p, hc.Quantile(0.75))
	}
}

// TestOpenLoopAgainstStallingServer runs both loops against a real server
// whose fifth answer stalls, and checks the structure of what they record:
// the open loop sends every scheduled request and records the stall in many
// of them, the closed loop in about one. The bounds hold however slowly the
// machine runs (a slower machine only makes more requests late).
func TestOpenLoopAgainstStallingServer(t *testing.T) {
	const stall = 400 * time.Millisecond
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 5 {
			time.Sleep(stall)
		}
		w.Write([]byte(`{"ok":true}`))
	}))
	defer srv.Close()
	run := func(rate float64) *Result {
		n.Store(0)
		res, err := Run(context.Background(), Options{Endpoint: srv.URL, Workload: "trivial", Concurrency: 1, Duration: 1500 * time.Millisecond, Rate: rate, Seed: 1}, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	open := run(200) // one request due every 5 ms: 300 in the run
	if open.Loop != "open" || open.OpenLoop == nil || open.OpenLoop.TargetRate != 200 {
		t.Fatalf("open loop result %+v", open)
	}
	if got := open.Operations + open.Errors + open.Throttled; got != 300 || open.Errors != 0 {
		t.Fatalf("open loop started %d operations (%d errors), want all 300 scheduled", got, open.Errors)
	}
	// The ~80 requests due during the stall were sent late, and those due
	// in its first half waited at least half of it.
	if open.OpenLoop.BehindSchedule < 40 || open.OpenLoop.MaxLagMs < ms(stall/2) {
		t.Fatalf("open loop: %d behind schedule, max lag %v ms", open.OpenLoop.BehindSchedule, open.OpenLoop.MaxLagMs)
	}
	slowOpen := countAtLeast(open.Histogram(), stall/4)
	closed := run(0)
	if closed.Loop != "closed" || closed.OpenLoop != nil {
		t.Fatalf("closed loop result %+v", closed)
	}
	slowClosed := countAtLeast(closed.Histogram(), stall/4)
	if slowClosed < 1 || slowClosed > 3 || slowOpen < 30 || slowOpen < 10*slowClosed {
		t.Fatalf("requests of at least %v: %d in the open loop, %d in the closed loop", stall/4, slowOpen, slowClosed)
	}
	t.Logf("at least %v: open loop %d of %d (p99 %.1f ms), closed loop %d of %d (p99 %.1f ms)",
		stall/4, slowOpen, open.Operations, open.Latency.P99, slowClosed, closed.Operations, closed.Latency.P99)
}
