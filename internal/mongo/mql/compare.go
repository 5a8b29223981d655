package mql

import (
	"bytes"
	"math"
	"math/big"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Canonical type brackets, in MongoDB's comparison order. Values of different brackets compare by
// bracket; values within one bracket compare by value.
const (
	bracketMinKey = iota
	bracketUndefined
	bracketNull
	bracketNumber
	bracketString
	bracketObject
	bracketArray
	bracketBinary
	bracketObjectID
	bracketBool
	bracketDate
	bracketTimestamp
	bracketRegex
	bracketDBPointer
	bracketJavaScript
	bracketCodeWithScope
	bracketMaxKey
	bracketUnknown
)

// bracket returns the comparison bracket of a value.
func bracket(v any) int {
	switch v.(type) {
	case bson.MinKey:
		return bracketMinKey
	case bson.Undefined:
		return bracketUndefined
	case nil, bson.Null:
		return bracketNull
	case int32, int64, float64, bson.Decimal128, int:
		return bracketNumber
	case string, bson.Symbol:
		return bracketString
	case bson.D:
		return bracketObject
	case bson.A:
		return bracketArray
	case bson.Binary:
		return bracketBinary
	case bson.ObjectID:
		return bracketObjectID
	case bool:
		return bracketBool
	case bson.DateTime:
		return bracketDate
	case bson.Timestamp:
		return bracketTimestamp
	case bson.Regex:
		return bracketRegex
	case bson.DBPointer:
		return bracketDBPointer
	case bson.JavaScript:
		return bracketJavaScript
	case bson.CodeWithScope:
		return bracketCodeWithScope
	case bson.MaxKey:
		return bracketMaxKey
	}
	return bracketUnknown
}

func cmpInt[T int | int64 | uint32 | uint64 | byte](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Compare compares two BSON values in MongoDB's sort order and returns -1, 0 or +1.
//
// Values of different types order by type bracket: MinKey < Undefined < null < numbers < Symbol/string <
// object < array < binary < ObjectId < bool < date < timestamp < regex < DBPointer < JavaScript <
// CodeWithScope < MaxKey. Numbers of every type (int32, int64, float64, Decimal128) compare by exact
// value; NaN sorts below every other number and equals itself. Strings compare by bytes. Documents
// compare field by field (type bracket, then name, then value), arrays element by element, a prefix
// sorting first.
func Compare(a, b any) int {
	ba, bb := bracket(a), bracket(b)
	if ba != bb {
		return cmpInt(ba, bb)
	}
	switch ba {
	case bracketNumber:
		return compareNumbers(a, b)
	case bracketString:
		return strings.Compare(stringValue(a), stringValue(b))
	case bracketObject:
		return compareDocs(a.(bson.D), b.(bson.D))
	case bracketArray:
		x, y := a.(bson.A), b.(bson.A)
		for i := 0; i < len(x) && i < len(y); i++ {
			if c := Compare(x[i], y[i]); c != 0 {
				return c
			}
		}
		return cmpInt(len(x), len(y))
	case bracketBinary:
		x, y := a.(bson.Binary), b.(bson.Binary)
		if c := cmpInt(len(x.Data), len(y.Data)); c != 0 {
			return c
		}
		if c := cmpInt(x.Subtype, y.Subtype); c != 0 {
			return c
		}
		return bytes.Compare(x.Data, y.Data)
	case bracketObjectID:
		x, y := a.(bson.ObjectID), b.(bson.ObjectID)
		return bytes.Compare(x[:], y[:])
	case bracketBool:
		x, y := a.(bool), b.(bool)
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	case bracketDate:
		return cmpInt(int64(a.(bson.DateTime)), int64(b.(bson.DateTime)))
	case bracketTimestamp:
		return a.(bson.Timestamp).Compare(b.(bson.Timestamp))
	case bracketRegex:
		x, y := a.(bson.Regex), b.(bson.Regex)
		if c := strings.Compare(x.Pattern, y.Pattern); c != 0 {
			return c
		}
		return strings.Compare(x.Options, y.Options)
	case bracketDBPointer:
		x, y := a.(bson.DBPointer), b.(bson.DBPointer)
		if c := cmpInt(len(x.DB), len(y.DB)); c != 0 {
			return c
		}
		if c := strings.Compare(x.DB, y.DB); c != 0 {
			return c
		}
		return bytes.Compare(x.Pointer[:], y.Pointer[:])
	case bracketJavaScript:
		return strings.Compare(string(a.(bson.JavaScript)), string(b.(bson.JavaScript)))
	case bracketCodeWithScope:
		x, y := a.(bson.CodeWithScope), b.(bson.CodeWithScope)
		if c := strings.Compare(string(x.Code), string(y.Code)); c != 0 {
			return c
		}
		return Compare(x.Scope, y.Scope)
	}
	// MinKey, Undefined, null, MaxKey and unknown Go types: one value per bracket.
	return 0
}

func compareDocs(x, y bson.D) int {
	for i := 0; i < len(x) && i < len(y); i++ {
		if c := cmpInt(bracket(x[i].Value), bracket(y[i].Value)); c != 0 {
			return c
		}
		if c := strings.Compare(x[i].Key, y[i].Key); c != 0 {
			return c
		}
		if c := Compare(x[i].Value, y[i].Value); c != 0 {
			return c
		}
	}
	return cmpInt(len(x), len(y))
}

func stringValue(v any) string {
	switch s := v.(type) {
	case string:
		return s
	case bson.Symbol:
		return string(s)
	}
	return ""
}

// isNumber reports whether v is a BSON number.
func isNumber(v any) bool {
	return bracket(v) == bracketNumber
}

// isNaN reports whether v is a float64 or Decimal128 NaN.
func isNaN(v any) bool {
	switch x := v.(type) {
	case float64:
		return math.IsNaN(x)
	case bson.Decimal128:
		return x.IsNaN()
	}
	return false
}

// compareNumbers compares two numbers of any BSON numeric type by exact value, NaN lowest.
func compareNumbers(a, b any) int {
	na, nb := isNaN(a), isNaN(b)
	switch {
	case na && nb:
		return 0
	case na:
		return -1
	case nb:
		return 1
	}
	// Fast paths without big arithmetic.
	ia, aInt := intValue(a)
	ib, bInt := intValue(b)
	if aInt && bInt {
		return cmpInt(ia, ib)
	}
	fa, aF := a.(float64)
	fb, bF := b.(float64)
	switch {
	case aF && bF:
		return cmpFloat(fa, fb)
	case aF && bInt:
		return compareFloatInt(fa, ib)
	case aInt && bF:
		return -compareFloatInt(fb, ia)
	}
	// At least one Decimal128: infinities first, then exact rationals.
	sa, sb := infSign(a), infSign(b)
	if sa != 0 || sb != 0 {
		return cmpInt(sa, sb)
	}
	return exactRat(a).Cmp(exactRat(b))
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// compareFloatInt compares a non-NaN float64 with an int64 exactly.
func compareFloatInt(f float64, i int64) int {
	if f >= 0x1p63 {
		return 1
	}
	if f < -0x1p63 {
		return -1
	}
	t := math.Trunc(f)
	ti := int64(t)
	if c := cmpInt(ti, i); c != 0 {
		return c
	}
	return cmpFloat(f, t) // the fraction decides
}

func intValue(v any) (int64, bool) {
	switch x := v.(type) {
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case int:
		return int64(x), true
	}
	return 0, false
}

// infSign returns +1/-1 for positive/negative infinity and 0 otherwise.
func infSign(v any) int {
	switch x := v.(type) {
	case float64:
		if math.IsInf(x, 1) {
			return 1
		}
		if math.IsInf(x, -1) {
			return -1
		}
	case bson.Decimal128:
		return x.IsInf()
	}
	return 0
}

// exactRat returns the exact value of a finite, non-NaN number.
func exactRat(v any) *big.Rat {
	switch x := v.(type) {
	case int32:
		return new(big.Rat).SetInt64(int64(x))
	case int64:
		return new(big.Rat).SetInt64(x)
	case int:
		return new(big.Rat).SetInt64(int64(x))
	case float64:
		return new(big.Rat).SetFloat64(x)
	case bson.Decimal128:
		bi, exp, err := x.BigInt()
		if err != nil {
			return new(big.Rat)
		}
		r := new(big.Rat).SetInt(bi)
		if exp != 0 {
			p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(absInt(exp))), nil)
			if exp > 0 {
				r.Mul(r, new(big.Rat).SetInt(p))
			} else {
				r.Quo(r, new(big.Rat).SetInt(p))
			}
		}
		return r
	}
	return new(big.Rat)
}

func absInt(i int) int {
	if i < 0 {
		return -i
	}
	return i
}

// equalValues reports whether two values are equal under MongoDB query equality (Compare == 0).
func equalValues(a, b any) bool {
	return Compare(a, b) == 0
}

// identical reports whether two values are the same BSON value including their types (1 and 1.0 are
// not identical); update uses it to tell whether a document changed.
func identical(a, b any) bool {
	switch x := a.(type) {
	case bson.D:
		y, ok := b.(bson.D)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if x[i].Key != y[i].Key || !identical(x[i].Value, y[i].Value) {
				return false
			}
		}
		return true
	case bson.A:
		y, ok := b.(bson.A)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !identical(x[i], y[i]) {
				return false
			}
		}
		return true
	case float64:
		y, ok := b.(float64)
		return ok && math.Float64bits(x) == math.Float64bits(y)
	case bson.Binary:
		y, ok := b.(bson.Binary)
		return ok && x.Equal(y)
	case bson.Decimal128:
		y, ok := b.(bson.Decimal128)
		return ok && x == y // 1.0 and 1.00 are different values to store
	case bson.CodeWithScope:
		y, ok := b.(bson.CodeWithScope)
		return ok && x.Code == y.Code && identical(x.Scope, y.Scope)
	}
	if bracket(a) == bracketUnknown || bracket(b) == bracketUnknown {
		return false
	}
	return typeName(a) == typeName(b) && Compare(a, b) == 0
}

