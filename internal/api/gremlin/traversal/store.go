package traversal

import (
	"fmt"
	"iter"
	"maps"
	"slices"
	"strconv"

	"github.com/parsecdb/parsec/internal/api/gremlin/graph"
)

// canonVertex returns the one object the traversal uses for a vertex the
// store returned: the first copy read, or the one written earlier in the
// traversal, so that a property() set earlier is visible on later reads.
func (r *run) canonVertex(v *graph.Vertex) *graph.Vertex {
	k := vertexKey(v.PartitionKey, v.ID)
	if c, ok := r.vertices[k]; ok {
		return c
	}
	c := cloneVertex(v)
	r.vertices[k] = c
	r.sideMB += elementSize(len(v.Properties))
	return c
}

func (r *run) canonEdge(e *graph.Edge) *graph.Edge {
	k := edgeKey(e)
	if c, ok := r.edges[k]; ok {
		return c
	}
	c := cloneEdge(e)
	r.edges[k] = c
	r.sideMB += elementSize(len(e.Properties))
	return c
}

// readVertices queries the store and merges what the traversal holds:
// vertices dropped earlier are gone, vertices added earlier are found.
func (r *run) readVertices(q graph.VertexQuery) ([]*graph.Vertex, error) {
	vs, op, err := r.s.Vertices(r.ctx, q)
	r.charge(op)
	if err != nil {
		return nil, err
	}
	out := make([]*graph.Vertex, 0, len(vs))
	seen := map[*graph.Vertex]bool{}
	vertexMatches := newVertexMatcher(q)
	for _, v := range vs {
		c := r.canonVertex(v)
		if seen[c] || r.writes.isDropped(c) || !vertexMatches(c, q) {
			continue
		}
		seen[c] = true
		out = append(out, c)
	}
	for _, c := range r.writes.addedVertices() {
		if !seen[c] && !r.writes.isDropped(c) && vertexMatches(c, q) {
			seen[c] = true
			out = append(out, c)
		}
	}
	return out, nil
}

// readEdges queries the store and merges what the traversal holds.
func (r *run) readEdges(q graph.EdgeQuery) ([]*graph.Edge, error) {
	es, op, err := r.s.Edges(r.ctx, q)
	r.charge(op)
	if err != nil {
		return nil, err
	}
	out := make([]*graph.Edge, 0, len(es))
	seen := map[*graph.Edge]bool{}
	edgeMatches := newEdgeMatcher(q)
	keep := func(c *graph.Edge) bool {
		return !seen[c] && !r.writes.isDropped(c) && !r.writes.endpointDropped(c) && edgeMatches(c, q)
	}
	for _, e := range es {
		c := r.canonEdge(e)
		if keep(c) {
			seen[c] = true
			out = append(out, c)
		}
	}
	for _, c := range r.writes.addedEdges() {
		if keep(c) {
			seen[c] = true
			out = append(out, c)
		}
	}
	return out, nil
}

// newVertexMatcher returns a test of a vertex against q, with the ids and
// partition keys in sets so that checking a large read stays linear.
func newVertexMatcher(q graph.VertexQuery) func(*graph.Vertex, graph.VertexQuery) bool {
	ids := stringSet(q.IDs)
	labels := stringSet(q.Labels)
	var pks map[string]bool
	if len(q.PartitionKeys) > 0 {
		pks = map[string]bool{}
		for _, pk := range q.PartitionKeys {
			pks[pkKey(pk)] = true
		}
	}
	var refs, anyPK map[string]bool
	if len(q.Refs) > 0 {
		refs, anyPK = map[string]bool{}, map[string]bool{}
		for _, ref := range q.Refs {
			if ref.PartitionKey == nil {
				anyPK[ref.ID] = true
			} else {
				refs[vertexKey(ref.PartitionKey, ref.ID)] = true
			}
		}
	}
	return func(v *graph.Vertex, q graph.VertexQuery) bool {
		if ids != nil && !ids[v.ID] {
			return false
		}
		if refs != nil && !anyPK[v.ID] && !refs[vertexKey(v.PartitionKey, v.ID)] {
			return false
		}
		if pks != nil && !pks[pkKey(v.PartitionKey)] {
			return false
		}
		if labels != nil && !labels[v.Label] {
			return false
		}
		for _, h := range q.Has {
			if !hasTest(h, v) {
				return false
			}
		}
		return true
	}
}

