package engine

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parsecdb/parsec/internal/epk"
	"github.com/parsecdb/parsec/internal/index"
	"github.com/parsecdb/parsec/internal/partition"
	"github.com/parsecdb/parsec/internal/storage"
	"github.com/parsecdb/parsec/synthkey"
)

// Container is an open container: its record, its partition map, and its
// partitions' apply loops. It is safe for concurrent use.
type Container struct {
	e     *Engine
	rid   [storage.RidLen]byte
	def   epk.Definition
	paths [][]string
	// scanPaths are what a write scans a document for: paths, then the
	// synthetic key's base paths.
	scanPaths [][]string
	ac        applyCtx
	// storeLimits are the storage limits item commands carry.
	storeLimits Limits
	// synth is the declared synthetic partition key, or nil (synthetic.go).
	synth *synthkey.Expr
	// fixed marks a container created without a partition key: one
	// partition, capped in throughput and storage, never split.
	fixed bool

	info atomic.Pointer[ContainerInfo]
	// text is the full-text index configuration of info (newTextConfig).
	text atomic.Pointer[textConfig]
	// index is the index writes maintain and queries may use (index.go).
	index atomic.Pointer[indexState]
	// complete remembers which partitions, at which LSN, have an index
	// entry on a path for every item (order.go).
	complete completeCache

	// splitMu makes splits of the container decided one at a time.
	splitMu sync.Mutex
	// scriptMu orders the changes to the container's scripts.
	scriptMu sync.Mutex
	// programs caches compiled scripts by kind, id and version (script.go).
	programs programCache

	// deleting is set, under e.mu, while the container's deletion is
	// committed: the record of acknowledged LSNs leaves it out.
	deleting bool
	// recordMu orders changes of the record through the catalog
	// (lockRecord), where c.mu cannot be held across their commit.
	recordMu sync.Mutex

	mu sync.RWMutex
	// pmap is the partition map; parts[i] is the partition of pmap.At(i).
	pmap    partition.Map
	parts   []*Partition
	retired []*Partition // split partitions whose loops forward to children
	stopped bool         // stop was called: partitions swapped in stop at once
	// sharedRUs is this container's share of its database's throughput when
	// it has none of its own (set by Engine.refreshRates).
	sharedRUs float64
}

// newApplyCtx derives what apply needs of a container from its record.
func newApplyCtx(info ContainerInfo) (applyCtx, error) {
	rid, err := decodeRid(info.Rid)
	if err != nil || len(rid) != storage.RidLen {
		// The rid of a created container comes from encodeRid; one read
		// back from the catalog that does not decode is damaged.
		return applyCtx{}, corrupt("the record of container %q has a malformed rid %q", info.ID, info.Rid)
	}
	ac := applyCtx{self: "dbs/" + encodeRid(rid[:4]) + "/colls/" + info.Rid + "/docs/", record: storage.ContainerKey(info.DB, info.ID), text: newTextConfig(info)}
	copy(ac.rid[:], rid)
	if info.SyntheticKey != "" {
		if ac.synth, err = compileSynthetic(info.SyntheticKey, info.PartitionKey); err != nil {
			return applyCtx{}, fmt.Errorf("container %q: %w", info.ID, err)
		}
	}
	for _, p := range info.PartitionKey.Paths {
		ac.paths = append(ac.paths, epk.SplitPath(p))
	}
	return ac, nil
}

// readPartition reads the durable state of partition r of the container
// whose record is info: its state record, and its index record (for a
// store written before partitions had one, the record's generation and
// policy, which its writes maintained).
func readPartition(rd stateReader, rid [storage.RidLen]byte, info ContainerInfo, r RangeInfo) (partState, *indexState, error) {
	var st partState
	v, err := rd.Get(nil, storage.PartitionKey(rid, r.ID))
	switch {
	case err == storage.ErrNotFound:
	case err != nil:
		return st, nil, fmt.Errorf("cannot read partition %s of container %q: %w", r.ID, info.ID, err)
	default:
		if st, err = decodePartState(r.ID, v); err != nil {
			return st, nil, fmt.Errorf("cannot open container %q: %w", info.ID, err)
		}
	}
	gen, policy := info.IndexGen, []byte(info.IndexingPolicy)
	v, err = rd.Get(nil, storage.PartitionIndexKey(rid, r.ID))
	switch {
	case err == storage.ErrNotFound:
	case err != nil:
		return st, nil, fmt.Errorf("cannot read partition %s of container %q: %w", r.ID, info.ID, err)
	default:
		if gen, policy, err = decodeIndexRecord(r.ID, v); err != nil {
			return st, nil, fmt.Errorf("cannot open container %q: %w", info.ID, err)
		}
	}
	pol, err := index.Compile(policy)
	if err != nil {
		return st, nil, corrupt("partition %s of container %q has an invalid indexing policy: %v", r.ID, info.ID, err)
	}
	return st, &indexState{gen: gen, policy: pol}, nil
}

