package eval

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// String functions (learn.microsoft.com/azure/cosmos-db/nosql/query/:
// concat, contains, endswith, ...). Positions and lengths count Unicode
// characters (code points); the documentation does not say whether it
// counts UTF-16 code units, and the two differ only outside the Basic
// Multilingual Plane. A wrong-typed argument gives undefined.
var stringFuncs = []*builtin{
	{name: "CONCAT", min: 2, max: -1, fn: fnConcat},
	{name: "CONTAINS", min: 2, max: 3, fn: func(c *callCtx, a []Value) (Value, error) {
		return stringTest(a, strings.Contains)
	}},
	{name: "STARTSWITH", min: 2, max: 3, fn: func(c *callCtx, a []Value) (Value, error) {
		return stringTest(a, strings.HasPrefix)
	}},
	{name: "ENDSWITH", min: 2, max: 3, fn: func(c *callCtx, a []Value) (Value, error) {
		return stringTest(a, strings.HasSuffix)
	}},
	{name: "StringEquals", min: 2, max: 3, fn: func(c *callCtx, a []Value) (Value, error) {
		return stringTest(a, func(x, y string) bool { return x == y })
	}},
	{name: "INDEX_OF", min: 2, max: 3, fn: fnIndexOf},
	{name: "LEFT", min: 2, max: 2, fn: fnLeft},
	{name: "RIGHT", min: 2, max: 2, fn: fnRight},
	{name: "LENGTH", min: 1, max: 1, fn: func(c *callCtx, a []Value) (Value, error) {
		s, ok := strArg(a[0])
		if !ok {
			return undef, nil
		}
		return IntValue(int64(utf8.RuneCountInString(s))), nil
	}},
	{name: "LOWER", min: 1, max: 1, fn: stringMap(strings.ToLower)},
	{name: "UPPER", min: 1, max: 1, fn: stringMap(strings.ToUpper)},
	{name: "LTRIM", min: 1, max: 2, fn: trimFunc(strings.TrimLeft, func(s string) string { return strings.TrimLeftFunc(s, unicode.IsSpace) })},
	{name: "RTRIM", min: 1, max: 2, fn: trimFunc(strings.TrimRight, func(s string) string { return strings.TrimRightFunc(s, unicode.IsSpace) })},
	{name: "TRIM", min: 1, max: 2, fn: trimFunc(strings.Trim, strings.TrimSpace)},
	{name: "REPLACE", min: 3, max: 3, fn: fnReplace},
	{name: "REPLICATE", min: 2, max: 2, fn: fnReplicate},
	{name: "REVERSE", min: 1, max: 1, fn: stringMap(reverseString)},
	{name: "SUBSTRING", min: 3, max: 3, fn: fnSubstring},
	{name: "RegexMatch", min: 2, max: 3, fn: fnRegexMatch},
	{name: "ToString", min: 1, max: 1, fn: func(c *callCtx, a []Value) (Value, error) {
		return StringValue(toString(a[0])), nil
	}},
	{name: "StringToArray", min: 1, max: 1, fn: parseAs(Array)},
	{name: "StringToBoolean", min: 1, max: 1, fn: parseAs(Bool)},
	{name: "StringToNull", min: 1, max: 1, fn: parseAs(Null)},
	{name: "StringToNumber", min: 1, max: 1, fn: parseAs(Number)},
	{name: "StringToObject", min: 1, max: 1, fn: parseAs(Object)},
}

// maxReplicate is the longest string REPLICATE builds (replicate.md).
const maxReplicate = 10000

func fnConcat(c *callCtx, a []Value) (Value, error) {
	n := 0
	for _, v := range a {
		if v.kind != String {
			return undef, nil
		}
		n += len(v.s)
	}
	if err := c.fits(int64(n)); err != nil {
		return undef, err
	}
	var b strings.Builder
	b.Grow(n)
	for _, v := range a {
		b.WriteString(v.s)
	}
	return StringValue(b.String()), nil
}

// stringTest is CONTAINS, STARTSWITH, ENDSWITH and StringEquals: two
// strings and an optional boolean "ignore case" (default false).
func stringTest(a []Value, test func(s, t string) bool) (Value, error) {
	s, ok1 := strArg(a[0])
	t, ok2 := strArg(a[1])
	if !ok1 || !ok2 {
		return undef, nil
	}
	if len(a) == 3 {
		ci, ok := boolArg(a[2])
		if !ok {
			return undef, nil
		}
		if ci {
			s, t = strings.ToLower(s), strings.ToLower(t)
		}
	}
	return BoolValue(test(s, t)), nil
}

