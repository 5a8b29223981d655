package jsondoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

func TestScanValid(t *testing.T) {
	f := func(name, in string, paths [][]string, wantID string, wantVals ...string) {
		t.Helper()
		got, err := Scan([]byte(in), paths)
		if err != nil {
			t.Fatalf("%s: Scan(%q): %v", name, in, err)
		}
		if !json.Valid([]byte(in)) {
			t.Fatalf("%s: test input is not valid per encoding/json", name)
		}
		if string(got.ID) != wantID || (wantID == "") != (got.ID == nil) {
			t.Errorf("%s: ID = %q, want %q", name, got.ID, wantID)
		}
		if len(got.Values) != len(paths) {
			t.Fatalf("%s: %d values for %d paths", name, len(got.Values), len(paths))
		}
		for i, w := range wantVals {
			if string(got.Values[i]) != w || (w == "") != (got.Values[i] == nil) {
				t.Errorf("%s: Values[%d] (%v) = %q, want %q", name, i, paths[i], got.Values[i], w)
			}
		}
	}
	f("empty object", `{}`, nil, "")
	f("whitespace", " \t\r\n{ \n\"id\" :\t\"a\" \r\n}\n ", nil, `"a"`)
	f("id string", `{"id":"doc1","x":1}`, nil, `"doc1"`)
	f("id number kept raw", `{"id":-1.5e10}`, nil, `-1.5e10`)
	f("id object", `{"id":{"a":[1,2]}}`, nil, `{"a":[1,2]}`)
	f("nested id ignored", `{"a":{"id":"inner"}}`, nil, "")
	f("escaped id name", `{"\u0069d":"x"}`, nil, `"x"`)
	f("pk top", `{"id":"1","pk":"p"}`, [][]string{{"pk"}}, `"1"`, `"p"`)
	f("missing path", `{"id":"1"}`, [][]string{{"pk"}}, `"1"`, "")
	f("nested path", `{"a":{"b":{"c":[1, 2 ,3]}}}`, [][]string{{"a", "b", "c"}, {"a", "b"}, {"a", "x"}},
		"", `[1, 2 ,3]`, `{"c":[1, 2 ,3]}`, "")
	f("path through non-object", `{"a":"str","b":[{"c":1}],"n":null}`,
		[][]string{{"a", "b"}, {"b", "c"}, {"b", "0"}, {"n", "x"}}, "", "", "", "", "")
	f("same path twice", `{"a":1}`, [][]string{{"a"}, {"a"}}, "", `1`, `1`)
	f("empty path is whole object", ` {"a":1} `, [][]string{{}}, "", `{"a":1}`)
	f("escaped path component", `{"a\/b":1,"\u00e9":2,"\ud83d\ude00":3}`,
		[][]string{{"a/b"}, {"é"}, {"😀"}}, "", `1`, `2`, `3`)
	f("unicode raw", `{"ключ":"значение 😀"}`, [][]string{{"ключ"}}, "", `"значение 😀"`)
	f("numbers", `{"a":-1.5e10,"b":0,"c":-0.0,"d":1E+2,"e":1e-7,"f":123456789012345678901234567890}`,
		[][]string{{"a"}, {"f"}}, "", `-1.5e10`, `123456789012345678901234567890`)
	f("literals", `{"t":true,"f":false,"n":null}`, [][]string{{"t"}, {"f"}, {"n"}}, "", `true`, `false`, `null`)
	f("string escapes", `{"s":"\"\\\/\b\f\n\r\t\u0041\uD83D\uDE00"}`, [][]string{{"s"}}, "",
		`"\"\\\/\b\f\n\r\t\u0041\uD83D\uDE00"`)
	f("value after array", `{"a":[{"b":1}],"b":{"c":2}}`, [][]string{{"b", "c"}}, "", `2`)
	f("numbers at the float64 edge", `{"a":1.7976931348623157e308,"b":-179769313486231570000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000,"c":1e-400,"d":0.0e999999,"e":0.001e310}`,
		[][]string{{"a"}, {"c"}, {"e"}}, "", `1.7976931348623157e308`, `1e-400`, `0.001e310`)

	deep := strings.Repeat(`{"a":`, MaxDepth) + `1` + strings.Repeat(`}`, MaxDepth)
	path := make([]string, MaxDepth)
	for i := range path {
		path[i] = "a"
	}
	f("deep nesting at the limit", deep, [][]string{path}, "", `1`)
}

