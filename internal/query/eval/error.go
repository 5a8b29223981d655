package eval

import (
	"errors"
	"fmt"

	"github.com/parsecdb/parsec/internal/query/token"
)

// ErrInvalidQuery is wrapped by every error that means the query itself is
// wrong (a client error, HTTP 400): all the Check errors and the same
// problems found by Eval.
var ErrInvalidQuery = errors.New("invalid query")

// Sentinels for the kinds of query errors. Each *Error wraps one of them
// and ErrInvalidQuery, except ErrNeedsExecutor and ErrMissingEnv, which mean
// the caller did not provide what Eval needed (a bug in the caller, not in
// the query).
var (
	// ErrUnknownFunction: a call to a function that Cosmos DB does not have.
	ErrUnknownFunction = errors.New("unknown function")
	// ErrUnsupported: a Cosmos DB function or construct this engine does
	// not implement (spatial, full-text and vector functions).
	ErrUnsupported = errors.New("unsupported")
	// ErrArgCount: a built-in function called with the wrong number of
	// arguments.
	ErrArgCount = errors.New("wrong number of arguments")
	// ErrAggregatePlacement: an aggregate where it may not appear (WHERE,
	// GROUP BY, ORDER BY, inside another aggregate) or evaluated as a
	// scalar.
	ErrAggregatePlacement = errors.New("misplaced aggregate")
	// ErrUndeclaredParam: a @parameter without a value.
	ErrUndeclaredParam = errors.New("undeclared parameter")
	// ErrUnbound: a name that no FROM alias binds.
	ErrUnbound = errors.New("unbound name")
	// ErrBadArgument: an argument that must be a constant of some form is
	// not (a LIKE ESCAPE of more than one character, a negative TOP).
	ErrBadArgument = errors.New("bad argument")

	// ErrUDF: a user-defined function failed (threw, ran past its time,
	// or does not exist). The executor's UDF hook returns it; Eval passes
	// the hook's errors through as they are.
	ErrUDF = errors.New("user-defined function failed")

	// ErrNeedsExecutor: Eval met a subquery, UDF call or aggregate and the
	// Env has no hook to evaluate it.
	ErrNeedsExecutor = errors.New("needs the query executor")
	// ErrMissingEnv: a function needs a clock or a random source and the
	// Env has none.
	ErrMissingEnv = errors.New("missing environment")
)

// Error is a query error at a position. Its text reads
// "invalid query at line 1, column 20: unknown function FOO" (or
// "... : needs the query executor: ..." for the caller errors).
type Error struct {
	Pos  token.Pos
	Kind error // one of the sentinels above
	Msg  string
}

func (e *Error) Error() string {
	if e.Kind == ErrNeedsExecutor || e.Kind == ErrMissingEnv {
		return fmt.Sprintf("cannot evaluate at %s: %s", e.Pos, e.Msg)
	}
	return fmt.Sprintf("invalid query at %s: %s", e.Pos, e.Msg)
}

// Unwrap returns the kind and, for query errors, ErrInvalidQuery.
func (e *Error) Unwrap() []error {
	if e.Kind == ErrNeedsExecutor || e.Kind == ErrMissingEnv {
		return []error{e.Kind}
	}
	return []error{ErrInvalidQuery, e.Kind}
}

func errorf(pos token.Pos, kind error, format string, args ...any) *Error {
	return &Error{Pos: pos, Kind: kind, Msg: fmt.Sprintf(format, args...)}
}
