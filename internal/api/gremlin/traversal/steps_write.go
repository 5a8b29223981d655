package traversal

import (
	"github.com/parsecdb/parsec/internal/api/gremlin/graph"
	"github.com/parsecdb/parsec/internal/api/gremlin/lang"
)

// buildAddV adds a vertex per traverser. Its partition key property is
// set by a property() step that follows; a vertex still without one when
// the traversal ends is an error, as on Cosmos.
func buildAddV(c *compiler, st lang.Step, mods []lang.Step) (*op, error) {
	if err := noMods(st, mods); err != nil {
		return nil, err
	}
	label := "vertex"
	switch len(st.Args) {
	case 0:
	case 1:
		s, ok := st.Args[0].(string)
		if !ok {
			return nil, unsupported(st.Name, "addV takes a string label")
		}
		label = s
	default:
		return nil, invalid(st.Name, "takes at most a label")
	}
	return &op{fn: mapOp(func(r *run, t *traverser) ([]any, error) {
		v := &graph.Vertex{ID: r.o.NewID(), Label: label, Properties: map[string][]*graph.VertexProperty{}}
		r.writes.add(v)
		r.sideMB += 128
		return []any{v}, nil
	})}, nil
}

// buildAddE adds an edge per traverser, from and to the current vertex
// unless from()/to() say otherwise (a label, a traversal, or a vertex).
func buildAddE(c *compiler, st lang.Step, mods []lang.Step) (*op, error) {
	if len(st.Args) != 1 {
		return nil, invalid(st.Name, "takes an edge label")
	}
	label, ok := st.Args[0].(string)
	if !ok {
		return nil, unsupported(st.Name, "addE takes a string label")
	}
	type end struct {
		label string
		prog  *program
		set   bool
	}
	var from, to end
	for _, m := range mods {
		var e *end
		switch m.Name {
		case "from":
			e = &from
		case "to":
			e = &to
		default:
			return nil, invalid(m.Name, "cannot modulate addE()")
		}
		if len(m.Args) != 1 {
			return nil, invalid(m.Name, "takes one label or traversal")
		}
		switch x := m.Args[0].(type) {
		case string:
			e.label = x
		case *lang.Traversal:
			p, err := c.child(m.Name, x)
			if err != nil {
				return nil, err
			}
			e.prog = p
		default:
			return nil, unsupported(m.Name, "takes a step label or a traversal, not %s", describe(m.Args[0]))
		}
		e.set = true
	}
	resolve := func(r *run, e end, in []*traverser) ([]*graph.Vertex, error) {
		out := make([]*graph.Vertex, len(in))
		var groups [][]*traverser
		if e.prog != nil {
			var err error
			if groups, err = r.runLocal(e.prog, in); err != nil {
				return nil, err
			}
		}
		for i, t := range in {
			var obj any = t.obj
			switch {
			case e.label != "":
				v, ok := r.selectLabel(t, e.label, "last")
				if !ok {
					return nil, invalid(st.Name, "no vertex labelled %q", e.label)
				}
				obj = v
			case e.prog != nil:
				if len(groups[i]) == 0 {
					return nil, invalid(st.Name, "the from()/to() traversal yielded no vertex")
				}
				obj = groups[i][0].obj
			}
			v, ok := obj.(*graph.Vertex)
			if !ok {
				return nil, invalid(st.Name, "an edge must join vertices, not %s", describe(obj))
			}
			out[i] = v
		}
		return out, nil
	}
	return &op{fn: func(r *run, f *frame, in []*traverser) ([]*traverser, error) {
		if len(in) == 1 {
			if _, ok := in[0].obj.(startMarker); ok {
				if !from.set || !to.set {
					return nil, invalid(st.Name, "g.addE() needs both from() and to()")
				}
			}
		}
		outs, err := resolve(r, from, in)
		if err != nil {
			return nil, err
		}
		ins, err := resolve(r, to, in)
		if err != nil {
			return nil, err
		}
		out := make([]*traverser, len(in))
		for i, t := range in {
			e := &graph.Edge{ID: r.o.NewID(), Label: label, Out: refOf(outs[i]), In: refOf(ins[i]), Properties: map[string]any{}}
			r.writes.add(e)
			r.writes.ends[e] = [2]*graph.Vertex{outs[i], ins[i]}
			r.edges[edgeKey(e)] = e
			r.sideMB += 128
			out[i] = t.to(e)
		}
		return out, nil
	}}, nil
}

