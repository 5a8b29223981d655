package engine

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sync"
	"unsafe"

	"github.com/parsecdb/parsec/internal/index"
	"github.com/parsecdb/parsec/internal/jsondoc"
	"github.com/parsecdb/parsec/internal/query/eval"
	"github.com/parsecdb/parsec/internal/storage"
)

// present is the value of an index entry (its key says everything).
var present = []byte{}

// docTerms are the encoded index terms of one document version under one
// policy, in one buffer.
type docTerms struct {
	policy *index.Policy
	buf    []byte
	refs   []termRef
	// of is the document they are the terms of (bodyTerms): apply uses them
	// only for that same body.
	of []byte
	// gen is the index generation of policy (bodyTerms): apply uses them
	// only under that generation, which names one policy of the container.
	gen uint32
}

type termRef struct {
	end     int32 // offset after the term in buf
	pathLen int32 // length of its path part
	sys     bool  // under a top-level system property
}

func (d *docTerms) reset(p *index.Policy) {
	d.policy, d.buf, d.refs = p, d.buf[:0], d.refs[:0]
}

func (d *docTerms) term(i int) []byte {
	start := int32(0)
	if i > 0 {
		start = d.refs[i-1].end
	}
	return d.buf[start:d.refs[i].end]
}

func (d *docTerms) path(i int) []byte { return d.term(i)[:d.refs[i].pathLen] }

// body is the number of terms not under a system property: what a write
// is priced by, so that a document counts the same with or without the
// properties the server adds.
func (d *docTerms) body() int {
	n := 0
	for _, r := range d.refs {
		if !r.sys {
			n++
		}
	}
	return n
}

func (d *docTerms) add(term []byte, pathLen int, sys bool) {
	d.buf = append(d.buf, term...)
	d.refs = append(d.refs, termRef{end: int32(len(d.buf)), pathLen: int32(pathLen), sys: sys})
}

// collect sets d to the terms of doc (JSON text) under p.
func (d *docTerms) collect(p *index.Policy, doc []byte, scratch *[]byte) error {
	d.reset(p)
	return p.RawTerms(doc, scratch, func(term []byte, pathLen int, path []string) error {
		d.add(term, pathLen, len(path) == 1 && isSystemProperty(path[0]))
		return nil
	})
}

func isSystemProperty(name string) bool {
	switch name {
	case "_rid", "_self", "_etag", "_ts", "_attachments":
		return true
	}
	return false
}

// addSystem adds the terms of the system properties jsondoc.WithSystem
// gives a document, in its order.
func (d *docTerms) addSystem(s jsondoc.System, scratch *[]byte) {
	props := [...]struct {
		path []string
		val  eval.Value
	}{
		{sysPaths[0], eval.StringValue(s.Rid)},
		{sysPaths[1], eval.StringValue(s.Self)},
		{sysPaths[2], eval.StringValue(s.Etag)},
		{sysPaths[3], eval.StringValue("attachments/")},
		{sysPaths[4], eval.IntValue(s.Ts)},
	}
	for _, p := range props {
		if d.policy.Indexed(p.path) {
			b := index.AppendPath((*scratch)[:0], p.path)
			n := len(b)
			b = index.AppendValue(b, p.val)
			*scratch = b
			d.add(b, n, true)
		}
	}
}

var sysPaths = [...][]string{{"_rid"}, {"_self"}, {"_etag"}, {"_attachments"}, {"_ts"}}

// bodyTerms returns the terms of a new item body (without system
// properties) under the container's current policy, computed before the
// operation is queued; nil when the container indexes nothing or the body
// is not JSON (apply reports that).
func (c *Container) bodyTerms(body []byte) *docTerms {
	ix := c.index.Load()
	if ix == nil || ix.policy == nil || ix.policy.None {
		return nil
	}
	d := &docTerms{buf: make([]byte, 0, min(len(body), 1024)), refs: make([]termRef, 0, 16)}
	s := termScratchPool.Get().(*termScratch)
	defer termScratchPool.Put(s)
	if d.collect(ix.policy, body, &s.buf) != nil {
		return nil
	}
	d.of, d.gen = body, ix.gen
	return d
}

// sameBytes reports whether a and b are the same slice of memory.
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && unsafe.SliceData(a) == unsafe.SliceData(b)
}

// termScratch is the working space of txn.index, reused between calls.
type termScratch struct {
	old, new docTerms
	buf      []byte
	oi, ni   []int32
	paths    [][]byte
}

var termScratchPool = sync.Pool{New: func() any { return new(termScratch) }}

// termCounts is what pricing needs of an operation's index work.
type termCounts struct {
	// terms is the number of index terms (system properties left out) of
	// the new version, or of the old one for a delete.
	terms int
	// changed is the number of property paths whose term was added, removed
	// or changed in value (system properties left out).
	changed int
}

