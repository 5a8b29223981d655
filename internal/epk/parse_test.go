package epk

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseHeader(t *testing.T) {
	f := func(header string, want Key) {
		t.Helper()
		got, err := ParseHeader(header)
		if err != nil {
			t.Fatalf("ParseHeader(%s): %v", header, err)
		}
		if !got.Equal(want) || got == nil {
			t.Fatalf("ParseHeader(%s) = %s, want %s", header, got, want)
		}
	}
	f(`["a"]`, Key{String("a")})
	f(`["a",2]`, Key{String("a"), Number(2)})
	f(`[null]`, Key{Null()})
	f(`[{}]`, Key{Undefined()})
	f(`[ { } ]`, Key{Undefined()})
	f(`[true]`, Key{Bool(true)})
	f(`[false]`, Key{Bool(false)})
	f(`[]`, Key{})
	f(` [ ] `, Key{})
	f("[\t\"a\" ,\n-1.5e3 , null ]", Key{String("a"), Number(-1500), Null()})
	f(`[0]`, Key{Number(0)})
	f(`[-0]`, Key{Number(math.Copysign(0, -1))})
	f(`[1E+2]`, Key{Number(100)})
	f(`[5e-324]`, Key{Number(5e-324)})
	f(`[1e-400]`, Key{Number(0)}) // underflows to 0, as in encoding/json
	f(`[1.7976931348623157e308]`, Key{Number(math.MaxFloat64)})
	f(`[12345678901234567890]`, Key{Number(12345678901234567890)})
	// JSON escapes.
	f(`["a\"b\\c\/d\b\f\n\r\t"]`, Key{String("a\"b\\c/d\b\f\n\r\t")})
	f(`["\u00e9\u20AC"]`, Key{String("é€")})
	f(`["\ud83d\ude00"]`, Key{String("\U0001F600")})
	f(`["\ud83d"]`, Key{String("\uFFFD")})        // lone high surrogate
	f(`["\ude00x"]`, Key{String("\uFFFDx")})      // lone low surrogate
	f(`["\ud83d\u0041"]`, Key{String("\uFFFDA")}) // high surrogate then a non-surrogate
	f(`["\u0000"]`, Key{String("\x00")})
	// Raw UTF-8 (the JS SDK sends JSON.stringify output).
	f(`["日本語 😀"]`, Key{String("日本語 😀")})
	// Go escapes from strconv.QuoteToASCII.
	f(`["\a\v\x07\x1f\x7f"]`, Key{String("\a\v\x07\x1f\x7f")})
	f(`["\U0001f600"]`, Key{String("😀")})
	f(`["\xe2\x82\xac"]`, Key{String("€")}) // bytes forming valid UTF-8
}

// The Go SDK writes strings with strconv.QuoteToASCII (azcosmos
// partition_key.go toJsonString); every such header must parse back to the
// original string.
func TestParseHeaderQuoteToASCII(t *testing.T) {
	strs := []string{
		"", "plain", "with \"quotes\" and \\backslash\\",
		"emoji 😀 and 🎉 and 👩‍👩‍👧",
		"control \a\b\f\n\r\t\v \x00 \x01 \x1b \x7f",
		"latin é ü ß, cjk 漢字, rtl שלום, combining e\u0301",
		"\u2028\u2029\uFEFF\uFFFD", "\U0010FFFF", "tab\tand/slash",
		strings.Repeat("🙂a\x07", 50),
	}
	for _, s := range strs {
		q := strconv.QuoteToASCII(s)
		for _, c := range []struct {
			header string
			want   Key
		}{
			{"[" + q + "]", Key{String(s)}},
			{"[" + q + ",5," + q + "]", Key{String(s), Number(5), String(s)}},
		} {
			got, err := ParseHeader(c.header)
			if err != nil {
				t.Fatalf("ParseHeader(%s): %v", c.header, err)
			}
			if !got.Equal(c.want) {
				t.Fatalf("ParseHeader(%s) = %q, want %q", c.header, got[0].Str, s)
			}
			// The canonical form round trips too.
			again, err := ParseHeader(got.String())
			if err != nil || !again.Equal(got) {
				t.Fatalf("round trip of %s via %s: %v", c.header, got.String(), err)
			}
		}
	}
	// Numbers as the Go SDK writes them (json.Marshal of float64).
	for _, x := range []float64{0, -1, 5.5, 1e21, 1e-7, 123456789, math.MaxFloat64, -math.SmallestNonzeroFloat64} {
		b, _ := json.Marshal(x)
		got, err := ParseHeader("[" + string(b) + "]")
		if err != nil || !got.Equal(Key{Number(x)}) {
			t.Fatalf("ParseHeader([%s]) = %v, %v", b, got, err)
		}
	}
}

