package traversal

import (
	"errors"

	"github.com/parsecdb/parsec/internal/api/gremlin/graph"
	"github.com/parsecdb/parsec/internal/api/gremlin/lang"
)

// filterOp makes an operator that keeps the traversers keep accepts.
func filterOp(keep func(r *run, t *traverser) (bool, error)) func(r *run, f *frame, in []*traverser) ([]*traverser, error) {
	return func(r *run, f *frame, in []*traverser) ([]*traverser, error) {
		out := in[:0:0]
		for _, t := range in {
			ok, err := keep(r, t)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, t)
			}
		}
		return out, nil
	}
}

// predicateArg turns a has()/is() value argument into a predicate: a P
// as is, any other value as eq(value).
func predicateArg(step string, v lang.Value) (lang.P, error) {
	switch x := v.(type) {
	case lang.P:
		return x, nil
	case *lang.Traversal:
		return lang.P{}, unsupported(step, "a traversal argument is not supported here")
	}
	return lang.P{Op: "eq", Args: []lang.Value{importValue(v)}}, nil
}

// checkP validates a predicate's operator once, at compile time.
func checkP(step string, p lang.P) error {
	if pHasTraversal(p, 0) {
		return unsupported(step, "a predicate with a traversal argument is not supported")
	}
	if _, err := graph.Test(p, nil); err != nil {
		if errors.Is(err, graph.ErrUnsupportedPredicate) {
			return unsupported(step, "%v", err)
		}
		return invalid(step, "%v", err)
	}
	return nil
}

func pHasTraversal(p lang.P, depth int) bool {
	if depth > 64 {
		return false
	}
	for _, a := range p.Args {
		switch x := a.(type) {
		case *lang.Traversal:
			return true
		case lang.P:
			if pHasTraversal(x, depth+1) {
				return true
			}
		}
	}
	return false
}

// tokenKey maps a has() key argument: T.id and T.label become T
// conditions, a string a property.
func tokenKey(step string, v lang.Value) (key string, isT bool, err error) {
	switch x := v.(type) {
	case string:
		return x, false, nil
	case lang.Token:
		if x.Type == "T" && (x.Name == "id" || x.Name == "label") {
			return x.Name, true, nil
		}
		if x.Type == "T" && (x.Name == "key" || x.Name == "value") {
			return "", false, unsupported(step, "T.%s is not supported here", x.Name)
		}
	}
	return "", false, invalid(step, "expects a property key, got %s", describe(v))
}

// hasFilter compiles has, hasLabel, hasId, hasNot into a filter and the
// conditions a store may push down.
func (c *compiler) hasFilter(st lang.Step) (*op, []graph.Has, error) {
	var conds []graph.Has
	var exists, absent string
	switch st.Name {
	case "has":
		switch len(st.Args) {
		case 1:
			k, isT, err := tokenKey(st.Name, st.Args[0])
			if err != nil {
				return nil, nil, err
			}
			if isT {
				return &op{name: st.Name, fn: filterOp(func(*run, *traverser) (bool, error) { return true, nil })}, nil, nil
			}
			exists = k
		case 2, 3:
			args := st.Args
			if len(args) == 3 {
				l, ok := args[0].(string)
				if !ok {
					return nil, nil, invalid(st.Name, "has(label, key, value) needs a string label")
				}
				conds = append(conds, graph.Has{Key: "label", T: true, P: lang.P{Op: "within", Args: []lang.Value{l}}})
				args = args[1:]
			}
			k, isT, err := tokenKey(st.Name, args[0])
			if err != nil {
				return nil, nil, err
			}
			p, err := predicateArg(st.Name, args[1])
			if err != nil {
				return nil, nil, err
			}
			if isT && p.Op == "eq" && len(p.Args) == 1 {
				if k == "id" {
					s, _ := idString(p.Args[0])
					p = lang.P{Op: "within", Args: []lang.Value{s}}
				} else {
					p = lang.P{Op: "within", Args: p.Args}
				}
			}
			conds = append(conds, graph.Has{Key: k, T: isT, P: p})
		default:
			return nil, nil, invalid(st.Name, "takes 1 to 3 arguments")
		}
	case "hasLabel", "hasId":
		key := "label"
		if st.Name == "hasId" {
			key = "id"
		}
		if len(st.Args) == 1 {
			if p, ok := st.Args[0].(lang.P); ok {
				conds = append(conds, graph.Has{Key: key, T: true, P: p})
				break
			}
		}
		var vals []lang.Value
		for _, a := range st.Args {
			items := []lang.Value{a}
			if l, ok := a.([]lang.Value); ok {
				items = l
			}
			for _, x := range items {
				s, ok := idString(x)
				if !ok || (key == "label" && !isString(x)) {
					return nil, nil, invalid(st.Name, "expects strings, got %s", describe(x))
				}
				vals = append(vals, s)
			}
		}
		if len(vals) == 0 {
			return nil, nil, invalid(st.Name, "needs at least one value")
		}
		conds = append(conds, graph.Has{Key: key, T: true, P: lang.P{Op: "within", Args: vals}})
	case "hasNot":
		if len(st.Args) != 1 {
			return nil, nil, invalid(st.Name, "takes one key")
		}
		k, isT, err := tokenKey(st.Name, st.Args[0])
		if err != nil {
			return nil, nil, err
		}
		if isT {
			return &op{name: st.Name, fn: filterOp(func(*run, *traverser) (bool, error) { return false, nil })}, nil, nil
		}
		absent = k
	}
	for _, h := range conds {
		if err := checkP(st.Name, h.P); err != nil {
			return nil, nil, err
		}
	}
	o := &op{name: st.Name}
	o.fn = filterOp(func(r *run, t *traverser) (bool, error) {
		switch t.obj.(type) {
		case *graph.Vertex, *graph.Edge, *graph.VertexProperty:
		default:
			return false, nil
		}
		if exists != "" {
			return len(propertyValues(t.obj, exists)) > 0, nil
		}
		if absent != "" {
			return len(propertyValues(t.obj, absent)) == 0, nil
		}
		for _, h := range conds {
			if !hasTest(h, t.obj) {
				return false, nil
			}
		}
		return true, nil
	})
	if exists != "" || absent != "" {
		return o, nil, nil
	}
	return o, conds, nil
}

