// Package graph holds the values a Gremlin traversal reads and returns
// (vertices, edges, properties, paths, ordered maps) and the Store interface
// through which the evaluator reads and writes a graph container. The
// serializers encode these values; the evaluator produces them; the store
// maps them onto items of a partitioned container.
package graph

import (
	"context"
	"fmt"
	"maps"

	"github.com/parsecdb/parsec/internal/api/gremlin/lang"
)

// A Vertex is a vertex with its properties. Properties maps a key to its
// values in insertion order; on Cosmos every property is a list (of one
// value unless written with list cardinality). The partition key is one of
// the properties (Store.PartitionKey names it); PartitionKey repeats its
// value for routing.
type Vertex struct {
	ID           string
	Label        string
	PartitionKey any
	Properties   map[string][]*VertexProperty
	// Keys lists the property keys in the order they were first written, so
	// that valueMap and the serializers answer in a stable order.
	Keys []string
}

// A VertexProperty is one value of a vertex property, with its own id (a
// GUID string on Cosmos) and meta-properties.
type VertexProperty struct {
	ID    string
	Key   string
	Value any
	Meta  map[string]any
	// Vertex is the vertex the property belongs to (for
	// properties().element() and the serializers); may be nil.
	Vertex *Vertex
}

// An Edge is an edge. It is stored with its source (out) vertex, in that
// vertex's logical partition.
type Edge struct {
	ID         string
	Label      string
	Out        Ref // the source vertex
	In         Ref // the target vertex
	Properties map[string]any
	Keys       []string
}

// A Ref names a vertex without its properties: enough to read it (id and
// partition key) and to print an edge (label).
type Ref struct {
	ID           string
	Label        string
	PartitionKey any
}

// A Property is an edge property or a meta-property: a key and its value.
type Property struct {
	Key   string
	Value any
	// Element is the edge (or vertex property) it belongs to; may be nil.
	Element any
}

// A Path is the history of a traverser: the objects it passed through and
// the step labels (as) at each.
type Path struct {
	Labels  [][]string
	Objects []any
}

// A Map is an ordered map, as group, groupCount, project, valueMap and
// select return: Gremlin keeps insertion order. Keys are compared with
// Equal.
type Map struct {
	Entries []Entry
}

// An Entry is one key and value of a Map.
type Entry struct {
	Key, Value any
}

// A Tree is the result of tree(): each object with the subtree under it.
type Tree struct {
	Entries []TreeEntry
}

// A TreeEntry is a node of a Tree.
type TreeEntry struct {
	Key      any
	Children *Tree
}

// A BulkSet is a multiset, as aggregate/store and cap return in TinkerPop's
// serializers; the evaluator may also return a plain []any.
type BulkSet struct {
	Items []any
	Bulks []int64
}

// Result values of a traversal are: nil, bool, int32, int64, float32,
// float64, string, lang.UUID, time.Time, []any (a list), *Map, *Vertex,
// *Edge, *VertexProperty, *Property, *Path, *Tree, *BulkSet, lang.Token (T.id
// as a map key in valueMap(true)/elementMap).
type Value = any

// A Has is one property condition pushed down to the store: the property
// key (or "id" / "label" with T set) and a predicate.
type Has struct {
	Key string
	// T is true when Key is T.id or T.label rather than a property.
	T bool
	P lang.P
}

// A VertexQuery selects vertices. Zero fields do not restrict. The store
// routes by PartitionKeys when they are given (one or a few logical
// partitions) and otherwise reads every partition, through the index where
// a Has applies.
type VertexQuery struct {
	IDs           []string
	PartitionKeys []any
	// Refs, when not empty, selects these vertices by (partition key, id):
	// a Ref without a partition key names its id in any partition. The
	// store reads each one in its own logical partition (a point read),
	// so that reading the far ends of edges costs one read per vertex
	// rather than one per id and key. The other fields still restrict.
	Refs   []Ref
	Labels []string
	Has    []Has
	// Limit caps the vertices returned (0: no cap); the evaluator passes the
	// traversal's budget so that a scan stops early.
	Limit int
}

