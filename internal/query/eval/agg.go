package eval

import (
	"math"
	"math/bits"
	"slices"
)

// AggKind is an aggregate function.
type AggKind uint8

// The aggregate functions (count.md, sum.md, average.md, min.md, max.md;
// COUNTIF is an extension).
const (
	AggCount    AggKind = iota // COUNT(x): rows where x is defined
	AggSum                     // SUM(x): sum of the numbers
	AggAvg                     // AVG(x): their mean
	AggMin                     // MIN(x): least value in the type order
	AggMax                     // MAX(x): greatest value in the type order
	AggCountIf                 // COUNTIF(x): rows where x is true
	AggMakeList                // MAKELIST(x): the defined values, as an array
	AggMakeSet                 // MAKESET(x): the distinct defined values, as an array
)

var aggNames = [...]string{AggCount: "COUNT", AggSum: "SUM", AggAvg: "AVG", AggMin: "MIN", AggMax: "MAX", AggCountIf: "COUNTIF",
	AggMakeList: "MAKELIST", AggMakeSet: "MAKESET"}

// String returns the function name in upper case.
func (k AggKind) String() string { return aggNames[k] }

// ParseAggKind returns the aggregate named name (any case).
func ParseAggKind(name string) (AggKind, bool) {
	u := upperASCII(name)
	for k, n := range aggNames {
		if n == u {
			return AggKind(k), true
		}
	}
	return 0, false
}

// Accumulator computes one aggregate over a stream of values. Feed it with
// Add; combine the accumulators of several partitions (or pages, or
// goroutines) with Merge; read the aggregate with Result. Merging is
// exact in what it keeps: AVG keeps sum and count, not an average, and
// COUNT, MIN, MAX and integer sums merge to exactly what accumulating
// everything at once gives. Float sums are added left to right as Cosmos DB
// adds them, so their last bits can depend on the grouping (see numSum).
//
// The semantics are Cosmos DB's:
//
//   - undefined values are skipped by every aggregate;
//   - COUNT counts the defined values (null included); COUNTIF the true
//     ones; both are 0 over nothing;
//   - SUM and AVG become undefined as soon as one value is not a number
//     (sum.md: "If any arguments in SUM are string, boolean, or null; the
//     entire aggregate system function returns undefined"); SUM over
//     nothing is 0, AVG undefined; a sum of exact integers that fits an
//     int64 is an exact integer;
//   - MIN and MAX compare across types in the ORDER BY order (null <
//     booleans < numbers < strings, max.md) and become undefined if a
//     value is an array or object, as the SDKs' MinMaxAggregator does;
//     over nothing they are undefined;
//   - MAKELIST collects the values (in the order they come, partitions in
//     the order they merge) and MAKESET the distinct ones (the first of
//     equal values), both as an array, [] over nothing. Size returns what
//     they hold, for the caller's memory budget.
//
// An Accumulator is not safe for concurrent use.
type Accumulator struct {
	kind    AggKind
	count   int64
	sum     numSum
	invalid bool
	best    Value
	list    []Value            // MAKELIST, MAKESET
	set     map[uint64][]Value // MAKESET: the values of list by Hash
	size    int                // JSONSize of list
}

// NewAccumulator returns an empty accumulator for kind.
func NewAccumulator(kind AggKind) *Accumulator {
	return &Accumulator{kind: kind, sum: newNumSum()}
}

// Kind returns the aggregate a computes.
func (a *Accumulator) Kind() AggKind { return a.kind }

// Add accumulates one value.
func (a *Accumulator) Add(v Value) {
	if v.kind == Undefined {
		return
	}
	switch a.kind {
	case AggCount:
		a.count++
	case AggCountIf:
		if v.isTrue() {
			a.count++
		}
	case AggSum, AggAvg:
		if v.kind != Number {
			a.invalid = true
			return
		}
		a.count++
		a.sum.add(v)
	case AggMin, AggMax:
		if v.kind == Array || v.kind == Object {
			a.invalid = true
			return
		}
		a.consider(v)
	case AggMakeList, AggMakeSet:
		a.collect(v)
	}
}

