package engine

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"

	"github.com/parsecdb/parsec/internal/binfmt"
	"github.com/parsecdb/parsec/internal/index"
	"github.com/parsecdb/parsec/internal/storage"
)

// A range snapshot is the whole state of one physical partition, read from
// one Pebble snapshot and streamed in chunks of bounded size: what a new or
// lagging replica of the range installs instead of replaying a log it no
// longer has. It holds every key the range owns:
//
//   - its records (P): the partition state (LSN, sequence numbers, counts),
//     its index record (generation and policy) and its outcome table
//     (outcome.go);
//   - its logical-partition records (L) and items (D): the range's EPK span
//     of each;
//   - the index entries (I) of its items, in every generation the container
//     has. They are keyed by container and term, not by range, so they are
//     found by reading the container's entries and keeping those whose item
//     lies in the range: a snapshot costs a pass over the container's index;
//   - the change-index, version-log and resource-id entries (C, V, R) of the
//     sequence-number blocks of its lineage (its parents' and its own) that
//     name items of its EPK range: a parent's blocks also hold its other
//     children's entries.
//
// The catalog (the container record, scripts) is not part of it: that is
// the catalog's to replicate. rangeSections is the one definition of which
// keys a range owns, used to read them, to clear them from a replica before
// a snapshot is installed, and by the test that checks that the snapshots of
// a container's ranges hold its whole state, each key once.

// A section is a key span and, when not every key of it is the range's, a
// test of whether a key belongs to it.
type section struct {
	lo, hi []byte
	keep   func(k, v []byte) (bool, error)
}

// rangeSections returns the sections of the keys range r of container rid
// owns, in key order within each.
func rangeSections(rid [storage.RidLen]byte, r RangeInfo) ([]section, error) {
	min, max := r.Min, openMax(r.Max)
	inRange := func(itemKey []byte) bool {
		e, _, ok := storage.SplitItemKey(itemKey)
		return ok && string(e) >= min && (max == "" || string(e) < max)
	}
	one := func(k []byte) section { return section{lo: k, hi: append(bytes.Clone(k), 0)} }
	var out []section
	out = append(out, one(storage.PartitionKey(rid, r.ID)), one(storage.PartitionIndexKey(rid, r.ID)))
	oLo, oHi, tLo, tHi := storage.PartitionOutcomeSpans(rid, r.ID)
	out = append(out, section{lo: oLo, hi: oHi}, section{lo: tLo, hi: tHi})
	lo, hi := storage.LogicalSpan(rid, min, max)
	out = append(out, section{lo: lo, hi: hi})
	lo, hi = storage.ItemSpan(rid, min, max)
	out = append(out, section{lo: lo, hi: hi})
	lo, hi = storage.IndexGenerationsSpan(rid, 0, 0)
	out = append(out, section{lo: lo, hi: hi, keep: func(k, _ []byte) (bool, error) {
		rest := k[len(lo):] // lo is the prefix of generation 0: as long as any generation's
		n := index.TermLen(rest)
		if n < 0 {
			return false, corrupt("index entry %x has a term that does not decode", k)
		}
		return inRange(storage.AppendItemKeyFromSuffix(nil, rid, rest[n:])), nil
	}})
	blocks, err := appendLineage(nil, r)
	if err != nil {
		return nil, err
	}
	byValue := func(k, v []byte) (bool, error) { return inRange(v), nil }
	byVersion := func(k, v []byte) (bool, error) {
		ver, err := decodeVersion(k, v)
		return err == nil && inRange(ver.itemKey), err
	}
	for _, fam := range []struct {
		key  func([]byte, [storage.RidLen]byte, uint64) []byte
		keep func(k, v []byte) (bool, error)
	}{{storage.ChangeKey, byValue}, {storage.VersionKey, byVersion}, {storage.RidKey, byValue}} {
		for _, num := range blocks {
			start := seqPartitionBit | num<<seqCountBits
			out = append(out, section{lo: fam.key(nil, rid, start), hi: fam.key(nil, rid, start+1<<seqCountBits), keep: fam.keep})
		}
	}
	// Key order across sections, so that a snapshot's keys come in order
	// (a replica writes them into one sorted table); the sections are
	// disjoint.
	slices.SortFunc(out, func(a, b section) int { return bytes.Compare(a.lo, b.lo) })
	return out, nil
}