func isString(v any) bool {
	_, ok := v.(string)
	return ok
}

func buildHas(c *compiler, st lang.Step, mods []lang.Step) (*op, error) {
	if err := noMods(st, mods); err != nil {
		return nil, err
	}
	o, _, err := c.hasFilter(st)
	return o, err
}

// hasKey / hasValue filter vertex properties and properties.
func buildHasKeyValue(c *compiler, st lang.Step, mods []lang.Step) (*op, error) {
	if err := noMods(st, mods); err != nil {
		return nil, err
	}
	if len(st.Args) == 0 {
		return nil, invalid(st.Name, "needs at least one argument")
	}
	var p lang.P
	if x, ok := st.Args[0].(lang.P); ok && len(st.Args) == 1 {
		p = x
	} else {
		p = lang.P{Op: "within", Args: importList(st.Args)}
	}
	if err := checkP(st.Name, p); err != nil {
		return nil, err
	}
	isKey := st.Name == "hasKey"
	return &op{fn: filterOp(func(r *run, t *traverser) (bool, error) {
		var k string
		var v any
		switch x := t.obj.(type) {
		case *graph.VertexProperty:
			k, v = x.Key, x.Value
		case *graph.Property:
			k, v = x.Key, x.Value
		default:
			return false, invalid(st.Name, "applies to properties, not %s", describe(t.obj))
		}
		var subject any = v
		if isKey {
			subject = k
		}
		return graph.Test(p, subject)
	})}, nil
}

func importList(xs []lang.Value) []lang.Value {
	out := make([]lang.Value, len(xs))
	for i, x := range xs {
		out[i] = importValue(x)
	}
	return out
}

func buildIs(c *compiler, st lang.Step, mods []lang.Step) (*op, error) {
	if err := noMods(st, mods); err != nil {
		return nil, err
	}
	if len(st.Args) != 1 {
		return nil, invalid(st.Name, "takes one value or predicate")
	}
	p, err := predicateArg(st.Name, st.Args[0])
	if err != nil {
		return nil, err
	}
	if err := checkP(st.Name, p); err != nil {
		return nil, err
	}
	return &op{fn: filterOp(func(r *run, t *traverser) (bool, error) { return graph.Test(p, t.obj) })}, nil
}

// buildNot, and, or, filter: children run locally; a traverser passes when
// the child yields something (not: when it yields nothing).
func buildTraversalFilter(c *compiler, st lang.Step, mods []lang.Step) (*op, error) {
	if err := noMods(st, mods); err != nil {
		return nil, err
	}
	if st.Name == "not" || st.Name == "filter" {
		if len(st.Args) != 1 {
			return nil, invalid(st.Name, "takes one traversal")
		}
	} else if len(st.Args) == 0 {
		return nil, invalid(st.Name, "needs at least one traversal")
	}
	var progs []*program
	for _, a := range st.Args {
		p, err := c.child(st.Name, a)
		if err != nil {
			return nil, err
		}
		progs = append(progs, p)
	}
	name := st.Name
	return &op{fn: func(r *run, f *frame, in []*traverser) ([]*traverser, error) {
		pass := make([]bool, len(in))
		for i := range pass {
			pass[i] = name == "and"
		}
		for _, p := range progs {
			groups, err := r.runLocal(p, in)
			if err != nil {
				return nil, err
			}
			for i, g := range groups {
				has := len(g) > 0
				switch name {
				case "and":
					pass[i] = pass[i] && has
				case "or", "filter":
					pass[i] = pass[i] || has
				case "not":
					pass[i] = !has
				}
			}
		}
		var out []*traverser
		for i, t := range in {
			if pass[i] {
				out = append(out, t)
			}
		}
		return out, nil
	}}, nil
}

