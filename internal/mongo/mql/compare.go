package mql

import "go.mongodb.org/mongo-driver/v2/bson"

// Compare compares two BSON values in MongoDB's sort order and returns -1, 0 or +1.
//
// Values of different types order by type bracket: MinKey < Undefined/null < numbers < Symbol/string <
// object < array < binary < ObjectId < bool < date < timestamp < regex < MaxKey. Numbers of every type
// (int32, int64, float64, Decimal128) compare by value; NaN sorts below every other number and equals
// itself. Documents compare field by field (type, then name, then value), arrays element by element.
func Compare(a, b any) int {
	return 0
}

// Lookup returns the values the dotted path reaches in doc, descending into arrays the way MongoDB
// query paths do: "a.b" on {a: [{b: 1}, {b: 2}]} yields 1 and 2, and a numeric component also indexes
// an array ("a.0"). A missing path yields no values. Arrays reached at the end of the path are returned
// as arrays (not flattened).
func Lookup(doc bson.D, path string) []any {
	return nil
}
