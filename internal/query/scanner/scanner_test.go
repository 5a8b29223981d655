package scanner

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/parsecdb/parsec/internal/query/token"
)

// show renders tokens as "kind@line:col text", one per line.
func show(toks []token.Token) string {
	var b strings.Builder
	for _, t := range toks {
		fmt.Fprintf(&b, "%s@%d:%d", t.Kind, t.Pos.Line, t.Pos.Col)
		if t.Text != "" && t.Text != t.Kind.String() {
			fmt.Fprintf(&b, " %s", t.Text)
		}
		if t.Value != t.Text {
			fmt.Fprintf(&b, " =%q", t.Value)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func TestTokens(t *testing.T) {
	f := func(src, want string) {
		t.Helper()
		toks, err := Tokenize(src)
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		if got := show(toks); got != want {
			t.Errorf("%q:\ngot:\n%s\nwant:\n%s", src, got, want)
		}
	}
	f("", "end of query@1:1\n")
	f("SELECT * FROM c", "SELECT@1:1\n*@1:8\nFROM@1:10\nidentifier@1:15 c\nend of query@1:16\n")
	f("select Value dIsTiNcT", "SELECT@1:1 select\nVALUE@1:8 Value\nDISTINCT@1:14 dIsTiNcT\nend of query@1:22\n")
	// true, false, null, udf and undefined are keywords in lowercase only.
	f("true TRUE null NULL udf UDF undefined Undefined false",
		"true@1:1\nidentifier@1:6 TRUE\nnull@1:11\nidentifier@1:16 NULL\nudf@1:21\nidentifier@1:25 UDF\n"+
			"undefined@1:29\nidentifier@1:39 Undefined\nfalse@1:49\nend of query@1:54\n")
	// Lines and columns; \r\n counts as one line break; -- comments.
	f("SELECT *\r\n  FROM c -- note\n\tWHERE --\n@p",
		"SELECT@1:1\n*@1:8\nFROM@2:3\nidentifier@2:8 c\nWHERE@3:2\nparameter@4:1 @p =\"p\"\nend of query@4:3\n")
	f("a-b a--b\nc", "identifier@1:1 a\n-@1:2\nidentifier@1:3 b\nidentifier@1:5 a\nidentifier@2:1 c\nend of query@2:2\n")
	// Every operator, longest match first.
	f("= != <> < <= > >= + - * / % || | & ^ ~ << >> >>> ?? ? : . , ( ) [ ] { }",
		"=@1:1\n!=@1:3\n<>@1:6\n<@1:9\n<=@1:11\n>@1:14\n>=@1:16\n+@1:19\n-@1:21\n*@1:23\n/@1:25\n%@1:27\n"+
			"||@1:29\n|@1:32\n&@1:34\n^@1:36\n~@1:38\n<<@1:40\n>>@1:43\n>>>@1:46\n??@1:50\n?@1:53\n:@1:55\n"+
			".@1:57\n,@1:59\n(@1:61\n)@1:63\n[@1:65\n]@1:67\n{@1:69\n}@1:71\nend of query@1:72\n")
	f("a>>>=b<<=c???d", "identifier@1:1 a\n>>>@1:2\n=@1:5\nidentifier@1:6 b\n<<@1:7\n=@1:9\nidentifier@1:10 c\n??@1:11\n?@1:13\nidentifier@1:14 d\nend of query@1:15\n")
	// Numbers: no sign, optional fraction and exponent, .5, 1., hex.
	f("0 12 1.5 1. .5 1e3 1E+3 2.5e-3 0x1F 0XaB c.arr[0].x",
		"number@1:1 0\nnumber@1:3 12\nnumber@1:6 1.5\nnumber@1:10 1.\nnumber@1:13 .5\nnumber@1:16 1e3\n"+
			"number@1:20 1E+3\nnumber@1:25 2.5e-3\nnumber@1:32 0x1F\nnumber@1:37 0XaB\nidentifier@1:42 c\n"+
			".@1:43\nidentifier@1:44 arr\n[@1:47\nnumber@1:48 0\n]@1:49\n.@1:50\nidentifier@1:51 x\nend of query@1:52\n")
	f("-1", "-@1:1\nnumber@1:2 1\nend of query@1:3\n")
	// Strings: both quotes, every escape, UTF-8 counted in bytes.
	f(`'a"b' "a'b" "\"\\\/\b\f\n\r\t\'" '\u00e9' "é" x`,
		"string@1:1 'a\"b' =\"a\\\"b\"\nstring@1:7 \"a'b\" =\"a'b\"\n"+
			"string@1:13 \"\\\"\\\\\\/\\b\\f\\n\\r\\t\\'\" =\"\\\"\\\\/\\b\\f\\n\\r\\t'\"\n"+
			"string@1:34 '\\u00e9' =\"é\"\nstring@1:43 \"é\" =\"é\"\nidentifier@1:48 x\nend of query@1:49\n")
	f(`"\uD83D\uDE00" "\uDE00\uD83D"`, "string@1:1 \"\\uD83D\\uDE00\" =\"😀\"\nstring@1:16 \"\\uDE00\\uD83D\" =\"\ufffd\ufffd\"\nend of query@1:30\n")
	// Keywords need whole words.
	f("SELECTVALUE IN_ INx ARRAY_CONTAINS", "identifier@1:1 SELECTVALUE\nidentifier@1:13 IN_\nidentifier@1:17 INx\nidentifier@1:21 ARRAY_CONTAINS\nend of query@1:35\n")
}

func TestErrors(t *testing.T) {
	f := func(src, want string) {
		t.Helper()
		_, err := Tokenize(src)
		if err == nil {
			t.Fatalf("%q: no error", src)
		}
		if !errors.Is(err, ErrSyntax) {
			t.Errorf("%q: %v does not wrap ErrSyntax", src, err)
		}
		if got := err.Error(); got != want {
			t.Errorf("%q:\ngot  %s\nwant %s", src, got, want)
		}
	}
	f("a\n  $", "syntax error at line 2, column 3: unexpected character '$'")
	f("a \xff", "syntax error at line 1, column 3: unexpected byte 0xff")
	f("a ! b", "syntax error at line 1, column 3: unexpected character '!'")
	f("'abc", "syntax error at line 1, column 1: unterminated string")
	f("x\n 'ab\ncd'", "syntax error at line 2, column 2: newline in string")
	f(`"a\x"`, `syntax error at line 1, column 3: invalid escape \x in string`)
	f(`"a\é"`, `syntax error at line 1, column 3: invalid escape \é in string`)
	f(`"a\u00g0"`, `syntax error at line 1, column 3: invalid escape \u00g0 in string: \u takes four hex digits`)
	f("\"a\x01\"", `syntax error at line 1, column 3: control character '\x01' in string`)
	f("@", `syntax error at line 1, column 1: invalid parameter name "@"`)
	f("@ p", `syntax error at line 1, column 1: invalid parameter name "@"`)
	f("1x", `syntax error at line 1, column 1: invalid number "1x"`)
	f("1.5.5a", `syntax error at line 1, column 4: invalid number ".5a"`)
	f("1e-", `syntax error at line 1, column 1: invalid number "1e"`)
	f("0x", `syntax error at line 1, column 1: invalid number "0x"`)
	f("1e309", `syntax error at line 1, column 1: number 1e309 out of range`)
}

func TestParseNumber(t *testing.T) {
	f := func(text string, want float64) {
		t.Helper()
		got, err := token.ParseNumber(text)
		if err != nil || got != want {
			t.Errorf("ParseNumber(%q) = %v, %v; want %v", text, got, err, want)
		}
	}
	f("0", 0)
	f("1.5", 1.5)
	f(".5", 0.5)
	f("1.", 1)
	f("1e3", 1000)
	f("0x1F", 31)
	f("0xffffffffffffffff", 18446744073709551615)
	f("1e-400", 0)
	for _, bad := range []string{"", "x", "-1", "+1", "1e400", "0x", "Inf", "NaN"} {
		if _, err := token.ParseNumber(bad); err == nil {
			t.Errorf("ParseNumber(%q) succeeded", bad)
		}
	}
}

func TestLookup(t *testing.T) {
	for k := token.KeywordFirst + 1; k < token.KeywordLast; k++ {
		w := k.String()
		if got := token.Lookup(w); got != k {
			t.Errorf("Lookup(%q) = %v", w, got)
		}
		if k < token.False {
			if got := token.Lookup(strings.ToLower(w)); got != k {
				t.Errorf("Lookup(%q) = %v", strings.ToLower(w), got)
			}
		} else if got := token.Lookup(strings.ToUpper(w)); got != token.Ident {
			t.Errorf("Lookup(%q) = %v, want an identifier", strings.ToUpper(w), got)
		}
	}
	for _, w := range []string{"a", "SELECTED", "Ins", "x_1", "asc_", "valuE_"} {
		if got := token.Lookup(w); got != token.Ident {
			t.Errorf("Lookup(%q) = %v, want an identifier", w, got)
		}
	}
	for s, want := range map[string]bool{"a": true, "_1": true, "first": true, "ALL": true, "Last": true,
		"1a": false, "": false, "value": false, "udf": false, "a-b": false, "é": false} {
		if got := token.IsIdentifier(s); got != want {
			t.Errorf("IsIdentifier(%q) = %v", s, got)
		}
	}
}