// RangeSnapshot streams a range's state (see rangeSections).
type RangeSnapshot struct {
	// Range and LSN are the range and the last LSN applied in the state.
	Range RangeInfo
	LSN   uint64
	snap  *PartitionSnapshot
	secs  []section
	sec   int
	from  []byte // where the section being read resumes
}

// SnapshotRange returns a snapshot of the current range rangeID, or
// ErrPartitionGone when it has split. Its reads see one point in time,
// whatever is written meanwhile; Close releases it.
func (c *Container) SnapshotRange(rangeID string) (*RangeSnapshot, error) {
	p, err := c.PartitionByID(rangeID)
	if err != nil {
		return nil, err
	}
	snap, err := p.Snapshot()
	if err != nil {
		return nil, err
	}
	secs, err := rangeSections(c.rid, snap.Range)
	if err != nil {
		snap.Close()
		return nil, err
	}
	return &RangeSnapshot{Range: snap.Range, LSN: snap.LSN, snap: snap, secs: secs}, nil
}

// Next returns the next chunk, of about maxBytes (at least one key), or nil
// once every key has been returned. A chunk is the keys and values in
// order, each a uvarint length and its bytes; ApplyRangeChunk writes one.
func (s *RangeSnapshot) Next(maxBytes int) ([]byte, error) {
	var out []byte
	for s.sec < len(s.secs) {
		sec := s.secs[s.sec]
		lo := sec.lo
		if s.from != nil {
			lo = s.from
		}
		full := false
		err := s.snap.Iterate(lo, sec.hi, func(k, v []byte) (bool, error) {
			if len(out) > 0 && len(out) >= maxBytes {
				s.from, full = bytes.Clone(k), true
				return false, nil
			}
			if sec.keep != nil {
				if ok, err := sec.keep(k, v); err != nil || !ok {
					return err == nil, err
				}
			}
			out = binfmt.AppendString(binfmt.AppendString(out, string(k)), string(v))
			return true, nil
		})
		if errors.Is(err, ErrCorrupt) {
			return nil, err
		}
		if err != nil {
			return nil, fmt.Errorf("%w: cannot read the range snapshot: %v", ErrUnavailable, err)
		}
		if full {
			return out, nil
		}
		s.sec, s.from = s.sec+1, nil
	}
	return out, nil
}

// Close releases the snapshot.
func (s *RangeSnapshot) Close() { s.snap.Close() }

