package cosmos

import (
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"strings"

	"github.com/parsecdb/parsec/internal/engine"
)

// apiError is an error decided in this layer (auth, headers, routing).
type apiError struct {
	status int
	sub    int
	code   string
	msg    string
}

func (e *apiError) Error() string { return e.msg }

func errBadRequest(format string, args ...any) error {
	return &apiError{status: http.StatusBadRequest, code: "BadRequest", msg: fmt.Sprintf(format, args...)}
}

func errNotFound(format string, args ...any) error {
	return &apiError{status: http.StatusNotFound, code: "NotFound", msg: fmt.Sprintf(format, args...)}
}

func errMethod(method, what string) error {
	return &apiError{status: http.StatusMethodNotAllowed, code: "MethodNotAllowed", msg: fmt.Sprintf("%s is not allowed on %s", method, what)}
}

func errUnauthorized(format string, args ...any) error {
	return &apiError{status: http.StatusUnauthorized, code: "Unauthorized", msg: fmt.Sprintf(format, args...)}
}

func errForbidden(format string, args ...any) error {
	return &apiError{status: http.StatusForbidden, code: "Forbidden", msg: fmt.Sprintf(format, args...)}
}

// statusRetryWith is Cosmos's 449: a write that conflicted with a
// concurrent one and may succeed if retried.
const statusRetryWith = 449

// Cosmos substatus codes.
const (
	subPartitionKeyMismatch  = 1001
	subPartitionKeyRangeGone = 1002
	subLogicalPartitionFull  = 1014
	subIncorrectContainerRid = 1024
	subRequestRateTooLarge   = 3200
)

// statusOf maps an error to its status, substatus and code. This is the one
// place where engine errors become HTTP: a single request's error and each
// failed operation of a batch.
func statusOf(err error) (status, sub int, code string) {
	var ae *apiError
	switch {
	case errors.As(err, &ae):
		return ae.status, ae.sub, ae.code
	case errors.Is(err, engine.ErrPartitionKeyMismatch):
		return http.StatusBadRequest, subPartitionKeyMismatch, "BadRequest"
	case errors.Is(err, engine.ErrBadRequest):
		return http.StatusBadRequest, 0, "BadRequest"
	case errors.Is(err, engine.ErrNotFound):
		return http.StatusNotFound, 0, "NotFound"
	case errors.Is(err, engine.ErrConflict):
		return http.StatusConflict, 0, "Conflict"
	case errors.Is(err, engine.ErrPreconditionFailed):
		return http.StatusPreconditionFailed, 0, "PreconditionFailed"
	case errors.Is(err, engine.ErrTooLarge):
		return http.StatusRequestEntityTooLarge, 0, "RequestEntityTooLarge"
	case errors.Is(err, engine.ErrPartitionGone):
		return http.StatusGone, subPartitionKeyRangeGone, "Gone"
	case errors.Is(err, engine.ErrThrottled):
		return http.StatusTooManyRequests, subRequestRateTooLarge, "TooManyRequests"
	case errors.Is(err, engine.ErrQuotaExceeded):
		return http.StatusForbidden, 0, "Forbidden"
	case errors.Is(err, engine.ErrLogicalPartitionFull):
		return http.StatusForbidden, subLogicalPartitionFull, "Forbidden"
	case errors.Is(err, engine.ErrFailedDependency):
		return http.StatusFailedDependency, 0, "FailedDependency"
	case errors.Is(err, engine.ErrRetryWith):
		return statusRetryWith, 0, "RetryWith"
	case errors.Is(err, engine.ErrTimeout):
		return http.StatusRequestTimeout, 0, "RequestTimeout"
	case errors.Is(err, engine.ErrNotLeader), errors.Is(err, engine.ErrOutcomeUnknown), errors.Is(err, engine.ErrUnavailable):
		// A follower's refusal that could not be sent on, a write whose
		// outcome is unknown, and a node that cannot serve: 503 alike.
		return http.StatusServiceUnavailable, 0, "ServiceUnavailable"
	case errors.Is(err, engine.ErrCorrupt), errors.Is(err, engine.ErrInternal):
		// A 500 that no retry mends; the message keeps its sentinel
		// ("stored data is damaged: ..."), which messageOf leaves in.
		return http.StatusInternalServerError, 0, "InternalServerError"
	}
	return http.StatusInternalServerError, 0, "InternalServerError"
}

// successStatus is the status of an item operation that succeeded: 201 when
// it created its item, 204 for a delete, 200 otherwise (a read, a replace, a
// patch, or an upsert over an existing item). A failed operation's status
// comes from statusOf.
func successStatus(kind engine.OpKind, created bool) int {
	switch {
	case created:
		return http.StatusCreated
	case kind == engine.OpDelete:
		return http.StatusNoContent
	}
	return http.StatusOK
}

// messageOf strips the sentinel prefix ("bad request: ...") from an engine
// error: the code already says it.
func messageOf(err error) string {
	msg := err.Error()
	if errors.Is(err, engine.ErrTooLarge) {
		// The service's words, which clients match on, then the detail.
		detail := strings.TrimPrefix(msg, engine.ErrTooLarge.Error())
		if detail = strings.TrimPrefix(detail, ": "); detail == "" {
			return engine.MsgTooLarge
		}
		return engine.MsgTooLarge + " (" + detail + ")"
	}
	for _, s := range []error{engine.ErrBadRequest, engine.ErrPartitionKeyMismatch, engine.ErrNotFound, engine.ErrConflict,
		engine.ErrPreconditionFailed, engine.ErrTooLarge, engine.ErrPartitionGone, engine.ErrNotLeader, engine.ErrOutcomeUnknown, engine.ErrUnavailable, engine.ErrFailedDependency,
		engine.ErrLogicalPartitionFull} {
		p := s.Error() + ": "
		if len(msg) > len(p) && msg[:len(p)] == p {
			return msg[len(p):]
		}
	}
	return msg
}

func (s *Server) writeError(req *request, err error) {
	if done, ferr := s.forward(req, err); done {
		return
	} else if ferr != nil {
		err = fmt.Errorf("%w: %v (%w)", engine.ErrUnavailable, ferr, err)
	}
	status, sub, code := statusOf(err)
	if status == http.StatusInternalServerError {
		// Damaged storage or a bug: the operator must hear of it, not only
		// the client.
		log.Printf("parsec: %s %s answered 500: %v", req.r.Method, req.r.URL.Path, err)
	}
	h := req.w.Header()
	if sub != 0 {
		h.Set("x-ms-substatus", fmt.Sprint(sub))
	}
	if status == http.StatusNotModified {
		s.writeJSON(req, status, nil)
		return
	}
	var body []byte
	var te *engine.ThrottledError
	if errors.As(err, &te) {
		ms := te.RetryAfter.Milliseconds()
		if ms < 1 {
			ms = 1
		}
		h.Set("x-ms-retry-after-ms", fmt.Sprint(ms))
		body, _ = json.Marshal(struct {
			Code              string  `json:"code"`
			Message           string  `json:"message"`
			PartitionKeyRange string  `json:"partitionKeyRangeId"`
			HotPartitionKey   string  `json:"hotPartitionKey,omitempty"`
			HotShare          float64 `json:"hotPartitionKeyShare,omitempty"`
			RetryAfterMs      int64   `json:"retryAfterMs"`
		}{code, te.Error(), te.RangeID, te.HotKey, te.HotShare, ms})
	} else {
		body, _ = json.Marshal(struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		}{code, messageOf(err)})
	}
	s.writeJSON(req, status, body)
}
