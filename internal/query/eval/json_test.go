package eval

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// toAny converts v to what encoding/json decodes into an interface{}.
func toAny(v Value) any {
	switch v.Kind() {
	case Null:
		return nil
	case Bool:
		return v.AsBool()
	case Number:
		return v.AsFloat()
	case String:
		return v.AsString()
	case Array:
		out := make([]any, v.Len())
		for i := range out {
			out[i] = toAny(v.Elem(i))
		}
		return out
	case Object:
		out := make(map[string]any, v.Len())
		for i := range v.Len() {
			k, x := v.Member(i)
			out[k] = toAny(x)
		}
		return out
	}
	panic("undefined in JSON")
}

// agree checks FromJSON against encoding/json on data: both accept or both
// reject, accepted values are the same, and AppendJSON round-trips.
func agree(t *testing.T, data []byte) {
	t.Helper()
	var want any
	werr := json.Unmarshal(data, &want)
	v, err := FromJSON(data)
	if (err == nil) != (werr == nil) {
		t.Fatalf("%q: FromJSON error %v, encoding/json error %v", data, err, werr)
	}
	if err != nil {
		if !errors.Is(err, ErrBadJSON) {
			t.Fatalf("%q: error does not wrap ErrBadJSON: %v", data, err)
		}
		return
	}
	if got := toAny(v); !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: FromJSON gives %#v, encoding/json %#v", data, got, want)
	}
	out := v.AppendJSON(nil)
	if !json.Valid(out) {
		t.Fatalf("%q: AppendJSON wrote invalid JSON %q", data, out)
	}
	// Reading the output back gives the same JSON and the same float64s.
	// (Not always an Equal value: a float64 above 2^53 prints in
	// JavaScript's shortest form, 8.301362481861185e17 as
	// 830136248186118500, which reads back as that exact integer, a
	// different number with the same float64.)
	again, err := FromJSON(out)
	if err != nil || string(again.AppendJSON(nil)) != string(out) || !reflect.DeepEqual(toAny(again), toAny(v)) {
		t.Fatalf("%q: AppendJSON %q does not read back the same: %v", data, out, err)
	}
}

