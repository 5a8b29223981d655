package eval

import (
	"math"
	"slices"
	"strings"
)

// Kind is the type of a Value. The order of the constants is the order of
// the types in ORDER BY (see Compare).
type Kind uint8

// The kinds of values: JSON's six types plus Cosmos DB's undefined, the
// value of a missing property. Undefined is the zero Kind.
const (
	Undefined Kind = iota
	Null
	Bool
	Number
	String
	Array
	Object
)

var kindNames = [...]string{
	Undefined: "undefined", Null: "null", Bool: "boolean", Number: "number",
	String: "string", Array: "array", Object: "object",
}

// String returns the lowercase name of the kind ("boolean", "number", ...).
func (k Kind) String() string { return kindNames[k] }

// Value is an immutable JSON value or undefined. The zero Value is
// undefined.
//
// Layout (56 bytes on 64-bit machines):
//
//	kind   Kind     which of the seven types
//	exact  bool     Number only: n holds an int64, not float64 bits
//	n      uint64   Bool: 0 or 1; Number: int64 or float64 bits
//	s      string   String: the text
//	a      []Value  Array: the elements; Object: key0, val0, key1, val1, ...
//	                with each key a String value, in document order
//
// Arrays and objects never contain undefined (the constructors drop it, as
// Cosmos DB's array and object constructors do). Values share their
// backing arrays freely: nothing may modify a Value's slice after
// construction, so a Value is safe for concurrent use.
//
// Numbers are float64, except that an integer that fits an int64 exactly
// (a JSON or query literal without fraction or exponent, or the result of
// integer arithmetic that did not overflow) is kept as an int64, so that
// 64-bit ids and IS_INTEGER(9223372036854775807) are exact. The two forms
// are one type: they compare, hash and print by mathematical value.
type Value struct {
	kind  Kind
	exact bool
	n     uint64
	s     string
	a     []Value
}

// Member is one property of an object, for building objects.
type Member struct {
	Key   string
	Value Value
}

// NullValue returns null.
func NullValue() Value { return Value{kind: Null} }

// BoolValue returns true or false.
func BoolValue(b bool) Value {
	v := Value{kind: Bool}
	if b {
		v.n = 1
	}
	return v
}

// NumberValue returns the number f (which may be NaN or infinite: such
// values arise from arithmetic, e.g. 8.9/0.0, and print as null in JSON).
func NumberValue(f float64) Value { return Value{kind: Number, n: math.Float64bits(f)} }

// IntValue returns the integer i, kept exactly.
func IntValue(i int64) Value { return Value{kind: Number, exact: true, n: uint64(i)} }

// StringValue returns the string s.
func StringValue(s string) Value { return Value{kind: String, s: s} }

// ArrayValue returns an array of the defined values among elems, in order.
// It keeps elems as its backing array when nothing is dropped; the caller
// must not modify elems afterwards.
func ArrayValue(elems []Value) Value {
	for i := range elems {
		if elems[i].kind == Undefined {
			return Value{kind: Array, a: defined(elems)}
		}
	}
	if elems == nil {
		elems = []Value{}
	}
	return Value{kind: Array, a: elems}
}

func defined(elems []Value) []Value {
	out := make([]Value, 0, len(elems))
	for _, e := range elems {
		if e.kind != Undefined {
			out = append(out, e)
		}
	}
	return out
}

// ObjectValue returns an object with the given members in order, dropping
// those whose value is undefined. A repeated key keeps its first position
// and its last value.
func ObjectValue(members []Member) Value {
	a := make([]Value, 0, 2*len(members))
	for _, m := range members {
		a = appendMember(a, m.Key, m.Value)
	}
	return Value{kind: Object, a: a}
}

// appendMember appends key: val to the alternating member slice a, or
// replaces the value of an existing key. Undefined values are dropped.
func appendMember(a []Value, key string, val Value) []Value {
	if val.kind == Undefined {
		return a
	}
	for i := 0; i < len(a); i += 2 {
		if a[i].s == key {
			a[i+1] = val
			return a
		}
	}
	return append(a, StringValue(key), val)
}

// Kind returns the type of v.
func (v Value) Kind() Kind { return v.kind }

// IsDefined reports whether v is not undefined.
func (v Value) IsDefined() bool { return v.kind != Undefined }

// AsBool returns the value of a Bool (false for other kinds).
func (v Value) AsBool() bool { return v.kind == Bool && v.n != 0 }

// isTrue reports whether v is the boolean true.
func (v Value) isTrue() bool { return v.kind == Bool && v.n != 0 }