// runeOffset returns the byte offset of character n of s (len(s) if s is
// shorter).
func runeOffset(s string, n int) int {
	if n <= 0 {
		return 0
	}
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

func fnIndexOf(c *callCtx, a []Value) (Value, error) {
	s, ok1 := strArg(a[0])
	t, ok2 := strArg(a[1])
	if !ok1 || !ok2 {
		return undef, nil
	}
	start := 0
	if len(a) == 3 {
		var ok bool
		if start, ok = truncArg(a[2]); !ok {
			return undef, nil
		}
		if start < 0 {
			start = 0
		}
		if start > utf8.RuneCountInString(s) {
			return IntValue(-1), nil
		}
	}
	off := runeOffset(s, start)
	i := strings.Index(s[off:], t)
	if i < 0 {
		return IntValue(-1), nil
	}
	return IntValue(int64(start + utf8.RuneCountInString(s[off:off+i]))), nil
}

func fnLeft(c *callCtx, a []Value) (Value, error) {
	s, ok1 := strArg(a[0])
	n, ok2 := truncArg(a[1])
	if !ok1 || !ok2 {
		return undef, nil
	}
	return StringValue(s[:runeOffset(s, n)]), nil
}

func fnRight(c *callCtx, a []Value) (Value, error) {
	s, ok1 := strArg(a[0])
	n, ok2 := truncArg(a[1])
	if !ok1 || !ok2 {
		return undef, nil
	}
	if n <= 0 {
		return StringValue(""), nil
	}
	total := utf8.RuneCountInString(s)
	if n >= total {
		return StringValue(s), nil
	}
	return StringValue(s[runeOffset(s, total-n):]), nil
}

func fnSubstring(c *callCtx, a []Value) (Value, error) {
	s, ok1 := strArg(a[0])
	start, ok2 := truncArg(a[1])
	n, ok3 := truncArg(a[2])
	if !ok1 || !ok2 || !ok3 {
		return undef, nil
	}
	if start < 0 {
		start = 0
	}
	if n <= 0 {
		return StringValue(""), nil
	}
	from := runeOffset(s, start)
	rest := s[from:]
	return StringValue(rest[:runeOffset(rest, n)]), nil
}

func stringMap(f func(string) string) func(*callCtx, []Value) (Value, error) {
	return func(c *callCtx, a []Value) (Value, error) {
		s, ok := strArg(a[0])
		if !ok {
			return undef, nil
		}
		return StringValue(f(s)), nil
	}
}

func reverseString(s string) string {
	rs := []rune(s)
	for i, j := 0, len(rs)-1; i < j; i, j = i+1, j-1 {
		rs[i], rs[j] = rs[j], rs[i]
	}
	return string(rs)
}

// trimFunc is LTRIM, RTRIM and TRIM: without a second argument they remove
// white space; with one they remove any of its characters (the
// documentation's examples: TRIM("-_-AdventureWorks-_-", "-_") is
// "AdventureWorks" and LTRIM("AdventureWorks", "Adventure") is "Works").
func trimFunc(cutset func(s, chars string) string, space func(string) string) func(*callCtx, []Value) (Value, error) {
	return func(c *callCtx, a []Value) (Value, error) {
		s, ok := strArg(a[0])
		if !ok {
			return undef, nil
		}
		if len(a) == 1 {
			return StringValue(space(s)), nil
		}
		chars, ok := strArg(a[1])
		if !ok {
			return undef, nil
		}
		return StringValue(cutset(s, chars)), nil
	}
}

func fnReplace(c *callCtx, a []Value) (Value, error) {
	s, ok1 := strArg(a[0])
	old, ok2 := strArg(a[1])
	repl, ok3 := strArg(a[2])
	if !ok1 || !ok2 || !ok3 {
		return undef, nil
	}
	if old == "" {
		return StringValue(s), nil
	}
	if len(repl) > len(old) {
		if err := c.fits(int64(len(s)) + int64(strings.Count(s, old))*int64(len(repl)-len(old))); err != nil {
			return undef, err
		}
	}
	return StringValue(strings.ReplaceAll(s, old, repl)), nil
}

func fnReplicate(c *callCtx, a []Value) (Value, error) {
	s, ok1 := strArg(a[0])
	f, ok2 := numArg(a[1])
	if !ok1 || !ok2 || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
		return undef, nil
	}
	n := math.Trunc(f)
	if n == 0 || s == "" {
		return StringValue(""), nil
	}
	if float64(utf8.RuneCountInString(s))*n > maxReplicate {
		return undef, nil
	}
	return StringValue(strings.Repeat(s, int(n))), nil
}

