package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/parsecdb/parsec/internal/api/gremlin/graph"
	"github.com/parsecdb/parsec/internal/engine"
)

// write is one item operation of an Apply.
type write struct {
	kind engine.OpKind
	pk   any
	key  string // keyText(pk)
	id   string
	body []byte // create, replace
	mut  int    // the mutation it belongs to
}

// group is the writes of one logical partition, committed together.
type group struct {
	pk     any
	key    string
	writes []write
	muts   []int // the mutations whose writes it holds
}

// Apply writes the mutations. It first checks and encodes every mutation
// and finds the edges of dropped vertices (reading), then writes, one
// logical partition at a time, in the order the partitions first appear:
// each partition's writes are one transactional batch of the engine (all
// or nothing), or several when they are more than engine.MaxBatchOps
// operations (each batch atomic, the partition's writes as a whole not).
// The in-edges of a dropped vertex that live in other partitions (with
// their source vertices) are deleted last, each partition's in one batch.
//
// Creates fail with the engine's conflict error when the id is taken in
// the logical partition; updates replace the version this store read (the
// engine's precondition-failed error when another writer changed it
// since); deletes fail with its not-found error when the item is gone.
// When a partition fails after others committed, the error is a
// *graph.PartialWriteError counting the mutations whose partitions
// committed; the engine's error is wrapped in every case (errors.As finds
// *engine.ThrottledError for a 429).
func (s *Store) Apply(ctx context.Context, ms []graph.Mutation) (graph.StoreOp, error) {
	a := newAcct()
	groups, later, err := s.plan(ctx, a, ms)
	if err != nil {
		return a.result(), err
	}
	a.op.Count = 0 // Apply counts the items it writes, not the edges it read
	// A mutation is written once every write it needs has committed.
	pending := make([]int, len(ms))
	for _, g := range append(append([]*group(nil), groups...), later...) {
		for _, w := range g.writes {
			pending[w.mut]++
		}
	}
	written := 0
	for _, n := range pending {
		if n == 0 {
			written++ // a drop of what another mutation drops
		}
	}
	committed := func(ws []write) {
		for _, w := range ws {
			if pending[w.mut]--; pending[w.mut] == 0 {
				written++
			}
		}
	}
	fail := func(err error) (graph.StoreOp, error) {
		if a.wrote == 0 {
			return a.result(), err
		}
		return a.result(), &graph.PartialWriteError{Written: written, Err: err}
	}
	for _, g := range groups {
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		if err := s.commit(a, g, committed); err != nil {
			return fail(err)
		}
	}
	for _, g := range later {
		if err := s.commit(a, g, committed); err != nil {
			return fail(fmt.Errorf("the dropped vertices' edges from other partitions were not all deleted: %w", err))
		}
	}
	return a.result(), nil
}

