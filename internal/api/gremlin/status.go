package gremlin

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/parsecdb/parsec/internal/api/gremlin/lang"
	"github.com/parsecdb/parsec/internal/api/gremlin/traversal"
	"github.com/parsecdb/parsec/internal/engine"
)

// Status codes of the Gremlin Server protocol (TinkerPop's
// ResponseStatusCode).
const (
	StatusSuccess             = 200
	StatusNoContent           = 204
	StatusPartialContent      = 206
	StatusUnauthorized        = 401
	StatusForbidden           = 403
	StatusAuthenticate        = 407
	StatusMalformedRequest    = 498
	StatusInvalidArguments    = 499
	StatusServerError         = 500
	StatusEvaluationError     = 597
	StatusServerTimeout       = 598
	StatusSerializationError  = 599
	statusCosmosNotFound      = 404
	statusCosmosThrottled     = 429
	statusCosmosBadRequest    = 400
	statusCosmosForbidden     = 403
	statusCosmosTimeout       = 408
	statusCosmosTooLarge      = 413
	statusCosmosUnavailable   = 503
	statusCosmosConflict      = 409
	statusCosmosPrecondition  = 412
	statusCosmosInternal      = 500
	statusCosmosUnauthorized  = 401
	substatusCosmosThrottled  = 3200
	maxRetryAfterMillisecond  = 60_000
	defaultThrottleRetryAfter = 100 * time.Millisecond
)

// Status attributes Cosmos DB sends on every response (gremlin/headers.md).
const (
	AttrRequestCharge      = "x-ms-request-charge"
	AttrTotalRequestCharge = "x-ms-total-request-charge"
	AttrStatusCode         = "x-ms-status-code"
	AttrSubstatusCode      = "x-ms-substatus-code"
	AttrActivityID         = "x-ms-activity-id"
	AttrServerTime         = "x-ms-server-time-ms"
	AttrTotalServerTime    = "x-ms-total-server-time-ms"
	AttrRetryAfter         = "x-ms-retry-after-ms"
)

// A failure is an error as the protocol answers it: the Gremlin status
// code, Cosmos's x-ms-status-code (and substatus), the message, and for
// a 429 how long to wait.
type failure struct {
	code       int
	cosmos     int
	substatus  int
	message    string
	retryAfter time.Duration
}

func (f *failure) Error() string { return f.message }

// fail makes a failure.
func fail(code, cosmos int, format string, args ...any) *failure {
	return &failure{code: code, cosmos: cosmos, message: fmt.Sprintf(format, args...)}
}

// errReadOnly is a write attempted on a connection authenticated with the
// read-only key.
var errReadOnly = errors.New("the read-only key cannot write: this traversal adds, changes or drops elements; authenticate with the primary key to write")

// classify maps an error of a request to its failure: this is the one
// place where errors become status codes.
//
// Cosmos DB answers a request the storage refused (throttled, not found,
// conflict, too large) with Gremlin status 500 and the storage's status in
// x-ms-status-code; for a 429 x-ms-substatus-code 3200 and
// x-ms-retry-after-ms, a .NET TimeSpan string such as "00:00:00.1000000"
// (supplyon/gremcos ErrorHandling.md shows such a response;
// azure-databases-docs gremlin/headers.md describes the attributes). A
// script that does not parse, or uses a step that is not supported, is
// 597 SERVER_ERROR_EVALUATION as Gremlin Server answers it, with 400.
func classify(err error) *failure {
	var f *failure
	if errors.As(err, &f) {
		return f
	}
	msg := err.Error()
	var te *engine.ThrottledError
	switch {
	case errors.As(err, &te):
		f := fail(StatusServerError, statusCosmosThrottled, "Request rate is large: %s", msg)
		f.substatus = substatusCosmosThrottled
		f.retryAfter = te.RetryAfter
		if f.retryAfter <= 0 {
			f.retryAfter = defaultThrottleRetryAfter
		}
		return f
	case errors.Is(err, engine.ErrThrottled):
		f := fail(StatusServerError, statusCosmosThrottled, "Request rate is large: %s", msg)
		f.substatus = substatusCosmosThrottled
		f.retryAfter = defaultThrottleRetryAfter
		return f
	case errors.Is(err, errReadOnly):
		return fail(StatusUnauthorized, statusCosmosForbidden, "%s", msg)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, engine.ErrTimeout), errors.Is(err, traversal.ErrTimeout):
		return fail(StatusServerTimeout, statusCosmosTimeout, "the traversal did not finish in time: %s", msg)
	case errors.Is(err, context.Canceled):
		return fail(StatusServerError, statusCosmosUnavailable, "the request was cancelled: %s", msg)
	case errors.Is(err, engine.ErrNotFound):
		return fail(StatusServerError, statusCosmosNotFound, "Resource Not Found: %s", msg)
	case errors.Is(err, engine.ErrConflict):
		return fail(StatusServerError, statusCosmosConflict, "Resource with specified id or name already exists: %s", msg)
	case errors.Is(err, engine.ErrPreconditionFailed):
		return fail(StatusServerError, statusCosmosPrecondition, "%s", msg)
	case errors.Is(err, engine.ErrTooLarge), errors.Is(err, engine.ErrLogicalPartitionFull):
		return fail(StatusServerError, statusCosmosTooLarge, "%s", msg)
	case errors.Is(err, engine.ErrQuotaExceeded):
		return fail(StatusServerError, statusCosmosForbidden, "%s", msg)
	case errors.Is(err, engine.ErrUnavailable), errors.Is(err, engine.ErrPartitionGone), errors.Is(err, engine.ErrRetryWith):
		return fail(StatusServerError, statusCosmosUnavailable, "%s", msg)
	case errors.Is(err, engine.ErrCorrupt), errors.Is(err, engine.ErrInternal):
		return fail(StatusServerError, statusCosmosInternal, "%s", msg)
	case errors.Is(err, engine.ErrBadRequest), errors.Is(err, engine.ErrPartitionKeyMismatch):
		return fail(StatusServerError, statusCosmosBadRequest, "%s", msg)
	}
	var le *lang.LimitError
	if errors.As(err, &le) {
		// Cosmos answers a script past its limits 429 (limits.md); a
		// retry would fail alike, so no retry-after is given.
		return fail(StatusEvaluationError, statusCosmosThrottled, "%s", msg)
	}
	var te2 *traversal.Error
	if errors.As(err, &te2) && te2.Code == traversal.CodeTooMany {
		return fail(StatusEvaluationError, statusCosmosThrottled, "%s", msg)
	}
	// A script that does not parse or passes a parser limit, a step or
	// argument the evaluator does not support, a value of the wrong
	// type: the traversal is wrong, not the server.
	return fail(StatusEvaluationError, statusCosmosBadRequest, "%s", msg)
}

// timeSpan writes d as a .NET TimeSpan ("hh:mm:ss.fffffff"), the form of
// Cosmos's x-ms-retry-after-ms attribute.
func timeSpan(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	ticks := d.Nanoseconds() / 100
	h := ticks / (3600 * 1e7)
	ticks -= h * 3600 * 1e7
	m := ticks / (60 * 1e7)
	ticks -= m * 60 * 1e7
	s := ticks / 1e7
	ticks -= s * 1e7
	return fmt.Sprintf("%02d:%02d:%02d.%07d", h, m, s, ticks)
}
