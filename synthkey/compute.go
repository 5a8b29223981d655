package synthkey

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"sync"

	"github.com/parsecdb/parsec/internal/jsondoc"
)

// Key is a computed partition key: one component per level of the
// expression. Each component is a string, a float64, a bool, nil (JSON null)
// or Undefined. Components computed by concat(...) are always strings; a
// plain-path level holds the property's own value.
type Key []any

type undefinedT struct{}

// Undefined is the key component of a plain-path level whose property is
// missing from the document. Cosmos DB files such documents under the
// "undefined" partition key value, written {} in the
// x-ms-documentdb-partitionkey header.
var Undefined undefinedT

// String returns "undefined".
func (undefinedT) String() string { return "undefined" }

// MarshalJSON returns {}, the header form of the undefined value, so that
// json.Marshal(key) is the x-ms-documentdb-partitionkey header value.
func (undefinedT) MarshalJSON() ([]byte, error) { return []byte("{}"), nil }

// String returns the key as the JSON array the x-ms-documentdb-partitionkey
// header carries: ["2018-08-09.17"], ["t1",5], [{}] for Undefined. Numbers
// are written in shortest round-trip form, keeping -0 as -0.
func (k Key) String() string {
	b := []byte{'['}
	for i, c := range k {
		if i > 0 {
			b = append(b, ',')
		}
		switch v := c.(type) {
		case string:
			b = jsondoc.AppendQuote(b, v)
		case float64:
			if v == 0 && math.Signbit(v) {
				b = append(b, "-0"...)
			} else if math.IsNaN(v) || math.IsInf(v, 0) {
				b = strconv.AppendFloat(b, v, 'g', -1, 64)
			} else {
				b = appendNumberText(b, v)
			}
		case bool:
			b = strconv.AppendBool(b, v)
		case nil:
			b = append(b, "null"...)
		case undefinedT:
			b = append(b, "{}"...)
		default:
			b = fmt.Appendf(b, "%v", v)
		}
	}
	return string(append(b, ']'))
}

// Equal reports whether k and o have equal components. Numbers compare by
// their bits, so 0 and -0 differ, as they do in partition key hashing.
func (k Key) Equal(o Key) bool {
	if len(k) != len(o) {
		return false
	}
	for i := range k {
		a, b := k[i], o[i]
		if fa, ok := a.(float64); ok {
			fb, ok := b.(float64)
			if !ok || math.Float64bits(fa) != math.Float64bits(fb) {
				return false
			}
			continue
		}
		if a != b {
			return false
		}
	}
	return true
}

// ValueError reports a base value that cannot be used: a path missing from
// the document where a value is needed (in concat or hash), or a value that
// is not a string, number, boolean or null.
type ValueError struct {
	Path    string // the base path, as Paths returns it
	Missing bool   // there is no value at Path
	Found   string // when not Missing: what is there instead, e.g. "an object"
}

func (e *ValueError) Error() string {
	if e.Missing {
		return "synthkey: " + e.Path + " is missing; the key is computed from it and needs a string, number, boolean or null there"
	}
	return "synthkey: " + e.Path + " holds " + e.Found + "; a partition key value must be a string, number, boolean or null"
}

// ErrRandom is returned by FromBase for an expression with random(...):
// its key is not determined by the base values (Expand lists them all).
var ErrRandom = errors.New("synthkey: the expression has random(...), so the base values do not determine one key; use Expand")

// ErrDocument is wrapped by Compute's errors for input that is not a JSON
// object.
var ErrDocument = errors.New("synthkey: invalid document")

// Compute computes the key of doc, the raw JSON text of a document (one JSON
// object). The document is validated and the base paths are read in a single
// pass without decoding anything else. r supplies the random(...) suffix;
// nil uses math/rand/v2's package-level source.
//
// A plain-path level whose property is missing yields Undefined. A missing
// property used by concat(...) or hash(...), and an object or array at any
// base path, yield a *ValueError. A document that is not a JSON object
// yields an error wrapping ErrDocument.
func (e *Expr) Compute(doc []byte, r *rand.Rand) (Key, error) {
	sc := scanPool.Get().(*jsondoc.Scanned)
	defer func() {
		clear(sc.Values) // do not keep the document alive from the pool
		scanPool.Put(sc)
	}()
	if err := jsondoc.ScanInto(sc, doc, e.segs); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrDocument, err)
	}
	return e.FromRaw(sc.Values, r) // the Key does not alias doc
}

// scanPool recycles the scanner results of Compute.
var scanPool = sync.Pool{New: func() any { return new(jsondoc.Scanned) }}

// FromRaw computes the key from the raw JSON text of the base values, in
// Paths order, with nil for a missing value: what jsondoc.Scan returns for
// the paths Segments lists. It lets a caller that scans the document anyway
// compute the key without a second pass. r is as for Compute.
func (e *Expr) FromRaw(raw [][]byte, r *rand.Rand) (Key, error) {
	if len(raw) != len(e.paths) {
		return nil, e.countError(len(raw))
	}
	var buf [4]value
	vals := buf[:0]
	for _, b := range raw {
		vals = append(vals, fromRaw(b))
	}
	return e.build(vals, e.draw(r))
}