// newEdgeMatcher returns a test of an edge against q.
func newEdgeMatcher(q graph.EdgeQuery) func(*graph.Edge, graph.EdgeQuery) bool {
	ids := stringSet(q.IDs)
	labels := stringSet(q.Labels)
	var ends map[string]bool
	if q.Vertices != nil {
		ends = map[string]bool{}
		for _, ref := range q.Vertices {
			ends[vertexKey(ref.PartitionKey, ref.ID)] = true
		}
	}
	return func(e *graph.Edge, q graph.EdgeQuery) bool {
		if ids != nil && !ids[e.ID] {
			return false
		}
		if labels != nil && !labels[e.Label] {
			return false
		}
		if ends != nil {
			out := q.Dir != graph.In && ends[vertexKey(e.Out.PartitionKey, e.Out.ID)]
			in := q.Dir != graph.Out && ends[vertexKey(e.In.PartitionKey, e.In.ID)]
			if !out && !in {
				return false
			}
		}
		for _, h := range q.Has {
			if !hasTest(h, e) {
				return false
			}
		}
		return true
	}
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

// pkKey keys a partition key value so that equal numbers of different
// types meet (1 and 1.0 route alike, as graph.Equal says).
func pkKey(v any) string {
	if s, ok := v.(string); ok {
		return "s:" + s
	}
	if f, ok := toFloat(v); ok {
		return "n:" + strconv.FormatFloat(f, 'g', -1, 64)
	}
	return fmt.Sprintf("%T:%v", v, v)
}

// hasTest tests one condition against an element: any value of a
// multi-valued property may match.
func hasTest(h graph.Has, el any) bool {
	if h.T {
		var v any
		switch x := el.(type) {
		case *graph.Vertex:
			v = x.ID
			if h.Key == "label" {
				v = x.Label
			}
		case *graph.Edge:
			v = x.ID
			if h.Key == "label" {
				v = x.Label
			}
		case *graph.VertexProperty:
			v = x.ID
			if h.Key == "label" {
				v = x.Key
			}
		default:
			return false
		}
		ok, err := graph.Test(h.P, v)
		return err == nil && ok
	}
	for _, v := range propertyValues(el, h.Key) {
		if ok, err := graph.Test(h.P, v); err == nil && ok {
			return true
		}
	}
	return false
}

// propertyValues returns the values of key on an element (a vertex's
// values in order, an edge's value, a vertex property's meta-property).
func propertyValues(el any, key string) []any {
	switch x := el.(type) {
	case *graph.Vertex:
		ps := x.Properties[key]
		out := make([]any, len(ps))
		for i, p := range ps {
			out[i] = p.Value
		}
		return out
	case *graph.Edge:
		if v, ok := x.Properties[key]; ok {
			return []any{v}
		}
	case *graph.VertexProperty:
		if v, ok := x.Meta[key]; ok {
			return []any{v}
		}
	}
	return nil
}

// cloneVertex copies v for the run, completing Keys where a store's form
// lacks them, in a stable order.
func cloneVertex(v *graph.Vertex) *graph.Vertex {
	c := v.Clone()
	c.Keys = completeKeys(c.Keys, maps.Keys(c.Properties))
	return c
}

// cloneEdge is cloneVertex for an edge.
func cloneEdge(e *graph.Edge) *graph.Edge {
	c := e.Clone()
	c.Keys = completeKeys(c.Keys, maps.Keys(c.Properties))
	return c
}

// completeKeys appends to have the keys it lacks, sorted.
func completeKeys(have []string, keys iter.Seq[string]) []string {
	var rest []string
	for k := range keys {
		if !slices.Contains(have, k) {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	return append(have, rest...)
}

// elementSize approximates the bytes of an element held by the run.
func elementSize(props int) int64 { return 160 + int64(props)*96 }
