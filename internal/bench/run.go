package bench

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parsecdb/parsec/internal/auth"
)

// Run runs the benchmark o describes against o.Endpoint: it checks that the
// endpoint answers (and accepts the key), creates the database and
// container and loads the items the workload needs, then runs o.Concurrency
// workers for o.Duration (or o.Operations operations), in a closed loop or,
// with o.Rate, an open one, and returns what they measured. Setup messages
// and, with o.Progress, a line per second go to log. Cancelling ctx ends the
// run early; the result then covers the time run so far. Errors are setup
// failures (bad options, unreachable endpoint, rejected key, a container
// that cannot be created or loaded); failed requests during the run are
// counted in the Result, not returned.
func Run(ctx context.Context, o Options, log io.Writer) (*Result, error) {
	o.SetDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	wl := Workloads[o.Workload]
	if !wl.NeedsItems {
		o.Items = 0 // nothing to address or load
	}
	key, _ := auth.DecodeKey(o.Key)
	c, err := newClient(&o, key)
	if err != nil {
		return nil, err
	}
	defer c.close()

	seed := o.Seed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	signed := wl.Mix[0].Op != OpTrivial
	if err := c.ping(ctx, o.Endpoint, signed); err != nil {
		return nil, err
	}
	ks := newKeyspace(&o, seed)
	ks.run = strconv.FormatInt(time.Now().UnixNano(), 36)
	res := &Result{Workload: o.Workload, Endpoint: o.Endpoint, Client: o.Client, Concurrency: o.Concurrency, ItemSize: o.ItemSize, Items: o.Items}
	if wl.NeedsContainer {
		if res.PartitionKeyRanges, err = c.ensureContainer(ctx, &o, log); err != nil {
			return nil, err
		}
	}
	if wl.Mix[0].Op == OpSproc {
		if err = c.ensureProcedure(ctx, &o); err != nil {
			return nil, err
		}
	}
	if wl.NeedsItems {
		if err := c.loadItems(ctx, &o, ks, log, o.Progress); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	keys := newKeyDist(o.Distribution, o.ZipfTheta, o.Items, seed, ks.ins)
	var budget *atomic.Int64
	if o.Operations > 0 {
		budget = new(atomic.Int64)
		budget.Store(o.Operations)
	}
	workers := make([]*worker, o.Concurrency)
	for i := range workers {
		w := newWorker(ctx, i, c, &o, ks, seed)
		w.setMix(wl.Mix)
		w.keys = keys.chooser()
		w.budget = budget
		if o.Rate > 0 {
			// Worker i sends operations i, i+N, i+2N, ... of the run's
			// schedule, which has one every 1/Rate seconds.
			w.period = float64(o.Concurrency) * float64(time.Second) / o.Rate
			w.phase = float64(i) * float64(time.Second) / o.Rate
		}
		workers[i] = w
	}

	cpu0 := processCPU()
	start := time.Now()
	deadline := start.Add(o.Duration)
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.loop(ctx, start, deadline)
		}()
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	if o.Progress {
		reportProgress(log, workers, start, o.Rate > 0, finished)
	} else {
		<-finished
	}
	elapsed := time.Since(start)
	cpu := processCPU() - cpu0

	res.fill(workers, elapsed, cpu)
	if wl.NeedsItems {
		res.Distribution = o.Distribution
		if o.Distribution != DistUniform {
			res.ZipfTheta = o.ZipfTheta
		}
	}
	res.Loop = "closed"
	if o.Rate > 0 {
		res.Loop = "open"
		res.OpenLoop.TargetRate = o.Rate
	} else {
		res.OpenLoop = nil
	}
	res.Interrupted = ctx.Err() != nil
	return res, nil
}

// reportProgress prints a line per second until finished is closed: the
// last second's successful ops/s, its p99, its 429s and errors, RU/s and,
// in an open loop, the sends that fell behind schedule.
func reportProgress(log io.Writer, workers []*worker, start time.Time, open bool, finished <-chan struct{}) {
	cur, prev, iv := NewHistogram(), NewHistogram(), NewHistogram()
	var prevThrottled, prevFailed, prevCharge, prevBehind uint64
	last := start
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-finished:
			return
		case now := <-tick.C:
			cur.Reset()
			var throttled, failed, charge, behind uint64
			for _, w := range workers {
				for i := range w.perOp {
					cur.Merge(w.perOp[i].hist)
				}
				throttled += w.stats.throttled.Load()
				failed += w.stats.failed.Load()
				charge += w.stats.charge.Load()
				behind += w.stats.behind.Load()
			}
			cur.Snapshot(iv)
			iv.Sub(prev)
			secs := now.Sub(last).Seconds()
			line := fmt.Sprintf("%5.0fs  %9.0f ops/s  p99 %7.2f ms  429s %d  errors %d  %9.0f RU/s",
				now.Sub(start).Seconds(), float64(iv.Count())/secs, ms(iv.Quantile(0.99)),
				throttled-prevThrottled, failed-prevFailed, float64(charge-prevCharge)/10000/secs)
			if open {
				line += fmt.Sprintf("  behind schedule %d", behind-prevBehind)
			}
			fmt.Fprintln(log, line)
			prev, cur = cur, prev
			prevThrottled, prevFailed, prevCharge, prevBehind, last = throttled, failed, charge, behind, now
		}
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
