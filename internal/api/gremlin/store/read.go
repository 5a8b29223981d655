package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/parsecdb/parsec/internal/api/gremlin/graph"
	"github.com/parsecdb/parsec/internal/engine"
)

// isVertexSQL selects the vertices of the container: items without
// _isEdge (documents written through another API count as vertices, as
// Cosmos DB's graph reads them).
const isVertexSQL = "(NOT IS_DEFINED(c._isEdge) OR c._isEdge = false)"

// isEdgeSQL selects the edges.
const isEdgeSQL = "c._isEdge = true"

// collector gathers the elements of one read: it tests them, removes
// duplicates, stops at the limit and fails past Options.MaxElements.
type collector struct {
	s     *Store
	a     *acct
	limit int
	seen  map[itemRef]bool
	n     int
}

func (s *Store) newCollector(a *acct, limit int) *collector {
	return &collector{s: s, a: a, limit: limit, seen: map[itemRef]bool{}}
}

// full reports whether the limit is reached.
func (c *collector) full() bool { return c.limit > 0 && c.n >= c.limit }

// take counts one element kept; it fails past the store's bound.
func (c *collector) take(key, id, etag string) (bool, error) {
	ref := itemRef{key, id}
	if c.seen[ref] {
		return false, nil
	}
	if c.n >= c.s.opts.MaxElements {
		return false, fmt.Errorf("%w: the read returns more than %d elements; narrow the traversal or add a limit", ErrTooManyElements, c.s.opts.MaxElements)
	}
	c.seen[ref] = true
	c.n++
	c.a.op.Count++
	c.s.remember(key, id, etag)
	return true, nil
}

// checkHas validates the predicates of a query before it runs, so that an
// invalid one fails even when no element is tested.
func checkHas(has []graph.Has) error {
	for _, h := range has {
		if h.T && h.Key != "id" && h.Key != "label" {
			return fmt.Errorf("%w: T.%s is not a condition the store can test", ErrInvalid, h.Key)
		}
		if err := validateP(h.P, 0); err != nil {
			return err
		}
	}
	return nil
}

// chunks splits ids into lists of at most n (one nil list for none).
func chunks[T any](ids []T, n int) [][]T {
	if len(ids) == 0 {
		return [][]T{nil}
	}
	var out [][]T
	for len(ids) > n {
		out = append(out, ids[:n])
		ids = ids[n:]
	}
	return append(out, ids)
}