// Lookup returns the values the dotted path reaches in doc, descending into arrays the way MongoDB
// query paths do: "a.b" on {a: [{b: 1}, {b: 2}]} yields 1 and 2, and a numeric component also indexes
// an array ("a.0"). A missing path yields no values. Arrays reached at the end of the path are returned
// as arrays (not flattened).
func Lookup(doc bson.D, path string) []any {
	var out []any
	walkPath(doc, strings.Split(path, "."), func(v any, missing bool) {
		if !missing {
			out = append(out, v)
		}
	})
	return out
}

// walkPath calls fn for every branch of the path in cur: with the value reached, or with missing=true
// where a branch ends before the path does (a missing field, a scalar in the way, an array element that
// is not a document).
func walkPath(cur any, parts []string, fn func(v any, missing bool)) {
	if len(parts) == 0 {
		fn(cur, false)
		return
	}
	switch x := cur.(type) {
	case bson.D:
		for _, e := range x {
			if e.Key == parts[0] {
				walkPath(e.Value, parts[1:], fn)
				return
			}
		}
		fn(nil, true)
	case bson.A:
		if idx, ok := arrayIndex(parts[0]); ok {
			if idx < len(x) {
				walkPath(x[idx], parts[1:], fn)
			} else {
				fn(nil, true)
			}
			return
		}
		if len(x) == 0 {
			fn(nil, true)
			return
		}
		for _, el := range x {
			if d, ok := el.(bson.D); ok {
				walkPath(d, parts, fn)
			} else {
				fn(nil, true)
			}
		}
	default:
		fn(nil, true)
	}
}

