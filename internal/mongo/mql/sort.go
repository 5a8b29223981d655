package mql

import "go.mongodb.org/mongo-driver/v2/bson"

// Sort is a parsed sort specification. It is immutable and safe for concurrent use.
type Sort struct {
}

// ParseSort parses a sort specification such as {a: 1, b: -1}. An array field sorts by its smallest
// element ascending and by its largest element descending, as MongoDB does; a missing field sorts as
// null. A malformed specification yields an *Error.
func ParseSort(s bson.D) (*Sort, error) {
	return nil, notImplemented("ParseSort")
}

// Compare orders two documents by the specification and returns -1, 0 or +1.
func (s *Sort) Compare(a, b bson.D) int {
	return 0
}
