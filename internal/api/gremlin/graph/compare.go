package graph

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"regexp"
	"strings"
	"time"

	"github.com/parsecdb/parsec/internal/api/gremlin/lang"
)

// Equal reports whether two values are equal as Gremlin compares them:
// numbers by value whatever their type (1 == 1L == 1.0), elements by id,
// lists and maps element by element.
func Equal(a, b any) bool {
	if fa, ok := toFloat(a); ok {
		if fb, ok := toFloat(b); ok {
			return fa == fb
		}
		return false
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case lang.UUID:
		y, ok := b.(lang.UUID)
		return ok && x == y
	case time.Time:
		y, ok := b.(time.Time)
		return ok && x.Equal(y)
	case *Vertex:
		y, ok := b.(*Vertex)
		return ok && x.ID == y.ID && Equal(x.PartitionKey, y.PartitionKey)
	case *Edge:
		y, ok := b.(*Edge)
		return ok && x.ID == y.ID
	case *VertexProperty:
		y, ok := b.(*VertexProperty)
		return ok && x.ID == y.ID && x.Key == y.Key && Equal(x.Value, y.Value)
	case *Property:
		// A property equals another of the same key and value, whatever
		// its element (TinkerPop's ElementHelper.areEqual(Property)).
		y, ok := b.(*Property)
		return ok && x.Key == y.Key && Equal(x.Value, y.Value)
	case *Entry:
		y, ok := b.(*Entry)
		return ok && Equal(x.Key, y.Key) && Equal(x.Value, y.Value)
	case lang.Token:
		y, ok := b.(lang.Token)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case *Map:
		y, ok := b.(*Map)
		if !ok || len(x.Entries) != len(y.Entries) {
			return false
		}
		for _, e := range x.Entries {
			v, found := y.Get(e.Key)
			if !found || !Equal(e.Value, v) {
				return false
			}
		}
		return true
	case *Path:
		y, ok := b.(*Path)
		return ok && Equal(x.Objects, y.Objects)
	case *BulkSet:
		y, ok := b.(*BulkSet)
		return ok && Equal(x.Items, y.Items) && fmt.Sprint(x.Bulks) == fmt.Sprint(y.Bulks)
	}
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	if ta != tb || !ta.Comparable() {
		return false
	}
	return a == b
}

// Get returns the value of key in m (keys compared with Equal).
func (m *Map) Get(key any) (any, bool) {
	for _, e := range m.Entries {
		if Equal(e.Key, key) {
			return e.Value, true
		}
	}
	return nil, false
}

// Put sets key to value, keeping the position of an existing key.
func (m *Map) Put(key, value any) {
	for i, e := range m.Entries {
		if Equal(e.Key, key) {
			m.Entries[i].Value = value
			return
		}
	}
	m.Entries = append(m.Entries, Entry{Key: key, Value: value})
}

// toFloat converts any numeric value to float64.
func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case float32:
		return float64(x), true
	case float64:
		return x, true
	case *big.Int:
		f, _ := new(big.Float).SetInt(x).Float64()
		return f, true
	case *big.Float:
		f, _ := x.Float64()
		return f, true
	}
	return 0, false
}

// IsNumber reports whether v is a numeric value.
func IsNumber(v any) bool {
	_, ok := toFloat(v)
	return ok
}

// typeRank orders values of different types, as TinkerPop's total order
// does: null, booleans, numbers, dates, strings, uuids, elements, lists,
// maps.
func typeRank(v any) int {
	if _, ok := toFloat(v); ok {
		return 2
	}
	switch v.(type) {
	case nil:
		return 0
	case bool:
		return 1
	case time.Time:
		return 3
	case string:
		return 4
	case lang.UUID:
		return 5
	case *Vertex, *Edge, *VertexProperty, *Property:
		return 6
	case []any, *Path:
		return 7
	case *Map, *Entry:
		return 8
	}
	return 9
}

// Compare orders a before b (-1), equal (0) or after (1). comparable is
// false when a and b are of different kinds (a number and a string), in
// which case the result still gives a total order by kind, as order()
// needs.
func Compare(a, b any) (c int, comparable bool) {
	ra, rb := typeRank(a), typeRank(b)
	if ra != rb {
		if ra < rb {
			return -1, false
		}
		return 1, false
	}
	switch ra {
	case 0:
		return 0, true
	case 1:
		x, y := a.(bool), b.(bool)
		switch {
		case x == y:
			return 0, true
		case !x:
			return -1, true
		}
		return 1, true
	case 2:
		x, _ := toFloat(a)
		y, _ := toFloat(b)
		return cmpFloat(x, y), true
	case 3:
		return a.(time.Time).Compare(b.(time.Time)), true
	case 4:
		return strings.Compare(a.(string), b.(string)), true
	case 5:
		return strings.Compare(string(a.(lang.UUID)), string(b.(lang.UUID))), true
	case 6:
		return strings.Compare(elementKey(a), elementKey(b)), true
	case 7:
		x, y := listOf(a), listOf(b)
		for i := 0; i < len(x) && i < len(y); i++ {
			if c, _ := Compare(x[i], y[i]); c != 0 {
				return c, true
			}
		}
		return cmpInt(len(x), len(y)), true
	}
	return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)), false
}

