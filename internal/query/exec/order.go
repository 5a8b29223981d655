package exec

import (
	"bytes"
	"cmp"

	"github.com/parsecdb/parsec/internal/query/eval"
)

// pos is the position of a row in a partition: the key of its document and
// its ordinal in the document's FROM/JOIN expansion (fan-out). Positions
// order rows as a scan of the partition produces them. fan == wholeDoc
// stands after every row of the document.
type pos struct {
	key []byte
	fan int64
}

const wholeDoc = int64(1<<63 - 1)

func cmpPos(a, b pos) int {
	if c := bytes.Compare(a.key, b.key); c != 0 {
		return c
	}
	return cmp.Compare(a.fan, b.fan)
}

// cmpTuple orders tuples of values element by element (eval.Compare, so
// undefined first), then by length.
func cmpTuple(a, b []eval.Value) int {
	for i := range min(len(a), len(b)) {
		if c := eval.Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

func equalTuple(a, b []eval.Value) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !eval.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

func hashTuple(a []eval.Value) uint64 {
	h := uint64(14695981039346656037)
	for _, v := range a {
		h ^= eval.Hash(v)
		h *= 1099511628211
		h = h<<29 | h>>35
	}
	return h
}

// cmpOrder orders two tuples of ORDER BY values, each key ascending or
// descending as the query says.
func (q *query) cmpOrder(a, b []eval.Value) int {
	for i, k := range q.orderBy {
		c := eval.Compare(a[i], b[i])
		if k.desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

// row is one candidate result row of a partition with its sort key.
type row struct {
	ord []eval.Value // ORDER BY values (Ordered, OrderedDistinct)
	pos pos          // where it came from (Streaming, Ordered)
	val eval.Value   // the projected row (undefined until projected)
	raw []byte       // the row's JSON text, when copied from a RawSource (val is then undefined)
	env *eval.Env    // Ordered, SELECT list or *: the tuple, projected late
	// size is the estimated JSON size of val (or, before a late
	// projection, of the document), when the page's size is bounded.
	size int
}

// cmpRows is the order of rows of shape s: the order in which a merge emits
// them, and the order of their sort keys in a State.
func (p *Plan) cmpRows(a, b *row) int {
	switch p.shape {
	case Streaming:
		return cmpPos(a.pos, b.pos)
	case Ordered:
		if c := p.top.cmpOrder(a.ord, b.ord); c != 0 {
			return c
		}
		return cmpPos(a.pos, b.pos)
	case Distinct:
		return eval.Compare(a.val, b.val)
	case OrderedDistinct:
		if c := p.top.cmpOrder(a.ord, b.ord); c != 0 {
			return c
		}
		return eval.Compare(a.val, b.val)
	}
	panic("BUG: exec: rows of a " + p.shape.String() + " query")
}
