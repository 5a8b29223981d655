package bench

import (
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/parsecdb/parsec/internal/auth"
)

// Options configure a benchmark run. The zero value of a field means its
// default (see SetDefaults), except Items, which may be 0 for workloads that
// need no loaded items.
type Options struct {
	// Endpoint is the base URL of the server, e.g. "http://127.0.0.1:8081".
	Endpoint string
	// Key is the base64 master key. Default: auth.EmulatorKey.
	Key string
	// Workload is the name of a workload in Workloads.
	Workload string
	// Items is how many items the workloads that address items (all but
	// write and trivial) load before the run if the container has fewer.
	Items int
	// ItemSize is the size in bytes of every item body sent.
	ItemSize int
	// Concurrency is the number of workers, each with at most one operation
	// in flight.
	Concurrency int
	// Duration is how long the measured run lasts.
	Duration time.Duration
	// Operations, when positive, ends the run once that many operations
	// have started (or at Duration, whichever comes first).
	Operations int64
	// Rate, when positive, makes the run an open loop: Rate operations per
	// second in total, each worker scheduling its share at fixed intervals.
	// 0 is a closed loop (each worker sends as soon as its last operation
	// was answered).
	Rate float64
	// Distribution is the key distribution: DistUniform, DistZipfian or
	// DistLatest. Default: the workload's (uniform but for ycsb-d).
	Distribution string
	// ZipfTheta is the Zipfian constant of the zipfian and latest
	// distributions, in (0, 1). Default DefaultZipfTheta.
	ZipfTheta float64
	// PageSize is the x-ms-max-item-count of queries: a positive number of
	// items per page, -1 for the server's choice, 0 to send none (the
	// server's default, 100 for Cosmos).
	PageSize int
	// Database and Container name where the items live; created if missing.
	Database, Container string
	// Throughput is the RU/s given to the container when it is created.
	Throughput int
	// Seed seeds the workers' random choices; 0 picks one from the clock.
	Seed uint64
	// Consistency, when set, is the x-ms-consistency-level of the workers'
	// requests (Strong, BoundedStaleness, Session, ConsistentPrefix or
	// Eventual): a read at a weaker level than the account's.
	Consistency string
	// Client is the HTTP client of the workers: ClientNetHTTP (default) or
	// ClientRaw.
	Client string

	// Progress makes Run print a progress line to the progress writer once a
	// second during the run (the load phase always reports).
	Progress bool
}

// The HTTP clients a run can use.
const (
	// ClientNetHTTP sends through one shared net/http Transport with an
	// idle keep-alive connection per worker.
	ClientNetHTTP = "nethttp"
	// ClientRaw gives each worker its own keep-alive connection and a
	// minimal HTTP/1.1 client that costs much less CPU per request.
	ClientRaw = "raw"
)

// Defaults of the options.
const (
	DefaultEndpoint    = "http://127.0.0.1:8081"
	DefaultWorkload    = "read"
	DefaultItems       = 10000
	DefaultItemSize    = 1024
	DefaultConcurrency = 32
	DefaultDuration    = 10 * time.Second
	DefaultDatabase    = "bench"
	DefaultContainer   = "items"
	// DefaultThroughput gives a new container 4 partitions (a new
	// container gets one per 6,000 RU/s).
	DefaultThroughput = 24000
)

// Limits of the options.
const (
	// MinItemSize leaves room for {"id":..,"pk":..,"n":..,"v":..,"pad":""}
	// with long ids.
	MinItemSize = 128
	// MaxItemSize is the Cosmos item size limit.
	MaxItemSize = 2 << 20
	// MaxItems bounds the loaded items (the zipfian and latest
	// distributions precompute a sum over them; each item's request state,
	// about 200 bytes, is built when it is first addressed).
	MaxItems = 10_000_000
	// MaxRate bounds --rate (operations per second).
	MaxRate = 100_000_000
)

