package mongo

import (
	"fmt"
	"math"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// specError is createIndexes' error for an index specification, in the
// context mongod gives it ("Error in specification <spec> :: caused by ::
// <reason>", create_indexes_cmd.cpp).
func specError(code int32, name string, sp bson.D, format string, args ...any) *cmdError {
	return newErr(code, name, "Error in specification %s :: caused by :: %s", showValue(sp), fmt.Sprintf(format, args...))
}

// indexSpecFields are the fields an index specification may have
// (index_key_validate.cpp's allowedFieldNames in mongod 7.0).
var indexSpecFields = fieldSet("key", "name", "v", "unique", "sparse", "partialFilterExpression",
	"expireAfterSeconds", "collation", "hidden", "storageEngine", "background", "ns", "dropDups",
	"weights", "default_language", "language_override", "textIndexVersion", "2dsphereIndexVersion",
	"bits", "min", "max", "coarsestIndexedLevel", "finestIndexedLevel", "wildcardProjection",
	"columnstoreProjection", "columnstoreCompressor", "originalSpec", "prepareUnique", "clustered", "_id")

// knownIndexFields drops the fields an index specification may not have,
// as createIndexes' ignoreUnknownIndexOptions asks.
func knownIndexFields(sp bson.D) bson.D {
	out := bson.D{}
	for _, e := range sp {
		if indexSpecFields[e.Key] {
			out = append(out, e)
		}
	}
	return out
}

// checkIndexFields checks an index specification's field names (197 for
// one it may not have) and its key and name fields as mongod 7.0's
// index_key_validate::validateIndexSpec does: key an object
// and name a string (14 otherwise), both required (9 FailedToParse), and
// the name not empty (67, index_catalog_impl.cpp).
func checkIndexFields(sp bson.D) error {
	// validateIndexSpecFieldNames: 197 InvalidIndexSpecificationOption.
	for _, e := range sp {
		if !indexSpecFields[e.Key] {
			return specError(197, "InvalidIndexSpecificationOption", sp, "The field '%s' is not valid for an index specification. Specification: %s", e.Key, showValue(sp))
		}
	}
	key, hasKey := lookupField(sp, "key")
	name, hasName := lookupField(sp, "name")
	if hasKey {
		if _, ok := key.(bson.D); !ok {
			return specError(14, "TypeMismatch", sp, "The field 'key' must be an object, but got %s", typeName(key))
		}
	}
	if hasName {
		if _, ok := name.(string); !ok {
			return specError(14, "TypeMismatch", sp, "The field 'name' must be a string, but got %s", typeName(name))
		}
	}
	if !hasKey {
		return specError(9, "FailedToParse", sp, "The 'key' field is a required property of an index specification")
	}
	if !hasName {
		return specError(9, "FailedToParse", sp, "The 'name' field is a required property of an index specification")
	}
	if name == "" {
		return specError(67, "CannotCreateIndex", sp, "index name cannot be empty")
	}
	// create_indexes_cmd.cpp: '*' names every index in dropIndexes.
	if name == "*" {
		return badValue("The index name '*' is not valid.")
	}
	return checkIDIndexSpec(sp)
}

// idIndexFields are the fields an _id index specification may have
// (index_key_validate.cpp's allowedIdIndexFieldNames).
var idIndexFields = fieldSet("key", "name", "v", "collation", "ns")

// checkIDIndexSpec checks a specification whose key is {_id: 1} or
// {_id: -1} as index_key_validate::validateIdIndexSpec does: the key is
// {_id: 1} (2) and the other fields are name, v, collation and ns (197).
func checkIDIndexSpec(sp bson.D) error {
	key := asDoc(lookupFieldValue(sp, "key"))
	if len(key) != 1 || key[0].Key != "_id" {
		return nil
	}
	switch n := numberValue(key[0].Value); {
	case n == -1:
		return badValue("The field 'key' for an _id index must be {_id: 1}, but got %s", showValue(key))
	case n != 1:
		return nil
	}
	for _, e := range sp {
		if !idIndexFields[e.Key] {
			return newErr(197, "InvalidIndexSpecificationOption", "The field '%s' is not valid for an _id index specification. Specification: %s", e.Key, showValue(sp))
		}
	}
	return nil
}

// checkIndexTTL checks a TTL index's expireAfterSeconds as mongod 7.0's
// index_key_validate::validateIndexSpecTTL does: a number, not NaN, within
// an int32 and not negative, on a single-field key; every failure is 67
// CannotCreateIndex.
func checkIndexTTL(sp bson.D) error {
	v, ok := lookupField(sp, "expireAfterSeconds")
	if !ok {
		return nil
	}
	fail := func(reason string) error {
		return newErr(67, "CannotCreateIndex", ". Index spec: %s :: caused by :: %s", showValue(sp), reason)
	}
	switch v.(type) {
	case int32, int64, float64, bson.Decimal128:
	default:
		return fail(fmt.Sprintf("TTL index 'expireAfterSeconds' option must be numeric, but received a type of '%s", typeName(v)))
	}
	f := numberValue(v)
	if math.IsNaN(f) {
		return fail("TTL index 'expireAfterSeconds' option must not be NaN")
	}
	// safeNumberInt and safeNumberLong truncate toward zero.
	if t := math.Trunc(f); t > math.MaxInt32 || t < math.MinInt32 {
		return fail("TTL index 'expireAfterSeconds' must be within the range of a 32-bit integer")
	}
	if math.Trunc(f) < 0 {
		return fail("TTL index 'expireAfterSeconds' option cannot be less than 0")
	}
	if key, _ := lookupField(sp, "key"); len(asDoc(key)) != 1 {
		return newErr(67, "CannotCreateIndex", "TTL indexes are single-field indexes, compound indexes do not support TTL. Index spec: %s", showValue(sp))
	}
	return nil
}
