package server

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/parsecdb/parsec/internal/api/cosmos"
	"github.com/parsecdb/parsec/internal/api/gremlin"
	"github.com/parsecdb/parsec/internal/api/mongo"
	"github.com/parsecdb/parsec/internal/api/table"
	"github.com/parsecdb/parsec/internal/auth"
	"github.com/parsecdb/parsec/internal/cluster"
	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/explorer"
	"github.com/parsecdb/parsec/internal/gateway"
	"github.com/parsecdb/parsec/internal/storage"
)

// Options configure a server. The zero value of each field is its default.
type Options struct {
	// DataDir is where data lives. Default "./parsec-data".
	DataDir string
	// InMemory keeps all data in memory; nothing survives a stop.
	InMemory bool
	// Listen is the address to listen on. Default "127.0.0.1:8081".
	Listen string
	// TLS serves HTTPS. Without CertFile/KeyFile a self-signed certificate is
	// generated once and kept in DataDir.
	TLS      bool
	CertFile string
	KeyFile  string
	// Key is the primary master key (base64). Default: the emulator key, which
	// is only allowed on a loopback address, and with which only requests
	// addressed (Host) to a loopback name or Advertise's host are answered.
	Key string
	// ReadOnlyKey is an optional read-only master key (base64).
	ReadOnlyKey string
	// MetricsPublic serves /metrics without a key, and then without the
	// hot-key series (partition key values). By default /metrics needs the
	// primary or read-only key (see cosmos.MetricsPath).
	MetricsPublic bool
	// Advertise is the endpoint URL advertised to clients. Default: derived
	// from each request.
	Advertise string
	// ReadTimeout bounds reading one request, headers and body; WriteTimeout
	// bounds writing one response, from its first byte; IdleTimeout is how
	// long a keep-alive connection may wait for its next request. Defaults
	// DefaultReadTimeout, DefaultWriteTimeout and DefaultIdleTimeout; a
	// negative value means no limit.
	ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// MaxConnections is how many connections are served at once; one beyond
	// waits up to ConnectionWait for a slot, then is closed unanswered.
	// Defaults DefaultMaxConnections and DefaultConnectionWait; a negative
	// MaxConnections means no limit.
	MaxConnections int
	ConnectionWait time.Duration
	// FirstRequestTimeout is how long a new connection may take to send
	// its first request's headers before it is closed; and when a
	// connection must wait for a slot, the oldest connection that has not
	// sent a request yet is closed to make room. Default
	// DefaultFirstRequestTimeout; negative means no limit (the eviction
	// still applies). Only with MaxConnections.
	FirstRequestTimeout time.Duration
	// PartitionMaxRUs is the throughput of one physical partition. Default 10,000.
	PartitionMaxRUs int
	// PartitionMaxBytes is the storage at which a physical partition splits.
	// Default 50 GB.
	PartitionMaxBytes int64
	// LogicalPartitionMaxBytes caps one partition key value. Default 20 GB.
	LogicalPartitionMaxBytes int64
	// MaxThroughput caps the throughput of one container or one database
	// with shared throughput, RU/s. Default engine.DefaultMaxThroughput.
	MaxThroughput int
	// MaxPartitions caps the physical partitions of the whole server.
	// Default engine.DefaultMaxPartitions.
	MaxPartitions int
	// FixedMaxRUs and FixedMaxBytes cap containers created without a
	// partition key. Defaults 10,000 RU/s and 10 GB.
	FixedMaxRUs   int
	FixedMaxBytes int64
	// QueryMemory bounds the memory the query pages running at once hold
	// together (engine.QueryLimits.ServerBytes): past it a query gets 429
	// with a retry-after. 0: engine.DefaultQueryServerHeld; negative: no
	// bound.
	QueryMemory int64
	// NoThrottle meters requests but never answers 429 (for development).
	NoThrottle bool
	// AcceptDataLoss starts on a store whose write-ahead log or MANIFEST is
	// damaged, or whose log is missing, logging what was lost, instead of
	// refusing to start.
	AcceptDataLoss bool
	// ScriptTimeout and ScriptMaxWrites bound one run of a stored
	// procedure or trigger (engine.ScriptLimits); zero takes the default.
	ScriptTimeout   time.Duration
	ScriptMaxWrites int
	// MongoListen, when set, also serves the MongoDB wire protocol on this
	// HOST:PORT (off by default), with TLS when TLS is set. With a key of
	// one's own, clients authenticate with SCRAM-SHA-256 (user "parsec" and
	// the primary key, or "parsec-readonly" and the read-only key); with the
	// emulator key, which is only served on loopback, they need not.
	MongoListen string
	// MongoMaxCursors, MongoMaxCursorBytes and MongoMaxSessions cap the
	// MongoDB API's open cursors, the results they keep between getMores,
	// and its sessions with a transaction; the users share each (see
	// mongo.Config). Zero takes mongo's defaults.
	MongoMaxCursors     int
	MongoMaxCursorBytes int64
	MongoMaxSessions    int
	// MongoAuthIdleTimeout is how long a MongoDB connection that has not
	// authenticated may wait for its next message, when clients must
	// authenticate (mongo.Config.AuthIdleTimeout). Default
	// mongo.DefaultAuthIdleTimeout.
	MongoAuthIdleTimeout time.Duration
	// GremlinListen, when set, also serves the Gremlin API (the Gremlin
	// Server protocol over WebSocket, as Cosmos DB's Gremlin endpoint) on
	// this HOST:PORT (off by default), with TLS when TLS is set. Clients
	// authenticate with SASL PLAIN: user /dbs/<database>/colls/<graph>,
	// password the primary or read-only key.
	GremlinListen string
	// GremlinIdleTimeout closes a Gremlin connection that sends nothing
	// for that long. Default gremlin.DefaultIdleTimeout (1 hour).
	GremlinIdleTimeout time.Duration
	// GremlinMaxConnections caps the Gremlin connections served at once.
	// Default gremlin.DefaultMaxConnections.
	GremlinMaxConnections int
	// TableListen, when set, also serves the Azure Table API on this
	// HOST:PORT (off by default; the emulator's port is 8902), with TLS
	// when TLS is set. Requests are signed with the account key
	// (SharedKey or SharedKeyLite); the read-only key reads only.
	TableListen string
	// TableThroughput is the RU/s of a table created through the Table
	// API. Default table.DefaultThroughput (400, as on Cosmos DB).
	TableThroughput int
	// Consistency is the account's default consistency level (strong,
	// bounded, session, prefix or eventual; default session), with the
	// bounds of bounded staleness (defaults 100,000 operations and 5
	// minutes). Requests may weaken it, never strengthen it.
	Consistency          string
	MaxStalenessPrefix   int64
	MaxStalenessInterval time.Duration
	// Cluster options. NodeID (with ClusterListen) makes the server a
	// member of a cluster: Join lists members' cluster addresses (none:
	// bootstrap a new cluster), ReplicationFactor is the replicas of each
	// partition (default 3), ClusterKey authenticates the nodes to each
	// other (at least 32 bytes; required off loopback, derived from the
	// account key on loopback), ClusterTick is raft's tick (default
	// cluster.DefaultTick), RaftLogEntries is how many entries a
	// partition's raft log holds before it is truncated (default
	// cluster.DefaultLogEntries).
	NodeID            uint64
	ClusterListen     string
	ClusterAdvertise  string // the cluster address other nodes use; default ClusterListen's
	Join              []string
	ReplicationFactor int
	ClusterKey        string
	ClusterTick       time.Duration
	RaftLogEntries    int
	// Storage, when set, adjusts the store's options after the fields above
	// are applied (tests inject free space and faults with it).
	Storage func(*storage.Options)
}

