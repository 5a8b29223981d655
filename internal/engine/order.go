package engine

import (
	"bytes"
	"errors"
	"sort"
	"sync"

	"github.com/parsecdb/parsec/internal/index"
	"github.com/parsecdb/parsec/internal/query/eval"
	"github.com/parsecdb/parsec/internal/query/exec"
	"github.com/parsecdb/parsec/internal/storage"
)

// ORDER BY served from the index.
//
// The entries of one indexed path are ordered by value bucket
// (index.AppendBucket), and every document whose value at the path is
// defined has exactly one of them (arrays and objects by type). So a
// partition's documents in ORDER BY order are: those whose value is
// undefined, then the path's entries ascending; or, for DESC, the entries
// descending and then the undefined ones. A sortedSource yields exactly
// that, and the executor stops reading at the first bucket past its page
// (exec.SortedSource): a TOP 10 reads a few entries and documents per
// partition instead of every document.
//
// The documents without an entry cannot be looked up, only counted: a
// partition's item count is stored with every batch it commits, so at one
// storage snapshot, if the path's entries within the partition are as many
// as its items, no document lacks the path. Otherwise (rare: documents
// without the property) the partition's items are walked for the keys that
// have no entry. Counting reads the path's entries, and only when a source
// needs the undefined documents: at the start of an ascending read, at the
// end of a descending one. Its outcome holds until the partition's next
// write, so it is remembered by partition and LSN (completeCache): a
// partition that has not changed since is not counted again.
//
// Everything a page reads comes from one snapshot, so entries, documents
// and counts agree; an entry whose document disagrees is a bug and fails
// the query.

// orderFromIndex decides whether an ORDER BY page reads its documents in
// sort order through the index on its SortPath, rather than through the
// lookup lk with cands candidates, or a scan. It does when the first ORDER
// BY key is an indexed path of the documents, the page is bounded (want >
// 0) and the query reads whole partitions, as the undefined-document count
// requires (a partition key scope reads one logical partition, usually
// small, by key). Against a lookup it estimates, for a filter independent
// of the order, that reading in order takes about want·items/cands
// documents per partition, and picks the cheaper.
func (c *Container) orderFromIndex(plan *exec.Plan, ix *indexState, scope QueryScope, lk *lookup, cands, want, parts int) bool {
	path, _, ok := plan.SortPath()
	if !ok || ix == nil || !ix.ready || !ix.policy.Indexed(path) || len(path) > index.MaxDepth ||
		want <= 0 || scope.HasKey || len(scope.Keys) > 0 {
		return false
	}
	if lk != nil {
		var items int64
		for _, p := range c.Partitions() {
			items += p.items.Load()
		}
		if float64(cands)*float64(cands) <= float64(parts)*float64(want)*float64(items) {
			return false
		}
	}
	return true
}

var _ exec.SortedSource = (*sortedSource)(nil)

// completeCache remembers, per index generation, path, partition and LSN,
// whether every item of the partition has an entry on the path.
type completeCache struct {
	mu sync.Mutex
	m  map[completeKey]bool
}

type completeKey struct {
	gen  uint32
	path string // the encoded path
	part string
	lsn  uint64
}

// completeCacheMax bounds the entries kept; past it the cache starts over.
const completeCacheMax = 4096

func (cc *completeCache) get(k completeKey) (complete, ok bool) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	complete, ok = cc.m[k]
	return complete, ok
}

func (cc *completeCache) put(k completeKey, complete bool) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.m == nil || len(cc.m) >= completeCacheMax {
		cc.m = map[completeKey]bool{}
	}
	cc.m[k] = complete
}

// reset forgets everything.
func (cc *completeCache) reset() {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	cc.m = nil
}

// orderedRead is what the sorted sources of one query page share.
type orderedRead struct {
	c     *Container
	gen   uint32
	snap  *storage.Snapshot
	rid   [storage.RidLen]byte
	path  []string
	base  []byte // the entry prefix of the path: I <rid> <gen> <path>
	desc  bool
	spans []span

	once    sync.Once
	missing []bool // per span: some documents have no entry (undefined value)
	counted int    // entries read to count
	err     error
}

// sortedSources returns the sources of an ORDER BY over the index on path,
// one per span, reading from snap.
func (c *Container) sortedSources(snap *storage.Snapshot, gen uint32, path []string, desc bool, spans []span) []*sortedSource {
	or := &orderedRead{c: c, gen: gen, snap: snap, rid: c.rid, path: path, desc: desc, spans: spans,
		base: index.AppendPath(storage.IndexPrefix(nil, c.rid, gen), path)}
	out := make([]*sortedSource, len(spans))
	for i, s := range spans {
		out[i] = &sortedSource{or: or, span: i, plain: itemSource{db: snap, lo: s.lo, hi: s.hi}}
	}
	return out
}

// countMissing finds the spans where some documents have no entry for
// the path: fewer entries in the span than items in its partition.
func (or *orderedRead) countMissing() ([]bool, error) {
	or.once.Do(func() { or.missing, or.err = or.count() })
	return or.missing, or.err
}