// ComputeMap computes the key of a document decoded from JSON into a
// map[string]any (by encoding/json, with or without UseNumber). Values may be
// string, float64, int, int64, json.Number, bool, nil, map[string]any and
// []any. Paths enter nested maps only; a path through anything else is
// missing. Results and errors are as for Compute.
func (e *Expr) ComputeMap(doc map[string]any, r *rand.Rand) (Key, error) {
	var buf [4]value
	vals := buf[:0]
	for _, segs := range e.segs {
		vals = append(vals, fromAny(lookup(doc, segs)))
	}
	return e.build(vals, e.draw(r))
}

// lookup returns the value at the path segs in doc, or Undefined.
func lookup(doc map[string]any, segs []string) any {
	var cur any = doc
	for _, s := range segs {
		m, ok := cur.(map[string]any)
		if !ok {
			return Undefined
		}
		if cur, ok = m[s]; !ok {
			return Undefined
		}
	}
	return cur
}

// FromBase computes the key from the base values, given in Paths order: each
// a string, float64, int, int64, json.Number, bool, nil (JSON null) or
// Undefined (missing). Integers are converted to float64 as JSON numbers are.
// It returns ErrRandom for an expression with random(...).
func (e *Expr) FromBase(base []any) (Key, error) {
	if e.hi > 0 {
		return nil, ErrRandom
	}
	vals, err := e.baseValues(base)
	if err != nil {
		return nil, err
	}
	return e.build(vals, 0)
}

// Expand returns every key the base values (as for FromBase) can produce:
// with random(lo, hi) the hi-lo+1 keys for the suffixes lo, lo+1, ..., hi in
// that order, otherwise exactly one key. A reader who knows the base values
// but not the random suffix finds the document under one of these keys.
func (e *Expr) Expand(base []any) ([]Key, error) {
	vals, err := e.baseValues(base)
	if err != nil {
		return nil, err
	}
	if e.hi == 0 {
		k, err := e.build(vals, 0)
		if err != nil {
			return nil, err
		}
		return []Key{k}, nil
	}
	// Levels without the random suffix are the same in every key.
	first, err := e.build(vals, e.lo)
	if err != nil {
		return nil, err
	}
	ri := 0
	for i, lv := range e.levels {
		for _, a := range lv.concat {
			if a.kind == argRandom {
				ri = i
			}
		}
	}
	n := e.hi - e.lo + 1
	keys := make([]Key, n)
	comps := make([]any, n*len(first))
	var buf []byte
	for j := range n {
		k := Key(comps[j*len(first) : (j+1)*len(first) : (j+1)*len(first)])
		copy(k, first)
		if j > 0 {
			var c any
			if c, buf, err = e.levelComponent(e.levels[ri], vals, e.lo+j, buf[:0]); err != nil {
				return nil, err
			}
			k[ri] = c
		}
		keys[j] = k
	}
	return keys, nil
}

func (e *Expr) baseValues(base []any) ([]value, error) {
	if len(base) != len(e.paths) {
		return nil, e.countError(len(base))
	}
	vals := make([]value, len(base))
	for i, b := range base {
		vals[i] = fromAny(b)
	}
	return vals, nil
}

func (e *Expr) countError(n int) error {
	return fmt.Errorf("synthkey: got %d base values for the %d paths of %s", n, len(e.paths), e)
}

// draw picks the random(...) suffix, or returns 0 if there is none.
func (e *Expr) draw(r *rand.Rand) int {
	if e.hi == 0 {
		return 0
	}
	if r == nil {
		return e.lo + rand.IntN(e.hi-e.lo+1)
	}
	return e.lo + r.IntN(e.hi-e.lo+1)
}

// build computes the key from the base values with the random suffix rnd.
func (e *Expr) build(vals []value, rnd int) (Key, error) {
	k := make(Key, len(e.levels))
	var stack [128]byte
	buf := stack[:0]
	for i, lv := range e.levels {
		var err error
		if k[i], buf, err = e.levelComponent(lv, vals, rnd, buf[:0]); err != nil {
			return nil, err
		}
	}
	return k, nil
}

// levelComponent computes one key component, using buf as scratch space
// (returned for reuse).
func (e *Expr) levelComponent(lv level, vals []value, rnd int, buf []byte) (any, []byte, error) {
	if lv.concat == nil {
		v := &vals[lv.path]
		if v.kind == vBad {
			return nil, buf, &ValueError{Path: e.paths[lv.path], Found: v.str}
		}
		return v.component(), buf, nil
	}
	for _, a := range lv.concat {
		switch a.kind {
		case argString:
			buf = append(buf, a.str...)
		case argRandom:
			buf = strconv.AppendInt(buf, int64(rnd), 10)
		case argPath, argHash:
			v := &vals[a.path]
			switch v.kind {
			case vMissing:
				return nil, buf, &ValueError{Path: e.paths[a.path], Missing: true}
			case vBad:
				return nil, buf, &ValueError{Path: e.paths[a.path], Found: v.str}
			}
			start := len(buf)
			buf = v.appendText(buf)
			if a.kind == argHash {
				h := bucket(buf[start:], a.n)
				buf = strconv.AppendInt(buf[:start], int64(h), 10)
			}
		}
	}
	return string(buf), buf, nil
}
