package engine

import (
	"bytes"
	"encoding/binary"
	"slices"
	"sort"

	"github.com/parsecdb/parsec/internal/query/eval"
	"github.com/parsecdb/parsec/internal/storage"
)

// The exec.Source implementations that feed stored items to the query
// executor (sortedSource, which reads in index order, is in order.go).

// reader is what queries read from: the store, or a snapshot of it.
type reader interface {
	NewIter(lo, hi []byte) (*storage.Iter, error)
	Get(dst, key []byte) ([]byte, error)
}

// itemSource feeds a partition's items to the executor, in key order, or
// in creation order when created is set. It opens its iterator lazily,
// and a Seek restarts it at a later key, so a streaming query resumes
// without reading what earlier pages read.
type itemSource struct {
	db         reader
	lo, hi     []byte
	it         *storage.Iter
	positioned bool
	docs       int
	bytes      int
	created    *createdOrder
}

// Seek positions the source at the first key at or after key.
func (s *itemSource) Seek(key []byte) error {
	if err := s.close(); err != nil {
		return err
	}
	if s.created != nil {
		s.created.seek(key)
		return nil
	}
	if bytes.Compare(key, s.lo) > 0 {
		s.lo = append([]byte(nil), key...)
	}
	return nil
}

// createdOrder makes an itemSource read the items of an EPK range in the
// order they were created, which is the order of their "_rid" and the
// order in which the service scans a partition. It reads the resource-id
// index (storage.RidKey) in the sequence-number blocks of the range's
// lineage (its parents, oldest first, then itself: see changefeed.go),
// keeping the entries whose item lies in the range.
//
// The executor needs keys that increase within a source and from one
// partition's source to the next, and a position that stays meaningful
// when a range splits between pages. So each item is given the source key
//
//	<item key of the range's lowest EPK, with an empty id> 0xFF <sequence number, 8 bytes> <the range's highest EPK>
//
// 0xFF cannot start an id (ids are UTF-8), so such a key is never an
// item's (isCreatedKey); keys sort by range, then by sequence number. A
// page that resumes a position reads the current ranges that lie within
// the position's range as that one range (the union of their lineages'
// blocks, in sequence order, filtered to its bounds), so the position's
// sequence number applies to all of them and the item at the position,
// read again for the rows of it the position did not reach (a JOIN's
// fan-out), has the position's key.
type createdOrder struct {
	rid    [storage.RidLen]byte
	blocks []uint64 // range numbers, ascending
	lo, hi string   // EPK bounds; hi "" is open
	prefix []byte
	block  int    // index in blocks of the block being read
	after  uint64 // sequence number of the last entry read
	key    []byte // the source key of the last item read
	item   []byte // and its item key
	items  *storage.Iter
}

// newCreatedOrder reads the items of [lo, hi), which the partitions parts
// cover, in creation order.
func newCreatedOrder(rid [storage.RidLen]byte, parts []*Partition, lo, hi string) (*createdOrder, error) {
	blocks, err := lineageBlocks(parts)
	if err != nil {
		return nil, err
	}
	return &createdOrder{rid: rid, lo: lo, hi: hi, prefix: append(storage.ItemKey(nil, rid, lo, ""), 0xff), blocks: blocks}, nil
}

// lineageBlocks returns the numbers of the ranges in the lineages of
// parts (each range's parents and itself), ascending and once each: the
// sequence-number blocks whose index entries can name their items.
func lineageBlocks(parts []*Partition) ([]uint64, error) {
	var blocks []uint64
	for _, p := range parts {
		var err error
		if blocks, err = appendLineage(blocks, p.Range()); err != nil {
			return nil, err
		}
	}
	slices.Sort(blocks)
	return slices.Compact(blocks), nil
}

