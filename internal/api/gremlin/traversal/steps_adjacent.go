package traversal

import (
	"errors"
	"slices"

	"github.com/parsecdb/parsec/internal/api/gremlin/graph"
	"github.com/parsecdb/parsec/internal/api/gremlin/lang"
)

// buildAdjacent compiles out, in, both, outE, inE, bothE: one EdgeQuery
// for the whole frontier, then (for out, in, both) one VertexQuery for the
// neighbours, breadth-first.
func buildAdjacent(c *compiler, st lang.Step, mods []lang.Step) (*op, error) {
	if err := noMods(st, mods); err != nil {
		return nil, err
	}
	return c.adjacent(st, nil)
}

// adjacent compiles an adjacency step with the has steps that follow it:
// their conditions go into the edge query (outE, inE, bothE) or the
// neighbour query (out, in, both), and run as filters afterwards too.
func (c *compiler) adjacent(st lang.Step, hasSteps []lang.Step) (*op, error) {
	var filters []*op
	var conds []graph.Has
	var condLabels []string
	for _, hs := range hasSteps {
		f, h, err := c.hasFilter(hs)
		if err != nil {
			return nil, err
		}
		filters = append(filters, f)
		for _, x := range h {
			if x.T && x.Key == "label" && x.P.Op == "within" && condLabels == nil {
				condLabels = stringsOf(x.P.Args)
				continue
			}
			conds = append(conds, x)
		}
	}
	labels, err := stringArgs(st)
	if err != nil {
		return nil, err
	}
	var dir graph.Direction
	switch st.Name {
	case "out", "outE":
		dir = graph.Out
	case "in", "inE":
		dir = graph.In
	default:
		dir = graph.Both
	}
	toVertices := st.Name == "out" || st.Name == "in" || st.Name == "both"
	return &op{fn: func(r *run, f *frame, in []*traverser) ([]*traverser, error) {
		if len(in) == 0 {
			return nil, nil
		}
		var refs []graph.Ref
		seen := map[string]bool{}
		for _, t := range in {
			v, ok := t.obj.(*graph.Vertex)
			if !ok {
				return nil, invalid(st.Name, "applies to vertices, not %s", describe(t.obj))
			}
			k := vertexKey(v.PartitionKey, v.ID)
			if !seen[k] {
				seen[k] = true
				refs = append(refs, refOf(v))
			}
		}
		eq := graph.EdgeQuery{Vertices: refs, Dir: dir, Labels: labels}
		if !toVertices {
			eq.Has = conds
			if condLabels != nil {
				eq.Labels = intersect(labels, condLabels)
			}
		}
		edges, err := r.readEdges(eq)
		if err != nil {
			return nil, err
		}
		// Each vertex's adjacent edges, and the far end of each.
		type adj struct {
			e   *graph.Edge
			far graph.Ref
		}
		byVertex := map[string][]adj{}
		for _, e := range edges {
			ko := vertexKey(e.Out.PartitionKey, e.Out.ID)
			ki := vertexKey(e.In.PartitionKey, e.In.ID)
			if dir != graph.In && seen[ko] {
				byVertex[ko] = append(byVertex[ko], adj{e, e.In})
			}
			if dir != graph.Out && seen[ki] {
				byVertex[ki] = append(byVertex[ki], adj{e, e.Out})
			}
		}
		var far map[string]*graph.Vertex
		if toVertices {
			var refs []graph.Ref
			for _, as := range byVertex {
				for _, a := range as {
					refs = append(refs, a.far)
				}
			}
			if far, err = r.fetchVertices(refs, condLabels, conds); err != nil {
				return nil, err
			}
		}
		var out []*traverser
		for _, t := range in {
			v := t.obj.(*graph.Vertex)
			for _, a := range byVertex[vertexKey(v.PartitionKey, v.ID)] {
				if !toVertices {
					out = append(out, t.to(a.e))
					continue
				}
				if nv, ok := far[vertexKey(a.far.PartitionKey, a.far.ID)]; ok {
					out = append(out, t.to(nv))
				}
			}
			if err := r.grow(st.Name, len(out)); err != nil {
				return nil, err
			}
		}
		for _, fl := range filters {
			if out, err = fl.fn(r, f, out); err != nil {
				return nil, err
			}
		}
		return out, nil
	}}, nil
}