// setOf returns the set of ids, or nil for none.
func setOf(ids []string) map[string]bool {
	if len(ids) == 0 {
		return nil
	}
	m := make(map[string]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}

func anys[T any](xs []T) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// Vertices returns the vertices q selects. With ids and partition keys it
// reads each (key, id) pair directly; with partition keys it queries
// those logical partitions; otherwise it queries every partition, the
// conditions on top-level values (id, label, the partition key) served by
// the index and those on properties tested on each vertex read.
func (s *Store) Vertices(ctx context.Context, q graph.VertexQuery) ([]*graph.Vertex, graph.StoreOp, error) {
	a := newAcct()
	if err := checkHas(q.Has); err != nil {
		return nil, a.result(), err
	}
	col := s.newCollector(a, q.Limit)
	idSet := setOf(q.IDs)
	refSet, anyKey, err := refSets(q.Refs)
	if err != nil {
		return nil, a.result(), err
	}
	var out []*graph.Vertex
	keep := func(doc []byte) (bool, error) {
		st, err := s.decode(doc)
		if err != nil {
			return false, err
		}
		v := st.vertex
		if v == nil {
			return true, nil
		}
		if idSet != nil && !idSet[v.ID] {
			return true, nil
		}
		ok, err := vertexMatches(v, q.Labels, q.Has)
		if err != nil || !ok {
			return err == nil, err
		}
		key, err := keyText(v.PartitionKey)
		if err != nil {
			// A document without a usable partition key value is no
			// vertex of the graph.
			return true, nil
		}
		if refSet != nil && !anyKey[v.ID] && !refSet[itemRef{key, v.ID}] {
			return true, nil
		}
		took, err := col.take(key, v.ID, st.etag)
		if err != nil {
			return false, err
		}
		if took {
			out = append(out, v)
		}
		return !col.full(), nil
	}
	if len(q.Refs) > 0 {
		if err := s.vertexRefs(ctx, a, col, q, keep); err != nil {
			return nil, a.result(), err
		}
		return out, a.result(), nil
	}
	keys, err := s.distinctKeys(q.PartitionKeys)
	if err != nil {
		return nil, a.result(), err
	}
	switch {
	case len(q.IDs) > 0 && len(keys) > 0 && len(q.IDs)*len(keys) <= maxPointReads:
		for _, pk := range keys {
			for _, id := range q.IDs {
				if col.full() {
					break
				}
				doc, found, err := s.readItem(a, pk, id)
				if err != nil {
					return nil, a.result(), err
				}
				if !found {
					continue
				}
				if _, err := keep(doc); err != nil {
					return nil, a.result(), err
				}
			}
		}
	case len(keys) > 0:
		for _, pk := range keys {
			k, err := keyOf(pk)
			if err != nil {
				return nil, a.result(), err
			}
			if err := s.queryVertices(ctx, a, col, q, engine.QueryScope{Key: k, HasKey: true}, keep); err != nil {
				return nil, a.result(), err
			}
		}
	default:
		if err := s.queryVertices(ctx, a, col, q, engine.QueryScope{}, keep); err != nil {
			return nil, a.result(), err
		}
	}
	return out, a.result(), nil
}

// refSets returns the (key, id) pairs of refs and the ids of those
// without a partition key (nil, nil for none).
func refSets(refs []graph.Ref) (map[itemRef]bool, map[string]bool, error) {
	if len(refs) == 0 {
		return nil, nil, nil
	}
	keyed, anyKey := map[itemRef]bool{}, map[string]bool{}
	for _, r := range refs {
		if r.PartitionKey == nil {
			anyKey[r.ID] = true
			continue
		}
		t, err := keyText(r.PartitionKey)
		if err != nil {
			return nil, nil, err
		}
		keyed[itemRef{t, r.ID}] = true
	}
	return keyed, anyKey, nil
}

// vertexRefs reads the vertices of q.Refs: a point read of each keyed
// one (up to maxPointReads; past that a query of each logical partition
// for its ids), and one query over every partition for the ids without
// a key.
func (s *Store) vertexRefs(ctx context.Context, a *acct, col *collector, q graph.VertexQuery, keep func([]byte) (bool, error)) error {
	type group struct {
		pk  any
		ids []string
	}
	var groups []*group
	byKey := map[string]*group{}
	seen := map[itemRef]bool{}
	var unkeyed []string
	keyed := 0
	for _, r := range q.Refs {
		if r.PartitionKey == nil {
			unkeyed = append(unkeyed, r.ID)
			continue
		}
		t, err := keyText(r.PartitionKey)
		if err != nil {
			return err
		}
		if seen[itemRef{t, r.ID}] {
			continue
		}
		seen[itemRef{t, r.ID}] = true
		g := byKey[t]
		if g == nil {
			g = &group{pk: r.PartitionKey}
			byKey[t] = g
			groups = append(groups, g)
		}
		g.ids = append(g.ids, r.ID)
		keyed++
	}
	for _, g := range groups {
		if keyed <= maxPointReads {
			for _, id := range g.ids {
				if col.full() {
					return nil
				}
				doc, found, err := s.readItem(a, g.pk, id)
				if err != nil {
					return err
				}
				if !found {
					continue
				}
				if _, err := keep(doc); err != nil {
					return err
				}
			}
			continue
		}
		k, err := keyOf(g.pk)
		if err != nil {
			return err
		}
		sub := q
		sub.IDs = g.ids
		if err := s.queryVertices(ctx, a, col, sub, engine.QueryScope{Key: k, HasKey: true}, keep); err != nil {
			return err
		}
	}
	if len(unkeyed) > 0 {
		sub := q
		sub.IDs = unkeyed
		return s.queryVertices(ctx, a, col, sub, engine.QueryScope{}, keep)
	}
	return nil
}

// distinctKeys checks partition key values and removes repeats.
func (s *Store) distinctKeys(pks []any) ([]any, error) {
	var out []any
	seen := map[string]bool{}
	for _, pk := range pks {
		t, err := keyText(pk)
		if err != nil {
			return nil, err
		}
		if !seen[t] {
			seen[t] = true
			out = append(out, pk)
		}
	}
	return out, nil
}

// queryVertices runs the vertex query of q over scope, in rounds of at
// most InBatch ids.
func (s *Store) queryVertices(ctx context.Context, a *acct, col *collector, q graph.VertexQuery, scope engine.QueryScope, keep func([]byte) (bool, error)) error {
	for _, ids := range chunks(q.IDs, s.opts.InBatch) {
		if col.full() {
			return nil
		}
		sql, params := s.vertexSQL(q, ids)
		if err := s.runQuery(ctx, a, sql, params, scope, col, keep); err != nil {
			return err
		}
	}
	return nil
}

// vertexSQL is the query of the vertices q selects, with ids as its ids
// (a round of q.IDs).
func (s *Store) vertexSQL(q graph.VertexQuery, ids []string) (string, map[string]any) {
	// The ids first, the most selective (see edges).
	b := newSQL()
	var conds []string
	if c, ok := b.in("c.id", anys(ids)); ok {
		conds = append(conds, c)
	}
	if c, ok := b.in("c.label", anys(q.Labels)); ok {
		conds = append(conds, c)
	}
	conds = append(conds, isVertexSQL)
	for _, h := range q.Has {
		if c := s.vertexHas(b, h); c != "" {
			conds = append(conds, c)
		}
	}
	return "SELECT * FROM c WHERE " + strings.Join(conds, " AND "), b.params
}

// Edges returns the edges q selects. Out edges are read in their source
// vertices' logical partitions (where they are stored); in edges are
// found through the index on _sink, across partitions; g.E() queries
// every partition. An edge adjacent to several of the vertices, or both
// in and out of one (Both), is returned once.
func (s *Store) Edges(ctx context.Context, q graph.EdgeQuery) ([]*graph.Edge, graph.StoreOp, error) {
	a := newAcct()
	es, err := s.edges(ctx, a, q)
	return es, a.result(), err
}

// edges is Edges, accounted in a.
func (s *Store) edges(ctx context.Context, a *acct, q graph.EdgeQuery) ([]*graph.Edge, error) {
	if err := checkHas(q.Has); err != nil {
		return nil, err
	}
	if q.Dir != graph.Out && q.Dir != graph.In && q.Dir != graph.Both {
		return nil, fmt.Errorf("%w: unknown edge direction %d", ErrInvalid, q.Dir)
	}
	col := s.newCollector(a, q.Limit)
	idSet := setOf(q.IDs)
	var out []*graph.Edge
	// ends holds the query's vertices: id → partition keys (nil: any).
	var ends map[string][]any
	if q.Vertices != nil {
		ends = map[string][]any{}
		for _, r := range q.Vertices {
			ends[r.ID] = append(ends[r.ID], r.PartitionKey)
		}
	}
	adjacent := func(id string, pk any) bool {
		for _, want := range ends[id] {
			if want == nil {
				return true
			}
			if same, _ := sameKey(want, pk); same {
				return true
			}
		}
		return false
	}
	keep := func(doc []byte) (bool, error) {
		st, err := s.decode(doc)
		if err != nil {
			return false, err
		}
		e := st.edge
		if e == nil {
			return true, nil
		}
		if q.Vertices != nil {
			isOut := q.Dir != graph.In && adjacent(e.Out.ID, e.Out.PartitionKey)
			isIn := q.Dir != graph.Out && adjacent(e.In.ID, e.In.PartitionKey)
			if !isOut && !isIn {
				return true, nil
			}
		}
		if idSet != nil && !idSet[e.ID] {
			return true, nil
		}
		ok, err := edgeMatches(e, q.Labels, q.Has)
		if err != nil || !ok {
			return err == nil, err
		}
		key, err := keyText(e.Out.PartitionKey)
		if err != nil {
			return true, nil
		}
		took, err := col.take(key, e.ID, st.etag)
		if err != nil {
			return false, err
		}
		if took {
			out = append(out, e)
		}
		return !col.full(), nil
	}
	run := func(scope engine.QueryScope, endField string, ends []string) error {
		for _, ids := range chunks(q.IDs, s.opts.InBatch) {
			for _, endIDs := range chunks(ends, s.opts.InBatch) {
				if col.full() {
					return nil
				}
				// The most selective conditions first: the engine tries
				// the index of each equality in the order given (among
				// those of as many values) and stops reading a later one
				// past the entries of the best so far, so that _isEdge
				// (true of every edge) costs little after the ids.
				b := newSQL()
				var conds []string
				if endField != "" {
					c, ok := b.in(endField, anys(endIDs))
					if !ok {
						continue
					}
					conds = append(conds, c)
				}
				if len(ids) > 0 {
					if c, ok := b.in("c.id", anys(ids)); ok {
						conds = append(conds, c)
					}
				}
				conds = append(conds, isEdgeSQL)
				if c, ok := b.in("c.label", anys(q.Labels)); ok {
					conds = append(conds, c)
				}
				for _, h := range q.Has {
					if c := s.edgeHas(b, h); c != "" {
						conds = append(conds, c)
					}
				}
				sql := "SELECT * FROM c WHERE " + strings.Join(conds, " AND ")
				if err := s.runQuery(ctx, a, sql, b.params, scope, col, keep); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if q.Vertices == nil {
		if err := run(engine.QueryScope{}, "", nil); err != nil {
			return nil, err
		}
		return out, nil
	}
	if len(q.Vertices) == 0 {
		return nil, nil
	}
	if q.Dir == graph.Out || q.Dir == graph.Both {
		// By source partition key: one query per logical partition; the
		// sources without a key are looked for everywhere.
		type group struct {
			pk  any
			ids []string
		}
		var groups []*group
		byKey := map[string]*group{}
		var unkeyed []string
		for _, r := range q.Vertices {
			if r.PartitionKey == nil {
				unkeyed = append(unkeyed, r.ID)
				continue
			}
			t, err := keyText(r.PartitionKey)
			if err != nil {
				return nil, err
			}
			g := byKey[t]
			if g == nil {
				g = &group{pk: r.PartitionKey}
				byKey[t] = g
				groups = append(groups, g)
			}
			g.ids = append(g.ids, r.ID)
		}
		for _, g := range groups {
			k, _ := keyOf(g.pk)
			if err := run(engine.QueryScope{Key: k, HasKey: true}, "c._vertexId", g.ids); err != nil {
				return nil, err
			}
		}
		if len(unkeyed) > 0 {
			if err := run(engine.QueryScope{}, "c._vertexId", unkeyed); err != nil {
				return nil, err
			}
		}
	}
	if q.Dir == graph.In || q.Dir == graph.Both {
		ids := make([]string, 0, len(q.Vertices))
		seen := map[string]bool{}
		for _, r := range q.Vertices {
			if !seen[r.ID] {
				seen[r.ID] = true
				ids = append(ids, r.ID)
			}
		}
		if err := run(engine.QueryScope{}, "c._sink", ids); err != nil {
			return nil, err
		}
	}
	return out, nil
}
