package exec

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/parsecdb/parsec/internal/index"
	"github.com/parsecdb/parsec/internal/query/eval"
	"github.com/parsecdb/parsec/internal/query/parser"
)

// doc is a stored document: its key models the storage key
// "EPK | id" with an 8-hex-digit hash of the id standing for the EPK, so
// that partitions are contiguous hash ranges in key order, as in storage.
type doc struct {
	key []byte
	val eval.Value
}

func docKey(id string) []byte {
	h := sha256.Sum256([]byte(id))
	return fmt.Appendf(nil, "%x|%s", h[:4], id)
}

// loadDataset reads testdata/dataset.json, sorted by key.
func loadDataset(t testing.TB) []doc {
	t.Helper()
	raw, err := os.ReadFile("testdata/dataset.json")
	if err != nil {
		t.Fatal(err)
	}
	all, err := eval.FromJSON(raw)
	if err != nil {
		t.Fatal(err)
	}
	var docs []doc
	for _, v := range all.Elems() {
		docs = append(docs, doc{key: docKey(v.Property("id").AsString()), val: v})
	}
	slices.SortFunc(docs, func(a, b doc) int { return bytes.Compare(a.key, b.key) })
	return docs
}

// split cuts docs (sorted by key) into n partitions of equal hash ranges.
func split(docs []doc, n int) [][]doc {
	parts := make([][]doc, n)
	for _, d := range docs {
		h, err := strconv.ParseUint(string(d.key[:8]), 16, 32)
		if err != nil {
			panic(err)
		}
		i := int(h * uint64(n) >> 32)
		parts[i] = append(parts[i], d)
	}
	return parts
}

// sliceSource is a Source over a sorted slice of documents.
type sliceSource struct {
	docs []doc
	i    int
	buf  []byte
}

func (s *sliceSource) Next() ([]byte, eval.Value, bool, error) {
	if s.i >= len(s.docs) {
		return nil, eval.Value{}, false, nil
	}
	d := s.docs[s.i]
	s.i++
	// Reuse one key buffer, as a storage iterator would.
	s.buf = append(s.buf[:0], d.key...)
	return s.buf, d.val, true, nil
}

func (s *sliceSource) Seek(key []byte) error {
	s.i = sort.Search(len(s.docs), func(i int) bool { return bytes.Compare(s.docs[i].key, key) >= 0 })
	return nil
}

// noSeek hides Seek.
type noSeek struct{ s *sliceSource }

func (n noSeek) Next() ([]byte, eval.Value, bool, error) { return n.s.Next() }

// sortedSource is a SortedSource over a partition's documents: buckets
// are index.AppendBucket of the value at the sort path, or, when coarse,
// only its first byte (the type), so that buckets hold many values. Within
// a bucket documents come in an order unrelated to key or value. read
// counts the documents NextSorted returned.
type sortedSource struct {
	sliceSource
	sorted  []doc
	buckets [][]byte
	desc    bool
	coarse  bool
	j       int
	read    *int
}

func newSortedSource(docs []doc, path []string, desc, coarse bool, read *int) *sortedSource {
	s := &sortedSource{sliceSource: sliceSource{docs: docs}, sorted: slices.Clone(docs), desc: desc, coarse: coarse, read: read}
	bucket := func(d doc) []byte {
		v := d.val
		for _, name := range path {
			v = v.Property(name)
		}
		b := index.AppendBucket(nil, v)
		if coarse {
			b = b[:1]
		}
		return b
	}
	scramble := func(d doc) [32]byte { return sha256.Sum256(d.key) }
	slices.SortStableFunc(s.sorted, func(a, b doc) int {
		c := bytes.Compare(bucket(a), bucket(b))
		if desc {
			c = -c
		}
		if c != 0 {
			return c
		}
		x, y := scramble(a), scramble(b)
		return bytes.Compare(x[:], y[:])
	})
	for _, d := range s.sorted {
		s.buckets = append(s.buckets, bucket(d))
	}
	return s
}

func (s *sortedSource) NextSorted() ([]byte, eval.Value, []byte, bool, error) {
	if s.j >= len(s.sorted) {
		return nil, eval.Value{}, nil, false, nil
	}
	d, b := s.sorted[s.j], s.buckets[s.j]
	s.j++
	if s.read != nil {
		*s.read++
	}
	return d.key, d.val, b, true, nil
}

func (s *sortedSource) SeekSorted(v eval.Value) error {
	b := index.AppendBucket(nil, v)
	if s.coarse {
		b = b[:1]
	}
	for s.j < len(s.sorted) {
		c := bytes.Compare(s.buckets[s.j], b)
		if c >= 0 && !s.desc || c <= 0 && s.desc {
			break
		}
		s.j++
	}
	return nil
}

