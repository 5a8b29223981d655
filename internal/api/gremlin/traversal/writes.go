package traversal

import (
	"errors"

	"github.com/parsecdb/parsec/internal/api/gremlin/graph"
)

// writeSet collects a traversal's writes: each element touched, in the
// order first touched, with what happened to it. Elements are the
// traversal's own objects (see canonVertex), changed in place, so the
// final state of each is what Apply receives.
type writeSet struct {
	order   []any // *graph.Vertex or *graph.Edge
	entries map[any]*wentry
	// endpoints of edges added here, so their refs can follow a vertex
	// whose id or partition key was set after the edge was added.
	ends map[*graph.Edge][2]*graph.Vertex
	// droppedV holds the keys of the vertices dropped.
	droppedV map[string]bool
}

type wentry struct {
	added, updated, dropped bool
}

func newWriteSet() *writeSet {
	return &writeSet{entries: map[any]*wentry{}, ends: map[*graph.Edge][2]*graph.Vertex{}, droppedV: map[string]bool{}}
}

func (w *writeSet) entry(el any) *wentry {
	e, ok := w.entries[el]
	if !ok {
		e = &wentry{}
		w.entries[el] = e
		w.order = append(w.order, el)
	}
	return e
}

func (w *writeSet) add(el any)    { w.entry(el).added = true }
func (w *writeSet) update(el any) { w.entry(el).updated = true }
func (w *writeSet) drop(el any) {
	w.entry(el).dropped = true
	if v, ok := el.(*graph.Vertex); ok {
		w.droppedV[vertexKey(v.PartitionKey, v.ID)] = true
	}
}

func (w *writeSet) isAdded(el any) bool {
	e, ok := w.entries[el]
	return ok && e.added
}

func (w *writeSet) isDropped(el any) bool {
	e, ok := w.entries[el]
	return ok && e.dropped
}

// endpointDropped reports whether an edge's source or target vertex was
// dropped by this traversal.
func (w *writeSet) endpointDropped(e *graph.Edge) bool {
	if len(w.droppedV) == 0 {
		return false
	}
	return w.droppedV[vertexKey(e.Out.PartitionKey, e.Out.ID)] || w.droppedV[vertexKey(e.In.PartitionKey, e.In.ID)]
}

func (w *writeSet) addedVertices() []*graph.Vertex {
	var out []*graph.Vertex
	for _, el := range w.order {
		if v, ok := el.(*graph.Vertex); ok && w.entries[el].added {
			out = append(out, v)
		}
	}
	return out
}

func (w *writeSet) addedEdges() []*graph.Edge {
	var out []*graph.Edge
	for _, el := range w.order {
		if e, ok := el.(*graph.Edge); ok && w.entries[el].added {
			out = append(out, e)
		}
	}
	return out
}

// commit checks the writes (every added vertex carries its partition key)
// and applies them with one Apply.
func (r *run) commit(res *Result) error {
	w := r.writes
	var ms []graph.Mutation
	for _, el := range w.order {
		e := w.entries[el]
		switch x := el.(type) {
		case *graph.Vertex:
			switch {
			case e.added && e.dropped:
			case e.added:
				if len(x.Properties[r.pk]) != 1 {
					return newErr(ErrPartitionKey, "addV", "the vertex %q has no value for the partition key property %q", x.ID, r.pk)
				}
				ms = append(ms, graph.Mutation{Kind: graph.AddVertex, Vertex: x})
			case e.dropped:
				ms = append(ms, graph.Mutation{Kind: graph.DropVertex, Vertex: x})
			case e.updated:
				ms = append(ms, graph.Mutation{Kind: graph.UpdateVertex, Vertex: x})
			}
		case *graph.Edge:
			if ends, ok := w.ends[x]; ok {
				x.Out, x.In = refOf(ends[0]), refOf(ends[1])
			}
			switch {
			case e.added && (e.dropped || w.endpointDropped(x)):
			case e.added:
				ms = append(ms, graph.Mutation{Kind: graph.AddEdge, Edge: x})
			case e.dropped:
				ms = append(ms, graph.Mutation{Kind: graph.DropEdge, Edge: x})
			case e.updated && !w.endpointDropped(x):
				ms = append(ms, graph.Mutation{Kind: graph.UpdateEdge, Edge: x})
			}
		}
	}
	if len(ms) == 0 {
		return nil
	}
	op, err := r.s.Apply(r.ctx, ms)
	r.charge(op)
	if err != nil {
		var pw *graph.PartialWriteError
		if errors.As(err, &pw) {
			res.Written = pw.Written
		}
		return &Error{Code: CodeStore, Message: "cannot apply the traversal's writes: " + err.Error(), Err: errors.Join(ErrStore, err)}
	}
	res.Written = len(ms)
	return nil
}