// AsFloat returns the value of a Number as a float64 (0 for other kinds).
func (v Value) AsFloat() float64 {
	if v.kind != Number {
		return 0
	}
	if v.exact {
		return float64(int64(v.n))
	}
	return math.Float64frombits(v.n)
}

// AsInt returns the value of a Number as an int64 and whether it is an
// integer in int64 range (the test of IS_INTEGER).
func (v Value) AsInt() (int64, bool) {
	if v.kind != Number {
		return 0, false
	}
	if v.exact {
		return int64(v.n), true
	}
	f := math.Float64frombits(v.n)
	if f != math.Trunc(f) || f < -(1<<63) || f >= 1<<63 {
		return 0, false
	}
	return int64(f), true
}

// IsExactInt reports whether v is a Number held as an int64.
func (v Value) IsExactInt() bool { return v.kind == Number && v.exact }

// AsString returns the text of a String ("" for other kinds).
func (v Value) AsString() string { return v.s }

// Len returns the number of elements of an Array or members of an Object
// (0 for other kinds).
func (v Value) Len() int {
	switch v.kind {
	case Array:
		return len(v.a)
	case Object:
		return len(v.a) / 2
	}
	return 0
}

// Elem returns element i of an Array. It panics if v is not an array or i
// is out of range.
func (v Value) Elem(i int) Value {
	if v.kind != Array {
		panic("BUG: eval: Elem of a " + v.kind.String())
	}
	return v.a[i]
}

// Elems returns the elements of an Array (nil for other kinds). The slice
// is shared: the caller must not modify it.
func (v Value) Elems() []Value {
	if v.kind != Array {
		return nil
	}
	return v.a
}

// Member returns member i of an Object, in document order. It panics if v
// is not an object or i is out of range.
func (v Value) Member(i int) (string, Value) {
	if v.kind != Object {
		panic("BUG: eval: Member of a " + v.kind.String())
	}
	return v.a[2*i].s, v.a[2*i+1]
}

// Get returns the value of property key of an Object and whether it is
// present. For other kinds it returns undefined and false.
func (v Value) Get(key string) (Value, bool) {
	if v.kind != Object {
		return Value{}, false
	}
	for i := 0; i < len(v.a); i += 2 {
		if v.a[i].s == key {
			return v.a[i+1], true
		}
	}
	return Value{}, false
}

// Property returns the value of property key of an Object, or undefined.
func (v Value) Property(key string) Value {
	p, _ := v.Get(key)
	return p
}

// String returns v as compact JSON, except that undefined prints as
// "undefined" and non-finite numbers as NaN, Infinity and -Infinity. It is
// the form the golden tests use.
func (v Value) String() string {
	if v.kind == Undefined {
		return "undefined"
	}
	return string(v.appendJSON(nil, true))
}

// Compare orders a and b the way ORDER BY sorts mixed-type values and
// returns -1, 0 or +1. It is a total order:
//
//	undefined < null < false < true < numbers < strings < arrays < objects
//
// Numbers compare by mathematical value (an int64 and a float64 exactly,
// -0 equal to 0, NaN below every other number and equal to itself).
// Strings compare by bytes, which for UTF-8 is code point order. Arrays
// compare element by element, then by length. Objects compare as their
// members sorted by key: key, then value, pair by pair, then by count, so
// that member order does not matter. Compare(a, b) == 0 exactly when
// Equal(a, b).
//
// The type order is that of the Cosmos DB SDKs' ItemComparer
// (azure-cosmos-dotnet-v3, Query/Core/ItemComparer.cs). Cosmos DB orders
// two arrays or two objects by an opaque hash; any consistent order is as
// good, and this one is deterministic and readable.
func Compare(a, b Value) int {
	if a.kind != b.kind {
		return cmpInt(int(a.kind), int(b.kind))
	}
	switch a.kind {
	case Undefined, Null:
		return 0
	case Bool:
		return cmpInt(int(a.n), int(b.n))
	case Number:
		return compareNumbers(a, b)
	case String:
		return strings.Compare(a.s, b.s)
	case Array:
		for i := 0; i < len(a.a) && i < len(b.a); i++ {
			if c := Compare(a.a[i], b.a[i]); c != 0 {
				return c
			}
		}
		return cmpInt(len(a.a), len(b.a))
	case Object:
		ka, kb := sortedMembers(a), sortedMembers(b)
		for i := 0; i < len(ka) && i < len(kb); i++ {
			if c := strings.Compare(a.a[ka[i]].s, b.a[kb[i]].s); c != 0 {
				return c
			}
			if c := Compare(a.a[ka[i]+1], b.a[kb[i]+1]); c != 0 {
				return c
			}
		}
		return cmpInt(len(ka), len(kb))
	}
	panic("BUG: eval: bad kind")
}

