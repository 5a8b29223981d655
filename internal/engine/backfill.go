package engine

import (
	"fmt"

	"github.com/parsecdb/parsec/internal/storage"
)

// itemIndexesVersion is the content of the storage.ItemIndexesKey record:
// every item has its change-index entry (storage.ChangeKey) and its
// resource-id index entry (storage.RidKey).
const itemIndexesVersion = 1

// backfillBatch is how many index entries one backfill batch writes.
const backfillBatch = 4096

// backfillItemIndexes gives the items of a store written before the change
// index or the resource-id index existed their entries, once: a store that
// carries the ItemIndexesKey record (every store this version created or
// opened) is left alone. Every write since keeps both indexes, so the
// record is set once the walk is done; a crash during the walk repeats it,
// harmlessly, at the next open.
func backfillItemIndexes(store *storage.DB, logf func(string, ...any)) error {
	marker, err := store.Get(nil, storage.ItemIndexesKey())
	if err == nil && len(marker) == 1 && marker[0] >= itemIndexesVersion {
		return nil
	}
	if err != nil && err != storage.ErrNotFound {
		return fmt.Errorf("cannot read the item index record: %w", err)
	}
	var (
		b                 = store.NewBatch()
		pending, items, n int
	)
	flush := func() error {
		if pending == 0 {
			return nil
		}
		err := b.Commit()
		b, pending = store.NewBatch(), 0
		return err
	}
	has := func(key []byte) (bool, error) {
		_, err := store.Get(nil, key)
		if err == storage.ErrNotFound {
			return false, nil
		}
		return err == nil, err
	}
	lo, hi := storage.AllItemsSpan()
	err = store.Iterate(lo, hi, func(k, v []byte) (bool, error) {
		if len(k) < 1+storage.RidLen {
			return false, corrupt("the item key %x is too short", k)
		}
		var rid [storage.RidLen]byte
		copy(rid[:], k[1:])
		_, etag, doc, err := decodeItem(k, v)
		if err != nil {
			return false, err
		}
		items++
		var want [][]byte
		if seq, ok := seqOfEtag(etag); ok {
			want = append(want, storage.ChangeKey(nil, rid, seq))
		}
		if seq, ok := createdSeq(doc); ok {
			want = append(want, storage.RidKey(nil, rid, seq))
		}
		for _, key := range want {
			ok, err := has(key)
			if err != nil {
				return false, err
			}
			if ok {
				continue
			}
			if err := b.Set(key, k); err != nil { // the batch copies k
				return false, err
			}
			pending++
			n++
		}
		if pending >= backfillBatch {
			if err := flush(); err != nil {
				return false, err
			}
			logf("parsec: indexing items written by an earlier version: %d items read, %d entries written", items, n)
		}
		return true, nil
	})
	if err == nil {
		err = flush()
	}
	if err == nil {
		b = store.NewBatch()
		if err = b.Set(storage.ItemIndexesKey(), []byte{itemIndexesVersion}); err == nil {
			err = b.Commit()
		}
	} else {
		b.Discard()
	}
	if err != nil {
		return fmt.Errorf("cannot index the items written by an earlier version: %w", err)
	}
	if n > 0 {
		logf("parsec: indexed the items written by an earlier version: %d items, %d entries", items, n)
	}
	return nil
}
