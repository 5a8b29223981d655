// Command parsec is the Parsec database: `parsec serve` runs the server; the
// other subcommands are tools that talk to a running server.
package main

import (
	"fmt"
	"io"
	"os"
)

const usage = `Parsec: a partitioned document database that speaks the Azure Cosmos DB NoSQL API.

Usage:
  parsec serve [flags]     run the server (parsec serve --help for its flags)
  parsec partitions DB/C   print a container's partition map, budgets, storage and hot keys
  parsec cluster status    print the cluster's nodes and every partition's replicas, leader and applied LSNs
  parsec bench [flags]     load-test a Cosmos DB endpoint (parsec bench --help for its flags)
  parsec advise [flags]    rank partition-key candidates on sample data or a live container
  parsec version           print the version

`

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "serve":
		return serve(args[1:], stdout, stderr)
	case "partitions":
		return partitions(args[1:], stdout, stderr)
	case "cluster":
		return cluster(args[1:], stdout, stderr)
	case "bench":
		return benchCmd(args[1:], stdout, stderr)
	case "advise":
		return advise(args[1:], stdout, stderr)
	case "version", "--version":
		fmt.Fprintln(stdout, "parsec", version)
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "parsec: unknown command %q\n\n%s", args[0], usage)
	return 2
}
