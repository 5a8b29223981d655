// Package memgraph is an in-memory graph.Store: the model the evaluator's
// tests run against and a reference for what a store must do. Vertices are
// kept by logical partition (the value of the partition key property) and
// id, edges with their source vertex's partition, and an index of edges by
// target stands in for the engine's secondary index. Every read reports an
// honest StoreOp: the partitions it touched (the distinct partition keys it
// was routed to, or every partition when the query was not routed), the
// results, their approximate size, and a charge. Apply commits the writes
// of one logical partition together or not at all.
package memgraph

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"

	"github.com/parsecdb/parsec/internal/api/gremlin/graph"
)

// ErrConflict is returned by Apply when a vertex or edge id is already
// taken in its partition.
var ErrConflict = errors.New("an element with this id already exists in the partition")

// ErrNotFound is returned by Apply when an update names an element that
// does not exist.
var ErrNotFound = errors.New("element not found")

// IndexInEdges names the index that serves reads of edges by target.
const IndexInEdges = "memgraph:edges-by-target"

// IndexProperty names the index that serves unrouted vertex reads with a
// property condition.
const IndexProperty = "memgraph:property"

// Graph is the in-memory store. It is safe for concurrent use. Values
// returned by its reads are copies the caller owns.
type Graph struct {
	mu    sync.Mutex
	pk    string
	parts map[string]*partition
	order []string // partition keys in creation order, for stable scans
	// FailPartition, when set, is consulted by Apply before each logical
	// partition's group commits; a non-nil error fails that group.
	FailPartition func(pk any) error
}

type partition struct {
	pk       any
	vertices map[string]*graph.Vertex
	vorder   []string
	edges    map[string]*graph.Edge // edges whose source lives here
	eorder   []string
}

// New returns an empty graph partitioned on the property pk.
func New(pk string) *Graph {
	return &Graph{pk: pk, parts: map[string]*partition{}}
}

// PartitionKey implements graph.Store.
func (g *Graph) PartitionKey() string { return g.pk }

// pkKey keys a partition key value; numbers by value, so that 1 and 1.0
// and an int32 and an int64 name the same logical partition.
func pkKey(v any) string {
	if s, ok := v.(string); ok {
		return "s:" + s
	}
	if graph.IsNumber(v) {
		return "n:" + strconv.FormatFloat(number(v), 'g', -1, 64)
	}
	return fmt.Sprintf("%T:%v", v, v)
}

func number(v any) float64 {
	switch x := v.(type) {
	case int32:
		return float64(x)
	case int64:
		return float64(x)
	case int:
		return float64(x)
	case float32:
		return float64(x)
	case float64:
		return x
	}
	f, _ := strconv.ParseFloat(fmt.Sprint(v), 64)
	return f
}

