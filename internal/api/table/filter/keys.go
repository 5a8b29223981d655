package filter

import (
	"slices"

	"github.com/parsecdb/parsec/internal/api/table/edm"
)

// The names of the key properties.
const (
	PartitionKey = "PartitionKey"
	RowKey       = "RowKey"
)

// The key analyses below assume what the service guarantees: every entity
// has a PartitionKey and a RowKey, both Edm.String. Under that assumption
// not (PartitionKey lt 'b') is PartitionKey ge 'b', and a comparison of a
// key with a literal of another type is false.

// PartitionKeys reports the partition keys an entity must have to match e.
// When ok is true, every entity for which Eval(e) is true has one of keys
// as its PartitionKey, so the server need read only those logical
// partitions; keys is then sorted (in edm.CompareStrings order) without
// duplicates, and empty when e can match nothing. ok is false when e does
// not confine the partition key to a finite set.
//
// Examples: PartitionKey eq 'a' and Age gt 3 gives [a];
// PartitionKey eq 'a' or PartitionKey eq 'b' gives [a b];
// PartitionKey eq 'a' or Age gt 3 gives ok=false.
func PartitionKeys(e Expr) (keys []string, ok bool) {
	keys, ok = pkSet(e, false)
	if !ok {
		return nil, false
	}
	if keys == nil {
		keys = []string{}
	}
	return keys, true
}

// pkSet is the analysis of e, or of not e when neg is set.
func pkSet(e Expr, neg bool) ([]string, bool) {
	switch e := e.(type) {
	case *Compare:
		if e.Prop != PartitionKey {
			return nil, false
		}
		if e.Value.Type != edm.String {
			// Always false; its negation always true.
			return nil, !neg
		}
		op := e.Op
		if neg {
			op = op.Negate()
		}
		if op == Eq {
			return []string{e.Value.S}, true
		}
		return nil, false
	case *Const:
		if e.V != neg { // true
			return nil, false
		}
		return nil, true
	case *Not:
		return pkSet(e.X, !neg)
	case *And, *Or:
		var l, r Expr
		if a, isAnd := e.(*And); isAnd {
			l, r = a.L, a.R
		} else {
			o := e.(*Or)
			l, r = o.L, o.R
		}
		lk, lok := pkSet(l, neg)
		rk, rok := pkSet(r, neg)
		// and, or the negation of an or, is a conjunction.
		if _, isAnd := e.(*And); isAnd != neg {
			return pkIntersect(lk, lok, rk, rok)
		}
		return pkUnion(lk, lok, rk, rok)
	}
	return nil, false
}

func pkIntersect(a []string, aok bool, b []string, bok bool) ([]string, bool) {
	switch {
	case !aok && !bok:
		return nil, false
	case !aok:
		return b, true
	case !bok:
		return a, true
	}
	var out []string
	for _, k := range a {
		if containsKey(b, k) {
			out = append(out, k)
		}
	}
	return out, true
}

func pkUnion(a []string, aok bool, b []string, bok bool) ([]string, bool) {
	if !aok || !bok {
		return nil, false
	}
	out := append(slices.Clone(a), b...)
	slices.SortFunc(out, edm.CompareStrings)
	return slices.Compact(out), true
}

func containsKey(sorted []string, k string) bool {
	_, found := slices.BinarySearchFunc(sorted, k, edm.CompareStrings)
	return found
}

// Interval is a set of strings between two optional bounds, in
// edm.CompareStrings order.
type Interval struct {
	Lo, Hi       string // the bounds, meaningful when HasLo / HasHi
	HasLo, HasHi bool   // false: unbounded on that side
	LoInc, HiInc bool   // whether Lo / Hi themselves are inside
}

// Contains reports whether s lies in the interval.
func (iv Interval) Contains(s string) bool {
	if iv.HasLo {
		c := edm.CompareStrings(s, iv.Lo)
		if c < 0 || (c == 0 && !iv.LoInc) {
			return false
		}
	}
	if iv.HasHi {
		c := edm.CompareStrings(s, iv.Hi)
		if c > 0 || (c == 0 && !iv.HiInc) {
			return false
		}
	}
	return true
}

// ByteBounds returns an interval, to be read in byte order (Go's < on
// strings, the order of UTF-8 keys in most stores), that holds every
// string of iv, so that a store ordered by bytes can scan it. Interval
// itself is in UTF-16 order, which differs from byte order only between
// U+E000..U+FFFF and supplementary characters, so a bound is cut before
// its first character at or above U+E000: a lower bound keeps that prefix
// (inclusive), an upper bound becomes everything that starts with it
// (the prefix followed by the byte 0xFF, exclusive, which no UTF-8 text
// reaches). Bounds without such characters are unchanged.
func (iv Interval) ByteBounds() Interval {
	out := iv
	if iv.HasLo {
		if i := firstHigh(iv.Lo); i >= 0 {
			out.Lo, out.LoInc = iv.Lo[:i], true
		}
	}
	if iv.HasHi {
		if i := firstHigh(iv.Hi); i >= 0 {
			out.Hi, out.HiInc = iv.Hi[:i]+"\xff", false
		}
	}
	return out
}

// ContainsBytes is Contains in byte order, for intervals from ByteBounds.
func (iv Interval) ContainsBytes(s string) bool {
	if iv.HasLo && (s < iv.Lo || (s == iv.Lo && !iv.LoInc)) {
		return false
	}
	if iv.HasHi && (s > iv.Hi || (s == iv.Hi && !iv.HiInc)) {
		return false
	}
	return true
}

