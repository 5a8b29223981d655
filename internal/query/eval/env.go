package eval

import (
	"regexp"
	"sync"
	"time"

	"github.com/parsecdb/parsec/internal/query/ast"
)

// Env is everything an expression can see besides its own syntax: the
// aliases bound by FROM and JOIN, the parameters, and hooks for what this
// package leaves to the executor (subqueries, UDFs, aggregates) or takes
// from the outside world (clock, randomness).
//
// An Env is read by Eval and never modified by it, so one Env may serve
// concurrent evaluations as long as nobody changes its fields meanwhile.
// For a nested scope (a JOIN variable, a correlated subquery) use Child.
type Env struct {
	// Vars binds FROM aliases: "c" → the document, "t" → the current
	// element of a JOIN ... IN array.
	Vars map[string]Value
	// Outer is the enclosing scope, searched when a name is not in Vars.
	Outer *Env
	// Params holds the values of the query parameters, keyed by name
	// without the '@' ("pk" for @pk).
	Params map[string]Value

	// Subquery runs q in the scope env and returns its result rows, leaving
	// out undefined rows (SELECT VALUE undefined returns nothing). Eval
	// uses it for (SELECT ...), EXISTS, ARRAY, FIRST, LAST and ALL. When
	// nil, those fail with ErrNeedsExecutor.
	Subquery func(q *ast.Query, env *Env) ([]Value, error)
	// UDF calls the user-defined function name (without "udf.") with
	// defined arguments. When nil, udf calls fail with ErrNeedsExecutor.
	UDF func(name string, args []Value) (Value, error)
	// Aggregate returns the value of an aggregate call (COUNT, SUM, ...),
	// which the executor computes over a group with an Accumulator. When
	// nil, aggregates fail with ErrAggregatePlacement.
	Aggregate func(call *ast.Call, env *Env) (Value, error)

	// Now returns the current time for GetCurrentDateTime,
	// GetCurrentTimestamp and GetCurrentTicks. When nil they fail with
	// ErrMissingEnv.
	Now func() time.Time
	// QueryStart is the time the query started, returned by the *Static
	// variants (GetCurrentDateTimeStatic, ...). When zero they use Now.
	QueryStart time.Time
	// Rand returns a uniform float64 in [0, 1) for RAND. When nil RAND
	// fails with ErrMissingEnv.
	Rand func() float64

	// Budget, when set, bounds the steps and the bytes of values of the
	// evaluations in this scope and its children (see Budget).
	Budget *Budget

	// Search, when set, gives the vector and full-text functions the
	// container's policies and the executor's statistics (see Search). A
	// nil Search means no policies: cosine float32 vectors, English text,
	// and no FullTextScore outside the executor.
	Search *Search

	// Cache holds compiled regular expressions and LIKE patterns. It may be
	// nil (no caching) and may be shared between Envs and goroutines.
	Cache *Cache
}

// Child returns a scope nested in e with the extra bindings vars; it shares
// e's parameters, hooks and cache.
func (e *Env) Child(vars map[string]Value) *Env {
	c := *e
	c.Vars = vars
	c.Outer = e
	return &c
}

// Lookup returns the value bound to name in e or an enclosing scope.
func (e *Env) Lookup(name string) (Value, bool) {
	for s := e; s != nil; s = s.Outer {
		if v, ok := s.Vars[name]; ok {
			return v, true
		}
	}
	return Value{}, false
}

// Cache memoizes compiled regular expressions (RegexMatch) and LIKE
// patterns. It is safe for concurrent use; it forgets everything when it
// holds more than cacheSize entries.
type Cache struct {
	mu   sync.Mutex
	re   map[string]*regexp.Regexp // "flags\x00pattern" → compiled, nil if invalid
	like map[likeKey]*likePattern
}

const cacheSize = 512

type likeKey struct {
	pattern string
	escape  rune
}

// NewCache returns an empty Cache.
func NewCache() *Cache {
	return &Cache{re: make(map[string]*regexp.Regexp), like: make(map[likeKey]*likePattern)}
}

func (c *Cache) regexp(key string, compile func() *regexp.Regexp) *regexp.Regexp {
	if c == nil {
		return compile()
	}
	c.mu.Lock()
	re, ok := c.re[key]
	c.mu.Unlock()
	if ok {
		return re
	}
	re = compile()
	c.mu.Lock()
	if len(c.re) >= cacheSize {
		clear(c.re)
	}
	c.re[key] = re
	c.mu.Unlock()
	return re
}

func (c *Cache) likePattern(k likeKey) *likePattern {
	if c == nil {
		return compileLike(k.pattern, k.escape)
	}
	c.mu.Lock()
	p, ok := c.like[k]
	c.mu.Unlock()
	if ok {
		return p
	}
	p = compileLike(k.pattern, k.escape)
	c.mu.Lock()
	if len(c.like) >= cacheSize {
		clear(c.like)
	}
	c.like[k] = p
	c.mu.Unlock()
	return p
}
