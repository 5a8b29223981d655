package engine

import (
	"bytes"
	"errors"
	"fmt"
	"log"

	"github.com/parsecdb/parsec/internal/epk"
	"github.com/parsecdb/parsec/internal/partition"
	"github.com/parsecdb/parsec/internal/storage"
)

// A split replaces one partition by children that divide its range. It is a
// metadata change: items are keyed by EPK, so each child's items are already
// one contiguous span, and nothing moves. The split runs as a command in the
// parent's apply loop, after every write queued before it, so the children
// start from the parent's exact state (and a replicated log can later carry
// the same command). Afterwards the parent's loop forwards requests that still
// reach it to the owning child, and answers 410 (partition key range gone) to
// requests that named the parent's range id.

// splitSpec says where to cut: Bounds are the interior boundaries, in order.
type splitSpec struct {
	Bounds []string
	// result reports the children's range ids once the split is durable.
	children []RangeInfo
}

// splitPartition splits p at the given interior boundaries and waits until
// the split is durable.
func (c *Container) splitPartition(p *Partition, bounds []string) ([]RangeInfo, error) {
	spec := &splitSpec{Bounds: bounds}
	_, err := p.submit(&request{cmd: &Command{Split: spec}, named: true})
	return spec.children, err
}

// split executes a split command inside p's loop.
func (p *Partition) split(r *request) {
	spec := r.cmd.Split
	r.err = p.doSplit(spec)
	close(r.done)
}

func (p *Partition) doSplit(spec *splitSpec) error {
	c := p.c
	ac := c.applyCtx()
	bounds, err := partition.SplitBounds(p.info, spec.Bounds)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	// Each child's size, from the logical partition records in its span.
	n := len(bounds) - 1
	states := make([]partState, n)
	for i := 0; i < n; i++ {
		max := bounds[i+1]
		if max == epk.MaxEPK {
			max = ""
		}
		lo, hi := storage.LogicalSpan(ac.rid, bounds[i], max)
		err := c.e.store.Iterate(lo, hi, func(k, v []byte) (bool, error) {
			ls, err := decodeLogicalState(k, v)
			states[i].Items += ls.Items
			states[i].Bytes += ls.Bytes
			return true, err
		})
		if errors.Is(err, ErrCorrupt) {
			return err // no retry mends it: not a 503
		}
		if err != nil {
			return fmt.Errorf("%w: cannot size the split: %v", ErrUnavailable, err)
		}
		states[i].LSN = p.state.LSN
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	info := c.Info()
	pmap, children, err := c.pmap.Split(p.info.ID, spec.Bounds, info.NextRangeID)
	if err != nil {
		// The bounds were checked against p, and p is in the map while its
		// loop runs a split. Not a panic: this loop recovers none.
		return internalError("cannot split partition key range %s: %v", p.info.ID, err)
	}
	info.NextRangeID += len(children)
	info.Ranges = pmap.Ranges()
	seq, err := c.e.seq.take(1)
	if err != nil {
		return err
	}
	info.RangesSeq = seq
	b := c.e.store.NewBatch()
	for i, ch := range children {
		_ = b.Set(storage.PartitionKey(ac.rid, ch.ID), states[i].encode())
	}
	_ = b.Delete(storage.PartitionKey(ac.rid, p.info.ID))
	v, err := encodeContainer(info)
	if err != nil {
		b.Discard()
		return err
	}
	_ = b.Set(storage.ContainerKey(info.DB, info.ID), v)
	if err := b.Commit(); err != nil {
		return fmt.Errorf("%w: cannot commit split: %v", ErrUnavailable, err)
	}

	// Swap the children in. New requests route to them from now on; requests
	// already queued on p are forwarded by p's loop.
	now := c.e.opts.Now()
	var parts []*Partition
	for _, q := range c.parts {
		if q != p {
			parts = append(parts, q)
			continue
		}
		for i, ch := range children {
			cp := &Partition{c: c, info: ch, state: states[i]}
			cp.lsn.Store(states[i].LSN)
			parts = append(parts, cp)
		}
	}
	c.pmap, c.parts = pmap, parts
	c.retired = append(c.retired, p)
	c.info.Store(&info)
	c.startNewPartitions(now)
	p.retired.Store(true)
	go c.e.refreshRates()
	spec.children = children
	log.Printf("parsec: container %s/%s: partition key range %s split into %d ranges (%v)", info.DB, info.ID, p.info.ID, n, children)
	return nil
}

// maybeSplitForStorage starts a split of p in the background when it has
// grown past the storage limit. Called by p's loop after each commit.
func (c *Container) maybeSplitForStorage(p *Partition) {
	if c.e.opts.manualStorageSplits || !c.storageSplitNeeded(p) || !p.splitting.CompareAndSwap(false, true) {
		return
	}
	go func() {
		children, err := c.splitForStorage(p)
		if err != nil {
			log.Printf("parsec: container %s: cannot split partition key range %s for storage: %v", c.Info().ID, p.info.ID, err)
		}
		if err != nil || len(children) == 0 {
			// Try again only after the partition has grown further.
			p.splitting.Store(false)
		}
	}()
}

// storageSplitNeeded reports whether p is past the storage limit and must
// split (partition.StorageSplitNeeded).
func (c *Container) storageSplitNeeded(p *Partition) bool {
	return partition.StorageSplitNeeded(p.bytes.Load(), c.e.opts.PartitionMaxBytes, c.fixed)
}

// splitForStorage splits p in two at the median of its logical partitions'
// sizes (medianBound) and waits until the split is durable. It returns the
// children, or none when p holds a single EPK and cannot split. It does not
// check the storage limit: maybeSplitForStorage runs it in the background
// when p is past it, and tests call it directly.
func (c *Container) splitForStorage(p *Partition) ([]RangeInfo, error) {
	bound, ok, err := c.medianBound(p)
	if err != nil || !ok {
		return nil, err
	}
	return c.splitPartition(p, []string{bound})
}

// medianBound reads the sizes of p's logical partitions and returns the EPK
// at which p splits in half (partition.MedianBound). ok is false when p
// holds a single EPK and cannot split.
func (c *Container) medianBound(p *Partition) (string, bool, error) {
	lo, hi := storage.LogicalSpan(c.rid, p.info.Min, openMax(p.info.Max))
	var sizes []partition.Logical
	err := c.e.store.Iterate(lo, hi, func(k, v []byte) (bool, error) {
		ls, err := decodeLogicalState(k, v)
		if err != nil {
			return false, err
		}
		e := k[1+storage.RidLen : bytes.IndexByte(k[1+storage.RidLen:], 0)+1+storage.RidLen]
		if n := len(sizes); n > 0 && sizes[n-1].EPK == string(e) {
			sizes[n-1].Bytes += ls.Bytes // another key of the same EPK: no new string
		} else {
			sizes = append(sizes, partition.Logical{EPK: string(e), Bytes: ls.Bytes})
		}
		return true, nil
	})
	if err != nil {
		return "", false, err
	}
	bound, ok := partition.MedianBound(sizes)
	return bound, ok, nil
}