func TestScanInvalid(t *testing.T) {
	f := func(in string, wantMsg string, wantOff int) {
		t.Helper()
		_, err := Scan([]byte(in), [][]string{{"a"}})
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Fatalf("Scan(%.40q) = %v, want *SyntaxError", in, err)
		}
		if !errors.Is(err, ErrSyntax) {
			t.Errorf("errors.Is(err, ErrSyntax) = false")
		}
		if se.Offset != wantOff || !strings.Contains(se.Error(), wantMsg) {
			t.Errorf("Scan(%.40q) = %q (offset %d), want %q at offset %d", in, se.Error(), se.Offset, wantMsg, wantOff)
		}
		if json.Valid([]byte(in)) {
			t.Errorf("encoding/json accepts %.40q", in)
		}
	}
	f(``, "unexpected end of JSON input", 0)
	f(`   `, "unexpected end of JSON input", 3)
	f(`{`, "unexpected end", 1)
	f(`{"a"`, "unexpected end", 4)
	f(`{"a":`, "unexpected end", 5)
	f(`{"a":1`, "unexpected end", 6)
	f(`{"a":1,`, "unexpected end", 7)
	f(`{"a":"abc`, "unexpected end", 9)
	f(`{"a":tru`, "unexpected end", 8)
	f(`{"a":x}`, "invalid character 'x' looking for beginning of value", 5)
	f(`{"id":"ok", "x": 17x}`, "invalid character 'x' after object key:value pair", 19)
	f(`{a:1}`, "invalid character 'a' looking for beginning of object key string", 1)
	f(`{"a" 1}`, "invalid character '1' after object key", 5)
	f(`{"a":1,}`, "invalid character '}' looking for beginning of object key string", 7)
	f(`{"a":[1,]}`, "invalid character ']' looking for beginning of value", 8)
	f(`{"a":[1 2]}`, "invalid character '2' after array element", 8)
	f(`{"a":"\x"}`, `invalid character 'x' in string escape code`, 7)
	f(`{"a":"\u12G4"}`, `invalid character 'G' in \u hexadecimal character escape`, 10)
	f("{\"a\":\"tab\there\"}", `invalid character '\t' in string literal`, 9)
	f(`{"a":01}`, "invalid character '1' after object key:value pair", 6)
	f(`{"a":-}`, "invalid character '}' in numeric literal", 6)
	f(`{"a":1.}`, "after decimal point", 7)
	f(`{"a":1e}`, "in exponent", 7)
	f(`{"a":+1}`, "invalid character '+' looking for beginning of value", 5)
	f(`{"a":nul}`, "invalid character '}' in literal null", 8)
	f(`{"a":True}`, "invalid character 'T'", 5)
	f(`{} {}`, "invalid character '{' after top-level value", 3)
	f(`{}x`, "invalid character 'x' after top-level value", 2)
	f("{\"a\":1}\x00", `after top-level value`, 7)
	f("{\"\xfe\":1,\"a\":\x80}", "invalid UTF-8 (byte 0xfe) in string", 2)
	f("{\"a\":\x80}", "invalid character byte 0x80", 5)
	f(`[1,2`, "unexpected end", 4)
	f(`"abc`, "unexpected end", 4)
}

