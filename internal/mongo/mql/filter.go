package mql

import "go.mongodb.org/mongo-driver/v2/bson"

// Filter is a parsed query filter. It is immutable and safe for concurrent use.
type Filter struct {
	root matcher
}

type matcher interface {
	match(doc bson.D) bool
}

// ParseFilter parses a MongoDB query filter: $eq $ne $gt $gte $lt $lte $in $nin $and $or $nor $not
// $exists $type $regex (+$options) $elemMatch $size $all $mod $expr, implicit equality and dotted paths
// into arrays. A malformed filter yields an *Error.
func ParseFilter(f bson.D) (*Filter, error) {
	return nil, notImplemented("ParseFilter")
}

// Match reports whether doc satisfies the filter.
func (f *Filter) Match(doc bson.D) bool {
	return false
}

// Equality returns the value a top-level conjunct of the filter fixes path to, through implicit
// equality ({path: v}), {path: {$eq: v}} or either of those inside a top-level $and. It returns false
// when the filter does not pin path to a single value (including when the value is a regex, which
// matches by pattern, or when two conjuncts disagree). Callers use it to route a query to one shard.
func (f *Filter) Equality(path string) (any, bool) {
	return nil, false
}