func (e *Engine) openContainer(info ContainerInfo) (*Container, error) {
	ac, err := newApplyCtx(info)
	if err != nil {
		return nil, err
	}
	c := &Container{e: e, def: info.PartitionKey, fixed: info.Fixed, rid: ac.rid, paths: ac.paths, synth: ac.synth, ac: ac}
	c.scanPaths = c.paths[:len(c.paths):len(c.paths)]
	if c.synth != nil {
		c.scanPaths = append(c.scanPaths, c.synth.Segments()...)
	}
	c.storeLimits = Limits{LogicalBytes: e.opts.LogicalPartitionMaxBytes}
	if c.fixed {
		c.storeLimits.PartitionBytes = e.opts.FixedMaxBytes
	}
	c.setInfo(info)
	if c.pmap, err = partition.New(info.Ranges); err != nil {
		return nil, fmt.Errorf("container %q: %w", info.ID, err)
	}
	for i := range c.pmap.Len() {
		r := c.pmap.At(i)
		p := &Partition{c: c, info: r}
		if p.state, p.ix, err = readPartition(e.store, c.rid, info, r); err != nil {
			return nil, err
		}
		p.lsn.Store(p.state.LSN)
		c.parts = append(c.parts, p)
	}
	c.startNewPartitions(e.opts.Now())
	if err := c.initIndex(info); err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

// startNewPartitions starts the apply loop of every partition not yet
// started. The caller holds c.mu or owns c exclusively. Rates are set by
// Engine.refreshRates.
func (c *Container) startNewPartitions(now time.Time) {
	for _, p := range c.parts {
		if p.queue == nil {
			p.start(c.partitionRate(len(c.parts)), now)
		}
	}
}

// partitionRate is the RU/s budget of one of n partitions, from the
// container's own throughput or its database's shared throughput.
func (c *Container) partitionRate(n int) float64 {
	info := c.Info()
	t := float64(info.Throughput)
	if info.AutoscaleMax > 0 {
		t = float64(info.AutoscaleMax) // autoscale scales up instantly to its maximum
	}
	if t == 0 {
		t = c.sharedRUs
	}
	if n == 0 {
		return t
	}
	return t / float64(n)
}

func (c *Container) applyCtx(p *Partition) *applyCtx {
	ac := c.ac
	ac.index = p.ix
	ac.text = c.text.Load()
	return &ac
}

// stop ends every partition's apply loop, retired ones included, and waits.
// It does not hold c.mu while it waits: a loop may need it to finish (a
// split's swap takes it, in the partition's loop or the replication
// host's, which a replicated partition's loop waits for). Children a split
// swaps in after this are stopped at once (swapChildren).
func (c *Container) stop() {
	c.mu.Lock()
	c.stopped = true
	all := append(append([]*Partition(nil), c.parts...), c.retired...)
	c.mu.Unlock()
	for _, p := range all {
		close(p.quit)
	}
	for _, p := range all {
		<-p.done
		c.e.groups.CompareAndDelete(p.GroupID(), p)
	}
}

// deleteInto records the deletion of all the container's data in m.
func (c *Container) deleteInto(m *catalogBatch) {
	info := c.Info()
	m.delete(storage.ContainerKey(info.DB, info.ID))
	m.deleteRange(storage.ContainerItemsSpan(c.rid))
	m.deleteRange(storage.ContainerPartitionsSpan(c.rid))
	m.deleteRange(storage.LogicalSpan(c.rid, "", ""))
	m.deleteRange(storage.IndexGenerationsSpan(c.rid, 0, 0))
	m.deleteRange(storage.ContainerChangesSpan(c.rid))
	m.deleteRange(storage.ContainerVersionsSpan(c.rid))
	m.deleteRange(storage.ContainerRidsSpan(c.rid))
	m.deleteRange(storage.ScriptsSpan(c.rid))
	m.deleteRange(storage.ContainerTextSpan(c.rid))
}

// epkOf hashes a resolved key. Every item of a fixed container has the empty
// key, whose EPK is the minimum.
func (c *Container) epkOf(k epk.Key) (string, error) {
	if c.fixed {
		return epk.MinEPK, nil
	}
	e, err := c.def.EPK(k)
	if err != nil {
		return "", badRequest("cannot hash the partition key: %v", err)
	}
	return e, nil
}

// Info returns a copy of the container's record.
func (c *Container) Info() ContainerInfo { return *c.info.Load() }

func (c *Container) setInfo(info ContainerInfo) {
	c.text.Store(newTextConfig(info))
	c.info.Store(&info)
}

// Definition is the container's partition key definition.
func (c *Container) Definition() epk.Definition { return c.def }

// Partitions returns the current partitions, ordered by range.
func (c *Container) Partitions() []*Partition {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return append([]*Partition(nil), c.parts...)
}

// numPartitions returns how many partitions c has.
func (c *Container) numPartitions() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.parts)
}

// PartitionFor returns the partition whose range holds the EPK.
func (c *Container) PartitionFor(epkHex string) *Partition {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.parts[c.pmap.Locate(epkHex)]
}

// routing returns the partition map and its partitions (parts[i] holds
// m.At(i)) as one consistent snapshot. The caller must not modify parts.
func (c *Container) routing() (m partition.Map, parts []*Partition) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.pmap, c.parts
}

// PartitionByID returns the current partition with the range id, or
// ErrPartitionGone if no current partition has it.
func (c *Container) PartitionByID(id string) (*Partition, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, p := range c.parts {
		if p.info.ID == id {
			return p, nil
		}
	}
	return nil, fmt.Errorf("%w: partition key range %q is not a current range of container %q", ErrPartitionGone, id, c.Info().ID)
}

// Usage returns the container's committed item count and stored bytes,
// summed over its partitions.
func (c *Container) Usage() (items, bytes int64) {
	for _, p := range c.Partitions() {
		items += p.items.Load()
		bytes += p.bytes.Load()
	}
	return items, bytes
}

// MaxBytes is the most the container may store (a fixed container's
// limit), or 0 for no limit.
func (c *Container) MaxBytes() int64 { return c.storeLimits.PartitionBytes }
