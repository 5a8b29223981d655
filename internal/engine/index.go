package engine

import (
	"errors"
	"fmt"

	"github.com/parsecdb/parsec/internal/index"
	"github.com/parsecdb/parsec/internal/query/eval"
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

// errNotJSON is eachTerm's error for a document the evaluator cannot read.
var errNotJSON = errors.New("the document is not valid JSON")

// eachTerm calls fn with the encoded terms of a stored document under ix.
// buf is reused between calls.
func eachTerm(ix *indexState, doc []byte, buf *[]byte, fn func(term []byte) error) error {
	if ix == nil || ix.policy == nil || ix.policy.None || doc == nil {
		return nil
	}
	v, err := eval.FromJSON(doc)
	if err != nil {
		return fmt.Errorf("%w: %v", errNotJSON, err)
	}
	var ferr error
	ix.policy.Terms(v, func(path []string, val eval.Value) {
		if ferr != nil {
			return
		}
		*buf = index.AppendValue(index.AppendPath((*buf)[:0], path), val)
		ferr = fn(*buf)
	})
	return ferr
}
