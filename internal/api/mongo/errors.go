package mongo

import (
	"errors"
	"fmt"

	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/mongo/mql"
)

// cmdError is a command failure sent as {ok:0, errmsg, code, codeName}.
type cmdError struct {
	Code     int32
	CodeName string
	Msg      string
	// Labels are the reply's errorLabels (TransientTransactionError).
	Labels []string
}

func (e *cmdError) Error() string { return e.CodeName + ": " + e.Msg }

func newErr(code int32, name, format string, args ...any) *cmdError {
	return &cmdError{Code: code, CodeName: name, Msg: fmt.Sprintf(format, args...)}
}

func badValue(format string, args ...any) *cmdError {
	return newErr(2, "BadValue", format, args...)
}

func typeMismatch(format string, args ...any) *cmdError {
	return newErr(14, "TypeMismatch", format, args...)
}

// missingField is mongod's error for a required field of a command that
// is absent (IDL parsing, code 40414).
func missingField(cmd, field string) *cmdError {
	return newErr(40414, "Location40414", "BSON field '%s.%s' is missing but a required field", cmd, field)
}

// wrongType is mongod's error for a command field of the wrong type (IDL
// parsing, code 14).
func wrongType(cmd, field string, v any, want string) *cmdError {
	return typeMismatch("BSON field '%s.%s' is the wrong type '%s', expected type '%s'", cmd, field, typeName(v), want)
}

// negativeField is mongod's error for a negative value of a field that
// must be at least 0 (IDL validators, code 51024).
func negativeField(field string, n int64) *cmdError {
	return newErr(51024, "Location51024", "BSON field '%s' value must be >= 0, actual value '%d'", field, n)
}

// Codes used by the handlers.
const (
	codeDuplicateKey = 11000
	codeThrottled    = 16500
)

// toCmdError maps any error of a handler to the reply's code: command
// errors and mql errors as they are, engine errors to the closest MongoDB
// code.
func toCmdError(err error) *cmdError {
	var ce *cmdError
	if errors.As(err, &ce) {
		return ce
	}
	var me *mql.Error
	if errors.As(err, &me) {
		return &cmdError{Code: me.Code, CodeName: me.CodeName, Msg: me.Msg}
	}
	var te *engine.ThrottledError
	switch {
	case errors.As(err, &te):
		return newErr(codeThrottled, "RequestRateTooLarge", "Request rate is large. More Request Units may be needed, so no changes were made. Please retry this request later. RetryAfterMs=%d, Details: %v", max(te.RetryAfter.Milliseconds(), 1), te)
	case errors.Is(err, engine.ErrThrottled):
		return newErr(codeThrottled, "RequestRateTooLarge", "Request rate is large. Please retry this request later. RetryAfterMs=100, Details: %v", err)
	case errors.Is(err, engine.ErrTooLarge):
		return newErr(10334, "BSONObjectTooLarge", "the document is too large for the storage engine: %v", err)
	case errors.Is(err, engine.ErrConflict):
		return newErr(codeDuplicateKey, "DuplicateKey", "E11000 duplicate key error: %v", err)
	case errors.Is(err, engine.ErrNotFound):
		return newErr(26, "NamespaceNotFound", "%v", err)
	case errors.Is(err, engine.ErrLogicalPartitionFull):
		return badValue("the logical partition is full: %v", err)
	case errors.Is(err, engine.ErrPartitionKeyMismatch), errors.Is(err, engine.ErrBadRequest):
		return badValue("%v", err)
	case errors.Is(err, engine.ErrNotLeader), errors.Is(err, engine.ErrOutcomeUnknown), errors.Is(err, engine.ErrUnavailable), errors.Is(err, engine.ErrPartitionGone):
		return newErr(91, "ShutdownInProgress", "the storage is unavailable: %v", err)
	case errors.Is(err, errStoredDoc), errors.Is(err, engine.ErrCorrupt):
		return newErr(1, "InternalError", "%v", err)
	}
	return newErr(1, "InternalError", "%v", err)
}
