package synthkey

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

var point1 = 0.1 // a variable, so that 0.1 + 0.2 is computed in float64

func TestNumberText(t *testing.T) {
	tests := []struct {
		f    float64
		want string // what JavaScript's String(f) returns
	}{
		{0, "0"},
		{math.Copysign(0, -1), "0"},
		{7, "7"},
		{-7, "-7"},
		{1.5, "1.5"},
		{0.1, "0.1"},
		{point1 + 0.2, "0.30000000000000004"},
		{100, "100"},
		{123456789, "123456789"},
		{1 << 53, "9007199254740992"},
		{12345678901234567890, "12345678901234567000"},
		{1e20, "100000000000000000000"},
		{123456789012345680000, "123456789012345680000"},
		{1e21, "1e+21"},
		{-1e21, "-1e+21"},
		{1.5e21, "1.5e+21"},
		{1e100, "1e+100"},
		{math.MaxFloat64, "1.7976931348623157e+308"},
		{0.000001, "0.000001"},
		{0.0000015, "0.0000015"},
		{1e-7, "1e-7"},
		{-1.5e-7, "-1.5e-7"},
		{1.2345e-9, "1.2345e-9"},
		{1e-10, "1e-10"},
		{5e-324, "5e-324"},
		{2.5e-100, "2.5e-100"},
	}
	for _, tc := range tests {
		if got := string(appendNumberText(nil, tc.f)); got != tc.want {
			t.Errorf("text of %v = %q, want %q", tc.f, got, tc.want)
		}
	}
}

func TestCompute(t *testing.T) {
	tests := []struct {
		expr string
		doc  string
		want string // Key.String(), or "error: " + message
	}{
		{`/date`, `{"date":"2018-08-09"}`, `["2018-08-09"]`},
		{`/date`, `{"date":2018}`, `[2018]`},
		{`/date`, `{"date":2018.0}`, `[2018]`},
		{`/date`, `{"date":-0}`, `[-0]`},
		{`/date`, `{"date":true}`, `[true]`},
		{`/date`, `{"date":null}`, `[null]`},
		{`/date`, `{"x":1}`, `[{}]`},
		{`/date`, `{}`, `[{}]`},
		{`/date`, `{"date":{"y":1}}`, `error: synthkey: /date holds an object; a partition key value must be a string, number, boolean or null`},
		{`/date`, `{"date":[1]}`, `error: synthkey: /date holds an array; a partition key value must be a string, number, boolean or null`},
		{`/date`, `{"date":1e400}`, `error: synthkey: invalid document: number 1e400 is out of range: numbers must be finite IEEE 754 double-precision values (at most about ±1.8e308) at offset 8`},
		{`/a/b`, `{"a":{"b":"x"}}`, `["x"]`},
		{`/a/b`, `{"a":["b"]}`, `[{}]`},
		{`/a/b`, `{"a":"b"}`, `[{}]`},
		{`/"a b"/"c/d"`, `{"a b":{"c/d":"x"}}`, `["x"]`},
		{`/a`, `{"a":"first","a":"second"}`, `error: synthkey: invalid document: duplicate property name "a": a name may appear only once in an object at offset 13`},
		{`/a`, `{"\u0061":"escaped name"}`, `["escaped name"]`},
		{`/a`, `{"a":"tab\tnewline\n\u00e9\ud83d\ude00 \/"}`, `["tab\tnewline\né😀 /"]`},
		{`[/tenant, /user]`, `{"tenant":"t1","user":5}`, `["t1",5]`},
		{`[/tenant, /user, /s]`, `{"tenant":"t1"}`, `["t1",{},{}]`},
		{`concat(/deviceId, "-", /date)`, `{"deviceId":"abc-123","date":2018}`, `["abc-123-2018"]`},
		{`concat(/a, "|", /b, "|", /c, "|", /d, "|", /e, "|", /f)`, `{"a":1.50,"b":1E21,"c":-0.0,"d":true,"e":false,"f":null}`, `["1.5|1e+21|0|true|false|null"]`},
		{`concat(/a, "|", /b)`, `{"a":0.00000015,"b":12345678901234567890}`, `["1.5e-7|12345678901234567000"]`},
		{`concat(/a, ".", /b)`, `{"a":"x\"y","b":"\u0041"}`, `["x\"y.A"]`},
		{`concat(/a, "\u00e9")`, `{"a":""}`, `["é"]`},
		{`concat(/date, ".", hash(/vin, 400))`, `{"date":"2018-08-09","vin":"1HGCM82633A004352"}`, `["2018-08-09.211"]`},
		{`concat(/date, ".", hash(/vin, 400))`, `{"date":"2018-08-09","vin":7}`, `["2018-08-09.247"]`},
		{`concat(/date, ".", hash(/vin, 400))`, `{"date":"2018-08-09","vin":"7"}`, `["2018-08-09.247"]`},
		{`concat(/date, ".", hash(/vin, 1))`, `{"date":"d","vin":"anything"}`, `["d.1"]`},
		{`concat(hash(/vin, 400), /vin)`, `{"vin":"a"}`, `["397a"]`},
		{`concat(/date, ".", hash(/vin, 400))`, `{"date":"2018-08-09"}`, `error: synthkey: /vin is missing; the key is computed from it and needs a string, number, boolean or null there`},
		{`concat(/date, ".", hash(/vin, 400))`, `{"vin":"x"}`, `error: synthkey: /date is missing; the key is computed from it and needs a string, number, boolean or null there`},
		{`concat(/date, ".", hash(/vin, 400))`, `{"date":"d","vin":{}}`, `error: synthkey: /vin holds an object; a partition key value must be a string, number, boolean or null`},
		{`concat(/date, ".", /vin)`, `{"date":"d","vin":[]}`, `error: synthkey: /vin holds an array; a partition key value must be a string, number, boolean or null`},
		{`[/tenant, concat(/user, "@", /tenant)]`, `{"tenant":"t","user":"u"}`, `["t","u@t"]`},
		{`[/tenant, concat(/user, "@", /tenant)]`, `{"user":"u"}`, `error: synthkey: /tenant is missing; the key is computed from it and needs a string, number, boolean or null there`},
		{`concat(/a, "x")`, `[1]`, `error: synthkey: invalid document: jsondoc: document is not a JSON object`},
		{`concat(/a, "x")`, `{"a":1`, `error: synthkey: invalid document: unexpected end of JSON input at offset 6`},
		{`concat(/a, "x")`, ``, `error: synthkey: invalid document: unexpected end of JSON input at offset 0`},
	}
	for _, tc := range tests {
		e := MustParse(tc.expr)
		k, err := e.Compute([]byte(tc.doc), nil)
		got := ""
		if err != nil {
			got = "error: " + err.Error()
		} else {
			got = k.String()
		}
		if got != tc.want {
			t.Errorf("%s over %s\n got %s\nwant %s", tc.expr, tc.doc, got, tc.want)
			continue
		}
		// The decoded document gives the same result.
		var m map[string]any
		if json.Unmarshal([]byte(tc.doc), &m) != nil || strings.Contains(tc.doc, `"a":"first"`) || strings.Contains(tc.doc, "1e400") {
			continue // not decodable, or decoding differs on purpose (duplicates, range)
		}
		k2, err2 := e.ComputeMap(m, nil)
		got2 := ""
		if err2 != nil {
			got2 = "error: " + err2.Error()
		} else {
			got2 = k2.String()
		}
		if got2 != got {
			t.Errorf("%s over decoded %s\n got %s\nwant %s", tc.expr, tc.doc, got2, got)
		}
	}
}

