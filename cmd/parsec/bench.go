package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/parsecdb/parsec/internal/api/cosmos"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"

	"github.com/parsecdb/parsec/internal/bench"
)

// benchCmd runs `parsec bench`: flags → bench.Options → bench.Run → report.
func benchCmd(args []string, stdout, stderr io.Writer) int {
	var o bench.Options
	var cf clientFlags
	var asJSON, progress, noProgress bool
	var cpuProfile string
	fs := flag.NewFlagSet("parsec bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: parsec bench [flags]\n\nA load generator for Cosmos DB NoSQL endpoints. Workloads:\n")
		for _, n := range bench.WorkloadNames() {
			fmt.Fprintf(stderr, "  %-12s %s\n", n, bench.Workloads[n].Summary)
		}
		fmt.Fprintf(stderr, "\nFlags:\n")
		fs.PrintDefaults()
	}
	cf.register(fs)
	fs.StringVar(&o.Workload, "workload", bench.DefaultWorkload, "workload: "+strings.Join(bench.WorkloadNames(), ", "))
	fs.IntVar(&o.Items, "items", bench.DefaultItems, "items the workloads address (loaded first if missing)")
	fs.IntVar(&o.ItemSize, "item-size", bench.DefaultItemSize, "size of each item body in bytes")
	fs.IntVar(&o.Concurrency, "concurrency", bench.DefaultConcurrency, "workers (one operation in flight each)")
	fs.DurationVar(&o.Duration, "duration", bench.DefaultDuration, "how long to run")
	fs.Int64Var(&o.Operations, "operations", 0, "stop after this many operations (default: no limit; --duration still applies)")
	fs.Float64Var(&o.Rate, "rate", 0, "open loop: target operations per second in total, at fixed intervals; latency counts from each intended start (default: closed loop)")
	fs.StringVar(&o.Distribution, "distribution", "", "key distribution: "+strings.Join(bench.Distributions, ", ")+" (default: uniform; latest for ycsb-d)")
	fs.Float64Var(&o.ZipfTheta, "zipf-theta", bench.DefaultZipfTheta, "Zipfian constant of the zipfian and latest distributions, above 0 and below 1")
	fs.IntVar(&o.PageSize, "page-size", 0, "x-ms-max-item-count of queries: items per page, or -1 for the server's choice (default: no header)")
	fs.StringVar(&o.Database, "database", bench.DefaultDatabase, "database to use (created if missing)")
	fs.StringVar(&o.Container, "container", bench.DefaultContainer, "container to use (created if missing, partition key /pk)")
	fs.IntVar(&o.Throughput, "throughput", bench.DefaultThroughput, "RU/s of the container when it is created")
	fs.Uint64Var(&o.Seed, "seed", 0, "seed of the random item choices (default: from the clock)")
	fs.StringVar(&o.Consistency, "consistency", "", "x-ms-consistency-level of every request: strong, bounded, session, prefix or eventual, no stronger than the account's (default: none, the account's level)")
	fs.StringVar(&o.Client, "client", bench.ClientNetHTTP, "HTTP client: "+bench.ClientNetHTTP+" (net/http Transport) or "+bench.ClientRaw+" (minimal HTTP/1.1, cheaper per request)")
	fs.BoolVar(&asJSON, "json", false, "print the result as one JSON object")
	fs.BoolVar(&progress, "progress", false, "print a progress line every second (default: when stderr is a terminal)")
	fs.BoolVar(&noProgress, "no-progress", false, "print no progress line")
	fs.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the bench process (setup included) to `file`")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "parsec bench: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if o.Consistency != "" {
		l, err := cosmos.ParseConsistency(o.Consistency)
		if err != nil {
			fmt.Fprintf(stderr, "parsec bench: --consistency: %v\n", err)
			return 2
		}
		o.Consistency = l
	}
	o.Endpoint, o.Key = cf.endpoint, cf.key
	if o.Key == "" {
		fmt.Fprintln(stderr, "parsec bench: --key is empty")
		return 2
	}
	if progress && noProgress {
		fmt.Fprintln(stderr, "parsec bench: --progress and --no-progress exclude each other")
		return 2
	}
	// The flag defaults are the options' defaults, except that 0 means
	// "default" (or "none") in Options: reject explicit zeros here so that
	// they are not silently replaced.
	for _, f := range []struct {
		name string
		zero bool
		msg  string
	}{
		{"item-size", o.ItemSize == 0, "must not be 0"},
		{"concurrency", o.Concurrency == 0, "must not be 0"},
		{"duration", o.Duration == 0, "must not be 0"},
		{"throughput", o.Throughput == 0, "must not be 0"},
		{"rate", o.Rate == 0 && isFlagSet(fs, "rate"), "must be a positive number of operations per second, not 0"},
		{"zipf-theta", o.ZipfTheta == 0, "must be above 0 and below 1, not 0"},
		{"operations", o.Operations == 0 && isFlagSet(fs, "operations"), "must be positive, not 0"},
		{"distribution", o.Distribution == "" && isFlagSet(fs, "distribution"), "must not be empty; choose one of " + strings.Join(bench.Distributions, ", ")},
	} {
		if f.zero {
			fmt.Fprintf(stderr, "parsec bench: --%s %s\n", f.name, f.msg)
			return 2
		}
	}
	o.SetDefaults()
	if err := o.Validate(); err != nil {
		fmt.Fprintf(stderr, "parsec bench: %v\n", err)
		return 2
	}
	o.Progress = (isTerminal(stderr) || progress) && !noProgress

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err != nil {
			fmt.Fprintf(stderr, "parsec bench: cannot create the CPU profile: %v\n", err)
			return 1
		}
		defer f.Close()
		// The profile covers setup too; for the default 10,000 items the
		// load is a small share of it.
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "parsec bench: cannot start the CPU profile: %v\n", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	res, err := bench.Run(ctx, o, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "parsec bench: %v\n", err)
		return 1
	}
	if asJSON {
		err = res.WriteJSON(stdout)
	} else {
		err = res.WriteText(stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "parsec bench: %v\n", err)
		return 1
	}
	if res.Interrupted {
		return 130
	}
	return 0
}

func isFlagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