// sortedSources returns sorted sources when p has a sort path, else
// seeking sources.
func sortedSources(p *Plan, parts [][]doc, coarse bool, read *int) []Source {
	path, desc, ok := p.SortPath()
	if !ok {
		return sources(parts, true)
	}
	srcs := make([]Source, len(parts))
	for i, d := range parts {
		srcs[i] = newSortedSource(d, path, desc, coarse, read)
	}
	return srcs
}

func sources(parts [][]doc, seek bool) []Source {
	srcs := make([]Source, len(parts))
	for i, p := range parts {
		if seek {
			srcs[i] = &sliceSource{docs: p}
		} else {
			srcs[i] = noSeek{&sliceSource{docs: p}}
		}
	}
	return srcs
}

// compile parses text and compiles it with params given as JSON
// ({"@name": value} or {"name": value}).
func compile(text, params string) (*Plan, error) {
	q, err := parser.Parse(text)
	if err != nil {
		return nil, err
	}
	ps, err := parseParams(params)
	if err != nil {
		return nil, err
	}
	return Compile(q, ps)
}

func parseParams(params string) (map[string]eval.Value, error) {
	ps := map[string]eval.Value{}
	if params == "" {
		return ps, nil
	}
	v, err := eval.FromJSON([]byte(params))
	if err != nil {
		return nil, err
	}
	for i := range v.Len() {
		k, m := v.Member(i)
		ps[strings.TrimPrefix(k, "@")] = m
	}
	return ps, nil
}

// runPages runs p to the end over parts with pages of pageSize, passing the
// state through its binary form when roundTrip is set, and returns every
// row.
func runPages(p *Plan, parts [][]doc, pageSize int, roundTrip, seek bool) ([]eval.Value, error) {
	return runPagesFrom(p, func() []Source { return sources(parts, seek) }, pageSize, roundTrip)
}

// runPagesFrom is runPages over the sources mk makes for each page.
func runPagesFrom(p *Plan, mk func() []Source, pageSize int, roundTrip bool) ([]eval.Value, error) {
	rows, _, err := runPagesWithin(p, mk, pageSize, roundTrip, nil)
	return rows, err
}

// runPagesWithin is runPagesFrom within the limits lim makes afresh for
// every page (nil: none). It returns the rows and the number of pages, and
// checks that no page has more than pageSize rows, that every page of more
// than one row fits MaxPageBytes, and, without limits (which may end a
// page before its first row), that every page makes progress.
func runPagesWithin(p *Plan, mk func() []Source, pageSize int, roundTrip bool, lim func() *Limits) ([]eval.Value, int, error) {
	var st *State
	var out []eval.Value
	prev := ""
	p, err := GatherStats(p, mk())
	if err != nil {
		return nil, 0, err
	}
	for page := 0; ; page++ {
		var l *Limits
		if lim != nil {
			l = lim()
		}
		rows, next, err := ExecLimits(p, mk(), st, pageSize, l)
		if err != nil {
			return nil, page, err
		}
		if pageSize > 0 && len(rows) > pageSize {
			return nil, page, fmt.Errorf("page %d has %d rows, more than %d", page, len(rows), pageSize)
		}
		if l != nil && l.MaxPageBytes > 0 && len(rows) > 1 {
			size := 0
			for _, r := range rows {
				size += len(r.AppendJSON(nil))
			}
			if size > l.MaxPageBytes {
				return nil, page, fmt.Errorf("page %d: %d rows of %d bytes, over %d", page, len(rows), size, l.MaxPageBytes)
			}
		}
		out = append(out, rows...)
		if next.Done() {
			return out, page + 1, nil
		}
		if s := next.String(); lim == nil && len(rows) == 0 && s == prev || page > 1000000 {
			return nil, page, fmt.Errorf("no progress at page %d: %s", page, s)
		}
		prev = next.String()
		if roundTrip {
			b, err := next.MarshalBinary()
			if err != nil {
				return nil, page, err
			}
			if next, err = p.UnmarshalState(b); err != nil {
				return nil, page, err
			}
		}
		st = next
	}
}

func rowsString(rows []eval.Value) string {
	parts := make([]string, len(rows))
	for i, r := range rows {
		parts[i] = r.String()
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func equalRows(a, b []eval.Value) bool {
	return slices.EqualFunc(a, b, eval.Equal)
}

// equalMultiset compares rows ignoring order.
func equalMultiset(a, b []eval.Value) bool {
	if len(a) != len(b) {
		return false
	}
	x, y := slices.Clone(a), slices.Clone(b)
	slices.SortFunc(x, eval.Compare)
	slices.SortFunc(y, eval.Compare)
	return equalRows(x, y)
}
