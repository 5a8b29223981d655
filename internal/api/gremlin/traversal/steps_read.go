package traversal

import (
	"sort"

	"github.com/parsecdb/parsec/internal/api/gremlin/graph"
	"github.com/parsecdb/parsec/internal/api/gremlin/lang"
)

func sortStrings(xs []string) { sort.Strings(xs) }

// startQuery compiles V(...) or E(...) with the has steps that follow it
// into one store query (the push-down), keeping the has steps as filters
// as well so that the result is right whatever the store narrowed.
func (c *compiler) startQuery(st lang.Step, hasSteps []lang.Step, limit int) (*op, error) {
	var ids []string
	var pairs [][2]any // g.V(['pk','id'])
	for _, a := range st.Args {
		switch x := a.(type) {
		case []lang.Value:
			if st.Name == "V" && len(x) == 2 {
				id, ok := idString(x[1])
				if !ok {
					return nil, invalid(st.Name, "a [partitionKey, id] pair needs a string id")
				}
				pairs = append(pairs, [2]any{importValue(x[0]), id})
				continue
			}
			for _, e := range x {
				id, ok := idString(e)
				if !ok {
					return nil, invalid(st.Name, "ids must be strings, got %s", describe(e))
				}
				ids = append(ids, id)
			}
		default:
			id, ok := idString(a)
			if !ok {
				return nil, invalid(st.Name, "ids must be strings, got %s", describe(a))
			}
			ids = append(ids, id)
		}
	}
	var filters []*op
	var has []graph.Has
	var labels []string
	var pairPKs []any
	for _, hs := range hasSteps {
		f, h, err := c.hasFilter(hs)
		if err != nil {
			return nil, err
		}
		filters = append(filters, f)
		for _, x := range h {
			switch {
			case x.T && x.Key == "label" && x.P.Op == "within" && labels == nil:
				labels = stringsOf(x.P.Args)
			case x.T && x.Key == "id" && x.P.Op == "within" && len(ids) == 0 && len(pairs) == 0:
				ids = stringsOf(x.P.Args)
			default:
				has = append(has, x)
			}
		}
	}
	var refs []graph.Ref
	if len(ids) == 0 {
		// Only pairs: each is read in its own logical partition.
		for _, p := range pairs {
			refs = append(refs, graph.Ref{ID: p[1].(string), PartitionKey: p[0]})
		}
	}
	for _, p := range pairs {
		ids = append(ids, p[1].(string))
		pairPKs = append(pairPKs, p[0])
	}
	name := st.Name
	o := &op{name: name, metric: metricName(name)}
	isV := st.Name == "V"
	o.fn = func(r *run, f *frame, in []*traverser) ([]*traverser, error) {
		if len(in) == 0 {
			return nil, nil
		}
		var objs []any
		if isV {
			q := graph.VertexQuery{IDs: ids, Labels: labels, PartitionKeys: pairPKs, Limit: limit}
			if refs != nil {
				q = graph.VertexQuery{Refs: refs, Labels: labels, Limit: limit}
			}
			// has('<pk>', v) and has('<pk>', within(...)) route the query
			// to those logical partitions (the first such condition; any
			// other stays a condition).
			routed := false
			for _, h := range has {
				if !routed && !h.T && h.Key == r.pk && (h.P.Op == "eq" || h.P.Op == "within") {
					routed = true
					if len(pairPKs) == 0 {
						q.PartitionKeys = append([]any(nil), h.P.Args...)
						continue
					}
				}
				q.Has = append(q.Has, h)
			}
			vs, err := r.readVertices(q)
			if err != nil {
				return nil, err
			}
			for _, v := range vs {
				if len(pairs) > 0 && !matchesPair(v, pairs) {
					continue
				}
				objs = append(objs, v)
			}
		} else {
			es, err := r.readEdges(graph.EdgeQuery{IDs: ids, Labels: labels, Has: has, Limit: limit})
			if err != nil {
				return nil, err
			}
			for _, e := range es {
				objs = append(objs, e)
			}
		}
		var out []*traverser
		for _, t := range in {
			for _, obj := range objs {
				out = append(out, t.to(obj))
			}
			if err := r.grow(name, len(out)); err != nil {
				return nil, err
			}
		}
		var err error
		for _, fl := range filters {
			if out, err = fl.fn(r, f, out); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return o, nil
}

func matchesPair(v *graph.Vertex, pairs [][2]any) bool {
	for _, p := range pairs {
		if v.ID == p[1].(string) && graph.Equal(v.PartitionKey, p[0]) {
			return true
		}
	}
	return false
}

func stringsOf(xs []any) []string {
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		if s, ok := idString(x); ok {
			out = append(out, s)
		}
	}
	return out
}
