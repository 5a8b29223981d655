// Package traversal evaluates a Gremlin traversal (lang.Traversal) against
// a graph.Store, with the semantics of Apache TinkerPop as Azure Cosmos DB
// offers them.
//
// # Evaluation model
//
// A traversal compiles first into a program of operators (compile.go), so
// that an unsupported step or a malformed argument fails before anything is
// read or written. The program then runs breadth-first, as Cosmos does:
// each operator takes the whole frontier of traversers and produces the
// next one. A traverser carries its object, its path (a shared linked
// list), its repeat() loop counters and a tag.
//
// Nested traversals are either global children (union branches, the
// repeat body: they run over the whole frontier) or local children (by,
// where, not, and, or, coalesce, optional, choose, local, map, flatMap,
// sideEffect, from/to: one result set per input traverser). A local child
// also runs once over the whole frontier: each input gets its own tag and
// every reducing step (count, fold, sum, group, order, dedup, limit, ...)
// works per tag, so g.V().by(out().count()) still does one edge query for
// all vertices.
//
// A global child run over some of the traversers (a choose() branch, a
// repeat() iteration) reduces only for the tags that entered it.
//
// Steps that remember what they saw keep their state per step, per run of
// a local child and per tag: dedup() inside repeat() remembers earlier
// iterations (repeat(dedup().both()).times(2) is empty, as in TinkerPop's
// Repeat.feature), limit/range/skip count afresh each iteration
// (Range.feature), and each run of a local child, and each group of
// group().by().by(traversal), starts afresh.
//
// Other TinkerPop rules kept: infix and()/or() are rewritten as
// ConnectiveStrategy does (the right operand runs to the traversal's end);
// a map unfolds into entries (select(keys) of one is its key; in a result
// an entry is a map of one entry); select() and where() resolve a name
// from the map in hand, then a side effect, then the path; aggregate and
// store side effects exist, empty, from the start; group()'s value
// traversal gives its first result per group and a group it yields
// nothing for is left out.
//
// # Push-down
//
// V(ids...) followed by has/hasLabel/hasId/hasNot becomes one
// graph.VertexQuery: ids, labels, property conditions, and partition keys
// from g.V(['pk','id']) pairs or from has('<pk>', v) / has('<pk>',
// within(...)) on the store's partition key property, so that the store
// reads one or a few logical partitions instead of all; a limit(n) right
// after caps the scan. out/in/both and outE/inE/bothE do one
// graph.EdgeQuery for the frontier, and out/in/both one VertexQuery for
// the neighbours, with the conditions of the has steps that follow them
// (on the edges for outE/inE/bothE, on the neighbours for out/in/both);
// outV/inV/bothV/otherV do one VertexQuery. Neighbours and the pairs of
// g.V([pk, id], ...) are read by reference (VertexQuery.Refs: each in its
// own logical partition), not as every id in every key. The evaluator re-checks every condition on what the store
// returns, so a store may narrow less than asked. Every store call's
// graph.StoreOp is kept in Result.Ops and in the profile of the step that
// caused it (executionProfile()'s storeOps, with Parsec's "index" field).
//
// # Writes
//
// addV, addE, property and drop change the traversal's own copy of each
// element (every element read is held once per run, so every traverser and
// every later read in the traversal sees the change) and record it in a
// write set. When the traversal has run, the write set becomes one list of
// graph.Mutation in first-touch order, handed to one Store.Apply, which
// commits each logical partition's group atomically. A failed traversal
// writes nothing; a failed Apply reports how many mutations committed.
//
// # Tests
//
// The tests run tables of traversals with answers written from TinkerPop's
// reference and feature files over the modern and crew graphs, against
// the in-memory store (package memgraph) and the engine-backed store; a
// differential test against a naive depth-first interpreter; and, when
// PARSEC_TINKERPOP_FEATURES names TinkerPop's gremlin-test feature
// directory, every read-only scenario of the modern and crew graphs.
//
// # Cosmos differences
//
//   - Ids are strings (g.V(1) reads the vertex "1"); new elements get GUIDs.
//   - Every vertex property is a list: valueMap() gives lists, values()
//     unrolls them; property(k, v) and property(list, k, v) append (Cosmos
//     DB's default, where TinkerGraph's property(k, v) replaces),
//     property(single, k, v) replaces; the partition key property keeps
//     one value; property(set, ...) is unsupported, as are null and
//     object-valued properties. property('id', x) names the element an
//     addV or addE creates.
//   - Terminal methods: next() is the first result (an error when there
//     is none), next(n) the first n, tryNext() the first if any,
//     hasNext() a boolean, iterate() nothing, toSet() the distinct
//     results, toList() and toBulkSet() all; the traversal runs whole and
//     commits its writes first. explain() and
//     withStrategies(PartitionStrategy) are refused (ErrUnsupported).
//   - Every vertex needs the partition key property; a vertex added
//     without one fails the traversal, and the partition key of an
//     existing vertex cannot change or be dropped.
//   - An edge lives with its source vertex (graph.Edge.Out's partition).
//   - Limits: repeat() runs at most 32 iterations (Options.MaxRepeat), a
//     traversal at most 30 s (Options.Timeout); a memory budget and a
//     result cap bound the rest. Each is an *Error with Code 429.
//   - executionProfile() returns Cosmos's format (ProfileValue).
//   - Traversal order is breadth-first, so where TinkerPop's depth-first
//     order differs (union, emit), results come branch by branch and
//     iteration by iteration.
//
// Errors are *Error: Code (400 bad traversal, 429 limit, 500 store), the
// Step that failed, a Message, and a cause that is one of the sentinels
// (ErrUnsupported, ErrInvalid, ErrPartitionKey, ErrRepeatLimit,
// ErrTimeout, ErrMemory, ErrTooManyResults, ErrStore joined with the
// store's own error).
package traversal
