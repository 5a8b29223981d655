package exec

import (
	"errors"

	"github.com/parsecdb/parsec/internal/query/eval"
	"github.com/parsecdb/parsec/internal/query/token"
)

// Limits bound the work, the memory and the size of one page of a query,
// or of one evaluation of a patch condition. Everything is counted, not
// timed, so that a run is replayable: the only clock is whatever Check
// consults. The zero Limits bounds nothing.
type Limits struct {
	// MaxSteps bounds the evaluation steps (expression nodes evaluated and
	// FROM tuples bound) of each partition's run; 0: no bound. Exceeding it
	// is a query error wrapping eval.ErrBudget.
	MaxSteps int64
	// MaxBytes bounds the bytes of values (strings, arrays, objects) built
	// while evaluating one document; 0: no bound. Exceeding it is a query
	// error wrapping eval.ErrBudget.
	MaxBytes int64
	// MaxPageBytes bounds the serialized size of a page's rows (estimated
	// with eval.JSONSize): a page ends, with a continuation, before the row
	// that would pass it, but it always holds at least one row. It also
	// bounds what ORDER BY and DISTINCT keep per partition. 0: no bound.
	MaxPageBytes int
	// MaxHeldBytes bounds the bytes of groups a GROUP BY or aggregate
	// partition run holds; 0: no bound. Exceeding it is a query error
	// wrapping eval.ErrBudget.
	MaxHeldBytes int64
	// Check, when set, is called about every eval.CheckEvery steps of each
	// partition's run (from several goroutines when the caller runs
	// partitions in parallel). An error ends the run: ErrPageTime ends a
	// streaming page early with a continuation, after the last row
	// evaluated in full; any other error (a cancelled request) is
	// returned as is.
	Check func() error
	// What names the query in budget errors ("the query", "the patch
	// condition").
	What string

	// raw lets a streaming run copy documents from a RawSource (ExecJSON).
	raw bool
}

// ErrPageTime is returned by Limits.Check when a page's time is spent. A
// streaming page then ends early; other shapes, which must read every
// partition in full for a page, and a page that evaluated no row in full,
// return it (wrapped): the query cannot progress within the time.
var ErrPageTime = errors.New("the page's time budget is spent")

// budget returns a fresh budget for one partition's run, or nil.
func (l *Limits) budget() *eval.Budget {
	if l == nil || l.MaxSteps == 0 && l.MaxBytes == 0 && l.Check == nil {
		return nil
	}
	return &eval.Budget{MaxSteps: l.MaxSteps, MaxBytes: l.MaxBytes, Check: l.Check, What: l.What}
}

// env returns the plan's base scope with budget b.
func (p *Plan) env(b *eval.Budget) *eval.Env {
	if b == nil {
		return p.base
	}
	e := *p.base
	e.Budget = b
	return &e
}

// step counts one FROM tuple bound in env.
func step(env *eval.Env, pos token.Pos) error {
	if b := env.Budget; b != nil {
		return b.Step(pos, 1)
	}
	return nil
}

// charge counts n bytes held in env.
func charge(env *eval.Env, pos token.Pos, n int64) error {
	if b := env.Budget; b != nil {
		return b.Charge(pos, n)
	}
	return nil
}

// heldError is the error for a run that holds more than MaxHeldBytes.
func (l *Limits) heldError(pos token.Pos, what string) error {
	w := l.What
	if w == "" {
		w = "the query"
	}
	return queryError(pos, eval.ErrBudget, "%s holds more than its memory budget of %d bytes of %s in one partition; narrow it with a filter or a partition key", w, l.MaxHeldBytes, what)
}
