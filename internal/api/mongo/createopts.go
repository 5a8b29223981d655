package mongo

import "go.mongodb.org/mongo-driver/v2/bson"

// checkCapped checks create's capped, size and max as mongod 7.0 does
// (create.idl: capped a safeBool, size and max safeInt64, size at least 1;
// create_command.cpp: size required with capped, capped required with
// size or max, 72 InvalidOptions), and reports whether a capped
// collection is asked for. A null is absent.
func (r *request) checkCapped() (bool, error) {
	present := func(k string) (any, bool) {
		v, ok := r.get(k)
		return v, ok && v != nil
	}
	capped, hasCapped := present("capped")
	if hasCapped {
		switch capped.(type) {
		case bool, int32, int64, float64, bson.Decimal128:
		default:
			return false, typeMismatch("BSON field 'create.capped' is the wrong type '%s', expected types '[bool, long, int, decimal, double']", typeName(capped))
		}
	}
	for _, k := range []string{"size", "max"} {
		v, ok := present(k)
		if !ok {
			continue
		}
		switch v.(type) {
		case int32, int64, float64, bson.Decimal128:
		default:
			return false, typeMismatch("BSON field 'create.%s' is the wrong type '%s', expected types '[long, int, decimal, double']", k, typeName(v))
		}
		if n := int64(numberValue(v)); k == "size" && n < 1 {
			return false, newErr(51024, "Location51024", "BSON field 'size' value must be >= 1, actual value '%d'", n)
		}
	}
	isCapped := hasCapped && truthy(capped)
	_, hasSize := present("size")
	_, hasMax := present("max")
	if isCapped && !hasSize {
		return false, newErr(72, "InvalidOptions", "the 'size' field is required when 'capped' is true")
	}
	if !isCapped && (hasSize || hasMax) {
		return false, newErr(72, "InvalidOptions", "the 'capped' field needs to be true when either the 'size' or 'max' fields are present")
	}
	return isCapped, nil
}
