package engine

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/parsecdb/parsec/internal/storage"
)

// ApplyLog applies log entries, in the order the engine handed them out,
// to store, as a replica that receives the logs applies them: each entry
// in its own batch, through the same apply functions the partitions' loops
// use. Applied to an empty store, the entries an engine logged give its
// key-value contents byte for byte, but for the node's own id allocator
// record (see LogEntry).
func ApplyLog(store *storage.DB, entries []LogEntry) error {
	r := replica{store: store, parts: map[replicaKey]*replicaPart{}}
	// The catalog's fence decision goes on from the state the store
	// records with its applied index (catalogRepl.appliedRecord).
	switch v, err := store.Get(nil, storage.CatalogAppliedKey()); {
	case errors.Is(err, storage.ErrNotFound), err == nil && len(v) == 8:
	case err != nil:
		return err
	case len(v) == 32:
		r.fence = catalogFence{lastOrigin: binary.BigEndian.Uint64(v[8:]), lastTook: binary.BigEndian.Uint64(v[16:]), otherTook: binary.BigEndian.Uint64(v[24:])}
	default:
		return corrupt("the catalog's applied index has %d bytes", len(v))
	}
	for i, en := range entries {
		if err := r.apply(en); err != nil {
			return fmt.Errorf("log entry %d (container %x, range %q): %w", i, en.Container, en.Range, err)
		}
	}
	return nil
}

type replicaKey struct {
	rid     [storage.RidLen]byte
	rangeID string
}

// replicaPart is a replica's view of one partition, read from its store.
type replicaPart struct {
	ac *applyCtx
	sm partSM
}

type replica struct {
	store *storage.DB
	parts map[replicaKey]*replicaPart
	fence catalogFence
}

// apply applies one entry in its own batch.
func (r *replica) apply(en LogEntry) error {
	b := r.store.NewBatch()
	done, err := r.write(b, en)
	if err != nil {
		b.Discard()
		return err
	}
	if err := b.Commit(); err != nil {
		return err
	}
	done()
	return nil
}

// write writes an entry's effects into b, and returns what to do once b
// has committed.
func (r *replica) write(b *storage.Batch, en LogEntry) (done func(), err error) {
	if en.Range == "" {
		// An entry of the catalog's log, applied as the catalog's replica
		// applies it (ApplyCatalog): the same fence decision, the
		// container records keeping the partition maps the store holds,
		// and the applied index with the fence's state.
		ce, err := decodeCatalogEntry(en.Data)
		if err != nil {
			return nil, err
		}
		if !r.fence.refuses(ce.origin, ce.fence, en.Index) {
			if err := keepRanges(b, ce.m); err != nil {
				return nil, err
			}
			if err := ce.m.into(b); err != nil {
				return nil, err
			}
		}
		// A catalog entry may delete or rewrite any container: read the
		// partitions afresh.
		return func() { clear(r.parts) }, b.Set(storage.CatalogAppliedKey(), r.fence.record(en.Index))
	}
	cmd, err := DecodeCommand(en.Data)
	if err != nil {
		return nil, err
	}
	k := replicaKey{en.Container, en.Range}
	p, err := r.part(k)
	if err != nil {
		return nil, err
	}
	sm := p.sm
	out, err, _ := applyEntry(r.store, b, p.ac, en.Range, &sm, cmd)
	if err == nil && en.Index != 0 {
		// The index of the partition's log entry that applied it, as the
		// partition's replica records it (ApplyEntries), split or not.
		err = b.Set(storage.PartitionAppliedKey(en.Container, en.Range), binary.BigEndian.AppendUint64(nil, en.Index))
	}
	switch {
	case err != nil:
		return nil, err
	case out.split != nil:
		return func() { delete(r.parts, k) }, nil
	}
	return func() { p.sm = sm }, b.Set(storage.PartitionKey(en.Container, en.Range), sm.st.encode())
}

// part reads a partition's state from the store, the first time it is
// needed after a catalog entry or a split.
func (r *replica) part(k replicaKey) (*replicaPart, error) {
	if p := r.parts[k]; p != nil {
		return p, nil
	}
	var info ContainerInfo
	found := false
	lo := storage.ContainersPrefix()
	err := r.store.Iterate(lo, storage.PrefixEnd(lo), func(_, v []byte) (bool, error) {
		if err := json.Unmarshal(v, &info); err != nil {
			return false, err
		}
		rid, err := decodeRid(info.Rid)
		found = err == nil && string(rid) == string(k.rid[:])
		return !found, nil
	})
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("no container with rid %x", k.rid)
	}
	ac, err := newApplyCtx(info)
	if err != nil {
		return nil, err
	}
	var rng RangeInfo
	for _, x := range info.Ranges {
		if x.ID == k.rangeID {
			rng = x
		}
	}
	if rng.ID == "" {
		return nil, fmt.Errorf("container %q has no range %q", info.ID, k.rangeID)
	}
	st, ix, err := readPartition(r.store, ac.rid, info, rng)
	if err != nil {
		return nil, err
	}
	p := &replicaPart{ac: &ac, sm: partSM{st: st, ix: ix}}
	r.parts[k] = p
	return p, nil
}
