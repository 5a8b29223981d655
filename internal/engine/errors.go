package engine

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"github.com/parsecdb/parsec/internal/storage"
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
	// ErrUnavailable is a request this node cannot serve now, and that
	// had no effect or is being retried: its storage failed or is full,
	// its group has no quorum, it is closing. ErrNotLeader and
	// ErrOutcomeUnknown name two narrower cases.
	ErrUnavailable = errors.New("service unavailable")
	// ErrNotLeader is a write refused by a replica that does not lead its
	// partition's (or the catalog's) group: it had no effect, and the
	// error wraps the replication.NotLeaderError that names the leader to
	// send it to. A proposal that settled as never committed, its
	// leadership having moved while it was in flight, is one too.
	ErrNotLeader error = unavailableKind("not the leader")
	// ErrOutcomeUnknown is a write whose proposal may or may not have
	// committed (its leader lost the leadership or stopped, or it timed
	// out, and it could not be settled): retrying it may apply it twice.
	// The error wraps the log's cause (replication.ErrAmbiguous,
	// ErrTimeout, ErrStopped).
	ErrOutcomeUnknown       error = unavailableKind("outcome unknown")
	ErrFailedDependency           = errors.New("failed dependency")
	ErrLogicalPartitionFull       = errors.New("logical partition full")
	ErrThrottled                  = errors.New("request rate is large")
	// ErrQuotaExceeded is a resource past its quota (403), such as a
	// container's count of scripts of one kind.
	ErrQuotaExceeded = errors.New("resource quota exceeded")
	// ErrRetryWith is a script whose logical partition kept changing
	// while it ran (Cosmos's 449): retrying it may succeed.
	ErrRetryWith = errors.New("retry with")
	// ErrTimeout is a script stopped at its time limit (408).
	ErrTimeout = errors.New("request timeout")
	// ErrCorrupt is stored data that cannot be decoded: an item value, a
	// partition or logical partition state, an index entry, or a record that
	// the engine wrote and reads back damaged (or an index that disagrees
	// with its items). No retry mends it; the message names the key.
	ErrCorrupt = errors.New("stored data is damaged")
	// ErrInternal is a broken invariant of the engine's own code, returned
	// rather than panicked where a panic could take the server down (a
	// partition loop, a query running in parallel) instead of failing one
	// request. Broken invariants elsewhere panic with "BUG:".
	ErrInternal = errors.New("internal error")
)

// unavailableKind is a narrower kind of ErrUnavailable: an error that
// wraps one also matches ErrUnavailable, so that a layer that knows only
// ErrUnavailable (a 503, which clients retry after a delay) answers as it
// did before the kinds were named.
type unavailableKind string

func (k unavailableKind) Error() string { return string(k) }

func (k unavailableKind) Is(target error) bool { return target == ErrUnavailable }

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
	// Reason, when set, says what else than the budget refused the
	// request (too many scripts running at once).
	Reason string
}

func (e *ThrottledError) Error() string {
	if e.Reason != "" {
		return fmt.Sprintf("%v: %s; retry after %d ms", ErrThrottled, e.Reason, e.RetryAfter.Milliseconds())
	}
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

// MsgBadContinuation is the service's message for a continuation token it
// cannot use, which clients match on; badContinuation adds what was wrong.
const MsgBadContinuation = "The continuation token specified in the request is malformed. Re-run the query without it and iterate."

// MsgTooLarge is the service's message for a request over its size limit
// (413 RequestEntityTooLarge); the API adds the limit that was passed.
const MsgTooLarge = "Request size is too large"

// MsgBatchKeyMismatch is the service's message for a transactional batch
// whose operations do not all have the request's partition key.
const MsgBatchKeyMismatch = "One or more operations within the batch request have a different partition key value than the request."

func badContinuation(format string, args ...any) error {
	return badRequest("%s (%s)", MsgBadContinuation, fmt.Sprintf(format, args...))
}

func notFound(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrNotFound}, args...)...)
}

func conflict(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrConflict}, args...)...)
}

// corrupt is an ErrCorrupt. The message names the damaged key or record.
func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
}

// internalError is an ErrInternal: a broken invariant where a panic could
// take the server down.
func internalError(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInternal}, args...)...)
}

// itemName names an item by its storage key, for errors: its id and
// effective partition key, or the key in hex if it is not an item key.
func itemName(k []byte) string {
	if e, id, ok := storage.SplitItemKey(k); ok {
		return fmt.Sprintf("item %q (effective partition key %s)", id, e)
	}
	return fmt.Sprintf("item key %x", k)
}

// logicalName names a logical partition's size record by its storage key,
// for errors: its partition key and effective partition key.
func logicalName(k []byte) string {
	if len(k) > 1+storage.RidLen {
		if e, pk, ok := bytes.Cut(k[1+storage.RidLen:], []byte{0}); ok {
			return fmt.Sprintf("logical partition %s (effective partition key %s)", pk, e)
		}
	}
	return fmt.Sprintf("logical partition record %x", k)
}
