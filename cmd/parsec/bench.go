package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
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
	var asJSON bool
	var cpuProfile string
	fs := flag.NewFlagSet("parsec bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: parsec bench [flags]\n\nA load generator for Cosmos DB NoSQL endpoints. Workloads:\n")
		for _, n := range bench.WorkloadNames() {
			fmt.Fprintf(stderr, "  %-8s %s\n", n, bench.Workloads[n].Summary)
		}
		fmt.Fprintf(stderr, "\nFlags:\n")
		fs.PrintDefaults()
	}
	fs.StringVar(&o.Endpoint, "endpoint", bench.DefaultEndpoint, "base URL of the server")
	fs.StringVar(&o.Key, "key", "", "master key, base64 (default: the emulator key)")
	fs.StringVar(&o.Workload, "workload", bench.DefaultWorkload, "workload: "+strings.Join(bench.WorkloadNames(), ", "))
	fs.IntVar(&o.Items, "items", bench.DefaultItems, "items the read and upsert workloads address (loaded first if missing)")
	fs.IntVar(&o.ItemSize, "item-size", bench.DefaultItemSize, "size of each item body in bytes")
	fs.IntVar(&o.Concurrency, "concurrency", bench.DefaultConcurrency, "closed-loop workers (one request in flight each)")
	fs.DurationVar(&o.Duration, "duration", bench.DefaultDuration, "how long to run")
	fs.StringVar(&o.Database, "database", bench.DefaultDatabase, "database to use (created if missing)")
	fs.StringVar(&o.Container, "container", bench.DefaultContainer, "container to use (created if missing, partition key /pk)")
	fs.IntVar(&o.Throughput, "throughput", bench.DefaultThroughput, "RU/s of the container when it is created")
	fs.Uint64Var(&o.Seed, "seed", 0, "seed of the random item choices (default: from the clock)")
	fs.StringVar(&o.Client, "client", bench.ClientNetHTTP, "HTTP client: "+bench.ClientNetHTTP+" (net/http Transport) or "+bench.ClientRaw+" (minimal HTTP/1.1, cheaper per request)")
	fs.BoolVar(&asJSON, "json", false, "print the result as one JSON object")
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
	if o.Key == "" && isFlagSet(fs, "key") {
		fmt.Fprintln(stderr, "parsec bench: --key is empty")
		return 2
	}
	// The flag defaults are the options' defaults, except that 0 means
	// "default" in Options: reject explicit zeros here so that they are not
	// silently replaced.
	for _, f := range []struct {
		name string
		zero bool
	}{{"item-size", o.ItemSize == 0}, {"concurrency", o.Concurrency == 0}, {"duration", o.Duration == 0}, {"throughput", o.Throughput == 0}} {
		if f.zero {
			fmt.Fprintf(stderr, "parsec bench: --%s must not be 0\n", f.name)
			return 2
		}
	}
	o.SetDefaults()
	if err := o.Validate(); err != nil {
		fmt.Fprintf(stderr, "parsec bench: %v\n", err)
		return 2
	}
	o.Progress = isTerminal(stderr)

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
