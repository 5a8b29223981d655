package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"slices"
	"sort"

	"github.com/parsecdb/parsec/internal/epk"
	"github.com/parsecdb/parsec/internal/index"
	"github.com/parsecdb/parsec/internal/query/eval"
	"github.com/parsecdb/parsec/internal/query/exec"
	"github.com/parsecdb/parsec/internal/storage"
)

// Automatic indexing.
//
// Every write maintains the container's index in the same batch as the
// item (consistent indexing): apply deletes the old version's entries and
// adds the new one's (txn.index). Entries are keyed by container, not by
// partition (storage.IndexPrefix), so a split moves no index entry either;
// a lookup keeps the entries whose item lies in the partitions it reads.
//
// A policy change starts a new index generation. Writes switch to it at
// once; a builder walks every partition's items in key order, a chunk at a
// time, and adds their entries through the partition's apply loop (a
// reindex command), so a chunk never races a write of the same items. When
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

// indexChunk is how many items one reindex command indexes.
const indexChunk = 256

// reindexSpec is a reindex command: index the items in [from, to), at most
// indexChunk of them, in generation gen. The loop sets next to the key to
// continue from, or nil when it reached to.
type reindexSpec struct {
	gen      uint32
	from, to []byte
	next     []byte
}

var errIndexSuperseded = errors.New("the indexing policy changed again")

// initIndex sets the container's index state from its record and starts
// the build its record asks for. A record from before indexing existed
// (IndexGen 0), or whose index has an older format, gets a new generation
// built; the record changes when that build completes.
func (c *Container) initIndex(info ContainerInfo) error {
	pol, err := index.Compile(info.IndexingPolicy)
	if err != nil {
		return fmt.Errorf("container %q has an invalid indexing policy: %w", info.ID, err)
	}
	if info.IndexGen == 0 || info.IndexFormat != index.Format {
		info.IndexGen++
		info.IndexBuilding, info.IndexFormat = true, index.Format
		c.info.Store(&info)
	}
	c.index.Store(&indexState{gen: info.IndexGen, policy: pol, ready: !info.IndexBuilding && !pol.None})
	if info.IndexBuilding {
		c.startIndexBuild(info)
	}
	return nil
}

// startIndexBuild switches writes to the record's index generation and
// builds it in the background.
func (c *Container) startIndexBuild(info ContainerInfo) {
	pol, err := index.Compile(info.IndexingPolicy)
	if err != nil {
		panic("BUG: a stored indexing policy does not compile: " + err.Error())
	}
	ix := &indexState{gen: info.IndexGen, policy: pol}
	c.index.Store(ix)
	c.e.builders.Add(1)
	go func() {
		defer c.e.builders.Done()
		if err := c.buildIndex(ix); err != nil {
			if !errors.Is(err, errDeleted) && !errors.Is(err, errIndexSuperseded) {
				log.Printf("parsec: indexing container %s/%s stopped: %v", info.DB, info.ID, err)
			}
			return
		}
		if err := c.e.finishIndexBuild(c, ix); err != nil {
			log.Printf("parsec: indexing container %s/%s: %v", info.DB, info.ID, err)
		}
	}()
}

// buildIndex walks the partitions in EPK order and has each index its
// items, a chunk per command.
func (c *Container) buildIndex(ix *indexState) error {
	at := ""          // the EPK the walk has reached
	var cursor []byte // the next item key, within the partition that holds at
	for {
		p := c.PartitionFor(at)
		r := p.Range()
		lo, hi := storage.ItemSpan(c.rid, r.Min, openMax(r.Max))
		if cursor == nil || bytes.Compare(cursor, lo) < 0 {
			cursor = lo
		}
		spec := &reindexSpec{gen: ix.gen, from: cursor, to: hi}
		_, err := p.submit(&request{cmd: &Command{Reindex: spec}})
		switch {
		case errors.Is(err, ErrPartitionGone):
			if e, _, ok := storage.SplitItemKey(cursor); ok {
				at = string(e)
			}
			continue
		case err != nil:
			return err
		case spec.next != nil:
			cursor = spec.next
			if e, _, ok := storage.SplitItemKey(cursor); ok {
				at = max(string(e), r.Min)
			}
			continue
		}
		if r.Max == epk.MaxEPK {
			return nil
		}
		at, cursor = r.Max, nil
	}
}

func openMax(max string) string {
	if max == epk.MaxEPK {
		return ""
	}
	return max
}

// reindex runs a reindex command in the partition's loop, alone in its
// batch, so that it reads the items as the commands before it left them.
func (p *Partition) reindex(r *request) {
	r.err = p.doReindex(r.cmd.Reindex)
	close(r.done)
}

