package engine

import (
	"bytes"
	"errors"
	"fmt"
	"slices"

	"github.com/parsecdb/parsec/internal/index"
	"github.com/parsecdb/parsec/internal/query/eval"
	"github.com/parsecdb/parsec/internal/storage"
	"github.com/parsecdb/parsec/internal/throughput"
)

// ReadIndexed serves front ends whose filters are not the query language's
// (the MongoDB API): the front end translates its filter into index terms
// whose union holds every item the filter can match, reads the items those
// terms select, and evaluates its filter on them. The index decides which
// items are read, never the result.

// An IndexTerm selects the index entries of one path: those whose value is
// one of Values (when Values is not nil); or those in [Lo, Hi], where a
// bound that is undefined is open up to the end of the other bound's type;
// or, with neither, every entry whose value is of type Kind.
type IndexTerm struct {
	Path   []string
	Values []eval.Value
	Lo, Hi eval.Value
	Kind   eval.Kind
}

// ErrIndexUnusable is returned by ReadIndexed when the index cannot serve
// the terms: it is being built, a path is not indexed, or the terms select
// more entries than a page may hold (MaxIndexCandidates). On a range's
// first page the caller reads the range another way; on a later one the
// read cannot go on.
var ErrIndexUnusable = errors.New("the index cannot serve this read")

// MaxIndexCandidates bounds the index entries the first page of an indexed
// read of one range may select: a less selective read is better served by
// a scan, which needs no memory for its candidates. A later page, which
// cannot change its order to a scan's, may select laterPagesFactor times
// as many (the range may have grown); past that it fails with
// ErrIndexUnusable too.
const (
	MaxIndexCandidates = 20_000
	laterPagesFactor   = 10
)

// spans returns the index key spans the term selects (none for an empty
// or inverted range).
func (t *IndexTerm) spans(base []byte) [][2][]byte {
	var out [][2][]byte
	add := func(lo, hi []byte) {
		if bytes.Compare(lo, hi) < 0 {
			out = append(out, [2][]byte{lo, hi})
		}
	}
	switch {
	case t.Values != nil:
		for _, v := range t.Values {
			lo := index.AppendValue(slices.Clone(base), v)
			add(lo, storage.PrefixEnd(lo))
		}
	case t.Lo.IsDefined() || t.Hi.IsDefined():
		var lo, hi []byte
		if t.Lo.IsDefined() {
			lo = index.AppendValue(slices.Clone(base), t.Lo)
		} else {
			lo = index.AppendTypeStart(slices.Clone(base), t.Hi.Kind())
		}
		if t.Hi.IsDefined() {
			hi = storage.PrefixEnd(index.AppendValue(slices.Clone(base), t.Hi))
		} else {
			hi = index.AppendTypeEnd(slices.Clone(base), t.Lo.Kind())
		}
		add(lo, hi)
	default:
		add(index.AppendTypeStart(slices.Clone(base), t.Kind), index.AppendTypeEnd(slices.Clone(base), t.Kind))
	}
	return out
}

// IndexedFeed is a page of ReadIndexed.
type IndexedFeed struct {
	Feed
	// Entries is how many index entries the page read.
	Entries int
}

