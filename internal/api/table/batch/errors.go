package batch

import (
	"errors"
	"fmt"
	"net/http"
)

// Service error codes that Parse reports. They are the codes Azure Table
// storage answers with for the same faults (Azurite
// src/table/errors/StorageErrorFactory.ts and batch/BatchErrorConstants.ts).
const (
	CodeInvalidInput        = "InvalidInput"
	CodeRequestBodyTooLarge = "RequestBodyTooLarge"
	CodeInvalidHeaderValue  = "InvalidHeaderValue"
)

// Sentinels, one per kind of fault; every *Error that Parse returns wraps
// exactly one of them, so callers may test with errors.Is.
var (
	// ErrContentType: the request's Content-Type is not multipart/mixed
	// with a boundary.
	ErrContentType = errors.New("batch content type is not multipart/mixed with a boundary")
	// ErrBodyTooLarge: the body exceeds Limits.MaxBodyBytes.
	ErrBodyTooLarge = errors.New("batch body exceeds the maximum size")
	// ErrTooManyOperations: the changeset holds more than
	// Limits.MaxOperations requests.
	ErrTooManyOperations = errors.New("changeset exceeds the maximum number of operations")
	// ErrChangesets: the batch holds no changeset, more than one, or a
	// part that is not a changeset.
	ErrChangesets = errors.New("batch must hold exactly one changeset")
	// ErrEmptyChangeset: the changeset holds no operation.
	ErrEmptyChangeset = errors.New("changeset holds no operation")
	// ErrHeaders: a part or sub-request has too many headers, a header
	// line that is too long, or a header line that is not "Name: value".
	ErrHeaders = errors.New("malformed or oversized headers")
	// ErrMalformed: the multipart framing or a sub-request's request line
	// cannot be read.
	ErrMalformed = errors.New("malformed batch body")
)

// Error is a fault in a batch request. Code and Status are what the
// service answers with; Index is the position of the operation the fault
// belongs to, or 0 when it belongs to the whole changeset (the service
// prefixes its message with "0:" in that case too).
//
// How the server reports it: when Status is 413 (RequestBodyTooLarge) or
// the content type is wrong the service answers the whole request with a
// plain error response; otherwise it answers 202 with a single failed
// changeset response, which FailurePart builds. InChangeset tells which.
type Error struct {
	Code    string
	Status  int
	Index   int
	Message string
	Err     error // one of the sentinels, possibly wrapping a cause
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s (%s): %v", e.Message, e.Code, e.Err)
	}
	return fmt.Sprintf("%s (%s)", e.Message, e.Code)
}

func (e *Error) Unwrap() error { return e.Err }

// InChangeset reports whether the service reports this fault inside a 202
// batch response (as one failed changeset response) rather than as a plain
// error response to the whole request.
func (e *Error) InChangeset() bool {
	return e.Status != http.StatusRequestEntityTooLarge && !errors.Is(e.Err, ErrContentType)
}

func invalid(index int, sentinel error, format string, args ...any) *Error {
	return &Error{
		Code:    CodeInvalidInput,
		Status:  http.StatusBadRequest,
		Index:   index,
		Message: fmt.Sprintf(format, args...),
		Err:     sentinel,
	}
}
