package store

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/parsecdb/parsec/internal/api/gremlin/graph"
	"github.com/parsecdb/parsec/internal/api/gremlin/lang"
)

// Predicates are evaluated twice: translated to SQL where the query
// language says the same or more (so the engine reads fewer documents, and
// its index serves the conditions on top-level values), and always tested
// here on the elements read, which decides. A translation may therefore
// select a superset, never less.

// maxPredDepth bounds the nesting of and/or/not a predicate may have.
const maxPredDepth = 32

// maxRegexBytes bounds a regex predicate's pattern.
const maxRegexBytes = 4096

// maxPushedValues bounds the values of a within predicate sent to the
// query; a longer list is tested here only.
const maxPushedValues = 256

// subPreds returns the P arguments of a composed predicate.
func subPreds(p lang.P) ([]lang.P, error) {
	out := make([]lang.P, 0, len(p.Args))
	for _, a := range p.Args {
		switch x := a.(type) {
		case lang.P:
			out = append(out, x)
		case *lang.P:
			if x == nil {
				return nil, fmt.Errorf("%w: %s() has a nil predicate argument", ErrInvalid, p.Op)
			}
			out = append(out, *x)
		default:
			return nil, fmt.Errorf("%w: %s() takes predicates, not %T", ErrInvalid, p.Op, a)
		}
	}
	return out, nil
}

// matchP tests value v against predicate p with Gremlin's semantics: a
// comparison between values of different kinds (a number and a string) is
// false, and neq/without of such values true; text predicates are false
// on values that are not strings.
func matchP(p lang.P, v any) (bool, error) { return matchDepth(p, v, 0) }

func matchDepth(p lang.P, v any, depth int) (bool, error) {
	if depth > maxPredDepth {
		return false, fmt.Errorf("%w: predicates nest deeper than %d", ErrInvalid, maxPredDepth)
	}
	arg := func(n int) error {
		if len(p.Args) != n {
			return fmt.Errorf("%w: %s() takes %d argument(s), got %d", ErrInvalid, p.Op, n, len(p.Args))
		}
		return nil
	}
	cmp := func(i int) (int, bool) { return compare(v, p.Args[i]) }
	switch p.Op {
	case "":
		return true, nil // existence: has(key)
	case "eq", "neq":
		if err := arg(1); err != nil {
			return false, err
		}
		eq := equal(v, p.Args[0])
		return eq == (p.Op == "eq"), nil
	case "lt", "lte", "gt", "gte":
		if err := arg(1); err != nil {
			return false, err
		}
		c, ok := cmp(0)
		if !ok {
			return false, nil
		}
		switch p.Op {
		case "lt":
			return c < 0, nil
		case "lte":
			return c <= 0, nil
		case "gt":
			return c > 0, nil
		}
		return c >= 0, nil
	case "inside", "outside", "between":
		if err := arg(2); err != nil {
			return false, err
		}
		lo, ok1 := cmp(0)
		hi, ok2 := cmp(1)
		switch p.Op {
		case "inside":
			return ok1 && ok2 && lo > 0 && hi < 0, nil
		case "outside":
			return (ok1 && lo < 0) || (ok2 && hi > 0), nil
		}
		return ok1 && ok2 && lo >= 0 && hi < 0, nil
	case "within", "without":
		in := false
		for _, a := range p.Args {
			if equal(v, a) {
				in = true
				break
			}
		}
		return in == (p.Op == "within"), nil
	case "startingWith", "endingWith", "containing", "notStartingWith", "notEndingWith", "notContaining":
		if err := arg(1); err != nil {
			return false, err
		}
		want, ok := asString(p.Args[0])
		if !ok {
			return false, fmt.Errorf("%w: %s() takes a string, not %T", ErrInvalid, p.Op, p.Args[0])
		}
		s, ok := asString(v)
		if !ok {
			return false, nil
		}
		switch p.Op {
		case "startingWith":
			return strings.HasPrefix(s, want), nil
		case "endingWith":
			return strings.HasSuffix(s, want), nil
		case "containing":
			return strings.Contains(s, want), nil
		case "notStartingWith":
			return !strings.HasPrefix(s, want), nil
		case "notEndingWith":
			return !strings.HasSuffix(s, want), nil
		}
		return !strings.Contains(s, want), nil
	case "regex", "notRegex":
		if err := arg(1); err != nil {
			return false, err
		}
		pat, ok := asString(p.Args[0])
		if !ok {
			return false, fmt.Errorf("%w: %s() takes a string, not %T", ErrInvalid, p.Op, p.Args[0])
		}
		if len(pat) > maxRegexBytes {
			return false, fmt.Errorf("%w: the regex is %d bytes; the limit is %d", ErrInvalid, len(pat), maxRegexBytes)
		}
		re, err := compileRegex(pat)
		if err != nil {
			return false, err
		}
		s, ok := asString(v)
		if !ok {
			return false, nil
		}
		return re.MatchString(s) == (p.Op == "regex"), nil
	case "and", "or", "not":
		subs, err := subPreds(p)
		if err != nil {
			return false, err
		}
		if p.Op == "not" {
			if len(subs) != 1 {
				return false, fmt.Errorf("%w: not() takes one predicate, got %d", ErrInvalid, len(subs))
			}
			m, err := matchDepth(subs[0], v, depth+1)
			return !m, err
		}
		if len(subs) == 0 {
			return false, fmt.Errorf("%w: %s() takes predicates", ErrInvalid, p.Op)
		}
		for _, sp := range subs {
			m, err := matchDepth(sp, v, depth+1)
			if err != nil {
				return false, err
			}
			if m != (p.Op == "and") {
				return m, nil
			}
		}
		return p.Op == "and", nil
	}
	return false, fmt.Errorf("%w: unknown predicate %q", ErrInvalid, p.Op)
}