// appendLineage appends the range numbers of r's lineage (its parents'
// and its own) to blocks.
func appendLineage(blocks []uint64, r RangeInfo) ([]uint64, error) {
	for _, id := range append(append([]string(nil), r.Parents...), r.ID) {
		n, err := rangeNumber(id)
		if err != nil {
			return nil, err
		}
		blocks = append(blocks, n)
	}
	return blocks, nil
}

// createdPosition parses a createdOrder's source key: the range it was
// read from and the sequence number reached.
func createdPosition(k []byte) (lo, hi string, seq uint64, ok bool) {
	e, id, ok := storage.SplitItemKey(k)
	if !ok || len(id) < 9 || id[0] != 0xff {
		return "", "", 0, false
	}
	return string(e), string(id[9:]), binary.BigEndian.Uint64(id[1:9]), true
}

// isCreatedKey reports whether a source key is a createdOrder's.
func isCreatedKey(k []byte) bool {
	_, _, _, ok := createdPosition(k)
	return ok
}

// seek skips what a query read before the source key k: the entries
// before its sequence number when k is this range's (the entry at k is
// read again, for the rows of it the position did not reach), everything
// when k is in a later range, nothing when k is in an earlier one.
func (o *createdOrder) seek(k []byte) {
	lo, hi, seq, ok := createdPosition(k)
	switch {
	case !ok:
	case lo == o.lo && hi == o.hi:
		o.after = max(o.after, seq-1)
	case lo > o.lo:
		o.block = len(o.blocks)
	}
}

// next returns the next item of the range in creation order, with its
// source key and stored value.
func (s *itemSource) nextCreated() (key, v []byte, ok bool, err error) {
	o := s.created
	for o.block < len(o.blocks) {
		if s.it == nil {
			first := seqPartitionBit | o.blocks[o.block]<<seqCountBits
			end := first + 1<<seqCountBits
			if o.after >= end-1 {
				o.block++
				continue
			}
			it, err := s.db.NewIter(storage.RidKey(nil, o.rid, max(first, o.after+1)), storage.RidKey(nil, o.rid, end))
			if err != nil {
				return nil, nil, false, err
			}
			s.it, s.positioned = it, false
		}
		if !s.step() {
			if err := s.close(); err != nil {
				return nil, nil, false, err
			}
			o.block++
			continue
		}
		k := s.it.Key()
		o.after = binary.BigEndian.Uint64(k[len(k)-8:])
		itemKey, err := s.it.Value()
		if err != nil {
			return nil, nil, false, err
		}
		e, _, ok := storage.SplitItemKey(itemKey)
		if !ok {
			return nil, nil, false, corrupt("resource-id index entry %x names %x, which is not an item key", k, itemKey)
		}
		if string(e) < o.lo || o.hi != "" && string(e) >= o.hi {
			continue
		}
		// The items are read with a second iterator over the range, which
		// a seek repositions more cheaply than a Get sets one up.
		if o.items == nil {
			if o.items, err = s.db.NewIter(storage.ItemSpan(o.rid, o.lo, o.hi)); err != nil {
				return nil, nil, false, err
			}
		}
		if !o.items.SeekGE(itemKey) || !bytes.Equal(o.items.Key(), itemKey) {
			return nil, nil, false, corrupt("resource-id index entry %x names the item %x, which is not there", k, itemKey)
		}
		if v, err = o.items.Value(); err != nil {
			return nil, nil, false, err
		}
		o.key = append(binary.BigEndian.AppendUint64(append(o.key[:0], o.prefix...), o.after), o.hi...)
		o.item = append(o.item[:0], itemKey...)
		return o.key, v, true, nil
	}
	return nil, nil, false, nil
}

func (s *itemSource) Next() ([]byte, eval.Value, bool, error) {
	key, v, ok, err := s.next()
	if err != nil || !ok {
		return nil, eval.Value{}, false, err
	}
	val, n, err := storedValue(s.itemKey(key), v)
	if err != nil {
		return nil, eval.Value{}, false, err
	}
	s.docs++
	s.bytes += n
	return append([]byte(nil), key...), val, true, nil
}