// arrayIndex parses a path component as a non-negative array index.
func arrayIndex(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	if len(s) > 1 && s[0] == '0' {
		return 0, false
	}
	n, _ := strconv.Atoi(s)
	return n, true
}

// TypeName returns the MongoDB $type alias of a value ("int", "object"),
// the name mongod's messages use.
func TypeName(v any) string { return typeName(v) }

// typeName returns the MongoDB $type alias of a value.
func typeName(v any) string {
	switch v.(type) {
	case float64:
		return "double"
	case string:
		return "string"
	case bson.D:
		return "object"
	case bson.A:
		return "array"
	case bson.Binary:
		return "binData"
	case bson.Undefined:
		return "undefined"
	case bson.ObjectID:
		return "objectId"
	case bool:
		return "bool"
	case bson.DateTime:
		return "date"
	case nil, bson.Null:
		return "null"
	case bson.Regex:
		return "regex"
	case bson.DBPointer:
		return "dbPointer"
	case bson.JavaScript:
		return "javascript"
	case bson.Symbol:
		return "symbol"
	case bson.CodeWithScope:
		return "javascriptWithScope"
	case int32:
		return "int"
	case bson.Timestamp:
		return "timestamp"
	case int64, int:
		return "long"
	case bson.Decimal128:
		return "decimal"
	case bson.MinKey:
		return "minKey"
	case bson.MaxKey:
		return "maxKey"
	}
	return "unknown"
}

// typeNumbers maps $type aliases to BSON type numbers.
var typeNumbers = map[string]int32{
	"double": 1, "string": 2, "object": 3, "array": 4, "binData": 5, "undefined": 6, "objectId": 7,
	"bool": 8, "date": 9, "null": 10, "regex": 11, "dbPointer": 12, "javascript": 13, "symbol": 14,
	"javascriptWithScope": 15, "int": 16, "timestamp": 17, "long": 18, "decimal": 19, "minKey": -1,
	"maxKey": 127,
}
