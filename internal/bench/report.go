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

// Result is what a run measured. Operations are the successful (2xx)
// requests; Throughput and Latency cover only them. 429s are counted in
// Throttled, every other failure (a non-2xx status or a transport error) in
// Errors. RequestCharge sums x-ms-request-charge over every response.
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
	// Interrupted is set when the run was cancelled before its duration.
	Interrupted bool `json:"interrupted,omitempty"`

	hist *Histogram
}

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

func (r *Result) fill(workers []*worker, elapsed, cpu time.Duration) {
	h := NewHistogram()
	r.ErrorsByStatus = map[string]uint64{}
	var charge uint64
	for _, w := range workers {
		s := &w.stats
		h.Merge(s.hist)
		r.Operations += s.ok.Load()
		r.Throttled += s.throttled.Load()
		r.Errors += s.failed.Load()
		charge += s.charge.Load()
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
	r.Requests = r.Operations + r.Throttled + r.Errors
	r.Seconds = elapsed.Seconds()
	if r.Seconds > 0 {
		r.Throughput = float64(r.Operations) / r.Seconds
		r.RUPerSecond = float64(charge) / 10000 / r.Seconds
		r.ClientCores = cpu.Seconds() / r.Seconds
	}
	r.RequestCharge = math.Round(float64(charge)/100) / 100
	if r.Requests > 0 {
		r.ClientCPUPerRequest = float64(cpu.Microseconds()) / float64(r.Requests)
	}
	us := func(d time.Duration) float64 { return math.Round(ms(d)*1000) / 1000 } // ms to the µs
	r.Latency = Latency{
		P50: us(h.Quantile(0.50)), P95: us(h.Quantile(0.95)), P99: us(h.Quantile(0.99)),
		P999: us(h.Quantile(0.999)), Max: us(h.Max()), Mean: us(h.Mean()),
	}
	r.Throughput = math.Round(r.Throughput*10) / 10
	r.RUPerSecond = math.Round(r.RUPerSecond*10) / 10
	r.ClientCores = math.Round(r.ClientCores*100) / 100
	r.ClientCPUPerRequest = math.Round(r.ClientCPUPerRequest*10) / 10
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
	fmt.Fprintf(&b, "throughput      %.0f ops/s (%d ok of %d requests)\n", r.Throughput, r.Operations, r.Requests)
	l := r.Latency
	fmt.Fprintf(&b, "latency (ms)    p50 %s  p95 %s  p99 %s  p99.9 %s  max %s  mean %s\n",
		fmtMs(l.P50), fmtMs(l.P95), fmtMs(l.P99), fmtMs(l.P999), fmtMs(l.Max), fmtMs(l.Mean))
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
