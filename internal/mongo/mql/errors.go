package mql

import "fmt"

// Error is a MongoDB command error: handlers send {ok:0, errmsg: Msg, code: Code, codeName: CodeName}.
//
// Every parse or evaluation failure caused by client input is an *Error, so a handler can turn any
// error from this package into a command reply without inspecting it further.
type Error struct {
	Code     int32
	CodeName string
	Msg      string
}

// Error returns the message with its code name, e.g. "BadValue: unknown operator: $foo".
func (e *Error) Error() string {
	return e.CodeName + ": " + e.Msg
}

// MongoDB error codes this package returns.
const (
	CodeBadValue            int32 = 2
	CodeFailedToParse       int32 = 9
	CodeTypeMismatch        int32 = 14
	CodeOverflow            int32 = 15
	CodePathNotViable       int32 = 28
	CodeConflictingUpdate   int32 = 40
	CodeDollarPrefixedField int32 = 52
	CodeEmptyFieldName      int32 = 56
	CodeImmutableField      int32 = 66
	CodeExceededMemoryLimit int32 = 292
	CodeRegexInvalid        int32 = 51091
)

var codeNames = map[int32]string{
	2:   "BadValue",
	4:   "NoSuchKey",
	9:   "FailedToParse",
	14:  "TypeMismatch",
	15:  "Overflow",
	28:  "PathNotViable",
	40:  "ConflictingUpdateOperators",
	52:  "DollarPrefixedFieldName",
	56:  "EmptyFieldName",
	66:  "ImmutableField",
	168: "InvalidPipelineOperator",
	241: "ConversionFailure",
	292: "QueryExceededMemoryLimitNoDiskUseAllowed",
}

// newError builds an *Error with the code name MongoDB uses for code; codes without a name of their
// own are named "Location<code>", as mongod does.
func newError(code int32, format string, args ...any) *Error {
	name, ok := codeNames[code]
	if !ok {
		name = fmt.Sprintf("Location%d", code)
	}
	return &Error{Code: code, CodeName: name, Msg: fmt.Sprintf(format, args...)}
}

func badValue(format string, args ...any) *Error {
	return newError(CodeBadValue, format, args...)
}
