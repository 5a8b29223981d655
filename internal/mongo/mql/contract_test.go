package mql

import (
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// The package's API is a contract with the command handlers, built in parallel against it; these
// assignments stop the build if a signature changes.
var (
	_ func(a, b any) int                                           = Compare
	_ func(bson.D, string) []any                                   = Lookup
	_ func(bson.D) (*Filter, error)                                = ParseFilter
	_ func(*Filter, bson.D) bool                                   = (*Filter).Match
	_ func(*Filter, string) (any, bool)                            = (*Filter).Equality
	_ func(bson.D) (*Projection, error)                            = ParseProjection
	_ func(*Projection, bson.D) bson.D                             = (*Projection).Apply
	_ func(bson.D) (*Sort, error)                                  = ParseSort
	_ func(*Sort, bson.D, bson.D) int                              = (*Sort).Compare
	_ func(bson.D) bool                                            = IsReplacement
	_ func(bson.D, []bson.D) (*Update, error)                      = ParseUpdate
	_ func(*Update, bson.D, bool, time.Time) (bson.D, bool, error) = (*Update).Apply
	_ func(*Filter) bson.D                                         = UpsertSeed
	_ func([]bson.D, LookupFunc) (*Pipeline, error)                = ParsePipeline
	_ func(*Pipeline) *Filter                                      = (*Pipeline).LeadingMatch
	_ func(*Pipeline, []bson.D) ([]bson.D, error)                  = (*Pipeline).Run
	_ LookupFunc                                                   = func(string) ([]bson.D, error) { return nil, nil }
	_ error                                                        = (*Error)(nil)
	_                                                              = Error{Code: 2, CodeName: "BadValue", Msg: ""}
)
