package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"strconv"

	"github.com/parsecdb/parsec/internal/partition"
	"github.com/parsecdb/parsec/internal/storage"
)

// A split replaces one partition by children that divide its range. It is a
// metadata change: items are keyed by EPK, so each child's items are already
// one contiguous span, and nothing moves. The split runs as a command in the
// parent's apply loop, after every write queued before it, so the children
// start from the parent's exact state; the command carries everything
// decided outside it (boundaries, child range ids, the map's sequence
// number), so a replica that applies the same log makes the same split. Afterwards the parent's loop forwards requests that still
// reach it to the owning child, and answers 410 (partition key range gone) to
// requests that named the parent's range id.

// splitPartition splits p at the given interior boundaries and waits until
// the split is durable. The command is decided here, before it is queued:
// the children's range ids and the partition map's sequence number. Splits
// of one container are decided one at a time, so that each one's children
// get fresh range ids.
func (c *Container) splitPartition(p *Partition, bounds []string) ([]RangeInfo, error) {
	c.splitMu.Lock()
	defer c.splitMu.Unlock()
	if _, err := partition.SplitBounds(p.Range(), bounds); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	if err := c.e.log.CanSplit(p.GroupID()); err != nil {
		return nil, fmt.Errorf("%w: partition key range %s cannot split now: %w", ErrUnavailable, p.ID(), err)
	}
	seq, err := c.e.seq.take(1)
	if err != nil {
		return nil, err
	}
	cmd := &SplitCommand{Range: p.ID(), Bounds: bounds, FirstChild: c.Info().NextRangeID, RangesSeq: seq}
	r := &request{cmd: &Command{Split: cmd}, named: true}
	_, err = p.submit(r)
	return r.children, err
}

// swapChildren puts the children of a committed split in p's place. New
// requests route to them from now on; requests already queued on p are
// forwarded by p's loop. The caller, p's loop, holds c.mu.
func (p *Partition) swapChildren(sr *splitResult) {
	c := p.c
	info := c.Info()
	info.Ranges, info.NextRangeID, info.RangesSeq = sr.info.Ranges, sr.info.NextRangeID, sr.info.RangesSeq
	pmap, err := partition.New(info.Ranges)
	if err != nil {
		// applySplit made the map with partition.Map.Split, which checks it.
		panic("BUG: the partition map after a split is invalid: " + err.Error())
	}
	var parts, kids []*Partition
	for _, q := range c.parts {
		if q != p {
			parts = append(parts, q)
			continue
		}
		for i, ch := range sr.children {
			cp := &Partition{c: c, info: ch, state: sr.states[i], ix: p.ix}
			cp.lsn.Store(sr.states[i].LSN)
			parts = append(parts, cp)
			kids = append(kids, cp)
		}
	}
	c.pmap, c.parts = pmap, parts
	c.retired = append(c.retired, p)
	c.info.Store(&info)
	c.startNewPartitions(c.e.opts.Now())
	if c.stopped {
		// The container is being deleted, and stop has already listed
		// its partitions: the children's loops end by themselves.
		for _, cp := range kids {
			close(cp.quit)
		}
	}
	p.retired.Store(true)
	go c.e.refreshRates()
	log.Printf("parsec: container %s/%s: partition key range %s split into %d ranges (%v)", info.DB, info.ID, p.info.ID, len(sr.children), sr.children)
}

