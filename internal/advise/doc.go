// Package advise evaluates partition-key candidates on sample documents and
// ranks them: `parsec advise`. It is pure: the input is the documents (in
// insertion order) and Options, the output a Report; reading files and
// talking to a server are the command's business.
//
// # Candidates
//
// A candidate is a synthkey expression: a path (/date), a hierarchical key
// ([/tenant, /user]), or a synthetic key (concat(/deviceId, "-", /date),
// concat(/date, ".", random(1, 400)), concat(/date, ".", hash(/vin, 400))).
// Every document's key is computed with the synthkey package (random
// suffixes from a generator seeded with Options.Seed and the expression, so
// runs repeat) and hashed with internal/epk exactly as the server hashes it:
//
//   - a path is a Hash version 2 key on that path;
//   - a computed key is a string stored in one property: Hash version 2 on a
//     single path (reported as /partitionKey; the name does not change the
//     hash);
//   - a hierarchical key is MultiHash version 2, one path per level;
//   - live, the container's current key keeps its real definition (version
//     1 included) and its real ranges.
//
// The physical partition of a key is the range that holds its effective
// partition key. The ranges are those a new container with N partitions
// gets (epk.Definition.EvenRanges: equal width over the hash domain, as the
// engine creates them), or the container's current ranges for its current
// key in live mode.
//
// # Proposed candidates
//
// Without candidates, Propose looks at the top-level properties (not _rid,
// _self, _etag, _attachments, _ts, _lsn) of every document:
//
//   - a property qualifies when it is in at least 90% of the documents and
//     every value is a string or a whole number (fractional numbers are
//     measurements, booleans have two values, objects and arrays cannot be
//     keys);
//   - it is monotonic when its values rise with insertion order (the rank
//     correlation below is at least 0.7), and date-like when 90% of its
//     values are ISO dates or times (2024-03-30, 2024-03-30T10:00:00Z) or
//     epoch seconds or milliseconds;
//   - singles: up to 4 non-monotonic qualifying properties, most distinct
//     values first, with enough distinct values: at least 10 per partition
//     and at least 20 (if none has, the 4 with the most values);
//   - pairs: up to 2 pairs of non-monotonic, non-unique qualifying
//     properties, the one with fewer values first, kept when the pair has
//     more distinct values than its second property alone (so 1:1 pairs
//     such as a device and its VIN are skipped) and enough of them; each as
//     concat(/a, "-", /b) and as the hierarchical [/a, /b];
//   - a time bucket: the date-like monotonic property with the fewest
//     distinct values, if it holds at least 10 documents per value on
//     average. It is proposed alone (the classic hot spot), as
//     concat(/bucket, ".", hash(/h, 400)) where /h is the single with the
//     most distinct values that is not unique (an entity such as a device,
//     which readers know; ties by name), and as concat(/bucket, ".",
//     random(1, 400)).
//
// # Sample
//
// The documents are collected by a Sample within a byte budget (their JSON
// text; DefaultSampleBytes unless `parsec advise --max-sample-bytes`):
// past it, one document in every 2, then 4, 8... of those read is kept,
// evenly spread over them, and Sample.Capped, in the report's warnings,
// says how many of how many were analyzed.
//
// # Insertion order and current writes
//
// Documents are in insertion order: the order of the sample file, or, live,
// the order of _ts (ties keep the read feed's order). The current writes are
// the most recent window: the last 2% of the documents, at least 200 (all of
// them when fewer). They stand for where writes go now, which is what
// throttles: a key can be perfectly spread over the whole history and still
// send every new write to one partition.
//
// For each candidate the window gives the writes per logical and physical
// partition; hottestPartitionShare is the busiest physical partition's
// share of them (0 to 1; fair is 1/N). The spread counts as even when that
// share is at most
//
//	min(1.5/N, 1/N + 0.2) + 3·sqrt((1/N)(1 − 1/N)/W)
//
// for W current writes: half again the fair share (at most 20 points above
// it) plus three standard deviations of sampling noise. (One partition is
// always even.)
//
// # Monotonicity
//
// As MongoDB's analyzeShardKey does with record ids, a candidate is
// monotonic when Spearman's rank correlation between the insertion index
// and the key is at least 0.7. Keys are ordered level by level in their
// values' order (undefined < null < false < true < numbers < strings;
// strings bytewise), ties get their mean rank, and the correlation is
// Pearson's over the ranks. A monotonic key is not a problem by itself
// under hash partitioning (concat(/date, ".", hash(/vin, 400)) is monotonic
// and spreads well); it is when the current writes concentrate, which the
// window measures.
//
// # Load, skew and the 429 risk
//
// The write rate (documents/s) comes from the workload's write operations
// (sum of their rates), else from the growth (documents/day / 86,400), else
// it is unknown. A write costs the engine's charge for its document
// (throughput.WriteCharge of its size and index terms, about 5 RU per KB).
// Writes are spread like the current window: partition p gets
//
//	RU_p = rate × Σ charge(current writes on p) / W + workload RU on p
//
// and a key likewise (its load). Storage and RU skew across physical
// partitions are reported as max/mean (1 is even, N is everything on one)
// and the Gini coefficient (0 even, (N−1)/N everything on one). With no
// known rate the RU figures are per write/s and the risk is "unknown".
//
// The budget of a partition is min(T/N, 10,000) RU/s: T is --throughput, or
// N × 10,000 when only the partition count is known (live: the container's
// throughput and the budgets the server reports). The 429 risk compares the
// busiest partition's RU_p with the budget: high at 100% or more (or when
// the hottest key alone needs 10,000 RU/s, which no throughput can serve,
// since a logical partition never spans partitions), medium from 70%, low
// from 50%, none below. maxWriteRate is the write rate at which the busiest
// partition reaches its budget; evenMaxWriteRate what a perfect spread
// would allow (N × budget / average write charge).
//
// # The 20 GB limit
//
// Growth (bytes/day) is --growth, or the sample's bytes over its _ts span.
// Each key grows in proportion to its share of the current writes' bytes;
// the days until key k reaches 20 GB are (20 GB − bytes_k) / growth_k. A
// monotonic key (a time bucket) stops growing when its time is over: when
// timestamps are known, its keys are taken to live as long as the median
// finished key did (first to last write), so a key that would not reach 20
// GB in its remaining lifetime never does. daysTo20GB is the soonest, and
// it is a problem below 3 years (high below one year; "now" when a key is
// already over). Storage figures are those of the sample; the projection
// starts from them.
//
// # Workload
//
// --workload is NDJSON, one operation class per line (blank lines and
// lines starting with # or // are ignored):
//
//	{"name": "ingest", "op": "write", "rate": 3000}
//	{"name": "device history", "op": "query", "fields": ["/deviceId"], "rate": 50}
//	{"op": "read", "filter": {"/vin": "1FTVIN0001", "/date": "2024-03-30"}, "rate": 10}
//	{"pattern": "SELECT * FROM c WHERE c.temperature > 40", "rate": 1}
//
// The members are:
//
//   - op: read (a point read), query, or write; default query when a
//     pattern is given;
//   - filter: path → value, values known in advance (a leading / may be
//     left out);
//   - fields: paths the operation fixes to values that vary from one
//     execution to the next like the sample's documents (each execution is
//     taken to use the values of a document drawn from the sample);
//   - rate: operations per second (default 1); name, pattern: labels.
//
// Under a candidate, an operation is single-partition when its filter and
// fields fix every base path of the expression: it touches one key (a
// point read costs the read charge of an average document, a query
// throughput.QueryBaseCharge, 2.8 RU). With a random(lo, hi) suffix it
// must try hi−lo+1 keys ("keys": a point read per key, or a query per
// partition they fall on). A hierarchical key whose leading levels are
// fixed is routed by prefix to the partitions its prefix range overlaps.
// Anything else fans out: a query on every partition, 2.8 RU each.
// fanOutRU is what the fan-out costs beyond one partition. The shares are
// of read and query operations by rate (writes always go to one partition).
// A write whose filter fixes every base path sends its load to that key;
// other writes are spread like the current window.
//
// # Growth
//
// --growth takes documents per day ("50000/day", "50000 docs/day") or bytes
// per day ("2GB/day", "500 MB/d"; KB, MB, GB, TB are powers of 1000, KiB,
// MiB, GiB, TiB of 1024); /h and /s are converted to days. One is derived
// from the other with the average document size. Without it, growth is the
// sample's documents and bytes over the span of its _ts values.
//
// # Partitions
//
// N is --partitions, or ceil(--throughput / 10,000), or live the
// container's current ranges; otherwise enough partitions for the projected
// size: the sample plus a year of growth at 50 GB per partition, and the
// projected RU/s at 10,000 per partition, at least 1.
//
// # Ranking
//
// Each candidate's problems are: uneven current writes (above), a medium
// or high 429 risk, a key reaching 20 GB within 3 years, fewer distinct
// values than partitions, and documents whose key cannot be computed. The
// candidates are sorted by
//
//  1. severity: 1 each for uneven writes, a high 429 risk and a high or
//     current 20 GB problem, 0.5 for a medium one, 0.25 for the others, so
//     an even spread of current writes, no 429 risk and no 20 GB problem
//     come first;
//  2. with a workload, the share of reads and queries that fan out (to 1%);
//  3. without one, a random suffix after a deterministic key (its point
//     reads must try every suffix);
//  4. the busiest partition's share of current writes times N (to 0.1),
//     then the RU and storage max/mean (to 0.05);
//  5. more distinct values, then the expression text.
//
// Rank 1 is the best. Each candidate carries its problems, a summary, and
// reasons in plain words, for example "monotonic: 100% of current writes go
// to one logical partition (2024-03-30) on partition 3 of 4".
//
// # Report
//
// The JSON report (parsec advise --json) is one object: source (documents,
// bytes, timestamps), partitions, throughput, partitionBudgetRU,
// writeRate and writeRateFrom, avgWriteRU, growth, currentWindow, workload,
// observed (live telemetry), and candidates in rank order. A candidate has
// key (the expression as given), rank, canonical, kind, partitionKeyDefinition,
// distinctValues, monotonic, monotonicity, hottestPartitionShare,
// currentWrites, partitionStats (per physical partition: items, bytes,
// logical partitions, current writes, RU), storageSkew, ruSkew, throttle,
// logicalLimit, queries (with a workload), topKeysByItems, topKeysByBytes,
// topKeysByLoad, keyFrequency, problems, reasons and summary.
package advise