// SetDefaults fills in the zero fields that have a default.
func (o *Options) SetDefaults() {
	if o.Endpoint == "" {
		o.Endpoint = DefaultEndpoint
	}
	if o.Key == "" {
		o.Key = auth.EmulatorKey
	}
	if o.Workload == "" {
		o.Workload = DefaultWorkload
	}
	if o.ItemSize == 0 {
		o.ItemSize = DefaultItemSize
	}
	if o.Concurrency == 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.Duration == 0 {
		o.Duration = DefaultDuration
	}
	if o.Database == "" {
		o.Database = DefaultDatabase
	}
	if o.Container == "" {
		o.Container = DefaultContainer
	}
	if o.Throughput == 0 {
		o.Throughput = DefaultThroughput
	}
	if o.Client == "" {
		o.Client = ClientNetHTTP
	}
	if o.Distribution == "" {
		o.Distribution = DistUniform
		if w := Workloads[o.Workload]; w != nil && w.Distribution != "" {
			o.Distribution = w.Distribution
		}
	}
	if o.ZipfTheta == 0 {
		o.ZipfTheta = DefaultZipfTheta
	}
}

// Validate checks the options (after SetDefaults) and returns an error a
// user can act on; the messages name the command-line flags.
func (o *Options) Validate() error {
	u, err := url.Parse(o.Endpoint)
	if err != nil {
		return fmt.Errorf("--endpoint %q is not a URL: %v", o.Endpoint, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("--endpoint %q must start with http:// or https://", o.Endpoint)
	}
	if u.Host == "" {
		return fmt.Errorf("--endpoint %q has no host", o.Endpoint)
	}
	if u.Path != "" && u.Path != "/" {
		return fmt.Errorf("--endpoint %q must be the account's base URL, without a path", o.Endpoint)
	}
	if _, err := auth.DecodeKey(o.Key); err != nil {
		return fmt.Errorf("--key: %v", err)
	}
	w, ok := Workloads[o.Workload]
	if !ok {
		return fmt.Errorf("--workload %q is unknown; choose one of %s", o.Workload, strings.Join(WorkloadNames(), ", "))
	}
	if o.Items < 0 || o.Items > MaxItems {
		return fmt.Errorf("--items must be between 0 and %d, not %d", MaxItems, o.Items)
	}
	if w.NeedsItems && o.Items == 0 {
		return fmt.Errorf("--items must be at least 1 for the %s workload", o.Workload)
	}
	if o.ItemSize < MinItemSize || o.ItemSize > MaxItemSize {
		return fmt.Errorf("--item-size must be between %d and %d bytes, not %d", MinItemSize, MaxItemSize, o.ItemSize)
	}
	if o.Concurrency < 1 || o.Concurrency > 100_000 {
		return fmt.Errorf("--concurrency must be between 1 and 100000, not %d", o.Concurrency)
	}
	if o.Duration <= 0 {
		return fmt.Errorf("--duration must be positive, not %v", o.Duration)
	}
	for _, n := range []struct{ flag, v string }{{"--database", o.Database}, {"--container", o.Container}} {
		if strings.ContainsAny(n.v, `/\?#`) || strings.TrimSpace(n.v) != n.v || len(n.v) > 255 {
			return fmt.Errorf("%s %q is not a valid Cosmos id (at most 255 characters, none of / \\ ? #, no surrounding spaces)", n.flag, n.v)
		}
	}
	if o.Client != ClientNetHTTP && o.Client != ClientRaw {
		return fmt.Errorf("--client %q is unknown; choose %s or %s", o.Client, ClientNetHTTP, ClientRaw)
	}
	if o.Throughput < 400 {
		return fmt.Errorf("--throughput must be at least 400 RU/s, not %d", o.Throughput)
	}
	if !slices.Contains(Distributions, o.Distribution) {
		return fmt.Errorf("--distribution %q is unknown; choose one of %s", o.Distribution, strings.Join(Distributions, ", "))
	}
	if !(o.ZipfTheta > 0 && o.ZipfTheta < 1) {
		return fmt.Errorf("--zipf-theta must be above 0 and below 1 (the Zipfian generator needs theta < 1), not %v", o.ZipfTheta)
	}
	if o.Rate < 0 || math.IsNaN(o.Rate) || math.IsInf(o.Rate, 0) || o.Rate > MaxRate {
		return fmt.Errorf("--rate must be a positive number of operations per second (at most %d), not %v", MaxRate, o.Rate)
	}
	if o.Operations < 0 {
		return fmt.Errorf("--operations must not be negative, not %d", o.Operations)
	}
	if o.PageSize < -1 {
		return fmt.Errorf("--page-size must be a positive number of items, -1 (the server's choice) or 0 (no header), not %d", o.PageSize)
	}
	return nil
}
