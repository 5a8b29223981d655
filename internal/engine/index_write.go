package engine

import (
	"errors"

	"github.com/parsecdb/parsec/internal/storage"
)

// present is the value of an index entry (its key says everything).
var present = []byte{}

// index replaces the index entries of an item's old version by its new
// one's (either may be nil).
func (t *txn) index(ac *applyCtx, epkHex, id string, old, doc []byte) error {
	ix := ac.index
	if ix == nil || ix.policy == nil || ix.policy.None {
		return nil
	}
	var buf []byte
	if err := eachTerm(ix, old, &buf, func(term []byte) error {
		t.put(storage.IndexEntry(nil, ac.rid, ix.gen, term, epkHex, id), nil)
		return nil
	}); errors.Is(err, errNotJSON) {
		// The old version is the store's: it was indexed when written.
		return corrupt("item %q (effective partition key %s) cannot be indexed: %v", id, epkHex, err)
	} else if err != nil {
		return err
	}
	err := eachTerm(ix, doc, &buf, func(term []byte) error {
		t.put(storage.IndexEntry(nil, ac.rid, ix.gen, term, epkHex, id), present)
		return nil
	})
	if errors.Is(err, errNotJSON) {
		// The new version is the request's: its fault, not the store's.
		return badRequest("the document cannot be indexed: %v", err)
	}
	return err
}
