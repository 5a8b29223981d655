package engine

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"log"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parsecdb/parsec/internal/storage"
)

// Options configure an Engine.
type Options struct {
	// PartitionMaxRUs is the throughput one physical partition serves (t):
	// a container provisioned with T RU/s gets ceil(T/t) partitions.
	PartitionMaxRUs int
	// Now is the clock used for resource timestamps and request-unit
	// budgets. Defaults to time.Now.
	Now func() time.Time
	// PartitionMaxBytes is the storage at which a partition splits. Default 50 GB.
	PartitionMaxBytes int64
	// LogicalPartitionMaxBytes caps one partition key value's storage. Default 20 GB.
	LogicalPartitionMaxBytes int64
	// NoThrottle meters requests but never answers 429.
	NoThrottle bool
	// MaxThroughput caps the throughput, or the autoscale maximum, of one
	// container or of one database with shared throughput, in RU/s. Default
	// DefaultMaxThroughput.
	MaxThroughput int
	// MaxPartitions caps the physical partitions of all containers
	// together: a container create or a throughput raise that would take
	// the total past it fails with ErrBadRequest. Every partition holds
	// memory and an apply loop while the server runs, and is opened again
	// at every start. Default DefaultMaxPartitions.
	MaxPartitions int
	// FixedMaxRUs and FixedMaxBytes cap fixed containers (created without a
	// partition key). Defaults 10,000 RU/s and 10 GB.
	FixedMaxRUs   int
	FixedMaxBytes int64
	// Query bounds every query page; zero fields take their defaults (see
	// QueryLimits).
	Query QueryLimits
	// Scripts bound server-side scripts; zero fields take their defaults
	// (see ScriptLimits).
	Scripts ScriptLimits
	// AcceptDataLoss opens a store that holds less than it acknowledged
	// (see AckedFile), logging what was lost, instead of refusing with
	// storage.ErrDataLoss.
	AcceptDataLoss bool
	// AckedInterval is how often the acknowledged LSNs are recorded.
	// Default DefaultAckedInterval.
	AckedInterval time.Duration
	// TTLSweepInterval is how often expired items are deleted in the
	// background (see ttl.go); negative: never. Default
	// DefaultTTLSweepInterval.
	TTLSweepInterval time.Duration
	// Replicator, when set, replicates every partition's writes and splits
	// through its raft group before they are applied (replicated.go).
	// Experimental: index builds are not replicated.
	Replicator Replicator
	// Catalog, when set, replicates every catalog change (databases,
	// containers, offers, users, permissions, client encryption keys,
	// scripts, the end of an index build, deletions) through the meta
	// group: commitCatalog proposes it and returns once this node has
	// applied it, and the store only takes the catalog's entries through
	// ApplyCatalog, on every node alike; memory follows other nodes'
	// entries in the background (WaitCatalog). New containers' partitions
	// get the members Catalog.Placement names. Experimental, like
	// Replicator (catalog_log.go).
	Catalog CatalogReplicator
	// Logf logs what the engine does on its own (data loss accepted, a
	// record that could not be written). Default log.Printf.
	Logf func(format string, args ...any)

	// manualStorageSplits turns off the background storage splits that
	// follow a commit, for tests that split with splitForStorage at the
	// point they choose, so that the split is deterministic.
	manualStorageSplits bool
	// indexCandidates, when positive, replaces MaxIndexCandidates.
	indexCandidates int
	// commandLog, when set, receives every entry of the partitions' and the
	// catalog's logs once it is durable, in an order that ApplyLog can
	// replay (see LogEntry).
	commandLog func(LogEntry)
}

// Defaults of Options.
const (
	DefaultPartitionMaxBytes        = 50 << 30
	DefaultLogicalPartitionMaxBytes = 20 << 30
	DefaultFixedMaxRUs              = 10000
	DefaultFixedMaxBytes            = 10 << 30
)

// DefaultPartitionMaxRUs is Cosmos's throughput limit of one physical partition.
const DefaultPartitionMaxRUs = 10000

// DefaultMaxThroughput is Cosmos DB's default quota of throughput per
// container and per database with shared throughput (a support request
// raises it there): "Maximum RUs per container (dedicated throughput
// provisioned mode): 1,000,000", and the same per database, in
// https://learn.microsoft.com/azure/cosmos-db/concepts-limits. At
// DefaultPartitionMaxRUs it is 100 physical partitions.
const DefaultMaxThroughput = 1_000_000