var jsonSamples = []string{
	`null`, `true`, `false`, `0`, `-0`, `1`, `-1`, `1.5`, `1e3`, `1E+3`, `1e-3`, `-0.0`, `123456789012345678901234567890`,
	`9223372036854775807`, `9223372036854775808`, `-9223372036854775808`, `-9223372036854775809`,
	`1.7976931348623157e308`, `5e-324`, `1e400`, `-1e400`, `1e-400`,
	`""`, `"abc"`, `"\u00e9\ud83d\ude00"`, `"\ud800"`, `"\udc00x"`, `"\ud800\u0041"`, `"\ud800\ud800\udc00"`,
	`"a\"b\\c\/d\b\f\n\r\t"`, "\"\xff\xfe\"", "\"caf\xc3\xa9\"", `[]`, `{}`, ` [ 1 , 2 ] `, "\t{\n\"a\"\r:1}",
	`{"a":1,"a":2}`, `{"a":1,"b":2,"a":3}`, `[{"a":[{"b":null}]}]`,
	// Invalid.
	``, ` `, `nul`, `tru`, `01`, `1.`, `.5`, `+1`, `1e`, `1e+`, `-`, `--1`, `0x1`, `NaN`, `Infinity`,
	`"abc`, `"\x"`, `"\u12"`, `"\u12G4"`, "\"a\nb\"", `[1,]`, `[,1]`, `{"a"}`, `{"a":}`, `{a:1}`,
	`{"a":1,}`, `[1 2]`, `{"a":1 "b":2}`, `1 2`, `[`, `{`, `]`, `"\`, `'a'`,
}

func TestFromJSONSamples(t *testing.T) {
	for _, s := range jsonSamples {
		agree(t, []byte(s))
	}
	// Integers without fraction or exponent that fit are exact.
	for _, s := range []string{"9223372036854775807", "-9223372036854775808", "9007199254740993"} {
		v, _ := FromJSON([]byte(s))
		if !v.IsExactInt() || v.String() != s {
			t.Errorf("%s read as %s (exact %v)", s, v, v.IsExactInt())
		}
	}
	for _, s := range []string{"1.0", "1e0", "9223372036854775808"} {
		if v, _ := FromJSON([]byte(s)); v.IsExactInt() {
			t.Errorf("%s should be a float64", s)
		}
	}
	// Depth limit.
	deep := strings.Repeat("[", MaxJSONDepth+1) + strings.Repeat("]", MaxJSONDepth+1)
	if _, err := FromJSON([]byte(deep)); err == nil {
		t.Errorf("nesting beyond MaxJSONDepth accepted")
	}
	ok := strings.Repeat("[", MaxJSONDepth) + strings.Repeat("]", MaxJSONDepth)
	if _, err := FromJSON([]byte(ok)); err != nil {
		t.Errorf("nesting of MaxJSONDepth rejected: %v", err)
	}
}

// randomJSON writes a random JSON document with random white space.
func randomJSON(r *rand.Rand, b *bytes.Buffer, depth int) {
	ws := func() {
		for range r.IntN(3) {
			b.WriteByte(" \t\n\r"[r.IntN(4)])
		}
	}
	ws()
	k := r.IntN(8)
	if depth <= 0 {
		k = r.IntN(6)
	}
	switch k {
	case 0:
		b.WriteString("null")
	case 1:
		b.WriteString([]string{"true", "false"}[r.IntN(2)])
	case 2:
		b.WriteString(strconv.FormatInt(r.Int64()>>r.IntN(64), 10))
	case 3:
		f := math.Float64frombits(r.Uint64())
		if math.IsNaN(f) || math.IsInf(f, 0) {
			f = r.NormFloat64()
		}
		b.WriteString(strconv.FormatFloat(f, "eEfg"[r.IntN(4)], -1, 64))
	case 4, 5:
		b.WriteString(randomJSONString(r))
	case 6:
		b.WriteByte('[')
		for i := range r.IntN(4) {
			if i > 0 {
				b.WriteByte(',')
			}
			randomJSON(r, b, depth-1)
		}
		ws()
		b.WriteByte(']')
	case 7:
		b.WriteByte('{')
		for i := range r.IntN(4) {
			if i > 0 {
				b.WriteByte(',')
			}
			ws()
			b.WriteString(randomJSONString(r))
			ws()
			b.WriteByte(':')
			randomJSON(r, b, depth-1)
		}
		ws()
		b.WriteByte('}')
	}
	ws()
}

func randomJSONString(r *rand.Rand) string {
	pieces := []string{"a", "k", "é", "😀", `\"`, `\\`, `\/`, `\n`, `\t`, `\u00e9`, `\ud83d\ude00`, `\ud800`, `\u0000`, "\xff", " "}
	var b strings.Builder
	b.WriteByte('"')
	for range r.IntN(5) {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	b.WriteByte('"')
	return b.String()
}

// TestFromJSONAgreesWithEncodingJSON compares FromJSON with encoding/json
// on random documents, and on random mutations of them (mostly invalid).
func TestFromJSONAgreesWithEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 3000 {
		var b bytes.Buffer
		randomJSON(r, &b, 4)
		data := b.Bytes()
		agree(t, data)
		if len(data) > 0 {
			m := bytes.Clone(data)
			const junk = "{}[]\",:0-e.x\\ "
			m[r.IntN(len(m))] = junk[r.IntN(len(junk))]
			agree(t, m)
			agree(t, m[:r.IntN(len(m))])
		}
	}
}

func TestAppendJSON(t *testing.T) {
	for _, c := range []struct {
		v    Value
		want string
	}{
		{NumberValue(math.NaN()), "null"},
		{NumberValue(math.Inf(-1)), "null"},
		{ArrayValue([]Value{NumberValue(math.Inf(1)), IntValue(-3)}), "[null,-3]"},
		{NumberValue(1e21), "1e+21"},
		{NumberValue(123456789e-15), "1.23456789e-7"},
		{NumberValue(0.000001), "0.000001"},
		{NumberValue(math.Copysign(0, -1)), "0"},
		{NumberValue(-1.5e300), "-1.5e+300"},
		{StringValue("a\"\\\n\x01\u2028é"), "\"a\\\"\\\\\\n\\u0001\u2028é\""},
		{StringValue("bad\xffutf8"), `"bad\ufffdutf8"`},
		{ObjectValue([]Member{{"z", IntValue(1)}, {"a", NullValue()}}), `{"z":1,"a":null}`},
		{Value{}, ""},
	} {
		if got := string(c.v.AppendJSON(nil)); got != c.want {
			t.Errorf("AppendJSON(%s) = %s, want %s", c.v, got, c.want)
		}
	}
	// Numbers print as encoding/json prints float64s (both follow ES6).
	r := rand.New(rand.NewPCG(5, 6))
	for range 2000 {
		f := math.Float64frombits(r.Uint64())
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		want, _ := json.Marshal(f)
		if got := NumberValue(f).AppendJSON(nil); string(got) != string(want) && !(f == 0 && string(got) == "0") {
			t.Fatalf("%v: AppendJSON %s, encoding/json %s", f, got, want)
		}
	}
}

func FuzzFromJSON(f *testing.F) {
	for _, s := range jsonSamples {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		agree(t, data)
	})
}
