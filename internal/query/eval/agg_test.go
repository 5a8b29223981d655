package eval

import (
	"math"
	"math/rand/v2"
	"testing"
)

func vals(t *testing.T, js ...string) []Value {
	t.Helper()
	out := make([]Value, len(js))
	for i, s := range js {
		if s == "undefined" {
			continue
		}
		v, err := FromJSON([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		out[i] = v
	}
	return out
}

func aggregate(kind AggKind, vs []Value) Value {
	a := NewAccumulator(kind)
	for _, v := range vs {
		a.Add(v)
	}
	return a.Result()
}

func TestAccumulatorSemantics(t *testing.T) {
	for _, c := range []struct {
		kind AggKind
		in   []string
		want string
	}{
		// Doc: count.md: two of three items have a name.
		{AggCount, []string{`"Horric socks"`, `"Shinity socks"`, "undefined"}, "2"},
		{AggCount, []string{"null", "false", "[]"}, "3"},
		{AggCount, nil, "0"},
		{AggCountIf, []string{"true", "false", "1", "undefined", "true", "null"}, "2"},
		// Doc: sum.md: quantities 35, (missing), 15.
		{AggSum, []string{"35", "undefined", "15"}, "50"},
		{AggSum, nil, "0"},
		{AggSum, []string{"1", "null"}, "undefined"},
		{AggSum, []string{"1", `"2"`}, "undefined"},
		{AggSum, []string{"true"}, "undefined"},
		{AggSum, []string{"0.1", "0.2"}, "0.30000000000000004"},
		{AggSum, []string{"1e100", "1", "-1e100"}, "0"},
		{AggSum, []string{"9223372036854775807", "9223372036854775807", "-9223372036854775807"}, "9223372036854775807"},
		{AggSum, []string{"9223372036854775807", "9223372036854775807"}, "18446744073709552000"},
		{AggSum, []string{"9223372036854775807", "1", "-1"}, "9223372036854775807"},
		{AggSum, []string{"9223372036854775807", "1"}, "9223372036854776000"},
		{AggSum, []string{"9007199254740993", "1.5"}, "9007199254740994"},
		// Doc: average.md: prices 20.28, 5.11, 62.21.
		{AggAvg, []string{"20.28", "5.11", "62.21"}, "29.2"},
		{AggAvg, []string{"1", "undefined", "2"}, "1.5"},
		{AggAvg, nil, "undefined"},
		{AggAvg, []string{"undefined"}, "undefined"},
		{AggAvg, []string{"1", "null"}, "undefined"},
		// Doc: max.md and min.md.
		{AggMax, []string{"71.76", "27.07"}, "71.76"},
		{AggMin, []string{"87.66", "27.60"}, "27.6"},
		// max.md: string > number > boolean > null.
		{AggMax, []string{"null", "true", "5", `"a"`, "undefined"}, `"a"`},
		{AggMin, []string{`"a"`, "5", "true", "null"}, "null"},
		{AggMin, []string{`"b"`, "5", "true"}, "true"},
		{AggMax, []string{"1", "[2]"}, "undefined"},
		{AggMin, []string{"{}", "1"}, "undefined"},
		{AggMax, nil, "undefined"},
		{AggMax, []string{"undefined"}, "undefined"},
		{AggMin, []string{"2", "1.0", "1"}, "1"},
		// MAKELIST and MAKESET: the defined values as an array; MAKESET
		// keeps the first of equal ones (1 and 1.0 are equal).
		{AggMakeList, []string{"1", "undefined", `"a"`, "1", "null", "[1]"}, `[1,"a",1,null,[1]]`},
		{AggMakeList, nil, "[]"},
		{AggMakeSet, []string{"1", `"a"`, "1.0", "null", "null", "{\"x\":1}", "{\"x\":1}", "undefined"}, `[1,"a",null,{"x":1}]`},
		{AggMakeSet, []string{"undefined"}, "[]"},
	} {
		got := aggregate(c.kind, vals(t, c.in...))
		if got.String() != c.want {
			t.Errorf("%s%v = %s, want %s", c.kind, c.in, got, c.want)
		}
	}
}

func TestParseAggKind(t *testing.T) {
	for _, k := range []AggKind{AggCount, AggSum, AggAvg, AggMin, AggMax, AggCountIf} {
		got, ok := ParseAggKind(k.String())
		if !ok || got != k || !IsAggregate(k.String()) {
			t.Errorf("ParseAggKind(%s) = %v, %v", k, got, ok)
		}
	}
	if k, ok := ParseAggKind("avg"); !ok || k != AggAvg {
		t.Errorf("lower case avg")
	}
	if _, ok := ParseAggKind("ABS"); ok || IsAggregate("abs") {
		t.Errorf("ABS is not an aggregate")
	}
}

// aggValue generates inputs for the merge property. In mode 0 they are
// integers, small and near ±2^63 (the exact integer path); in mode 1
// integers and quarters below 2^38, whose float sums are exact whatever
// the order; in mode 2 also null, booleans, strings and arrays, which
// poison SUM, AVG, MIN and MAX. Undefined appears in every mode.
func aggValue(r *rand.Rand, mode int) Value {
	n := r.IntN(20)
	switch {
	case n == 0:
		return Value{}
	case mode == 2 && n < 5:
		return []Value{NullValue(), BoolValue(r.IntN(2) == 0), StringValue("s"), ArrayValue([]Value{IntValue(1)})}[n-1]
	case mode == 0 && n < 8:
		return IntValue(math.MaxInt64 - r.Int64N(3))
	case mode == 0 && n < 12:
		return IntValue(math.MinInt64 + r.Int64N(3))
	case mode == 0 || n < 10:
		return IntValue(r.Int64N(1<<40) - 1<<39)
	}
	return NumberValue(float64(r.Int64N(1<<40)-1<<39) / 4)
}

// TestAccumulatorMerge checks that accumulating the parts of a random
// partition (in shuffled order) and merging them gives, bit for bit, what
// accumulating everything at once gives, for inputs whose float sums are
// exact (see aggValue); TestAccumulatorMergeFloat covers arbitrary floats.
func TestAccumulatorMerge(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for iter := range 3000 {
		kind := AggKind(iter % 6)
		mode := (iter / 6) % 3
		n := r.IntN(40)
		in := make([]Value, n)
		for i := range in {
			in[i] = aggValue(r, mode)
			if (kind == AggMin || kind == AggMax) && in[i].Kind() == Array && r.IntN(3) > 0 {
				in[i] = StringValue("t")
			}
			if kind == AggCountIf && r.IntN(2) == 0 {
				in[i] = BoolValue(true)
			}
		}
		want := aggregate(kind, in)

		parts := 1 + r.IntN(5)
		accs := make([]*Accumulator, parts)
		for i := range accs {
			accs[i] = NewAccumulator(kind)
		}
		for _, i := range r.Perm(n) {
			accs[r.IntN(parts)].Add(in[i])
		}
		// Merge in a random tree.
		for len(accs) > 1 {
			i := r.IntN(len(accs) - 1)
			accs[i].Merge(accs[i+1])
			accs = append(accs[:i+1], accs[i+2:]...)
		}
		got := accs[0].Result()
		if !Equal(got, want) || got.IsExactInt() != want.IsExactInt() {
			t.Fatalf("%s over %v: merged %s, whole %s", kind, in, got, want)
		}
	}
}

// TestAccumulatorMergeFloat: with arbitrary floats a merged SUM or AVG may
// differ from the whole in its last bits (as in Cosmos DB), no more.
func TestAccumulatorMergeFloat(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for iter := range 500 {
		kind := []AggKind{AggSum, AggAvg}[iter%2]
		in := make([]Value, 1+r.IntN(30))
		for i := range in {
			in[i] = NumberValue(r.Float64() * 1000)
		}
		want := aggregate(kind, in).AsFloat()
		a, b := NewAccumulator(kind), NewAccumulator(kind)
		for i, v := range in {
			if i%2 == 0 {
				a.Add(v)
			} else {
				b.Add(v)
			}
		}
		a.Merge(b)
		if got := a.Result().AsFloat(); math.Abs(got-want) > 1e-12*math.Abs(want) {
			t.Fatalf("%s: merged %v, whole %v", kind, got, want)
		}
	}
}

func TestAccumulatorMergeKindMismatch(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Errorf("merging SUM into COUNT did not panic")
		}
	}()
	NewAccumulator(AggCount).Merge(NewAccumulator(AggSum))
}

