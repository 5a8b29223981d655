package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/parsecdb/parsec/internal/api/gremlin"
	"github.com/parsecdb/parsec/internal/api/mongo"
	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/explorer"
	"github.com/parsecdb/parsec/internal/server"
)

func serve(args []string, stdout, stderr io.Writer) int {
	var o server.Options
	fs := flag.NewFlagSet("parsec serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.DataDir, "data", server.DefaultDataDir, "data directory (created if missing)")
	fs.BoolVar(&o.InMemory, "in-memory", false, "keep all data in memory; nothing survives a stop")
	fs.StringVar(&o.Listen, "listen", server.DefaultListen, "address to listen on, HOST:PORT")
	fs.BoolVar(&o.TLS, "tls", false, "serve HTTPS with a self-signed certificate kept in the data directory")
	fs.StringVar(&o.CertFile, "cert", "", "TLS certificate file (PEM); implies --tls")
	fs.StringVar(&o.KeyFile, "cert-key", "", "TLS private key file (PEM)")
	fs.StringVar(&o.Key, "key", "", "primary master key, base64 (default: the emulator key, loopback only)")
	fs.StringVar(&o.ReadOnlyKey, "read-only-key", "", "read-only master key, base64")
	fs.BoolVar(&o.MetricsPublic, "metrics-public", false, "serve /metrics without a key, and without hot partition key values")
	fs.StringVar(&o.Advertise, "advertise", "", "endpoint URL advertised to clients (default: from each request)")
	fs.IntVar(&o.PartitionMaxRUs, "partition-max-rus", 10000, "throughput of one physical partition, RU/s")
	fs.Var(byteSize{&o.PartitionMaxBytes}, "partition-max-bytes", "storage at which a physical partition splits: bytes, or with a unit (e.g. 64MB, 50GB) (default 50GiB)")
	fs.Var(byteSize{&o.LogicalPartitionMaxBytes}, "logical-partition-max-bytes", "storage limit of one partition key value (default 20GiB)")
	fs.IntVar(&o.MaxThroughput, "max-throughput", engine.DefaultMaxThroughput, "throughput limit of one container, or of one database with shared throughput, RU/s (Cosmos DB's default quota)")
	fs.IntVar(&o.MaxPartitions, "max-partitions", engine.DefaultMaxPartitions, "physical partitions the whole server may hold; a container create or throughput raise past it is refused (400)")
	fs.IntVar(&o.FixedMaxRUs, "fixed-max-rus", 10000, "throughput limit of a container without a partition key, RU/s")
	fs.Var(byteSize{&o.FixedMaxBytes}, "fixed-max-bytes", "storage limit of a container without a partition key (default 10GiB)")
	fs.Var(byteSize{&o.QueryMemory}, "query-memory", "memory the queries running at once may hold together (groups, sorted and distinct rows; the MongoDB API's sorts and aggregates), estimated; past it a query gets 429 and is retried: bytes, or with a unit (default 512MiB, or a quarter of GOMEMLIMIT when that is lower)")
	fs.BoolVar(&o.NoThrottle, "no-throttle", false, "meter request units but never answer 429 (development)")
	fs.DurationVar(&o.ReadTimeout, "read-timeout", server.DefaultReadTimeout, "time to read one request, headers and body; a slower client is disconnected (negative: no limit)")
	fs.DurationVar(&o.WriteTimeout, "write-timeout", server.DefaultWriteTimeout, "time to write one response from its first byte; a client reading slower is disconnected (negative: no limit)")
	fs.DurationVar(&o.IdleTimeout, "idle-timeout", server.DefaultIdleTimeout, "time a keep-alive connection may wait for its next request (negative: no limit)")
	fs.IntVar(&o.MaxConnections, "max-connections", server.DefaultMaxConnections, "connections served at once; one more waits up to 1s for a slot, then is closed (negative: no limit)")
	fs.DurationVar(&o.FirstRequestTimeout, "first-request-timeout", server.DefaultFirstRequestTimeout, "time a new connection may take to send its first request's headers; and a connection waiting for a slot closes the oldest one that has sent none (negative: no limit)")
	fs.StringVar(&o.MongoListen, "mongo-listen", "", "also serve the MongoDB API on HOST:PORT, e.g. 127.0.0.1:10255 (off by default); with --tls it speaks TLS, and with --key clients authenticate with SCRAM-SHA-256 as user parsec (or parsec-readonly with --read-only-key) and the key as password")
	fs.StringVar(&o.TableListen, "table-listen", "", "also serve the Azure Table API on HOST:PORT, e.g. localhost:8902 (the emulator's Table port; off by default); with --tls it speaks TLS. Clients sign with SharedKey or SharedKeyLite and --key (any account name), or the read-only key for reads; tables live in the database TablesDB")
	fs.IntVar(&o.TableThroughput, "table-throughput", 400, "Table API: RU/s of a table created through it (as on Cosmos DB); change it afterwards through the offers API like any container's")
	fs.IntVar(&o.MongoMaxCursors, "mongo-max-cursors", mongo.DefaultMaxCursors, "MongoDB API: cursors open at once; the read-only user and unauthenticated connections may each hold a quarter, the primary user all")
	fs.Var(byteSize{&o.MongoMaxCursorBytes}, "mongo-max-cursor-bytes", "MongoDB API: results the open cursors keep in memory between getMores, BSON bytes or with a unit (default 1000MiB, or a quarter of GOMEMLIMIT when that is lower); shared as --mongo-max-cursors, and at most 100MiB for one cursor")
	fs.IntVar(&o.MongoMaxSessions, "mongo-max-sessions", mongo.DefaultMaxSessions, "MongoDB API: sessions with a transaction kept at once; shared as --mongo-max-cursors")
	fs.DurationVar(&o.MongoAuthIdleTimeout, "mongo-auth-idle-timeout", mongo.DefaultAuthIdleTimeout, "with --mongo-listen and --key: time a MongoDB connection that has not authenticated may wait for its next message before it is closed")
	fs.StringVar(&o.GremlinListen, "gremlin-listen", "", "also serve the Gremlin API (Gremlin Server's WebSocket protocol, as Cosmos DB's Gremlin endpoint; the emulator uses port 8901) on HOST:PORT, e.g. 127.0.0.1:8901 (off by default), on any path; with --tls it speaks TLS (wss). Clients authenticate with SASL PLAIN: user /dbs/<database>/colls/<graph>, password the key (--key, default the emulator key) or the read-only key, which cannot write")
	fs.DurationVar(&o.GremlinIdleTimeout, "gremlin-idle-timeout", gremlin.DefaultIdleTimeout, "Gremlin API: time a connection may send nothing before it is closed")
	fs.IntVar(&o.GremlinMaxConnections, "gremlin-max-connections", gremlin.DefaultMaxConnections, "Gremlin API: connections served at once; one more is refused with HTTP 503")
	fs.StringVar(&o.Consistency, "consistency", "session", "the account's default consistency level: strong, bounded, session, prefix or eventual; a request may ask for a weaker level (x-ms-consistency-level), never a stronger one")
	fs.Int64Var(&o.MaxStalenessPrefix, "max-staleness-prefix", 0, "with --consistency bounded: how many operations a read may lag (default 100000)")
	fs.DurationVar(&o.MaxStalenessInterval, "max-staleness-interval", 0, "with --consistency bounded: how long a read may lag, whole seconds from 5s to 24h (default 5m)")
	fs.BoolVar(&o.AcceptDataLoss, "accept-data-loss", false, "start even if the write-ahead log or the MANIFEST is damaged, or the log is missing, logging the acknowledged writes that were lost")
	fs.DurationVar(&o.ScriptTimeout, "script-timeout", 5*time.Second, "run time of one stored procedure or trigger; writes stop being accepted at four fifths of it, and the script is stopped at it (408)")
	fs.IntVar(&o.ScriptMaxWrites, "script-max-writes", 5000, "writes one run of a stored procedure or trigger may make; past it writes return accepted = false")
	fs.Uint64Var(&o.NodeID, "node-id", 0, "this node's id in a cluster, a number from 1 unique in the cluster (with --cluster-listen)")
	fs.StringVar(&o.ClusterListen, "cluster-listen", "", "address other cluster nodes reach this one on, HOST:PORT (with --node-id); the first node of a cluster starts without --join and bootstraps it")
	fs.StringVar(&o.ClusterAdvertise, "cluster-advertise", "", "cluster address other nodes reach this one at, HOST:PORT (default: --cluster-listen's; required when it listens on every interface)")
	join := fs.String("join", "", "cluster addresses of members to join through, HOST:PORT[,HOST:PORT...]")
	fs.IntVar(&o.ReplicationFactor, "replication-factor", 0, "replicas of each physical partition (default 3, capped by the nodes in the cluster when a container is created)")
	fs.IntVar(&o.RaftLogEntries, "raft-log-entries", 0, "entries a partition's raft log holds before its leader truncates it (default 10000); a replica that was down past the truncation catches up by a snapshot")
	fs.StringVar(&o.ClusterKey, "cluster-key", "", "secret of at least 32 bytes shared by every node of the cluster, which authenticates and encrypts their traffic (TLS under a certificate authority derived from it; required off loopback)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "parsec serve: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *join != "" {
		for _, j := range strings.Split(*join, ",") {
			if j = strings.TrimSpace(j); j != "" {
				o.Join = append(o.Join, j)
			}
		}
	}
	memoryDefaults(&o)
	if os.Getenv("GOGC") == "" {
		// The block cache lives outside the Go heap, which holds little but
		// per-request garbage: collect less often (GOGC overrides this).
		debug.SetGCPercent(400)
	}
	start := time.Now()
	s, err := server.Start(o)
	if err != nil {
		fmt.Fprintf(stderr, "parsec serve: %v\n", err)
		return 1
	}
	where := "data in " + o.DataDir
	if o.InMemory {
		where = "data in memory"
	}
	// Catch signals before saying we are serving: a SIGINT sent right after
	// that line must stop the server cleanly.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	fmt.Fprintf(stdout, "parsec %s: serving the Cosmos DB NoSQL API on %s (%s), ready in %v\n", version, s.URL(), where, time.Since(start).Round(time.Millisecond))
	if a := s.TableAddr(); a != "" {
		fmt.Fprintf(stdout, "parsec: serving the Table API on %s://%s/\n", strings.SplitN(s.URL(), ":", 2)[0], a)
	}
	if a := s.MongoAddr(); a != "" {
		fmt.Fprintf(stdout, "parsec: serving the MongoDB API on mongodb://%s/\n", a)
	}
	if u := s.GremlinURL(); u != "" {
		fmt.Fprintf(stdout, "parsec: serving the Gremlin API on %s\n", u)
	}
	if n := s.Node(); n != nil {
		fmt.Fprintf(stdout, "parsec: node %d of a cluster of %d, cluster traffic on %s\n", n.ID(), len(n.Members()), n.Addr())
	}
	fmt.Fprintf(stdout, "parsec: Parsec Explorer at %s%s\n", strings.TrimSuffix(s.URL(), "/"), explorer.Path)
	<-ctx.Done()
	stop()
	fmt.Fprintln(stdout, "parsec: shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Shutdown(sctx); err != nil {
		fmt.Fprintf(stderr, "parsec: shutdown: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, "parsec: stopped")
	return 0
}

// memoryDefaults sets the flags that bound what the server holds in
// memory and were not given: --query-memory and --mongo-max-cursor-bytes.
func memoryDefaults(o *server.Options) {
	if o.QueryMemory == 0 {
		o.QueryMemory = memoryBound(engine.DefaultQueryServerHeld)
	}
	if o.MongoMaxCursorBytes == 0 {
		o.MongoMaxCursorBytes = memoryBound(mongo.DefaultMaxCursorBytes)
	}
}

// memoryBound is the default of a bound on memory the server holds for
// one purpose: def, or a quarter of the Go memory limit (GOMEMLIMIT) when
// one is set and that is lower, which leaves the rest of the heap to the
// other requests.
func memoryBound(def int64) int64 {
	if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
		return min(l/4, def)
	}
	return def
}