// plan checks and encodes the mutations and groups their writes by
// logical partition. later holds the deletes of dropped vertices' in-edges
// stored in other partitions, which are applied after every group.
func (s *Store) plan(ctx context.Context, a *acct, ms []graph.Mutation) (groups, later []*group, err error) {
	byKey := map[string]*group{}
	laterByKey := map[string]*group{}
	deleted := map[itemRef]bool{}
	add := func(w write, to map[string]*group, list *[]*group) {
		g := to[w.key]
		if g == nil {
			g = &group{pk: w.pk, key: w.key}
			to[w.key] = g
			*list = append(*list, g)
		}
		g.writes = append(g.writes, w)
		if n := len(g.muts); w.mut >= 0 && (n == 0 || g.muts[n-1] != w.mut) {
			g.muts = append(g.muts, w.mut)
		}
	}
	del := func(pk any, id string, mut int, primary bool) error {
		key, err := keyText(pk)
		if err != nil {
			return err
		}
		ref := itemRef{key, id}
		if deleted[ref] {
			return nil
		}
		deleted[ref] = true
		w := write{kind: engine.OpDelete, pk: pk, key: key, id: id, mut: mut}
		if primary {
			add(w, byKey, &groups)
		} else {
			add(w, laterByKey, &later)
		}
		return nil
	}
	edgeDeletes := 0
	// The edges this Apply creates, which a later drop of one of their
	// vertices must delete although no read finds them yet.
	var added []*graph.Edge
	for i, m := range ms {
		var w write
		w.mut = i
		switch m.Kind {
		case graph.AddVertex, graph.UpdateVertex, graph.DropVertexProperty:
			if m.Vertex == nil {
				return nil, nil, fmt.Errorf("%w: mutation %d has no vertex", ErrInvalid, i)
			}
			if w.body, w.pk, err = s.encodeVertex(m.Vertex); err != nil {
				return nil, nil, err
			}
			w.id = m.Vertex.ID
			w.kind = engine.OpReplace
			if m.Kind == graph.AddVertex {
				w.kind = engine.OpCreate
			}
		case graph.AddEdge, graph.UpdateEdge, graph.DropEdgeProperty:
			if m.Edge == nil {
				return nil, nil, fmt.Errorf("%w: mutation %d has no edge", ErrInvalid, i)
			}
			if w.body, w.pk, err = s.encodeEdge(m.Edge); err != nil {
				return nil, nil, err
			}
			w.id = m.Edge.ID
			w.kind = engine.OpReplace
			if m.Kind == graph.AddEdge {
				w.kind = engine.OpCreate
				added = append(added, m.Edge)
			}
		case graph.DropEdge:
			if m.Edge == nil || m.Edge.ID == "" {
				return nil, nil, fmt.Errorf("%w: mutation %d has no edge id", ErrInvalid, i)
			}
			if m.Edge.Out.PartitionKey == nil {
				return nil, nil, fmt.Errorf("%w: the edge %q to drop has no source partition key", ErrInvalid, m.Edge.ID)
			}
			if err := del(m.Edge.Out.PartitionKey, m.Edge.ID, i, true); err != nil {
				return nil, nil, err
			}
			continue
		case graph.DropVertex:
			if m.Vertex == nil || m.Vertex.ID == "" {
				return nil, nil, fmt.Errorf("%w: mutation %d has no vertex id", ErrInvalid, i)
			}
			pk, err := s.vertexPK(m.Vertex)
			if err != nil {
				return nil, nil, err
			}
			if err := del(pk, m.Vertex.ID, i, true); err != nil {
				return nil, nil, err
			}
			ref := graph.Ref{ID: m.Vertex.ID, Label: m.Vertex.Label, PartitionKey: pk}
			es, err := s.edges(ctx, a, graph.EdgeQuery{Vertices: []graph.Ref{ref}, Dir: graph.Both})
			if err != nil {
				return nil, nil, fmt.Errorf("cannot find the edges of the vertex %q to drop: %w", m.Vertex.ID, err)
			}
			vkey, _ := keyText(pk)
			for _, e := range added {
				if end(e.Out, m.Vertex.ID, vkey) || end(e.In, m.Vertex.ID, vkey) {
					es = append(es, e)
				}
			}
			for _, e := range es {
				if edgeDeletes++; edgeDeletes > s.opts.MaxElements {
					return nil, nil, fmt.Errorf("%w: dropping the vertices deletes more than %d edges; drop fewer at once", ErrTooManyElements, s.opts.MaxElements)
				}
				ekey, err := keyText(e.Out.PartitionKey)
				if err != nil {
					continue
				}
				// Edges stored with the vertex are deleted in its batch;
				// in-edges from other partitions after.
				if err := del(e.Out.PartitionKey, e.ID, i, ekey == vkey); err != nil {
					return nil, nil, err
				}
			}
			continue
		default:
			return nil, nil, fmt.Errorf("%w: mutation %d has an unknown kind %d", ErrInvalid, i, m.Kind)
		}
		if w.key, err = keyText(w.pk); err != nil {
			return nil, nil, err
		}
		add(w, byKey, &groups)
	}
	return groups, later, nil
}

// end reports whether r is the vertex of id and partition key text key.
func end(r graph.Ref, id, key string) bool {
	if r.ID != id {
		return false
	}
	k, err := keyText(r.PartitionKey)
	return err == nil && k == key
}

// commit writes a group: one atomic engine batch per MaxBatchOps writes.
func (s *Store) commit(a *acct, g *group, committed func([]write)) error {
	k, err := keyOf(g.pk)
	if err != nil {
		return err
	}
	for start := 0; start < len(g.writes); start += engine.MaxBatchOps {
		end := min(start+engine.MaxBatchOps, len(g.writes))
		ws := g.writes[start:end]
		ops := make([]engine.Op, 0, len(ws))
		seen := map[string]bool{}
		for _, w := range ws {
			var op engine.Op
			var err error
			if w.kind == engine.OpDelete {
				op, err = s.c.PrepareKeyed(engine.OpDelete, w.id, k, true)
			} else {
				op, err = s.c.PrepareWrite(w.kind, w.body, k, true)
			}
			if err != nil {
				return fmt.Errorf("cannot write %q: %w", w.id, err)
			}
			if w.kind == engine.OpReplace && !seen[w.id] {
				op.IfMatch = s.etagOf(w.key, w.id)
			}
			seen[w.id] = true
			ops = append(ops, op)
		}
		res, se, err := s.c.Execute(&engine.Command{Ops: ops, Atomic: true}, "")
		a.touch(se.RangeID)
		if err != nil {
			return fmt.Errorf("cannot write to partition %s: %w", g.key, err)
		}
		var failed error
		for i, r := range res {
			a.op.Charge += r.Charge
			if r.Err != nil {
				if failed == nil || errors.Is(failed, engine.ErrFailedDependency) {
					failed = fmt.Errorf("cannot %s %q in partition %s: %w", opVerb(ws[i].kind), ws[i].id, g.key, r.Err)
				}
			}
		}
		if failed != nil {
			return failed
		}
		for i, r := range res {
			w := ws[i]
			a.op.Count++
			a.wrote++
			a.op.Size += len(w.body)
			if w.kind == engine.OpDelete {
				s.forget(w.key, w.id)
			} else {
				s.remember(w.key, w.id, r.Etag)
			}
		}
		committed(ws)
	}
	return nil
}

func opVerb(k engine.OpKind) string {
	switch k {
	case engine.OpCreate:
		return "create"
	case engine.OpReplace:
		return "replace"
	case engine.OpDelete:
		return "delete"
	}
	return k.String()
}
