package engine

import (
	"bytes"
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

// itemSource feeds a partition's items to the executor, in key order. It
// opens its iterator lazily, and a Seek restarts it at a later key, so a
// streaming query resumes without reading what earlier pages read.
type itemSource struct {
	db         reader
	lo, hi     []byte
	it         *storage.Iter
	positioned bool
	docs       int
	bytes      int
}

// Seek positions the source at the first key at or after key.
func (s *itemSource) Seek(key []byte) error {
	if err := s.close(); err != nil {
		return err
	}
	if bytes.Compare(key, s.lo) > 0 {
		s.lo = append([]byte(nil), key...)
	}
	return nil
}

func (s *itemSource) Next() ([]byte, eval.Value, bool, error) {
	key, v, ok, err := s.next()
	if err != nil || !ok {
		return nil, eval.Value{}, false, err
	}
	val, n, err := storedValue(key, v)
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

// next moves to the next item and returns its key and stored value, valid
// until the following call.
func (s *itemSource) next() (key, v []byte, ok bool, err error) {
	if s.it == nil {
		it, err := s.db.NewIter(s.lo, s.hi)
		if err != nil {
			return nil, nil, false, err
		}
		s.it, s.positioned = it, false
	}
	if !s.positioned {
		ok, s.positioned = s.it.First(), true
	} else {
		ok = s.it.Next()
	}
	if !ok {
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
	if s.it == nil {
		return nil
	}
	err := s.it.Close()
	s.it = nil
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
