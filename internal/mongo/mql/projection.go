package mql

import "go.mongodb.org/mongo-driver/v2/bson"

// Projection is a parsed find projection. It is immutable and safe for concurrent use.
type Projection struct {
}

// ParseProjection parses a find projection: inclusion or exclusion of (dotted) fields, the _id rules
// (included unless excluded explicitly, the only field an inclusion projection may exclude), $slice and
// $elemMatch. A malformed or mixed projection yields an *Error.
func ParseProjection(p bson.D) (*Projection, error) {
	return nil, notImplemented("ParseProjection")
}

// Apply returns the projected copy of doc; doc is not modified.
func (p *Projection) Apply(doc bson.D) bson.D {
	return doc
}
