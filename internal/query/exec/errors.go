package exec

import (
	"errors"
	"fmt"

	"github.com/parsecdb/parsec/internal/query/eval"
	"github.com/parsecdb/parsec/internal/query/token"
)

// Sentinels for the errors this package adds to eval's. Query errors are
// *eval.Error values (so they wrap eval.ErrInvalidQuery, a client error)
// whose Kind is one of these or one of eval's (ErrUnbound, ErrUnsupported,
// ErrBadArgument).
var (
	// ErrSelectStar: SELECT * where it has no single input to return
	// (with JOIN, without FROM, with GROUP BY).
	ErrSelectStar = errors.New("invalid SELECT *")
	// ErrAlias: two FROM/JOIN sources or two select items with the same
	// name, or a FROM/JOIN source that needs an alias and has none.
	ErrAlias = errors.New("invalid alias")
	// ErrNotGrouped: a select item of an aggregate or GROUP BY query refers
	// to the input outside an aggregate and outside the GROUP BY
	// expressions.
	ErrNotGrouped = errors.New("not in GROUP BY or aggregate")
	// ErrNotPlannable: QueryPlan cannot express the query in the
	// partitioned form the SDKs merge (an aggregate composed with other
	// expressions, as Cosmos DB's own planner reports it).
	ErrNotPlannable = errors.New("query cannot be planned for client-side merging")

	// ErrBadContinuation: a continuation state that does not decode or
	// belongs to another query. It is a client error (HTTP 400), and does
	// not wrap eval.ErrInvalidQuery.
	ErrBadContinuation = errors.New("invalid continuation")
)

func queryError(pos token.Pos, kind error, format string, args ...any) error {
	return &eval.Error{Pos: pos, Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

func badContinuation(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrBadContinuation}, args...)...)
}
