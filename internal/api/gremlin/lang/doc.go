// Package lang is the Gremlin traversal language as Parsec receives it: the
// syntax tree of a traversal (ast.go) and the parser of scripts written in
// the gremlin-groovy / gremlin-lang grammar. Both script languages parse with
// one grammar; bytecode requests decode into the same tree in the serializer
// package, so that the evaluator sees one form.
//
// # API
//
//	Parse(script, bindings, limits) (*Traversal, error)  script → tree
//	Format(t) string                                     tree → canonical gremlin-lang text
//	FormatValue(v) string                                one Value as Format writes it
//	Equal(a, b) / ValueEqual(a, b)                       tree and value equality
//	CountOperators(t) int                                Cosmos DB's "operator depth"
//	ParseDatetime(s) / ParseUUID(s)                      the literal forms of datetime() and UUID()
//
// Errors: *SyntaxError (line, column, what was expected), *LimitError (the
// limit's name; Cosmos DB answers these with 429), *BindingError (a binding
// value with no literal form). Parse is a pure function; the tree it returns
// is the caller's, but values substituted from one binding named twice are
// shared, so treat the tree as read-only.
//
// # Grammar
//
// The grammar is TinkerPop's gremlin-language/src/main/antlr4/Gremlin.g4
// (tag 3.8.1) read generically: a step is any identifier with arguments, and
// the evaluator, not the parser, decides which steps exist (so a new step
// needs no parser change and an unsupported one is named by the evaluator).
//
//	script     = traversal { ";" }
//	traversal  = "g" { "." source } "." step { "." step } [ "." terminal ]
//	source     = ("with" | "withBulk" | "withPath" | "withSack" | "withSideEffect" | ...) args
//	           | ("withStrategies" | "withoutStrategies") "(" strategy { "," strategy } ")"
//	strategy   = ["new"] Class [ "(" key ":" value { "," key ":" value } ")" ]
//	           | Class ".build()" { "." key "(" values ")" } ".create()"
//	terminal   = next | next(n) | iterate | hasNext | tryNext | toList | toSet | toBulkSet | explain
//	step       = Identifier "(" [ value { "," value } ] ")"
//	value      = literal | collection | predicate | constant | nested | Identifier (a binding)
//	nested     = "__" { "." step } | step { "." step } | traversal
//	predicate  = ["P."] (eq|neq|lt|lte|gt|gte|inside|outside|between|within|without|not|typeOf) args
//	           | ["TextP."] (containing|startingWith|endingWith|notContaining|...|regex|notRegex) args
//	           | predicate "." ("and" | "or") "(" predicate ")" | predicate ".negate()"
//	constant   = [Class "."] name        T, Order, Scope, Column, Cardinality, Pop, Operator,
//	                                     Direction, Pick, Barrier, Merge, DT, GType, and (long
//	                                     form only) WithOptions, IO, ConnectedComponent,
//	                                     PageRank, PeerPressure, ShortestPath
//	collection = "[" values "]" | "[" entries "]" | "[:]" | "{" values "}" | int ".." int
//	entry      = key ":" value
//	key        = Identifier (a string) | string | number | T.x | Direction.x | collection
//	           | "(" (string | number | T constant | Direction constant | collection) ")"
//	cardinal   = ["Cardinality."] (single | set | list) "(" value ")"   (a CardinalityValue)
//	literal    = number | string | true | false | null | NaN | Infinity | -Infinity
//	           | datetime("iso-8601") | UUID("...")
//
// Values follow ast.go: int32 unless the integer needs int64 (then
// *big.Int); suffixes b, s, i give int32 (the tree has no byte or short), l
// int64, n *big.Int, d float64, f float32, m *big.Float (256-bit, decimal
// exponent within ±400); hexadecimal 0x1F and octal 017 as in Java; _
// between digits. Strings are single- or double-quoted with Java escapes
// (\n \t \uXXXX with surrogate pairs, octal \0-\377, \' \" \\ \$) and may
// span lines; a double-quoted string is not a GString ($ is literal).
// datetime() takes what TinkerPop's DatetimeHelper takes (a date, a year
// and month, or a date-time with optional seconds, fraction and offset; no
// offset means UTC) and gives a UTC time.Time. Comments // and /* */ are
// skipped.
//
// # Groovy forms accepted
//
// Cosmos DB's scripts are gremlin-groovy as its documentation writes them:
// double-quoted strings; __.out() and bare out() in nested positions (both
// give an anonymous *Traversal); __ alone (identity); P.gt(3) and bare
// gt(3); TextP.startingWith; T.id and bare id; Order.desc/desc and the
// pre-3.5 incr/decr (read as asc/desc); Scope.local/local;
// Cardinality.list/list; numeric suffixes 1l 1L 2.0d 1.5f 10n 1.0m; list
// literals (g.V(['pk','id']), Cosmos DB's partition-key-and-id form); Groovy
// map literals with naked keys ([name: 'x']) or (T.label) keys; a trailing
// ';'; a traversal from g as an argument, as in Cosmos DB's quickstart
// addE('knows').to(g.V('mary')) (read as __.V('mary')); the Java builder
// PartitionStrategy.build().partitionKey('pk').create() of Cosmos DB's
// partitioning guide; the terminal methods (recorded in Traversal.Terminal,
// except toList(), which is what the server does anyway).
//
// not(...) is the predicate P.not when its one argument is a predicate and
// the step not otherwise. within(['a','b']) and within('a','b') give the same
// P. Chained a.and(b).and(c) flattens to and(a, b, c) as TinkerPop's AndP
// does; negate() wraps in not. Grammar constants win over bindings: a
// binding named id, list or desc cannot be used by its bare name, as in
// gremlin-lang where those are keywords and in Groovy where they are static
// imports; but a binding wins over a bare GType or DT name (string, path,
// vertex, day: 3.7/3.8 additions that Cosmos DB scripts may use as
// binding names).
//
// # Forms refused, each with its own message
//
// Lambdas and closures (filter{...}, Lambda.function), which Cosmos DB
// refuses too (gremlin/support.md); variable assignment and several
// statements (send one traversal and pass values as bindings); arithmetic
// and comparison operators; method calls on values (Long.MAX_VALUE,
// x.size()); anything after a terminal method, and toString(); g.tx();
// the non-deterministic datetime() and UUID()
// without an argument; string ranges 'a'..'e'; an identifier that is
// neither a constant nor a binding ("unknown identifier x"); map keys the
// grammar does not admit ([Scope.local: 1], [(null): 1]).
//
// # Limits
//
// Limits carries three bounds, each a *LimitError naming it:
//   - script length: 64 KB by default, Cosmos DB's "script length"
//     (gremlin/limits.md), checked before anything is read;
//   - operator depth: 400 by default. Cosmos DB's limits page defines it as
//     the "total number of unique steps in a traversal" and counts
//     g.V('label').repeat(out()).times(100) as 3 (V, repeat, out: times is a
//     parameter of repeat). So it is a total, not a nesting depth: every
//     step at every level of nesting, except source steps, the terminal and
//     the modulators as, by, emit, from, option, read, times, to, until,
//     with, write (CountOperators);
//   - nesting: 100 by default, the depth of traversals, predicates,
//     collections and strategies inside each other (a predicate chain's and,
//     or and negate count as levels), so that neither the recursive parser
//     nor any recursive walk of the tree goes unbounded. Binding values are
//     held to the same depth.
//
// Range literals expand to at most MaxRangeLength elements per script, all
// ranges together. Everything else Parse does is linear in the script and
// the bindings (set literals deduplicate through a hash of each element's
// canonical text; a binding is converted once however often it is named).
//
// # Format
//
// Format writes canonical gremlin-lang: single quotes, no spaces, constants
// and predicates with their class, nested traversals from __, int64 with L,
// float32 with f, float64 always with '.' or an exponent, *big.Int with n,
// *big.Float with m, times as datetime('RFC 3339 in UTC'), map keys that are
// not strings or numbers in parentheses. Parse(Format(t)) equals t for every
// tree Parse returns (FuzzParse checks it); bytecode-built trees that the
// grammar cannot write (an and whose first operand is an and) read back in
// TinkerPop's flattened form.
//
// # Sources
//
//   - apache/tinkerpop 3.8.1: gremlin-language/src/main/antlr4/Gremlin.g4
//     (grammar, lexer rules for numbers and strings) and
//     gremlin-core/.../language/grammar/GenericLiteralVisitor.java (literal
//     types, ranges) and util/DatetimeHelper.java (datetime strings); the
//     reference documentation and recipes, whose 778 examples are
//     testdata/tinkerpop-docs.txt; the 2,050 traversals of the Gherkin
//     feature tests (testdata/tinkerpop-features.txt; all but the random
//     UUID() parse); the grammar's own positive and negative test lists
//     (testdata/tinkerpop-gremlin-values.txt, -incorrect-*.txt), with
//     Parsec's deliberate differences listed in conformance_test.go:
//     step names are not checked, any value may be an argument, and
//     from(g.V(1)) is Cosmos DB's idiom.
//   - Azure Cosmos DB docs (MicrosoftDocs/azure-docs, articles/cosmos-db/
//     gremlin): limits.md (script length, operator depth, 429), support.md
//     (no lambdas, no bytecode), partitioning.md (g.V(['pk','id']),
//     within, PartitionStrategy builder), quickstart-console.md and
//     tutorial-query.md (the example scripts of the tests).
package lang