// regexCache holds the patterns compiled lately: a predicate is tested on
// every element read.
var regexCache = struct {
	sync.Mutex
	m map[string]*regexp.Regexp
}{m: map[string]*regexp.Regexp{}}

// maxCachedRegexes bounds regexCache.
const maxCachedRegexes = 64

func compileRegex(pat string) (*regexp.Regexp, error) {
	regexCache.Lock()
	defer regexCache.Unlock()
	if re, ok := regexCache.m[pat]; ok {
		return re, nil
	}
	re, err := regexp.Compile(pat)
	if err != nil {
		return nil, fmt.Errorf("%w: invalid regex %q: %v", ErrInvalid, pat, err)
	}
	if len(regexCache.m) >= maxCachedRegexes {
		clear(regexCache.m)
	}
	regexCache.m[pat] = re
	return re, nil
}

// validateP checks a predicate whole (matchP stops at the first answer, so
// it may not reach a bad part): known operators, their argument counts
// and types, regexes that compile, and nesting.
func validateP(p lang.P, depth int) error {
	if depth > maxPredDepth {
		return fmt.Errorf("%w: predicates nest deeper than %d", ErrInvalid, maxPredDepth)
	}
	switch p.Op {
	case "and", "or", "not":
		subs, err := subPreds(p)
		if err != nil {
			return err
		}
		if len(subs) == 0 || (p.Op == "not" && len(subs) != 1) {
			return fmt.Errorf("%w: %s() takes %s predicate(s), got %d", ErrInvalid, p.Op, map[bool]string{true: "one", false: "some"}[p.Op == "not"], len(subs))
		}
		for _, sp := range subs {
			if err := validateP(sp, depth+1); err != nil {
				return err
			}
		}
		return nil
	case "regex", "notRegex":
		if len(p.Args) == 1 {
			if pat, ok := asString(p.Args[0]); ok && len(pat) <= maxRegexBytes {
				if _, err := compileRegex(pat); err != nil {
					return err
				}
			}
		}
	}
	// The probe value is a string so that the text predicates check their
	// argument.
	_, err := matchDepth(p, "", depth)
	return err
}

// kind orders the kinds of values Gremlin compares: 0 not comparable.
func kindOf(v any) int {
	switch v.(type) {
	case bool:
		return 1
	case string, lang.UUID:
		return 3
	}
	if _, ok := toFloat(v); ok {
		return 2
	}
	return 0
}

