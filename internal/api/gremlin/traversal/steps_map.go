package traversal

import (
	"github.com/parsecdb/parsec/internal/api/gremlin/graph"
	"github.com/parsecdb/parsec/internal/api/gremlin/lang"
)

// mapOp makes an operator that maps each traverser to zero or more
// objects, extending its path.
func mapOp(f func(r *run, t *traverser) ([]any, error)) func(r *run, fr *frame, in []*traverser) ([]*traverser, error) {
	return func(r *run, fr *frame, in []*traverser) ([]*traverser, error) {
		var out []*traverser
		for _, t := range in {
			objs, err := f(r, t)
			if err != nil {
				return nil, err
			}
			for _, o := range objs {
				out = append(out, t.to(o))
			}
			if err := r.grow("", len(out)); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
}

func buildValues(c *compiler, st lang.Step, mods []lang.Step) (*op, error) {
	if err := noMods(st, mods); err != nil {
		return nil, err
	}
	keys, err := stringArgs(st)
	if err != nil {
		return nil, err
	}
	name := st.Name
	return &op{fn: mapOp(func(r *run, t *traverser) ([]any, error) {
		props, err := properties(name, t.obj, keys)
		if err != nil {
			return nil, err
		}
		if name == "properties" {
			return props, nil
		}
		out := make([]any, len(props))
		for i, p := range props {
			switch x := p.(type) {
			case *graph.VertexProperty:
				out[i] = x.Value
			case *graph.Property:
				out[i] = x.Value
			}
		}
		return out, nil
	})}, nil
}

// properties lists an element's properties with the given keys (all when
// none), in key order.
func properties(step string, el any, keys []string) ([]any, error) {
	var out []any
	switch x := el.(type) {
	case *graph.Vertex:
		ks := keys
		if len(ks) == 0 {
			ks = x.Keys
		}
		for _, k := range ks {
			for _, p := range x.Properties[k] {
				out = append(out, p)
			}
		}
	case *graph.Edge:
		ks := keys
		if len(ks) == 0 {
			ks = x.Keys
		}
		for _, k := range ks {
			if v, ok := x.Properties[k]; ok {
				out = append(out, &graph.Property{Key: k, Value: v, Element: x})
			}
		}
	case *graph.VertexProperty:
		ks := keys
		if len(ks) == 0 {
			ks = sortedMetaKeys(x.Meta)
		}
		for _, k := range ks {
			if v, ok := x.Meta[k]; ok {
				out = append(out, &graph.Property{Key: k, Value: v, Element: x})
			}
		}
	case *graph.Map:
		// values('k') on a map reads the key (TinkerPop 3.7 allows it).
		for _, k := range keys {
			if v, ok := x.Get(k); ok {
				out = append(out, &graph.Property{Key: k, Value: v})
			}
		}
	default:
		return nil, invalid(step, "applies to elements, not %s", describe(el))
	}
	return out, nil
}

func sortedMetaKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sortStrings(out)
	return out
}

func buildIDLabel(c *compiler, st lang.Step, mods []lang.Step) (*op, error) {
	if err := noMods(st, mods); err != nil {
		return nil, err
	}
	if err := mustNoArgs(st); err != nil {
		return nil, err
	}
	name := st.Name
	return &op{fn: mapOp(func(r *run, t *traverser) ([]any, error) {
		v, err := idOrLabel(name, t.obj)
		if err != nil {
			return nil, err
		}
		return []any{v}, nil
	})}, nil
}

func idOrLabel(name string, obj any) (any, error) {
	switch x := obj.(type) {
	case *graph.Vertex:
		if name == "id" {
			return x.ID, nil
		}
		return x.Label, nil
	case *graph.Edge:
		if name == "id" {
			return x.ID, nil
		}
		return x.Label, nil
	case *graph.VertexProperty:
		if name == "id" {
			return x.ID, nil
		}
		return x.Key, nil
	}
	return nil, invalid(name, "applies to elements, not %s", describe(obj))
}

func buildKeyValue(c *compiler, st lang.Step, mods []lang.Step) (*op, error) {
	if err := noMods(st, mods); err != nil {
		return nil, err
	}
	if err := mustNoArgs(st); err != nil {
		return nil, err
	}
	isKey := st.Name == "key"
	return &op{fn: mapOp(func(r *run, t *traverser) ([]any, error) {
		switch x := t.obj.(type) {
		case *graph.VertexProperty:
			if isKey {
				return []any{x.Key}, nil
			}
			return []any{x.Value}, nil
		case *graph.Property:
			if isKey {
				return []any{x.Key}, nil
			}
			return []any{x.Value}, nil
		}
		return nil, invalid(st.Name, "applies to properties, not %s", describe(t.obj))
	})}, nil
}

// buildValueMap compiles valueMap([true|with tokens], keys...) and
// elementMap(keys...). On Cosmos every vertex property is a list, so
// valueMap gives lists for vertices; edges give single values.
func buildValueMap(c *compiler, st lang.Step, mods []lang.Step) (*op, error) {
	args := st.Args
	tokens := st.Name == "elementMap"
	if len(args) > 0 {
		if b, ok := args[0].(bool); ok && st.Name == "valueMap" {
			tokens = b
			args = args[1:]
		}
	}
	keys, err := stringArgs(lang.Step{Name: st.Name, Args: args})
	if err != nil {
		return nil, err
	}
	var by *byMod
	for _, m := range mods {
		switch {
		case m.Name == "with" && st.Name == "valueMap":
			// with(WithOptions.tokens) includes id and label.
			tokens = true
		case m.Name == "by" && st.Name == "valueMap" && by == nil:
			b, err := c.byModulator(m)
			if err != nil {
				return nil, err
			}
			by = b
		default:
			return nil, invalid(m.Name, "cannot modulate %s()", st.Name)
		}
	}
	element := st.Name == "elementMap"
	return &op{fn: func(r *run, f *frame, in []*traverser) ([]*traverser, error) {
		out := make([]*traverser, 0, len(in))
		for _, t := range in {
			m, err := valueMap(st.Name, t.obj, keys, tokens, element)
			if err != nil {
				return nil, err
			}
			if by != nil {
				for i := range m.Entries {
					v, ok, err := r.byValue(by, t.to(m.Entries[i].Value))
					if err != nil {
						return nil, err
					}
					if ok {
						m.Entries[i].Value = v
					}
				}
			}
			out = append(out, t.to(m))
		}
		return out, nil
	}}, nil
}

func valueMap(step string, el any, keys []string, tokens, element bool) (*graph.Map, error) {
	m := &graph.Map{}
	tok := func(name string) lang.Token { return lang.Token{Type: "T", Name: name} }
	switch x := el.(type) {
	case *graph.Vertex:
		if tokens {
			m.Put(tok("id"), x.ID)
			m.Put(tok("label"), x.Label)
		}
		ks := keys
		if len(ks) == 0 {
			ks = x.Keys
		}
		for _, k := range ks {
			ps := x.Properties[k]
			if len(ps) == 0 {
				continue
			}
			if element {
				m.Put(k, ps[0].Value)
				continue
			}
			vals := make([]any, len(ps))
			for i, p := range ps {
				vals[i] = p.Value
			}
			m.Put(k, vals)
		}
	case *graph.Edge:
		if tokens {
			m.Put(tok("id"), x.ID)
			m.Put(tok("label"), x.Label)
		}
		if element {
			dir := func(name string, ref graph.Ref) {
				e := &graph.Map{}
				e.Put(tok("id"), ref.ID)
				e.Put(tok("label"), ref.Label)
				m.Put(lang.Token{Type: "Direction", Name: name}, e)
			}
			dir("IN", x.In)
			dir("OUT", x.Out)
		}
		ks := keys
		if len(ks) == 0 {
			ks = x.Keys
		}
		for _, k := range ks {
			if v, ok := x.Properties[k]; ok {
				m.Put(k, v)
			}
		}
	case *graph.VertexProperty:
		if tokens {
			m.Put(tok("id"), x.ID)
			m.Put(tok("key"), x.Key)
			m.Put(tok("value"), x.Value)
		}
		ks := keys
		if len(ks) == 0 {
			ks = sortedMetaKeys(x.Meta)
		}
		for _, k := range ks {
			if v, ok := x.Meta[k]; ok {
				m.Put(k, v)
			}
		}
	default:
		return nil, invalid(step, "applies to elements, not %s", describe(el))
	}
	return m, nil
}

func buildConstant(c *compiler, st lang.Step, mods []lang.Step) (*op, error) {
	if err := noMods(st, mods); err != nil {
		return nil, err
	}
	if len(st.Args) != 1 {
		return nil, invalid(st.Name, "takes one value")
	}
	v := importValue(st.Args[0])
	return &op{fn: mapOp(func(r *run, t *traverser) ([]any, error) { return []any{v}, nil })}, nil
}

// buildInject: at the start, the values; later, the values are added to
// the stream ahead of the traversers already in it.
func buildInject(c *compiler, st lang.Step, mods []lang.Step) (*op, error) {
	if err := noMods(st, mods); err != nil {
		return nil, err
	}
	vals := make([]any, len(st.Args))
	for i, a := range st.Args {
		vals[i] = importValue(a)
	}
	return &op{fn: func(r *run, f *frame, in []*traverser) ([]*traverser, error) {
		var out []*traverser
		var rest []*traverser
		for _, t := range in {
			if _, ok := t.obj.(startMarker); ok {
				for _, v := range vals {
					out = append(out, t.to(v))
				}
				continue
			}
			rest = append(rest, t)
		}
		if len(out) == 0 {
			// Mid-traversal, the values join the stream once per tag,
			// even when nothing else flows (Min.feature
			// g_V_foo_injectX9999999999X_min).
			tags, _ := byTag(f, rest)
			for _, tag := range tags {
				for _, v := range vals {
					out = append(out, &traverser{obj: v, path: &pathNode{obj: v}, tag: tag})
				}
			}
		}
		return append(out, rest...), nil
	}}, nil
}

func buildIdentity(c *compiler, st lang.Step, mods []lang.Step) (*op, error) {
	if err := noMods(st, mods); err != nil {
		return nil, err
	}
	if st.Name == "barrier" && len(st.Args) <= 1 {
		// Breadth-first evaluation is a barrier at every step already.
		return &op{fn: func(r *run, f *frame, in []*traverser) ([]*traverser, error) { return in, nil }}, nil
	}
	if err := mustNoArgs(st); err != nil {
		return nil, err
	}
	return &op{fn: func(r *run, f *frame, in []*traverser) ([]*traverser, error) { return in, nil }}, nil
}

// buildAs labels the current object of each traverser's path.
func buildAs(c *compiler, st lang.Step, mods []lang.Step) (*op, error) {
	if err := noMods(st, mods); err != nil {
		return nil, err
	}
	labels, err := stringArgs(st)
	if err != nil || len(labels) == 0 {
		return nil, invalid(st.Name, "needs one or more string labels")
	}
	return &op{fn: func(r *run, f *frame, in []*traverser) ([]*traverser, error) {
		out := make([]*traverser, len(in))
		for i, t := range in {
			n := *t
			if t.path == nil {
				n.path = &pathNode{obj: t.obj, labels: labels}
			} else {
				p := *t.path
				p.labels = append(append([]string(nil), p.labels...), labels...)
				n.path = &p
			}
			out[i] = &n
		}
		return out, nil
	}}, nil
}

// buildUnfold unrolls lists and maps (a map into its entries, as
// single-entry maps).
func buildUnfold(c *compiler, st lang.Step, mods []lang.Step) (*op, error) {
	if err := noMods(st, mods); err != nil {
		return nil, err
	}
	if err := mustNoArgs(st); err != nil {
		return nil, err
	}
	return &op{fn: mapOp(func(r *run, t *traverser) ([]any, error) {
		return unroll(t.obj), nil
	})}, nil
}

func unroll(v any) []any {
	switch x := v.(type) {
	case []any:
		return x
	case *graph.Map:
		// A map unfolds into its entries, as Java's Map.Entry: select(keys)
		// of one is its key (Select.feature
		// g_V_valueMap_unfold_mapXselectXkeysXX); an entry that leaves the
		// traversal is a map of one entry.
		out := make([]any, len(x.Entries))
		for i, e := range x.Entries {
			e := e
			out[i] = &e
		}
		return out
	case *graph.BulkSet:
		var out []any
		for i, it := range x.Items {
			for n := int64(0); n < x.Bulks[i]; n++ {
				out = append(out, it)
			}
		}
		return out
	case *graph.Path:
		return x.Objects
	}
	return []any{v}
}

// buildLoops answers the iteration count of the innermost repeat.
func buildLoops(c *compiler, st lang.Step, mods []lang.Step) (*op, error) {
	if err := noMods(st, mods); err != nil {
		return nil, err
	}
	if len(st.Args) > 0 {
		return nil, unsupported(st.Name, "named loops are not supported")
	}
	return &op{fn: mapOp(func(r *run, t *traverser) ([]any, error) {
		if n := len(t.loops); n > 0 {
			return []any{int32(t.loops[n-1])}, nil
		}
		return []any{int32(0)}, nil
	})}, nil
}

// buildPath returns each traverser's path, with by() modulators applied
// round-robin.
func buildPath(c *compiler, st lang.Step, mods []lang.Step) (*op, error) {
	if err := mustNoArgs(st); err != nil {
		return nil, err
	}
	bys, err := c.byMods(st, mods)
	if err != nil {
		return nil, err
	}
	return &op{fn: func(r *run, f *frame, in []*traverser) ([]*traverser, error) {
		out := make([]*traverser, 0, len(in))
	next:
		for _, t := range in {
			p := &graph.Path{}
			var nodes []*pathNode
			for n := t.path; n != nil; n = n.prev {
				nodes = append(nodes, n)
			}
			for i := len(nodes) - 1; i >= 0; i-- {
				obj := nodes[i].obj
				if len(bys) > 0 {
					v, ok, err := r.byValue(bys[(len(nodes)-1-i)%len(bys)], t.fresh(obj))
					if err != nil {
						return nil, err
					}
					if !ok {
						// An unproductive by() drops the path
						// (Path.feature g_VX1X_out_path_byXageX).
						continue next
					}
					obj = v
				}
				p.Objects = append(p.Objects, obj)
				p.Labels = append(p.Labels, append([]string{}, nodes[i].labels...))
			}
			out = append(out, t.to(p))
		}
		return out, nil
	}}, nil
}

// buildMapLike compiles map, flatMap, local, sideEffect: a local child per
// traverser.
func buildMapLike(c *compiler, st lang.Step, mods []lang.Step) (*op, error) {
	if err := noMods(st, mods); err != nil {
		return nil, err
	}
	if len(st.Args) != 1 {
		return nil, invalid(st.Name, "takes one traversal")
	}
	p, err := c.child(st.Name, st.Args[0])
	if err != nil {
		return nil, err
	}
	name := st.Name
	return &op{fn: func(r *run, f *frame, in []*traverser) ([]*traverser, error) {
		groups, err := r.runLocal(p, in)
		if err != nil {
			return nil, err
		}
		var out []*traverser
		for i, g := range groups {
			switch name {
			case "sideEffect":
				out = append(out, in[i])
			case "map":
				if len(g) > 0 {
					out = append(out, in[i].to(g[0].obj))
				}
			case "flatMap":
				for _, o := range g {
					out = append(out, in[i].to(o.obj))
				}
			default: // local keeps the child's paths
				out = append(out, g...)
			}
		}
		return out, nil
	}}, nil
}
