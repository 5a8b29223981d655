// Package throughput is Parsec's request-unit (RU) accounting: what an
// operation costs, whether a physical partition may run one now, and which
// logical partition keys spent its budget.
//
// It is pure: no I/O, no goroutines, no clock. Every time is passed in, so a
// test replays any schedule exactly. Bucket and TopK are not safe for
// concurrent use; the engine keeps one of each per physical partition, under
// the partition's meter lock.
//
// # Cost model (cost.go)
//
// Charges follow what Cosmos DB publishes
// (learn.microsoft.com/azure/cosmos-db/understand-request-unit-consumption),
// so a workload costs here about what it would cost there:
//
//	point read      ReadCharge(size)                    1 RU to 1 KB, 1.14 at 4 KB, 4.76 at 64 KB, 145.9 at 1 MB
//	create          WriteCharge(size, terms)            4.95 at 1 KB with 10 terms; ±0.2 per term above or below 10
//	delete          DeleteCharge(size, terms)           as a create: the document and its terms are removed
//	replace         ReplaceCharge(old, new, changed)    a delete + an insert + 2 × 0.2 per changed term
//	patch           PatchCharge(old, new, changed, ops) a replace + 0.4 per operation
//	read feed page  FeedCharge(n, size)                 as n point reads of the average size
//	query page      QueryCharge(docs, bytes, entries)   2.8 + what it loaded and looked up
//	failed check    FailedCharge                        1 RU
//	metadata        MetadataCharge                      1 RU
//
// Sizes are interpolated linearly between the published points (1 KB to
// 2 MB); below 1 KB an item costs as 1 KB. Index terms are the entries the
// engine writes under the container's indexing policy: one per indexed
// property path (an object or array counts once, its elements and members
// under their own paths), none in indexing mode none. The
// published write charges (1 KB ≈ 5 RU for an indexed item) are taken to hold
// at 10 terms, the item of Microsoft's worked example, and every published
// point is reproduced within 2% there; the page's per-term (0.2) and
// replace/patch figures shape the rest.
//
// The engine (engine.chargeOf) prices each write from the index terms it
// wrote for it, the system properties left out: a create or upsert costs
// WriteCharge of the new version, a delete DeleteCharge of the old one, a
// replace ReplaceCharge and a patch PatchCharge with the number of property
// paths whose term was added, removed or changed. A failed operation costs
// FailedCharge.
//
// testdata/charges.txt holds the published figures and many other cases in
// the datadriven format, one command per charge function, each published
// figure checked to within 2% (go test -rewrite regenerates the outputs;
// review the diff). Query charges have no published formula: cost.go says
// how its constants were fitted to charges measured on Cosmos.
//
// # Budget (bucket.go)
//
// Each physical partition gets rate = T / N RU/s (container throughput over
// its partitions) in a Bucket:
//
//	          refill: rate RU/s
//	                │
//	                ▼
//	base balance  [≤ 1 s of rate, starts full]  ── Admit while > 0
//	                │ overflow while full (idle)
//	                ▼
//	bank          [≤ 300 s of rate, starts empty]  ── Admit when the base is
//	                                                 spent, at ≤ 3,000 − rate RU/s
//
// A request is admitted when the base balance is positive, or when banked
// capacity may be spent now; it is charged after it ran, and the base balance
// may go negative (debt, repaid by refill before the base admits again). This is
// Cosmos DB's burst capacity: a partition banks up to 5 minutes of idle
// throughput and may spend it at up to 3,000 RU/s in total; partitions of
// 3,000 RU/s or more get none (BurstConfig, DefaultBurst). A refused request
// gets the exact wait, in whole milliseconds, after which the bucket would
// admit it: the server answers 429, substatus 3200, with that
// x-ms-retry-after-ms.
//
// # Hot keys (topk.go)
//
// A TopK per partition follows the RU each logical partition key consumed, in
// fixed memory (Space-Saving): it names the keys behind a partition's load,
// with error bounds, for the 429 body and for telemetry. Decay ages old
// traffic.
//
// # The caller's duties
//
//  1. Create one Bucket and one TopK per physical partition; lock them.
//  2. Before running a request on a partition, call Admit(now). If it says
//     no, answer 429 with retryAfter; do not run the request.
//  3. After running it, compute its charge from what it did (size, index
//     terms, items and bytes read) and call Charge(now, ru) on the partition's
//     bucket and Add(logical key, ru) on its TopK. Every response reports a
//     charge greater than 0.
//  4. When the container's throughput or partition count changes, call
//     SetRate(T/N, now) on every partition's bucket.
//  5. Call Decay on each TopK on a schedule (e.g. halve every 10 s) so that it
//     reports recent traffic.
package throughput