// applySplit applies a split of partition rangeID, whose state with the
// split's LSN is st, into b: the children's state and index records (the
// children start at st's LSN) replace the parent's, and the container
// record gets the new partition map. It reads the committed
// store, which a split, applied alone, finds as the commands before it
// left it. It returns the new container record, the children and their
// states.
func applySplit(rd stateReader, b *storage.Batch, ac *applyCtx, rangeID string, st partState, cmd *SplitCommand) (ContainerInfo, []RangeInfo, []partState, error) {
	var info ContainerInfo
	if cmd.Range != rangeID {
		return info, nil, nil, internalError("a split of range %s reached range %s", cmd.Range, rangeID)
	}
	v, err := rd.Get(nil, ac.record)
	if err != nil {
		return info, nil, nil, fmt.Errorf("%w: cannot read the container record: %v", ErrUnavailable, err)
	}
	if err := json.Unmarshal(v, &info); err != nil {
		return info, nil, nil, corrupt("the container record %x does not decode: %v", ac.record, err)
	}
	pmap, err := partition.New(info.Ranges)
	if err == nil {
		pmap, _, err = pmap.Split(rangeID, cmd.Bounds, cmd.FirstChild)
	}
	if err != nil {
		return info, nil, nil, fmt.Errorf("%w: cannot split partition key range %s: %v", ErrBadRequest, rangeID, err)
	}
	i, _ := pmap.Index(strconv.Itoa(cmd.FirstChild))
	children := pmap.Ranges()[i : i+len(cmd.Bounds)+1]

	// Each child's size, from the logical partition records in its span.
	states := make([]partState, len(children))
	for i, ch := range children {
		lo, hi := storage.LogicalSpan(ac.rid, ch.Min, openMax(ch.Max))
		err := rd.Iterate(lo, hi, func(k, v []byte) (bool, error) {
			ls, err := decodeLogicalState(k, v)
			states[i].Items += ls.Items
			states[i].Bytes += ls.Bytes
			return true, err
		})
		if errors.Is(err, ErrCorrupt) {
			return info, nil, nil, err // no retry mends it: not a 503
		}
		if err != nil {
			return info, nil, nil, fmt.Errorf("%w: cannot size the split: %v", ErrUnavailable, err)
		}
		states[i].LSN = st.LSN
	}

	ixRec, err := rd.Get(nil, storage.PartitionIndexKey(ac.rid, rangeID))
	if err != nil && err != storage.ErrNotFound {
		return info, nil, nil, fmt.Errorf("%w: cannot read the index record: %v", ErrUnavailable, err)
	}
	info.Ranges = pmap.Ranges()
	info.NextRangeID = max(info.NextRangeID, cmd.FirstChild+len(children))
	// The highest, like NextRangeID: replicas may apply the splits of
	// different partitions (different raft groups) in different orders,
	// and must end with the same record. Locally the command's is always
	// the highest (splits are decided one at a time).
	info.RangesSeq = max(info.RangesSeq, cmd.RangesSeq)
	rec, err := encodeContainer(info)
	if err != nil {
		return info, nil, nil, err
	}
	textStats, err := splitText(rd, ac.rid, rangeID, children, states)
	if errors.Is(err, ErrCorrupt) {
		return info, nil, nil, err
	}
	if err != nil {
		return info, nil, nil, fmt.Errorf("%w: cannot split the full-text statistics: %v", ErrUnavailable, err)
	}
	// Nothing fails from here on: the writes into b.
	for i, ch := range children {
		_ = b.Set(storage.PartitionKey(ac.rid, ch.ID), states[i].encode())
		if ixRec != nil {
			_ = b.Set(storage.PartitionIndexKey(ac.rid, ch.ID), ixRec)
		}
	}
	_ = b.Delete(storage.PartitionKey(ac.rid, rangeID))
	_ = b.Delete(storage.PartitionIndexKey(ac.rid, rangeID))
	_ = b.DeleteRange(storage.TextPartitionStatsSpan(ac.rid, rangeID))
	for _, kv := range textStats {
		_ = b.Set(kv.Key, kv.Value)
	}
	_ = b.Set(ac.record, rec)
	return info, children, states, nil
}

// maybeSplitForStorage starts a split of p in the background when it has
// grown past the storage limit. Called by p's loop after each commit.
func (c *Container) maybeSplitForStorage(p *Partition) {
	if c.e.opts.manualStorageSplits || !c.storageSplitNeeded(p) || !p.splitting.CompareAndSwap(false, true) {
		return
	}
	if c.e.logKeepsEntries() {
		// Not in a cluster yet: the children's range ids, and so their
		// raft groups, are minted by the partition's leader from the
		// container record it has applied, so two partitions of one
		// container splitting at once on different leaders could mint
		// the same ids. Storage splits wait for the partition map to have
		// one owner that allocates them; throughput splits, decided by
		// the one node that changes the throughput, are unaffected.
		p.splitting.Store(false)
		return
	}
	go func() {
		// Apply the container's committed splits first: the children's
		// range ids come from the record they leave.
		ctx, cancel := context.WithTimeout(context.Background(), proposeTimeout)
		err := c.e.log.Barrier(ctx, c.groupIDs())
		cancel()
		if err != nil {
			p.splitting.Store(false)
			log.Printf("parsec: container %s: cannot split partition key range %s for storage now: %v", c.Info().ID, p.info.ID, err)
			return
		}
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
