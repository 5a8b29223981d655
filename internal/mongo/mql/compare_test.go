package mql

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func TestCompareBrackets(t *testing.T) {
	oid := bson.ObjectID{1}
	// Each value is strictly less than the next.
	ordered := []any{
		bson.MinKey{},
		bson.Undefined{},
		nil,
		math.NaN(),
		math.Inf(-1),
		int64(math.MinInt64),
		int32(-5),
		-4.5,
		int32(0),
		dec(t, "0.1"),
		0.5,
		int32(1),
		1.5,
		int64(1) << 53,
		int64(1)<<53 + 1,
		float64(1<<62) * 4,
		dec(t, "1E+100"),
		math.Inf(1),
		"",
		bson.Symbol("a"),
		"b",
		doc(),
		doc("a", int32(1)),
		doc("a", "x"),
		doc("b", "y"),
		arr(),
		arr(int32(1)),
		arr(int32(1), int32(2)),
		arr(int32(2)),
		bson.Binary{Subtype: 5, Data: []byte{9}},
		bson.Binary{Subtype: 0, Data: []byte{1, 2}},
		oid,
		false,
		true,
		bson.DateTime(-1),
		bson.DateTime(5),
		bson.Timestamp{T: 1, I: 9},
		bson.Timestamp{T: 2, I: 0},
		bson.Regex{Pattern: "a", Options: ""},
		bson.Regex{Pattern: "a", Options: "i"},
		bson.MaxKey{},
	}
	for i := range ordered {
		for j := range ordered {
			got := Compare(ordered[i], ordered[j])
			want := cmpInt(i, j)
			if got != want {
				t.Errorf("Compare(%v, %v) = %d, want %d", ordered[i], ordered[j], got, want)
			}
		}
	}
}

func TestCompareNumbersAcrossTypes(t *testing.T) {
	equal := [][2]any{
		{int32(1), int64(1)},
		{int32(1), 1.0},
		{int64(3), dec(t, "3")},
		{1.0, dec(t, "1.000")},
		{0.5, dec(t, "0.5")},
		{math.NaN(), dec(t, "NaN")},
		{math.Inf(1), dec(t, "Infinity")},
		{"x", bson.Symbol("x")},
		{int64(1) << 53, float64(1 << 53)},
	}
	for _, p := range equal {
		if c := Compare(p[0], p[1]); c != 0 {
			t.Errorf("Compare(%v %T, %v %T) = %d, want 0", p[0], p[0], p[1], p[1], c)
		}
	}
	// Decimal 0.1 is not the double 0.1 (which is slightly above it).
	if c := Compare(dec(t, "0.1"), 0.1); c != -1 {
		t.Errorf("Compare(decimal 0.1, double 0.1) = %d, want -1", c)
	}
	if c := Compare(int64(1)<<53+1, float64(1<<53)); c != 1 {
		t.Errorf("2^53+1 vs 2^53 double: %d", c)
	}
	if c := Compare(int64(math.MaxInt64), float64(math.MaxInt64)); c != -1 {
		t.Errorf("MaxInt64 vs 2^63 double: %d", c)
	}
}

// randomValue generates a value of a random BSON type, with small domains so equal values occur.
func randomValue(r *rand.Rand, depth int) any {
	n := 14
	if depth > 2 {
		n = 12
	}
	switch r.IntN(n) {
	case 0:
		return int32(r.IntN(5) - 2)
	case 1:
		return int64(r.IntN(5) - 2)
	case 2:
		fs := []float64{-1.5, 0, 1, 2, math.NaN(), math.Inf(1), math.Inf(-1), 0.5}
		return fs[r.IntN(len(fs))]
	case 3:
		ds := []string{"1", "0.5", "-2", "NaN", "1E+3", "-Infinity"}
		d, _ := bson.ParseDecimal128(ds[r.IntN(len(ds))])
		return d
	case 4:
		return []string{"", "a", "b", "ab"}[r.IntN(4)]
	case 5:
		return nil
	case 6:
		return r.IntN(2) == 0
	case 7:
		return bson.DateTime(r.IntN(3))
	case 8:
		return []any{bson.MinKey{}, bson.MaxKey{}, bson.Undefined{}}[r.IntN(3)]
	case 9:
		return bson.ObjectID{byte(r.IntN(3))}
	case 10:
		return bson.Timestamp{T: uint32(r.IntN(2)), I: uint32(r.IntN(2))}
	case 11:
		return bson.Binary{Subtype: byte(r.IntN(2)), Data: []byte{byte(r.IntN(2))}}
	case 12:
		a := bson.A{}
		for i := r.IntN(3); i > 0; i-- {
			a = append(a, randomValue(r, depth+1))
		}
		return a
	default:
		d := bson.D{}
		for i := r.IntN(3); i > 0; i-- {
			d = append(d, bson.E{Key: []string{"a", "b"}[r.IntN(2)], Value: randomValue(r, depth+1)})
		}
		return d
	}
}

