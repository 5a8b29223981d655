package engine

import (
	"github.com/parsecdb/parsec/internal/index"
)

// Automatic indexing.
//
// Every write maintains the container's index in the same batch as the
// item (consistent indexing): apply deletes the old version's entries and
// adds the new one's (txn.index). Entries are keyed by container, not by
// partition (storage.IndexPrefix), so a split moves no index entry either;
// a lookup keeps the entries whose item lies in the partitions it reads.
//
// A policy change starts a new index generation. A builder walks every
// partition's items in key order, a chunk at a time, and adds their entries
// through the partition's apply loop (a reindex command), so a chunk never
// races a write of the same items. A partition's first chunk of the new
// generation switches its writes to it (the partition's index record, which
// its writes read, so replicas switch at the same point of its log). When
// the walk ends the old generations are deleted and queries start using
// the new one; until then they scan, and their results are complete either
// way. A build interrupted by a restart starts again from the beginning.

// indexState is what writes and queries need of a container's index.
type indexState struct {
	gen    uint32
	policy *index.Policy
	// ready: every item has its entries in gen, so queries may use it.
	ready bool
}
