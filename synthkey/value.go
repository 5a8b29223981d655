package synthkey

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/parsecdb/parsec/internal/jsondoc"
)

// vkind is the type of a base value.
type vkind uint8

const (
	vMissing vkind = iota // no value at the path
	vString
	vNumber
	vTrue
	vFalse
	vNull
	vBad // a value that cannot be used (object, array, ...); value.str says what
)

// value is one base value, the value found at one base path. A string is
// held either as str or, when it is read straight out of a document without
// escapes, as raw (which aliases the document).
type value struct {
	kind vkind
	str  string
	raw  []byte
	num  float64
}

// appendText appends the value's text as concat uses it: a string's UTF-8
// bytes, a number in JavaScript form, or true, false, null. It must not be
// called for vMissing or vBad.
func (v *value) appendText(dst []byte) []byte {
	switch v.kind {
	case vString:
		if v.raw != nil {
			return append(dst, v.raw...)
		}
		return append(dst, v.str...)
	case vNumber:
		return appendNumberText(dst, v.num)
	case vTrue:
		return append(dst, "true"...)
	case vFalse:
		return append(dst, "false"...)
	case vNull:
		return append(dst, "null"...)
	}
	panic("synthkey: text of an unusable value")
}

// component returns the value as a key component of a plain-path level.
func (v *value) component() any {
	switch v.kind {
	case vString:
		if v.raw != nil {
			return string(v.raw)
		}
		return v.str
	case vNumber:
		return v.num
	case vTrue:
		return true
	case vFalse:
		return false
	case vNull:
		return nil
	}
	return Undefined
}

// appendNumberText appends f as JavaScript's Number.prototype.toString (and
// JSON.stringify) writes it: the shortest decimal digits that round trip,
// plain notation for 1e-6 <= |f| < 1e21 and exponent notation (1e+21,
// 1.5e-7) outside it, and 0 for both zeros. f must be finite.
func appendNumberText(dst []byte, f float64) []byte {
	if f == 0 {
		return append(dst, '0')
	}
	if abs := math.Abs(f); abs >= 1e-6 && abs < 1e21 {
		return strconv.AppendFloat(dst, f, 'f', -1, 64)
	}
	dst = strconv.AppendFloat(dst, f, 'e', -1, 64)
	// Go writes at least two exponent digits (1e-07); JavaScript as few as
	// needed. |f| >= 1e21 always has two or more, so only e-0d needs fixing.
	if n := len(dst); dst[n-4] == 'e' && dst[n-2] == '0' {
		dst[n-2] = dst[n-1]
		dst = dst[:n-1]
	}
	return dst
}

// fromRaw converts the raw JSON text of a value found in a document (as
// jsondoc.Scan returns it; nil when the path is absent) to a value.
func fromRaw(raw []byte) value {
	for len(raw) > 0 && isSpace(raw[0]) {
		raw = raw[1:]
	}
	for len(raw) > 0 && isSpace(raw[len(raw)-1]) {
		raw = raw[:len(raw)-1]
	}
	if len(raw) == 0 {
		return value{kind: vMissing}
	}
	switch raw[0] {
	case '"':
		if body, ok := plainString(raw); ok {
			return value{kind: vString, raw: body}
		}
		s, ok := jsondoc.UnquoteString(raw)
		if !ok {
			return value{kind: vBad, str: "invalid JSON"}
		}
		return value{kind: vString, str: s}
	case '{':
		return value{kind: vBad, str: "an object"}
	case '[':
		return value{kind: vBad, str: "an array"}
	case 't', 'f', 'n':
		switch string(raw) {
		case "true":
			return value{kind: vTrue}
		case "false":
			return value{kind: vFalse}
		case "null":
			return value{kind: vNull}
		}
		return value{kind: vBad, str: "invalid JSON"}
	}
	if !isJSONNumber(raw) {
		return value{kind: vBad, str: "invalid JSON"}
	}
	return numberValue(strconv.ParseFloat(string(raw), 64))
}

func numberValue(f float64, err error) value {
	if err != nil || math.IsInf(f, 0) {
		return value{kind: vBad, str: "a number outside the float64 range"}
	}
	return value{kind: vNumber, num: f}
}

// plainString returns the inside of the JSON string token raw when it has no
// escapes and is valid UTF-8, so its bytes are the string's value.
func plainString(raw []byte) ([]byte, bool) {
	if len(raw) < 2 || raw[len(raw)-1] != '"' {
		return nil, false
	}
	body := raw[1 : len(raw)-1]
	ascii := true
	for _, c := range body {
		if c == '"' || c == '\\' || c < 0x20 {
			return nil, false
		}
		if c >= utf8.RuneSelf {
			ascii = false
		}
	}
	if !ascii && !utf8.Valid(body) {
		return nil, false
	}
	return body, true
}

// isJSONNumber reports whether b is a number in JSON syntax:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func isJSONNumber(b []byte) bool {
	i, n := 0, len(b)
	digits := func() bool {
		start := i
		for i < n && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		return i > start
	}
	if i < n && b[i] == '-' {
		i++
	}
	if i < n && b[i] == '0' {
		i++
	} else if !digits() {
		return false
	}
	if i < n && b[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < n && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < n && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	return i == n
}

// fromAny converts a Go value (a base value, or a value of a decoded JSON
// document) to a value.
func fromAny(x any) value {
	switch v := x.(type) {
	case string:
		return value{kind: vString, str: v}
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return value{kind: vBad, str: "a number JSON cannot express (" + strconv.FormatFloat(v, 'g', -1, 64) + ")"}
		}
		return value{kind: vNumber, num: v}
	case int:
		return value{kind: vNumber, num: float64(v)}
	case int64:
		return value{kind: vNumber, num: float64(v)}
	case json.Number:
		if !isJSONNumber([]byte(v)) {
			return value{kind: vBad, str: "the invalid json.Number " + strconv.Quote(string(v))}
		}
		return numberValue(strconv.ParseFloat(string(v), 64))
	case bool:
		if v {
			return value{kind: vTrue}
		}
		return value{kind: vFalse}
	case nil:
		return value{kind: vNull}
	case undefinedT:
		return value{kind: vMissing}
	case map[string]any:
		return value{kind: vBad, str: "an object"}
	case []any:
		return value{kind: vBad, str: "an array"}
	}
	return value{kind: vBad, str: fmt.Sprintf("a value of the unsupported Go type %T", x)}
}