func TestComputeErrorTypes(t *testing.T) {
	e := MustParse(`concat(/date, ".", hash(/vin, 400))`)
	_, err := e.Compute([]byte(`{"date":"d"}`), nil)
	var ve *ValueError
	if !errors.As(err, &ve) || ve.Path != "/vin" || !ve.Missing {
		t.Errorf("missing /vin: got %#v", err)
	}
	_, err = e.Compute([]byte(`{"date":"d","vin":[1]}`), nil)
	if !errors.As(err, &ve) || ve.Path != "/vin" || ve.Missing || ve.Found != "an array" {
		t.Errorf("array at /vin: got %#v", err)
	}
	_, err = e.Compute([]byte(`{"date":`), nil)
	if !errors.Is(err, ErrDocument) {
		t.Errorf("bad document: %v does not wrap ErrDocument", err)
	}
	_, err = e.Compute([]byte(`"x"`), nil)
	if !errors.Is(err, ErrDocument) {
		t.Errorf("non-object document: %v does not wrap ErrDocument", err)
	}
}

func TestRandom(t *testing.T) {
	e := MustParse(`concat(/date, ".", random(3, 7))`)
	doc := []byte(`{"date":"2018-08-09"}`)
	seen := map[string]int{}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		k, err := e.Compute(doc, r)
		if err != nil {
			t.Fatal(err)
		}
		seen[k[0].(string)]++
	}
	k, err := e.Compute(doc, nil) // package-level source
	if err != nil {
		t.Fatal(err)
	}
	seen[k[0].(string)]++
	if len(seen) != 5 {
		t.Fatalf("random(3, 7) produced %v", seen)
	}
	for i := 3; i <= 7; i++ {
		s := "2018-08-09." + strconv.Itoa(i)
		if seen[s] < 300 {
			t.Errorf("%s drawn %d times in 2001, want about 400", s, seen[s])
		}
	}
	// The same seed gives the same keys.
	a, _ := e.Compute(doc, rand.New(rand.NewPCG(9, 9)))
	b, _ := e.Compute(doc, rand.New(rand.NewPCG(9, 9)))
	if !a.Equal(b) {
		t.Errorf("same seed, different keys: %v %v", a, b)
	}
}

