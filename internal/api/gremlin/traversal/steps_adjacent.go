package traversal

import (
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
		edges, err := r.readEdges(graph.EdgeQuery{Vertices: refs, Dir: dir, Labels: labels})
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
			if far, err = r.fetchVertices(refs); err != nil {
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
		}
		return out, nil
	}}, nil
}

// fetchVertices reads vertices by reference with one query (ids and
// partition keys of them all), answering by key.
func (r *run) fetchVertices(refs []graph.Ref) (map[string]*graph.Vertex, error) {
	out := map[string]*graph.Vertex{}
	if len(refs) == 0 {
		return out, nil
	}
	var ids []string
	var pks []any
	seenID := map[string]bool{}
	seenPK := map[string]bool{}
	want := map[string]bool{}
	for _, ref := range refs {
		want[vertexKey(ref.PartitionKey, ref.ID)] = true
		if !seenID[ref.ID] {
			seenID[ref.ID] = true
			ids = append(ids, ref.ID)
		}
		pk := vertexKey(ref.PartitionKey, "")
		if !seenPK[pk] {
			seenPK[pk] = true
			pks = append(pks, ref.PartitionKey)
		}
	}
	vs, err := r.readVertices(graph.VertexQuery{IDs: ids, PartitionKeys: pks})
	if err != nil {
		return nil, err
	}
	for _, v := range vs {
		k := vertexKey(v.PartitionKey, v.ID)
		if want[k] {
			out[k] = v
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
		vs, err := r.fetchVertices(all)
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