// firstHigh is the byte offset of the first character of s at or above
// U+E000 (or an invalid byte, which CompareStrings treats as U+FFFD), or -1.
func firstHigh(s string) int {
	for i, r := range s {
		if r >= 0xE000 {
			return i
		}
	}
	return -1
}

// empty reports whether no string lies in the interval. (An interval such
// as ('a', 'a\x00') holds no string either; it is reported non-empty,
// which is sound.)
func (iv Interval) empty() bool {
	if !iv.HasLo || !iv.HasHi {
		return false
	}
	c := edm.CompareStrings(iv.Lo, iv.Hi)
	return c > 0 || (c == 0 && !(iv.LoInc && iv.HiInc))
}

func intersect(a, b Interval) Interval {
	out := a
	if b.HasLo {
		if !out.HasLo {
			out.Lo, out.HasLo, out.LoInc = b.Lo, true, b.LoInc
		} else if c := edm.CompareStrings(b.Lo, out.Lo); c > 0 {
			out.Lo, out.LoInc = b.Lo, b.LoInc
		} else if c == 0 {
			out.LoInc = out.LoInc && b.LoInc
		}
	}
	if b.HasHi {
		if !out.HasHi {
			out.Hi, out.HasHi, out.HiInc = b.Hi, true, b.HiInc
		} else if c := edm.CompareStrings(b.Hi, out.Hi); c < 0 {
			out.Hi, out.HiInc = b.Hi, b.HiInc
		} else if c == 0 {
			out.HiInc = out.HiInc && b.HiInc
		}
	}
	return out
}

func hull(a, b Interval) Interval {
	var out Interval
	if a.HasLo && b.HasLo {
		out.HasLo = true
		switch c := edm.CompareStrings(a.Lo, b.Lo); {
		case c < 0:
			out.Lo, out.LoInc = a.Lo, a.LoInc
		case c > 0:
			out.Lo, out.LoInc = b.Lo, b.LoInc
		default:
			out.Lo, out.LoInc = a.Lo, a.LoInc || b.LoInc
		}
	}
	if a.HasHi && b.HasHi {
		out.HasHi = true
		switch c := edm.CompareStrings(a.Hi, b.Hi); {
		case c > 0:
			out.Hi, out.HiInc = a.Hi, a.HiInc
		case c < 0:
			out.Hi, out.HiInc = b.Hi, b.HiInc
		default:
			out.Hi, out.HiInc = a.Hi, a.HiInc || b.HiInc
		}
	}
	return out
}

// Range bounds the keys of the entities a filter can match: when Empty is
// false, every entity for which Eval is true has its PartitionKey in
// PartitionKey and its RowKey in RowKey. It is a bounding box: for an or
// of two boxes it is the smallest box around both.
type Range struct {
	Empty        bool // no entity can match
	PartitionKey Interval
	RowKey       Interval
}

// Contains reports whether an entity with these keys lies in r.
func (r Range) Contains(pk, rk string) bool {
	return !r.Empty && r.PartitionKey.Contains(pk) && r.RowKey.Contains(rk)
}

// KeyRange derives bounds on PartitionKey and RowKey from e's comparisons
// of the keys with string literals (eq, gt, ge, lt, le), so that a prefix
// query such as PartitionKey ge 'a' and PartitionKey lt 'b' reads one
// range. Unconstrained sides are unbounded.
func KeyRange(e Expr) Range { return keyRange(e, false) }

func keyRange(e Expr, neg bool) Range {
	switch e := e.(type) {
	case *Compare:
		if e.Prop != PartitionKey && e.Prop != RowKey {
			return Range{}
		}
		if e.Value.Type != edm.String {
			return Range{Empty: !neg}
		}
		op := e.Op
		if neg {
			op = op.Negate()
		}
		s := e.Value.S
		var iv Interval
		switch op {
		case Eq:
			iv = Interval{Lo: s, Hi: s, HasLo: true, HasHi: true, LoInc: true, HiInc: true}
		case Gt, Ge:
			iv = Interval{Lo: s, HasLo: true, LoInc: op == Ge}
		case Lt, Le:
			iv = Interval{Hi: s, HasHi: true, HiInc: op == Le}
		}
		if e.Prop == PartitionKey {
			return Range{PartitionKey: iv}
		}
		return Range{RowKey: iv}
	case *Const:
		return Range{Empty: e.V == neg}
	case *Not:
		return keyRange(e.X, !neg)
	case *And:
		if neg {
			return rangeHull(keyRange(e.L, true), keyRange(e.R, true))
		}
		return rangeIntersect(keyRange(e.L, false), keyRange(e.R, false))
	case *Or:
		if neg {
			return rangeIntersect(keyRange(e.L, true), keyRange(e.R, true))
		}
		return rangeHull(keyRange(e.L, false), keyRange(e.R, false))
	}
	return Range{}
}

func rangeIntersect(a, b Range) Range {
	if a.Empty || b.Empty {
		return Range{Empty: true}
	}
	r := Range{PartitionKey: intersect(a.PartitionKey, b.PartitionKey), RowKey: intersect(a.RowKey, b.RowKey)}
	if r.PartitionKey.empty() || r.RowKey.empty() {
		return Range{Empty: true}
	}
	return r
}

func rangeHull(a, b Range) Range {
	switch {
	case a.Empty:
		return b
	case b.Empty:
		return a
	}
	return Range{PartitionKey: hull(a.PartitionKey, b.PartitionKey), RowKey: hull(a.RowKey, b.RowKey)}
}