// DefaultListen is the default listen address.
const DefaultListen = "127.0.0.1:8081"

// DefaultDataDir is the default data directory.
const DefaultDataDir = "./parsec-data"

func (o *Options) setDefaults() {
	if o.DataDir == "" {
		o.DataDir = DefaultDataDir
	}
	if o.Listen == "" {
		o.Listen = DefaultListen
	}
	if o.PartitionMaxRUs == 0 {
		o.PartitionMaxRUs = engine.DefaultPartitionMaxRUs
	}
	o.setConnDefaults()
}

// consistency returns the account's consistency policy.
func (o *Options) consistency() (cosmos.ConsistencyPolicy, error) {
	p := cosmos.ConsistencyPolicy{Level: o.Consistency, MaxStalenessPrefix: o.MaxStalenessPrefix, MaxStalenessInterval: o.MaxStalenessInterval}
	return p, p.Normalize()
}

// Validate checks the options and returns a message a user can act on.
func (o *Options) Validate() error {
	o.setDefaults()
	host, _, err := net.SplitHostPort(o.Listen)
	if err != nil {
		return fmt.Errorf("--listen %q is not HOST:PORT: %v", o.Listen, err)
	}
	loopback := isLoopback(host)
	if o.Key == "" && !loopback {
		return fmt.Errorf("refusing to listen on %q with the well-known emulator key: anyone who can reach it could read and write everything. Give a key of your own with --key (base64, e.g. from `openssl rand -base64 64`), or listen on a loopback address such as 127.0.0.1", o.Listen)
	}
	primary := auth.EmulatorKey
	if o.Key != "" {
		if err := checkKey("--key", o.Key, o.Listen, loopback); err != nil {
			return err
		}
		primary = o.Key
	}
	if o.ReadOnlyKey != "" {
		if err := checkKey("--read-only-key", o.ReadOnlyKey, o.Listen, loopback); err != nil {
			return err
		}
		if sameKey(o.ReadOnlyKey, primary) {
			return errors.New("--read-only-key must differ from the primary key")
		}
	}
	if (o.CertFile == "") != (o.KeyFile == "") {
		return errors.New("--cert and --cert-key must be given together")
	}
	if o.CertFile != "" {
		o.TLS = true
	}
	if o.PartitionMaxRUs < 400 {
		return fmt.Errorf("--partition-max-rus must be at least 400, not %d", o.PartitionMaxRUs)
	}
	if _, err := o.consistency(); err != nil {
		return fmt.Errorf("--consistency %s: %v", o.Consistency, err)
	}
	if o.PartitionMaxBytes < 0 || o.LogicalPartitionMaxBytes < 0 || o.FixedMaxBytes < 0 || o.FixedMaxRUs < 0 || o.MaxThroughput < 0 || o.MaxPartitions < 0 {
		return errors.New("size, throughput and partition limits cannot be negative")
	}
	if o.MaxThroughput != 0 && o.MaxThroughput < 1000 {
		return fmt.Errorf("--max-throughput must be at least 1000 (the lowest autoscale maximum), not %d", o.MaxThroughput)
	}
	if o.MongoMaxCursors < 0 || o.MongoMaxCursorBytes < 0 || o.MongoMaxSessions < 0 {
		return errors.New("--mongo-max-cursors, --mongo-max-cursor-bytes and --mongo-max-sessions cannot be negative")
	}
	if o.MongoListen != "" {
		host, _, err := net.SplitHostPort(o.MongoListen)
		if err != nil {
			return fmt.Errorf("--mongo-listen %q is not HOST:PORT: %v", o.MongoListen, err)
		}
		if !isLoopback(host) && (o.Key == "" || sameKey(o.Key, auth.EmulatorKey)) {
			return fmt.Errorf("refusing to serve the MongoDB API on %q with the well-known emulator key: anyone who can reach it could read and write everything. Give a key of your own with --key (clients then authenticate with SCRAM-SHA-256 as user %q and the key as password), or use a loopback address such as 127.0.0.1", o.MongoListen, mongo.DefaultAccountName)
		}
	}
	if o.GremlinListen != "" {
		host, _, err := net.SplitHostPort(o.GremlinListen)
		if err != nil {
			return fmt.Errorf("--gremlin-listen %q is not HOST:PORT: %v", o.GremlinListen, err)
		}
		if !isLoopback(host) && (o.Key == "" || sameKey(o.Key, auth.EmulatorKey)) {
			return fmt.Errorf("refusing to serve the Gremlin API on %q with the well-known emulator key: anyone who can reach it could read and write every graph. Give a key of your own with --key (clients then authenticate as user /dbs/<database>/colls/<graph> with the key as password), or use a loopback address such as 127.0.0.1", o.GremlinListen)
		}
	}
	if o.GremlinIdleTimeout < 0 || o.GremlinMaxConnections < 0 {
		return errors.New("--gremlin-idle-timeout and --gremlin-max-connections cannot be negative")
	}
	if o.TableListen != "" {
		host, _, err := net.SplitHostPort(o.TableListen)
		if err != nil {
			return fmt.Errorf("--table-listen %q is not HOST:PORT: %v", o.TableListen, err)
		}
		if !isLoopback(host) && (o.Key == "" || sameKey(o.Key, auth.EmulatorKey)) {
			return fmt.Errorf("refusing to serve the Table API on %q with the well-known emulator key: anyone who can reach it could read and write everything. Give a key of your own with --key, or use a loopback address such as 127.0.0.1", o.TableListen)
		}
	}
	if o.TableThroughput < 0 || (o.TableThroughput > 0 && o.TableThroughput < 400) {
		return fmt.Errorf("--table-throughput must be at least 400 RU/s, not %d", o.TableThroughput)
	}
	if err := o.validateCluster(); err != nil {
		return err
	}
	if o.FixedMaxRUs != 0 && o.FixedMaxRUs < 400 {
		return fmt.Errorf("--fixed-max-rus must be at least 400, not %d", o.FixedMaxRUs)
	}
	return nil
}