// TestScanDocumentRules: input that is valid JSON but not a valid document.
func TestScanDocumentRules(t *testing.T) {
	f := func(in string, wantMsg string, wantOff int) {
		t.Helper()
		_, err := Scan([]byte(in), [][]string{{"a"}})
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Fatalf("Scan(%.40q) = %v, want *SyntaxError", in, err)
		}
		if se.Offset != wantOff || !strings.Contains(se.Error(), wantMsg) {
			t.Errorf("Scan(%.40q) = %q (offset %d), want %q at offset %d", in, se.Error(), se.Offset, wantMsg, wantOff)
		}
		if err := Validate([]byte(in)); err == nil || err.Error() != se.Error() {
			t.Errorf("Validate(%.40q) = %v, want %v", in, err, se)
		}
	}
	over := strings.Repeat(`[`, MaxDepth) + `{}` + strings.Repeat(`]`, MaxDepth)
	f(over, "exceeded the maximum nesting depth", MaxDepth)
	f(`{"a":`+strings.Repeat(`{"a":`, MaxDepth)+`1`+strings.Repeat(`}`, MaxDepth+1), "nested at most 128 levels", 5+5*(MaxDepth-1))
	f(`{"a":1e400}`, "number 1e400 is out of range", 5)
	f(`{"a":[-1e400]}`, "number -1e400 is out of range", 6)
	f(`{"a":1.7976931348623159e308}`, "out of range", 5)
	f(`{"a":0.00001e314}`, "out of range", 5)
	f(`{"a":1e99999999999999999999999}`, "number 1e99999999999999999999999 is out of range", 5)
	f(`{"a":`+strings.Repeat("9", 400)+`}`, "number 999999999999999999999999... (400 digits) is out of range", 5)
	f(`{"a":-`+strings.Repeat("9", 400)+`.5}`, "(403 characters) is out of range", 5)
	f(`{"id":"x","id":"y"}`, `duplicate property name "id"`, 10)
	f(`{"a":{"b":1,"c":[{"d":1,"d":2}]}}`, `duplicate property name "d"`, 24)
	f(`{"\u0061":1,"a":2}`, `duplicate property name "a"`, 12)
	f(`{"a":1,"\u0061":2}`, `duplicate property name "a"`, 7)
	f(`{"\u00e9":1,"\u00E9":2}`, `duplicate property name "é"`, 12)
	var b strings.Builder
	b.WriteString(`{`)
	for i := range 100 {
		fmt.Fprintf(&b, `"k%d":1,`, i)
	}
	f(b.String()+`"\u006b99":1}`, `duplicate property name "k99"`, b.Len())
	f(b.String()+`"k0":1}`, `duplicate property name "k0"`, b.Len())
	long := strings.Repeat("é", 100)
	f(`{"`+long+`":1,"`+long+`":1}`, `duplicate property name "`+long[:64]+`"... (200 bytes)`, 206)
	f("{\"a\":\"\xc3\"}", "invalid UTF-8 (byte 0xc3) in string", 6)
	f("{\"a\":\"\xed\xa0\x80\"}", "invalid UTF-8 (byte 0xed)", 6)              // a surrogate
	f("{\"a\":\"\xc0\xaf\"}", "invalid UTF-8 (byte 0xc0)", 6)                  // overlong '/'
	f("{\"a\":\"abcdefgh\xf4\x90\x80\x80\"}", "invalid UTF-8 (byte 0xf4)", 14) // past U+10FFFF
	// The same names in different objects are not duplicates.
	if _, err := Scan([]byte(`{"a":{"a":{"a":1}},"b":[{"a":1},{"a":1}],"c":{}}`), nil); err != nil {
		t.Errorf("same names in different objects: %v", err)
	}
}

func TestScanNotObject(t *testing.T) {
	for _, in := range []string{`[]`, `[{"id":1}]`, `"str"`, `1`, `-1.5e10`, `true`, `null`, ` [ ] `} {
		_, err := Scan([]byte(in), nil)
		if !errors.Is(err, ErrNotObject) {
			t.Errorf("Scan(%q) = %v, want ErrNotObject", in, err)
		}
	}
	// Invalid input that does not start with '{' is a syntax error, not ErrNotObject.
	if _, err := Scan([]byte(`[1,]`), nil); !errors.Is(err, ErrSyntax) {
		t.Errorf("Scan([1,]) = %v, want a syntax error", err)
	}
	if _, err := Scan([]byte(`[] x`), nil); !errors.Is(err, ErrSyntax) {
		t.Errorf("Scan([] x) = %v, want a syntax error", err)
	}
}

func TestScanManyPaths(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("{")
	var paths [][]string
	for i := 0; i < 150; i++ {
		if i > 0 {
			sb.WriteString(",")
		}
		k := "k" + strconv.Itoa(i)
		sb.WriteString(`"` + k + `":{"v":` + strconv.Itoa(i) + `}`)
		paths = append(paths, []string{k, "v"})
	}
	sb.WriteString("}")
	paths = append(paths, []string{"missing"}, []string{})
	got, err := Scan([]byte(sb.String()), paths)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 150; i++ {
		if string(got.Values[i]) != strconv.Itoa(i) {
			t.Fatalf("Values[%d] = %q", i, got.Values[i])
		}
	}
	if got.Values[150] != nil || string(got.Values[151]) != sb.String() {
		t.Fatalf("tail values wrong: %q %q", got.Values[150], got.Values[151])
	}
}

func TestScanIntoReuses(t *testing.T) {
	var s Scanned
	paths := [][]string{{"pk"}, {"a", "b"}}
	if err := ScanInto(&s, []byte(`{"id":"1","pk":"x","a":{"b":2}}`), paths); err != nil {
		t.Fatal(err)
	}
	if string(s.ID) != `"1"` || string(s.Values[0]) != `"x"` || string(s.Values[1]) != `2` {
		t.Fatalf("got %q %q", s.ID, s.Values)
	}
	if err := ScanInto(&s, []byte(`{"pk":"y"}`), paths); err != nil {
		t.Fatal(err)
	}
	if s.ID != nil || string(s.Values[0]) != `"y"` || s.Values[1] != nil {
		t.Fatalf("stale results: %q %q", s.ID, s.Values)
	}
	if err := ScanInto(&s, []byte(`{"pk":`), paths); err == nil || s.ID != nil || s.Values[0] != nil {
		t.Fatalf("error case: err=%v values=%q", err, s.Values)
	}
	doc := []byte(`{"id":"1","pk":"x","a":{"b":2}}`)
	allocs := testing.AllocsPerRun(100, func() {
		_ = ScanInto(&s, doc, paths)
	})
	if allocs != 0 {
		t.Errorf("ScanInto allocates %v times, want 0", allocs)
	}
}

