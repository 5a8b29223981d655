package mql

import (
	"regexp"
	"strings"
)

// maxRegexLen bounds a regular expression pattern, as mongod does.
const maxRegexLen = 32 * 1024

// compileRegex compiles a MongoDB (PCRE) regular expression with Go's RE2 engine. The options i, m, s
// map to RE2 flags; x (extended) is applied here by stripping unescaped whitespace and #-comments
// outside character classes; u is accepted and ignored (patterns are always UTF-8). A pattern RE2 cannot
// compile (backreferences, lookaround, ...) fails with code 51091.
func compileRegex(pattern, options string) (*regexp.Regexp, error) {
	if len(pattern) > maxRegexLen {
		return nil, newError(CodeRegexInvalid, "Regular expression is invalid: pattern string is longer than the limit set by the application")
	}
	if strings.IndexByte(pattern, 0) >= 0 {
		return nil, newError(51109, "Regular expression cannot contain an embedded null byte")
	}
	var flags strings.Builder
	extended := false
	for _, o := range options {
		switch o {
		case 'i', 'm', 's':
			if !strings.ContainsRune(flags.String(), o) {
				flags.WriteRune(o)
			}
		case 'x':
			extended = true
		case 'u':
		default:
			return nil, newError(51108, "invalid flag in regex options: %c", o)
		}
	}
	if extended {
		pattern = stripExtended(pattern)
	}
	pattern = translateEnds(pattern, strings.ContainsRune(flags.String(), 'm'))
	if flags.Len() > 0 {
		pattern = "(?" + flags.String() + ")" + pattern
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, newError(CodeRegexInvalid, "Regular expression is invalid: %v", err)
	}
	return re, nil
}

// stripExtended removes what PCRE's extended mode ignores: whitespace and #-comments up to the end of
// the line, except when escaped or inside a character class.
func stripExtended(p string) string {
	return rewritePattern(p, nil, func(b *strings.Builder, i int) int {
		switch c := p[i]; c {
		case ' ', '\t', '\n', '\r', '\f', '\v':
		case '#':
			for i+1 < len(p) && p[i+1] != '\n' {
				i++
			}
		default:
			b.WriteByte(c)
		}
		return i
	})
}

// translateEnds rewrites PCRE's end anchors for RE2. In PCRE, without the m option "$" matches at
// the end or before a final newline, and "\Z" always does; RE2's "$" matches only at the very end and
// it has no "\Z". Both become "(?:\n?\z)", which gives the same answer to "does it match", the only
// question filters ask.
func translateEnds(p string, multiline bool) string {
	const end = `(?:\n?\z)`
	return rewritePattern(p, func(b *strings.Builder, i int) {
		if p[i+1] == 'Z' {
			b.WriteString(end)
		} else {
			b.WriteString(p[i : i+2])
		}
	}, func(b *strings.Builder, i int) int {
		if p[i] == '$' && !multiline {
			b.WriteString(end)
		} else {
			b.WriteByte(p[i])
		}
		return i
	})
}

// rewritePattern copies the regular expression p token by token. A character class is copied whole
// (a ']' right after '[' or '[^' is a literal member of it), and so is an escape pair, unless escape
// is set: it then writes what replaces the pair at i. Every other byte goes to plain, which writes
// what replaces it and returns the position of the last byte it consumed.
func rewritePattern(p string, escape func(b *strings.Builder, i int), plain func(b *strings.Builder, i int) int) string {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p):
			if escape != nil && !inClass {
				escape(&b, i)
			} else {
				b.WriteString(p[i : i+2])
			}
			i++
		case inClass:
			if c == ']' {
				inClass = false
			}
			b.WriteByte(c)
		case c == '[':
			inClass = true
			b.WriteByte(c)
			if i+1 < len(p) && p[i+1] == '^' {
				b.WriteByte('^')
				i++
			}
			if i+1 < len(p) && p[i+1] == ']' {
				b.WriteByte(']')
				i++
			}
		default:
			i = plain(&b, i)
		}
	}
	return b.String()
}
