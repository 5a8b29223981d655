package edm

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
)

func TestCompareTypes(t *testing.T) {
	ts := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	vals := []Value{
		StringValue("5"), Int32Value(5), Int64Value(5), DoubleValue(5), BooleanValue(true),
		DateTimeValue(ts), GuidValue("00000000-0000-0000-0000-000000000005"), BinaryValue([]byte{5}),
	}
	for i, a := range vals {
		for j, b := range vals {
			c, ok := Compare(a, b)
			if i == j {
				if !ok || c != 0 {
					t.Errorf("Compare(%v, itself) = %d, %v", a.Type.Name(), c, ok)
				}
				continue
			}
			// Different types never compare: not Int32 with Int64, not
			// either with Double (see TestEvalTypes in package filter).
			if ok {
				t.Errorf("Compare(%s, %s) compared", a.Type.Name(), b.Type.Name())
			}
		}
	}
}

func TestCompareWithinTypes(t *testing.T) {
	t0 := time.Date(2020, 1, 2, 3, 4, 5, 100, time.UTC)
	cases := []struct {
		a, b Value
		want int
	}{
		{Int32Value(-1), Int32Value(1), -1},
		{Int64Value(math.MaxInt64), Int64Value(math.MinInt64), 1},
		{DoubleValue(math.Copysign(0, -1)), DoubleValue(0), 0},
		{DoubleValue(math.Inf(-1)), DoubleValue(-math.MaxFloat64), -1},
		{DoubleValue(math.NaN()), DoubleValue(math.Inf(-1)), -1},
		{DoubleValue(math.NaN()), DoubleValue(math.NaN()), 0},
		{BooleanValue(false), BooleanValue(true), -1},
		{BooleanValue(true), BooleanValue(true), 0},
		{DateTimeValue(t0), DateTimeValue(t0.Add(100)), -1},
		{DateTimeValue(t0), DateTimeValue(t0.In(time.FixedZone("x", 3600))), 0},
		{GuidValue("6bc44494-d2b7-4738-8f87-acd692226a5c"), GuidValue("7bc44494-d2b7-4738-8f87-acd692226a5c"), -1},
		{BinaryValue([]byte{0, 1}), BinaryValue([]byte{0, 1, 0}), -1},
		{BinaryValue([]byte{2}), BinaryValue([]byte{0, 1, 0}), 1},
		{BinaryValue(nil), BinaryValue([]byte{}), 0},
		{StringValue("a"), StringValue("b"), -1},
		{StringValue("B"), StringValue("a"), -1}, // ordinal, not culture
		{StringValue("\U0001F600"), StringValue("\uff01"), -1},
	}
	for _, c := range cases {
		got, ok := Compare(c.a, c.b)
		if !ok || got != c.want {
			t.Errorf("Compare(%+v, %+v) = %d, %v, want %d", c.a, c.b, got, ok, c.want)
		}
		back, _ := Compare(c.b, c.a)
		if back != -c.want {
			t.Errorf("Compare(%+v, %+v) = %d, not the opposite of %d", c.b, c.a, back, c.want)
		}
	}
}

// utf16Order is the reference: compare the UTF-16 encodings.
func utf16Order(a, b string) int {
	return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
}

func TestCompareStringsIsUTF16Order(t *testing.T) {
	// Azurite 3.35.0 (JavaScript's < on strings) ordered U+1F600 before
	// U+FF01 and U+E000: see TestEvalSameType in package filter.
	alphabet := []rune{'a', 'b', 0x7f, 0xe9, 0x800, 0xd7ff, 0xe000, 0xff01, 0xffff, 0x10000, 0x1f600, 0x10ffff}
	r := rand.New(rand.NewPCG(5, 6))
	gen := func() string {
		var b strings.Builder
		for range r.IntN(5) {
			b.WriteRune(alphabet[r.IntN(len(alphabet))])
		}
		return b.String()
	}
	for range 20000 {
		a, b := gen(), gen()
		if r.IntN(4) == 0 {
			b = a + b // share a prefix
		}
		if got, want := sign(CompareStrings(a, b)), sign(utf16Order(a, b)); got != want {
			t.Fatalf("CompareStrings(%+q, %+q) = %d, want %d", a, b, got, want)
		}
	}
	// Bytes order would put U+FF01 (EF BC 81) before U+1F600 (F0 9F 98 80).
	if CompareStrings("\uff01", "\U0001F600") != 1 {
		t.Fatal("U+FF01 must sort after U+1F600")
	}
}

func TestCompareStringsInvalidUTF8IsTotal(t *testing.T) {
	xs := []string{"", "a", "\xff", "\xfe", "a\xff", "\xef\xbf\xbd", "\xc3", "\xc3\xa9", "\xf0\x9f", "z"}
	for _, a := range xs {
		for _, b := range xs {
			ab, ba := CompareStrings(a, b), CompareStrings(b, a)
			if sign(ab) != -sign(ba) || (ab == 0) != (a == b) {
				t.Errorf("CompareStrings(%q, %q) = %d but reverse %d", a, b, ab, ba)
			}
			for _, c := range xs {
				if CompareStrings(a, b) < 0 && CompareStrings(b, c) < 0 && CompareStrings(a, c) >= 0 {
					t.Errorf("not transitive: %q < %q < %q", a, b, c)
				}
			}
		}
	}
}

func sign(x int) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