func (or *orderedRead) count() ([]bool, error) {
	n := len(or.spans)
	missing := make([]bool, n)
	items := make([]int64, n)
	keys := make([]completeKey, n)
	known := make([]bool, n)
	all := true
	for i, s := range or.spans {
		v, err := or.snap.Get(nil, storage.PartitionKey(or.rid, s.p.ID()))
		var st partState
		if err == nil {
			st, err = decodePartState(s.p.ID(), v)
		}
		if err != nil {
			// A partition split since the spans were taken has no record:
			// look for the documents without entry.
			missing[i], known[i] = true, true
			continue
		}
		items[i] = st.Items
		keys[i] = completeKey{gen: or.gen, path: string(or.base), part: s.p.ID(), lsn: st.LSN}
		if complete, ok := or.c.complete.get(keys[i]); ok {
			missing[i], known[i] = !complete, true
		}
		all = all && known[i]
	}
	if all {
		return missing, nil
	}
	entries := make([]int64, n)
	read, err := or.eachEntry(func(i int, _ []byte) { entries[i]++ })
	or.counted = read
	if err != nil {
		return nil, err
	}
	for i := range n {
		if !known[i] {
			missing[i] = items[i] != entries[i]
			or.c.complete.put(keys[i], !missing[i])
		}
	}
	return missing, nil
}

// eachEntry calls fn with the span index and item key (valid during the
// call) of every entry of the path whose item lies in one of the spans, and
// returns how many entries it read.
func (or *orderedRead) eachEntry(fn func(span int, key []byte)) (int, error) {
	var key []byte
	read := 0
	err := or.snap.Iterate(or.base, storage.PrefixEnd(or.base), func(k, _ []byte) (bool, error) {
		var err error
		if key, _, err = or.itemKey(key[:0], k); err != nil {
			return false, err
		}
		read++
		if i := or.spanOf(key); i >= 0 {
			fn(i, key)
		}
		return true, nil
	})
	return read, err
}

// itemKey appends the item key of an index entry of the path to dst, and
// returns it with the entry's bucket.
func (or *orderedRead) itemKey(dst, entry []byte) ([]byte, []byte, error) {
	rest := entry[len(or.base):]
	n := index.ValueLen(rest)
	if n < 0 {
		return dst, nil, corrupt("index entry %x has a value that does not decode", entry)
	}
	return storage.AppendItemKeyFromSuffix(dst, or.rid, rest[n:]), rest[:n], nil
}

// spanOf returns the span that holds item key k, or -1.
func (or *orderedRead) spanOf(k []byte) int {
	i := sort.Search(len(or.spans), func(i int) bool {
		hi := or.spans[i].hi
		return len(hi) == 0 || bytes.Compare(k, hi) < 0
	})
	if i < len(or.spans) && bytes.Compare(k, or.spans[i].lo) >= 0 {
		return i
	}
	return -1
}

// valueAt returns the value at path in doc, as the query language reads c.a.b.
func valueAt(doc eval.Value, path []string) eval.Value {
	for _, name := range path {
		doc = doc.Property(name)
	}
	return doc
}

// sortedSource feeds the executor one span's documents in the order of the
// index on a path (see exec.SortedSource). As a plain Source it reads the
// span in key order.
type sortedSource struct {
	or    *orderedRead
	span  int
	plain itemSource

	phase   int // see next
	entries *storage.Iter
	moved   bool   // entries positioned
	seek    []byte // where entries start, nil for the first or last
	undef   *undefinedDocs
	key     []byte
	bucket  []byte

	docs, bytes, entriesRead int
}

const (
	phaseStart = iota
	phaseUndefined
	phaseEntries
	phaseDone
)

func (s *sortedSource) Next() ([]byte, eval.Value, bool, error) { return s.plain.Next() }

// SeekSorted starts the read at v's bucket.
func (s *sortedSource) SeekSorted(v eval.Value) error {
	if !v.IsDefined() {
		if s.or.desc {
			s.phase = phaseUndefined // every entry sorts before undefined
		}
		return nil
	}
	s.seek = index.AppendValue(bytes.Clone(s.or.base), v)
	if !s.or.desc {
		s.phase = phaseEntries // undefined sorts before v
	}
	return nil
}

func (s *sortedSource) NextSorted() ([]byte, eval.Value, []byte, bool, error) {
	for {
		switch s.phase {
		case phaseStart:
			s.phase = phaseUndefined
			if s.or.desc {
				s.phase = phaseEntries
			}
		case phaseUndefined:
			key, doc, ok, err := s.nextUndefined()
			if err != nil || ok {
				return key, doc, []byte{0}, ok, err
			}
			s.phase = phaseEntries
			if s.or.desc {
				s.phase = phaseDone
			}
		case phaseEntries:
			key, doc, ok, err := s.nextEntry()
			if err != nil || ok {
				return key, doc, s.bucket, ok, err
			}
			s.phase = phaseDone
			if s.or.desc {
				s.phase = phaseUndefined
			}
		default:
			return nil, eval.Value{}, nil, false, s.close()
		}
	}
}

