// Package mql evaluates the MongoDB query language over documents held in memory: comparison in BSON
// order, query filters, projections, sorts, update operators, upsert seeds and aggregation pipelines.
//
// It does no I/O. It knows nothing of the storage engine or of the wire protocol: a command handler
// decodes a request into bson.D values, asks this package to parse the filter, update or pipeline once,
// and then applies the parsed form to each candidate document. Every failure caused by client input is
// returned as an *Error carrying the MongoDB error code and code name, so the handler can reply with
// {ok: 0, errmsg, code, codeName} without interpreting it.
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
// Values are never mutated in place: Update.Apply and Projection.Apply return new documents and leave
// their input unchanged (they may share unchanged sub-values with it), so callers may keep the original
// for rollback or for the change feed.
//
// # Limits
//
// Everything a client controls is bounded: filter and expression nesting depth (100), regular
// expression pattern length (32 KiB), array index paths in updates, and the buffered state of a
// pipeline (100 MB, after which Run fails with code 292 as mongod does when disk use is not allowed).
package mql