// buildRange covers limit, range, skip, tail: per tag (so that a local
// child limits each input separately), with an optional Scope.local
// applying to the list or map in hand.
func buildRange(c *compiler, st lang.Step, mods []lang.Step) (*op, error) {
	if err := noMods(st, mods); err != nil {
		return nil, err
	}
	args := st.Args
	local := false
	if len(args) > 0 {
		if tok, ok := args[0].(lang.Token); ok && tok.Type == "Scope" {
			local = tok.Name == "local"
			args = args[1:]
		}
	}
	var nums []int64
	for _, a := range args {
		n, ok := toInt64(a)
		if !ok {
			return nil, invalid(st.Name, "expects integers, got %s", describe(a))
		}
		nums = append(nums, n)
	}
	var lo, hi int64 // hi < 0: no upper bound
	tail := false
	switch st.Name {
	case "limit":
		if len(nums) != 1 {
			return nil, invalid(st.Name, "takes one count")
		}
		lo, hi = 0, nums[0]
	case "skip":
		if len(nums) != 1 {
			return nil, invalid(st.Name, "takes one count")
		}
		lo, hi = nums[0], -1
	case "range":
		if len(nums) != 2 {
			return nil, invalid(st.Name, "takes a low and a high bound")
		}
		lo, hi = nums[0], nums[1]
	case "tail":
		if len(nums) > 1 {
			return nil, invalid(st.Name, "takes at most one count")
		}
		hi = 1
		if len(nums) == 1 {
			hi = nums[0]
		}
		tail = true
	}
	if lo < 0 || (hi >= 0 && hi < lo && !tail) {
		return nil, invalid(st.Name, "bounds out of range")
	}
	cut := func(n int) (int, int) {
		if tail {
			s := n - int(hi)
			if s < 0 {
				s = 0
			}
			return s, n
		}
		s, e := int(lo), n
		if hi >= 0 && int(hi) < e {
			e = int(hi)
		}
		if s > e {
			s = e
		}
		return s, e
	}
	if local {
		return &op{fn: func(r *run, f *frame, in []*traverser) ([]*traverser, error) {
			out := make([]*traverser, 0, len(in))
			for _, t := range in {
				switch x := t.obj.(type) {
				case []any:
					s, e := cut(len(x))
					part := append([]any(nil), x[s:e]...)
					// A one-element range gives the element itself, an
					// empty one an empty list (Range.feature:
					// limit(Scope.local, 1), range(Scope.local, 6, 7)).
					if ((tail && hi == 1) || (!tail && hi-lo == 1)) && len(part) == 1 {
						out = append(out, t.to(part[0]))
						continue
					}
					out = append(out, t.to(part))
				case *graph.Map:
					s, e := cut(len(x.Entries))
					out = append(out, t.to(&graph.Map{Entries: append([]graph.Entry(nil), x.Entries[s:e]...)}))
				default:
					out = append(out, t)
				}
			}
			return out, nil
		}}, nil
	}
	if tail {
		return &op{fn: func(r *run, f *frame, in []*traverser) ([]*traverser, error) {
			tags, groups := byTag(f, in)
			var out []*traverser
			for _, tag := range tags {
				g := groups[tag]
				s, e := cut(len(g))
				out = append(out, g[s:e]...)
			}
			return out, nil
		}}, nil
	}
	// limit, range, skip count the traversers they have passed per frame,
	// tag and repeat() iteration: inside repeat() they count afresh each
	// iteration (Range.feature g_VX5X_repeatXlimitX1X_inX_timesX2X).
	self := new(int)
	return &op{fn: func(r *run, f *frame, in []*traverser) ([]*traverser, error) {
		var out []*traverser
		for _, t := range in {
			k := stateKey{step: self, frame: f.id, tag: t.tag, iter: iteration(t)}
			n, _ := r.state[k].(int64)
			r.state[k] = n + 1
			if n >= lo && (hi < 0 || n < hi) {
				out = append(out, t)
			}
		}
		return out, nil
	}}, nil
}

// buildPathFilter: simplePath keeps traversers whose path repeats no
// object; cyclicPath those whose path does.
func buildPathFilter(c *compiler, st lang.Step, mods []lang.Step) (*op, error) {
	if err := noMods(st, mods); err != nil {
		return nil, err
	}
	if err := mustNoArgs(st); err != nil {
		return nil, err
	}
	simple := st.Name == "simplePath"
	return &op{fn: filterOp(func(r *run, t *traverser) (bool, error) {
		objs := pathObjects(t.path)
		for i := range objs {
			for j := i + 1; j < len(objs); j++ {
				if graph.Equal(objs[i], objs[j]) {
					return !simple, nil
				}
			}
		}
		return simple, nil
	})}, nil
}

func pathObjects(p *pathNode) []any {
	var out []any
	for n := p; n != nil; n = n.prev {
		out = append(out, n.obj)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}
