package lang

import "fmt"

// Limits bounds what Parse accepts. A zero (or negative) field takes its
// default.
type Limits struct {
	// ScriptBytes is the longest script accepted, in bytes of UTF-8.
	// Default 65536: Cosmos DB's "script length" limit of 64 KB.
	ScriptBytes int
	// Operators is the most steps a traversal may hold, counted as Cosmos
	// DB counts its "operator depth": every step of the traversal and of
	// the traversals nested in its arguments, except source steps
	// (withSideEffect, ...), the terminal method and the modulators that
	// only parameterize the step before them (as, by, emit, from, option,
	// read, times, to, until, with, write). Default 400.
	Operators int
	// Nesting is the deepest nesting of traversals, predicates and
	// collections inside each other (g.V().where(__.not(__.out())) nests
	// 3 deep). Default 100. It keeps the recursive parser, and every
	// consumer that walks the tree recursively, bounded.
	Nesting int
}

// The defaults of Limits.
const (
	DefaultScriptBytes = 64 * 1024
	DefaultOperators   = 400
	DefaultNesting     = 100
	// MaxRangeLength is the most elements the range literals of one script
	// (1..5) expand to, all together.
	MaxRangeLength = 10000
)

func (l Limits) withDefaults() Limits {
	if l.ScriptBytes <= 0 {
		l.ScriptBytes = DefaultScriptBytes
	}
	if l.Operators <= 0 {
		l.Operators = DefaultOperators
	}
	if l.Nesting <= 0 {
		l.Nesting = DefaultNesting
	}
	return l
}

// The names a LimitError carries.
const (
	LimitScriptLength  = "script length"
	LimitOperatorDepth = "operator depth"
	LimitNesting       = "nesting depth"
	LimitRangeLength   = "range length"
)

// A LimitError says that a script went past one of the Limits. Cosmos DB
// answers these with status 429 (gremlin/limits.md): the server maps this
// type, not the message, to its status.
type LimitError struct {
	Name  string // one of the Limit* constants
	Max   int    // the limit in force
	Value int    // what the script reached (for nesting: Max+1, where parsing stopped)
}

func (e *LimitError) Error() string {
	switch e.Name {
	case LimitScriptLength:
		return fmt.Sprintf("gremlin script of %d bytes exceeds the script length limit of %d bytes", e.Value, e.Max)
	case LimitOperatorDepth:
		return fmt.Sprintf("gremlin traversal of %d steps exceeds the operator depth limit of %d", e.Value, e.Max)
	case LimitNesting:
		return fmt.Sprintf("gremlin script nests deeper than the limit of %d", e.Max)
	default:
		return fmt.Sprintf("gremlin script exceeds the %s limit of %d (%d)", e.Name, e.Max, e.Value)
	}
}

// A SyntaxError is a script that does not follow the grammar, or that uses a
// form Parsec does not accept (lambdas, assignments, several statements, an
// identifier that is neither a constant nor a binding). Line and Column are
// 1-based; Column counts characters, not bytes.
type SyntaxError struct {
	Line, Column int
	Msg          string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("gremlin syntax error at line %d, column %d: %s", e.Line, e.Column, e.Msg)
}
