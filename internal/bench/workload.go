package bench

import (
	"math/rand/v2"
	"net/url"
	"slices"
	"strconv"
	"sync/atomic"
)

// OpKind is one kind of operation a worker performs. Most are one request;
// OpRMW is two and the queries are one request per result page.
type OpKind uint8

// The operations. Read, Upsert, RMW, QueryPK and Scan address an item
// number chosen by the run's key distribution; Create inserts a new item
// with the next unused number.
const (
	OpTrivial    OpKind = iota + 1 // GET / without authentication
	OpRead                         // point read of an item
	OpCreate                       // create of a new item (POST, durable); YCSB's insert
	OpUpsert                       // upsert of a whole item (POST with x-ms-documentdb-is-upsert); YCSB's update
	OpRMW                          // read-modify-write: GET, then PUT with If-Match
	OpQueryPK                      // query of every item of one partition key, all pages
	OpQueryCross                   // cross-partition ORDER BY query, all pages
	OpScan                         // YCSB scan: a range of n within one partition key
	OpSproc                        // execution of a trivial stored procedure in one partition key
	OpVector                       // cross-partition TOP 10 ORDER BY VectorDistance, all pages
	numOps
)

var opNames = [...]string{"", "trivial", "read", "create", "upsert", "rmw", "query-pk", "query-cross", "scan", "sproc", "vector"}

func (k OpKind) String() string { return opNames[k] }

// Weighted is an operation with its share of a workload's mix.
type Weighted struct {
	Op     OpKind
	Weight int
}

// Workload describes what the workers send. A worker picks each operation
// from Mix with probability Weight/sum(Weights), and the item it addresses
// from the run's key distribution.
type Workload struct {
	Name    string
	Summary string
	Mix     []Weighted
	// NeedsContainer: the database and container are created if missing.
	NeedsContainer bool
	// NeedsItems: the workload addresses loaded items, so --items of them are
	// loaded first if the container has fewer.
	NeedsItems bool
	// Distribution is the default key distribution ("" for uniform).
	Distribution string
}

// Workloads are the workloads by name.
var Workloads = map[string]*Workload{
	"read": {Name: "read", Summary: "point reads of loaded items (GET .../docs/{id})",
		Mix: []Weighted{{OpRead, 1}}, NeedsContainer: true, NeedsItems: true},
	"write": {Name: "write", Summary: "durable creates of new items (POST .../docs)",
		Mix: []Weighted{{OpCreate, 1}}, NeedsContainer: true},
	"upsert": {Name: "upsert", Summary: "upserts that overwrite loaded items (POST .../docs, x-ms-documentdb-is-upsert)",
		Mix: []Weighted{{OpUpsert, 1}}, NeedsContainer: true, NeedsItems: true},
	"trivial": {Name: "trivial", Summary: "GET / without authentication, for a trivial baseline server (cmd/trivialhttp)",
		Mix: []Weighted{{OpTrivial, 1}}},
	"sproc": {Name: "sproc", Summary: "executions of a trivial stored procedure (it sets its response body) in a partition key (POST .../sprocs/{id})",
		Mix: []Weighted{{OpSproc, 1}}, NeedsContainer: true},
	"rmw": {Name: "rmw", Summary: "read-modify-write: GET an item, then PUT it back with If-Match: its etag (412 on conflict)",
		Mix: []Weighted{{OpRMW, 1}}, NeedsContainer: true, NeedsItems: true},
	"query-pk": {Name: "query-pk", Summary: "query of all items of one partition key (SELECT * FROM c WHERE c.pk = @pk), every page",
		Mix: []Weighted{{OpQueryPK, 1}}, NeedsContainer: true, NeedsItems: true},
	"query-cross": {Name: "query-cross", Summary: "cross-partition SELECT TOP 10 * FROM c ORDER BY c.n DESC, every page",
		Mix: []Weighted{{OpQueryCross, 1}}, NeedsContainer: true, NeedsItems: true},
	"vector": {Name: "vector", Summary: "cross-partition vector search: SELECT TOP 10 c.id FROM c ORDER BY VectorDistance(<16 numbers of c.n>, @q), every page",
		Mix: []Weighted{{OpVector, 1}}, NeedsContainer: true, NeedsItems: true},
	"ycsb-a": {Name: "ycsb-a", Summary: "YCSB A: 50% read, 50% update (upsert)",
		Mix: []Weighted{{OpRead, 50}, {OpUpsert, 50}}, NeedsContainer: true, NeedsItems: true},
	"ycsb-b": {Name: "ycsb-b", Summary: "YCSB B: 95% read, 5% update (upsert)",
		Mix: []Weighted{{OpRead, 95}, {OpUpsert, 5}}, NeedsContainer: true, NeedsItems: true},
	"ycsb-c": {Name: "ycsb-c", Summary: "YCSB C: 100% read",
		Mix: []Weighted{{OpRead, 1}}, NeedsContainer: true, NeedsItems: true},
	"ycsb-d": {Name: "ycsb-d", Summary: "YCSB D: 95% read, 5% insert (create); reads favour the latest items",
		Mix: []Weighted{{OpRead, 95}, {OpCreate, 5}}, NeedsContainer: true, NeedsItems: true, Distribution: DistLatest},
	"ycsb-e": {Name: "ycsb-e", Summary: "YCSB E: 95% scan (TOP 1-100 of one partition key from n on), 5% insert",
		Mix: []Weighted{{OpScan, 95}, {OpCreate, 5}}, NeedsContainer: true, NeedsItems: true},
	"ycsb-f": {Name: "ycsb-f", Summary: "YCSB F: 50% read, 50% read-modify-write",
		Mix: []Weighted{{OpRead, 50}, {OpRMW, 50}}, NeedsContainer: true, NeedsItems: true},
}

