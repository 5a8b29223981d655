package engine

import (
	"fmt"

	"github.com/parsecdb/parsec/internal/storage"
)

// PartitionSnapshot is one partition's committed state at one applied
// LSN: reads through it see exactly the commands the partition applied up
// to LSN, whatever it applies meanwhile. It is the entry point for reads
// of one partition, so that a replica that applies the same log can serve
// them at the LSN it has reached. Close releases it.
type PartitionSnapshot struct {
	Range RangeInfo
	// LSN is the partition's last applied LSN in the snapshot.
	LSN uint64
	// seqs is how many sequence numbers the partition had handed out.
	seqs uint64
	rid  [storage.RidLen]byte
	snap *storage.Snapshot
}

// Snapshot takes a snapshot of p. A partition that has split has no state
// of its own any more: ErrPartitionGone.
func (p *Partition) Snapshot() (*PartitionSnapshot, error) {
	s := &PartitionSnapshot{Range: p.info, rid: p.c.rid, snap: p.c.e.readView()}
	v, err := s.snap.Get(nil, storage.PartitionKey(s.rid, p.info.ID))
	switch {
	case p.retired.Load():
		// The split committed before the snapshot was taken or after: in
		// either case the range is no longer the client's to read.
		err = fmt.Errorf("%w: partition key range %q has split; refresh the partition key ranges", ErrPartitionGone, p.info.ID)
	case err == storage.ErrNotFound:
		// A partition that has applied nothing yet.
		err = nil
	case err != nil:
		err = fmt.Errorf("%w: cannot read partition state: %v", ErrUnavailable, err)
	default:
		var st partState
		if st, err = decodePartState(p.info.ID, v); err == nil {
			s.LSN, s.seqs = st.LSN, st.Seqs
		}
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Session is the snapshot's session: its range id and LSN.
func (s *PartitionSnapshot) Session() Session { return Session{RangeID: s.Range.ID, LSN: s.LSN} }

// ItemSpan is the span of the partition's item keys.
func (s *PartitionSnapshot) ItemSpan() (lo, hi []byte) {
	return storage.ItemSpan(s.rid, s.Range.Min, openMax(s.Range.Max))
}

// Get reads a key in the snapshot.
func (s *PartitionSnapshot) Get(dst, key []byte) ([]byte, error) { return s.snap.Get(dst, key) }

// Iterate calls fn with every key and value in [lo, hi) in the snapshot,
// in order, until fn returns false or an error.
func (s *PartitionSnapshot) Iterate(lo, hi []byte, fn func(key, value []byte) (bool, error)) error {
	return s.snap.Iterate(lo, hi, fn)
}

// Close releases the snapshot.
func (s *PartitionSnapshot) Close() { _ = s.snap.Close() }
