package synthkey

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in      string
		canon   string
		paths   []string
		levels  int
		isPath  bool
		pkPaths []string
		lo, hi  int
	}{
		{in: "/date", canon: "/date", paths: []string{"/date"}, levels: 1, isPath: true, pkPaths: []string{"/date"}},
		{in: "  /a/b\t", canon: "/a/b", paths: []string{"/a/b"}, levels: 1, isPath: true, pkPaths: []string{"/a/b"}},
		{in: `/"a"/"b"`, canon: "/a/b", paths: []string{"/a/b"}, levels: 1, isPath: true, pkPaths: []string{"/a/b"}},
		{in: `/"a/b"/"c d"/é`, canon: `/"a/b"/"c d"/é`, paths: []string{`/"a/b"/"c d"/é`}, levels: 1, isPath: true, pkPaths: []string{`/"a/b"/"c d"/é`}},
		{in: `/"*"/"?"/"a,b"/"(x)"/"[y]"/"q\"q"/"b\\s"`, canon: `/"*"/"?"/"a,b"/"(x)"/"[y]"/"q\"q"/"b\\s"`,
			paths: []string{`/"*"/"?"/"a,b"/"(x)"/"[y]"/"q\"q"/"b\\s"`}, levels: 1, isPath: true, pkPaths: []string{`/"*"/"?"/"a,b"/"(x)"/"[y]"/"q\"q"/"b\\s"`}},
		{in: `/a\b`, canon: `/"a\\b"`, paths: []string{`/"a\\b"`}, levels: 1, isPath: true, pkPaths: []string{`/"a\\b"`}},
		{in: `/"\u00a0"`, canon: `/"\u00a0"`, paths: []string{`/"\u00a0"`}, levels: 1, isPath: true, pkPaths: []string{`/"\u00a0"`}},
		{in: `/"\x41"/"\t"`, canon: `/A/"\t"`, paths: []string{`/A/"\t"`}, levels: 1, isPath: true, pkPaths: []string{`/A/"\t"`}},
		{in: "/_id/$type/a-b.c:d{e}", canon: "/_id/$type/a-b.c:d{e}", paths: []string{"/_id/$type/a-b.c:d{e}"}, levels: 1, isPath: true, pkPaths: []string{"/_id/$type/a-b.c:d{e}"}},
		{in: "[/tenant,/user]", canon: "[/tenant, /user]", paths: []string{"/tenant", "/user"}, levels: 2, pkPaths: []string{"/tenant", "/user"}},
		{in: "[ /t , /u , /s ]", canon: "[/t, /u, /s]", paths: []string{"/t", "/u", "/s"}, levels: 3, pkPaths: []string{"/t", "/u", "/s"}},
		{in: `concat(/deviceId,"-",/date)`, canon: `concat(/deviceId, "-", /date)`, paths: []string{"/deviceId", "/date"}, levels: 1, pkPaths: []string{""}},
		{in: "concat(\n\t/date ,\r\n \".\" , random( 1 , 400 ) )", canon: `concat(/date, ".", random(1, 400))`, paths: []string{"/date"}, levels: 1, pkPaths: []string{""}, lo: 1, hi: 400},
		{in: `concat(/date, ".", hash(/vin, 400))`, canon: `concat(/date, ".", hash(/vin, 400))`, paths: []string{"/date", "/vin"}, levels: 1, pkPaths: []string{""}},
		{in: `concat(/a, /a, hash(/a, 3), /b)`, canon: `concat(/a, /a, hash(/a, 3), /b)`, paths: []string{"/a", "/b"}, levels: 1, pkPaths: []string{""}},
		{in: `concat(hash(/vin, 1000000), random(7, 7))`, canon: `concat(hash(/vin, 1000000), random(7, 7))`, paths: []string{"/vin"}, levels: 1, pkPaths: []string{""}, lo: 7, hi: 7},
		{in: `concat(random(1, 1000000), "x")`, canon: `concat(random(1, 1000000), "x")`, paths: nil, levels: 1, pkPaths: []string{""}, lo: 1, hi: 1000000},
		{in: `concat(/a, "\u00e9\n\"\\\/\u0001\ud83d\ude00\ud800")`, canon: `concat(/a, "é\n\"\\/\u0001😀` + "\uFFFD" + `")`, paths: []string{"/a"}, levels: 1, pkPaths: []string{""}},
		{in: `concat(/a, "")`, canon: `concat(/a, "")`, paths: []string{"/a"}, levels: 1, pkPaths: []string{""}},
		{in: `[/tenant, concat(/user, "-", /tenant), concat(/d, ".", random(1, 9))]`, canon: `[/tenant, concat(/user, "-", /tenant), concat(/d, ".", random(1, 9))]`,
			paths: []string{"/tenant", "/user", "/d"}, levels: 3, pkPaths: []string{"/tenant", "", ""}, lo: 1, hi: 9},
		{in: `[concat(/a, "x"), concat(/a, "y")]`, canon: `[concat(/a, "x"), concat(/a, "y")]`, paths: []string{"/a"}, levels: 2, pkPaths: []string{"", ""}},
	}
	for _, tc := range tests {
		e, err := Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if got := e.String(); got != tc.canon {
			t.Errorf("Parse(%q).String() = %q, want %q", tc.in, got, tc.canon)
		}
		if got := e.Paths(); !slices.Equal(got, tc.paths) {
			t.Errorf("Parse(%q).Paths() = %q, want %q", tc.in, got, tc.paths)
		}
		if got := e.Levels(); got != tc.levels {
			t.Errorf("Parse(%q).Levels() = %d, want %d", tc.in, got, tc.levels)
		}
		if got := e.IsPath(); got != tc.isPath {
			t.Errorf("Parse(%q).IsPath() = %v, want %v", tc.in, got, tc.isPath)
		}
		if got := e.PartitionKeyPaths(); !slices.Equal(got, tc.pkPaths) {
			t.Errorf("Parse(%q).PartitionKeyPaths() = %q, want %q", tc.in, got, tc.pkPaths)
		}
		lo, hi, ok := e.RandomRange()
		if lo != tc.lo || hi != tc.hi || ok != (tc.hi > 0) {
			t.Errorf("Parse(%q).RandomRange() = %d, %d, %v, want %d, %d", tc.in, lo, hi, ok, tc.lo, tc.hi)
		}
		wantCount := 1
		if tc.hi > 0 {
			wantCount = tc.hi - tc.lo + 1
		}
		if got := e.KeyCount(); got != wantCount {
			t.Errorf("Parse(%q).KeyCount() = %d, want %d", tc.in, got, wantCount)
		}
		checkRoundTrip(t, tc.in, e)
	}
}

