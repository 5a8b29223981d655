package engine

import (
	"errors"
	"fmt"
	"time"
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
	ErrLogicalPartitionFull = errors.New("logical partition full")
	ErrThrottled            = errors.New("request rate is large")
)

// ThrottledError is a request refused because its partition's request-unit
// budget is exhausted. It names the partition and the logical key that
// consumed most of the budget, so users can see what is hot.
type ThrottledError struct {
	RetryAfter time.Duration
	RangeID    string
	Range      RangeInfo
	RUs        float64 // the partition's budget, RU/s
	HotKey     string  // the partition key (JSON) that consumed the most recently
	HotShare   float64 // its share of the partition's recent consumption, 0..1
}

func (e *ThrottledError) Error() string {
	msg := fmt.Sprintf("%v: partition key range %s [%q, %q) has a budget of %.0f RU/s and it is exhausted; retry after %d ms",
		ErrThrottled, e.RangeID, e.Range.Min, e.Range.Max, e.RUs, e.RetryAfter.Milliseconds())
	if e.HotKey != "" {
		msg += fmt.Sprintf(". The hottest logical partition key is %s, with %.0f%% of this range's recent request units", e.HotKey, e.HotShare*100)
	}
	return msg
}

func (e *ThrottledError) Unwrap() error { return ErrThrottled }

func badRequest(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrBadRequest}, args...)...)
}

func notFound(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrNotFound}, args...)...)
}

func conflict(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrConflict}, args...)...)
}
