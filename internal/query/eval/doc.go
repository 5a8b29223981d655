// Package eval is the pure evaluation layer of the query engine: the JSON
// value model (Value), scalar expression evaluation (Eval), the built-in
// functions, query validation (Check) and aggregate accumulators
// (Accumulator). It knows nothing of storage, partitions or paging; the
// executor (package exec) feeds it documents and bindings through an Env
// and asks it for values.
//
//	raw document ──FromJSON──▶ Value ──┐
//	*ast.Query ──Check──▶ ok            ├──Eval(expr, env)──▶ Value ──AppendJSON──▶ bytes
//	aliases, params, hooks ──▶ Env ─────┘
//	                          Accumulator.Add / Merge / Result for COUNT SUM AVG MIN MAX COUNTIF
//
// Everything here is deterministic given its inputs: the clock (Env.Now,
// Env.QueryStart) and randomness (Env.Rand) are injected, and subqueries,
// UDFs and aggregates are evaluated through Env hooks. Nothing in the
// package holds mutable global state. Env.Budget (budget.go) bounds an
// evaluation's steps and the bytes of values it builds, by count, not time;
// its Check hook, called every CheckEvery (1,024) steps, is where a caller
// looks at a clock or a cancelled request.
//
// The semantics are Cosmos DB for NoSQL's as documented on
// learn.microsoft.com/azure/cosmos-db/nosql/query/ (cited below by page
// name, e.g. logical-operators.md: the pages live in MicrosoftDocs/
// azure-databases-docs under articles/cosmos-db/nosql/query/, and their
// example queries and results in Azure-Samples/cosmos-db-nosql-query-samples
// under scripts/). Where the documentation is silent the Cosmos DB SDKs
// (Azure/azure-cosmos-dotnet-v3) decide, and where both are, the choice is
// marked "(choice)" below. testdata/eval.txt reproduces the documentation's
// examples and cites each one.
//
// # 1. Values
//
// A Value is undefined or one of JSON's six types; the zero Value is
// undefined, the value of a missing property (constants.md). Arrays and
// objects never contain undefined. Objects keep their member order for
// output but compare and hash as unordered sets of members. Values are
// immutable and safe to share between goroutines.
//
// Numbers are IEEE 754 doubles (constants.md: "A double-precision
// floating-point number") with one refinement: an integer literal or JSON
// integer that fits an int64 is kept exactly, and +, -, *, /, % on two
// exact integers stay exact while the result is an integer that fits.
// This is what is-integer.md requires: IS_INTEGER(9223372036854775807) is
// true, which no double can give (the nearest double is 2^63, out of
// range), and IS_INTEGER(18446744073709551615) is false. An exact integer
// and a double compare, hash and print by mathematical value. Arithmetic
// that leaves the int64 range, or involves a non-integer, is done in
// float64 as JavaScript does it. NaN and ±Infinity arise from arithmetic
// (8.9 / 0.0 is Infinity and SQRT(-1) NaN in is-finite-number.md; the
// constants NaN and Infinity are accepted as tostring.md uses them).
//
// FromJSON parses raw bytes in one pass: RFC 8259 exactly, integers exact
// as above, numbers out of float64 range rejected, invalid UTF-8 and lone
// surrogates replaced by U+FFFD, a repeated key keeping its first position
// and last value. It accepts and rejects the same inputs as encoding/json
// and gives the same values (TestFromJSONAgreesWithEncodingJSON,
// FuzzFromJSON). AppendJSON writes compact JSON, numbers in JavaScript's
// format (integers in full, shortest round-trip digits otherwise, an
// exponent below 1e-6 and from 1e21). JSON has no NaN or Infinity: they are
// written as null (Cosmos DB fails such a query with error 4001 instead;
// the executor can check with IS_FINITE_NUMBER semantics before writing).
// A double above 2^53 prints as JavaScript prints it (2^63 as
// 9223372036854776000), which reads back as that exact integer: a
// different exact number with the same double.
//
// # 2. Ordering and equality
//
// Compare is the total order of ORDER BY, across types in the order of the
// SDKs' ItemComparer (Query/Core/ItemComparer.cs):
//
//	undefined < null < false < true < numbers < strings < arrays < objects
//
// Numbers by value, NaN lowest; strings by UTF-8 bytes (code point order;
// the SDK compares UTF-16 code units ordinally, which differs only between
// supplementary characters and U+E000..U+FFFF); arrays element-wise then
// by length; objects as their members sorted by key (choice: Cosmos DB
// orders arrays and objects by an opaque hash). Equal is Compare == 0 and
// Hash is consistent with it; they are the equality of DISTINCT, GROUP BY,
// SetUnion, SetIntersect and ARRAY_CONTAINS.
//
// The comparison operators differ from Compare
// (equality-comparison-operators.md): comparing two values of different
// types, or undefined with anything, gives undefined, as do < > <= >= on
// two arrays or two objects. = and != on two arrays or objects compare
// deeply (the page's table says "Ok" for Object = Object and Array =
// Array; its sentence lists != among the operators that give undefined for
// two objects or arrays, which would make != disagree with NOT (a = b); we
// follow the table for both, choice). NaN = NaN is false, as in IEEE 754.
//
// # 3. Operators
//
//   - a.b and a[b]: a missing property, a property of a non-object, an
//     index out of range or not an integer, give undefined
//     (scalar-expressions.md).
//   - + - * / %: numbers only, otherwise undefined; float64 semantics
//     (1/0 is Infinity, % keeps the sign of the dividend), exact for
//     integers as above. There is no string +; || concatenates two
//     strings, otherwise undefined.
//   - & | ^ << >> >>> ~: JavaScript's: operands converted to 32-bit
//     integers (truncated, wrapped, NaN to 0), the shift count modulo 32,
//     >>> unsigned (bitwise-operators.md, which says so and gives the
//     examples).
//   - AND OR NOT: three-valued with anything but true and false counting as
//     undefined (logical-operators.md's truth tables). AND stops at a false
//     left side and OR at a true one without evaluating the right.
//   - a ?? b: b only when a is undefined; null is kept
//     (ternary-coalesce-operators.md). c ? a : b: a for true, b for false,
//     undefined for anything else (choice, following "the ? operator
//     excludes items if the referenced properties are missing"; IIF is the
//     form that treats "not true" as false, iif.md).
//   - x IN (a, b, ...): the OR of x = a, x = b, ...: true on a match,
//     undefined when some comparison was across types, else false; NOT IN
//     negates (choice: consistent with =). x BETWEEN lo AND hi is
//     x >= lo AND x <= hi (keywords.md: mixed types give undefined).
//   - LIKE: % _ [set] [a-f] [^set], ESCAPE, case-sensitive, by character,
//     whole string (keywords.md, including its table of bracketed
//     wildcards); non-strings give undefined. An ESCAPE must be one
//     character (an error otherwise).
//   - [..] and {..} constructors drop undefined elements and members
//     (scalar-expressions.md, Remarks).
//   - Subqueries go through Env.Subquery, which returns the rows of the
//     subquery without undefined ones: (SELECT ...) and FIRST(...) are the
//     first row or undefined, LAST(...) the last, ARRAY(...) all of them,
//     EXISTS(...) whether there is one (subquery.md: EXISTS(SELECT VALUE
//     undefined) is false, EXISTS(SELECT undefined) true), ALL(...) whether
//     every row is true (choice; not documented).
//
// # 4. Functions
//
// Built-in function names are case-insensitive. A function called with an
// undefined argument is not called and gives undefined
// (scalar-expressions.md, Remarks), except the type checks, IIF, CHOOSE
// and ARRAY_CONTAINS_ANY/ALL, which look at undefined themselves
// (array-contains-any.md: ARRAY_CONTAINS_ANY([1, 2, 3, 4], 1, undefined)
// is true; ARRAY_CONTAINS_ALL(..., 1, undefined) is undefined). A
// wrong-typed argument gives undefined. The families, one file each:
//
//	funcs_string.go    CONCAT CONTAINS ENDSWITH STARTSWITH StringEquals INDEX_OF LEFT RIGHT LENGTH
//	                   LOWER UPPER LTRIM RTRIM TRIM REPLACE REPLICATE REVERSE SUBSTRING RegexMatch
//	                   ToString StringToArray StringToBoolean StringToNull StringToNumber StringToObject
//	funcs_math.go      ABS CEILING FLOOR ROUND TRUNC SIGN EXP LOG LOG10 POWER SQRT SQUARE PI SIN COS TAN
//	                   COT ASIN ACOS ATAN ATN2 DEGREES RADIANS RAND NumberBin IntAdd IntSub IntMul IntDiv
//	                   IntMod IntBitAnd IntBitOr IntBitXor IntBitLeftShift IntBitRightShift IntBitNot
//	funcs_type.go      IS_ARRAY IS_BOOL IS_DEFINED IS_NULL IS_NUMBER IS_OBJECT IS_STRING IS_PRIMITIVE
//	                   IS_FINITE_NUMBER IS_INTEGER
//	funcs_array.go     ARRAY_CONCAT ARRAY_CONTAINS ARRAY_CONTAINS_ANY ARRAY_CONTAINS_ALL ARRAY_LENGTH
//	                   ARRAY_SLICE SetIntersect SetUnion CHOOSE ObjectToArray
//	funcs_datetime.go  GetCurrentDateTime/Timestamp/Ticks and their Static forms, DateTimeAdd
//	                   DateTimeDiff DateTimePart DateTimeFromParts DateTimeToTicks DateTimeToTimestamp
//	                   TicksToDateTime TimestampToDateTime DateTimeBin
//	funcs_misc.go      IIF DOCUMENTID
//
// Points where the documentation had to be read closely:
//
//   - Positions and lengths in strings count Unicode code points (choice:
//     the pages say "characters"; UTF-16 code units would differ only for
//     characters outside the Basic Multilingual Plane).
//   - LTRIM, RTRIM and TRIM with a second argument remove any of its
//     characters, not the string as a prefix: ltrim.md's
//     LTRIM("AdventureWorks", "Adventure") is "Works" and trim.md's
//     TRIM("-_-AdventureWorks-_-", "-_") is "AdventureWorks".
//   - REPLICATE gives undefined beyond 10,000 characters or for a negative
//     or non-finite count (replicate.md).
//   - RegexMatch uses Go's RE2 rather than PCRE (regexmatch.md): the
//     common syntax agrees; backreferences and lookaround do not compile
//     and, like invalid patterns, give undefined. The x modifier is
//     implemented by removing white space and #-comments outside classes.
//   - ROUND rounds half away from zero (round.md); NumberBin(x, s) is
//     floor(x/s)·s, undefined for s = 0, so NumberBin(37.752, -100) is 100
//     as numberbin.md shows; ATN2(y, x) is atan2(y, x) (atn2.md's value).
//   - SIN, COS, TAN and COT reduce their argument and sum in
//     double-double precision so that results are correctly rounded, which
//     reproduces tan.md (TAN(PI()/2) = 16331239353195370, TAN(124.1332) =
//     -24.80651023035602) where Go's math.Tan is a few ulps off; LOG10
//     follows fdlibm so that LOG10(5) = 0.6989700043360189 as log10.md has
//     it; LOG(x, b) is LOG10(x)/LOG10(b) (log-base: LOG(2, 10) =
//     0.3010299956639812).
//   - Int* functions take integers in int64 range only (intadd.md: IntAdd(20,
//     0.10) is undefined), divide and take remainders truncating toward
//     zero (intmod.md: IntMod(-12, -5) is -2), give undefined for a zero
//     divisor, and wrap on overflow (intadd.md: "Overflow behavior is
//     similar to the implementation in C++ (wrap-around)").
//   - SetIntersect returns the distinct common elements in the order of
//     its second argument, as setintersect.md's examples do
//     (SetIntersect([1, 2, "A", "B"], ["A", 1]) is ["A", 1]); SetUnion the
//     distinct elements of both in order of first appearance.
//   - Date-times are "YYYY-MM-DDThh:mm:ss.fffffffZ" strings; on input the
//     fraction (1-7 digits) and the Z are optional, as in every example of
//     the date functions, and years are 0001-9999. Ticks are 100 ns since
//     the Unix epoch (datetimetoticks.md: 2015-05-19T12:00:00 is
//     14320368000000000). DateTimeAdd with months and years clamps the day
//     to the end of a shorter month (2020-01-31 + 1 month = 2020-02-29,
//     choice, as .NET and SQL Server do). DateTimeDiff counts boundaries
//     crossed (datetimediff.md), and accepts years and months although the
//     page's table lists only day and below, because its own example uses
//     "yyyy" and "mm". DateTimeBin's origin defaults to the Unix epoch and
//     may not precede 1601 (datetimebin.md). Part names are
//     case-insensitive (choice).
//   - DOCUMENTID(root) decodes the _rid of the item: base64 with '-' for
//     '/', bytes 8-15 the document number as a little-endian integer whose
//     top four bits are the resource type, 0 for documents (the SDK's
//     Pagination/ResourceIdentifier.cs); documentid.md's
//     "36ZyAPW+uN8NAAAAAAAAAA==" is 13.
//   - StringToArray/Boolean/Null/Number/Object parse the string as JSON
//     (white space around allowed, single quotes not) and give undefined
//     unless the result has the expected type (stringtoarray.md ...).
//
// # 5. Aggregates
//
// An Accumulator computes COUNT, SUM, AVG, MIN, MAX or COUNTIF over the
// values Add gives it, and Merge combines the accumulators of partitions
// or pages: AVG keeps sum and count (as the SDK's AverageAggregator), MIN
// and MAX keep the best value, COUNT the count. Undefined inputs are
// skipped; SUM and AVG become undefined on any non-number (sum.md,
// average.md); MIN and MAX compare across types in the ORDER BY order
// (max.md: string > number > boolean > null) and become undefined on an
// array or object (the SDK's MinMaxAggregator); over no values COUNT and
// SUM are 0 and AVG, MIN and MAX undefined. Float sums are added left to
// right in float64 as Cosmos DB adds them, which gives average.md's 29.2
// for 20.28, 5.11 and 62.21 (an exactly rounded sum would give
// 29.200000000000003); the price is that a merged float sum may differ in
// its last bits from an unmerged one, as it can in Cosmos DB. Integer sums
// are exact (128-bit) and independent of grouping. COUNTIF(x), which counts
// the rows where x is true, is not in the Cosmos DB documentation and is
// offered as an extension.
//
// # 6. Check and errors
//
// Check(q) validates a parsed query before execution: unknown functions
// (by name and position), unsupported ones (spatial), FullTextScore and
// RRF outside ORDER BY RANK and the form of ORDER BY RANK (one call, no
// ASC or DESC: "Specifying a sort order (ASC or DESC) in the ORDER BY RANK
// clause is not allowed."),
// argument counts ("SUBSTRING expects 3 arguments, got 2"), aggregates in
// WHERE, GROUP BY or ORDER BY or nested in another aggregate, TOP/OFFSET/
// LIMIT literals that are not non-negative integers, and LIKE ESCAPEs of
// more than one character. CheckParams(q, params) adds that every @name has
// a value and that TOP/OFFSET/LIMIT parameters are non-negative integers.
// Eval reports the same problems when it meets them, and unbound names.
//
// Every error is an *Error with the position of the offending node:
//
//	invalid query at line 1, column 8: unknown function FOO
//
// It wraps ErrInvalidQuery (a client error, HTTP 400) and one sentinel per
// meaning (ErrUnknownFunction, ErrUnsupported, ErrArgCount,
// ErrAggregatePlacement, ErrUndeclaredParam, ErrUnbound, ErrBadArgument),
// except that ErrNeedsExecutor and ErrMissingEnv, which mean the caller's
// Env lacked a hook, do not wrap ErrInvalidQuery.
//
// # 7. Testing
//
// testdata/eval.txt holds the golden cases in the datadriven format
// (expression + document +
// parameters → value, undefined or error; and whole queries → Check
// result). Regenerate with
//
//	go test ./internal/query/eval -run TestGolden -rewrite
//
// and review the diff. TestGolden also requires 250 expression cases and a
// case for every built-in. The property tests check that Compare is
// a total order consistent with Equal and Hash (TestCompareTotalOrder),
// that merged accumulators equal unmerged ones (TestAccumulatorMerge), and
// that FromJSON agrees with encoding/json (TestFromJSONAgreesWithEncodingJSON
// and FuzzFromJSON).
package eval