// clustered reports whether the options make the server a cluster member.
func (o *Options) clustered() bool { return o.NodeID != 0 || o.ClusterListen != "" || len(o.Join) > 0 }

func (o *Options) validateCluster() error {
	if !o.clustered() {
		if o.ClusterKey != "" || o.ReplicationFactor != 0 || o.RaftLogEntries != 0 {
			return errors.New("--cluster-key, --replication-factor and --raft-log-entries need --node-id and --cluster-listen")
		}
		return nil
	}
	if o.NodeID == 0 {
		return errors.New("--node-id must be given (a number from 1, unique in the cluster) with --cluster-listen or --join")
	}
	if o.ClusterListen == "" {
		return errors.New("--cluster-listen HOST:PORT must be given with --node-id: other nodes reach this one there")
	}
	if o.InMemory {
		return errors.New("--in-memory cannot be used in a cluster: a member must keep its raft log on disk")
	}
	host, _, err := net.SplitHostPort(o.ClusterListen)
	if err != nil {
		return fmt.Errorf("--cluster-listen %q is not HOST:PORT: %v", o.ClusterListen, err)
	}
	if o.ClusterKey == "" && !isLoopback(host) {
		return fmt.Errorf("--cluster-key is required with --cluster-listen %q off loopback: without it anyone who can reach the port could join the cluster. Give every node the same key of at least 32 bytes (e.g. from `openssl rand -base64 48`)", o.ClusterListen)
	}
	if o.ClusterKey != "" && len(o.ClusterKey) < 32 {
		return fmt.Errorf("--cluster-key must be at least 32 bytes, not %d (e.g. from `openssl rand -base64 48`)", len(o.ClusterKey))
	}
	if o.RaftLogEntries < 0 || (o.RaftLogEntries > 0 && o.RaftLogEntries < 16) {
		return fmt.Errorf("--raft-log-entries must be at least 16, not %d", o.RaftLogEntries)
	}
	if o.ReplicationFactor < 0 || o.ReplicationFactor > 7 {
		return fmt.Errorf("--replication-factor must be from 1 to 7, not %d", o.ReplicationFactor)
	}
	for _, j := range o.Join {
		if _, _, err := net.SplitHostPort(j); err != nil {
			return fmt.Errorf("--join %q is not HOST:PORT: %v", j, err)
		}
	}
	return nil
}

