package eval

import (
	"errors"
	"unsafe"

	"github.com/parsecdb/parsec/internal/query/token"
)

// ErrBudget: an evaluation went over its Budget of steps or of bytes. It is
// a query error (the query asks for too much work or memory), HTTP 400.
var ErrBudget = errors.New("evaluation budget exceeded")

// Budget bounds the work and the memory of evaluations, deterministically:
// it counts steps (one per expression node Eval evaluates, and one per
// FROM tuple the executor binds) and bytes of values built (strings, arrays
// and objects made by functions, constructors, operators and subqueries),
// not time. Set Env.Budget to use one; a nil Budget bounds nothing.
//
// A Budget is not safe for concurrent use: give every goroutine its own.
// Envs made by Child share their parent's Budget.
type Budget struct {
	// MaxSteps bounds the steps; 0 means no bound.
	MaxSteps int64
	// MaxBytes bounds the bytes built since the last ResetBytes; 0 means
	// no bound.
	MaxBytes int64
	// Check, when set, is called about every CheckEvery steps; an error it
	// returns ends the evaluation and is returned as is (a cancelled
	// request, a spent time budget).
	Check func() error
	// What names what is being evaluated, for the errors: "the patch
	// condition", "the query".
	What string

	steps int64
	next  int64 // the step count at which step looks again
	bytes int64
}

// CheckEvery is how many steps pass between calls of Budget.Check.
const CheckEvery = 1024

// valueSize is the size of a Value, the unit of arrays and objects.
const valueSize = int64(unsafe.Sizeof(Value{}))

// Steps returns the steps counted so far.
func (b *Budget) Steps() int64 { return b.steps }

// Bytes returns the bytes counted since the last ResetBytes.
func (b *Budget) Bytes() int64 { return b.bytes }

// ResetBytes starts a new count of bytes built, for values that are no
// longer held (the executor calls it between documents).
func (b *Budget) ResetBytes() { b.bytes = 0 }

// Step counts n steps at pos and reports an error when the budget is spent
// or Check fails.
func (b *Budget) Step(pos token.Pos, n int64) error {
	if b.steps += n; b.steps < b.next {
		return nil
	}
	return b.slow(pos)
}

func (b *Budget) slow(pos token.Pos) error {
	if b.MaxSteps > 0 && b.steps > b.MaxSteps {
		return errorf(pos, ErrBudget, "%s exceeded its evaluation budget of %d steps (expressions evaluated and FROM rows bound); simplify it or bound its JOINs", b.what(), b.MaxSteps)
	}
	b.next = b.steps + CheckEvery
	if b.MaxSteps > 0 && b.next > b.MaxSteps+1 {
		b.next = b.MaxSteps + 1
	}
	if b.Check != nil {
		return b.Check()
	}
	return nil
}

// Charge counts n bytes built at pos.
func (b *Budget) Charge(pos token.Pos, n int64) error {
	if err := b.Fits(pos, n); err != nil {
		return err
	}
	b.bytes += n
	return nil
}

// Fits reports the error Charge would for n more bytes at pos, without
// counting them: a function whose result's size is known before it is
// built checks it first, so that it never allocates what the budget
// refuses.
func (b *Budget) Fits(pos token.Pos, n int64) error {
	if b.MaxBytes <= 0 || b.bytes+n <= b.MaxBytes {
		return nil
	}
	if n > b.MaxBytes {
		return errorf(pos, ErrBudget, "%s built a single value of %d bytes; its memory budget is %d bytes", b.what(), n, b.MaxBytes)
	}
	return errorf(pos, ErrBudget, "%s built more than its memory budget of %d bytes of values for one document", b.what(), b.MaxBytes)
}

// ChargeValue counts the bytes v adds over the values it is made of: the
// text of a string, the elements of an array or object.
func (b *Budget) ChargeValue(pos token.Pos, v Value) error {
	return b.Charge(pos, ShallowSize(v))
}

func (b *Budget) what() string {
	if b.What == "" {
		return "the evaluation"
	}
	return b.What
}

// ShallowSize is the memory a value adds over the values it holds: the
// bytes of a string, the slots of an array or object.
func ShallowSize(v Value) int64 {
	switch v.kind {
	case String:
		return int64(len(v.s))
	case Array, Object:
		return int64(len(v.a)) * valueSize
	}
	return 0
}

// JSONSize returns an estimate of the length of v.AppendJSON, exact but for
// escapes in strings and the digits of non-integral numbers, without
// building it.
func JSONSize(v Value) int {
	switch v.kind {
	case Undefined:
		return 0
	case Null:
		return 4
	case Bool:
		if v.n != 0 {
			return 4
		}
		return 5
	case Number:
		if v.exact {
			n, x := 1, int64(v.n)
			if x < 0 {
				n, x = 2, -x
			}
			for ; x >= 10; x /= 10 {
				n++
			}
			return n
		}
		return 12
	case String:
		return len(v.s) + 2
	case Array:
		n := 2 + max(len(v.a)-1, 0)
		for _, e := range v.a {
			n += JSONSize(e)
		}
		return n
	}
	// Object: "key":value pairs.
	n := 2 + max(len(v.a)/2-1, 0)
	for i := 0; i+1 < len(v.a); i += 2 {
		n += len(v.a[i].s) + 3 + JSONSize(v.a[i+1])
	}
	return n
}
