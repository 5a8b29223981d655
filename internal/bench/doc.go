// Package bench is Parsec's load generator for Cosmos-DB-compatible
// endpoints (`parsec bench`). It talks the NoSQL REST protocol directly, over
// keep-alive HTTP/1.1, so it measures the server and not an SDK.
//
// The model in one sentence: Run sets up (account check, database and
// container, loaded items), then Concurrency closed-loop workers send the
// requests of a Workload for Duration and record each one's latency in a
// per-worker Histogram; the histograms and counters are merged into a Result.
//
// # Workloads
//
// A Workload is a weighted Mix of operations (OpRead, OpCreate, OpUpsert,
// OpTrivial). The built-in ones (Workloads) each use one operation:
//
//	read     GET /dbs/{db}/colls/{c}/docs/i<n>, n uniform in [0, Items)
//	write    POST /dbs/{db}/colls/{c}/docs, a new item each time (create)
//	upsert   POST .../docs with x-ms-documentdb-is-upsert: True on item i<n>
//	trivial  GET / without any authentication (a baseline server, cmd/trivialhttp)
//
// Item n of the loaded set has id "i<n>" and partition key "p<n mod 1000>";
// created items have ids "c<run>-<g>" (run: the run's start time in base 36)
// and partition key "p<g mod 1000>". Bodies are {"id","pk","pad"} with a
// random alphanumeric pad, exactly ItemSize bytes. The container is created
// with partition key /pk (Hash v2) and x-ms-offer-throughput: Throughput. The
// items a workload reads are loaded (upserted) first unless a marker item,
// "bench-loaded", records that at least Items of ItemSize bytes were loaded
// already. Writes send no "Prefer: return=minimal", so the server returns
// the stored item, as the JS and .NET SDKs ask by default.
//
// # Measuring
//
// Operations are the 2xx responses; Throughput and the latency quantiles
// cover only them. 429s are counted apart (Throttled) and every other
// failure in Errors, by status. A worker that gets a 429 waits the
// x-ms-retry-after-ms the server asks for (at most a second) before its
// next request, as the SDKs wait before they retry; the load phase retries
// the throttled upsert itself. RequestCharge sums x-ms-request-charge.
// Latency runs from just before a request is signed to the end of its
// response body. Throughput divides by the time from the start of the first
// request to the end of the last one, so requests in flight at the deadline
// are finished and counted.
//
// # Cost of the generator
//
// The load generator shares the machine with the server in most runs here,
// so it is kept cheap. Workers build requests without allocating: bodies
// are assembled into a reused buffer from a precomputed random pad,
// partition-key header values and item paths are precomputed, and
// signatures are cached per Resource for the current second (x-ms-date has
// one-second resolution, so all requests to one resource within a second
// share a date and a signature). Two HTTP clients carry the requests
// (Options.Client):
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