func (p *Partition) doReindex(spec *reindexSpec) error {
	c := p.c
	ix := c.index.Load()
	if ix.gen != spec.gen {
		return errIndexSuperseded
	}
	b := c.e.store.NewBatch()
	n := 0
	var term []byte
	err := c.e.store.Iterate(spec.from, spec.to, func(k, v []byte) (bool, error) {
		if n == indexChunk {
			spec.next = append([]byte(nil), k...)
			return false, nil
		}
		n++
		e, id, ok := storage.SplitItemKey(k)
		if !ok {
			// The span holds only item keys, unless the store is damaged.
			// Not a panic: the loop that runs this recovers none.
			return false, corrupt("key %x in the item span of partition key range %s is not an item key", k, p.info.ID)
		}
		_, _, doc, err := decodeItem(k, v)
		if err != nil {
			return false, err
		}
		if err := eachTerm(ix, doc, &term, func(term []byte) error {
			return b.Set(storage.IndexEntry(nil, c.rid, ix.gen, term, string(e), string(id)), nil)
		}); errors.Is(err, errNotJSON) {
			return false, corrupt("%s cannot be indexed: %v", itemName(k), err)
		} else if err != nil {
			return false, err
		}
		return true, nil
	})
	if err == nil {
		err = b.Commit()
	} else {
		b.Discard()
	}
	if errors.Is(err, ErrCorrupt) {
		return err // no retry mends it: not a 503
	}
	if err != nil {
		return fmt.Errorf("%w: cannot write index entries: %v", ErrUnavailable, err)
	}
	return nil
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

// finishIndexBuild records that ix is complete, deletes the older
// generations and lets queries use ix.
func (e *Engine) finishIndexBuild(c *Container, ix *indexState) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	info := c.Info()
	if _, cur, err := e.containerLocked(info.DB, info.ID); err != nil || cur != c {
		return nil // deleted meanwhile
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.index.Load() != ix {
		return nil // superseded by another policy change
	}
	info = c.Info()
	info.IndexBuilding = false
	if err := e.storeContainer(info); err != nil {
		return err
	}
	c.setInfo(info)
	b := e.store.NewBatch()
	lo, hi := storage.IndexGenerationsSpan(c.rid, 0, ix.gen)
	if err := b.DeleteRange(lo, hi); err != nil {
		b.Discard()
		return err
	}
	if err := b.Commit(); err != nil {
		return fmt.Errorf("cannot delete the old index: %v", err)
	}
	c.index.Store(&indexState{gen: ix.gen, policy: ix.policy, ready: !ix.policy.None})
	return nil
}

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

// lookup is the index access a query uses: one path, and either values
// (equality, IN) or a range.
type lookup struct {
	f    exec.Filter
	spec string // "/a/?"
}

// chooseLookup picks the most selective indexed filter, the one with the
// fewest index entries, and returns it with its candidates (see
// candidates) and the entries read. Filters on the partition key are left
// out when the scope already holds the key. Counting stops at the best
// count so far, so choosing costs at most a few times the chosen lookup.
// A nil lookup means scan.
func (c *Container) chooseLookup(ix *indexState, filters []exec.Filter, scope QueryScope) (*lookup, [][]byte, int, error) {
	if ix == nil || !ix.ready {
		return nil, nil, 0, nil
	}
	filters = mergeRanges(filters)
	// Likely the most selective first: equalities with few values, then
	// ranges bounded on both sides.
	order := make([]int, 0, len(filters))
	for i := range filters {
		f := &filters[i]
		if ix.policy.Indexed(f.Path) && !((scope.HasKey || len(scope.Keys) > 0) && c.isKeyPath(f.Path)) {
			order = append(order, i)
		}
	}
	guess := func(f *exec.Filter) int {
		switch {
		case f.IsEquality():
			return len(f.Values)
		case f.Lo.IsDefined() && f.Hi.IsDefined():
			return 100
		}
		return 1000
	}
	slices.SortStableFunc(order, func(a, b int) int { return guess(&filters[a]) - guess(&filters[b]) })
	var best *lookup
	var bestKeys [][]byte
	read, bestEntries := 0, -1
	for _, i := range order {
		l := &lookup{f: filters[i], spec: index.Spec(filters[i].Path)}
		keys, entries, complete, err := l.candidates(c.e.store, c.rid, ix.gen, bestEntries)
		read += entries
		if err != nil {
			return nil, nil, read, err
		}
		if complete && (bestEntries < 0 || entries < bestEntries) {
			best, bestKeys, bestEntries = l, keys, entries
		}
	}
	return best, bestKeys, read, nil
}

// mergeRanges combines a lower and an upper bound on one path (of one
// type) into one range filter.
func mergeRanges(fs []exec.Filter) []exec.Filter {
	out := slices.Clone(fs)
	for i := range out {
		a := &out[i]
		if a.IsEquality() || a.Lo.IsDefined() == a.Hi.IsDefined() {
			continue
		}
		for j := range out {
			b := &out[j]
			if i == j || b.IsEquality() || !slices.Equal(a.Path, b.Path) {
				continue
			}
			if !a.Hi.IsDefined() && b.Hi.IsDefined() && !b.Lo.IsDefined() && b.Hi.Kind() == a.Lo.Kind() {
				a.Hi, a.HiIncl = b.Hi, b.HiIncl
			}
			if !a.Lo.IsDefined() && b.Lo.IsDefined() && !b.Hi.IsDefined() && b.Lo.Kind() == a.Hi.Kind() {
				a.Lo, a.LoIncl = b.Lo, b.LoIncl
			}
		}
	}
	return out
}

// isKeyPath reports whether path is a partition key path, or a base path of
// the synthetic key.
func (c *Container) isKeyPath(path []string) bool {
	for _, p := range c.paths {
		if slices.Equal(p, path) {
			return true
		}
	}
	if c.synth != nil {
		for _, p := range c.synth.Segments() {
			if slices.Equal(p, path) {
				return true
			}
		}
	}
	return false
}

// candidates returns the keys of the items the lookup selects, ascending
// and unique, and how many index entries it read. Approximate encodings
// (see package index) make it a superset of the matches: bounds are
// always inclusive. With limit >= 0 it gives up (complete false) once it
// has read more than limit entries.
func (l *lookup) candidates(db *storage.DB, rid [storage.RidLen]byte, gen uint32, limit int) (keys [][]byte, entries int, complete bool, err error) {
	base := index.AppendPath(storage.IndexPrefix(nil, rid, gen), l.f.Path)
	var spans [][2][]byte
	if l.f.IsEquality() {
		for _, v := range l.f.Values {
			lo := index.AppendValue(slices.Clone(base), v)
			spans = append(spans, [2][]byte{lo, storage.PrefixEnd(lo)})
		}
	} else {
		var lo, hi []byte
		if l.f.Lo.IsDefined() {
			lo = index.AppendValue(slices.Clone(base), l.f.Lo)
		} else {
			lo = index.AppendTypeStart(slices.Clone(base), l.f.Hi.Kind())
		}
		if l.f.Hi.IsDefined() {
			hi = storage.PrefixEnd(index.AppendValue(slices.Clone(base), l.f.Hi))
		} else {
			hi = index.AppendTypeEnd(slices.Clone(base), l.f.Lo.Kind())
		}
		if bytes.Compare(lo, hi) < 0 {
			spans = append(spans, [2][]byte{lo, hi})
		}
	}
	for _, s := range spans {
		err := db.Iterate(s[0], s[1], func(k, _ []byte) (bool, error) {
			if entries++; limit >= 0 && entries > limit {
				return false, nil
			}
			rest := k[len(base):]
			n := index.ValueLen(rest)
			if n < 0 {
				return false, corrupt("index entry %x has a value that does not decode", k)
			}
			keys = append(keys, storage.AppendItemKeyFromSuffix(nil, rid, rest[n:]))
			return true, nil
		})
		if err != nil || limit >= 0 && entries > limit {
			return nil, entries, false, err
		}
	}
	slices.SortFunc(keys, bytes.Compare)
	return slices.CompactFunc(keys, bytes.Equal), entries, true, nil
}

// within returns the keys in [lo, hi) of sorted keys.
func within(keys [][]byte, lo, hi []byte) [][]byte {
	i := sort.Search(len(keys), func(i int) bool { return bytes.Compare(keys[i], lo) >= 0 })
	j := sort.Search(len(keys), func(i int) bool { return bytes.Compare(keys[i], hi) >= 0 })
	if j < i {
		j = i
	}
	return keys[i:j]
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

// IndexUtilization is the index use of a query page: the index paths the
// query used, and the filtered paths that had no index. The API layer
// renders it for clients that ask for index metrics.
type IndexUtilization struct {
	Utilized  []string
	Potential []string
}

// indexUtilization describes the index use of a query page: the lookup it
// used, the ORDER BY path whose order it read (when sorted), and the
// filtered and ORDER BY paths that have no index.
func indexUtilization(ix *indexState, filters []exec.Filter, used *lookup, orderPath []string, sorted bool) IndexUtilization {
	var u IndexUtilization
	if used != nil {
		u.Utilized = append(u.Utilized, used.spec)
	}
	if sorted {
		u.Utilized = append(u.Utilized, index.Spec(orderPath))
	}
	paths := make([][]string, 0, len(filters)+1)
	for _, f := range filters {
		paths = append(paths, f.Path)
	}
	if orderPath != nil {
		paths = append(paths, orderPath)
	}
	for _, p := range paths {
		if ix == nil || !ix.policy.Indexed(p) {
			spec := index.Spec(p)
			if !slices.Contains(u.Potential, spec) {
				u.Potential = append(u.Potential, spec)
			}
		}
	}
	return u
}

// sameJSON reports whether two JSON texts are the same value.
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return string(a) == string(b)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}