func TestFromBase(t *testing.T) {
	tests := []struct {
		expr string
		base []any
		want string
	}{
		{`/a`, []any{"x"}, `["x"]`},
		{`/a`, []any{7}, `[7]`},
		{`/a`, []any{int64(-3)}, `[-3]`},
		{`/a`, []any{json.Number("7.50")}, `[7.5]`},
		{`/a`, []any{nil}, `[null]`},
		{`/a`, []any{false}, `[false]`},
		{`/a`, []any{Undefined}, `[{}]`},
		{`[/a, /b]`, []any{"x", Undefined}, `["x",{}]`},
		{`concat(/a, "-", /b)`, []any{int64(1) << 60, json.Number("1e21")}, `["1152921504606847000-1e+21"]`},
		{`concat(/date, ".", hash(/vin, 400))`, []any{"2018-08-09", "1HGCM82633A004352"}, `["2018-08-09.211"]`},
		{`concat(/a, "-", /b)`, []any{"x", Undefined}, `error: synthkey: /b is missing; the key is computed from it and needs a string, number, boolean or null there`},
		{`concat(/a, "-", /b)`, []any{"x", map[string]any{}}, `error: synthkey: /b holds an object; a partition key value must be a string, number, boolean or null`},
		{`/a`, []any{[]any{}}, `error: synthkey: /a holds an array; a partition key value must be a string, number, boolean or null`},
		{`/a`, []any{int32(1)}, `error: synthkey: /a holds a value of the unsupported Go type int32; a partition key value must be a string, number, boolean or null`},
		{`/a`, []any{math.NaN()}, `error: synthkey: /a holds a number JSON cannot express (NaN); a partition key value must be a string, number, boolean or null`},
		{`/a`, []any{json.Number("0x10")}, `error: synthkey: /a holds the invalid json.Number "0x10"; a partition key value must be a string, number, boolean or null`},
		{`/a`, []any{json.Number("1e999")}, `error: synthkey: /a holds a number outside the float64 range; a partition key value must be a string, number, boolean or null`},
		{`concat(/a, "-", /b)`, []any{"x"}, `error: synthkey: got 1 base values for the 2 paths of concat(/a, "-", /b)`},
		{`concat(/a, random(1, 2))`, []any{"x"}, `error: ` + ErrRandom.Error()},
	}
	for _, tc := range tests {
		k, err := MustParse(tc.expr).FromBase(tc.base)
		got := ""
		if err != nil {
			got = "error: " + err.Error()
		} else {
			got = k.String()
		}
		if got != tc.want {
			t.Errorf("%s from %v\n got %s\nwant %s", tc.expr, tc.base, got, tc.want)
		}
	}
}

func TestExpand(t *testing.T) {
	e := MustParse(`[/tenant, concat(/date, ".", random(2, 5)), /user]`)
	keys, err := e.Expand([]any{"t", "2018-08-09", 7})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, k := range keys {
		got = append(got, k.String())
	}
	want := `["t","2018-08-09.2",7] ["t","2018-08-09.3",7] ["t","2018-08-09.4",7] ["t","2018-08-09.5",7]`
	if strings.Join(got, " ") != want {
		t.Errorf("Expand = %s\nwant %s", strings.Join(got, " "), want)
	}
	// Keys do not share storage.
	keys[0][0] = "changed"
	if keys[1][0] != "t" {
		t.Errorf("keys share their components")
	}
	if len(keys) != e.KeyCount() {
		t.Errorf("len(Expand) = %d, KeyCount = %d", len(keys), e.KeyCount())
	}

	d := MustParse(`concat(/date, ".", hash(/vin, 400))`)
	keys, err = d.Expand([]any{"2018-08-09", "1HGCM82633A004352"})
	if err != nil || len(keys) != 1 || keys[0].String() != `["2018-08-09.211"]` {
		t.Errorf("deterministic Expand = %v, %v", keys, err)
	}
	if _, err := e.Expand([]any{"t", Undefined, 1}); err == nil {
		t.Errorf("Expand with a missing concat value succeeded")
	}
	if _, err := e.Expand([]any{"t"}); err == nil {
		t.Errorf("Expand with too few values succeeded")
	}
	big := MustParse(`concat(random(1, 1000000), "")`)
	keys, err = big.Expand(nil)
	if err != nil || len(keys) != 1000000 || keys[999999][0] != "1000000" {
		t.Errorf("Expand of random(1, 1000000): %d keys, %v", len(keys), err)
	}
}