// clusterKey is the key nodes authenticate each other with: the one given,
// or on loopback one derived from the account key, which every member has.
func (o *Options) clusterKey(account []byte) []byte {
	if o.ClusterKey != "" {
		return []byte(o.ClusterKey)
	}
	sum := sha256.Sum256(append([]byte("parsec cluster key\x00"), account...))
	return sum[:]
}

// MinKeyBytes is the shortest master key (decoded) accepted off loopback.
const MinKeyBytes = 32

// checkKey checks the base64 key given with flag. Off loopback it refuses
// the well-known emulator key and keys shorter than MinKeyBytes.
func checkKey(flag, b64, listen string, loopback bool) error {
	key, err := auth.DecodeKey(b64)
	if err != nil {
		return fmt.Errorf("%s is not a valid base64 key: %v", flag, err)
	}
	if loopback {
		return nil
	}
	if sameKey(b64, auth.EmulatorKey) {
		return fmt.Errorf("refusing to listen on %q with %s set to the well-known emulator key: it is published, so anyone who can reach the server could use it. Generate a key of your own (e.g. `openssl rand -base64 64`), or listen on a loopback address such as 127.0.0.1", listen, flag)
	}
	if len(key) < MinKeyBytes {
		return fmt.Errorf("refusing to listen on %q with a %d-byte %s: off loopback a key must be at least %d bytes (decoded) so that it cannot be guessed. Generate one with `openssl rand -base64 64`", listen, len(key), flag, MinKeyBytes)
	}
	return nil
}

