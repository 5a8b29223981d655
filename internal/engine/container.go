package engine

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parsecdb/parsec/internal/epk"
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
	// synth is the declared synthetic partition key, or nil (synthetic.go).
	synth *synthkey.Expr
	// fixed marks a container created without a partition key: one
	// partition, capped in throughput and storage, never split.
	fixed bool

	info atomic.Pointer[ContainerInfo]
	// index is the index writes maintain and queries may use (index.go).
	index atomic.Pointer[indexState]
	// complete remembers which partitions, at which LSN, have an index
	// entry on a path for every item (order.go).
	complete completeCache

	mu sync.RWMutex
	// pmap is the partition map; parts[i] is the partition of pmap.At(i).
	pmap    partition.Map
	parts   []*Partition
	retired []*Partition // split partitions whose loops forward to children
	// sharedRUs is this container's share of its database's throughput when
	// it has none of its own (set by Engine.refreshRates).
	sharedRUs float64
}

func (e *Engine) openContainer(info ContainerInfo) (*Container, error) {
	rid, err := decodeRid(info.Rid)
	if err != nil || len(rid) != storage.RidLen {
		// The rid of a created container comes from encodeRid; one read
		// back from the catalog that does not decode is damaged.
		return nil, corrupt("the record of container %q has a malformed rid %q", info.ID, info.Rid)
	}
	c := &Container{e: e, def: info.PartitionKey, fixed: info.Fixed}
	if info.SyntheticKey != "" {
		if c.synth, err = compileSynthetic(info.SyntheticKey, info.PartitionKey); err != nil {
			return nil, fmt.Errorf("container %q: %w", info.ID, err)
		}
	}
	copy(c.rid[:], rid)
	for _, p := range info.PartitionKey.Paths {
		c.paths = append(c.paths, epk.SplitPath(p))
	}
	c.scanPaths = c.paths[:len(c.paths):len(c.paths)]
	if c.synth != nil {
		c.scanPaths = append(c.scanPaths, c.synth.Segments()...)
	}
	dbRid := encodeRid(rid[:4])
	c.ac = applyCtx{rid: c.rid, self: "dbs/" + dbRid + "/colls/" + info.Rid + "/docs/", paths: c.paths, synth: c.synth,
		maxLogicalBytes: e.opts.LogicalPartitionMaxBytes}
	if c.fixed {
		c.ac.maxPartitionBytes = e.opts.FixedMaxBytes
	}
	c.info.Store(&info)
	if c.pmap, err = partition.New(info.Ranges); err != nil {
		return nil, fmt.Errorf("container %q: %w", info.ID, err)
	}
	for i := range c.pmap.Len() {
		r := c.pmap.At(i)
		p := &Partition{c: c, info: r}
		v, err := e.store.Get(nil, storage.PartitionKey(c.rid, r.ID))
		switch {
		case err == storage.ErrNotFound:
		case err != nil:
			return nil, fmt.Errorf("cannot read partition %s of container %q: %w", r.ID, info.ID, err)
		default:
			if p.state, err = decodePartState(r.ID, v); err != nil {
				return nil, fmt.Errorf("cannot open container %q: %w", info.ID, err)
			}
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

func (c *Container) applyCtx() *applyCtx {
	ac := c.ac
	ac.index = c.index.Load()
	return &ac
}

// stop ends every partition's apply loop, retired ones included, and waits.
func (c *Container) stop() {
	c.mu.RLock()
	defer c.mu.RUnlock()
	all := append(append([]*Partition(nil), c.parts...), c.retired...)
	for _, p := range all {
		close(p.quit)
	}
	for _, p := range all {
		<-p.done
	}
}

// deleteInto records the deletion of all the container's data in b.
func (c *Container) deleteInto(b *storage.Batch) {
	info := c.Info()
	_ = b.Delete(storage.ContainerKey(info.DB, info.ID))
	lo, hi := storage.ContainerItemsSpan(c.rid)
	_ = b.DeleteRange(lo, hi)
	lo, hi = storage.ContainerPartitionsSpan(c.rid)
	_ = b.DeleteRange(lo, hi)
	lo, hi = storage.LogicalSpan(c.rid, "", "")
	_ = b.DeleteRange(lo, hi)
	lo, hi = storage.IndexGenerationsSpan(c.rid, 0, 0)
	_ = b.DeleteRange(lo, hi)
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

func (c *Container) setInfo(info ContainerInfo) { c.info.Store(&info) }

// Definition is the container's partition key definition.
func (c *Container) Definition() epk.Definition { return c.def }

// Partitions returns the current partitions, ordered by range.
func (c *Container) Partitions() []*Partition {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return append([]*Partition(nil), c.parts...)
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
