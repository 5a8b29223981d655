// Package bench is Parsec's load generator for Cosmos-DB-compatible
// endpoints (`parsec bench`). It talks the NoSQL REST protocol directly, over
// keep-alive HTTP/1.1, so it measures the server and not an SDK.
//
// The model in one sentence: Run sets up (account check, database and
// container, loaded items), then Concurrency workers perform the operations
// of a Workload for Duration (or Operations operations), in a closed or an
// open loop, and record each one's latency in per-worker, per-operation
// Histograms; the histograms and counters are merged into a Result.
//
// # Workloads
//
// A Workload is a weighted Mix of operations. The built-in ones (Workloads):
//
//	read         GET /dbs/{db}/colls/{c}/docs/{id} of an item
//	write        POST /dbs/{db}/colls/{c}/docs, a new item each time (create)
//	upsert       POST .../docs with x-ms-documentdb-is-upsert: True on an item
//	trivial      GET / without any authentication (a baseline server, cmd/trivialhttp)
//	rmw          read-modify-write: GET an item, then PUT .../docs/{id} with
//	             If-Match: the etag of the read and "v" one higher; a 412
//	             (someone changed the item in between) is a conflict, counted
//	             in the errors by status
//	query-pk     POST .../docs, x-ms-documentdb-isquery: True, Content-Type:
//	             application/query+json, x-ms-documentdb-partitionkey: ["p<k>"],
//	             {"query":"SELECT * FROM c WHERE c.pk = @pk","parameters":
//	             [{"name":"@pk","value":"p<k>"}]}
//	query-cross  SELECT TOP 10 * FROM c ORDER BY c.n DESC, with
//	             x-ms-documentdb-query-enablecrosspartition: True and no
//	             partition key (Parsec runs it entirely on the server)
//	vector       SELECT TOP 10 c.id FROM c ORDER BY VectorDistance(v(c.n), @q)
//	             across partitions: v(n) is 16 sines and cosines of n (the
//	             items carry no embedding) and @q 16 random numbers per
//	             operation; every item's vector is built and compared
//	sproc        POST .../sprocs/parsec-bench-noop with [] and a uniform
//	             partition key: a stored procedure that only sets its
//	             response body (created before the run if missing)
//	ycsb-a       50% read, 50% update
//	ycsb-b       95% read, 5% update
//	ycsb-c       100% read
//	ycsb-d       95% read, 5% insert; reads use the latest distribution
//	ycsb-e       95% scan, 5% insert
//	ycsb-f       50% read, 50% read-modify-write
//
// The ycsb-* workloads are YCSB's core workloads: an update is an upsert of
// the whole item, an insert a create of a new one, and a scan the query
// SELECT TOP <t> * FROM c WHERE c.pk = @pk AND c.n >= @n ORDER BY c.n with
// the partition key and n of the chosen item and t uniform in [1, 100]. A
// query operation reads every page, following x-ms-continuation, and its
// latency covers them all; --page-size sets x-ms-max-item-count.
//
// Items are numbered. Loaded item n has id "i<n>", partition key
// "p<n mod 1000>" and the body {"id","pk","n":n,"v":0,"pad"}, with a random
// alphanumeric pad that makes it exactly ItemSize bytes. Items inserted
// during a run (write, ycsb-d, ycsb-e) get the following numbers, Items,
// Items+1, ..., the id "c<run>-<n>" (run: the run's start time in base 36)
// and the same form of body. "v" counts read-modify-writes; creates and
// upserts write 0. The container is created with partition key /pk (Hash
// v2) and x-ms-offer-throughput: Throughput. The items are loaded (upserted)
// first unless a marker item, "bench-loaded", records that at least Items
// of ItemSize bytes in the current body format were loaded already. Writes
// send no "Prefer: return=minimal", so the server returns the stored item,
// as the JS and .NET SDKs ask by default.
//
// # Key distributions
//
// The item an operation addresses comes from the Distribution:
//
//	uniform  every loaded item equally likely (the default)
//	zipfian  YCSB's scrambled Zipfian over the loaded items: rank r has
//	         probability proportional to 1/(r+1)^ZipfTheta (default 0.99),
//	         drawn with the method of Gray et al., "Quickly generating
//	         billion-record synthetic databases" (zeta(Items) precomputed
//	         once per run), and the ranks are spread over the items by a
//	         fixed pseudo-random permutation
//	latest   YCSB's skewed-latest: the same Zipfian over the items' age, so
//	         the newest item is the most popular; it covers the inserted
//	         items as soon as their inserts are answered (the ycsb-d default)
//
// YCSB scrambles with a hash modulo the item count, which folds some ranks
// onto one item and leaves some items unreachable; the permutation keeps
// the Zipfian law exact over the items. (YCSB's own core workloads default
// to zipfian for a, b, c, e and f; pass --distribution zipfian to match.)
//
// # Closed and open loops
//
// In a closed loop (the default) each worker sends its next operation as
// soon as the last one was answered; latency runs from just before the
// first request is signed to the end of the last response body. A closed
// loop slows down with the server, so a stall shows in the latency of the
// few operations in flight and not in those that would have been sent
// meanwhile (coordinated omission).
//
// With Rate (--rate) the run is an open loop: each worker has a fixed
// schedule of Rate/Concurrency operations per second (the workers'
// schedules staggered over one interval) and starts each operation at its
// intended time, or as soon as it is free when it is late. Latency then
// runs from the intended start, so the time an operation queued behind a
// slow one counts, as wrk2 and HdrHistogram correct for coordinated
// omission. The Result reports the target and achieved rates and the
// operations that started more than 1 ms behind schedule. A worker that
// gets a 429 in a closed loop waits the x-ms-retry-after-ms the server asks
// for (at most a second) before its next operation, as the SDKs wait
// before they retry; in an open loop the schedule decides.
//
// # Measuring
//
// Operations are the ones whose responses were all 2xx; Throughput and the
// latency quantiles cover only them. Operations answered 429 are counted
// apart (Throttled) and every other failure in Errors, by status (an
// operation of several requests stops at its first failure). RequestCharge
// sums x-ms-request-charge over every response. Throughput divides by the
// time from the start of the first operation to the end of the last one, so
// operations in flight at the deadline are finished and counted. ByOperation
// gives the same figures per operation kind of the mix, with the HTTP
// requests and, for queries, the documents returned. With Progress a line
// per second shows the last second's ops/s, p99, 429s, errors and RU/s.
// The load phase retries a throttled upsert itself.
//
// # Cost of the generator
//
// The load generator shares the machine with the server in most runs here,
// so it is kept cheap. Workers build requests without allocating: bodies
// and query texts are assembled into a reused buffer from precomputed parts
// and a precomputed random pad, partition-key header values and item paths
// are precomputed (per item, on first use), etags and continuation tokens
// are copied into reused buffers, and signatures are cached per Resource for
// the current second (x-ms-date has one-second resolution, so all requests
// to one resource within a second share a date and a signature). The key
// distributions cost a uniform variate and at most a Pow per draw. Two HTTP
// clients carry the requests (Options.Client):
//
//	nethttp  the default: one http.Transport shared by all workers, with an
//	         idle keep-alive connection per worker; each worker reuses one
//	         *http.Request and its header map. net/http itself still costs
//	         about 17-30 µs of CPU and some 20 allocations per request.
//	raw      a connection per worker and a minimal HTTP/1.1 client (one
//	         write per request from a reused buffer, a hand-rolled response
//	         parser): about 7-12 µs of CPU per request and no allocations.
//
// Result reports the generator's own CPU per request and in cores, so that
// its share of a shared machine can be judged.
package bench
