package eval

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// valueGen generates random values biased toward the edge cases of Compare:
// every kind, numbers at the int64/float64 boundaries, NaN, infinities,
// -0, equal ints and floats, short strings from a small alphabet with
// multi-byte characters, nested arrays and objects with shuffled members.
type valueGen struct{ r *rand.Rand }

var edgeNumbers = []Value{
	IntValue(0), NumberValue(0), NumberValue(math.Copysign(0, -1)), IntValue(1), NumberValue(1), NumberValue(1.5),
	IntValue(-1), NumberValue(-0.5), IntValue(1 << 53), IntValue(1<<53 + 1), NumberValue(1 << 53),
	NumberValue(1<<53 + 2), IntValue(math.MaxInt64), IntValue(math.MaxInt64 - 1), NumberValue(1 << 63),
	IntValue(math.MinInt64), NumberValue(-(1 << 63)), NumberValue(math.NaN()), NumberValue(math.Inf(1)),
	NumberValue(math.Inf(-1)), NumberValue(math.MaxFloat64), NumberValue(math.SmallestNonzeroFloat64),
}

func (g *valueGen) value(depth int) Value {
	k := g.r.IntN(7)
	if depth <= 0 && k >= int(Array) {
		k = g.r.IntN(int(Array))
	}
	switch Kind(k) {
	case Undefined:
		return Value{}
	case Null:
		return NullValue()
	case Bool:
		return BoolValue(g.r.IntN(2) == 0)
	case Number:
		switch g.r.IntN(3) {
		case 0:
			return edgeNumbers[g.r.IntN(len(edgeNumbers))]
		case 1:
			return IntValue(g.r.Int64N(7) - 3)
		}
		return NumberValue(float64(g.r.IntN(13)-6) / 4)
	case String:
		return StringValue(g.str())
	case Array:
		n := g.r.IntN(4)
		elems := make([]Value, 0, n)
		for range n {
			elems = append(elems, g.value(depth-1))
		}
		return ArrayValue(elems)
	}
	n := g.r.IntN(4)
	ms := make([]Member, 0, n)
	for range n {
		ms = append(ms, Member{g.str(), g.value(depth - 1)})
	}
	return ObjectValue(ms)
}

func (g *valueGen) str() string {
	const alphabet = "ab\u00e9\U0001F600"
	rs := []rune(alphabet)
	n := g.r.IntN(3)
	out := make([]rune, n)
	for i := range out {
		out[i] = rs[g.r.IntN(len(rs))]
	}
	return string(out)
}

// shuffled returns v with the members of every object in a random order.
func (g *valueGen) shuffled(v Value) Value {
	switch v.Kind() {
	case Array:
		elems := make([]Value, v.Len())
		for i := range elems {
			elems[i] = g.shuffled(v.Elem(i))
		}
		return ArrayValue(elems)
	case Object:
		ms := make([]Member, v.Len())
		for i := range ms {
			k, x := v.Member(i)
			ms[i] = Member{k, g.shuffled(x)}
		}
		g.r.Shuffle(len(ms), func(i, j int) { ms[i], ms[j] = ms[j], ms[i] })
		return ObjectValue(ms)
	}
	return v
}

func sgn(c int) int {
	switch {
	case c < 0:
		return -1
	case c > 0:
		return 1
	}
	return 0
}

// TestCompareTotalOrder checks on random values that Compare is a total
// order (reflexive, antisymmetric, transitive), that it agrees with Equal,
// and that equal values hash alike, member order of objects included.
func TestCompareTotalOrder(t *testing.T) {
	g := &valueGen{rand.New(rand.NewPCG(1, 2))}
	vals := make([]Value, 400)
	for i := range vals {
		vals[i] = g.value(2)
		if i%5 == 0 && i > 0 {
			vals[i] = g.shuffled(vals[i-1]) // equal to its neighbour
		}
	}
	for _, a := range vals {
		if Compare(a, a) != 0 || !Equal(a, a) {
			t.Fatalf("%s is not equal to itself", a)
		}
		for _, b := range vals {
			ab, ba := Compare(a, b), Compare(b, a)
			if ab != -ba || sgn(ab) != ab {
				t.Fatalf("Compare(%s, %s) = %d but Compare(%s, %s) = %d", a, b, ab, b, a, ba)
			}
			if (ab == 0) != Equal(a, b) {
				t.Fatalf("Compare(%s, %s) = %d but Equal = %v", a, b, ab, Equal(a, b))
			}
			if ab == 0 && Hash(a) != Hash(b) {
				t.Fatalf("%s and %s are equal with different hashes", a, b)
			}
		}
	}
	// Transitivity on all triples of a smaller sample.
	small := vals[:120]
	for _, a := range small {
		for _, b := range small {
			if Compare(a, b) > 0 {
				continue
			}
			for _, c := range small {
				if Compare(b, c) <= 0 && Compare(a, c) > 0 {
					t.Fatalf("%s <= %s <= %s but %s > %s", a, b, c, a, c)
				}
			}
		}
	}
	// A sort must leave every pair in order.
	slices.SortFunc(vals, Compare)
	for i := 1; i < len(vals); i++ {
		if Compare(vals[i-1], vals[i]) > 0 {
			t.Fatalf("sorted out of order: %s before %s", vals[i-1], vals[i])
		}
	}
}

