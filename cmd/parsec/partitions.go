package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/parsecdb/parsec/internal/api/cosmos"
)

func partitions(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("parsec partitions", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cf clientFlags
	cf.register(fs)
	asJSON := fs.Bool("json", false, "print the raw JSON instead of a table")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: parsec partitions [--endpoint URL] [--key KEY] [--json] DATABASE/CONTAINER")
		fmt.Fprintln(stderr, "Prints a container's partition map: ranges, budgets, share of request units, storage and hot keys.")
		fs.PrintDefaults()
	}
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if len(pos) != 1 || strings.Count(pos[0], "/") != 1 {
		fs.Usage()
		return 2
	}
	db, coll, _ := strings.Cut(pos[0], "/")
	var t cosmos.ContainerTelemetry
	if err := cf.get("/dbs/"+db+"/colls/"+coll+"/partitions", &t); err != nil {
		fmt.Fprintf(stderr, "parsec partitions: %v\n", err)
		return 1
	}
	if *asJSON {
		if err := writeJSON(stdout, t); err != nil {
			fmt.Fprintf(stderr, "parsec partitions: %v\n", err)
			return 1
		}
		return 0
	}
	printPartitions(stdout, t)
	return 0
}

func printPartitions(w io.Writer, t cosmos.ContainerTelemetry) {
	mode := fmt.Sprintf("%d RU/s", t.Throughput)
	switch {
	case t.AutoscaleMax > 0:
		mode = fmt.Sprintf("autoscale up to %d RU/s", t.AutoscaleMax)
	case t.Shared:
		mode = "shared database throughput"
	}
	var total float64
	for _, p := range t.Partitions {
		total += p.ConsumedRUs
	}
	fmt.Fprintf(w, "%s/%s: %s, %d physical partitions\n", t.Database, t.Container, mode, len(t.Partitions))
	if len(t.Partitions) > 0 && t.Partitions[0].Node != 0 {
		fmt.Fprintf(w, "as node %d of the cluster sees them: writes are metered by each partition's leader, reads by the node serving them\n", t.Partitions[0].Node)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RANGE\tEPK RANGE\tPARENTS\tBUDGET RU/s\tRU USED\tRU SHARE\t429s\tSTORAGE\tITEMS\tHOTTEST KEYS BY RU\tLARGEST KEYS")
	for _, p := range t.Partitions {
		share := 0.0
		if total > 0 {
			share = p.ConsumedRUs / total
		}
		var hot, big []string
		for i, k := range p.HotByRU {
			if i == 3 {
				break
			}
			hot = append(hot, fmt.Sprintf("%s %.0f RU", k.Key, k.Weight))
		}
		for i, k := range p.HotByBytes {
			if i == 3 {
				break
			}
			big = append(big, fmt.Sprintf("%s %s", k.Key, humanBytes(int64(k.Weight))))
		}
		id := p.ID
		if p.Leader != 0 {
			id = fmt.Sprintf("%s (leader %d)", p.ID, p.Leader)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.0f\t%.1f\t%.1f%%\t%d\t%s\t%d\t%s\t%s\n", id, shortRange(p.MinInclusive, p.MaxExclusive),
			dash(strings.Join(p.Parents, ",")), p.BudgetRUs, p.ConsumedRUs, share*100, p.Throttled, humanBytes(p.Bytes), p.Items,
			dash(strings.Join(hot, ", ")), dash(strings.Join(big, ", ")))
	}
	tw.Flush()
}

func shortRange(min, max string) string {
	clip := func(s string) string {
		if s == "" {
			return `""`
		}
		if len(s) > 8 {
			return s[:8] + "…"
		}
		return s
	}
	return "[" + clip(min) + ", " + clip(max) + ")"
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