// Vertices implements graph.Store.
func (g *Graph) Vertices(ctx context.Context, q graph.VertexQuery) ([]*graph.Vertex, graph.StoreOp, error) {
	if err := ctx.Err(); err != nil {
		return nil, graph.StoreOp{}, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(q.Refs) > 0 {
		out, parts := g.vertexRefs(q)
		op := graph.StoreOp{Partitions: parts, Count: len(out)}
		for _, v := range out {
			op.Size += vertexSize(v)
		}
		op.Charge = charge(op)
		return out, op, nil
	}
	parts, routed := g.route(q.PartitionKeys)
	op := graph.StoreOp{Partitions: len(parts)}
	if !routed && len(q.IDs) == 0 && len(q.Has) > 0 {
		op.Index = IndexProperty
	}
	var out []*graph.Vertex
	labels := stringSet(q.Labels)
	var ids []string
	if len(q.IDs) > 0 {
		// Distinct ids, looked up by key in each partition.
		seen := map[string]bool{}
		for _, id := range q.IDs {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	for _, p := range parts {
		order := p.vorder
		if ids != nil {
			order = ids
		}
		for _, id := range order {
			v, ok := p.vertices[id]
			if !ok || !vertexMatches(v, labels, q.Has) {
				continue
			}
			out = append(out, v.Clone())
			op.Size += vertexSize(v)
			if q.Limit > 0 && len(out) >= q.Limit {
				break
			}
		}
		if q.Limit > 0 && len(out) >= q.Limit {
			break
		}
	}
	op.Count = len(out)
	op.Charge = charge(op)
	return out, op, nil
}

// vertexRefs answers a query by references: each keyed one looked up in
// its partition, each without a key in every partition. The caller holds
// g.mu. It returns the vertices and how many partitions it read.
func (g *Graph) vertexRefs(q graph.VertexQuery) ([]*graph.Vertex, int) {
	ids := stringSet(q.IDs)
	labels := stringSet(q.Labels)
	var out []*graph.Vertex
	seen := map[*graph.Vertex]bool{}
	try := func(v *graph.Vertex) bool {
		if v == nil || seen[v] || (ids != nil && !ids[v.ID]) || !vertexMatches(v, labels, q.Has) {
			return false
		}
		seen[v] = true
		out = append(out, v.Clone())
		return q.Limit > 0 && len(out) >= q.Limit
	}
	touched := map[string]bool{}
	for _, r := range q.Refs {
		if r.PartitionKey != nil {
			k := pkKey(r.PartitionKey)
			touched[k] = true
			if p, ok := g.parts[k]; ok && try(p.vertices[r.ID]) {
				break
			}
			continue
		}
		for _, k := range g.order {
			touched[k] = true
			if try(g.parts[k].vertices[r.ID]) {
				return out, len(touched)
			}
		}
	}
	return out, len(touched)
}

// route returns the partitions a query reads: those named, or all.
func (g *Graph) route(pks []any) ([]*partition, bool) {
	if len(pks) == 0 {
		all := make([]*partition, 0, len(g.order))
		for _, k := range g.order {
			all = append(all, g.parts[k])
		}
		return all, false
	}
	seen := map[string]bool{}
	var out []*partition
	for _, pk := range pks {
		k := pkKey(pk)
		if seen[k] {
			continue
		}
		seen[k] = true
		if p, ok := g.parts[k]; ok {
			out = append(out, p)
		}
	}
	return out, true
}

func charge(op graph.StoreOp) float64 {
	return float64(op.Partitions) + float64(op.Count)*0.5 + float64(op.Size)/1024
}

// stringSet is nil for an empty list (no restriction).
func stringSet(xs []string) map[string]bool {
	if len(xs) == 0 {
		return nil
	}
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// vertexMatches tests a vertex read by id or scanned against the labels
// and conditions of a query.
func vertexMatches(v *graph.Vertex, labels map[string]bool, has []graph.Has) bool {
	if labels != nil && !labels[v.Label] {
		return false
	}
	for _, h := range has {
		if !hasMatches(h, v.ID, v.Label, func(k string) []any {
			var vals []any
			for _, p := range v.Properties[k] {
				vals = append(vals, p.Value)
			}
			return vals
		}) {
			return false
		}
	}
	return true
}

func edgeMatches(e *graph.Edge, ids, labels map[string]bool, has []graph.Has) bool {
	if ids != nil && !ids[e.ID] {
		return false
	}
	if labels != nil && !labels[e.Label] {
		return false
	}
	for _, h := range has {
		if !hasMatches(h, e.ID, e.Label, func(k string) []any {
			if v, ok := e.Properties[k]; ok {
				return []any{v}
			}
			return nil
		}) {
			return false
		}
	}
	return true
}

// hasMatches tests one condition; a property with several values matches
// when any value does, as has() does on a multi-valued property.
func hasMatches(h graph.Has, id, label string, values func(string) []any) bool {
	if h.T {
		var v any = id
		if h.Key == "label" {
			v = label
		}
		ok, err := graph.Test(h.P, v)
		return err == nil && ok
	}
	for _, v := range values(h.Key) {
		if ok, err := graph.Test(h.P, v); err == nil && ok {
			return true
		}
	}
	return false
}

// Edges implements graph.Store.
func (g *Graph) Edges(ctx context.Context, q graph.EdgeQuery) ([]*graph.Edge, graph.StoreOp, error) {
	if err := ctx.Err(); err != nil {
		return nil, graph.StoreOp{}, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	var op graph.StoreOp
	var out []*graph.Edge
	seen := map[string]bool{}
	ids, labels := stringSet(q.IDs), stringSet(q.Labels)
	add := func(p *partition, e *graph.Edge) bool {
		k := pkKey(p.pk) + "\x00" + e.ID
		if seen[k] || !edgeMatches(e, ids, labels, q.Has) {
			return true
		}
		seen[k] = true
		out = append(out, e.Clone())
		op.Size += edgeSize(e)
		return q.Limit == 0 || len(out) < q.Limit
	}
	if q.Vertices == nil {
		op.Partitions = len(g.order)
	scan:
		for _, k := range g.order {
			p := g.parts[k]
			for _, id := range p.eorder {
				if !add(p, p.edges[id]) {
					break scan
				}
			}
		}
		op.Count = len(out)
		op.Charge = charge(op)
		return out, op, nil
	}
	touched := map[string]bool{}
	if q.Dir == graph.Out || q.Dir == graph.Both {
		// Each partition read once for all the sources it holds.
		sources := map[string]map[string]bool{}
		for _, r := range q.Vertices {
			k := pkKey(r.PartitionKey)
			touched[k] = true
			if sources[k] == nil {
				sources[k] = map[string]bool{}
			}
			sources[k][r.ID] = true
		}
	outer:
		for _, k := range g.order {
			src, ok := sources[k]
			if !ok {
				continue
			}
			p := g.parts[k]
			for _, id := range p.eorder {
				e := p.edges[id]
				if src[e.Out.ID] && !add(p, e) {
					break outer
				}
			}
		}
	}
	if q.Dir == graph.In || q.Dir == graph.Both {
		// Edges by target: read through the index, which spans every
		// partition since an edge lives with its source.
		op.Index = IndexInEdges
		targets := map[string]bool{}
		for _, r := range q.Vertices {
			targets[pkKey(r.PartitionKey)+"\x00"+r.ID] = true
		}
		for _, k := range g.order {
			p := g.parts[k]
			touched[k] = true
			for _, id := range p.eorder {
				e := p.edges[id]
				if targets[pkKey(e.In.PartitionKey)+"\x00"+e.In.ID] && !add(p, e) {
					break
				}
			}
		}
	}
	op.Partitions = len(touched)
	op.Count = len(out)
	op.Charge = charge(op)
	return out, op, nil
}

// Apply implements graph.Store: mutations are grouped by logical partition
// (a vertex's partition key, an edge's source partition key) in the order
// each partition first appears; each group is checked and then committed as
// a whole.
func (g *Graph) Apply(ctx context.Context, ms []graph.Mutation) (graph.StoreOp, error) {
	if err := ctx.Err(); err != nil {
		return graph.StoreOp{}, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	type group struct {
		pk any
		ms []graph.Mutation
	}
	var groups []*group
	byKey := map[string]*group{}
	for _, m := range ms {
		pk, err := mutationPK(m)
		if err != nil {
			return graph.StoreOp{}, err
		}
		k := pkKey(pk)
		gr, ok := byKey[k]
		if !ok {
			gr = &group{pk: pk}
			byKey[k] = gr
			groups = append(groups, gr)
		}
		gr.ms = append(gr.ms, m)
	}
	op := graph.StoreOp{}
	written := 0
	for _, gr := range groups {
		err := g.applyGroup(gr.pk, gr.ms)
		if err != nil {
			if written > 0 {
				return op, &graph.PartialWriteError{Written: written, Err: err}
			}
			return op, err
		}
		written += len(gr.ms)
		op.Partitions++
		op.Count += len(gr.ms)
	}
	op.Charge = float64(op.Count) * 5
	return op, nil
}

func mutationPK(m graph.Mutation) (any, error) {
	switch m.Kind {
	case graph.AddVertex, graph.UpdateVertex, graph.DropVertex, graph.DropVertexProperty:
		if m.Vertex == nil {
			return nil, fmt.Errorf("memgraph: mutation %d without a vertex", m.Kind)
		}
		return m.Vertex.PartitionKey, nil
	case graph.AddEdge, graph.UpdateEdge, graph.DropEdge, graph.DropEdgeProperty:
		if m.Edge == nil {
			return nil, fmt.Errorf("memgraph: mutation %d without an edge", m.Kind)
		}
		return m.Edge.Out.PartitionKey, nil
	}
	return nil, fmt.Errorf("memgraph: unknown mutation kind %d", m.Kind)
}

// applyGroup checks every mutation of one partition against a copy of its
// state and swaps the copy in only when all succeed.
func (g *Graph) applyGroup(pk any, ms []graph.Mutation) error {
	if g.FailPartition != nil {
		if err := g.FailPartition(pk); err != nil {
			return err
		}
	}
	k := pkKey(pk)
	old := g.parts[k]
	p := &partition{pk: pk, vertices: map[string]*graph.Vertex{}, edges: map[string]*graph.Edge{}}
	if old != nil {
		for id, v := range old.vertices {
			p.vertices[id] = v
		}
		for id, e := range old.edges {
			p.edges[id] = e
		}
		p.vorder = append(p.vorder, old.vorder...)
		p.eorder = append(p.eorder, old.eorder...)
	}
	var dropped []graph.Ref // vertices dropped: their in-edges elsewhere go too
	for _, m := range ms {
		switch m.Kind {
		case graph.AddVertex:
			if _, ok := p.vertices[m.Vertex.ID]; ok {
				return fmt.Errorf("cannot add vertex %q: %w", m.Vertex.ID, ErrConflict)
			}
			p.vertices[m.Vertex.ID] = m.Vertex.Clone()
			p.vorder = append(p.vorder, m.Vertex.ID)
		case graph.UpdateVertex, graph.DropVertexProperty:
			if _, ok := p.vertices[m.Vertex.ID]; !ok {
				return fmt.Errorf("cannot update vertex %q: %w", m.Vertex.ID, ErrNotFound)
			}
			p.vertices[m.Vertex.ID] = m.Vertex.Clone()
		case graph.DropVertex:
			if _, ok := p.vertices[m.Vertex.ID]; !ok {
				continue // already gone: drop is idempotent
			}
			delete(p.vertices, m.Vertex.ID)
			p.vorder = without(p.vorder, m.Vertex.ID)
			for _, id := range append([]string(nil), p.eorder...) {
				if e := p.edges[id]; e.Out.ID == m.Vertex.ID {
					delete(p.edges, id)
					p.eorder = without(p.eorder, id)
				}
			}
			dropped = append(dropped, graph.Ref{ID: m.Vertex.ID, PartitionKey: pk})
		case graph.AddEdge:
			if _, ok := p.edges[m.Edge.ID]; ok {
				return fmt.Errorf("cannot add edge %q: %w", m.Edge.ID, ErrConflict)
			}
			if _, ok := p.vertices[m.Edge.Out.ID]; !ok {
				return fmt.Errorf("cannot add edge %q: source vertex %q: %w", m.Edge.ID, m.Edge.Out.ID, ErrNotFound)
			}
			p.edges[m.Edge.ID] = m.Edge.Clone()
			p.eorder = append(p.eorder, m.Edge.ID)
		case graph.UpdateEdge, graph.DropEdgeProperty:
			if _, ok := p.edges[m.Edge.ID]; !ok {
				return fmt.Errorf("cannot update edge %q: %w", m.Edge.ID, ErrNotFound)
			}
			p.edges[m.Edge.ID] = m.Edge.Clone()
		case graph.DropEdge:
			if _, ok := p.edges[m.Edge.ID]; ok {
				delete(p.edges, m.Edge.ID)
				p.eorder = without(p.eorder, m.Edge.ID)
			}
		}
	}
	if old == nil {
		g.order = append(g.order, k)
	}
	g.parts[k] = p
	// Edges into a dropped vertex live in their sources' partitions; as on
	// Cosmos, removing them is not part of the partition's atomic group.
	for _, r := range dropped {
		for _, pk2 := range g.order {
			q := g.parts[pk2]
			for _, id := range append([]string(nil), q.eorder...) {
				e := q.edges[id]
				if e.In.ID == r.ID && pkKey(e.In.PartitionKey) == pkKey(r.PartitionKey) {
					delete(q.edges, id)
					q.eorder = without(q.eorder, id)
				}
			}
		}
	}
	return nil
}

func without(xs []string, s string) []string {
	out := xs[:0:0]
	for _, x := range xs {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}

// Stats returns the number of partitions, vertices and edges.
func (g *Graph) Stats() (partitions, vertices, edges int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, p := range g.parts {
		vertices += len(p.vertices)
		edges += len(p.edges)
	}
	return len(g.parts), vertices, edges
}

// AllVertices returns a copy of every vertex, ordered by partition
// creation and insertion.
func (g *Graph) AllVertices() []*graph.Vertex {
	vs, _, _ := g.Vertices(context.Background(), graph.VertexQuery{})
	return vs
}

// AllEdges returns a copy of every edge.
func (g *Graph) AllEdges() []*graph.Edge {
	es, _, _ := g.Edges(context.Background(), graph.EdgeQuery{})
	return es
}

func vertexSize(v *graph.Vertex) int {
	n := 64 + len(v.ID) + len(v.Label)
	keys := make([]string, 0, len(v.Properties))
	for k := range v.Properties {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, p := range v.Properties[k] {
			n += 48 + len(k) + len(fmt.Sprint(p.Value))
		}
	}
	return n
}

func edgeSize(e *graph.Edge) int {
	n := 96 + len(e.ID) + len(e.Label)
	for k, v := range e.Properties {
		n += 16 + len(k) + len(fmt.Sprint(v))
	}
	return n
}