func TestFromRaw(t *testing.T) {
	e := MustParse(`[concat(/a, "-", /b), /c]`)
	k, err := e.FromRaw([][]byte{[]byte(` "x\u0041" `), []byte("1.0"), nil}, nil)
	if err != nil || k.String() != `["xA-1",{}]` {
		t.Errorf("FromRaw = %v, %v", k, err)
	}
	for _, bad := range []string{`tru`, `1.`, `"abc`, `01`, `+1`, `nul`} {
		_, err := e.FromRaw([][]byte{[]byte(bad), []byte("1"), nil}, nil)
		var ve *ValueError
		if !errors.As(err, &ve) || ve.Found != "invalid JSON" {
			t.Errorf("FromRaw(%q) error = %v, want invalid JSON", bad, err)
		}
	}
	if _, err := e.FromRaw(nil, nil); err == nil {
		t.Errorf("FromRaw with no values succeeded")
	}
}

func TestKey(t *testing.T) {
	k := Key{"a\"b", 1.5, math.Copysign(0, -1), true, nil, Undefined}
	if got, want := k.String(), `["a\"b",1.5,-0,true,null,{}]`; got != want {
		t.Errorf("String = %s, want %s", got, want)
	}
	b, err := json.Marshal(k)
	if err != nil || string(b) != `["a\"b",1.5,-0,true,null,{}]` {
		t.Errorf("json.Marshal = %s, %v", b, err)
	}
	if !k.Equal(Key{"a\"b", 1.5, math.Copysign(0, -1), true, nil, Undefined}) {
		t.Errorf("key not Equal to itself")
	}
	for _, o := range []Key{{"a\"b", 1.5, 0.0, true, nil, Undefined}, {"a\"b", 1.5, math.Copysign(0, -1), true, nil, nil}, {"a"}} {
		if k.Equal(o) {
			t.Errorf("%v Equal %v", k, o)
		}
	}
	if Undefined.String() != "undefined" {
		t.Errorf("Undefined.String() = %q", Undefined.String())
	}
}

// benchDoc is a 1 KB document like those the write path sees.
var benchDoc = func() []byte {
	var b bytes.Buffer
	b.WriteString(`{"id":"c1b2a3f4-0000-4e5f-9a8b-123456789abc","deviceId":"abc-123","vin":"1HGCM82633A004352",`)
	b.WriteString(`"date":"2018-08-09","readings":[`)
	for i := range 20 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"t":` + strconv.Itoa(1533772800+i) + `,"v":` + strconv.FormatFloat(float64(i)*1.25, 'f', -1, 64) + `}`)
	}
	b.WriteString(`],"owner":{"name":"A. Driver","city":"Lisbon"},"notes":"`)
	for b.Len() < 1000 {
		b.WriteString("lorem ipsum ")
	}
	b.WriteString(`"}`)
	return b.Bytes()
}()

func BenchmarkCompute(b *testing.B) {
	for _, expr := range []string{
		`/deviceId`,
		`concat(/date, ".", hash(/vin, 400))`,
		`concat(/date, ".", random(1, 400))`,
		`[/deviceId, concat(/date, "-", /owner/city)]`,
	} {
		e := MustParse(expr)
		r := rand.New(rand.NewPCG(1, 2))
		if _, err := e.Compute(benchDoc, r); err != nil {
			b.Fatal(err)
		}
		b.Run(expr, func(b *testing.B) {
			b.SetBytes(int64(len(benchDoc)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.Compute(benchDoc, r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFromRaw is the cost once the values have been scanned.
func BenchmarkFromRaw(b *testing.B) {
	e := MustParse(`concat(/date, ".", hash(/vin, 400))`)
	raw := [][]byte{[]byte(`"2018-08-09"`), []byte(`"1HGCM82633A004352"`)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.FromRaw(raw, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// Compute may run on many goroutines at once over one Expr.
func TestComputeConcurrent(t *testing.T) {
	e := MustParse(`[/deviceId, concat(/date, ".", hash(/vin, 400))]`)
	want := `["abc-123","2018-08-09.211"]`
	done := make(chan string)
	for g := range 4 {
		go func() {
			doc := []byte(`{"deviceId":"abc-123","date":"2018-08-09","vin":"1HGCM82633A004352","g":` + strconv.Itoa(g) + `}`)
			for range 500 {
				k, err := e.Compute(doc, nil)
				if got := keyOrError(k, err); got != want {
					done <- got
					return
				}
			}
			done <- want
		}()
	}
	for range 4 {
		if got := <-done; got != want {
			t.Errorf("concurrent Compute = %s, want %s", got, want)
		}
	}
}