// Direction selects edges by their side: Out reads edges whose source is
// one of Vertices (in the sources' partitions); In reads edges whose target
// is one of them (through the index); Both is both.
type Direction int

const (
	Out Direction = iota
	In
	Both
)

// An EdgeQuery selects edges.
type EdgeQuery struct {
	IDs []string
	// Vertices and Dir select the edges adjacent to these vertices; nil
	// Vertices means every edge (g.E()).
	Vertices []Ref
	Dir      Direction
	Labels   []string
	Has      []Has
	Limit    int
}

// A StoreOp describes one read or write the store did, for
// executionProfile's storeOps and for the request charge: partitions
// touched (fanoutFactor), results, bytes, the charge, and which index
// served it ("" when it scanned or read by key).
type StoreOp struct {
	Partitions int
	Count      int
	Size       int
	Charge     float64
	Index      string
}

// A MutationKind says what a Mutation does.
type MutationKind int

const (
	AddVertex MutationKind = iota
	AddEdge
	UpdateVertex // replace the vertex's stored form with Vertex
	UpdateEdge
	DropVertex // remove the vertex and every edge in or out of it
	DropEdge
	DropVertexProperty // Vertex holds the vertex after the removal
	DropEdgeProperty   // Edge holds the edge after the removal
)

// A Mutation is one write of a traversal. The evaluator collects a
// traversal's writes and hands them to Store.Apply at the end, so that the
// writes to one logical partition commit together or not at all.
type Mutation struct {
	Kind   MutationKind
	Vertex *Vertex
	Edge   *Edge
}

// Store is a graph container as the evaluator sees it. Implementations: the
// engine-backed store of the server, and the in-memory model of the tests.
type Store interface {
	// PartitionKey is the name of the partition key property ("pk" for a
	// container partitioned on /pk).
	PartitionKey() string
	Vertices(ctx context.Context, q VertexQuery) ([]*Vertex, StoreOp, error)
	Edges(ctx context.Context, q EdgeQuery) ([]*Edge, StoreOp, error)
	// Apply writes the mutations: grouped by logical partition, each group
	// atomically. If a group fails after others committed, the error says
	// which mutations were written (see PartialWriteError).
	Apply(ctx context.Context, ms []Mutation) (StoreOp, error)
}

// PartialWriteError is returned by Store.Apply when some groups of
// mutations committed and a later one failed: Written counts the mutations
// that were written, in the order given, and Err is the failure.
type PartialWriteError struct {
	Written int
	Err     error
}

func (e *PartialWriteError) Error() string {
	return fmt.Sprintf("wrote %d elements before failing: %v", e.Written, e.Err)
}

func (e *PartialWriteError) Unwrap() error { return e.Err }

// Clone returns a deep copy of v: its own property lists and meta maps,
// each property pointing at the copy. Values themselves are shared.
func (v *Vertex) Clone() *Vertex {
	c := &Vertex{ID: v.ID, Label: v.Label, PartitionKey: v.PartitionKey,
		Properties: make(map[string][]*VertexProperty, len(v.Properties)),
		Keys:       append([]string(nil), v.Keys...)}
	for k, ps := range v.Properties {
		cp := make([]*VertexProperty, len(ps))
		for i, p := range ps {
			q := *p
			q.Vertex = c
			if p.Meta != nil {
				q.Meta = maps.Clone(p.Meta)
			}
			cp[i] = &q
		}
		c.Properties[k] = cp
	}
	return c
}

// Clone returns a copy of e with its own property map and key list.
func (e *Edge) Clone() *Edge {
	c := *e
	c.Properties = make(map[string]any, len(e.Properties))
	maps.Copy(c.Properties, e.Properties)
	c.Keys = append([]string(nil), e.Keys...)
	return &c
}