// NextRaw is Next for a query whose rows are whole documents: a document
// stored in canonical form is returned as a copy of its text, undecoded.
func (s *itemSource) NextRaw() (key, raw []byte, size int, doc eval.Value, ok bool, err error) {
	k, v, ok, err := s.next()
	if err != nil || !ok {
		return nil, nil, 0, eval.Value{}, false, err
	}
	key = append([]byte(nil), k...)
	k = s.itemKey(k)
	_, _, d, err := decodeItem(k, v)
	if err != nil {
		return nil, nil, 0, eval.Value{}, false, err
	}
	s.docs++
	s.bytes += len(d)
	if size, ok := eval.CanonicalJSON(d); ok {
		return key, append([]byte(nil), d...), size, eval.Value{}, true, nil
	}
	if doc, err = eval.FromJSON(d); err != nil {
		return nil, nil, 0, eval.Value{}, false, corrupt("%s holds a document that is not valid JSON: %v", itemName(k), err)
	}
	return key, nil, 0, doc, true, nil
}

// step moves the iterator to its first entry, or to the next one.
func (s *itemSource) step() bool {
	if !s.positioned {
		s.positioned = true
		return s.it.First()
	}
	return s.it.Next()
}

// itemKey is the item key of the source key k that next returned.
func (s *itemSource) itemKey(k []byte) []byte {
	if s.created != nil {
		return s.created.item
	}
	return k
}

// next moves to the next item and returns its key and stored value, valid
// until the following call.
func (s *itemSource) next() (key, v []byte, ok bool, err error) {
	if s.created != nil {
		return s.nextCreated()
	}
	if s.it == nil {
		it, err := s.db.NewIter(s.lo, s.hi)
		if err != nil {
			return nil, nil, false, err
		}
		s.it, s.positioned = it, false
	}
	if !s.step() {
		return nil, nil, false, nil
	}
	if v, err = s.it.Value(); err != nil {
		return nil, nil, false, err
	}
	return s.it.Key(), v, true, nil
}

// storedValue decodes the stored value v of the item at storage key key
// into the document the evaluator reads, and the document's size in bytes.
// A value or document that does not decode is an ErrCorrupt.
func storedValue(key, v []byte) (eval.Value, int, error) {
	_, _, doc, err := decodeItem(key, v)
	if err != nil {
		return eval.Value{}, 0, err
	}
	val, err := eval.FromJSON(doc)
	if err != nil {
		return eval.Value{}, 0, corrupt("%s holds a document that is not valid JSON: %v", itemName(key), err)
	}
	return val, len(doc), nil
}

func (s *itemSource) close() error {
	var err error
	if s.it != nil {
		err = s.it.Close()
		s.it = nil
	}
	if o := s.created; o != nil && o.items != nil {
		if cerr := o.items.Close(); err == nil {
			err = cerr
		}
		o.items = nil
	}
	return err
}

// indexSource feeds the executor the items an index lookup selected, in
// key order; items deleted since the lookup are skipped.
type indexSource struct {
	db    *storage.DB
	keys  [][]byte
	i     int
	docs  int
	bytes int
}

func (s *indexSource) Seek(key []byte) error {
	j := sort.Search(len(s.keys), func(i int) bool { return bytes.Compare(s.keys[i], key) >= 0 })
	s.i = max(s.i, j)
	return nil
}

func (s *indexSource) Next() ([]byte, eval.Value, bool, error) {
	for s.i < len(s.keys) {
		k := s.keys[s.i]
		s.i++
		v, err := s.db.Get(nil, k)
		if err == storage.ErrNotFound {
			continue
		}
		if err != nil {
			return nil, eval.Value{}, false, err
		}
		val, n, err := storedValue(k, v)
		if err != nil {
			return nil, eval.Value{}, false, err
		}
		s.docs++
		s.bytes += n
		return k, val, true, nil
	}
	return nil, eval.Value{}, false, nil
}