func TestParseHeaderErrors(t *testing.T) {
	f := func(header, wantSub string) {
		t.Helper()
		_, err := ParseHeader(header)
		if err == nil {
			t.Fatalf("ParseHeader(%s) succeeded, want error containing %q", header, wantSub)
		}
		if !errors.Is(err, ErrInvalidKey) {
			t.Fatalf("ParseHeader(%s) error %v does not wrap ErrInvalidKey", header, err)
		}
		if !strings.Contains(err.Error(), wantSub) {
			t.Fatalf("ParseHeader(%s) error = %q, want containing %q", header, err, wantSub)
		}
	}
	f(``, "empty value; want a JSON array")
	f(`   `, "empty value")
	f(`"a"`, `want a JSON array such as ["a"], found character '"' at offset 0`)
	f(`5`, "want a JSON array")
	f(`{}`, "want a JSON array")
	f(`[`, "unexpected end of input; want a value at offset 1")
	f(`["a"`, "unterminated array")
	f(`["a",]`, "unexpected character ']'")
	f(`[,]`, "unexpected character ','")
	f(`["a" "b"]`, `want ',' or ']' after component 0, found character '"' at offset 5`)
	f(`["a"]x`, "unexpected character 'x' after the closing ']' at offset 5")
	f(`["a"][]`, "after the closing ']'")
	f(`[["a"]]`, "component 0 is a nested array")
	f(`[1,[]]`, "component 1 is a nested array")
	f(`[{"a":1}]`, "component 0 is a non-empty object; a partition key component must be a string, number, boolean, null or {} (undefined)")
	f(`[{`, "non-empty object")
	f(`[tru]`, "invalid literal; want true")
	f(`[nul]`, "want null")
	f(`[True]`, "unexpected character 'T'")
	f(`[undefined]`, "unexpected character 'u'")
	f(`[NaN]`, "unexpected character 'N'")
	f(`[+1]`, "unexpected character '+'")
	f(`[01]`, "want ',' or ']'")
	f(`[1.]`, "want a digit after '.'")
	f(`[.5]`, "unexpected character '.'")
	f(`[1e]`, "want a digit in the exponent")
	f(`[-]`, "invalid number; want a digit")
	f(`[0x10]`, "want ',' or ']'")
	f(`[1e400]`, "number 1e400 is out of the float64 range")
	f(`[-1e400]`, "out of the float64 range")
	f(`["abc`, "unterminated string at offset 1")
	f(`["abc\"]`, "unterminated string")
	f(`["a\`, "unterminated escape sequence")
	f("[\"a\nb\"]", "control character 0x0a in string; it must be escaped")
	f("[\"a\\n\tb\"]", "control character 0x09 in string")
	f(`["\q"]`, `invalid escape sequence \q`)
	f(`["\u12"]`, `invalid \u escape; want 4 hex digits`)
	f(`["\u12G4"]`, `invalid \u escape`)
	f(`["\x4"]`, `invalid \x escape; want 2 hex digits`)
	f(`["\xff"]`, "string is not valid UTF-8")
	f(`["\U0011ffff"]`, `invalid \U escape; want 8 hex digits of a valid code point`)
	f(`["\U0000d800"]`, `invalid \U escape`)
	f(`["\Uffffffff"]`, `invalid \U escape`)
	f("[\"\xff\"]", "string is not valid UTF-8")
	f(`["a"`+strings.Repeat(" ", 100)+`x]`, "`...: want") // long headers are clipped in the message
}

func TestComponentFromJSON(t *testing.T) {
	f := func(raw string, want Component) {
		t.Helper()
		got, err := ComponentFromJSON([]byte(raw))
		if err != nil {
			t.Fatalf("ComponentFromJSON(%s): %v", raw, err)
		}
		if !got.Equal(want) {
			t.Fatalf("ComponentFromJSON(%s) = %s, want %s", raw, got, want)
		}
	}
	f(`"a"`, String("a"))
	f(` "a b" `, String("a b"))
	f(`"\u00e9\n\ud83d\ude00"`, String("é\n😀"))
	f(`12.5`, Number(12.5))
	f(`-0`, Number(math.Copysign(0, -1)))
	f(`true`, Bool(true))
	f(`false`, Bool(false))
	f(`null`, Null())

	e := func(raw, wantSub string) {
		t.Helper()
		_, err := ComponentFromJSON([]byte(raw))
		if err == nil || !errors.Is(err, ErrInvalidKey) || !strings.Contains(err.Error(), wantSub) {
			t.Fatalf("ComponentFromJSON(%s) error = %v, want containing %q", raw, err, wantSub)
		}
	}
	e(`{"a":1}`, "is an object; a partition key value must be a string, number, boolean or null")
	e(` {}`, "is an object")
	e(`[1]`, "is an array; a partition key value must be a string, number, boolean or null")
	e(``, "unexpected end of input")
	e(`"a" "b"`, "unexpected character '\"' after the value")
	e(`"\a"`, `invalid escape sequence \a`) // Go escapes are for headers only
	e(`"\x41"`, `invalid escape sequence \x`)
	e(`"\U0001f600"`, `invalid escape sequence \U`)
	e(`1e999`, "out of the float64 range")
	e(`"`+"\xc3\x28"+`"`, "not valid UTF-8")
	e(`'a'`, "unexpected character '\\''")

	// The result does not alias the input.
	raw := []byte(`"hello"`)
	c, _ := ComponentFromJSON(raw)
	copy(raw, `"jello"`)
	if c.Str != "hello" {
		t.Fatalf("ComponentFromJSON result aliases its input: %q", c.Str)
	}
}

func TestKeyString(t *testing.T) {
	f := func(k Key, want string) {
		t.Helper()
		if got := k.String(); got != want {
			t.Fatalf("String() = %s, want %s", got, want)
		}
	}
	f(Key{}, `[]`)
	f(nil, `[]`)
	f(Key{String("a"), Number(5)}, `["a",5]`)
	f(Key{Undefined(), Null(), Bool(true), Bool(false)}, `[{},null,true,false]`)
	f(Key{Number(5.5), Number(0), Number(math.Copysign(0, -1)), Number(1e21), Number(1e20), Number(1e-7), Number(0.000001)},
		`[5.5,0,-0,1e+21,100000000000000000000,1e-7,0.000001]`)
	f(Key{String("q\"b\\s/\n\r\t\b\f\x00\x1f\x7f é 😀")}, `["q\"b\\s/\n\r\t\b\f\u0000\u001f`+"\x7f é 😀"+`"]`)
	f(Key{String("bad \xff")}, `["bad \ufffd"]`)
	f(Key{Number(math.NaN()), Number(math.Inf(1)), Number(math.Inf(-1))}, `[NaN,Infinity,-Infinity]`)
}

func TestKeyEqual(t *testing.T) {
	a := Key{String("a"), Number(1)}
	if !a.Equal(Key{String("a"), Number(1)}) || a.Equal(Key{String("a")}) || a.Equal(Key{String("a"), Number(2)}) ||
		a.Equal(Key{String("a"), String("1")}) || !Key(nil).Equal(Key{}) {
		t.Fatal("Equal")
	}
	if Number(0).Equal(Number(math.Copysign(0, -1))) {
		t.Fatal("0 and -0 must differ: they hash differently")
	}
	if !Undefined().Equal(Component{}) || Undefined().Equal(Null()) {
		t.Fatal("Undefined")
	}
	// Equal keys have equal EPKs.
	e1, _ := hashV2.EPK(Key{Number(0)})
	e2, _ := hashV2.EPK(Key{Number(math.Copysign(0, -1))})
	if e1 == e2 {
		t.Fatal("0 and -0 share an EPK")
	}
}

func FuzzParseHeader(f *testing.F) {
	for _, s := range []string{
		`["a"]`, `["a",2]`, `[null]`, `[{}]`, `[true,false]`, `[]`, `[-0.5e-3]`,
		`["\u00e9\ud83d\ude00"]`, `["\a\x07\U0001f600"]`, `[{"a":1}]`, `[[1]]`, `["a"`, `["\xff"]`,
		"[" + strconv.QuoteToASCII("x😀\x01") + "]",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, err := ParseHeader(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidKey) {
				t.Fatalf("error %v does not wrap ErrInvalidKey", err)
			}
			return
		}
		if k == nil {
			t.Fatalf("ParseHeader(%q) returned a nil key and no error", s)
		}
		text := k.String()
		again, err := ParseHeader(text)
		if err != nil {
			t.Fatalf("ParseHeader(%q) = %s, which does not re-parse: %v", s, text, err)
		}
		if !again.Equal(k) {
			t.Fatalf("ParseHeader(%q) = %s, re-parsed as %s", s, text, again)
		}
		if text2 := again.String(); text2 != text {
			t.Fatalf("String not canonical: %s vs %s", text, text2)
		}
		for _, c := range k {
			if c.Kind == KindString && !utf8.ValidString(c.Str) {
				t.Fatalf("invalid UTF-8 in %q", c.Str)
			}
			if c.Kind == KindUndefined {
				continue
			}
			c2, err := ComponentFromJSON([]byte(c.String()))
			if err != nil || !c2.Equal(c) {
				t.Fatalf("ComponentFromJSON(%s) = %v, %v", c.String(), c2, err)
			}
		}
		// Hashing never fails on a parsed key of the right length.
		if len(k) > 0 {
			d := Definition{Kind: MultiHash, Version: 2, Paths: make([]string, len(k))}
			if _, err := d.EPK(k); err != nil {
				t.Fatal(err)
			}
			if _, err := hashV1.EPK(k[:1]); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func FuzzComponentFromJSON(f *testing.F) {
	for _, s := range []string{
		`"a"`, `1`, `-0`, `1.5e300`, `true`, `false`, `null`, `{}`, `[]`, `"\u00e9"`, `"\ud800"`, ` 7 `,
		`"\x41"`, `1e999`, `"a\"b"`, `01`, `"é"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, err := ComponentFromJSON(raw)

		// Differential check against encoding/json for valid UTF-8 input.
		var v any
		jerr := json.Unmarshal(raw, &v)
		if err == nil {
			if jerr != nil {
				t.Fatalf("ComponentFromJSON(%q) = %s but encoding/json rejects it: %v", raw, c, jerr)
			}
		} else if !errors.Is(err, ErrInvalidKey) {
			t.Fatalf("error %v does not wrap ErrInvalidKey", err)
		}
		if jerr == nil && utf8.Valid(raw) {
			var want Component
			switch v := v.(type) {
			case string:
				want = String(v)
			case float64:
				want = Number(v)
			case bool:
				want = Bool(v)
			case nil:
				want = Null()
			default:
				if err == nil {
					t.Fatalf("ComponentFromJSON(%q) accepted a %T", raw, v)
				}
				return
			}
			if err != nil {
				t.Fatalf("ComponentFromJSON(%q): %v; encoding/json gives %v", raw, err, v)
			}
			// Equal compares number bits, so -0 must stay -0 as in encoding/json.
			if !c.Equal(want) {
				t.Fatalf("ComponentFromJSON(%q) = %s, encoding/json gives %s", raw, c, want)
			}
		}
		if err != nil {
			return
		}
		again, err := ComponentFromJSON([]byte(c.String()))
		if err != nil || !again.Equal(c) {
			t.Fatalf("round trip of %s: %v, %v", c, again, err)
		}
	})
}
