package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Result is what a run measured. Operations are the successful ones (every
// response 2xx); Throughput and Latency cover only them. An operation
// answered 429 is counted in Throttled, one that failed otherwise (a
// non-2xx status or a transport error) in Errors. Requests counts the HTTP
// requests (an RMW sends two, a query one per page). RequestCharge sums
// x-ms-request-charge over every response.
type Result struct {
	Workload           string  `json:"workload"`
	Endpoint           string  `json:"endpoint"`
	Client             string  `json:"client"`
	Concurrency        int     `json:"concurrency"`
	Items              int     `json:"items,omitempty"`
	ItemSize           int     `json:"itemSize"`
	PartitionKeyRanges int     `json:"partitionKeyRanges,omitempty"`
	Seconds            float64 `json:"durationSec"`
	Operations         uint64  `json:"operations"`
	Requests           uint64  `json:"requests"`
	Throughput         float64 `json:"throughput"`
	Latency            Latency `json:"latencyMs"`
	RequestCharge      float64 `json:"requestCharge"`
	RUPerSecond        float64 `json:"ruPerSecond"`
	Throttled          uint64  `json:"throttled"`
	Errors             uint64  `json:"errors"`
	// ErrorsByStatus counts failures by status code ("404"), or "transport".
	ErrorsByStatus map[string]uint64 `json:"errorsByStatus"`
	// ErrorSamples holds the first error message of each key of ErrorsByStatus.
	ErrorSamples map[string]string `json:"errorSamples,omitempty"`
	// ClientCPUPerRequest is the bench process's own CPU time per request in
	// microseconds; ClientCores the cores it kept busy on average. On a box
	// shared with the server, this is CPU the server did not get.
	ClientCPUPerRequest float64 `json:"clientCpuUsPerRequest"`
	ClientCores         float64 `json:"clientCores"`
	// Loop is "closed" or "open" (--rate); OpenLoop holds the schedule's
	// figures of an open loop.
	Loop     string    `json:"loop"`
	OpenLoop *OpenLoop `json:"openLoop,omitempty"`
	// Distribution and ZipfTheta are the key distribution of a workload
	// that addresses items (ZipfTheta only for zipfian and latest).
	Distribution string  `json:"distribution,omitempty"`
	ZipfTheta    float64 `json:"zipfTheta,omitempty"`
	// ByOperation breaks the figures down by operation kind ("read",
	// "upsert", ...): one entry per kind of the workload's mix.
	ByOperation map[string]*OpResult `json:"byOperation"`
	// Interrupted is set when the run was cancelled before its duration.
	Interrupted bool `json:"interrupted,omitempty"`

	hist *Histogram
}

// OpenLoop are the schedule's figures of an open-loop run. Latencies then
// run from each operation's intended start, so they include the time an
// operation waited for its worker.
type OpenLoop struct {
	// TargetRate is --rate; AchievedRate the operations started per second
	// (whatever their outcome).
	TargetRate   float64 `json:"targetRate"`
	AchievedRate float64 `json:"achievedRate"`
	// BehindSchedule counts the operations that started more than 1 ms
	// after their intended time, MaxLagMs the largest such delay.
	BehindSchedule uint64  `json:"behindSchedule"`
	MaxLagMs       float64 `json:"maxLagMs"`
}

// OpResult are the figures of one operation kind.
type OpResult struct {
	Operations    uint64  `json:"operations"`
	Throughput    float64 `json:"throughput"`
	Latency       Latency `json:"latencyMs"`
	Requests      uint64  `json:"requests"`
	RequestCharge float64 `json:"requestCharge"`
	Throttled     uint64  `json:"throttled"`
	Errors        uint64  `json:"errors"`
	// Rows counts the documents the queries of this kind returned.
	Rows uint64 `json:"rows,omitempty"`

	hist *Histogram
}

// Histogram returns the merged latency histogram of the operation kind.
func (r *OpResult) Histogram() *Histogram { return r.hist }

// Latency holds latency quantiles of successful requests in milliseconds.
type Latency struct {
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

// Histogram returns the merged latency histogram of the successful requests.
func (r *Result) Histogram() *Histogram { return r.hist }

func latencyOf(h *Histogram) Latency {
	us := func(d time.Duration) float64 { return math.Round(ms(d)*1000) / 1000 } // ms to the µs
	return Latency{
		P50: us(h.Quantile(0.50)), P95: us(h.Quantile(0.95)), P99: us(h.Quantile(0.99)),
		P999: us(h.Quantile(0.999)), Max: us(h.Max()), Mean: us(h.Mean()),
	}
}

func round1(v float64) float64 { return math.Round(v*10) / 10 }

// ru converts 1/10000 RU to RU, rounded to 1/100.
func ru(charge uint64) float64 { return math.Round(float64(charge)/100) / 100 }

func (r *Result) fill(workers []*worker, elapsed, cpu time.Duration) {
	h := NewHistogram()
	r.ErrorsByStatus = map[string]uint64{}
	r.ByOperation = map[string]*OpResult{}
	r.OpenLoop = &OpenLoop{}
	var charge uint64
	var maxLag time.Duration
	opCharge := map[string]uint64{}
	for _, w := range workers {
		s := &w.stats
		for i := range w.perOp {
			ps := &w.perOp[i]
			name := ps.op.String()
			or := r.ByOperation[name]
			if or == nil {
				or = &OpResult{hist: NewHistogram()}
				r.ByOperation[name] = or
			}
			or.hist.Merge(ps.hist)
			h.Merge(ps.hist)
			or.Requests += ps.requests
			or.Throttled += ps.throttled
			or.Errors += ps.failed
			or.Rows += ps.rows
			opCharge[name] += ps.charge
			r.Requests += ps.requests
		}
		r.Throttled += s.throttled.Load()
		r.Errors += s.failed.Load()
		charge += s.charge.Load()
		r.OpenLoop.BehindSchedule += s.behind.Load()
		maxLag = max(maxLag, s.maxLag)
		for st, n := range s.byStatus {
			k := strconv.Itoa(st)
			r.ErrorsByStatus[k] += n
			if _, ok := r.ErrorSamples[k]; !ok {
				r.setSample(k, s.samples[st])
			}
		}
		if s.transport > 0 {
			r.ErrorsByStatus["transport"] += s.transport
			if _, ok := r.ErrorSamples["transport"]; !ok {
				r.setSample("transport", s.transErr)
			}
		}
	}
	r.hist = h
	r.Operations = h.Count()
	r.Seconds = elapsed.Seconds()
	started := r.Operations + r.Throttled + r.Errors
	if r.Seconds > 0 {
		r.Throughput = float64(r.Operations) / r.Seconds
		r.RUPerSecond = float64(charge) / 10000 / r.Seconds
		r.ClientCores = cpu.Seconds() / r.Seconds
		r.OpenLoop.AchievedRate = round1(float64(started) / r.Seconds)
	}
	r.OpenLoop.MaxLagMs = math.Round(ms(maxLag)*1000) / 1000
	r.RequestCharge = ru(charge)
	if r.Requests > 0 {
		r.ClientCPUPerRequest = float64(cpu.Microseconds()) / float64(r.Requests)
	}
	r.Latency = latencyOf(h)
	for name, or := range r.ByOperation {
		or.Operations = or.hist.Count()
		or.Latency = latencyOf(or.hist)
		or.RequestCharge = ru(opCharge[name])
		if r.Seconds > 0 {
			or.Throughput = round1(float64(or.Operations) / r.Seconds)
		}
	}
	r.Throughput = round1(r.Throughput)
	r.RUPerSecond = round1(r.RUPerSecond)
	r.ClientCores = math.Round(r.ClientCores*100) / 100
	r.ClientCPUPerRequest = round1(r.ClientCPUPerRequest)
}

func (r *Result) setSample(k, msg string) {
	if r.ErrorSamples == nil {
		r.ErrorSamples = map[string]string{}
	}
	r.ErrorSamples[k] = msg
}

// WriteText writes the human-readable report.
func (r *Result) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "workload %s: %d workers (%s client) for %.2fs against %s", r.Workload, r.Concurrency, r.Client, r.Seconds, r.Endpoint)
	switch {
	case r.Items > 0 && r.PartitionKeyRanges > 0:
		fmt.Fprintf(&b, " (%d items of %d bytes, %d partition key ranges)", r.Items, r.ItemSize, r.PartitionKeyRanges)
	case r.Items > 0:
		fmt.Fprintf(&b, " (%d items of %d bytes)", r.Items, r.ItemSize)
	case r.PartitionKeyRanges > 0:
		fmt.Fprintf(&b, " (items of %d bytes, %d partition key ranges)", r.ItemSize, r.PartitionKeyRanges)
	}
	if r.Interrupted {
		b.WriteString(" [interrupted]")
	}
	b.WriteByte('\n')
	started := r.Operations + r.Throttled + r.Errors
	if started == r.Requests {
		fmt.Fprintf(&b, "throughput      %.0f ops/s (%d ok of %d requests)\n", r.Throughput, r.Operations, r.Requests)
	} else {
		fmt.Fprintf(&b, "throughput      %.0f ops/s (%d ok of %d operations, %d requests)\n", r.Throughput, r.Operations, started, r.Requests)
	}
	if ol := r.OpenLoop; ol != nil {
		fmt.Fprintf(&b, "open loop       target %.0f ops/s, started %.0f ops/s; %d behind schedule (max %s ms late); latency from the intended start\n",
			ol.TargetRate, ol.AchievedRate, ol.BehindSchedule, fmtMs(ol.MaxLagMs))
	}
	switch {
	case r.Distribution == DistUniform:
		fmt.Fprintf(&b, "keys            uniform\n")
	case r.Distribution != "":
		fmt.Fprintf(&b, "keys            %s (theta %g)\n", r.Distribution, r.ZipfTheta)
	}
	l := r.Latency
	fmt.Fprintf(&b, "latency (ms)    p50 %s  p95 %s  p99 %s  p99.9 %s  max %s  mean %s\n",
		fmtMs(l.P50), fmtMs(l.P95), fmtMs(l.P99), fmtMs(l.P999), fmtMs(l.Max), fmtMs(l.Mean))
	rows := false
	for _, o := range r.ByOperation {
		rows = rows || o.Rows > 0
	}
	if len(r.ByOperation) > 1 || started != r.Requests || rows {
		fmt.Fprintf(&b, "by operation    %8s %8s %8s %8s %8s %7s %7s %8s %6s %6s\n", "ops/s", "p50 ms", "p95 ms", "p99 ms", "p99.9 ms", "req/op", "RU/op", "rows/op", "429s", "errors")
		for _, name := range slices.Sorted(maps.Keys(r.ByOperation)) {
			o := r.ByOperation[name]
			n := max(o.Operations+o.Throttled+o.Errors, 1)
			rows := "-"
			if o.Rows > 0 {
				rows = strconv.FormatFloat(float64(o.Rows)/float64(max(o.Operations, 1)), 'f', 1, 64)
			}
			fmt.Fprintf(&b, "  %-13s %8.0f %8s %8s %8s %8s %7.2f %7.2f %8s %6d %6d\n", name, o.Throughput,
				fmtMs(o.Latency.P50), fmtMs(o.Latency.P95), fmtMs(o.Latency.P99), fmtMs(o.Latency.P999),
				float64(o.Requests)/float64(n), o.RequestCharge/float64(n), rows, o.Throttled, o.Errors)
		}
	}
	fmt.Fprintf(&b, "request charge  %.2f RU (%.0f RU/s)\n", r.RequestCharge, r.RUPerSecond)
	fmt.Fprintf(&b, "throttled (429) %d\n", r.Throttled)
	fmt.Fprintf(&b, "errors          %d\n", r.Errors)
	for _, k := range slices.Sorted(maps.Keys(r.ErrorsByStatus)) {
		fmt.Fprintf(&b, "  %-9s     %d", k, r.ErrorsByStatus[k])
		if s := r.ErrorSamples[k]; s != "" {
			if len(s) > 200 {
				s = s[:200] + "..."
			}
			fmt.Fprintf(&b, "  e.g. %s", s)
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "client CPU      %.1f µs/request (%.2f cores)\n", r.ClientCPUPerRequest, r.ClientCores)
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON writes the result as one JSON object and a newline.
func (r *Result) WriteJSON(w io.Writer) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// fmtMs formats milliseconds with three significant digits.
func fmtMs(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case v >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}