// sameKey reports whether two base64 keys decode to the same bytes (false
// if either does not decode).
func sameKey(a, b string) bool {
	ka, err1 := auth.DecodeKey(a)
	kb, err2 := auth.DecodeKey(b)
	return err1 == nil && err2 == nil && string(ka) == string(kb)
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Server is a running Parsec server.
type Server struct {
	opts        Options
	store       *storage.DB
	engine      *engine.Engine
	node        *cluster.Node // nil without a cluster
	http        *http.Server
	ln          net.Listener
	done        chan error
	mongo       *mongo.Server
	mongoLn     net.Listener
	mongoDone   chan error
	gremlin     *gremlin.Server
	gremlinLn   net.Listener
	gremlinDone chan error
	tableHTTP   *http.Server
	tableLn     net.Listener
	tableDone   chan error
}

// Start opens the store, starts the engine and begins serving. It returns once
// the listener is bound, so the server is ready when Start returns.
func Start(o Options) (*Server, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if !o.InMemory {
		if err := os.MkdirAll(o.DataDir, 0o755); err != nil {
			return nil, fmt.Errorf("cannot create data directory: %w", err)
		}
	}
	so := storage.Options{Dir: o.DataDir, InMemory: o.InMemory, AcceptDataLoss: o.AcceptDataLoss}
	if o.Storage != nil {
		o.Storage(&so)
	}
	store, err := storage.Open(so)
	if err != nil {
		return nil, dataLossHint(err)
	}
	key := o.Key
	if key == "" {
		key = auth.EmulatorKey
	}
	primary, _ := auth.DecodeKey(key)
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		store.Close()
		return nil, fmt.Errorf("cannot listen on %s: %w", o.Listen, err)
	}
	eo := engine.Options{PartitionMaxRUs: o.PartitionMaxRUs, PartitionMaxBytes: o.PartitionMaxBytes,
		LogicalPartitionMaxBytes: o.LogicalPartitionMaxBytes, NoThrottle: o.NoThrottle,
		FixedMaxRUs: o.FixedMaxRUs, FixedMaxBytes: o.FixedMaxBytes, AcceptDataLoss: o.AcceptDataLoss,
		MaxThroughput: o.MaxThroughput, MaxPartitions: o.MaxPartitions,
		Scripts: engine.ScriptLimits{Timeout: o.ScriptTimeout, MaxWrites: o.ScriptMaxWrites},
		Query:   engine.QueryLimits{ServerBytes: o.QueryMemory}}
	var cert tls.Certificate
	if o.TLS {
		if cert, err = loadOrCreateCert(o); err != nil {
			ln.Close()
			store.Close()
			return nil, err
		}
	}
	var node *cluster.Node
	if o.clustered() {
		scheme := "http"
		if o.TLS {
			scheme = "https"
		}
		client := o.Advertise
		if client == "" {
			if ip := ln.Addr().(*net.TCPAddr).IP; ip.IsUnspecified() {
				ln.Close()
				store.Close()
				return nil, fmt.Errorf("--listen %s accepts clients on every interface, so other nodes cannot tell which address reaches this one: give it with --advertise (e.g. http://10.0.0.5:8081)", o.Listen)
			}
			client = scheme + "://" + ln.Addr().String()
		}
		node, err = cluster.New(cluster.Config{NodeID: o.NodeID, Listen: o.ClusterListen, Advertise: o.ClusterAdvertise, Join: o.Join, ReplicationFactor: o.ReplicationFactor,
			Key: o.clusterKey(primary), AccountKey: primary, ClientAddress: client, ClientCertificate: leafOf(cert), Store: store, Tick: o.ClusterTick, LogEntries: uint64(o.RaftLogEntries)})
		if err != nil {
			ln.Close()
			store.Close()
			return nil, err
		}
		eo.Replicator, eo.Catalog = node, node
	}
	eng, err := engine.Open(store, eo)
	if err != nil {
		if node != nil {
			node.Stop()
		}
		ln.Close()
		store.Close()
		return nil, dataLossHint(err)
	}
	if node != nil {
		ctx, cancel := context.WithTimeout(context.Background(), clusterStartWait)
		err := node.Start(ctx, eng)
		cancel()
		if err != nil {
			node.Stop()
			eng.Close()
			ln.Close()
			store.Close()
			return nil, err
		}
	}
	var readOnly []byte
	if o.ReadOnlyKey != "" {
		readOnly, _ = auth.DecodeKey(o.ReadOnlyKey)
	}
	consistency, _ := o.consistency() // checked by Validate
	// One gateway serves every API of the node: writes run on their
	// partition's leader, reads are made fit for their consistency.
	var gw *gateway.Gateway
	if node != nil {
		gw = gateway.New(eng, node)
	} else {
		gw = gateway.New(eng, nil)
	}
	api := cosmos.NewServer(cosmos.Config{Engine: eng, Gateway: gw, PrimaryKey: primary, ReadOnlyKey: readOnly, Advertise: o.Advertise, MetricsPublic: o.MetricsPublic,
		Ready: store.Ready, Consistency: consistency, Cluster: node})
	s := &Server{opts: o, store: store, engine: eng, node: node, done: make(chan error, 1)}
	emulatorKey := sameKey(key, auth.EmulatorKey)
	var handler http.Handler = explorer.Handler(api, explorer.Config{EmulatorKey: emulatorKey})
	if emulatorKey {
		handler = newHostGuard(handler, o.Advertise)
	}
	s.http = newHTTPServer(handler, o)
	if o.MaxConnections > 0 {
		ln = newLimitListener(ln, o.MaxConnections, o.ConnectionWait, max(o.FirstRequestTimeout, 0))
	}
	if o.TLS {
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}})
	}
	s.ln = ln
	if o.MongoListen != "" {
		mln, err := net.Listen("tcp", o.MongoListen)
		if err != nil {
			ln.Close()
			s.closeStore()
			return nil, fmt.Errorf("cannot listen on %s (--mongo-listen): %w", o.MongoListen, err)
		}
		if o.TLS {
			mln = tls.NewListener(mln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
		}
		// Clients authenticate with SCRAM-SHA-256 and the keys; with a
		// key of one's own they must (see mongo.Config).
		s.mongo = mongo.New(mongo.Config{Engine: eng, Gateway: gw, Consistency: consistency.Level, PrimaryKey: key, ReadOnlyKey: o.ReadOnlyKey,
			RequireAuth: !sameKey(key, auth.EmulatorKey), AuthIdleTimeout: o.MongoAuthIdleTimeout,
			MaxCursors: o.MongoMaxCursors, MaxCursorBytes: o.MongoMaxCursorBytes, MaxSessions: o.MongoMaxSessions})
		s.mongoLn = mln
		s.mongoDone = make(chan error, 1)
		go func() { s.mongoDone <- s.mongo.Serve(mln) }()
	}
	if o.GremlinListen != "" {
		if err := s.startGremlin(cert, primary, readOnly); err != nil {
			ln.Close()
			if s.mongo != nil {
				s.mongo.Close()
				<-s.mongoDone
			}
			s.closeStore()
			return nil, err
		}
	}
	if o.TableListen != "" {
		if err := s.startTable(cert, primary, readOnly, emulatorKey); err != nil {
			ln.Close()
			if s.mongo != nil {
				s.mongo.Close()
				<-s.mongoDone
			}
			if s.gremlin != nil {
				s.gremlin.Close()
				<-s.gremlinDone
			}
			s.closeStore()
			return nil, err
		}
	}
	go func() { s.done <- s.http.Serve(ln) }()
	return s, nil
}

