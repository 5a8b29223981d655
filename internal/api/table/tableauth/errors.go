package tableauth

import (
	"errors"
	"fmt"
	"net/http"
)

// Service error codes, as Azure Table storage answers them (Azurite
// src/table/errors/StorageErrorFactory.ts).
const (
	CodeAuthenticationFailed              = "AuthenticationFailed"
	CodeAuthorizationFailure              = "AuthorizationFailure"
	CodeAuthorizationPermissionMismatch   = "AuthorizationPermissionMismatch"
	CodeAuthorizationSourceIPMismatch     = "AuthorizationSourceIPMismatch"
	CodeAuthorizationProtocolMismatch     = "AuthorizationProtocolMismatch"
	CodeAuthorizationServiceMismatch      = "AuthorizationServiceMismatch"
	CodeAuthorizationResourceTypeMismatch = "AuthorizationResourceTypeMismatch"
)

// Sentinels, one per reason a request is refused. Every error Verify and
// Grant.Allow return is an *Error wrapping exactly one of them.
var (
	ErrNoCredentials     = errors.New("request carries neither an Authorization header nor a shared access signature")
	ErrMalformed         = errors.New("authorization header or shared access signature is malformed")
	ErrAccountMismatch   = errors.New("credentials name another account")
	ErrNoDate            = errors.New("request has no x-ms-date or Date header")
	ErrDateSkew          = errors.New("request date is too far from the server's time")
	ErrSignatureMismatch = errors.New("signature does not match")
	ErrExpired           = errors.New("shared access signature has expired")
	ErrNotYetValid       = errors.New("shared access signature is not valid yet")
	ErrStoredPolicy      = errors.New("stored access policies (si) are not supported")
	ErrSourceIP          = errors.New("request's source IP is outside the signature's range")
	ErrProtocol          = errors.New("signature allows HTTPS only")
	ErrService           = errors.New("account signature does not include the table service")
	ErrResourceType      = errors.New("account signature does not cover this resource type")
	ErrPermission        = errors.New("credentials do not permit this operation")
	ErrTable             = errors.New("signature is for another table")
	ErrOutsideRange      = errors.New("entity is outside the signature's key range")
)

// Error is a refused request: Status and Code are what the service answers
// (always 403 here), Detail the AuthenticationErrorDetail it may add.
type Error struct {
	Code   string
	Status int
	Detail string
	Err    error // one of the sentinels
}

func (e *Error) Error() string {
	if e.Detail != "" {
		return fmt.Sprintf("%s: %v: %s", e.Code, e.Err, e.Detail)
	}
	return fmt.Sprintf("%s: %v", e.Code, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Message is the service's message for Code.
func (e *Error) Message() string {
	switch e.Code {
	case CodeAuthorizationPermissionMismatch:
		return "This request is not authorized to perform this operation using this permission."
	case CodeAuthorizationSourceIPMismatch:
		return "This request is not authorized to perform this operation using this source IP."
	case CodeAuthorizationProtocolMismatch:
		return "This request is not authorized to perform this operation using this protocol."
	case CodeAuthorizationServiceMismatch:
		return "This request is not authorized to perform this operation using this service."
	case CodeAuthorizationResourceTypeMismatch:
		return "This request is not authorized to perform this operation using this resource type."
	case CodeAuthorizationFailure:
		return "This request is not authorized to perform this operation."
	default:
		return "Server failed to authenticate the request. Make sure the value of Authorization header is formed correctly including the signature."
	}
}

// codes maps each sentinel to the service's code.
var codes = map[error]string{
	ErrNoCredentials:     CodeAuthenticationFailed,
	ErrMalformed:         CodeAuthenticationFailed,
	ErrAccountMismatch:   CodeAuthenticationFailed,
	ErrNoDate:            CodeAuthenticationFailed,
	ErrDateSkew:          CodeAuthenticationFailed,
	ErrSignatureMismatch: CodeAuthenticationFailed,
	ErrExpired:           CodeAuthenticationFailed,
	ErrNotYetValid:       CodeAuthenticationFailed,
	ErrStoredPolicy:      CodeAuthenticationFailed,
	ErrSourceIP:          CodeAuthorizationSourceIPMismatch,
	ErrProtocol:          CodeAuthorizationProtocolMismatch,
	ErrService:           CodeAuthorizationServiceMismatch,
	ErrResourceType:      CodeAuthorizationResourceTypeMismatch,
	ErrPermission:        CodeAuthorizationPermissionMismatch,
	ErrTable:             CodeAuthorizationFailure,
	ErrOutsideRange:      CodeAuthorizationFailure,
}

func fail(sentinel error, format string, args ...any) *Error {
	code, ok := codes[sentinel]
	if !ok {
		panic("BUG: tableauth: no code for " + sentinel.Error())
	}
	return &Error{Code: code, Status: http.StatusForbidden, Detail: fmt.Sprintf(format, args...), Err: sentinel}
}
