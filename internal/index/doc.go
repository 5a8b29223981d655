// Package index is the pure half of Parsec's automatic indexing: which
// property paths an indexing policy indexes, which index terms a document
// has, and how a term is encoded so that the storage engine's byte order is
// the query language's order. It does no I/O; the engine writes the terms
// beside the items, in the same batch, and reads them back for queries.
//
// # Terms
//
// A document's terms are its properties reached through objects only:
// {"a":{"b":5,"c":[1]}} has the terms /a/b = 5, /a = an object and /a/c =
// an array. Scalars (null, booleans, numbers, strings) are recorded with
// their value; arrays and objects only with their type, which is enough to
// read a path's documents in ORDER BY order (see AppendBucket): every
// document whose value at the path is defined has exactly one term there.
// Array elements are not indexed (queries on them scan), and a term's path
// holds property names only. Paths deeper than MaxDepth (32) segments, or
// whose names add up to more than MaxPathBytes (512), have no terms (Fits):
// queries on them read the documents. A policy (Compile) decides which of
// the other paths are indexed.
//
// # Encoding
//
// A term is encoded as its path, then its value, so that all the terms of
// one path are one contiguous key span, ordered by value:
//
//	path   for each segment: 0x01, the name escaped (0x00 → 0x00 0xFF), 0x00 0x01; then 0x00
//	value  a type byte, then the value:
//	       0x01 null
//	       0x02 boolean  one byte, 0 or 1
//	       0x03 number   8 bytes: the float64 bits, sign flipped for positives
//	                      and all bits flipped for negatives (so byte order
//	                      is numeric order; -0 is stored as 0)
//	       0x04 string   the UTF-8 bytes escaped as above, then 0x00 0x01;
//	                      only the first MaxStringBytes bytes
//	       0x05 array    nothing more
//	       0x06 object   nothing more
//
// A sort bucket (AppendBucket) is the same encoding, with 0x00 for an
// undefined value.
//
// The type bytes follow the query language's order across types
// (undefined < null < boolean < number < string < array < object), and within a type byte order is value order:
// strings compare bytewise, as the evaluator compares them. Integers that
// do not fit a float64 exactly, and long strings, are stored approximately
// (rounded, truncated). Every such approximation keeps order (x ≤ y implies
// enc(x) ≤ enc(y)), so a lookup that widens its bounds to include equal
// encodings finds a superset of the matching documents; the query
// evaluator, which runs on every document a lookup returns, removes the
// rest. The index therefore never decides a result alone: it only chooses
// which documents are read.
package index