func TestSumSpecials(t *testing.T) {
	for _, c := range []struct {
		in   []Value
		want string
	}{
		{[]Value{NumberValue(math.Inf(1)), IntValue(1)}, "Infinity"},
		{[]Value{NumberValue(math.Inf(1)), NumberValue(math.Inf(-1))}, "NaN"},
		{[]Value{NumberValue(math.NaN()), IntValue(1)}, "NaN"},
		{[]Value{NumberValue(math.MaxFloat64), NumberValue(math.MaxFloat64)}, "Infinity"},
	} {
		if got := aggregate(AggSum, c.in); got.String() != c.want {
			t.Errorf("SUM%v = %s, want %s", c.in, got, c.want)
		}
	}
}

// MAKELIST and MAKESET merge partitions' lists (MAKESET without repeats)
// and report what they hold.
func TestMakeListMerge(t *testing.T) {
	for _, kind := range []AggKind{AggMakeList, AggMakeSet} {
		a, b := NewAccumulator(kind), NewAccumulator(kind)
		for _, v := range vals(t, "1", `"x"`) {
			a.Add(v)
		}
		if a.Size() == 0 {
			t.Errorf("%s holds two values but reports size 0", kind)
		}
		for _, v := range vals(t, `"x"`, "2") {
			b.Add(v)
		}
		a.Merge(b)
		want := map[AggKind]string{AggMakeList: `[1,"x","x",2]`, AggMakeSet: `[1,"x",2]`}[kind]
		if got := a.Result().String(); got != want {
			t.Errorf("%s merged: %s, want %s", kind, got, want)
		}
	}
}