func TestValidate(t *testing.T) {
	for _, in := range []string{`1`, ` "x" `, `[1,{"a":null}]`, `{}`, `null`} {
		if err := Validate([]byte(in)); err != nil {
			t.Errorf("Validate(%q) = %v", in, err)
		}
	}
	for _, in := range []string{``, `1 2`, `[`, `{"a"}`, `nulll`} {
		if err := Validate([]byte(in)); err == nil {
			t.Errorf("Validate(%q) = nil, want error", in)
		}
	}
}

func TestUnquoteString(t *testing.T) {
	f := func(in string, want string, wantOK bool) {
		t.Helper()
		got, ok := UnquoteString([]byte(in))
		if ok != wantOK || got != want {
			t.Errorf("UnquoteString(%q) = %q, %v; want %q, %v", in, got, ok, want, wantOK)
		}
		if ok { // agree with encoding/json
			var s string
			if err := json.Unmarshal([]byte(in), &s); err != nil || s != got {
				t.Errorf("encoding/json gives %q, %v", s, err)
			}
		}
	}
	f(`"abc"`, "abc", true)
	f(`""`, "", true)
	f(`"a\"b\\c\/d\b\f\n\r\t"`, "a\"b\\c/d\b\f\n\r\t", true)
	f(`"\u00e9\u4e2d"`, "é中", true)
	f(`"\ud83d\ude00"`, "😀", true)
	f(`"\ud83d"`, "\ufffd", true)        // lone high surrogate
	f(`"\ude00x"`, "\ufffdx", true)      // lone low surrogate
	f(`"\ud83d\u0041"`, "\ufffdA", true) // high surrogate then non-surrogate
	f("\"\xff\"", "\ufffd", true)        // invalid UTF-8 coerced
	f(`abc`, "", false)
	f(`"abc`, "", false)
	f(`"a"b"`, "", false)
	f(`"\x"`, "", false)
	f(`1`, "", false)
	f(` "a"`, "", false)
	f(`"a" `, "", false)
	f("\"a\nb\"", "", false)
}

func TestAppendQuote(t *testing.T) {
	for _, s := range []string{"", "plain", `"q" \ /`, "ctl\x00\x01\x1f\n\r\t", "é😀", "\xff bad", "<&>", "\u2028"} {
		q := AppendQuote(nil, s)
		var back string
		if err := json.Unmarshal(q, &back); err != nil {
			t.Fatalf("AppendQuote(%q) = %s: %v", s, q, err)
		}
		want := strings.ToValidUTF8(s, "\ufffd")
		if back != want {
			t.Errorf("round trip %q -> %s -> %q", s, q, back)
		}
	}
}

// TestScanAgreesWithEncodingJSON mutates valid documents at random and checks
// that Scan and encoding/json.Valid agree on validity (the fuzz target does
// the same with coverage guidance).
func TestScanAgreesWithEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte(`{}[]":,. -+eE0123456789truefalsn\u/bx` + "\t\n\x00\xff")
	n := 20000
	if testing.Short() {
		n = 2000
	}
	for iter := 0; iter < n; iter++ {
		doc := []byte(randomDocJSON(rng))
		for k := rng.IntN(4); k > 0 && len(doc) > 0; k-- {
			i := rng.IntN(len(doc))
			switch rng.IntN(3) {
			case 0:
				doc[i] = alphabet[rng.IntN(len(alphabet))]
			case 1:
				doc = append(doc[:i], doc[i+1:]...)
			case 2:
				doc = append(doc[:i], append([]byte{alphabet[rng.IntN(len(alphabet))]}, doc[i:]...)...)
			}
		}
		if rng.IntN(10) == 0 {
			doc = doc[:rng.IntN(len(doc)+1)]
		}
		checkScanAgainstStdlib(t, doc)
	}
}

