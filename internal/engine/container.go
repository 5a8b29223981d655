package engine

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/parsecdb/parsec/internal/epk"
	"github.com/parsecdb/parsec/internal/storage"
)

// Container is an open container: its record, its partition map, and its
// partitions' apply loops. It is safe for concurrent use.
type Container struct {
	e     *Engine
	rid   [storage.RidLen]byte
	def   epk.Definition
	paths [][]string
	ac    applyCtx

	info atomic.Pointer[ContainerInfo]

	mu    sync.RWMutex
	parts []*Partition // ordered by range; they cover ""..."FF"
}

func (e *Engine) openContainer(info ContainerInfo) (*Container, error) {
	rid, err := decodeRid(info.Rid)
	if err != nil || len(rid) != storage.RidLen {
		return nil, fmt.Errorf("BUG: container %q has a malformed rid %q", info.ID, info.Rid)
	}
	c := &Container{e: e, def: info.PartitionKey}
	copy(c.rid[:], rid)
	for _, p := range info.PartitionKey.Paths {
		c.paths = append(c.paths, epk.SplitPath(p))
	}
	dbRid := encodeRid(rid[:4])
	c.ac = applyCtx{rid: c.rid, self: "dbs/" + dbRid + "/colls/" + info.Rid + "/docs/", paths: c.paths}
	c.info.Store(&info)
	for _, r := range info.Ranges {
		p := &Partition{c: c, info: r}
		v, err := e.store.Get(nil, storage.PartitionKey(c.rid, r.ID))
		switch {
		case err == storage.ErrNotFound:
		case err != nil:
			return nil, fmt.Errorf("cannot read partition %s of container %q: %w", r.ID, info.ID, err)
		default:
			if p.state, err = decodePartState(v); err != nil {
				return nil, err
			}
		}
		p.lsn.Store(p.state.LSN)
		c.parts = append(c.parts, p)
	}
	sort.Slice(c.parts, func(i, j int) bool { return c.parts[i].info.Min < c.parts[j].info.Min })
	for _, p := range c.parts {
		p.start()
	}
	return c, nil
}

func (c *Container) applyCtx() *applyCtx { return &c.ac }

// stop ends every partition's apply loop and waits for it.
func (c *Container) stop() {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, p := range c.parts {
		close(p.quit)
	}
	for _, p := range c.parts {
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
	i := sort.Search(len(c.parts), func(i int) bool { return c.parts[i].info.Max > epkHex || c.parts[i].info.Max == "FF" })
	if i == len(c.parts) {
		panic(fmt.Sprintf("BUG: EPK %s is outside the partition map", epkHex))
	}
	return c.parts[i]
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