// startGremlin listens on GremlinListen (with TLS under --tls) and serves
// the Gremlin API there.
func (s *Server) startGremlin(cert tls.Certificate, primary, readOnly []byte) error {
	o := s.opts
	gln, err := net.Listen("tcp", o.GremlinListen)
	if err != nil {
		return fmt.Errorf("cannot listen on %s (--gremlin-listen): %w", o.GremlinListen, err)
	}
	g, err := gremlin.New(gremlin.Config{Engine: s.engine, PrimaryKey: primary, ReadOnlyKey: readOnly,
		IdleTimeout: o.GremlinIdleTimeout, MaxConnections: o.GremlinMaxConnections})
	if err != nil {
		gln.Close()
		return err
	}
	if o.TLS {
		gln = tls.NewListener(gln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}})
	}
	s.gremlin, s.gremlinLn, s.gremlinDone = g, gln, make(chan error, 1)
	go func() { s.gremlinDone <- g.Serve(gln) }()
	return nil
}

// startTable listens on TableListen (with TLS under --tls) and serves the
// Table API there.
func (s *Server) startTable(cert tls.Certificate, primary, readOnly []byte, emulatorKey bool) error {
	o := s.opts
	tln, err := net.Listen("tcp", o.TableListen)
	if err != nil {
		return fmt.Errorf("cannot listen on %s (--table-listen): %w", o.TableListen, err)
	}
	if o.TLS {
		tln = tls.NewListener(tln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}})
	}
	var th http.Handler = table.New(table.Config{Engine: s.engine, PrimaryKey: primary, ReadOnlyKey: readOnly, Throughput: o.TableThroughput})
	if emulatorKey {
		// As for the NoSQL API: with the published key, only requests
		// addressed to this machine by a loopback name.
		th = newHostGuard(th, o.Advertise)
	}
	s.tableHTTP, s.tableLn, s.tableDone = newHTTPServer(th, o), tln, make(chan error, 1)
	go func() { s.tableDone <- s.tableHTTP.Serve(tln) }()
	return nil
}

