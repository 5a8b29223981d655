package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/parsecdb/parsec/internal/api/cosmos"
)

func cluster(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "status" {
		fmt.Fprintln(stderr, "Usage: parsec cluster status [--endpoint URL] [--key KEY] [--json]")
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			return 0
		}
		return 2
	}
	fs := flag.NewFlagSet("parsec cluster status", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cf clientFlags
	cf.register(fs)
	asJSON := fs.Bool("json", false, `print {"nodes":[...], "partitions":[...]} as JSON instead of tables`)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: parsec cluster status [--endpoint URL] [--key KEY] [--json]")
		fmt.Fprintln(stderr, "Prints the cluster's nodes, and every physical partition's replicas, leader and applied LSNs.")
		fs.PrintDefaults()
	}
	pos, err := parseInterleaved(fs, args[1:])
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if len(pos) != 0 {
		fs.Usage()
		return 2
	}
	var st cosmos.ClusterStatus
	if err := cf.get(cosmos.ClusterPath, &st); err != nil {
		fmt.Fprintf(stderr, "parsec cluster status: %v\n", err)
		return 1
	}
	if *asJSON {
		if err := writeJSON(stdout, st); err != nil {
			fmt.Fprintf(stderr, "parsec cluster status: %v\n", err)
			return 1
		}
		return 0
	}
	printCluster(stdout, st)
	return 0
}

func printCluster(w io.Writer, st cosmos.ClusterStatus) {
	fmt.Fprintf(w, "%d nodes, %d physical partitions\n\n", len(st.Nodes), len(st.Partitions))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tADDRESS\tCLUSTER ADDRESS\tLIVE\tPARTITIONS\tLEADS")
	for _, n := range st.Nodes {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%v\t%d\t%d\n", n.ID, n.Address, dash(n.ClusterAddress), n.Live, n.PartitionsHeld, n.PartitionsLed)
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CONTAINER\tRANGE\tEPK RANGE\tREPLICAS\tLEADER\tAPPLIED LSN")
	for _, p := range st.Partitions {
		var reps, lsns []string
		for _, r := range p.Replicas {
			reps = append(reps, strconv.FormatUint(r, 10))
		}
		ids := make([]string, 0, len(p.AppliedLSN))
		for id := range p.AppliedLSN {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			lsns = append(lsns, fmt.Sprintf("%s:%d", id, p.AppliedLSN[id]))
		}
		leader := "none"
		if p.Leader != 0 {
			leader = strconv.FormatUint(p.Leader, 10)
		}
		fmt.Fprintf(tw, "%s\t%s\t[%s, %s)\t%s\t%s\t%s\n", p.Container, p.Range, p.MinInclusive, p.MaxExclusive,
			strings.Join(reps, ","), leader, strings.Join(lsns, " "))
	}
	tw.Flush()
}