// TestCompareTypeOrder pins the cross-type order of ORDER BY
// (azure-cosmos-dotnet-v3 ItemComparer: undefined, null, boolean, number,
// string, array, object) and the order within numbers.
func TestCompareTypeOrder(t *testing.T) {
	ordered := []Value{
		{},
		NullValue(),
		BoolValue(false), BoolValue(true),
		NumberValue(math.NaN()), NumberValue(math.Inf(-1)), IntValue(math.MinInt64), IntValue(-1),
		NumberValue(-0.5), IntValue(0), NumberValue(0.5), IntValue(1 << 53), IntValue(1<<53 + 1),
		NumberValue(1<<53 + 2), IntValue(math.MaxInt64), NumberValue(1 << 63), NumberValue(math.Inf(1)),
		StringValue(""), StringValue("B"), StringValue("a"), StringValue("ab"), StringValue("é"),
		ArrayValue(nil), ArrayValue([]Value{IntValue(1)}), ArrayValue([]Value{IntValue(1), IntValue(0)}),
		ArrayValue([]Value{IntValue(2)}),
		ObjectValue(nil), ObjectValue([]Member{{"a", IntValue(1)}}), ObjectValue([]Member{{"a", IntValue(2)}}),
		ObjectValue([]Member{{"b", IntValue(0)}}),
	}
	for i := range ordered {
		for j := range ordered {
			if got, want := Compare(ordered[i], ordered[j]), cmpInt(i, j); got != want {
				t.Errorf("Compare(%s, %s) = %d, want %d", ordered[i], ordered[j], got, want)
			}
		}
	}
	// Equal values of different representation.
	for _, p := range [][2]Value{
		{IntValue(1), NumberValue(1)},
		{NumberValue(0), NumberValue(math.Copysign(0, -1))},
		{NumberValue(math.NaN()), NumberValue(-math.NaN())},
		{IntValue(math.MinInt64), NumberValue(-(1 << 63))},
		{ObjectValue([]Member{{"a", IntValue(1)}, {"b", NullValue()}}), ObjectValue([]Member{{"b", NullValue()}, {"a", NumberValue(1)}})},
	} {
		if !Equal(p[0], p[1]) || Compare(p[0], p[1]) != 0 || Hash(p[0]) != Hash(p[1]) {
			t.Errorf("%s and %s should be equal with equal hashes", p[0], p[1])
		}
	}
}

func TestConstructorsDropUndefined(t *testing.T) {
	a := ArrayValue([]Value{IntValue(1), {}, IntValue(2)})
	if a.String() != "[1,2]" {
		t.Errorf("ArrayValue kept undefined: %s", a)
	}
	o := ObjectValue([]Member{{"a", Value{}}, {"b", IntValue(1)}, {"b", IntValue(2)}, {"c", NullValue()}})
	if o.String() != `{"b":2,"c":null}` {
		t.Errorf("ObjectValue: %s", o)
	}
	if ArrayValue(nil).String() != "[]" || ObjectValue(nil).String() != "{}" {
		t.Errorf("empty constructors")
	}
}

func TestAccessors(t *testing.T) {
	v, err := FromJSON([]byte(`{"i": 9223372036854775807, "f": 1.5, "s": "x", "b": true, "a": [1, "2"], "n": null}`))
	if err != nil {
		t.Fatal(err)
	}
	if i, ok := v.Property("i").AsInt(); !ok || i != math.MaxInt64 || !v.Property("i").IsExactInt() {
		t.Errorf("i = %d, %v", i, ok)
	}
	if f := v.Property("f"); f.AsFloat() != 1.5 || f.IsExactInt() {
		t.Errorf("f = %s", f)
	}
	if _, ok := v.Property("f").AsInt(); ok {
		t.Errorf("1.5 is not an integer")
	}
	if v.Property("s").AsString() != "x" || !v.Property("b").AsBool() || v.Property("n").Kind() != Null {
		t.Errorf("accessors")
	}
	if a := v.Property("a"); a.Len() != 2 || a.Elem(1).AsString() != "2" || len(a.Elems()) != 2 {
		t.Errorf("array accessors")
	}
	if k, x := v.Member(0); k != "i" || x.Kind() != Number {
		t.Errorf("Member(0) = %s, %s", k, x)
	}
	if _, ok := v.Get("zz"); ok || v.Property("zz").IsDefined() {
		t.Errorf("missing property")
	}
	if Undefined.String() != "undefined" || Object.String() != "object" {
		t.Errorf("Kind.String")
	}
}