func listOf(v any) []any {
	if p, ok := v.(*Path); ok {
		return p.Objects
	}
	return v.([]any)
}

func elementKey(v any) string {
	switch x := v.(type) {
	case *Vertex:
		return x.ID
	case *Edge:
		return x.ID
	case *VertexProperty:
		return x.ID
	case *Property:
		return x.Key
	}
	return ""
}

func cmpFloat(x, y float64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	case x == y:
		return 0
	case math.IsNaN(x) && math.IsNaN(y):
		return 0
	case math.IsNaN(x):
		return 1
	}
	return -1
}

func cmpInt(x, y int) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// Test evaluates the predicate p against v. Comparisons between values of
// different kinds are false rather than errors (TinkerPop 3.6+: a number
// is neither less nor greater than a string). An unknown operator or a
// malformed argument list is an error.
func Test(p lang.P, v any) (bool, error) { return testDepth(p, v, 0) }

// maxPDepth bounds the nesting of and/or/not in a predicate.
const maxPDepth = 64

func testDepth(p lang.P, v any, depth int) (bool, error) {
	if depth > maxPDepth {
		return false, fmt.Errorf("predicates nest deeper than %d", maxPDepth)
	}
	arg := func(i int) (any, error) {
		if i >= len(p.Args) {
			return nil, fmt.Errorf("predicate %s needs %d argument(s)", p.Op, i+1)
		}
		return p.Args[i], nil
	}
	cmp := func(want func(int) bool) (bool, error) {
		a, err := arg(0)
		if err != nil {
			return false, err
		}
		c, ok := Compare(v, a)
		return ok && want(c), nil
	}
	text := func(f func(s, t string) bool) (bool, error) {
		a, err := arg(0)
		if err != nil {
			return false, err
		}
		t, ok := a.(string)
		if !ok {
			return false, fmt.Errorf("predicate %s needs a string argument", p.Op)
		}
		s, ok := v.(string)
		if !ok {
			return false, nil
		}
		return f(s, t), nil
	}
	switch p.Op {
	case "eq":
		a, err := arg(0)
		return err == nil && Equal(v, a), err
	case "neq":
		a, err := arg(0)
		return err == nil && !Equal(v, a), err
	case "lt":
		return cmp(func(c int) bool { return c < 0 })
	case "lte":
		return cmp(func(c int) bool { return c <= 0 })
	case "gt":
		return cmp(func(c int) bool { return c > 0 })
	case "gte":
		return cmp(func(c int) bool { return c >= 0 })
	case "inside", "outside", "between":
		if len(p.Args) != 2 {
			return false, fmt.Errorf("predicate %s needs 2 arguments", p.Op)
		}
		lo, ok1 := Compare(v, p.Args[0])
		hi, ok2 := Compare(v, p.Args[1])
		if !ok1 || !ok2 {
			return false, nil
		}
		switch p.Op {
		case "inside":
			return lo > 0 && hi < 0, nil
		case "outside":
			return lo < 0 || hi > 0, nil
		}
		return lo >= 0 && hi < 0, nil
	case "within", "without":
		in := false
		for _, a := range p.Args {
			if Equal(v, a) {
				in = true
				break
			}
		}
		return in == (p.Op == "within"), nil
	case "startingWith":
		return text(strings.HasPrefix)
	case "endingWith":
		return text(strings.HasSuffix)
	case "containing":
		return text(strings.Contains)
	case "notStartingWith":
		return text(func(s, t string) bool { return !strings.HasPrefix(s, t) })
	case "notEndingWith":
		return text(func(s, t string) bool { return !strings.HasSuffix(s, t) })
	case "notContaining":
		return text(func(s, t string) bool { return !strings.Contains(s, t) })
	case "regex", "notRegex":
		a, err := arg(0)
		if err != nil {
			return false, err
		}
		pat, ok := a.(string)
		if !ok {
			return false, fmt.Errorf("predicate %s needs a string argument", p.Op)
		}
		re, err := regexp.Compile(pat)
		if err != nil {
			return false, fmt.Errorf("predicate %s: %w", p.Op, err)
		}
		s, ok := v.(string)
		if !ok {
			return false, nil
		}
		return re.MatchString(s) == (p.Op == "regex"), nil
	case "and", "or":
		if len(p.Args) == 0 {
			return false, fmt.Errorf("predicate %s needs arguments", p.Op)
		}
		for _, a := range p.Args {
			q, ok := a.(lang.P)
			if !ok {
				return false, fmt.Errorf("predicate %s takes predicates", p.Op)
			}
			r, err := testDepth(q, v, depth+1)
			if err != nil {
				return false, err
			}
			if p.Op == "and" && !r {
				return false, nil
			}
			if p.Op == "or" && r {
				return true, nil
			}
		}
		return p.Op == "and", nil
	case "not":
		a, err := arg(0)
		if err != nil {
			return false, err
		}
		q, ok := a.(lang.P)
		if !ok {
			return false, fmt.Errorf("predicate not takes a predicate")
		}
		r, err := testDepth(q, v, depth+1)
		return !r, err
	}
	return false, fmt.Errorf("%w %q", ErrUnsupportedPredicate, p.Op)
}

// ErrUnsupportedPredicate is returned by Test for a predicate operator it
// does not know (P.typeOf, a provider's own).
var ErrUnsupportedPredicate = errors.New("unsupported predicate")