// intersect returns the labels in both lists; a nil list does not
// restrict.
func intersect(a, b []string) []string {
	if len(a) == 0 {
		return b
	}
	out := []string{}
	for _, x := range a {
		if slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	if len(out) == 0 {
		// Nothing can match; a label no element carries says so to the
		// store without meaning "unrestricted".
		return []string{"\x00none"}
	}
	return out
}

// grow fails once a step's output alone outgrows the memory budget, so
// that a fan-out is stopped before it completes.
func (r *run) grow(step string, n int) error {
	if n&1023 != 0 {
		return nil
	}
	if r.sideMB+int64(n)*96 > r.o.MemoryBudget {
		return newErr(ErrMemory, step, "the traversal needs more than %d bytes", r.o.MemoryBudget)
	}
	if err := r.ctx.Err(); err != nil {
		return &Error{Code: CodeTooMany, Step: step, Message: "the traversal exceeded its time limit", Err: errors.Join(ErrTimeout, err)}
	}
	return nil
}

// fetchVertices reads vertices by reference (each in its own logical
// partition, as graph.VertexQuery.Refs says), answering by key.
func (r *run) fetchVertices(refs []graph.Ref, labels []string, has []graph.Has) (map[string]*graph.Vertex, error) {
	out := map[string]*graph.Vertex{}
	if len(refs) == 0 {
		return out, nil
	}
	var distinct []graph.Ref
	want := map[string]bool{}
	for _, ref := range refs {
		k := vertexKey(ref.PartitionKey, ref.ID)
		if !want[k] {
			want[k] = true
			distinct = append(distinct, ref)
		}
	}
	vs, err := r.readVertices(graph.VertexQuery{Refs: distinct, Labels: labels, Has: has})
	if err != nil {
		return nil, err
	}
	for _, v := range vs {
		k := vertexKey(v.PartitionKey, v.ID)
		if want[k] {
			out[k] = v
		} else if _, done := out[k]; !done && want[vertexKey(nil, v.ID)] {
			out[vertexKey(nil, v.ID)] = v
		}
	}
	return out, nil
}

// buildEdgeVertex compiles outV, inV, bothV, otherV.
func buildEdgeVertex(c *compiler, st lang.Step, mods []lang.Step) (*op, error) {
	if err := noMods(st, mods); err != nil {
		return nil, err
	}
	if err := mustNoArgs(st); err != nil {
		return nil, err
	}
	name := st.Name
	ends := func(t *traverser) ([]graph.Ref, error) {
		e, ok := t.obj.(*graph.Edge)
		if !ok {
			return nil, invalid(name, "applies to edges, not %s", describe(t.obj))
		}
		switch name {
		case "outV":
			return []graph.Ref{e.Out}, nil
		case "inV":
			return []graph.Ref{e.In}, nil
		case "bothV":
			return []graph.Ref{e.Out, e.In}, nil
		}
		// otherV: the end the traverser did not come from.
		if t.path != nil && t.path.prev != nil {
			if v, ok := t.path.prev.obj.(*graph.Vertex); ok && v.ID == e.Out.ID && graph.Equal(v.PartitionKey, e.Out.PartitionKey) {
				return []graph.Ref{e.In}, nil
			}
			return []graph.Ref{e.Out}, nil
		}
		return nil, invalid(name, "needs the vertex the edge was reached from")
	}
	return &op{fn: func(r *run, f *frame, in []*traverser) ([]*traverser, error) {
		var all []graph.Ref
		per := make([][]graph.Ref, len(in))
		for i, t := range in {
			refs, err := ends(t)
			if err != nil {
				return nil, err
			}
			per[i] = refs
			all = append(all, refs...)
		}
		vs, err := r.fetchVertices(all, nil, nil)
		if err != nil {
			return nil, err
		}
		var out []*traverser
		for i, t := range in {
			for _, ref := range per[i] {
				if v, ok := vs[vertexKey(ref.PartitionKey, ref.ID)]; ok {
					out = append(out, t.to(v))
				}
			}
		}
		return out, nil
	}}, nil
}