// buildProperty sets a property on the element in hand (vertex, edge, or
// vertex property for a meta-property) and passes it on.
func buildProperty(c *compiler, st lang.Step, mods []lang.Step) (*op, error) {
	if err := noMods(st, mods); err != nil {
		return nil, err
	}
	args := st.Args
	card := ""
	if len(args) > 0 {
		if tok, ok := args[0].(lang.Token); ok && tok.Type == "Cardinality" {
			card = tok.Name
			args = args[1:]
			if card == "set" {
				// Cosmos: "property(set, ...)" is not supported (support.md).
				return nil, unsupported(st.Name, "set cardinality is not supported")
			}
		}
	}
	if len(args) < 2 || len(args)%2 != 0 {
		return nil, invalid(st.Name, "takes a key and a value, then meta-property keys and values")
	}
	var key string
	isID := false
	switch k := args[0].(type) {
	case string:
		key = k
		isID = k == "id"
	case lang.Token:
		if k.Type == "T" && k.Name == "id" {
			key, isID = "id", true
		} else {
			return nil, invalid(st.Name, "cannot set %s.%s", k.Type, k.Name)
		}
	default:
		return nil, invalid(st.Name, "the key must be a string, not %s", describe(args[0]))
	}
	value := importValue(args[1])
	if err := checkPropertyValue(st.Name, value); err != nil {
		return nil, err
	}
	meta := map[string]any{}
	for i := 2; i < len(args); i += 2 {
		mk, ok := args[i].(string)
		if !ok {
			return nil, invalid(st.Name, "meta-property keys must be strings")
		}
		mv := importValue(args[i+1])
		if err := checkPropertyValue(st.Name, mv); err != nil {
			return nil, err
		}
		meta[mk] = mv
	}
	return &op{fn: func(r *run, f *frame, in []*traverser) ([]*traverser, error) {
		for _, t := range in {
			if err := r.setProperty(st.Name, t.obj, key, isID, card, value, meta); err != nil {
				return nil, err
			}
		}
		return in, nil
	}}, nil
}

// checkPropertyValue rejects what Cosmos does not store: null and
// object-valued properties (support.md).
func checkPropertyValue(step string, v any) error {
	switch v.(type) {
	case nil:
		return unsupported(step, "null property values are not supported")
	case []any, *graph.Map, *lang.Traversal, lang.P, lang.Token:
		return unsupported(step, "property values must be strings, numbers or booleans, not %s", describe(v))
	}
	return nil
}

func (r *run) setProperty(step string, el any, key string, isID bool, card string, value any, meta map[string]any) error {
	switch x := el.(type) {
	case *graph.Vertex:
		if isID {
			id, ok := value.(string)
			if !ok {
				return invalid(step, "a vertex id must be a string")
			}
			if id == x.ID {
				return nil
			}
			if !r.writes.isAdded(x) {
				return invalid(step, "cannot change the id of an existing vertex")
			}
			delete(r.vertices, vertexKey(x.PartitionKey, x.ID))
			x.ID = id
			r.vertices[vertexKey(x.PartitionKey, x.ID)] = x
			return nil
		}
		if key == r.pk {
			if card == "list" {
				return newErr(ErrPartitionKey, step, "the partition key property %q takes one value", key)
			}
			card = "single"
			if !r.writes.isAdded(x) {
				if graph.Equal(x.PartitionKey, value) {
					return nil
				}
				return newErr(ErrPartitionKey, step, "cannot change the partition key property %q of an existing vertex", key)
			}
			delete(r.vertices, vertexKey(x.PartitionKey, x.ID))
			x.PartitionKey = value
			r.vertices[vertexKey(x.PartitionKey, x.ID)] = x
		}
		vp := &graph.VertexProperty{ID: r.o.NewID(), Key: key, Value: value, Vertex: x}
		if len(meta) > 0 {
			vp.Meta = meta
		}
		if _, ok := x.Properties[key]; !ok {
			x.Keys = append(x.Keys, key)
		}
		if card != "single" {
			// Without a cardinality Cosmos DB adds a value to the
			// property's list, as list does; single replaces them.
			x.Properties[key] = append(x.Properties[key], vp)
		} else {
			x.Properties[key] = []*graph.VertexProperty{vp}
		}
		r.writes.update(x)
	case *graph.Edge:
		if isID {
			// Cosmos DB takes an edge's id from property('id', ...) on
			// addE, as it does a vertex's on addV.
			id, ok := value.(string)
			if !ok {
				return invalid(step, "an edge id must be a string")
			}
			if id == x.ID {
				return nil
			}
			if !r.writes.isAdded(x) {
				return invalid(step, "cannot change the id of an existing edge")
			}
			if card != "" || len(meta) > 0 {
				return invalid(step, "edge properties take no cardinality or meta-properties")
			}
			delete(r.edges, edgeKey(x))
			x.ID = id
			r.edges[edgeKey(x)] = x
			return nil
		}
		if card != "" || len(meta) > 0 {
			return invalid(step, "edge properties take no cardinality or meta-properties")
		}
		if _, ok := x.Properties[key]; !ok {
			x.Keys = append(x.Keys, key)
		}
		x.Properties[key] = value
		r.writes.update(x)
	case *graph.VertexProperty:
		if card != "" || len(meta) > 0 || isID {
			return invalid(step, "a meta-property takes a key and a value")
		}
		if x.Vertex == nil {
			return invalid(step, "the vertex property has no vertex")
		}
		if x.Meta == nil {
			x.Meta = map[string]any{}
		}
		x.Meta[key] = value
		r.writes.update(x.Vertex)
	default:
		return invalid(step, "applies to elements, not %s", describe(el))
	}
	r.sideMB += 64
	return nil
}