// ClearRange deletes into b every key of store that range r of container
// rid owns: what a replica does before it installs a snapshot of the range.
func ClearRange(store *storage.DB, b *storage.Batch, rid [storage.RidLen]byte, r RangeInfo) error {
	secs, err := rangeSections(rid, r)
	if err != nil {
		return err
	}
	for _, sec := range secs {
		if sec.keep == nil {
			if err := b.DeleteRange(sec.lo, sec.hi); err != nil {
				return err
			}
			continue
		}
		err := store.Iterate(sec.lo, sec.hi, func(k, v []byte) (bool, error) {
			ok, err := sec.keep(k, v)
			if err == nil && ok {
				err = b.Delete(k)
			}
			return err == nil, err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// ApplyRangeChunk writes a chunk of a RangeSnapshot into b.
func ApplyRangeChunk(b *storage.Batch, chunk []byte) error {
	return eachChunkKey(chunk, b.Set)
}

// eachChunkKey calls fn with each key and value of a chunk.
func eachChunkKey(chunk []byte, fn func(k, v []byte) error) error {
	for len(chunk) > 0 {
		var kv [2][]byte
		for i := range kv {
			n, w := binary.Uvarint(chunk)
			if w <= 0 || uint64(len(chunk)-w) < n {
				return corrupt("a range snapshot chunk does not decode")
			}
			kv[i], chunk = chunk[w:w+int(n)], chunk[w+int(n):]
		}
		if err := fn(kv[0], kv[1]); err != nil {
			return err
		}
	}
	return nil
}

// Snapshots of replicated partitions (replication/host's SnapshotStreamer).
// A leader serves a replica the range's snapshot (OpenSnapshot); the
// replica writes the keys it receives, with its applied raft index, into a
// staged table of the store (StageSnapshot), invisible, and when raft
// installs the snapshot (InstallSnapshot), clears what the range held and
// ingests the table: the range's state changes at once, memory stays
// bounded by a chunk, and a crash between the two steps leaves the applied
// index absent, so the install is done again from the staged table.

// readView returns a storage snapshot for reading partitions' state: never
// one of a range whose snapshot is being installed.
func (e *Engine) readView() *storage.Snapshot {
	e.installMu.RLock()
	defer e.installMu.RUnlock()
	return e.store.NewSnapshot()
}

// OpenSnapshot captures the partition's state for a replica: a snapshot of
// the range as of the raft index applied.
func (p *Partition) OpenSnapshot() (*RangeSnapshot, error) {
	return p.c.SnapshotRange(p.info.ID)
}

// stagedPrefix starts the name of every staged snapshot of the
// partition's group.
func (p *Partition) stagedPrefix() string { return fmt.Sprintf("%016x-", p.GroupID()) }

// stagedName is the name of the partition's staged snapshot id.
func (p *Partition) stagedName(id []byte) string { return p.stagedPrefix() + hex.EncodeToString(id) }

// StageSnapshot writes the chunks next returns (an empty one ends them), a
// snapshot of the partition's range as of raft index index, into the staged
// table of snapshot id, replacing what was staged before.
func (p *Partition) StageSnapshot(id []byte, index uint64, next func() ([]byte, error)) error {
	store := p.c.e.store
	if err := store.RemoveStaged(p.stagedPrefix()); err != nil {
		return err
	}
	t, err := store.NewStagedTable(p.stagedName(id))
	if err != nil {
		return err
	}
	appliedKey := storage.PartitionAppliedKey(p.c.rid, p.info.ID)
	applied := binary.BigEndian.AppendUint64(nil, index)
	wrote := false
	set := func(k, v []byte) error {
		if !wrote && bytes.Compare(appliedKey, k) <= 0 {
			if bytes.Equal(appliedKey, k) {
				return corrupt("a snapshot of partition key range %s holds its applied index", p.info.ID)
			}
			if err := t.Set(appliedKey, applied); err != nil {
				return err
			}
			wrote = true
		}
		return t.Set(k, v)
	}
	for err == nil {
		var c []byte
		if c, err = next(); err == nil {
			if len(c) == 0 {
				break
			}
			err = eachChunkKey(c, set)
		}
	}
	if err == nil && !wrote {
		err = t.Set(appliedKey, applied)
	}
	if err == nil {
		err = t.Finish()
	} else {
		t.Abort()
	}
	if err != nil {
		_ = store.RemoveStaged(p.stagedPrefix())
		return fmt.Errorf("partition key range %s: staging a snapshot at raft index %d: %w", p.info.ID, index, err)
	}
	return nil
}

// DiscardStaged removes the partition's staged snapshots.
func (p *Partition) DiscardStaged() error { return p.c.e.store.RemoveStaged(p.stagedPrefix()) }

// InstallSnapshot makes the staged snapshot id, as of raft index index, the
// partition's state: it deletes what the range held (durably), ingests the
// staged table, and reloads the partition's state, which Publish makes
// current.
func (p *Partition) InstallSnapshot(index uint64, id []byte) error {
	p.repl.mu.Lock()
	defer p.repl.mu.Unlock()
	c, store := p.c, p.c.e.store
	name := p.stagedName(id)
	if !store.HasStaged(name) {
		return internalError("partition key range %s: the snapshot at raft index %d to install was not staged (%s)", p.info.ID, index, name)
	}
	c.e.installMu.Lock()
	defer c.e.installMu.Unlock()
	b := store.NewBatch()
	if err := ClearRange(store, b, c.rid, p.info); err != nil {
		b.Discard()
		return err
	}
	if err := b.Delete(storage.PartitionAppliedKey(c.rid, p.info.ID)); err != nil {
		b.Discard()
		return err
	}
	if err := b.Commit(); err != nil {
		return fmt.Errorf("%w: partition key range %s: clearing for a snapshot: %v", ErrUnavailable, p.info.ID, err)
	}
	if err := store.Ingest(name); err != nil {
		return fmt.Errorf("%w: partition key range %s: installing a snapshot: %v", ErrUnavailable, p.info.ID, err)
	}
	st, ix, err := readPartition(store, c.rid, c.Info(), p.info)
	if err != nil {
		return err
	}
	p.repl.loaded, p.repl.applied, p.repl.alive = true, index, 0
	p.repl.pending = &partSM{st: st, ix: ix}
	return nil
}
