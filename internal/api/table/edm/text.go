package edm

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Constructors for typed values.

// StringValue returns an Edm.String value.
func StringValue(s string) Value { return Value{Type: String, S: s} }

// Int32Value returns an Edm.Int32 value.
func Int32Value(i int32) Value { return Value{Type: Int32, I: int64(i)} }

// Int64Value returns an Edm.Int64 value.
func Int64Value(i int64) Value { return Value{Type: Int64, I: i} }

// DoubleValue returns an Edm.Double value.
func DoubleValue(f float64) Value { return Value{Type: Double, F: f} }

// BooleanValue returns an Edm.Boolean value.
func BooleanValue(b bool) Value { return Value{Type: Boolean, B: b} }

// DateTimeValue returns an Edm.DateTime value: t in UTC, truncated to the
// service's 100 ns precision.
func DateTimeValue(t time.Time) Value {
	return Value{Type: DateTime, T: t.UTC().Truncate(100 * time.Nanosecond)}
}

// GuidValue returns an Edm.Guid value from canonical text (see ParseGuid).
func GuidValue(canonical string) Value { return Value{Type: Guid, S: canonical} }

// BinaryValue returns an Edm.Binary value holding b (not copied).
func BinaryValue(b []byte) Value { return Value{Type: Binary, Bin: b} }

// ErrSyntax is wrapped by the text parsers' errors.
var ErrSyntax = errors.New("invalid EDM literal")

// MinDateTime is the earliest DateTime the Table service stores: "The
// supported DateTime range begins from 12:00 midnight, January 1, 1601
// A.D. (C.E.), UTC. The range ends at December 31, 9999"
// (learn.microsoft.com/rest/api/storageservices/understanding-the-table-service-data-model).
var MinDateTime = time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC)

// InDateTimeRange reports whether t lies in the range a stored DateTime
// property may hold (MinDateTime to the end of year 9999). ParseDateTime
// itself accepts years 0001 to 9999 so that a filter may compare with any
// such instant.
func InDateTimeRange(t time.Time) bool {
	return !t.Before(MinDateTime) && t.Year() <= 9999
}

// ParseDateTime parses the text of an Edm.DateTime as the service accepts
// it in entities and in datetime'…' literals:
//
//	YYYY-MM-DDThh:mm:ss[.f{1,7}][Z|±hh:mm]
//
// The fraction has at most seven digits (100 ns, the service's precision).
// An offset is converted to UTC; text without a zone is taken as UTC, as
// Edm.DateTime carries no offset in OData v3. The result is in UTC.
func ParseDateTime(s string) (time.Time, error) {
	bad := func(why string) (time.Time, error) {
		return time.Time{}, fmt.Errorf("cannot parse %q as Edm.DateTime: %s: %w", s, why, ErrSyntax)
	}
	// 0123456789012345678
	// YYYY-MM-DDThh:mm:ss
	if len(s) < 19 || len(s) > 40 {
		return bad("want YYYY-MM-DDThh:mm:ss with an optional fraction and zone")
	}
	num := func(i, n int) (int, bool) {
		v := 0
		for _, c := range []byte(s[i : i+n]) {
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int(c-'0')
		}
		return v, true
	}
	if s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return bad("want YYYY-MM-DDThh:mm:ss")
	}
	year, ok1 := num(0, 4)
	month, ok2 := num(5, 2)
	day, ok3 := num(8, 2)
	hour, ok4 := num(11, 2)
	minute, ok5 := num(14, 2)
	sec, ok6 := num(17, 2)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) {
		return bad("non-digit in date or time")
	}
	if year < 1 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month) ||
		hour > 23 || minute > 59 || sec > 59 {
		return bad("field out of range")
	}
	rest := s[19:]
	nanos := 0
	if strings.HasPrefix(rest, ".") {
		rest = rest[1:]
		n := 0
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		if n == 0 || n > 7 {
			return bad("the fraction must have 1 to 7 digits")
		}
		f, _ := num(len(s)-len(rest), n)
		for i := n; i < 9; i++ {
			f *= 10
		}
		nanos = f
		rest = rest[n:]
	}
	offset := 0
	switch {
	case rest == "" || rest == "Z":
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		i := len(s) - 6
		oh, okh := num(i+1, 2)
		om, okm := num(i+4, 2)
		if !okh || !okm || oh > 23 || om > 59 {
			return bad("bad zone offset")
		}
		offset = oh*3600 + om*60
		if rest[0] == '-' {
			offset = -offset
		}
	default:
		return bad("want Z or ±hh:mm after the time")
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, nanos, time.UTC)
	return t.Add(-time.Duration(offset) * time.Second), nil
}

func daysIn(year, month int) int {
	return time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// FormatDateTime writes t as the service writes an Edm.DateTime: in UTC
// with exactly seven fractional digits and a Z, e.g.
// 2020-01-02T03:04:05.1234567Z. Precision below 100 ns is truncated.
func FormatDateTime(t time.Time) string {
	return t.UTC().Truncate(100 * time.Nanosecond).Format("2006-01-02T15:04:05.0000000Z")
}

// FormatDouble writes f as the service writes an Edm.Double value in JSON:
// NaN, Infinity and -Infinity as those words (the caller puts them in a
// JSON string with an Edm.Double annotation); otherwise the shortest text
// that reads back as f, in the ECMAScript Number-to-string form (fixed
// notation for 1e-6 <= |f| < 1e21, else 1.5e-7 / 1e+21), and with ".0"
// appended to a whole number in fixed notation so that a client does not
// read it back as an Int32. This is what Azurite writes
// (src/table/entity/EdmDouble.ts, toFixed(1) for integers).
func FormatDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	a := math.Abs(f)
	if a == 0 || (a >= 1e-6 && a < 1e21) {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(f, 'e', -1, 64)
	// Go writes e-07 / e+21; ECMAScript writes e-7 / e+21.
	if i := strings.IndexByte(s, 'e'); i >= 0 && i+2 < len(s) {
		exp := strings.TrimLeft(s[i+2:], "0")
		s = s[:i+2] + exp
	}
	return s
}

// ParseGuid parses the 36-character text form of a GUID
// (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, hex digits of either case) and
// returns its canonical lower-case form, the form Value.S holds.
func ParseGuid(s string) (string, error) {
	if len(s) != 36 {
		return "", fmt.Errorf("cannot parse %q as Edm.Guid: want 36 characters xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx: %w", s, ErrSyntax)
	}
	b := []byte(s)
	for i, c := range b {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return "", fmt.Errorf("cannot parse %q as Edm.Guid: want '-' at position %d: %w", s, i, ErrSyntax)
			}
			continue
		}
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f':
		case c >= 'A' && c <= 'F':
			b[i] = c + ('a' - 'A')
		default:
			return "", fmt.Errorf("cannot parse %q as Edm.Guid: non-hex character at position %d: %w", s, i, ErrSyntax)
		}
	}
	return string(b), nil
}
