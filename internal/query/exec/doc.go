// Package exec is the pure execution layer of the query engine: it runs a
// parsed query over the documents of hash-partitioned storage, one page at
// a time, and plans queries for the SDKs that merge partitions themselves.
// It knows nothing of storage, HTTP or goroutines: documents come from a
// Source per partition, and the caller decides what runs where.
//
// The model in one sentence: a Plan (Compile) runs over each partition's
// Source to give a Partial (RunPartition); Merge combines the Partials of
// all partitions into a page of rows and the State to resume from; Exec is
// both for callers that run partitions one after another.
//
//	*ast.Query ──Compile──▶ Plan ─┬─ RunPartition(source 0, state, want) ─▶ Partial ─┐
//	                              ├─ RunPartition(source 1, state, want) ─▶ Partial ─┼─ Merge ─▶ rows, State
//	                              └─ ...                                             ─┘            │
//	State ◀──UnmarshalState── bytes ◀──(continuation token)── MarshalBinary ◀─────────────────────┘
//	Plan ──QueryPlan(ranges)──▶ PartitionedQueryExecutionInfo JSON for the JS SDK
//
// # 1. The caller's duties
//
//  1. Compile once per request (it is cheap) with the request's parameters;
//     errors are query errors (*eval.Error, wrapping eval.ErrInvalidQuery:
//     HTTP 400). Use CompileWith to give the clock, RAND and UDFs; keep
//     Options.QueryStart fixed across the pages of one query.
//  2. Give the sources in key order: every key of sources[i] below every
//     key of sources[i+1], each source in ascending key order, keys unique
//     across partitions. The storage key "container | EPK | id" over EPK
//     range partitions is exactly that. A source out of order is an error.
//  3. Build fresh sources for every page: a Source is read once. Implement
//     Seeker where the storage can seek: streaming queries then resume
//     without reading what earlier pages read. For a plan with a SortPath,
//     give SortedSources where the storage can read in that order: ORDER
//     BY then reads only what its page needs.
//  4. For a page of n rows: w := plan.Want(state, n); run
//     plan.RunPartition(source_i, state, w) for every partition, in parallel
//     if you like (a Plan is safe for concurrent use); then
//     plan.Merge(state, partials, n) with the partials in source order. For
//     a Streaming plan a nil Partial means "not run" and the page ends
//     before it, so partitions may also be run lazily one after another,
//     as Exec does (Partial.Exhausted says when to move on). Every other
//     shape needs every partition's Partial.
//  5. A page may hold fewer than n rows, even none, while the state is not
//     Done; clients page until the continuation is gone, as the SDKs do.
//  6. Wrap State.MarshalBinary in the continuation token (with the
//     container's identity) and give it back to UnmarshalState; its errors
//     wrap ErrBadContinuation (HTTP 400). The state names no partition, so
//     it survives partition splits and merges between pages.
//  7. Bound pages with Limits (ExecLimits, RunPartitionLimits, MergeLimits):
//     steps and bytes built (eval.Budget, errors wrapping eval.ErrBudget:
//     HTTP 400), the JSON size of a page, what the runs hold (Held: one
//     account for all the partitions of a page, which may answer to the
//     server's), and a Check for cancellation and time (ErrPageTime ends a
//     streaming page early with a continuation). Every partition run gets
//     its own eval.Budget; the page's Held is shared.
//  8. Serve the query plan request with QueryPlan and the query's EPK
//     ranges; ErrNotPlannable is a 400, as Cosmos DB's planner gives.
//  9. A client that merges partitions itself sends the rewritten query of
//     the plan with its placeholder replaced by true, to one partition at
//     a time: it is an ordinary query for this package (ReplaceOrderByFilter
//     does the replacement for a client that forgot).
//
// # 2. Shapes: what is streamed, what is materialized
//
// A plan has one Shape, which decides what a partition returns, how Merge
// combines, and what a State records. "Want" is the page size plus the
// OFFSET still to skip, within TOP and LIMIT.
//
//	shape            partition returns                       merge                          state (last consumed row)
//	Streaming        the first want rows after the state's   partition after partition      document key + fan-out ordinal
//	                 position, in key order; stops there     (key order)
//	Ordered          the want smallest rows after the sort   k-way merge on the sort key    ORDER BY values + key + ordinal
//	(ORDER BY)       key; reads the whole partition (from a
//	                 SortedSource only the first buckets),
//	                 keeps at most ~2·want rows
//	Distinct         the want smallest distinct rows after   k-way merge, equal rows once   the row
//	                 the last row, in value order
//	OrderedDistinct  as Ordered with the row value as        k-way merge, a row equal to    ORDER BY values + row, and the
//	(DISTINCT +      tie-break, equal pairs once             the previous one is dropped    last row emitted
//	ORDER BY)
//	Grouped          groups after the state's key with       groups combined (Accumulator   the group key
//	(GROUP BY)       accumulator states; at most ~2·want     .Merge), emitted in key order
//	                 groups, complete below a cutoff         below every partition's cutoff
//	Aggregate        one group: accumulator states           combined, projected: one page  nothing (done)
//	Ranked           the best rankWindow rows of each        union, ranked per component,   rows consumed
//	(RANK RRF)       component, with their scores            fused by RRF, in fused order
//
// Nothing is re-run and skipped: every shape resumes by filtering each
// partition to the rows strictly after the state's sort key, as Cosmos
// DB's own ORDER BY continuation does, and OFFSET is skipped once, by the
// merge, and carried in the state. What a page costs: a Streaming page
// reads from the state's key (seeking there) to the end of the page; a page
// of any other shape reads every partition in full (the order of ORDER BY,
// DISTINCT and GROUP BY is not the storage order), keeping at most about
// 2·want rows or groups per partition in memory, except that an ORDER BY
// whose first key is a document path (Plan.SortPath) over sources in that
// order (SortedSource, which storage gives from an index) starts at the
// state's bucket and stops at the first bucket that begins once want rows
// are kept.
// Two things are computed in full on every page: an aggregate without
// GROUP BY (one page anyway), and DISTINCT over GROUP BY or aggregates,
// whose groups are all combined and projected each page, sorted by row
// value and emitted after the state's last row (memory proportional to the
// number of groups). All of this is deterministic: the same query over the
// same documents gives the same rows in the same order whatever the number
// of partitions and the page sizes, which the tests check.
//
// Order without ORDER BY (Cosmos DB promises none): streaming rows come in
// storage key order; DISTINCT rows in value order (eval.Compare); groups in
// group-key order. So TOP or OFFSET over DISTINCT or GROUP BY picks the
// smallest rows or groups.
//
// # 3. The State
//
// See the State type for the layout of its binary form (stable, version
// 1). It records the sort key of the last row the merge consumed (emitted,
// or skipped by OFFSET), the OFFSET still to skip, the rows still allowed
// by LIMIT and TOP, and a fingerprint of the query text and parameters. A
// streaming position is a document key plus the ordinal of the row in the
// document's FROM/JOIN expansion (its fan-out), so a page can end in the
// middle of a document's JOIN rows; when a partition is exhausted the
// position moves to its last key read, so filtered documents are not read
// again. Keys in a state are whole storage keys; a query whose sort values
// are large (ORDER BY a long string, DISTINCT over whole documents) has an
// equally large state.
//
// # 4. Semantics
//
// The expression semantics are package eval's (see its manual): undefined,
// the three-valued logic, comparisons, functions, aggregates. This package
// adds the clauses, following the Cosmos DB documentation
// (learn.microsoft.com/azure/cosmos-db/nosql/query/) and the SDKs' query
// pipelines (azure-cosmos-dotnet-v3 Query/Core/Pipeline); "(choice)" marks
// what neither settles.
//
//   - FROM: `FROM c` (any name: the container; the alias is the name),
//     `FROM c.path x` (one row per document whose path is defined; without
//     AS the alias is the last property name), `FROM x IN c.path` (one row
//     per element when the path is an array, none otherwise),
//     `FROM (SELECT ...) x` (the subquery runs over each document; it may
//     only filter and project: TOP, OFFSET, ORDER BY, DISTINCT, GROUP BY
//     and aggregates are refused). Without FROM a query has one row, made
//     once by Merge whatever the number of partitions.
//   - JOIN: the nested loop over the sources, each evaluated in the scope
//     of the aliases before it; `JOIN x IN path` iterates an array,
//     `JOIN path x` binds the value itself (one row if defined), `JOIN
//     (SELECT ...) x` binds each row of the correlated subquery and needs no
//     alias (subquery.md joins that way), `JOIN x IN (SELECT ...)`
//     iterates the elements of its array rows (choice: as IN does for a
//     path). The order of a document's rows in this expansion is its
//     fan-out ordinal.
//   - Subqueries ((SELECT ...), EXISTS, ARRAY, FIRST, LAST, ALL, and JOIN
//     and FROM subqueries) are evaluated in memory per row through
//     eval.Env.Subquery; their FROM must start from an alias in scope. In
//     them, ORDER BY is stable, DISTINCT keeps first occurrences (choice;
//     with ORDER BY as in a query), groups come in key order.
//   - SELECT *: the value of the single source (refused with JOIN, without
//     FROM and with GROUP BY: "'SELECT *' is only valid with a single input
//     set", as Cosmos DB says). SELECT list: an object; an item is named by
//     its alias, else the last property name of a path (c.a.b → b,
//     c["k"] → k, c → c), else $1, $2 ... in order; undefined members are
//     left out; two items of one name are refused (choice). SELECT VALUE:
//     undefined rows are dropped.
//   - WHERE keeps the rows where the condition is true.
//   - GROUP BY and aggregates (COUNT SUM AVG MIN MAX COUNTIF in the select
//     clause, anywhere inside its expressions): a group per distinct key
//     (eval.Equal; undefined is a key like any other), or one group without
//     GROUP BY, even over no rows (COUNT is then 0, MAX undefined). The
//     select clause may refer to the input only inside aggregates and
//     through GROUP BY expressions ("... is invalid in the select list
//     because it is not contained in an aggregate function or the GROUP BY
//     clause"); subqueries are not supported there. ORDER BY with GROUP BY
//     is refused (choice); with aggregates alone it is moot and ignored.
//   - ORDER BY sorts by eval.Compare on each key (undefined < null <
//     booleans < numbers < strings < arrays < objects), each ASC or DESC;
//     ties are broken by document key and then fan-out ordinal, ascending
//     whatever the direction, so the order is total. Rows whose keys are
//     undefined are kept (first in ASC). ORDER BY VectorDistance without
//     ASC or DESC sorts the closest first (descending for cosine and dot
//     product, ascending for Euclidean). ORDER BY RANK FullTextScore sorts
//     by BM25 over statistics the caller gathers over the whole container
//     (NeedsStats, GatherStats, WithStats); ORDER BY RANK RRF is the
//     Ranked shape (rank.go: best rows per component, fused ranks).
//   - DISTINCT removes rows equal under eval.Equal. With ORDER BY it
//     follows the SDKs' ordered-distinct stage: rows sorted by the ORDER BY
//     values, ties by row value (choice: so that equal rows with equal keys
//     meet), and a row equal to the one before it dropped; when the ORDER
//     BY keys are functions of the row, as usual, this is plain DISTINCT.
//   - OFFSET, then LIMIT, then TOP, applied to the merged rows (TOP and
//     OFFSET/LIMIT may be combined: the smaller bound wins after OFFSET).
//   - Float sums (SUM, AVG) are added per partition and the partial sums
//     added by Merge, so their last bits can depend on the partitioning, as
//     in Cosmos DB (see eval's Accumulator).
//
// # 5. Query plans for the SDKs
//
// QueryPlan answers the JS SDK's query plan request with the
// PartitionedQueryExecutionInfo (version 2) that Cosmos DB's planner gives,
// whose shapes were taken from azure-cosmos-dotnet-v3's
// QueryPlanBaselineTests: queryInfo (distinctType None/Unordered/Ordered,
// top, offset, limit, orderBy Ascending/Descending, orderByExpressions,
// groupByExpressions, groupByAliases, aggregates Count/Sum/Average/Min/Max/
// CountIf, groupByAliasToAggregateType, rewrittenQuery, hasSelectValue,
// dCountInfo, hasNonStreamingOrderBy) and the caller's queryRanges. The
// rewritten queries are described at QueryPlan. An aggregate composed with
// other expressions cannot be merged by an SDK: QueryPlan refuses it with
// ErrNotPlannable ("Compositions of aggregates and other expressions are
// not allowed.") although Exec runs such queries. testdata/queryplans.txt
// holds the expected plans.
//
// # 6. Testing
//
// testdata/dataset.json is a fixed set of 40 documents (nested objects,
// arrays, missing properties, nulls, mixed types in one property) and
// testdata/queries.txt some 380 queries with their expected rows, derived
// by hand from the dataset (its header holds the working tables, among
// them the key order that decides ORDER BY ties). TestGolden runs each over
// the dataset as one partition and compares with the expectation (in
// order with ORDER BY, as a multiset otherwise), then requires the same
// rows in the same order split over 3, 4 and 7 partitions by hash of id,
// with pages of 1, 2, 3 and 7 rows through encoded states, with and without
// Seek. TestSDKMerge plans each query, runs the rewritten query per
// partition and merges the results as the SDKs' pipelines do
// (sdkmerge_test.go), and requires the executor's rows. The synthetic tests
// (random_test.go) use 1,000 random documents, so that partitions cut
// their buffers and evict groups, with random splits and page sizes, states
// resumed over re-split partitions, partitions run in goroutines, and
// the number of documents a streaming query reads. FuzzUnmarshalState
// feeds arbitrary bytes to UnmarshalState:
//
//	go test ./internal/query/exec -run XXX -fuzz FuzzUnmarshalState -fuzztime 60s
package exec
