package lang

import (
	"math"
	"math/big"
	"time"
)

// Equal reports whether two traversals are the same tree: same source
// steps, steps, terminal and anonymity, with arguments equal by ValueEqual.
func Equal(a, b *Traversal) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Anonymous == b.Anonymous && stepsEqual(a.Source, b.Source) && stepsEqual(a.Steps, b.Steps) &&
		stepEqual(a.Terminal, b.Terminal)
}

func stepsEqual(a, b []Step) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !stepEqual(a[i], b[i]) {
			return false
		}
	}
	return true
}

func stepEqual(a, b Step) bool {
	return a.Name == b.Name && valuesEqual(a.Args, b.Args)
}

func valuesEqual(a, b []Value) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !ValueEqual(a[i], b[i]) {
			return false
		}
	}
	return true
}

// ValueEqual reports whether two Values are the same literal: the same
// dynamic type and the same value. Floats compare as Java's Double.equals
// does (NaN equals NaN, 0.0 differs from -0.0); big numbers compare by value
// and sign; times by instant; collections element by element, in order. An
// int32 1 and an int64 1 differ. Set literals drop duplicates by this
// equality.
func ValueEqual(a, b Value) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool, int32, int64, string, UUID, Token:
		return a == b
	case float32:
		y, ok := b.(float32)
		return ok && (math.Float32bits(x) == math.Float32bits(y) || (x != x && y != y))
	case float64:
		y, ok := b.(float64)
		return ok && (math.Float64bits(x) == math.Float64bits(y) || (math.IsNaN(x) && math.IsNaN(y)))
	case *big.Int:
		y, ok := b.(*big.Int)
		return ok && (x == nil) == (y == nil) && (x == nil || x.Cmp(y) == 0)
	case *big.Float:
		y, ok := b.(*big.Float)
		return ok && (x == nil) == (y == nil) && (x == nil || (x.Cmp(y) == 0 && x.Signbit() == y.Signbit()))
	case time.Time:
		y, ok := b.(time.Time)
		return ok && x.Equal(y)
	case []Value:
		y, ok := b.([]Value)
		return ok && valuesEqual(x, y)
	case Set:
		y, ok := b.(Set)
		return ok && valuesEqual(x, y)
	case *Map:
		y, ok := b.(*Map)
		if !ok || (x == nil) != (y == nil) {
			return false
		}
		if x == nil {
			return true
		}
		if len(x.Entries) != len(y.Entries) {
			return false
		}
		for i := range x.Entries {
			if !ValueEqual(x.Entries[i].Key, y.Entries[i].Key) || !ValueEqual(x.Entries[i].Value, y.Entries[i].Value) {
				return false
			}
		}
		return true
	case *Traversal:
		y, ok := b.(*Traversal)
		return ok && Equal(x, y)
	case P:
		y, ok := b.(P)
		return ok && x.Op == y.Op && valuesEqual(x.Args, y.Args)
	case Strategy:
		y, ok := b.(Strategy)
		return ok && x.Name == y.Name && ValueEqual(x.Config, y.Config)
	case CardinalityValue:
		y, ok := b.(CardinalityValue)
		return ok && x.Cardinality == y.Cardinality && ValueEqual(x.Value, y.Value)
	}
	return false
}

// CountOperators counts a traversal's steps as Cosmos DB counts its
// "operator depth" (gremlin/limits.md): every step of the traversal and of
// the traversals nested in its arguments, at any depth, except source steps,
// the terminal method and the modulators (as, by, emit, from, option, read,
// times, to, until, with, write), whose nested traversals still count.
// g.V().out() counts 2; g.V('label').repeat(out()).times(100) counts 3.
func CountOperators(t *Traversal) int {
	if t == nil {
		return 0
	}
	n := 0
	for _, s := range t.Steps {
		if modulators[s.Name] == "" {
			n++
		}
		for _, a := range s.Args {
			n += countIn(a)
		}
	}
	for _, s := range t.Source {
		for _, a := range s.Args {
			n += countIn(a)
		}
	}
	return n
}

func countIn(v Value) int {
	switch x := v.(type) {
	case *Traversal:
		return CountOperators(x)
	case []Value:
		n := 0
		for _, e := range x {
			n += countIn(e)
		}
		return n
	case Set:
		n := 0
		for _, e := range x {
			n += countIn(e)
		}
		return n
	case *Map:
		if x == nil {
			return 0
		}
		n := 0
		for _, e := range x.Entries {
			n += countIn(e.Key) + countIn(e.Value)
		}
		return n
	case Strategy:
		return countIn(x.Config)
	case CardinalityValue:
		return countIn(x.Value)
	case P:
		n := 0
		for _, e := range x.Args {
			n += countIn(e)
		}
		return n
	}
	return 0
}

// valueDepth is the nesting depth of a value as Limits.Nesting counts it: 1
// for a scalar, one more than its deepest element for a collection, a
// predicate, a strategy, or a traversal (whose elements are its steps'
// arguments).
func valueDepth(v Value) int {
	d := 0
	switch x := v.(type) {
	case []Value:
		d = maxDepth(x)
	case Set:
		d = maxDepth(x)
	case P:
		d = maxDepth(x.Args)
	case *Map:
		if x != nil {
			for _, e := range x.Entries {
				d = max(d, valueDepth(e.Key), valueDepth(e.Value))
			}
		}
	case Strategy:
		if x.Config != nil {
			for _, e := range x.Config.Entries {
				d = max(d, valueDepth(e.Key), valueDepth(e.Value))
			}
		}
	case *Traversal:
		d = traversalDepth(x)
	case CardinalityValue:
		d = valueDepth(x.Value)
	}
	return 1 + d
}

// traversalDepth is the depth of the deepest argument of t's steps.
func traversalDepth(t *Traversal) int {
	if t == nil {
		return 0
	}
	d := maxDepth(t.Terminal.Args)
	for _, steps := range [][]Step{t.Source, t.Steps} {
		for _, s := range steps {
			d = max(d, maxDepth(s.Args))
		}
	}
	return d
}

func maxDepth(vs []Value) int {
	d := 0
	for _, v := range vs {
		d = max(d, valueDepth(v))
	}
	return d
}
