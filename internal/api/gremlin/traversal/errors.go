package traversal

import (
	"errors"
	"fmt"
)

// Sentinels, one per meaning; an *Error wraps one of them (or a store's
// error) and carries the status code the server answers with.
var (
	// ErrUnsupported: a step, an argument form or a modulator the
	// evaluator does not implement (or Cosmos does not support).
	ErrUnsupported = errors.New("unsupported")
	// ErrInvalid: a step used with arguments of the wrong kind or number,
	// or applied to a value it cannot take (values() on a number).
	ErrInvalid = errors.New("invalid traversal")
	// ErrPartitionKey: a vertex without the partition key property, or a
	// write that would change or remove it.
	ErrPartitionKey = errors.New("partition key")
	// ErrRepeatLimit: repeat() ran more iterations than allowed.
	ErrRepeatLimit = errors.New("repeat iteration limit exceeded")
	// ErrTimeout: the traversal ran past its time limit.
	ErrTimeout = errors.New("traversal timed out")
	// ErrMemory: traversers and side effects outgrew the memory budget.
	ErrMemory = errors.New("traversal memory budget exceeded")
	// ErrTooManyResults: more results than Options.MaxResults.
	ErrTooManyResults = errors.New("too many results")
	// ErrStore: the store failed a read or a write.
	ErrStore = errors.New("store error")
)

// Status codes carried by Error.Code. Bad traversals answer 400 (Cosmos
// answers a GraphSyntaxException or GraphRuntimeException with 400/597 in
// x-ms-status-code); a limit answers 429, as Cosmos's limits page says
// "hitting a limit returns status 429"; store errors keep the store's
// code where the server knows it, else 500.
const (
	CodeBadRequest = 400
	CodeTooMany    = 429
	CodeStore      = 500
)

// Error is the evaluator's error: a status code for the server, the step
// that failed (as written: "repeat", "addV"), a message for the client, and
// the cause (one of the sentinels above, or a store error).
type Error struct {
	Code    int
	Step    string
	Message string
	Err     error
}

func (e *Error) Error() string {
	if e.Step != "" {
		return fmt.Sprintf("%s(): %s", e.Step, e.Message)
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

func codeOf(sentinel error) int {
	switch sentinel {
	case ErrRepeatLimit, ErrTimeout, ErrMemory, ErrTooManyResults:
		return CodeTooMany
	case ErrStore:
		return CodeStore
	}
	return CodeBadRequest
}

func newErr(sentinel error, step, format string, args ...any) *Error {
	return &Error{Code: codeOf(sentinel), Step: step, Message: fmt.Sprintf(format, args...), Err: sentinel}
}

func unsupported(step, format string, args ...any) *Error {
	return newErr(ErrUnsupported, step, format, args...)
}

func invalid(step, format string, args ...any) *Error {
	return newErr(ErrInvalid, step, format, args...)
}