// sortedMembers returns the indexes in v.a of the keys of object v, sorted
// by key.
func sortedMembers(v Value) []int {
	idx := make([]int, 0, len(v.a)/2)
	for i := 0; i < len(v.a); i += 2 {
		idx = append(idx, i)
	}
	slices.SortFunc(idx, func(i, j int) int { return strings.Compare(v.a[i].s, v.a[j].s) })
	return idx
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// compareNumbers compares two Numbers by mathematical value; NaN sorts
// below everything and equals NaN.
func compareNumbers(a, b Value) int {
	if a.exact && b.exact {
		x, y := int64(a.n), int64(b.n)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	}
	if a.exact {
		return compareIntFloat(int64(a.n), math.Float64frombits(b.n))
	}
	if b.exact {
		return -compareIntFloat(int64(b.n), math.Float64frombits(a.n))
	}
	return compareFloats(math.Float64frombits(a.n), math.Float64frombits(b.n))
}

func compareFloats(x, y float64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	case x == y:
		return 0
	}
	// At least one is NaN.
	xn, yn := math.IsNaN(x), math.IsNaN(y)
	switch {
	case xn && yn:
		return 0
	case xn:
		return -1
	}
	return 1
}

// compareIntFloat compares i and f exactly. Rounding i to float64 is
// monotonic, so a strict inequality between float64(i) and f holds for i
// itself; on a tie f is an integer and can be compared as one.
func compareIntFloat(i int64, f float64) int {
	if math.IsNaN(f) {
		return 1
	}
	fi := float64(i)
	switch {
	case fi < f:
		return -1
	case fi > f:
		return 1
	}
	if f >= 1<<63 { // float64(MaxInt64) rounds up to 2^63
		return -1
	}
	j := int64(f)
	switch {
	case i < j:
		return -1
	case i > j:
		return 1
	}
	return 0
}

// Equal reports whether a and b are the same value in the sense of Compare:
// same kind, numbers equal by value (NaN equal to NaN), arrays equal
// element-wise, objects equal as sets of members. It is the equality of
// DISTINCT, GROUP BY, SetUnion and ARRAY_CONTAINS.
func Equal(a, b Value) bool {
	if a.kind != b.kind {
		return false
	}
	switch a.kind {
	case Undefined, Null:
		return true
	case Bool:
		return a.n == b.n
	case Number:
		return compareNumbers(a, b) == 0
	case String:
		return a.s == b.s
	case Array:
		if len(a.a) != len(b.a) {
			return false
		}
		for i := range a.a {
			if !Equal(a.a[i], b.a[i]) {
				return false
			}
		}
		return true
	case Object:
		if len(a.a) != len(b.a) {
			return false
		}
		for i := 0; i < len(a.a); i += 2 {
			bv, ok := b.Get(a.a[i].s)
			if !ok || !Equal(a.a[i+1], bv) {
				return false
			}
		}
		return true
	}
	panic("BUG: eval: bad kind")
}

// Hash returns a 64-bit hash of v consistent with Equal: equal values have
// equal hashes (ints and floats of the same value, objects whatever their
// member order). It is deterministic across processes, for grouping and
// DISTINCT.
func Hash(v Value) uint64 {
	h := uint64(fnvOffset)
	return hashInto(h, v)
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func mix(h, x uint64) uint64 {
	for range 8 {
		h ^= x & 0xff
		h *= fnvPrime
		x >>= 8
	}
	return h
}

func hashInto(h uint64, v Value) uint64 {
	h = mix(h, uint64(v.kind))
	switch v.kind {
	case Bool:
		h = mix(h, v.n)
	case Number:
		// An exact int hashes as its nearest float64: equal numbers hash
		// alike, and distinct ints above 2^53 may collide, which is allowed.
		f := v.AsFloat()
		switch {
		case math.IsNaN(f):
			f = math.NaN()
		case f == 0:
			f = 0 // fold -0
		}
		h = mix(h, math.Float64bits(f))
	case String:
		for i := 0; i < len(v.s); i++ {
			h ^= uint64(v.s[i])
			h *= fnvPrime
		}
		h = mix(h, uint64(len(v.s)))
	case Array:
		for _, e := range v.a {
			h = hashInto(h, e)
		}
		h = mix(h, uint64(len(v.a)))
	case Object:
		// Members combine commutatively so that order does not matter.
		var sum uint64
		for i := 0; i < len(v.a); i += 2 {
			m := hashInto(hashInto(fnvOffset, v.a[i]), v.a[i+1])
			sum += m * 0x9e3779b97f4a7c15
		}
		h = mix(h, sum)
		h = mix(h, uint64(len(v.a)/2))
	}
	return h
}
