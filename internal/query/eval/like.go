package eval

import "unicode/utf8"

// likePattern is a compiled LIKE pattern (keywords.md, "LIKE"):
//
//	%        any run of zero or more characters
//	_        any one character
//	[abc]    one character of the set; ranges [a-f]; [^...] negates
//	[%] [_] [[]  a wildcard character taken literally
//	ESCAPE c c% c_ c[ match %, _, [ (and c itself) literally
//
// A '[' without a closing ']' and a lone ']' are literal characters.
// Matching is case-sensitive, by Unicode characters, of the whole string.
type likePattern struct {
	toks []likeTok
}

type likeKind uint8

const (
	likeLit likeKind = iota // one literal rune
	likeOne                 // _
	likeAny                 // %
	likeSet                 // [...]
)

type likeTok struct {
	kind   likeKind
	r      rune
	negate bool
	ranges []rune // pairs lo, hi inclusive
}

// compileLike compiles pattern with escape character esc (-1 for none).
func compileLike(pattern string, esc rune) *likePattern {
	p := &likePattern{}
	rs := []rune(pattern)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == esc && i+1 < len(rs):
			i++
			p.toks = append(p.toks, likeTok{kind: likeLit, r: rs[i]})
		case r == '%':
			// Runs of % are one %.
			if n := len(p.toks); n == 0 || p.toks[n-1].kind != likeAny {
				p.toks = append(p.toks, likeTok{kind: likeAny})
			}
		case r == '_':
			p.toks = append(p.toks, likeTok{kind: likeOne})
		case r == '[':
			tok, next, ok := likeBracket(rs, i)
			if !ok {
				p.toks = append(p.toks, likeTok{kind: likeLit, r: r})
				continue
			}
			p.toks = append(p.toks, tok)
			i = next
		default:
			p.toks = append(p.toks, likeTok{kind: likeLit, r: r})
		}
	}
	return p
}

// likeBracket parses the set starting at rs[i] == '['. It returns the
// token, the index of the closing ']' and whether there was one. The first
// character after '[' (or after '[^') is a member even if it is ']'.
func likeBracket(rs []rune, i int) (likeTok, int, bool) {
	tok := likeTok{kind: likeSet}
	j := i + 1
	if j < len(rs) && rs[j] == '^' {
		tok.negate = true
		j++
	}
	first := j
	for ; j < len(rs); j++ {
		if rs[j] == ']' && j > first {
			return tok, j, true
		}
		lo := rs[j]
		hi := lo
		if j+2 < len(rs) && rs[j+1] == '-' && rs[j+2] != ']' {
			hi = rs[j+2]
			j += 2
		}
		tok.ranges = append(tok.ranges, lo, hi)
	}
	return likeTok{}, 0, false
}

func (t *likeTok) matches(r rune) bool {
	switch t.kind {
	case likeLit:
		return r == t.r
	case likeOne:
		return true
	case likeSet:
		in := false
		for k := 0; k < len(t.ranges); k += 2 {
			if r >= t.ranges[k] && r <= t.ranges[k+1] {
				in = true
				break
			}
		}
		return in != t.negate
	}
	return false
}

// match reports whether s matches the whole pattern. Every token but %
// consumes exactly one character, so backtracking to the last % is enough
// (the classic wildcard algorithm, linear for each % position).
func (p *likePattern) match(s string) bool {
	ti, si := 0, 0
	star, starSi := -1, 0
	for si < len(s) {
		r, size := utf8.DecodeRuneInString(s[si:])
		if ti < len(p.toks) {
			t := &p.toks[ti]
			if t.kind == likeAny {
				star, starSi = ti, si
				ti++
				continue
			}
			if t.matches(r) {
				ti++
				si += size
				continue
			}
		}
		if star < 0 {
			return false
		}
		// Let the last % swallow one more character and retry.
		_, size = utf8.DecodeRuneInString(s[starSi:])
		starSi += size
		si = starSi
		ti = star + 1
	}
	for ti < len(p.toks) && p.toks[ti].kind == likeAny {
		ti++
	}
	return ti == len(p.toks)
}
