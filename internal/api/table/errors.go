package table

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/parsecdb/parsec/internal/engine"
)

// tableError is an error answered in the Table service's shape: a status,
// the service's error code (also sent as x-ms-error-code) and a message.
type tableError struct {
	status int
	code   string
	msg    string
	// cause, when set, is the error this one reports.
	cause error
}

func (e *tableError) Error() string { return e.code + ": " + e.msg }
func (e *tableError) Unwrap() error { return e.cause }

func newErr(status int, code, format string, args ...any) *tableError {
	return &tableError{status: status, code: code, msg: fmt.Sprintf(format, args...)}
}

// The service's error codes this server answers with
// (learn.microsoft.com/rest/api/storageservices/table-service-error-codes,
// and aztables error_codes.go).
const (
	codeInvalidInput              = "InvalidInput"
	codeOutOfRangeInput           = "OutOfRangeInput"
	codeInvalidResourceName       = "InvalidResourceName"
	codeResourceNotFound          = "ResourceNotFound"
	codeTableNotFound             = "TableNotFound"
	codeTableAlreadyExists        = "TableAlreadyExists"
	codeEntityAlreadyExists       = "EntityAlreadyExists"
	codeUpdateConditionNotSatisf  = "UpdateConditionNotSatisfied"
	codePropertiesNeedValue       = "PropertiesNeedValue"
	codeEntityTooLarge            = "EntityTooLarge"
	codeTooManyProperties         = "TooManyProperties"
	codePropertyNameInvalid       = "PropertyNameInvalid"
	codePropertyNameTooLong       = "PropertyNameTooLong"
	codeKeyValueTooLarge          = "KeyValueTooLarge"
	codePropertyValueTooLarge     = "PropertyValueTooLarge"
	codeInvalidValueType          = "InvalidValueType"
	codeInvalidDuplicateRow       = "InvalidDuplicateRow"
	codeAuthenticationFailed      = "AuthenticationFailed"
	codeAuthorizationPermMismatch = "AuthorizationPermissionMismatch"
	codeMissingRequiredHeader     = "MissingRequiredHeader"
	codeUnsupportedHTTPVerb       = "UnsupportedHttpVerb"
	codeTooManyRequests           = "TooManyRequests"
	codeServerBusy                = "ServerBusy"
	codeInternalError             = "InternalError"
	codeOperationTimedOut         = "OperationTimedOut"
	codeRequestBodyTooLarge       = "RequestBodyTooLarge"
	codeNotImplemented            = "NotImplemented"
	codeInvalidHeaderValue        = "InvalidHeaderValue"
	codeInvalidQueryParameter     = "InvalidQueryParameterValue"
)

func errInput(format string, args ...any) *tableError {
	return newErr(http.StatusBadRequest, codeInvalidInput, format, args...)
}

func errEntityNotFound() *tableError {
	return newErr(http.StatusNotFound, codeResourceNotFound, "The specified resource does not exist.")
}

func errTableNotFound(name string) *tableError {
	return newErr(http.StatusNotFound, codeTableNotFound, "The table specified does not exist: %s.", name)
}

func errCondition() *tableError {
	return newErr(http.StatusPreconditionFailed, codeUpdateConditionNotSatisf, "The update condition specified in the request was not satisfied.")
}

// toTableError maps any error to the Table error it is answered with: an
// engine error by its sentinel (a throttled request keeps its retry-after
// through retryAfter).
func toTableError(err error) *tableError {
	var te *tableError
	if errors.As(err, &te) {
		return te
	}
	wrap := func(status int, code, msg string) *tableError {
		return &tableError{status: status, code: code, msg: msg, cause: err}
	}
	switch {
	case errors.Is(err, engine.ErrThrottled):
		return wrap(http.StatusTooManyRequests, codeTooManyRequests, "The request rate is too large: "+err.Error())
	case errors.Is(err, engine.ErrNotFound):
		return wrap(http.StatusNotFound, codeResourceNotFound, "The specified resource does not exist.")
	case errors.Is(err, engine.ErrConflict):
		return wrap(http.StatusConflict, codeEntityAlreadyExists, "The specified entity already exists.")
	case errors.Is(err, engine.ErrPreconditionFailed):
		return wrap(http.StatusPreconditionFailed, codeUpdateConditionNotSatisf, "The update condition specified in the request was not satisfied.")
	case errors.Is(err, engine.ErrTooLarge):
		return wrap(http.StatusBadRequest, codeEntityTooLarge, "The entity is larger than the maximum allowed size (2 MB): "+err.Error())
	case errors.Is(err, engine.ErrLogicalPartitionFull):
		return wrap(http.StatusForbidden, "PartitionKeyQuotaExceeded", "The partition key has reached its storage quota: "+err.Error())
	case errors.Is(err, engine.ErrBadRequest), errors.Is(err, engine.ErrPartitionKeyMismatch):
		return wrap(http.StatusBadRequest, codeInvalidInput, err.Error())
	case errors.Is(err, engine.ErrUnavailable), errors.Is(err, engine.ErrPartitionGone), errors.Is(err, engine.ErrRetryWith):
		return wrap(http.StatusServiceUnavailable, codeServerBusy, "The server is busy: "+err.Error())
	case errors.Is(err, engine.ErrTimeout):
		return wrap(http.StatusInternalServerError, codeOperationTimedOut, "The operation could not be completed within the permitted time: "+err.Error())
	case errors.Is(err, engine.ErrQuotaExceeded):
		return wrap(http.StatusForbidden, "QuotaExceeded", err.Error())
	}
	return wrap(http.StatusInternalServerError, codeInternalError, "The server encountered an internal error: "+err.Error())
}

// retryAfterMs is the x-ms-retry-after-ms of a throttled request, "" for
// any other error.
func retryAfterMs(err error) string {
	var th *engine.ThrottledError
	if errors.As(err, &th) {
		ms := th.RetryAfter.Milliseconds()
		if ms < 1 {
			ms = 1
		}
		return strconv.FormatInt(ms, 10)
	}
	if errors.Is(err, engine.ErrThrottled) {
		return "1000"
	}
	return ""
}

// errorBody is the odata.error JSON of an error.
func errorBody(e *tableError, requestID string) []byte {
	msg := e.msg
	if requestID != "" {
		msg += "\nRequestId:" + requestID
	}
	return appendErrorJSON(nil, e.code, msg)
}

func appendErrorJSON(b []byte, code, msg string) []byte {
	b = append(b, `{"odata.error":{"code":`...)
	b = appendJSONString(b, code)
	b = append(b, `,"message":{"lang":"en-US","value":`...)
	b = appendJSONString(b, msg)
	return append(b, `}}}`...)
}