// DefaultMaxPartitions is the default of Options.MaxPartitions: a hundred
// containers at DefaultMaxThroughput, or ten thousand small ones. An idle
// partition holds about 15 KB (its apply loop's stack, its queue and its
// budget), so they take about 150 MB together.
const DefaultMaxPartitions = 10_000

// DefaultThroughput is the throughput of a container created without one.
const DefaultThroughput = 400

// Engine is the root of the data model. It is safe for concurrent use.
type Engine struct {
	store *storage.DB
	opts  Options
	seq   *allocator

	// log is the partitions' log: Options.Replicator, or the local one.
	log Replicator
	// catLog is the catalog's log: Options.Catalog, or the local one.
	catLog CatalogReplicator
	// deletions counts the entries of the catalog's log applied here that
	// deleted containers (goneIn).
	deletions atomic.Uint64
	// localMu orders the commits of the local logs (local.go): the
	// catalog's take it whole, the partitions' share it.
	localMu sync.RWMutex
	// cat is the catalog's apply state (catalog_log.go).
	cat *catalogRepl
	// groups finds a replicated partition by raft group (GroupPartition).
	groups sync.Map
	// installMu keeps reads from seeing a replica's range between the two
	// steps of a snapshot's install (InstallSnapshot): reads of partitions'
	// state take their storage snapshot, or read an item, under its read
	// lock (readView).
	installMu sync.RWMutex

	mu  sync.RWMutex
	dbs map[string]*database
	// livePerms maps the rid of every permission to its version (see
	// PermissionLive).
	livePerms map[string]uint64

	// scriptSlots holds a token per script run under way (script.go).
	scriptSlots chan struct{}

	// queryHeld counts what the running query pages hold (query.go).
	queryHeld *queryHeld

	// builders counts the running index builds (see index_build.go).
	builders sync.WaitGroup

	// The record of acknowledged LSNs (acked.go): ackedOn once checked.
	ackedMu   sync.Mutex
	ackedOn   bool
	ackedLast []byte
	ackedStop chan struct{}
	ackedDone chan struct{}
	sweepStop chan struct{}
	sweepDone chan struct{}
	closeOnce sync.Once
}

