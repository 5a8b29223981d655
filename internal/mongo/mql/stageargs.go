package mql

import (
	"math"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// stageCount reads the argument of $skip or $limit as mongod 7.0 does
// (document_source_skip.cpp and document_source_limit.cpp, through
// BSONElement::parseIntegerElementToNonNegativeLong): a number of integral
// value that fits an int64 and is not negative. Anything else is code
// 5107200 for $skip and 5107201 for $limit, with the reason mongod gives.
func stageCount(name string, v any) (int64, error) {
	code := int32(5107200)
	if name == "$limit" {
		code = 5107201
	}
	fail := func(reason string) (int64, error) {
		return 0, newError(code, "invalid argument to %s stage: %s: %s: %s", name, reason, name, formatValue(v))
	}
	var f float64
	switch x := v.(type) {
	case int32:
		if x < 0 {
			return fail("Expected a non-negative number in")
		}
		return int64(x), nil
	case int64:
		if x < 0 {
			return fail("Expected a non-negative number in")
		}
		return x, nil
	case float64:
		f = x
	case bson.Decimal128:
		d, ok := decimalToFloat(x)
		if !ok || math.IsNaN(d) || d != math.Trunc(d) {
			return fail("Cannot represent as a 64-bit integer")
		}
		f = d
	default:
		return fail("Expected a number in")
	}
	switch {
	case math.IsNaN(f):
		return fail("Expected an integer, but found NaN in")
	case f >= 0x1p63 || f < -0x1p63:
		return fail("Cannot represent as a 64-bit integer")
	case f != math.Trunc(f):
		return fail("Expected an integer")
	case f < 0:
		return fail("Expected a non-negative number in")
	}
	return int64(f), nil
}

// checkFieldPath checks a field name as mongod's FieldPath constructor
// does (field_path.cpp): not empty (40352), no empty part (15998), no part
// starting with '$' (16410).
func checkFieldPath(path string) error {
	if path == "" {
		return newError(40352, "FieldPath cannot be constructed with empty string")
	}
	for _, part := range strings.Split(path, ".") {
		if part == "" {
			return newError(15998, "FieldPath field names may not be empty strings.")
		}
		if part[0] == '$' {
			return newError(16410, "FieldPath field names may not start with '$'. Consider using $getField or $setField.")
		}
	}
	return nil
}