// index replaces the index entries of an item's old version (nil if none)
// by those of its new one, doc (nil for a delete). For a new version sys is
// what jsondoc.WithSystem added to op.Body to make doc; when op carries the
// terms of its body under the current policy, doc is not read again. Terms
// both versions have are left alone.
func (t *txn) index(ac *applyCtx, op *Op, old, doc []byte, sys jsondoc.System) (termCounts, error) {
	ix := ac.index
	if ix == nil || ix.policy == nil || ix.policy.None {
		return termCounts{}, nil
	}
	s := termScratchPool.Get().(*termScratch)
	defer termScratchPool.Put(s)
	var tc termCounts
	if old != nil {
		if err := s.old.collect(ix.policy, old, &s.buf); err != nil {
			// The old version is the store's: it was indexed when written.
			return tc, corrupt("item %q (effective partition key %s) cannot be indexed: %v", op.ID, op.EPK, err)
		}
	}
	if doc != nil {
		if pre := op.terms; pre != nil && pre.gen == ix.gen && op.Kind != OpPatch && sameBytes(pre.of, op.Body) {
			s.new.reset(ix.policy)
			s.new.buf = append(s.new.buf, pre.buf...)
			s.new.refs = append(s.new.refs, pre.refs...)
			s.new.addSystem(sys, &s.buf)
		} else if err := s.new.collect(ix.policy, doc, &s.buf); err != nil {
			// The new version is the request's: its fault, not the store's.
			return tc, badRequest("the document cannot be indexed: %v", err)
		}
	}
	entry := func(term []byte, v []byte) {
		t.put(storage.IndexEntry(nil, ac.rid, ix.gen, term, op.EPK, op.ID), v)
	}
	switch {
	case old == nil && doc == nil:
	case old == nil:
		for i := range s.new.refs {
			entry(s.new.term(i), present)
		}
		tc.terms = s.new.body()
	case doc == nil:
		for i := range s.old.refs {
			entry(s.old.term(i), nil)
		}
		tc.terms = s.old.body()
	default:
		tc.terms = s.new.body()
		tc.changed = s.replace(entry)
	}
	return tc, nil
}

// replace writes the difference between s.old's and s.new's terms through
// entry and returns the number of paths (system properties left out) whose
// term differs.
func (s *termScratch) replace(entry func(term, v []byte)) int {
	sorted := func(d *docTerms, idx []int32) []int32 {
		idx = idx[:0]
		for i := range d.refs {
			idx = append(idx, int32(i))
		}
		slices.SortFunc(idx, func(a, b int32) int { return bytes.Compare(d.term(int(a)), d.term(int(b))) })
		// A stored document written before repeated member names were
		// refused may repeat a term; it has one entry.
		return slices.CompactFunc(idx, func(a, b int32) bool { return bytes.Equal(d.term(int(a)), d.term(int(b))) })
	}
	s.oi, s.ni = sorted(&s.old, s.oi), sorted(&s.new, s.ni)
	s.paths = s.paths[:0]
	oi, ni := s.oi, s.ni
	for len(oi) > 0 || len(ni) > 0 {
		c := 0
		switch {
		case len(oi) == 0:
			c = 1
		case len(ni) == 0:
			c = -1
		default:
			c = bytes.Compare(s.old.term(int(oi[0])), s.new.term(int(ni[0])))
		}
		switch {
		case c == 0: // unchanged: the entry stays
			oi, ni = oi[1:], ni[1:]
		case c < 0: // only the old version has it
			i := int(oi[0])
			entry(s.old.term(i), nil)
			if !s.old.refs[i].sys {
				s.paths = append(s.paths, s.old.path(i))
			}
			oi = oi[1:]
		default: // only the new version has it
			i := int(ni[0])
			entry(s.new.term(i), present)
			if !s.new.refs[i].sys {
				s.paths = append(s.paths, s.new.path(i))
			}
			ni = ni[1:]
		}
	}
	// A path whose value changed appears twice: count it once.
	slices.SortFunc(s.paths, bytes.Compare)
	return len(slices.CompactFunc(s.paths, bytes.Equal))
}

// errNotJSON is eachTerm's error for a document that cannot be read.
var errNotJSON = errors.New("the document is not valid JSON")

// eachTerm calls fn with the encoded terms of a stored document under ix.
// buf is reused between calls.
func eachTerm(ix *indexState, doc []byte, buf *[]byte, fn func(term []byte) error) error {
	if ix == nil || ix.policy == nil || ix.policy.None || doc == nil {
		return nil
	}
	err := ix.policy.RawTerms(doc, buf, func(term []byte, _ int, _ []string) error { return fn(term) })
	if errors.Is(err, index.ErrMalformed) {
		return fmt.Errorf("%w: %v", errNotJSON, err)
	}
	return err
}
