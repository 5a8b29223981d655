package bench

import (
	"math/rand/v2"
	"net/url"
	"slices"
	"strconv"
	"sync/atomic"
)

// OpKind is one kind of request a worker sends.
type OpKind uint8

// The operations. Read and Upsert address the loaded items i0..i<N-1>;
// Create makes a new item with an id no one has used.
const (
	OpTrivial OpKind = iota + 1 // GET / without authentication
	OpRead                      // point read of a loaded item
	OpCreate                    // create of a new item (POST, durable)
	OpUpsert                    // upsert of a loaded item (POST with x-ms-documentdb-is-upsert)
)

var opNames = [...]string{"", "trivial", "read", "create", "upsert"}

func (k OpKind) String() string { return opNames[k] }

// Weighted is an operation with its share of a workload's mix.
type Weighted struct {
	Op     OpKind
	Weight int
}

// Workload describes what the workers send. A worker picks each request's
// operation from Mix with probability Weight/sum(Weights), and the item of a
// Read or Upsert uniformly from the loaded items.
type Workload struct {
	Name    string
	Summary string
	Mix     []Weighted
	// NeedsContainer: the database and container are created if missing.
	NeedsContainer bool
	// NeedsItems: the workload addresses loaded items, so --items of them are
	// loaded first if the container has fewer.
	NeedsItems bool
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

func (c *chooser) next(rng *rand.Rand) OpKind {
	if len(c.ops) == 1 {
		return c.ops[0]
	}
	x := rng.IntN(c.total)
	for i, cum := range c.cum {
		if x < cum {
			return c.ops[i]
		}
	}
	return c.ops[len(c.ops)-1]
}

// Items and partition keys.
//
// Loaded item n (0 <= n < --items) has id "i<n>" and partition key
// "p<n mod PartitionKeys>". A created item has id "c<run>-<g>", where run is
// the run's start time in base 36 (unique per run) and g = seq*concurrency +
// worker numbers the creates of the run, and partition key
// "p<g mod PartitionKeys>". Every body is
//
//	{"id":"<id>","pk":"<pk>","pad":"<random [0-9a-z]>"}
//
// padded to exactly --item-size bytes. The pad is random (not one repeated
// byte) so that storage compression does not make the items unrealistically
// small.
const PartitionKeys = 1000

// markerID is the id (and partition key) of the item that records what was
// loaded: {"id":..,"pk":..,"items":N,"itemSize":S}.
const markerID = "bench-loaded"

// bodyOverhead is len(`{"id":"","pk":"","pad":""}`).
const bodyOverhead = 26

// appendItemID appends the id of loaded item n.
func appendItemID(dst []byte, n int) []byte {
	return strconv.AppendInt(append(dst, 'i'), int64(n), 10)
}

// appendBody appends an item body of exactly size bytes (size must leave
// room for id and pk; see MinItemSize). pad must hold at least size bytes.
func appendBody(dst []byte, id, pk []byte, size int, pad string) []byte {
	n := size - bodyOverhead - len(id) - len(pk)
	if n < 0 {
		panic("BUG: item size too small for its id and partition key")
	}
	dst = append(dst, `{"id":"`...)
	dst = append(dst, id...)
	dst = append(dst, `","pk":"`...)
	dst = append(dst, pk...)
	dst = append(dst, `","pad":"`...)
	dst = append(dst, pad[:n]...)
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

// keyspace is the request state shared by all workers: the signed resources
// and precomputed strings of the container and its items.
type keyspace struct {
	docsPath    string    // /dbs/{db}/colls/{c}/docs
	docsRawPath string    // docsPath escaped for the wire
	docsPOST    *Resource // POST to docsPath (create, upsert)
	trivial     *Resource // GET / (never signed; only its path is used)
	// pkHeader[k] is the x-ms-documentdb-partitionkey value of "p<k>",
	// as a one-element header slice that is shared and never mutated.
	pkHeader [PartitionKeys][]string
	pkName   [PartitionKeys][]byte
	// items[n] is item n's read target, built on first use.
	items []atomic.Pointer[itemTarget]
	pad   string
}

// itemTarget is a loaded item's path (as is and escaped) and its signed
// GET resource.
type itemTarget struct {
	path, rawPath string
	get           *Resource
}

func newKeyspace(o *Options, seed uint64) *keyspace {
	ks := &keyspace{
		docsPath: "/dbs/" + o.Database + "/colls/" + o.Container + "/docs",
		items:    make([]atomic.Pointer[itemTarget], o.Items),
		pad:      randomPad(o.ItemSize, seed),
	}
	ks.docsRawPath = escapePath(ks.docsPath)
	ks.docsPOST = NewResource("POST", ks.docsPath)
	ks.trivial = NewResource("GET", "/")
	for k := range PartitionKeys {
		name := "p" + strconv.Itoa(k)
		ks.pkName[k] = []byte(name)
		ks.pkHeader[k] = []string{`["` + name + `"]`}
	}
	return ks
}

// item returns the read target of loaded item n.
func (ks *keyspace) item(n int) *itemTarget {
	if t := ks.items[n].Load(); t != nil {
		return t
	}
	id := "/i" + strconv.Itoa(n)
	path := ks.docsPath + id
	t := &itemTarget{path: path, rawPath: ks.docsRawPath + id, get: NewResource("GET", path)}
	if ks.items[n].CompareAndSwap(nil, t) {
		return t
	}
	return ks.items[n].Load()
}

// escapePath escapes a request path as net/http sends it.
func escapePath(p string) string {
	u := url.URL{Path: p}
	return u.EscapedPath()
}
