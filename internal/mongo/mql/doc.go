// Package mql evaluates the MongoDB query language over documents held in memory: comparison in BSON
// order, query filters, projections, sorts, update operators, upsert seeds and aggregation pipelines.
//
// It does no I/O. It knows nothing of the storage engine or of the wire protocol: a command handler
// decodes a request into bson.D values, asks this package to parse the filter, update or pipeline once,
// and then applies the parsed form to each candidate document. Every failure caused by client input is
// returned as an *Error carrying the MongoDB error code and code name, so the handler can reply with
// {ok: 0, errmsg, code, codeName} without interpreting it. Parsed values (Filter, Projection, Sort,
// Update, Pipeline) are immutable and safe for concurrent use.
//
// # Why bson.D
//
// Documents are bson.D (an ordered slice of key/value pairs) with values as bson.Unmarshal produces
// them into a bson.D: nested documents are bson.D, arrays bson.A, numbers int32/int64/float64/
// bson.Decimal128, null is nil, and so on. bson.D, not a map, because MongoDB semantics depend on field
// order: documents compare field by field in order, projections and updates keep the stored order and
// append new fields at the end, {a: {x: 1, y: 2}} does not equal {a: {y: 2, x: 1}}, and a sort
// specification is itself an ordered list. The driver's bson.D is what the wire server already decodes
// into, so no conversion happens at the boundary.
//
// Documents are never mutated in place: Update.Apply and Projection.Apply return new documents and
// leave their input unchanged (the result shares unchanged sub-values with it), so callers may keep the
// original for rollback or for the change feed. Callers must not mutate a document they passed in
// while a result derived from it is in use.
//
// # Semantics in brief
//
//   - Compare is MongoDB's total order: type brackets first (MinKey < undefined < null < numbers <
//     strings < objects < arrays < binary < ObjectId < bool < date < timestamp < regex < ... < MaxKey),
//     numbers of all four types by exact value, NaN lowest among numbers.
//   - A filter path descends into arrays: {"a.b": 1} matches {a: [{b: 1}]}, and a condition on a path
//     that reaches an array holds if it holds for the array or for one of its elements; {a: null}
//     matches a missing a (MongoDB 7.0 rules: also undefined).
//   - Filter.Equality and UpsertSeed read the top-level equality conjuncts, for shard routing and for
//     upserts.
//   - Updates apply their operators in path order (as MongoDB 5.0+ does), so new fields appear in name
//     order; the positional $ needs the query (Update.ApplyWithQuery).
//   - Regular expressions run on Go's RE2: options i, m, s, x (x is applied by this package), and a
//     pattern RE2 cannot compile (backreferences, lookaround) fails with code 51091.
//
// # Limits
//
// Everything a client controls is bounded: filter and expression nesting depth (100), regular
// expression pattern length (32 KiB), how far an update may pad an array (1 Mi elements), the length
// of a pipeline (1000 stages), values built by expressions (16 MiB), and the state a pipeline buffers
// in $sort, $group, $lookup and $unwind (100 MB, after which Run fails with code 292, as mongod does
// when disk use is not allowed). Document nesting depth is not limited here: the wire layer should
// reject documents nested deeper than mongod allows before decoding them.
//
// # Files
//
// compare.go (BSON order, path walking), filter.go (query filters), regex.go, projection.go, sort.go,
// update.go (update operators, upsert seeds), pipeline.go (stages and accumulators), expr.go
// (aggregation expressions), number.go (numeric promotion and arithmetic), set.go (hashed value sets),
// errors.go.
package mql
