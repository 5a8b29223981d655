package synthkey

import (
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/parsecdb/parsec/internal/jsondoc"
)

// Expr is a parsed key expression. It is immutable and safe for concurrent
// use. The zero Expr is not a valid expression; use Parse or MustParse.
type Expr struct {
	levels []level
	paths  []string   // canonical text of each distinct base path, in order of first appearance
	segs   [][]string // the property names along each of paths
	lo, hi int        // the bounds of the random(...) argument; 0, 0 if there is none
}

// level is one component of the key: a plain path (path >= 0, concat nil) or
// a concatenation (path -1).
type level struct {
	path   int
	concat []arg
}

type argKind uint8

const (
	argPath   argKind = iota // the value at a base path
	argString                // a string literal
	argRandom                // random(lo, hi)
	argHash                  // hash(/path, n)
)

// arg is one argument of concat.
type arg struct {
	kind   argKind
	path   int    // argPath, argHash: index into Expr.paths
	str    string // argString
	lo, hi int    // argRandom
	n      int    // argHash
}

// String returns the canonical text of the expression: one space after each
// comma, no other whitespace, paths with only the segments quoted that need
// it, string literals in minimal JSON form. Parse(e.String()) returns an
// expression equal to e, whose String is the same text.
func (e *Expr) String() string {
	return string(e.appendText(nil))
}

func (e *Expr) appendText(dst []byte) []byte {
	if len(e.levels) == 1 {
		return e.appendLevel(dst, e.levels[0])
	}
	dst = append(dst, '[')
	for i, lv := range e.levels {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		dst = e.appendLevel(dst, lv)
	}
	return append(dst, ']')
}

func (e *Expr) levelText(lv level) string {
	return string(e.appendLevel(nil, lv))
}

func (e *Expr) appendLevel(dst []byte, lv level) []byte {
	if lv.concat == nil {
		return append(dst, e.paths[lv.path]...)
	}
	dst = append(dst, "concat("...)
	for i, a := range lv.concat {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		switch a.kind {
		case argPath:
			dst = append(dst, e.paths[a.path]...)
		case argString:
			dst = jsondoc.AppendQuote(dst, a.str)
		case argRandom:
			dst = append(dst, "random("...)
			dst = strconv.AppendInt(dst, int64(a.lo), 10)
			dst = append(dst, ", "...)
			dst = strconv.AppendInt(dst, int64(a.hi), 10)
			dst = append(dst, ')')
		case argHash:
			dst = append(dst, "hash("...)
			dst = append(dst, e.paths[a.path]...)
			dst = append(dst, ", "...)
			dst = strconv.AppendInt(dst, int64(a.n), 10)
			dst = append(dst, ')')
		}
	}
	return append(dst, ')')
}

// pathText renders the canonical text of a path from its property names:
// each name is written as is when that is unambiguous, and quoted (as
// strconv.Quote does, which epk.ParsePath reads back) otherwise.
func pathText(segs []string) string {
	var b strings.Builder
	for _, s := range segs {
		b.WriteByte('/')
		if plainSegment(s) {
			b.WriteString(s)
		} else {
			b.WriteString(strconv.Quote(s))
		}
	}
	return b.String()
}

// plainSegment reports whether the property name s can be written unquoted
// in a path.
func plainSegment(s string) bool {
	if s == "" || s == "*" || s == "?" || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		switch r {
		case '/', '"', '\\', ',', '(', ')', '[', ']':
			return false
		}
		if unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// Equal reports whether e and o are the same expression (the same canonical
// text).
func (e *Expr) Equal(o *Expr) bool {
	if e == nil || o == nil {
		return e == o
	}
	return e.String() == o.String()
}

// MarshalText returns the canonical text, so that an Expr is a JSON string
// in encoded structures.
func (e *Expr) MarshalText() ([]byte, error) {
	return e.appendText(nil), nil
}

// UnmarshalText parses text into e; on error (a *SyntaxError) e is unchanged.
func (e *Expr) UnmarshalText(text []byte) error {
	x, err := Parse(string(text))
	if err != nil {
		return err
	}
	*e = *x
	return nil
}

// Paths returns the base paths: every distinct path the expression reads,
// in order of first appearance, in canonical text (as String writes them).
// For a hierarchical key these are the paths of all levels. FromBase and
// Expand take their values in this order.
//
//	concat(/date, ".", hash(/vin, 400)) → [/date /vin]
//	[/tenant, concat(/user, "-", /tenant)] → [/tenant /user]
func (e *Expr) Paths() []string {
	return slices.Clone(e.paths)
}

// Segments returns the property names along each of Paths, e.g. [[a b]] for
// /a/b, in the form jsondoc.Scan takes paths.
func (e *Expr) Segments() [][]string {
	out := make([][]string, len(e.segs))
	for i, s := range e.segs {
		out[i] = slices.Clone(s)
	}
	return out
}

// Levels returns the number of key components: 1, or 2 to 3 for a
// hierarchical key.
func (e *Expr) Levels() int { return len(e.levels) }

// IsPath reports whether the expression is a single plain path, so that the
// key is the value of that property itself and nothing needs computing.
func (e *Expr) IsPath() bool {
	return len(e.levels) == 1 && e.levels[0].concat == nil
}

// PartitionKeyPaths returns, for each level, the document property that
// already holds that key component: the level's path when the level is a
// plain path, and "" when the level is computed by concat(...). A computed
// component is not stored at any of the expression's own paths; where it is
// stored is the container's choice (its partition key definition path for
// that level), so the caller fills in the "" entries.
//
//	/tenant                        → [/tenant]
//	[/tenant, /user]               → [/tenant /user]
//	[/tenant, concat(/d, ".", /u)] → [/tenant ""]
func (e *Expr) PartitionKeyPaths() []string {
	out := make([]string, len(e.levels))
	for i, lv := range e.levels {
		if lv.concat == nil {
			out[i] = e.paths[lv.path]
		}
	}
	return out
}

// RandomRange returns the bounds of the expression's random(lo, hi), if it
// has one. An expression has at most one random(...).
func (e *Expr) RandomRange() (lo, hi int, ok bool) {
	return e.lo, e.hi, e.hi > 0
}

// KeyCount returns the number of distinct keys one set of base values can
// produce: hi-lo+1 with random(lo, hi), otherwise 1. It is len(Expand(...)).
func (e *Expr) KeyCount() int {
	if e.hi == 0 {
		return 1
	}
	return e.hi - e.lo + 1
}