// checkScanAgainstStdlib asserts Scan agrees with encoding/json on data.
func checkScanAgainstStdlib(t *testing.T, data []byte) {
	t.Helper()
	s, err := Scan(data, [][]string{{"id"}, {"a"}, {"a", "b"}})
	valid := json.Valid(data)
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	isObject := valid && trimmed[0] == '{'

	switch {
	case valid && err != nil && errors.Is(err, ErrSyntax) && breaksDocumentRules(data):
		if Validate(data) == nil {
			t.Fatalf("Validate(%q) = nil, Scan says %v", data, err)
		}
		return
	case !valid:
		if !errors.Is(err, ErrSyntax) {
			t.Fatalf("Scan(%q) = %v, encoding/json says invalid", data, err)
		}
		if err := Validate(data); err == nil {
			t.Fatalf("Validate(%q) = nil, encoding/json says invalid", data)
		}
		return
	case !isObject:
		if !errors.Is(err, ErrNotObject) {
			t.Fatalf("Scan(%q) = %v, want ErrNotObject", data, err)
		}
		return
	case err != nil:
		t.Fatalf("Scan(%q) = %v, encoding/json says valid", data, err)
	}
	if err := Validate(data); err != nil {
		t.Fatalf("Validate(%q) = %v", data, err)
	}
	if !equalIDs(s.ID, s.Values[0]) {
		t.Fatalf("ID %q != Values[0] %q", s.ID, s.Values[0])
	}
	for _, v := range append([][]byte{s.ID}, s.Values...) {
		if v != nil && !json.Valid(v) {
			t.Fatalf("Scan(%q) returned invalid value %q", data, v)
		}
	}
	// Without duplicate names, encoding/json must see the same values.
	if breaksDocumentRules(data) {
		t.Fatalf("Scan(%q) accepted a document that breaks the document rules", data)
	}
	var m map[string]any
	if err := unmarshalUseNumber(data, &m); err != nil {
		t.Fatal(err)
	}
	checkSame := func(what string, got []byte, want any, present bool) {
		t.Helper()
		if !present {
			if got != nil {
				t.Fatalf("%s: Scan found %q in %q, encoding/json found nothing", what, got, data)
			}
			return
		}
		var g any
		if got == nil || unmarshalUseNumber(got, &g) != nil || !jsonEqual(g, want) {
			t.Fatalf("%s: Scan found %q in %q, encoding/json found %v", what, got, data, want)
		}
	}
	id, ok := m["id"]
	checkSame("id", s.ID, id, ok)
	a, ok := m["a"]
	checkSame("/a", s.Values[1], a, ok)
	am, _ := a.(map[string]any)
	b, ok := am["b"]
	checkSame("/a/b", s.Values[2], b, ok)
}

func equalIDs(a, b []byte) bool { return string(a) == string(b) && (a == nil) == (b == nil) }

// unmarshalUseNumber decodes keeping numbers as json.Number, so numbers
// beyond float64's range still decode.
func unmarshalUseNumber(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v)
}

// TestScanStringBoundaries puts each interesting byte at every position of
// strings around the 8-byte fast path's word boundaries.
func TestScanStringBoundaries(t *testing.T) {
	for n := 0; n <= 24; n++ {
		for pos := 0; pos < n; pos++ {
			for _, c := range []byte{'"', '\\', 0x00, 0x01, 0x1f, ' ', 0x21, 0x5b, 0x5d, 0x7f, 0x80, 0xa2, 0xdc, 0xff} {
				s := []byte(strings.Repeat("x", n))
				s[pos] = c
				doc := append(append([]byte(`{"a":"`), s...), `"}`...)
				checkScanAgainstStdlib(t, doc)
				if pos+1 < n { // also as an escape pair
					s[pos], s[pos+1] = '\\', c
					doc = append(append([]byte(`{"a":"`), s...), `"}`...)
					checkScanAgainstStdlib(t, doc)
				}
			}
		}
	}
}

func TestUnpairedSurrogate(t *testing.T) {
	f := func(raw, want string) {
		t.Helper()
		if got := UnpairedSurrogate([]byte(raw)); got != want {
			t.Errorf("UnpairedSurrogate(%s) = %q, want %q", raw, got, want)
		}
	}
	f(`"abc"`, "")
	f(`"\ud83d\ude00"`, "")   // a pair: one character
	f(`"\\ud800"`, "")        // an escaped backslash, then text
	f(`"\ufffd\n"`, "")       // U+FFFD itself is a character
	f(`"a\ud800b"`, `\ud800`) // lone high surrogate
	f(`"\ude00"`, `\ude00`)   // lone low surrogate
	f(`"\ud83d\u0041"`, `\ud83d`)
	f(`"\ud83d\ude00\udc00"`, `\udc00`)
}
