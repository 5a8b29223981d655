package engine

import (
	"bytes"
	"slices"
	"sort"

	"github.com/parsecdb/parsec/internal/index"
	"github.com/parsecdb/parsec/internal/query/exec"
	"github.com/parsecdb/parsec/internal/storage"
)

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
	t := IndexTerm{Path: l.f.Path, Values: l.f.Values, Lo: l.f.Lo, Hi: l.f.Hi}
	for _, s := range t.spans(base) {
		err := db.Iterate(s[0], s[1], func(k, _ []byte) (bool, error) {
			if entries++; limit >= 0 && entries > limit {
				return false, nil
			}
			key, err := entryItem(rid, base, k)
			keys = append(keys, key)
			return err == nil, err
		})
		if err != nil || limit >= 0 && entries > limit {
			return nil, entries, false, err
		}
	}
	slices.SortFunc(keys, bytes.Compare)
	return slices.CompactFunc(keys, bytes.Equal), entries, true, nil
}

// entryItem returns the key of the item that the index entry k, under the
// path prefix base, names.
func entryItem(rid [storage.RidLen]byte, base, k []byte) ([]byte, error) {
	rest := k[len(base):]
	n := index.ValueLen(rest)
	if n < 0 {
		return nil, corrupt("index entry %x has a value that does not decode", k)
	}
	return storage.AppendItemKeyFromSuffix(nil, rid, rest[n:]), nil
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