// compare compares two values of the same kind; ok is false for values
// of different kinds or kinds without an order.
func compare(a, b any) (int, bool) {
	ka, kb := kindOf(a), kindOf(b)
	if ka == 0 || ka != kb {
		return 0, false
	}
	switch ka {
	case 1:
		x, y := a.(bool), b.(bool)
		switch {
		case x == y:
			return 0, true
		case !x:
			return -1, true
		}
		return 1, true
	case 3:
		x, _ := asString(a)
		y, _ := asString(b)
		return strings.Compare(x, y), true
	}
	return compareNumbers(a, b)
}

// compareNumbers compares numbers exactly: two integers as integers, else
// as floats (NaN is not ordered).
func compareNumbers(a, b any) (int, bool) {
	ia, aInt := intOf(a)
	ib, bInt := intOf(b)
	if aInt && bInt {
		switch {
		case ia < ib:
			return -1, true
		case ia > ib:
			return 1, true
		}
		return 0, true
	}
	x, _ := toFloat(a)
	y, _ := toFloat(b)
	if math.IsNaN(x) || math.IsNaN(y) {
		return 0, false
	}
	switch {
	case x < y:
		return -1, true
	case x > y:
		return 1, true
	}
	return 0, true
}

func intOf(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int8, int16, int32, int64:
		return signedInt(x), true
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case uint64:
		if x <= math.MaxInt64 {
			return int64(x), true
		}
	}
	return 0, false
}

// equal is Gremlin's eq: numbers by value whatever their type, strings,
// booleans, and null equal only to null.
func equal(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	c, ok := compare(a, b)
	return ok && c == 0
}

// sqlBuilder collects the parameters of a query it writes.
type sqlBuilder struct {
	params map[string]any
}

func newSQL() *sqlBuilder { return &sqlBuilder{params: map[string]any{}} }

// param adds a parameter and returns its name (@pN).
func (b *sqlBuilder) param(v any) (string, bool) {
	if _, err := marshalValue(v); err != nil {
		return "", false
	}
	name := "p" + strconv.Itoa(len(b.params))
	b.params[name] = v
	return "@" + name, true
}

// in returns "x IN (@a, @b, ...)" for values.
func (b *sqlBuilder) in(x string, vals []any) (string, bool) {
	if len(vals) == 0 || len(vals) > maxPushedValues {
		return "", false
	}
	names := make([]string, 0, len(vals))
	for _, v := range vals {
		n, ok := b.param(v)
		if !ok {
			return "", false
		}
		names = append(names, n)
	}
	if len(names) == 1 {
		return x + " = " + names[0], true
	}
	return x + " IN (" + strings.Join(names, ", ") + ")", true
}

// pred translates p on the value expression x to a SQL condition that
// holds for every value p accepts (ok false: no such condition but
// existence). Negations are not translated: the query language's != and
// NOT are undefined across kinds, where Gremlin's neq is true.
func (b *sqlBuilder) pred(x string, p lang.P, depth int) (string, bool) {
	if depth > maxPredDepth {
		return "", false
	}
	bin := func(op string, v any) (string, bool) {
		n, ok := b.param(v)
		if !ok {
			return "", false
		}
		return x + " " + op + " " + n, true
	}
	two := func(opLo, opHi, join string) (string, bool) {
		if len(p.Args) != 2 {
			return "", false
		}
		l, ok1 := bin(opLo, p.Args[0])
		h, ok2 := bin(opHi, p.Args[1])
		if !ok1 || !ok2 {
			return "", false
		}
		return "(" + l + " " + join + " " + h + ")", true
	}
	text := func(fn string) (string, bool) {
		if len(p.Args) != 1 {
			return "", false
		}
		s, ok := asString(p.Args[0])
		if !ok {
			return "", false
		}
		n, _ := b.param(s)
		return fn + "(" + x + ", " + n + ")", true
	}
	switch p.Op {
	case "eq", "lt", "lte", "gt", "gte":
		if len(p.Args) != 1 || kindOf(p.Args[0]) == 0 {
			return "", false
		}
		op := map[string]string{"eq": "=", "lt": "<", "lte": "<=", "gt": ">", "gte": ">="}[p.Op]
		return bin(op, p.Args[0])
	case "inside":
		return two(">", "<", "AND")
	case "outside":
		return two("<", ">", "OR")
	case "between":
		return two(">=", "<", "AND")
	case "within":
		for _, a := range p.Args {
			if kindOf(a) == 0 {
				return "", false
			}
		}
		return b.in(x, p.Args)
	case "startingWith":
		return text("STARTSWITH")
	case "endingWith":
		return text("ENDSWITH")
	case "containing":
		return text("CONTAINS")
	case "and", "or":
		subs, err := subPreds(p)
		if err != nil || len(subs) == 0 {
			return "", false
		}
		var parts []string
		for _, sp := range subs {
			c, ok := b.pred(x, sp, depth+1)
			if !ok {
				if p.Op == "or" {
					return "", false
				}
				continue // a conjunct left out selects more
			}
			parts = append(parts, c)
		}
		if len(parts) == 0 {
			return "", false
		}
		return "(" + strings.Join(parts, " "+strings.ToUpper(p.Op)+" ") + ")", true
	}
	return "", false
}