// Open loads the catalog from store and starts every partition's apply loop.
func Open(store *storage.DB, opts Options) (*Engine, error) {
	if opts.PartitionMaxRUs <= 0 {
		opts.PartitionMaxRUs = DefaultPartitionMaxRUs
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.PartitionMaxBytes == 0 {
		opts.PartitionMaxBytes = DefaultPartitionMaxBytes
	}
	if opts.LogicalPartitionMaxBytes == 0 {
		opts.LogicalPartitionMaxBytes = DefaultLogicalPartitionMaxBytes
	}
	if opts.MaxThroughput <= 0 {
		opts.MaxThroughput = DefaultMaxThroughput
	}
	if opts.MaxPartitions <= 0 {
		opts.MaxPartitions = DefaultMaxPartitions
	}
	if opts.FixedMaxRUs == 0 {
		opts.FixedMaxRUs = DefaultFixedMaxRUs
	}
	if opts.FixedMaxBytes == 0 {
		opts.FixedMaxBytes = DefaultFixedMaxBytes
	}
	opts.Query = opts.Query.withDefaults()
	opts.Scripts = opts.Scripts.withDefaults()
	if opts.AckedInterval <= 0 {
		opts.AckedInterval = DefaultAckedInterval
	}
	if opts.Logf == nil {
		opts.Logf = log.Printf
	}
	seq, err := newAllocator(store, storage.SeqKey())
	if err != nil {
		return nil, err
	}
	e := &Engine{store: store, opts: opts, seq: seq, dbs: map[string]*database{}, livePerms: map[string]uint64{},
		scriptSlots: make(chan struct{}, opts.Scripts.MaxConcurrent),
		queryHeld:   &queryHeld{max: opts.Query.ServerBytes}}
	e.log = opts.Replicator
	if e.log == nil {
		e.log = &localLog{e}
	}
	e.catLog = opts.Catalog
	if e.catLog == nil {
		e.catLog = &localCatalog{e: e}
	}
	{
		e.cat = newCatalogRepl()
		seq.track = true
		e.cat.mu.Lock()
		err := e.loadCatalogApplied()
		e.cat.mu.Unlock()
		if err != nil {
			return nil, err
		}
	}
	// Catalog records are read by family rather than by database, and any
	// record whose key is not the current encoding of its id (stores written
	// before names were escaped in keys) is rewritten under its current key.
	var rekey []rekeyed
	lo := storage.DatabasePrefix()
	err = store.Iterate(lo, storage.PrefixEnd(lo), func(k, v []byte) (bool, error) {
		var info DatabaseInfo
		if err := json.Unmarshal(v, &info); err != nil {
			return false, fmt.Errorf("cannot decode database record: %w", err)
		}
		if want := storage.DatabaseKey(info.ID); !bytes.Equal(k, want) {
			rekey = append(rekey, rekeyed{old: bytes.Clone(k), new: want, value: bytes.Clone(v)})
		}
		e.dbs[info.ID] = &database{info: info, colls: map[string]*Container{}}
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	var colls []ContainerInfo
	lo = storage.ContainersPrefix()
	err = store.Iterate(lo, storage.PrefixEnd(lo), func(k, v []byte) (bool, error) {
		var info ContainerInfo
		if err := json.Unmarshal(v, &info); err != nil {
			return false, fmt.Errorf("cannot decode container record: %w", err)
		}
		if want := storage.ContainerKey(info.DB, info.ID); !bytes.Equal(k, want) {
			rekey = append(rekey, rekeyed{old: bytes.Clone(k), new: want, value: bytes.Clone(v)})
		}
		colls = append(colls, info)
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	if err := rewriteKeys(store, rekey); err != nil {
		return nil, err
	}
	if err := backfillItemIndexes(store, opts.Logf); err != nil {
		return nil, err
	}
	if err := e.loadUsers(); err != nil {
		return nil, err
	}
	// Opening a container may start an index build, which reads the
	// catalog when it completes: the catalog is filled under the lock, as
	// CreateContainer does.
	e.mu.Lock()
	for _, info := range colls {
		db, ok := e.dbs[info.DB]
		if !ok {
			continue // the database's deletion removes its container records in the same batch
		}
		c, err := e.openContainer(info)
		if err != nil {
			e.mu.Unlock()
			e.Close()
			return nil, err
		}
		db.colls[info.ID] = c
	}
	e.mu.Unlock()
	if err := e.verifyAcked(); err != nil {
		e.Close()
		return nil, err
	}
	e.ackedStop, e.ackedDone = make(chan struct{}), make(chan struct{})
	go e.recordAcked(opts.AckedInterval, e.ackedStop, e.ackedDone)
	if opts.TTLSweepInterval >= 0 {
		e.sweepStop, e.sweepDone = make(chan struct{}), make(chan struct{})
		go e.sweepLoop(cmp.Or(opts.TTLSweepInterval, DefaultTTLSweepInterval), e.sweepStop, e.sweepDone)
	}
	if e.catalogKeepsEntries() {
		e.EachContainer(func(db string, c *Container) {
			if c.versionRetention() > 0 {
				opts.Logf("parsec: container %s/%s keeps a version log, which is not trimmed yet with a replicated catalog", db, c.Info().ID)
			}
		})
	}
	e.cat.running = true
	go e.reconcileLoop()
	e.refreshRates()
	return e, nil
}

// Close stops every partition's apply loop and records the acknowledged
// LSNs (see AckedFile). It does not close the store. Later calls do nothing.
func (e *Engine) Close() {
	e.closeOnce.Do(e.close)
}

func (e *Engine) close() {
	e.closeCatalog()
	if e.sweepStop != nil {
		close(e.sweepStop)
		<-e.sweepDone
	}
	if e.ackedStop != nil {
		close(e.ackedStop)
		<-e.ackedDone
	}
	e.mu.Lock()
	for _, db := range e.dbs {
		for _, c := range db.colls {
			c.stop()
		}
	}
	e.mu.Unlock()
	e.builders.Wait() // they end once the loops are stopped
	if err := e.writeAcked(); err != nil {
		e.opts.Logf("parsec: %v", err)
	}
}

func (e *Engine) now() int64 { return e.opts.Now().Unix() }