// collect adds v to the list (for MAKESET, unless an equal value is there).
func (a *Accumulator) collect(v Value) {
	if a.kind == AggMakeSet {
		h := Hash(v)
		for _, w := range a.set[h] {
			if Equal(v, w) {
				return
			}
		}
		if a.set == nil {
			a.set = map[uint64][]Value{}
		}
		a.set[h] = append(a.set[h], v)
	}
	a.list = append(a.list, v)
	a.size += JSONSize(v) + 1
}

// Size is the estimated JSON size of what the accumulator holds: the
// values of MAKELIST and MAKESET, nothing for the others.
func (a *Accumulator) Size() int { return a.size }

func (a *Accumulator) consider(v Value) {
	if a.best.kind == Undefined {
		a.best = v
		return
	}
	c := Compare(v, a.best)
	if a.kind == AggMin && c < 0 || a.kind == AggMax && c > 0 {
		a.best = v
	}
}

// Merge adds everything b accumulated into a; b (which must not be a) is
// not modified. It panics if the kinds differ.
func (a *Accumulator) Merge(b *Accumulator) {
	if a.kind != b.kind {
		panic("BUG: eval: merging " + b.kind.String() + " into " + a.kind.String())
	}
	a.count += b.count
	a.invalid = a.invalid || b.invalid
	a.sum.merge(&b.sum)
	if b.best.kind != Undefined {
		a.consider(b.best)
	}
	for _, v := range b.list {
		a.collect(v)
	}
}

// Result returns the aggregate of everything added and merged so far.
func (a *Accumulator) Result() Value {
	switch a.kind {
	case AggCount, AggCountIf:
		return IntValue(a.count)
	case AggSum:
		if a.invalid {
			return Value{}
		}
		return a.sum.value()
	case AggAvg:
		if a.invalid || a.count == 0 {
			return Value{}
		}
		return NumberValue(a.sum.float() / float64(a.count))
	case AggMin, AggMax:
		if a.invalid {
			return Value{}
		}
		return a.best
	case AggMakeList, AggMakeSet:
		return ArrayValue(slices.Clone(a.list))
	}
	panic("BUG: eval: bad aggregate kind")
}

// numSum is the running sum of SUM and AVG. Floating-point values are
// added left to right in float64, as Cosmos DB's aggregators add them
// (azure-cosmos-dotnet-v3 SumAggregator and AverageAggregator add doubles),
// which gives average.md's AVG(20.28, 5.11, 62.21) = 29.2; an exactly
// rounded sum would give 29.200000000000003. Merging adds the partial sums,
// again as Cosmos DB does, so a float result may depend in its last bits on
// how the values were split; it cannot when every partial sum is exact
// (integers below 2^53, or fractions like halves and quarters).
//
// While every addend is an exact integer the sum is also kept as a 128-bit
// integer, so that a sum of integers is exact and independent of order: an
// int64 if it fits, else the float64 nearest to it.
type numSum struct {
	f      float64 // the float64 sum of everything added
	allInt bool    // every value added was an exact int
	intHi  int64   // the integer sum is intHi·2^64 + intLo
	intLo  uint64
}

func newNumSum() numSum { return numSum{allInt: true} }

func (s *numSum) add(v Value) {
	if v.exact {
		i := int64(v.n)
		s.addInt128(i>>63, uint64(i))
		s.f += float64(i)
		return
	}
	s.allInt = false
	s.f += math.Float64frombits(v.n)
}

func (s *numSum) addInt128(hi int64, lo uint64) {
	var carry uint64
	s.intLo, carry = bits.Add64(s.intLo, lo, 0)
	s.intHi += hi + int64(carry)
}

func (s *numSum) merge(o *numSum) {
	s.f += o.f
	s.allInt = s.allInt && o.allInt
	s.addInt128(o.intHi, o.intLo)
}

// float returns the sum as a float64.
func (s *numSum) float() float64 {
	if !s.allInt {
		return s.f
	}
	if s.intHi == int64(s.intLo)>>63 {
		return float64(int64(s.intLo))
	}
	// Beyond int64: hi·2^64 + lo, rounded once (lo's rounding is far below
	// an ulp of the result).
	return float64(s.intHi)*(1<<64) + float64(s.intLo)
}

// value returns the sum as a Value: an exact int64 when every addend was
// one and the sum fits.
func (s *numSum) value() Value {
	if s.allInt && s.intHi == int64(s.intLo)>>63 {
		return IntValue(int64(s.intLo))
	}
	return NumberValue(s.float())
}