// TestCompareTotalOrder checks on random samples that Compare is reflexive, antisymmetric and
// transitive, and that sorting with it yields a consistent order.
func TestCompareTotalOrder(t *testing.T) {
	seed := uint64(20261124)
	r := rand.New(rand.NewPCG(seed, 1))
	vals := make([]any, 300)
	for i := range vals {
		vals[i] = randomValue(r, 0)
	}
	for i, a := range vals {
		if Compare(a, a) != 0 {
			t.Fatalf("seed %d: Compare(%v, itself) != 0", seed, a)
		}
		for _, b := range vals[:i] {
			if Compare(a, b) != -Compare(b, a) {
				t.Fatalf("seed %d: not antisymmetric: %v vs %v", seed, a, b)
			}
		}
	}
	for k := 0; k < 20000; k++ {
		a, b, c := vals[r.IntN(len(vals))], vals[r.IntN(len(vals))], vals[r.IntN(len(vals))]
		ab, bc, ac := Compare(a, b), Compare(b, c), Compare(a, c)
		if ab <= 0 && bc <= 0 && ac > 0 {
			t.Fatalf("seed %d: not transitive: %v <= %v <= %v but %v > %v", seed, a, b, c, a, c)
		}
		if ab == 0 && bc == 0 && ac != 0 {
			t.Fatalf("seed %d: equality not transitive: %v, %v, %v", seed, a, b, c)
		}
	}
	sort.SliceStable(vals, func(i, j int) bool { return Compare(vals[i], vals[j]) < 0 })
	for i := 1; i < len(vals); i++ {
		if Compare(vals[i-1], vals[i]) > 0 {
			t.Fatalf("seed %d: sorted slice out of order at %d: %v > %v", seed, i, vals[i-1], vals[i])
		}
	}
}

func TestLookup(t *testing.T) {
	d := doc("a", arr(doc("b", int32(1)), doc("b", arr(int32(2), int32(3))), int32(7), doc("c", int32(0))),
		"x", doc("y", doc("z", "deep")))
	cases := []struct {
		path string
		want bson.A
	}{
		{"a.b", arr(int32(1), arr(int32(2), int32(3)))},
		{"a.0.b", arr(int32(1))},
		{"a.2", arr(int32(7))},
		{"a.9", nil},
		{"x.y.z", arr("deep")},
		{"x.y", arr(doc("z", "deep"))},
		{"nope", nil},
		{"x.y.z.w", nil},
	}
	for _, c := range cases {
		got := Lookup(d, c.path)
		if Compare(bson.A(got), c.want) != 0 || len(got) != len(c.want) {
			t.Errorf("Lookup(%q) = %v, want %v", c.path, got, c.want)
		}
	}
}

func TestIdentical(t *testing.T) {
	if identical(int32(1), 1.0) {
		t.Error("int32 1 and double 1 are not identical")
	}
	if !identical(doc("a", arr(int32(1), "x")), doc("a", arr(int32(1), "x"))) {
		t.Error("equal documents should be identical")
	}
	if identical(doc("a", int32(1), "b", int32(2)), doc("b", int32(2), "a", int32(1))) {
		t.Error("field order matters")
	}
	if identical(dec(t, "1.0"), dec(t, "1.00")) || !identical(dec(t, "1.0"), dec(t, "1.0")) {
		t.Error("decimals are identical when their representation is")
	}
	if !identical(math.NaN(), math.NaN()) {
		t.Error("NaN is identical to itself")
	}
}
