// Package jsondoc works on documents as raw JSON bytes.
//
// # Why raw bytes
//
// Parsec stores each document exactly as the client sent it (plus the system
// properties) and returns those bytes on reads. Decoding into map[string]any
// on the hot path would cost an allocation per member, lose member order (Go
// maps are unordered), and rewrite numbers (1.0 becomes 1, 12345678901234567890
// loses digits) and strings (escapes normalized). A write needs very little
// from a document: proof that it is one JSON object, the "id", and the
// partition key values. Scan gets exactly that in one pass without building
// anything; WithSystem splices the system properties in by copying byte
// ranges. Values are handed out as sub-slices of the input, so a 1 KB
// document costs a couple of microseconds and no allocation beyond the result
// slice (see the benchmarks in jsondoc_timing_test.go).
//
// # How the scanner works
//
// The scanner (scan.go) is recursive descent over the byte slice. Every step
// takes the offset of a token's first byte and returns the offset just past
// it, validating as it goes: strings are skipped eight bytes at a time and
// then with a 256-entry table that stops only at '"', '\\', control
// characters and the bytes of multi-byte UTF-8, which must be valid; numbers
// follow the RFC 8259 grammar and must lie within the float64 range (decided
// from the digits' positions; strconv only at the very edge); nesting is
// limited to MaxDepth (128, Cosmos DB's limit); a member name may not repeat
// in its object (up to 16 names are compared in place, after a 64-bit sketch
// of length and first and last bytes rules most pairs out; larger objects
// use a map). The syntax is that of encoding/json.Valid, which the tests and
// fuzz targets check it against; the document rules are checked against
// separate oracles.
//
// Text that a strict scan accepted once (stored documents, patch trees) is
// re-walked by a lax parser that checks only the syntax, so documents stored
// by versions without these rules can still be copied and patched.
//
// Paths are matched during the same pass. Each object receives a bit mask of
// the requested paths whose earlier components matched on the way down; a
// member whose (unescaped) name equals the next component either captures its
// value's byte range (last component) or passes the bit on to its value. Paths
// never enter arrays, and a path that meets a non-object simply finds nothing.
// Scan refuses repeated names; the lax re-walks (the patch tree) keep the
// first occurrence of a name in the rare old document that has repeats.
//
// Errors say what went wrong and where: a *SyntaxError carries the byte offset,
// e.g. "invalid character 'x' looking for beginning of value at offset 17".
//
// # System properties
//
// WithSystem and StripSystem walk only the top-level members: system members
// (_rid, _self, _etag, _ts, _attachments) are dropped wherever they appear and
// every other member is copied byte for byte; WithSystem then appends fresh
// values in Cosmos DB's order. Both reuse a caller buffer (append(dst[:0], ...)
// style).
//
// # Patch
//
// ParsePatch and ApplyPatch implement Cosmos DB partial document update
// (add, set, replace, remove, incr, move; see ApplyPatch for the exact rules).
// ApplyPatch needs to edit, so it uses a small ordered tree (tree.go) that is
// lazy: a container stays raw text until a patch path walks into it. Only the
// containers on the patched paths are rewritten (compactly); everything else is
// copied through unchanged. Patches are atomic: the input is never modified,
// and any failing operation returns an error and no document.
//
// # Ownership and concurrency
//
// Functions hold no state and are safe for concurrent use. Results of Scan
// alias the input; ApplyPatch and ParsePatch results never alias their inputs.
package jsondoc
