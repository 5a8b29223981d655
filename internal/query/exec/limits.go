package exec

import (
	"errors"
	"sync/atomic"

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
	// Held, when set, is the memory account of the page: every partition
	// run of the page counts in it the bytes it holds (the groups of GROUP
	// BY and aggregates, the rows ORDER BY and DISTINCT keep), so that
	// its bound is the page's, whatever the number of partitions and
	// however many run at once. Give each page a fresh one. nil: no
	// bound.
	Held *Held
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

// Held is the memory account of one page of a query: the bytes its
// partition runs hold, estimated, together. It is safe for concurrent use
// by the partition runs of the page.
type Held struct {
	max  int64
	grow func(n int64) error
	n    atomic.Int64
}

// NewHeld returns the account of a page that may hold max bytes (0: no
// bound). grow, when not nil, is told of every change of the page's bytes
// first (n > 0: more held, n < 0: released) and may refuse more with an
// error, which ends the run and is returned as is: a wider account, such
// as the server's for all its running queries.
func NewHeld(max int64, grow func(n int64) error) *Held {
	return &Held{max: max, grow: grow}
}

// Bytes returns the bytes the page holds now: what the caller of a wider
// account releases from it once the page is over.
func (h *Held) Bytes() int64 { return h.n.Load() }

// hold counts n more bytes (n < 0: fewer) that a run of the page holds
// for what ("groups", "rows") at pos.
func (l *Limits) hold(pos token.Pos, what string, n int64) error {
	h := l.Held
	if h == nil || n == 0 {
		return nil
	}
	if n < 0 {
		h.n.Add(n)
		if h.grow != nil {
			h.grow(n)
		}
		return nil
	}
	if u := h.n.Add(n); h.max > 0 && u > h.max {
		h.n.Add(-n)
		w := l.What
		if w == "" {
			w = "the query"
		}
		return queryError(pos, eval.ErrBudget, "%s holds more than its memory budget of %d bytes of %s across the partitions of a page; narrow it with a filter or a partition key", w, h.max, what)
	}
	if h.grow != nil {
		if err := h.grow(n); err != nil {
			h.n.Add(-n)
			return err
		}
	}
	return nil
}