// nextEntry returns the next document of the span through the path's
// entries.
func (s *sortedSource) nextEntry() ([]byte, eval.Value, bool, error) {
	or := s.or
	if s.entries == nil {
		it, err := or.snap.NewIter(or.base, storage.PrefixEnd(or.base))
		if err != nil {
			return nil, eval.Value{}, false, err
		}
		s.entries = it
	}
	for {
		var ok bool
		switch {
		case s.moved && or.desc:
			ok = s.entries.Prev()
		case s.moved:
			ok = s.entries.Next()
		case s.seek != nil && or.desc:
			ok = s.entries.SeekLT(storage.PrefixEnd(s.seek))
		case s.seek != nil:
			ok = s.entries.SeekGE(s.seek)
		case or.desc:
			ok = s.entries.Last()
		default:
			ok = s.entries.First()
		}
		s.moved = true
		if !ok {
			return nil, eval.Value{}, false, nil
		}
		s.entriesRead++
		var bucket []byte
		var err error
		if s.key, bucket, err = or.itemKey(s.key[:0], s.entries.Key()); err != nil {
			return nil, eval.Value{}, false, err
		}
		if or.spanOf(s.key) != s.span {
			continue
		}
		s.bucket = append(s.bucket[:0], bucket...)
		doc, err := s.read(s.key)
		if err != nil {
			return nil, eval.Value{}, false, err
		}
		// An index that disagrees with its items is damaged storage (or a
		// bug of the indexing). Not a panic: sorted sources run on the
		// goroutines of a parallel query page, where one would end the
		// process.
		if got := index.AppendBucket(nil, valueAt(doc, or.path)); !bytes.Equal(got, bucket) {
			return nil, eval.Value{}, false, corrupt("the index entry of %s has bucket %x, the item's value has %x", itemName(s.key), bucket, got)
		}
		return s.key, doc, true, nil
	}
}

// read returns the document of an item key at the snapshot.
func (s *sortedSource) read(key []byte) (eval.Value, error) {
	v, err := s.or.snap.Get(nil, key)
	if errors.Is(err, storage.ErrNotFound) {
		return eval.Value{}, corrupt("an index entry names %s, which does not exist", itemName(key))
	}
	if err != nil {
		return eval.Value{}, err
	}
	doc, n, err := storedValue(key, v)
	if err != nil {
		return eval.Value{}, err
	}
	s.docs++
	s.bytes += n
	return doc, nil
}

// undefinedDocs walks a span's items for those without an entry.
type undefinedDocs struct {
	have  map[string]struct{} // item keys with an entry
	it    *storage.Iter
	moved bool
}

// nextUndefined returns the next document of the span, in key order, whose
// value at the path is undefined.
func (s *sortedSource) nextUndefined() ([]byte, eval.Value, bool, error) {
	if s.undef == nil {
		u, err := s.undefinedDocs()
		if err != nil || u == nil {
			return nil, eval.Value{}, false, err
		}
		s.undef = u
	}
	u := s.undef
	for {
		var ok bool
		if u.moved {
			ok = u.it.Next()
		} else {
			ok, u.moved = u.it.First(), true
		}
		if !ok {
			return nil, eval.Value{}, false, nil
		}
		v, err := u.it.Value()
		if err != nil {
			return nil, eval.Value{}, false, err
		}
		if _, has := u.have[string(u.it.Key())]; has {
			s.docs++ // read, if not decoded
			s.bytes += len(v)
			continue
		}
		doc, n, err := storedValue(u.it.Key(), v)
		if err != nil {
			return nil, eval.Value{}, false, err
		}
		s.docs++
		s.bytes += n
		if valueAt(doc, s.or.path).IsDefined() {
			return nil, eval.Value{}, false, corrupt("%s has a value at %v but no index entry", itemName(u.it.Key()), s.or.path)
		}
		return bytes.Clone(u.it.Key()), doc, true, nil
	}
}

// undefinedDocs prepares the walk for the span's documents without an
// entry, or returns nil when it has none.
func (s *sortedSource) undefinedDocs() (*undefinedDocs, error) {
	or := s.or
	missing, err := or.countMissing()
	if err != nil || !missing[s.span] {
		return nil, err
	}
	u := &undefinedDocs{have: map[string]struct{}{}}
	read, err := or.eachEntry(func(i int, key []byte) {
		if i == s.span {
			u.have[string(key)] = struct{}{}
		}
	})
	s.entriesRead += read
	if err != nil {
		return nil, err
	}
	sp := or.spans[s.span]
	if u.it, err = or.snap.NewIter(sp.lo, sp.hi); err != nil {
		return nil, err
	}
	return u, nil
}

// close releases the source's iterators.
func (s *sortedSource) close() error {
	var err error
	if s.entries != nil {
		err = s.entries.Close()
		s.entries = nil
	}
	if s.undef != nil && s.undef.it != nil {
		if cerr := s.undef.it.Close(); err == nil {
			err = cerr
		}
		s.undef.it = nil
	}
	if cerr := s.plain.close(); err == nil {
		err = cerr
	}
	return err
}
