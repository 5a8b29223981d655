package engine

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error the engine returns for a client's request wraps
// exactly one of these; the message after the sentinel says what was wrong.
var (
	ErrBadRequest           = errors.New("bad request")
	ErrPartitionKeyMismatch = errors.New("partition key mismatch")
	ErrNotFound             = errors.New("not found")
	ErrConflict             = errors.New("conflict")
	ErrPreconditionFailed   = errors.New("precondition failed")
	ErrTooLarge             = errors.New("request entity too large")
	ErrPartitionGone        = errors.New("partition key range gone")
	ErrUnavailable          = errors.New("service unavailable")
	ErrFailedDependency     = errors.New("failed dependency")
)

func badRequest(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrBadRequest}, args...)...)
}

func notFound(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrNotFound}, args...)...)
}

func conflict(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrConflict}, args...)...)
}