// buildDrop removes the elements or properties in hand; it passes nothing
// on.
func buildDrop(c *compiler, st lang.Step, mods []lang.Step) (*op, error) {
	if err := noMods(st, mods); err != nil {
		return nil, err
	}
	if err := mustNoArgs(st); err != nil {
		return nil, err
	}
	return &op{fn: func(r *run, f *frame, in []*traverser) ([]*traverser, error) {
		for _, t := range in {
			switch x := t.obj.(type) {
			case *graph.Vertex:
				r.writes.drop(x)
			case *graph.Edge:
				r.writes.drop(x)
			case *graph.VertexProperty:
				v := x.Vertex
				if v == nil {
					return nil, invalid(st.Name, "the vertex property has no vertex")
				}
				if x.Key == r.pk {
					return nil, newErr(ErrPartitionKey, st.Name, "cannot drop the partition key property %q", x.Key)
				}
				ps := v.Properties[x.Key]
				var keep []*graph.VertexProperty
				for _, p := range ps {
					if p != x {
						keep = append(keep, p)
					}
				}
				if len(keep) == 0 {
					delete(v.Properties, x.Key)
					var keys []string
					for _, k := range v.Keys {
						if k != x.Key {
							keys = append(keys, k)
						}
					}
					v.Keys = keys
				} else {
					v.Properties[x.Key] = keep
				}
				r.writes.update(v)
			case *graph.Property:
				switch el := x.Element.(type) {
				case *graph.Edge:
					delete(el.Properties, x.Key)
					var keys []string
					for _, k := range el.Keys {
						if k != x.Key {
							keys = append(keys, k)
						}
					}
					el.Keys = keys
					r.writes.update(el)
				case *graph.VertexProperty:
					delete(el.Meta, x.Key)
					if el.Vertex != nil {
						r.writes.update(el.Vertex)
					}
				default:
					return nil, invalid(st.Name, "the property has no element")
				}
			default:
				return nil, invalid(st.Name, "applies to elements and properties, not %s", describe(t.obj))
			}
		}
		return nil, nil
	}}, nil
}

func init() {
	builders = map[string]builder{
		"has": buildHas, "hasLabel": buildHas, "hasId": buildHas, "hasNot": buildHas,
		"hasKey": buildHasKeyValue, "hasValue": buildHasKeyValue,
		"is":  buildIs,
		"not": buildTraversalFilter, "and": buildTraversalFilter, "or": buildTraversalFilter, "filter": buildTraversalFilter,
		"where": buildWhere,
		"limit": buildRange, "range": buildRange, "skip": buildRange, "tail": buildRange,
		"simplePath": buildPathFilter, "cyclicPath": buildPathFilter,
		"dedup": buildDedup, "sample": buildSample,
		"out": buildAdjacent, "in": buildAdjacent, "both": buildAdjacent,
		"outE": buildAdjacent, "inE": buildAdjacent, "bothE": buildAdjacent,
		"outV": buildEdgeVertex, "inV": buildEdgeVertex, "bothV": buildEdgeVertex, "otherV": buildEdgeVertex,
		"values": buildValues, "properties": buildValues,
		"id": buildIDLabel, "label": buildIDLabel,
		"key": buildKeyValue, "value": buildKeyValue,
		"valueMap": buildValueMap, "elementMap": buildValueMap,
		"constant": buildConstant, "inject": buildInject,
		"identity": buildIdentity, "barrier": buildIdentity,
		"as": buildAs, "unfold": buildUnfold, "loops": buildLoops, "path": buildPath,
		"map": buildMapLike, "flatMap": buildMapLike, "local": buildMapLike, "sideEffect": buildMapLike,
		"count": buildReduce, "sum": buildReduce, "min": buildReduce, "max": buildReduce, "mean": buildReduce, "fold": buildReduce,
		"order":  buildOrder,
		"select": buildSelect, "project": buildProject,
		"group": buildGroup, "groupCount": buildGroup,
		"aggregate": buildAggregate, "store": buildAggregate, "cap": buildCap, "tree": buildTree,
		"union": buildUnion, "coalesce": buildCoalesce, "optional": buildCoalesce,
		"choose": buildChoose, "repeat": buildRepeat,
		"addV": buildAddV, "addE": buildAddE, "property": buildProperty, "drop": buildDrop,
		"math": buildMath,
	}
}