// WorkloadNames returns the workload names, sorted.
func WorkloadNames() []string {
	names := make([]string, 0, len(Workloads))
	for n := range Workloads {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// chooser picks a mix entry; with one entry it always returns it.
type chooser struct {
	ops   []OpKind
	cum   []int
	total int
}

func newChooser(mix []Weighted) chooser {
	var c chooser
	for _, w := range mix {
		if w.Weight <= 0 {
			continue
		}
		c.total += w.Weight
		c.ops = append(c.ops, w.Op)
		c.cum = append(c.cum, c.total)
	}
	if len(c.ops) == 0 {
		panic("BUG: a workload mix without a positive weight")
	}
	return c
}

// next returns the index in ops of the next operation.
func (c *chooser) next(rng *rand.Rand) int {
	if len(c.ops) == 1 {
		return 0
	}
	x := rng.IntN(c.total)
	for i, cum := range c.cum {
		if x < cum {
			return i
		}
	}
	return len(c.ops) - 1
}

// Items and partition keys.
//
// Items are numbered. Loaded item n (0 <= n < --items) has id "i<n>"; an
// item inserted during a run gets the next number (--items, --items+1, ...)
// and the id "c<run>-<n>", where run is the run's start time in base 36
// (unique per run). Item n has partition key "p<n mod PartitionKeys>" and
// the body
//
//	{"id":"<id>","pk":"<pk>","n":<n>,"v":<v>,"pad":"<random [0-9a-z]>"}
//
// padded to exactly --item-size bytes. n is the item number, which the
// queries order and filter on; v counts the read-modify-writes of the item
// (loads, creates and upserts write 0). The pad is random (not one repeated
// byte) so that storage compression does not make the items unrealistically
// small.
const PartitionKeys = 1000

// markerID is the id (and partition key) of the item that records what was
// loaded: {"id":..,"pk":..,"items":N,"itemSize":S,"format":F}.
const markerID = "bench-loaded"

// itemFormat is the version of the item bodies in the marker: items loaded
// in another format (before "n" and "v") are loaded again.
const itemFormat = 2

// bodyOverhead is len(`{"id":"","pk":"","n":,"v":,"pad":""}`).
const bodyOverhead = 36

// appendItemID appends the id of loaded item n.
func appendItemID(dst []byte, n int) []byte {
	return strconv.AppendInt(append(dst, 'i'), int64(n), 10)
}

// decimalLen is the number of decimal digits of v.
func decimalLen(v uint64) int {
	n := 1
	for v >= 10 {
		v /= 10
		n++
	}
	return n
}

// appendBody appends the body of item n with version v, of exactly size
// bytes (size must leave room for the rest; see MinItemSize). pad must hold
// at least size bytes.
func appendBody(dst []byte, id, pk []byte, n int, v uint64, size int, pad string) []byte {
	p := size - bodyOverhead - len(id) - len(pk) - decimalLen(uint64(n)) - decimalLen(v)
	if p < 0 {
		panic("BUG: item size too small for its id and partition key")
	}
	dst = append(dst, `{"id":"`...)
	dst = append(dst, id...)
	dst = append(dst, `","pk":"`...)
	dst = append(dst, pk...)
	dst = append(dst, `","n":`...)
	dst = strconv.AppendUint(dst, uint64(n), 10)
	dst = append(dst, `,"v":`...)
	dst = strconv.AppendUint(dst, v, 10)
	dst = append(dst, `,"pad":"`...)
	dst = append(dst, pad[:p]...)
	return append(dst, `"}`...)
}

// randomPad returns n random characters of [0-9a-z].
func randomPad(n int, seed uint64) string {
	const alphabet = "0123456789abcdefghijklmnopqrstuvwxyz"
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return string(b)
}

// The query texts. The partition key and the lower bound of n are
// parameters; a scan's TOP is part of the text (1-100, so 100 texts).
const (
	queryPKPrefix = `{"query":"SELECT * FROM c WHERE c.pk = @pk","parameters":[{"name":"@pk","value":"`
	queryPKSuffix = `"}]}`
	queryCross    = `{"query":"SELECT TOP 10 * FROM c ORDER BY c.n DESC","parameters":[]}`
	// The vector search: the loaded items carry no embedding, so the query
	// computes a 16-dimension vector from each item's n (sines and cosines
	// of 16 frequencies: spread over the unit cube) and ranks every item
	// of every partition by its cosine to @q, 16 random numbers per
	// operation. It measures the scan that vector search does without a
	// vector index: every item's vector is built and compared.
	queryVectorPrefix = `{"query":"SELECT TOP 10 c.id FROM c ORDER BY VectorDistance([SIN(c.n * 0.11), COS(c.n * 0.37), SIN(c.n * 0.53), COS(c.n * 0.71), SIN(c.n * 0.97), COS(c.n * 1.13), SIN(c.n * 1.31), COS(c.n * 1.57), SIN(c.n * 1.79), COS(c.n * 1.97), SIN(c.n * 2.23), COS(c.n * 2.41), SIN(c.n * 2.63), COS(c.n * 2.87), SIN(c.n * 3.07), COS(c.n * 3.31)], @q)","parameters":[{"name":"@q","value":[`
	queryVectorSuffix = `]}]}`
	// VectorDims is the number of dimensions of the vector workload.
	VectorDims  = 16
	scanPrefix  = `{"query":"SELECT TOP `
	scanMiddle  = ` * FROM c WHERE c.pk = @pk AND c.n >= @n ORDER BY c.n","parameters":[{"name":"@pk","value":"`
	scanMiddle2 = `"},{"name":"@n","value":`
	scanSuffix  = `}]}`
	// MaxScanLength is the largest TOP of a scan; each scan's is uniform in
	// [1, MaxScanLength].
	MaxScanLength = 100
)

// keyspace is the request state shared by all workers: the signed resources
// and precomputed strings of the container and its items.
type keyspace struct {
	docsPath     string    // /dbs/{db}/colls/{c}/docs
	docsRawPath  string    // docsPath escaped for the wire
	docsPOST     *Resource // POST to docsPath (create, upsert, queries)
	sprocPath    string    // /dbs/{db}/colls/{c}/sprocs/{BenchProcedure}
	sprocRawPath string    // sprocPath escaped for the wire
	sprocPOST    *Resource // POST to sprocPath (execute)
	trivial      *Resource // GET / (never signed; only its path is used)
	run          string    // the run id in inserted items' ids
	loaded       int       // items 0..loaded-1 are the loaded ones ("i<n>")
	// pkHeader[k] is the x-ms-documentdb-partitionkey value of "p<k>",
	// as a one-element header slice that is shared and never mutated.
	pkHeader [PartitionKeys][]string
	pkName   [PartitionKeys][]byte
	// pageSize is the x-ms-max-item-count of queries ("" to send none).
	pageSize string
	// targets caches item targets, built on first use, in chunks of
	// targetChunk items: targets[n/targetChunk][n%targetChunk].
	targets []atomic.Pointer[targetChunk]
	ins     *inserts
	pad     string
}

// itemTarget is an item's path (as is and escaped) and its signed GET and
// PUT resources.
type itemTarget struct {
	path, rawPath string
	get, put      *Resource
}

const targetChunkLen = 4096

type targetChunk [targetChunkLen]atomic.Pointer[itemTarget]

// maxTargets bounds the item numbers whose targets are cached (loaded and
// inserted together); beyond it targets are built for each request.
const maxTargets = MaxItems + 1<<26

func newKeyspace(o *Options, seed uint64) *keyspace {
	ks := &keyspace{
		docsPath: "/dbs/" + o.Database + "/colls/" + o.Container + "/docs",
		loaded:   o.Items,
		targets:  make([]atomic.Pointer[targetChunk], (maxTargets+targetChunkLen-1)/targetChunkLen),
		pad:      randomPad(o.ItemSize, seed),
		ins:      newInserts(int64(o.Items), o.Distribution == DistLatest),
	}
	ks.docsRawPath = escapePath(ks.docsPath)
	ks.docsPOST = NewResource("POST", ks.docsPath)
	ks.sprocPath = "/dbs/" + o.Database + "/colls/" + o.Container + "/sprocs/" + BenchProcedure
	ks.sprocRawPath = escapePath(ks.sprocPath)
	ks.sprocPOST = NewResource("POST", ks.sprocPath)
	ks.trivial = NewResource("GET", "/")
	for k := range PartitionKeys {
		name := "p" + strconv.Itoa(k)
		ks.pkName[k] = []byte(name)
		ks.pkHeader[k] = []string{`["` + name + `"]`}
	}
	if o.PageSize != 0 {
		ks.pageSize = strconv.Itoa(o.PageSize)
	}
	return ks
}

// appendID appends the id of item n.
func (ks *keyspace) appendID(dst []byte, n int) []byte {
	if n < ks.loaded {
		return appendItemID(dst, n)
	}
	dst = append(append(append(dst, 'c'), ks.run...), '-')
	return strconv.AppendInt(dst, int64(n), 10)
}

// item returns the target of item n.
func (ks *keyspace) item(n int) *itemTarget {
	if n >= maxTargets {
		return ks.newTarget(n)
	}
	ch := ks.targets[n/targetChunkLen].Load()
	if ch == nil {
		ch = new(targetChunk)
		if !ks.targets[n/targetChunkLen].CompareAndSwap(nil, ch) {
			ch = ks.targets[n/targetChunkLen].Load()
		}
	}
	slot := &ch[n%targetChunkLen]
	if t := slot.Load(); t != nil {
		return t
	}
	t := ks.newTarget(n)
	if slot.CompareAndSwap(nil, t) {
		return t
	}
	return slot.Load()
}

func (ks *keyspace) newTarget(n int) *itemTarget {
	id := "/" + string(ks.appendID(nil, n))
	path := ks.docsPath + id
	return &itemTarget{path: path, rawPath: ks.docsRawPath + escapePath(id), get: NewResource("GET", path), put: NewResource("PUT", path)}
}

// escapePath escapes a request path as net/http sends it.
func escapePath(p string) string {
	u := url.URL{Path: p}
	return u.EscapedPath()
}