// field returns the SQL expression of the top-level member name of c.
func field(name string) string {
	return "c[" + string(appendJSONString(nil, name)) + "]"
}

// vertexHas translates one Has of a vertex query to a SQL condition.
func (s *Store) vertexHas(b *sqlBuilder, h graph.Has) string {
	if h.T {
		x := "c.id"
		if h.Key == "label" {
			x = "c.label"
		} else if h.Key != "id" {
			return ""
		}
		c, _ := b.pred(x, h.P, 0)
		return c
	}
	if h.Key == s.pk {
		if c, ok := b.pred(field(s.pk), h.P, 0); ok {
			return c
		}
		return "IS_DEFINED(" + field(s.pk) + ")"
	}
	if h.Key == "" || reserved(h.Key) {
		return ""
	}
	// The values of the property bag, or the member itself where a
	// document holds a flat value (as Cosmos DB's bulk importer writes
	// with flat properties, or a document written through the NoSQL API).
	inBag, ok1 := b.pred("p._value", h.P, 0)
	flat, ok2 := b.pred(field(h.Key), h.P, 0)
	if ok1 && ok2 {
		return "(EXISTS(SELECT VALUE p FROM p IN " + field(h.Key) + " WHERE " + inBag + ") OR " + flat + ")"
	}
	return "IS_DEFINED(" + field(h.Key) + ")"
}

// edgeHas translates one Has of an edge query to a SQL condition.
func (s *Store) edgeHas(b *sqlBuilder, h graph.Has) string {
	if h.T {
		x := "c.id"
		if h.Key == "label" {
			x = "c.label"
		} else if h.Key != "id" {
			return ""
		}
		c, _ := b.pred(x, h.P, 0)
		return c
	}
	if h.Key == "" || h.Key == s.pk || reserved(h.Key) {
		return ""
	}
	if c, ok := b.pred(field(h.Key), h.P, 0); ok {
		return c
	}
	return "IS_DEFINED(" + field(h.Key) + ")"
}

// vertexMatches tests a vertex against labels and Has conditions.
func vertexMatches(v *graph.Vertex, labels []string, has []graph.Has) (bool, error) {
	if len(labels) > 0 && !contains(labels, v.Label) {
		return false, nil
	}
	for _, h := range has {
		ok, err := vertexHas(v, h)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

func vertexHas(v *graph.Vertex, h graph.Has) (bool, error) {
	if h.T {
		switch h.Key {
		case "id":
			return matchP(h.P, v.ID)
		case "label":
			return matchP(h.P, v.Label)
		}
		return false, fmt.Errorf("%w: T.%s is not a vertex condition", ErrInvalid, h.Key)
	}
	for _, p := range v.Properties[h.Key] {
		ok, err := matchP(h.P, p.Value)
		if err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}

// edgeMatches tests an edge against labels and Has conditions.
func edgeMatches(e *graph.Edge, labels []string, has []graph.Has) (bool, error) {
	if len(labels) > 0 && !contains(labels, e.Label) {
		return false, nil
	}
	for _, h := range has {
		var ok bool
		var err error
		switch {
		case h.T && h.Key == "id":
			ok, err = matchP(h.P, e.ID)
		case h.T && h.Key == "label":
			ok, err = matchP(h.P, e.Label)
		case h.T:
			err = fmt.Errorf("%w: T.%s is not an edge condition", ErrInvalid, h.Key)
		default:
			v, has := e.Properties[h.Key]
			if has {
				ok, err = matchP(h.P, v)
			}
		}
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func sortStrings(xs []string) { sort.Strings(xs) }