// fnRegexMatch is RegexMatch(s, pattern [, modifiers]) (regexmatch.md).
// Cosmos DB uses PCRE; this uses Go's RE2 syntax, which agrees on the
// common subset and has no backreferences or lookaround (such patterns
// give undefined, as invalid ones do). The modifiers are m, s, i and x
// (extended: white space and #-comments outside classes are ignored).
func fnRegexMatch(c *callCtx, a []Value) (Value, error) {
	s, ok1 := strArg(a[0])
	pattern, ok2 := strArg(a[1])
	if !ok1 || !ok2 {
		return undef, nil
	}
	mods := ""
	if len(a) == 3 {
		var ok bool
		if mods, ok = strArg(a[2]); !ok {
			return undef, nil
		}
	}
	var flags [3]bool // m s i
	extended := false
	for _, m := range mods {
		switch m {
		case 'm':
			flags[0] = true
		case 's':
			flags[1] = true
		case 'i':
			flags[2] = true
		case 'x':
			extended = true
		default:
			return undef, nil
		}
	}
	var key strings.Builder
	for i, f := range flags {
		if f {
			key.WriteByte("msi"[i])
		}
	}
	if extended {
		key.WriteByte('x')
	}
	key.WriteByte(0)
	key.WriteString(pattern)
	re := c.env.Cache.regexp(key.String(), func() *regexp.Regexp {
		p := pattern
		if extended {
			p = stripExtended(p)
		}
		prefix := ""
		for i, f := range flags {
			if f {
				prefix += string("msi"[i])
			}
		}
		if prefix != "" {
			p = "(?" + prefix + ")" + p
		}
		re, err := regexp.Compile(p)
		if err != nil {
			return nil
		}
		return re
	})
	if re == nil {
		return undef, nil
	}
	return BoolValue(re.MatchString(s)), nil
}

// stripExtended removes what PCRE's x modifier ignores: unescaped white
// space and #-comments outside character classes.
func stripExtended(p string) string {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(p); i++ {
		ch := p[i]
		switch {
		case ch == '\\' && i+1 < len(p):
			b.WriteByte(ch)
			i++
			b.WriteByte(p[i])
		case inClass:
			if ch == ']' {
				inClass = false
			}
			b.WriteByte(ch)
		case ch == '[':
			inClass = true
			b.WriteByte(ch)
			// A ']' right after '[' or '[^' is a member.
			if i+1 < len(p) && p[i+1] == '^' {
				i++
				b.WriteByte('^')
			}
			if i+1 < len(p) && p[i+1] == ']' {
				i++
				b.WriteByte(']')
			}
		case ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' || ch == '\v':
		case ch == '#':
			for i+1 < len(p) && p[i+1] != '\n' {
				i++
			}
		default:
			b.WriteByte(ch)
		}
	}
	return b.String()
}

// toString is ToString (tostring.md): strings as they are, numbers as
// JavaScript prints them (NaN, Infinity), arrays and objects as compact
// JSON.
func toString(v Value) string {
	switch v.kind {
	case String:
		return v.s
	case Number:
		if v.exact {
			return strconv.FormatInt(int64(v.n), 10)
		}
		return string(appendNumber(nil, v.AsFloat()))
	}
	return string(v.AppendJSON(nil))
}

// parseAs is StringToArray, StringToBoolean, StringToNull, StringToNumber
// and StringToObject: the string is parsed as JSON (white space around it
// allowed, single-quoted strings not) and must give a value of kind k.
func parseAs(k Kind) func(*callCtx, []Value) (Value, error) {
	return func(c *callCtx, a []Value) (Value, error) {
		s, ok := strArg(a[0])
		if !ok {
			return undef, nil
		}
		v, err := FromJSON([]byte(s))
		if err != nil || v.kind != k {
			return undef, nil
		}
		return v, nil
	}
}
