// Package synthkey is a small language for synthetic partition keys: keys
// computed from one or more document properties instead of read from a
// single one.
//
// When no property of a document has enough distinct values to spread a
// container's data and load, the usual remedy is to construct a key:
// concatenate properties ("abc-123-2018"), append a random suffix
// ("2018-08-09.17"), or append a suffix computed from a property that
// readers know ("2018-08-09.211", from a hash of the vehicle identification
// number). This package gives those recipes one precise definition, shared
// by the server (which computes a container's declared key on every write),
// the key advisor (which evaluates candidate keys over sample documents),
// and applications that write through the official Cosmos DB SDKs and must
// compute the same key on the client.
//
// # Language
//
// An expression is one of
//
//	/date                                  a path: the property's own value
//	[/tenant, /user]                       a hierarchical (MultiHash) key of 2 or 3 levels
//	concat(/deviceId, "-", /date)          a string built from 2 or more arguments
//
// The arguments of concat are paths, string literals, random(lo, hi) and
// hash(/path, n):
//
//	concat(/date, ".", random(1, 400))     a random suffix from 1 to 400
//	concat(/date, ".", hash(/vin, 400))    a suffix from 1 to 400 computed from /vin
//
// The grammar, with whitespace (space, tab, CR, LF) allowed between tokens:
//
//	expr   = level | "[" level "," level [ "," level ] "]" .
//	level  = path | concat .
//	concat = "concat" "(" arg "," arg { "," arg } ")" .
//	arg    = path | string | random | hash .
//	random = "random" "(" bound "," bound ")" .
//	hash   = "hash" "(" path "," bound ")" .
//	bound  = a decimal integer from 1 to 1000000, without sign or leading zeros .
//
// Further rules:
//   - Paths are partition key paths with the syntax and rules of the
//     container definition (epk.ParsePath): one or more segments, each a '/'
//     followed by a property name. A name that contains '/', '"', spaces,
//     or one of , ( ) [ ] is written as a double-quoted Go string literal
//     (the JSON escapes other than \/ mean the same there): /"a/b"/c is the
//     property c of the property "a/b". Outside
//     quotes a path ends at whitespace or at , ( ) [ ]. The names * and ?
//     must be quoted. Paths go through nested objects only, never into
//     arrays.
//   - String literals are JSON strings ("-", "\u00e9", "tab\there").
//   - Function names are lower case; random and hash may only appear inside
//     concat, and concat cannot be nested.
//   - concat needs at least one argument that is not a string literal.
//   - An expression has at most one random(...), and lo <= hi.
//   - The levels of a hierarchical key are paths or concat(...) and must
//     differ from each other.
//
// Errors are *SyntaxError values that carry the byte offset of the problem,
// reported as a 1-based column:
//
//	synthkey: at column 23: expected ")" after the arguments of random, found ","
//
// Expr.String returns the canonical text: ", " between arguments and levels,
// no other whitespace, path segments quoted only when necessary, string
// literals in minimal JSON form. Parsing the canonical text gives back the
// same expression.
//
// # Base values and keys
//
// The base paths of an expression are the distinct paths it reads, in order
// of first appearance (Expr.Paths); the values found there are its base
// values. A key has one component per level (Key):
//
//   - A path level is the property's own value: a string, a number
//     (float64), true or false, null (nil), or Undefined when the property is
//     missing, as in any Cosmos DB container.
//   - A concat(...) level is a string: the texts of its arguments, joined
//     with nothing in between.
//
// An object or array at any base path is an error (*ValueError), as it is
// for an ordinary partition key. A missing property used by concat or hash
// is an error too: there is no text to use for it.
//
// # Text of a value
//
// In concat and hash a base value contributes this text:
//
//   - a string: its characters (UTF-8), without quotes or escapes;
//   - a number: JSON numbers are IEEE-754 doubles, written as JavaScript's
//     String(number) writes them: the shortest digits that read back as the
//     same double, in plain notation when 1e-6 <= |x| < 1e21 and in
//     exponent notation otherwise, and "0" for both zeros;
//   - true, false and null: the words "true", "false" and "null".
//
// Examples: 7 and 7.0 and 7e0 give "7"; 1.5 gives "1.5"; 0.1 gives "0.1";
// -0 gives "0"; 1e21 gives "1e+21"; 1.5e-7 gives "1.5e-7"; 0.000001 gives
// "0.000001"; 12345678901234567890 gives "12345678901234567000" (the
// nearest double). A client in JavaScript gets the same text from
// String(value) or a template literal; in other languages beware that the
// default float formatting usually differs (Python's str(7.0) is "7.0").
//
// # random(lo, hi)
//
// random(lo, hi) contributes a uniformly chosen integer from lo to hi
// inclusive, in decimal. Writes for one base value then spread over
// hi-lo+1 keys, and with them over more physical partitions.
//
// # hash(/path, n)
//
// hash(/path, n) contributes, in decimal, the bucket
//
//	1 + FNV-1a-64(text) mod n
//
// where text is the text of the value at /path (see above) as UTF-8 bytes
// and FNV-1a-64 is the 64-bit Fowler–Noll–Vo 1a hash: start with
// h = 0xcbf29ce484222325 (14695981039346656037); for each byte b, set
// h = h XOR b, then h = h × 0x100000001b3 (1099511628211) modulo 2^64. The
// result is from 1 to n. Package function Hash computes it. In Python:
//
//	def bucket(text: str, n: int) -> int:
//	    h = 0xCBF29CE484222325
//	    for b in text.encode("utf-8"):
//	        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
//	    return 1 + h % n
//
// Test vectors (n = 400):
//
//	value                 text                 FNV-1a-64            bucket
//	""                    ""                   0xcbf29ce484222325   38
//	"a"                   "a"                  0xaf63dc4c8601ec8c   397
//	"1HGCM82633A004352"   "1HGCM82633A004352"  0x0f989797ed2dae82   211
//	"2018-08-09"          "2018-08-09"         0x4ede2b2bc6874a5f   304
//	"é"                   "é" (C3 A9)          0x0ac21707b7181e01   18
//	7, 7.0 and "7"        "7"                  0xaf63aa4c86019796   247
//	1.5                   "1.5"                0x457d3818182e17b9   58
//	1e21                  "1e+21"              0xba1aa6cca8a13b15   262
//	true                  "true"               0x5b5c98ef514dbfa5   54
//	null                  "null"               0x5b9bc4ba528108e4   341
//
// The hash depends on the text only, so the number 7 and the string "7" land
// in the same bucket. The definition is part of the stored data's layout:
// it never changes.
//
// # How the server uses a declared expression
//
// A container may declare an expression next to its partition key
// definition. The definition's paths name the properties that hold the key
// (for example /partitionKey, or one path per level of a hierarchical key);
// the expression says how to compute it. On every write the server computes
// the key from the document (Expr.Compute, or Expr.FromRaw over values it
// has already scanned) and stores each computed component in the
// corresponding partition key property; a level that is a plain path is
// already stored in its own property (Expr.PartitionKeyPaths). From then on
// the key is an ordinary partition key: hashing, routing, queries and the
// SDKs see nothing special.
//
// Applications that write through the official SDKs must pass the key with
// each write and point operation, so they compute it with the same
// definition: in Go with this package (Expr.FromBase, Expr.ComputeMap), in
// other languages by following this documentation.
//
// A reader who knows the base values computes the key directly when the
// expression is deterministic (paths, literals and hash), and can then read
// the document with one point read. With random(lo, hi) the suffix chosen at
// write time is not recorded anywhere a reader can derive it from, so a
// point read must fan out over every key Expr.Expand lists (hi-lo+1 of them;
// in parallel, or as one query over those key values) and a query for one
// base value touches those hi-lo+1 keys instead of one. That is the price of
// the random suffix's perfect write spread; hash(...) gives nearly the same
// spread whenever readers know the hashed property.
//
// # Performance
//
// Compute validates the document and reads the base values in one pass
// over the raw JSON without decoding anything else (internal/jsondoc); the
// result needs a few small allocations (the Key, a component string and its
// interface box). See BenchmarkCompute.
//
// An Expr is immutable and safe for concurrent use.
package synthkey