// ReadIndexed returns a page of the items of partition key range rangeID
// that have an entry selected by one of terms, in key order, from a
// snapshot of the range: after the item key after (nil: from the range's
// start; the Next of the previous page), up to maxItems items and 4 MB. It
// returns ErrIndexUnusable when the index cannot serve the terms, and
// ErrPartitionGone when the range has split (its children serve the same
// position). Bounds are inclusive and strings approximate (see package
// index), so the items are a superset of the entries' exact matches.
func (c *Container) ReadIndexed(rangeID string, terms []IndexTerm, after []byte, maxItems int) (IndexedFeed, error) {
	var f IndexedFeed
	if maxItems <= 0 {
		maxItems = DefaultPageSize
	}
	ix := c.index.Load()
	if ix == nil || !ix.ready {
		return f, fmt.Errorf("%w: the index of container %q is being built", ErrIndexUnusable, c.Info().ID)
	}
	for _, t := range terms {
		if !index.Fits(t.Path) || !ix.policy.Indexed(t.Path) {
			return f, fmt.Errorf("%w: path %s is not indexed", ErrIndexUnusable, index.Spec(t.Path))
		}
	}
	p, err := c.PartitionByID(rangeID)
	if err != nil {
		return f, err
	}
	now := c.e.opts.Now()
	if err := p.admit(now); err != nil {
		return f, err
	}
	snap, err := p.Snapshot()
	if err != nil {
		return f, err
	}
	defer snap.Close()
	f.Sessions = []Session{snap.Session()}
	klo, khi := snap.ItemSpan()
	// A position may lie outside the range: a child of the range it was
	// taken in starts where the position says, or at its own start.
	if after != nil && bytes.Compare(after, klo) >= 0 {
		klo = append(slices.Clone(after), 0) // the first key after it
	}
	limit := MaxIndexCandidates
	if n := c.e.opts.indexCandidates; n > 0 {
		limit = n
	}
	if after != nil {
		// A later page keeps to the index the read began with; a range that
		// grew past this meanwhile ends the read rather than the memory.
		limit *= laterPagesFactor
	}
	keys, err := c.indexCandidates(snap, ix.gen, terms, klo, khi, limit, &f.Entries)
	if err != nil {
		return f, err
	}
	x := c.expiry()
	for i, k := range keys {
		if len(f.Docs) >= maxItems || f.bytes >= maxPageBytes {
			f.Next = slices.Clone(keys[i-1])
			break
		}
		v, err := snap.Get(nil, k)
		if err == storage.ErrNotFound {
			continue // an entry of another generation's leftovers
		}
		if err != nil {
			return f, fmt.Errorf("%w: cannot read items: %v", ErrUnavailable, err)
		}
		_, _, doc, err := decodeItem(k, v)
		if err != nil {
			return f, err
		}
		if !x.expired(doc) {
			f.Docs = append(f.Docs, append([]byte(nil), doc...))
			f.bytes += len(doc)
		}
	}
	f.Charge = throughput.QueryCharge(len(f.Docs), f.bytes, f.Entries)
	p.charge(now, f.Charge)
	return f, nil
}

// indexCandidates returns the sorted, distinct keys in [klo, khi) of the
// items the terms select, adding the entries it reads to *entries. With
// limit >= 0, more than limit entries in the range is ErrIndexUnusable.
func (c *Container) indexCandidates(rd stateReader, gen uint32, terms []IndexTerm, klo, khi []byte, limit int, entries *int) ([][]byte, error) {
	var keys [][]byte
	inRange := 0
	for i := range terms {
		base := index.AppendPath(storage.IndexPrefix(nil, c.rid, gen), terms[i].Path)
		for _, s := range terms[i].spans(base) {
			err := rd.Iterate(s[0], s[1], func(k, _ []byte) (bool, error) {
				*entries++
				key, err := entryItem(c.rid, base, k)
				if err != nil {
					return false, err
				}
				if bytes.Compare(key, klo) < 0 || bytes.Compare(key, khi) >= 0 {
					return true, nil
				}
				if inRange++; limit >= 0 && inRange > limit {
					return false, fmt.Errorf("%w: it selects more than %d index entries in the range", ErrIndexUnusable, limit)
				}
				keys = append(keys, key)
				return true, nil
			})
			if errors.Is(err, ErrIndexUnusable) || errors.Is(err, ErrCorrupt) {
				return nil, err
			}
			if err != nil {
				return nil, fmt.Errorf("%w: index lookup failed: %v", ErrUnavailable, err)
			}
		}
	}
	slices.SortFunc(keys, bytes.Compare)
	return slices.CompactFunc(keys, bytes.Equal), nil
}