// GremlinURL is the WebSocket URL of the Gremlin API ("" when off).
func (s *Server) GremlinURL() string {
	if s.gremlinLn == nil {
		return ""
	}
	scheme := "ws"
	if s.opts.TLS {
		scheme = "wss"
	}
	return scheme + "://" + s.gremlinLn.Addr().String() + "/"
}

// leafOf returns the DER of c's leaf certificate, nil if c holds none.
func leafOf(c tls.Certificate) []byte {
	if len(c.Certificate) == 0 {
		return nil
	}
	return c.Certificate[0]
}

// clusterStartWait bounds how long a cluster member waits, starting, to
// join or to catch up with the cluster's catalog.
const clusterStartWait = 90 * time.Second

// Node is the server's cluster node; nil without a cluster.
func (s *Server) Node() *cluster.Node { return s.node }

// dataLossHint tells the operator what to do about a store that holds less
// than it acknowledged.
func dataLossHint(err error) error {
	if !errors.Is(err, storage.ErrDataLoss) {
		return err
	}
	return fmt.Errorf("%w. Refusing to start: restore the data directory from a backup, or start with --accept-data-loss to serve what is left (what was lost is then logged)", err)
}

// URL is the base URL the server answers on.
func (s *Server) URL() string {
	scheme := "http"
	if s.opts.TLS {
		scheme = "https"
	}
	return scheme + "://" + s.ln.Addr().String()
}

// MongoAddr is the address the MongoDB API listens on ("" when off).
func (s *Server) MongoAddr() string {
	if s.mongoLn == nil {
		return ""
	}
	return s.mongoLn.Addr().String()
}

// TableAddr is the address the Table API listens on ("" when off).
func (s *Server) TableAddr() string {
	if s.tableLn == nil {
		return ""
	}
	return s.tableLn.Addr().String()
}

// Engine exposes the engine, for tests and tools in the same process.
func (s *Server) Engine() *engine.Engine { return s.engine }

// Shutdown stops accepting requests, waits for those in flight (up to ctx),
// then stops the engine and closes the store.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.http.Shutdown(ctx)
	if s.tableHTTP != nil {
		if terr := s.tableHTTP.Shutdown(ctx); terr != nil && err == nil {
			err = terr
		}
		if terr := <-s.tableDone; terr != nil && !errors.Is(terr, http.ErrServerClosed) && err == nil {
			err = terr
		}
	}
	if s.mongo != nil {
		s.mongo.Close()
		if merr := <-s.mongoDone; merr != nil && err == nil {
			err = merr
		}
	}
	if s.gremlin != nil {
		s.gremlin.Close()
		if gerr := <-s.gremlinDone; gerr != nil && err == nil {
			err = gerr
		}
	}
	if serr := <-s.done; serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	if cerr := s.closeStore(); err == nil {
		err = cerr
	}
	return err
}

func (s *Server) closeStore() error {
	if s.node != nil {
		s.node.Stop() // proposals in flight fail before the engine stops
	}
	if s.engine != nil {
		s.engine.Close()
	}
	return s.store.Close()
}