// checkRoundTrip checks that the canonical text parses back to the same
// expression and is a fixed point.
func checkRoundTrip(t *testing.T, in string, e *Expr) {
	t.Helper()
	canon := e.String()
	e2, err := Parse(canon)
	if err != nil {
		t.Fatalf("Parse(%q) ok, but its canonical text %q does not parse: %v", in, canon, err)
	}
	if !reflect.DeepEqual(e, e2) {
		t.Fatalf("Parse(%q) = %#v, but Parse(%q) = %#v", in, e, canon, e2)
	}
	if !e.Equal(e2) {
		t.Fatalf("Parse(%q).Equal(Parse(%q)) = false", in, canon)
	}
	if got := e2.String(); got != canon {
		t.Fatalf("canonical text of %q is not a fixed point: %q then %q", in, canon, got)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		in  string
		err string // the full Error() text
		off int
	}{
		{"", `synthkey: at column 1: empty expression`, 0},
		{" \t\n", `synthkey: at column 1: empty expression`, 0},
		{"date", `synthkey: at column 1: expected a path, "[" or concat(...), found date (paths start with "/", as in /date)`, 0},
		{"/date /x", `synthkey: at column 7: expected end of input, found path /x`, 6},
		{"/date)", `synthkey: at column 6: expected end of input, found ")"`, 5},
		{"/date,", `synthkey: at column 6: expected end of input, found ","`, 5},
		{"@", `synthkey: at column 1: expected a path, "[" or concat(...), found "@"`, 0},
		{"/", `synthkey: at column 1: empty path segment after "/"`, 0},
		{"/a//b", `synthkey: at column 3: empty path segment after "/"`, 2},
		{"/a/", `synthkey: at column 3: empty path segment after "/"`, 2},
		{"/a/ ", `synthkey: at column 3: empty path segment after "/"`, 2},
		{`/""`, `synthkey: at column 1: empty path segment after "/"`, 0},
		{"/*", `synthkey: at column 2: wildcard path segment * (quote it to mean the property name: /"*")`, 1},
		{"/a/?", `synthkey: at column 4: wildcard path segment ? (quote it to mean the property name: /"?")`, 3},
		{`/a"b`, `synthkey: at column 3: a path segment can contain '"' only if it is quoted, as in /"a\"b"`, 2},
		{`/"ab`, `synthkey: at column 2: unterminated quoted path segment`, 1},
		{`/"a"b`, `synthkey: at column 5: unexpected text after the quoted path segment "a"`, 4},
		{`/"a\q"`, `synthkey: at column 2: invalid quoted path segment "a\q"`, 1},
		{`/"\xff"`, `synthkey: at column 2: quoted path segment "\xff" is not valid UTF-8`, 1},
		{"/a\xff", `synthkey: at column 3: invalid UTF-8`, 2},
		{`"x"`, `synthkey: at column 1: a string is only allowed as an argument of concat(...)`, 0},
		{`random(1, 2)`, `synthkey: at column 1: random(...) is only allowed as an argument of concat(...), as in concat(/date, ".", random(1, 400))`, 0},
		{`hash(/vin, 2)`, `synthkey: at column 1: hash(...) is only allowed as an argument of concat(...), as in concat(/date, ".", hash(/vin, 400))`, 0},
		{`Concat(/a, /b)`, `synthkey: at column 1: unknown function Concat; function names are lower case: concat`, 0},
		{`concat(/a, RANDOM(1, 2))`, `synthkey: at column 12: unknown function RANDOM; function names are lower case: random`, 11},
		{`suffix(/a, 2)`, `synthkey: at column 1: unknown function suffix; the functions are concat, random and hash`, 0},
		{`concat(/a, date)`, `synthkey: at column 12: expected a path, a string, random(...) or hash(...) as argument 2 of concat, found date (paths start with "/", as in /date)`, 11},
		{`concat /a`, `synthkey: at column 8: expected "(" after concat, found path /a`, 7},
		{`concat`, `synthkey: at column 7: expected "(" after concat, found end of input`, 6},
		{`concat()`, `synthkey: at column 8: expected a path, a string, random(...) or hash(...) as argument 1 of concat, found ")"`, 7},
		{`concat(/a)`, `synthkey: at column 10: concat needs at least 2 arguments, found 1`, 9},
		{`concat(/a,)`, `synthkey: at column 11: expected a path, a string, random(...) or hash(...) as argument 2 of concat, found ")"`, 10},
		{`concat(/a, /b`, `synthkey: at column 14: expected "," or ")" after argument 2 of concat, found end of input`, 13},
		{`concat(/a, "x" "y")`, `synthkey: at column 16: expected "," or ")" after argument 2 of concat, found string "y"`, 15},
		{`concat("a", "b")`, `synthkey: at column 1: concat needs a path, random(...) or hash(...) among its arguments, not only strings`, 0},
		{`concat(/a, 12)`, `synthkey: at column 12: a number cannot be an argument of concat; write it as a string, as in "12"`, 11},
		{`concat(/a, concat(/b, /c))`, `synthkey: at column 12: concat(...) cannot be nested; list all the parts in one concat(...)`, 11},
		{`concat(/a, [/b, /c])`, `synthkey: at column 12: a hierarchical key cannot be an argument of concat`, 11},
		{`concat(/a, "abc`, `synthkey: at column 12: unterminated string`, 11},
		{`concat(/a, "abc\`, `synthkey: at column 12: unterminated string`, 11},
		{`concat(/a, "a\qc")`, `synthkey: at column 14: invalid escape \q in string (JSON escapes are \" \\ \/ \b \f \n \r \t \uXXXX)`, 13},
		{`concat(/a, "a\u12")`, `synthkey: at column 14: invalid escape in string: \u needs 4 hex digits`, 13},
		{"concat(/a, \"a\tb\")", `synthkey: at column 14: control character U+0009 in string; write it as an escape`, 13},
		{`concat(/a, random)`, `synthkey: at column 18: expected "(" after random, found ")"`, 17},
		{`concat(/a, random(1))`, `synthkey: at column 20: expected "," after the lower bound of random, found ")"`, 19},
		{`concat(/a, random(1, 2, 3))`, `synthkey: at column 23: expected ")" after the arguments of random, found ","`, 22},
		{`concat(/a, random(5, 2))`, `synthkey: at column 19: random(5, 2) is empty: the lower bound is greater than the upper bound`, 18},
		{`concat(/a, random(0, 2))`, `synthkey: at column 19: the lower bound of random must be from 1 to 1000000, found 0`, 18},
		{`concat(/a, random(-1, 2))`, `synthkey: at column 19: the lower bound of random must be a whole number from 1 to 1000000, found -1`, 18},
		{`concat(/a, -)`, `synthkey: at column 12: expected a path, a string, random(...) or hash(...) as argument 2 of concat, found "-"`, 11},
		{`concat(/a, random(1, 2x))`, `synthkey: at column 22: the upper bound of random must be a whole number from 1 to 1000000, found 2x`, 21},
		{`concat(/a, random(1.5, 2))`, `synthkey: at column 19: the lower bound of random must be a whole number from 1 to 1000000, found 1.5`, 18},
		{`concat(/a, random(1e3, 2))`, `synthkey: at column 19: the lower bound of random must be a whole number from 1 to 1000000, found 1e3`, 18},
		{`concat(/a, random(01, 2))`, `synthkey: at column 19: the lower bound of random must be written without leading zeros, found 01`, 18},
		{`concat(/a, random(1, 1000001))`, `synthkey: at column 22: the upper bound of random must be from 1 to 1000000, found 1000001`, 21},
		{`concat(/a, random(1, 99999999999999999999999))`, `synthkey: at column 22: the upper bound of random must be from 1 to 1000000, found 99999999999999999999999`, 21},
		{`concat(/a, random(1, x))`, `synthkey: at column 22: expected a whole number as the upper bound of random, found x`, 21},
		{`concat(/a, random(1, 2), random(3, 4))`, `synthkey: at column 26: only one random(...) is allowed in an expression`, 25},
		{`[concat(/a, random(1, 2)), concat(/b, random(3, 4))]`, `synthkey: at column 39: only one random(...) is allowed in an expression`, 38},
		{`concat(/a, hash("x", 4))`, `synthkey: at column 17: expected a path as the first argument of hash, found string "x"`, 16},
		{`concat(/a, hash(/v))`, `synthkey: at column 19: expected "," after the path in hash, found ")"`, 18},
		{`concat(/a, hash(/v, 0))`, `synthkey: at column 21: the bucket count of hash must be from 1 to 1000000, found 0`, 20},
		{`concat(/a, hash(/v, 4, 5))`, `synthkey: at column 22: expected ")" after the arguments of hash, found ","`, 21},
		{`concat(/a, hash(/v, 4)`, `synthkey: at column 23: expected "," or ")" after argument 2 of concat, found end of input`, 22},
		{`[/a]`, `synthkey: at column 1: a hierarchical key needs 2 or 3 levels, found 1`, 0},
		{`[]`, `synthkey: at column 2: expected a path or concat(...) as level 1 of the hierarchical key, found "]"`, 1},
		{`[/a, /b,]`, `synthkey: at column 9: expected a path or concat(...) as level 3 of the hierarchical key, found "]"`, 8},
		{`[/a, /b, /c, /d]`, `synthkey: at column 14: a hierarchical key has at most 3 levels`, 13},
		{`[/a, /b`, `synthkey: at column 8: expected "," or "]" after level 2 of the hierarchical key, found end of input`, 7},
		{`[/a, [/b, /c]]`, `synthkey: at column 6: hierarchical keys cannot be nested`, 5},
		{`[/a, "x"]`, `synthkey: at column 6: a string is only allowed as an argument of concat(...)`, 5},
		{`[/a, random(1, 2)]`, `synthkey: at column 6: random(...) is only allowed as an argument of concat(...), as in concat(/date, ".", random(1, 400))`, 5},
		{`[/a, /"a"]`, `synthkey: at column 6: level 2 repeats level 1 (/a)`, 5},
		{`[/a, /b, concat( /a, "x" )][`, `synthkey: at column 28: expected end of input, found "["`, 27},
		{`[/a, /b] /c`, `synthkey: at column 10: expected end of input, found path /c`, 9},
	}
	for _, tc := range tests {
		e, err := Parse(tc.in)
		if err == nil {
			t.Errorf("Parse(%q) = %s, want error %s", tc.in, e, tc.err)
			continue
		}
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Parse(%q) error %v is a %T, want *SyntaxError", tc.in, err, err)
			continue
		}
		if err.Error() != tc.err {
			t.Errorf("Parse(%q) error\n got %s\nwant %s", tc.in, err, tc.err)
		}
		if se.Offset != tc.off {
			t.Errorf("Parse(%q) error offset = %d, want %d", tc.in, se.Offset, tc.off)
		}
		if !strings.HasPrefix(err.Error(), "synthkey: at column ") || strings.Contains(se.Msg, "synthkey") {
			t.Errorf("Parse(%q) error %q is not in the documented form", tc.in, err)
		}
	}
}

func TestMustParse(t *testing.T) {
	if got := MustParse("/a").String(); got != "/a" {
		t.Errorf("MustParse(/a) = %s", got)
	}
	defer func() {
		r := recover()
		if _, ok := r.(*SyntaxError); !ok {
			t.Errorf("MustParse(bad) panicked with %v, want a *SyntaxError", r)
		}
	}()
	MustParse("concat(")
}

func TestTextMarshaling(t *testing.T) {
	e := MustParse(`concat( /date,".",hash( /vin,400))`)
	b, err := e.MarshalText()
	if err != nil || string(b) != `concat(/date, ".", hash(/vin, 400))` {
		t.Fatalf("MarshalText = %q, %v", b, err)
	}
	var e2 Expr
	if err := e2.UnmarshalText(b); err != nil || !e2.Equal(e) {
		t.Fatalf("UnmarshalText(%q) = %s, %v", b, &e2, err)
	}
	if err := e2.UnmarshalText([]byte("concat(")); err == nil || e2.String() != e.String() {
		t.Fatalf("UnmarshalText(bad) = %v and changed the receiver to %s", err, &e2)
	}
}

// The accessors return copies: changing them does not change the Expr.
func TestAccessorsCopy(t *testing.T) {
	e := MustParse(`[/a/b, concat(/c, "-", /a/b)]`)
	p := e.Paths()
	p[0] = "/x"
	s := e.Segments()
	s[0][0] = "x"
	k := e.PartitionKeyPaths()
	k[0] = "/x"
	if e.String() != `[/a/b, concat(/c, "-", /a/b)]` || e.Paths()[0] != "/a/b" || e.Segments()[0][0] != "a" || e.PartitionKeyPaths()[0] != "/a/b" {
		t.Fatalf("mutating results changed the expression: %s %q %q", e, e.Paths(), e.Segments())
	}
	if got := e.Segments(); !reflect.DeepEqual(got, [][]string{{"a", "b"}, {"c"}}) {
		t.Fatalf("Segments = %q", got)
	}
}
