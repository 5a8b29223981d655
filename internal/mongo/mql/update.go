package mql

import (
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// IsReplacement reports whether u is a replacement document rather than an update with operators:
// true when none of its keys starts with "$" (an empty document is a replacement).
func IsReplacement(u bson.D) bool {
	for _, e := range u {
		if len(e.Key) > 0 && e.Key[0] == '$' {
			return false
		}
	}
	return true
}

// Update is a parsed update document with operators. It is immutable and safe for concurrent use.
type Update struct {
}

// ParseUpdate parses an update document of operators: $set $unset $inc $mul $min $max $rename
// $push (with $each $slice $sort $position) $addToSet (with $each) $pull $pop $currentDate
// $setOnInsert, with positional paths $, $[] and $[ident] (ident bound by arrayFilters). Two operators
// touching the same path or a path and its prefix fail with code 40 (ConflictingUpdateOperators).
func ParseUpdate(u bson.D, arrayFilters []bson.D) (*Update, error) {
	return nil, notImplemented("ParseUpdate")
}

// Apply applies the update to doc and returns the new document and whether it differs from doc; doc
// itself is not modified. insert is true when the document is being inserted by an upsert, which is
// when $setOnInsert applies. now is the time $currentDate writes. Errors that depend on the document
// (e.g. $inc on a string, code 14) are *Error.
func (u *Update) Apply(doc bson.D, insert bool, now time.Time) (out bson.D, modified bool, err error) {
	return doc, false, notImplemented("Update.Apply")
}

// UpsertSeed returns the document an upsert starts from when no document matches f: the fields the
// filter fixes by equality (implicit or $eq, also inside top-level $and), with dotted paths expanded
// into nested documents. Operators other than equality contribute nothing.
func UpsertSeed(f *Filter) bson.D {
	return bson.D{}
}