func TestParseDateTime(t *testing.T) {
	want := time.Date(2020, 1, 2, 3, 4, 5, 123456700, time.UTC)
	good := map[string]time.Time{
		"2020-01-02T03:04:05.1234567Z":      want,
		"2020-01-02T03:04:05.1234567":       want,
		"2020-01-02T04:04:05.1234567+01:00": want,
		"2020-01-01T22:34:05.1234567-04:30": want,
		"2020-01-02T03:04:05Z":              want.Truncate(time.Second),
		"2020-01-02T03:04:05.1Z":            want.Truncate(100 * time.Millisecond),
		"2020-01-02T03:04:05.000Z":          want.Truncate(time.Second),
		"0001-01-01T00:00:00Z":              time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		"9999-12-31T23:59:59.9999999Z":      time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC),
		"2024-02-29T00:00:00Z":              time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC),
	}
	for s, w := range good {
		got, err := ParseDateTime(s)
		if err != nil || !got.Equal(w) || got.Location() != time.UTC {
			t.Errorf("ParseDateTime(%q) = %v, %v, want %v", s, got, err, w)
		}
	}
	for _, s := range []string{
		"", "2020-01-02", "2020-01-02T03:04", "2020-01-02 03:04:05Z", "2020-01-02T03:04:05.Z",
		"2020-01-02T03:04:05.12345678Z", "2020-13-02T03:04:05Z", "2023-02-29T00:00:00Z",
		"2020-01-02T24:00:00Z", "2020-01-02T03:60:05Z", "2020-01-02T03:04:60Z", "0000-01-01T00:00:00Z",
		"2020-01-02T03:04:05z", "2020-01-02T03:04:05+0100", "2020-01-02T03:04:05+01:60",
		"2020-01-02T03:04:05ZZ", "+2020-01-02T03:04:05Z", "2020-01-02t03:04:05Z", "２020-01-02T03:04:05Z",
	} {
		if _, err := ParseDateTime(s); !errors.Is(err, ErrSyntax) {
			t.Errorf("ParseDateTime(%q) error = %v, want ErrSyntax", s, err)
		}
	}
}

func TestFormatDateTime(t *testing.T) {
	cases := map[time.Time]string{
		time.Date(2020, 1, 2, 3, 4, 5, 123456789, time.UTC):            "2020-01-02T03:04:05.1234567Z",
		time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC):                    "2020-01-02T03:04:05.0000000Z",
		time.Date(2020, 1, 2, 4, 4, 5, 100, time.FixedZone("x", 3600)): "2020-01-02T03:04:05.0000001Z",
		time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC):                    "1601-01-01T00:00:00.0000000Z",
	}
	for in, want := range cases {
		if got := FormatDateTime(in); got != want {
			t.Errorf("FormatDateTime(%v) = %q, want %q", in, got, want)
		}
		back, err := ParseDateTime(FormatDateTime(in))
		if err != nil || !back.Equal(in.Truncate(100)) {
			t.Errorf("ParseDateTime(FormatDateTime(%v)) = %v, %v", in, back, err)
		}
	}
}

func TestInDateTimeRange(t *testing.T) {
	if InDateTimeRange(time.Date(1600, 12, 31, 23, 59, 59, 0, time.UTC)) || !InDateTimeRange(MinDateTime) ||
		!InDateTimeRange(time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC)) ||
		InDateTimeRange(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatal("InDateTimeRange disagrees with 1601-01-01 .. 9999-12-31")
	}
}

func TestFormatDouble(t *testing.T) {
	// Azurite 3.35.0 returned a Double property 5 as "N":5.0 and NaN as
	// "N":"NaN" with N@odata.type Edm.Double (raw JSON of a query); the
	// other forms follow ECMAScript Number::toString, which Azurite uses.
	cases := map[float64]string{
		5:                "5.0",
		-2:               "-2.0",
		0:                "0.0",
		2.5:              "2.5",
		0.1:              "0.1",
		1e20:             "100000000000000000000.0",
		1e21:             "1e+21",
		1.5e-7:           "1.5e-7",
		1e-7:             "1e-7",
		1.25e-6:          "0.00000125",
		math.MaxFloat64:  "1.7976931348623157e+308",
		5e-324:           "5e-324",
		math.NaN():       "NaN",
		math.Inf(1):      "Infinity",
		math.Inf(-1):     "-Infinity",
		123456789.123456: "123456789.123456",
	}
	for in, want := range cases {
		if got := FormatDouble(in); got != want {
			t.Errorf("FormatDouble(%v) = %q, want %q", in, got, want)
		}
	}
	if got := FormatDouble(math.Copysign(0, -1)); got != "-0.0" {
		t.Errorf("FormatDouble(-0) = %q", got)
	}
}

func TestParseGuid(t *testing.T) {
	g, err := ParseGuid("6BC44494-d2b7-4738-8F87-ACD692226A5C")
	if err != nil || g != "6bc44494-d2b7-4738-8f87-acd692226a5c" {
		t.Fatalf("ParseGuid = %q, %v", g, err)
	}
	for _, s := range []string{
		"", "6bc44494d2b747388f87acd692226a5c", "{6bc44494-d2b7-4738-8f87-acd692226a5c}",
		"6bc44494-d2b7-4738-8f87-acd692226a5", "6bc44494-d2b7-4738-8f87_acd692226a5c",
		"6bc44494-d2b7-4738-8f87-acd692226a5g", "6bc44494-d2b7-4738-8f8-7acd692226a5c",
	} {
		if _, err := ParseGuid(s); !errors.Is(err, ErrSyntax) {
			t.Errorf("ParseGuid(%q) error = %v", s, err)
		}
	}
}
