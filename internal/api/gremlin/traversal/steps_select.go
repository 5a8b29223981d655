package traversal

import (
	"github.com/parsecdb/parsec/internal/api/gremlin/graph"
	"github.com/parsecdb/parsec/internal/api/gremlin/lang"
)

// sideEffect is a named side effect: an aggregate/store list, a group or
// groupCount map, or a withSideEffect value.
type sideEffect struct {
	kind  int
	list  []any
	m     *graph.Map
	value any
	// a group(key): its members so far, reduced by build when read.
	members []*traverser
	build   func(r *run, ts []*traverser, m *graph.Map) error
}

const (
	sideList = iota
	sideMap
	sideValue
	sideGroup
)

func (r *run) sideValue(s *sideEffect) (any, error) {
	switch s.kind {
	case sideList:
		return append([]any{}, s.list...), nil
	case sideMap:
		return s.m, nil
	case sideGroup:
		m := &graph.Map{}
		if err := s.build(r, s.members, m); err != nil {
			return nil, err
		}
		return m, nil
	}
	return s.value, nil
}

// selectLabel finds a key of the map in hand, then a side effect, then a
// label on the traverser's path (pop: "first", "last", "all", "mixed").
func (r *run) selectLabel(t *traverser, label, pop string) (any, bool) {
	// As TinkerPop's Scoping.getScopeValue: a key of the map in hand, then
	// a side effect, then the path.
	if m, ok := t.obj.(*graph.Map); ok {
		if v, ok := m.Get(label); ok {
			return v, true
		}
	}
	if s, ok := r.side[label]; ok {
		v, err := r.sideValue(s)
		if err != nil {
			// Reported by the step (see run.step): selectLabel's callers
			// have no error path.
			r.deferred = err
			return nil, false
		}
		return v, true
	}
	var found []any
	for n := t.path; n != nil; n = n.prev {
		for _, l := range n.labels {
			if l == label {
				found = append(found, n.obj)
				break
			}
		}
	}
	if len(found) > 0 {
		switch pop {
		case "first":
			return found[len(found)-1], true
		case "all", "mixed":
			// Pop.mixed: one object as itself, several as a list.
			if pop == "mixed" && len(found) == 1 {
				return found[0], true
			}
			out := make([]any, len(found))
			for i := range found {
				out[i] = found[len(found)-1-i]
			}
			return out, true
		}
		return found[0], true
	}
	return nil, false
}

func buildSelect(c *compiler, st lang.Step, mods []lang.Step) (*op, error) {
	args := st.Args
	pop := "last"
	if len(args) > 0 {
		if tok, ok := args[0].(lang.Token); ok {
			switch {
			case tok.Type == "Pop":
				pop = tok.Name
				args = args[1:]
			case tok.Type == "Column" && len(args) == 1:
				if err := noMods(st, mods); err != nil {
					return nil, err
				}
				return &op{fn: mapOp(func(r *run, t *traverser) ([]any, error) {
					v, _, err := tokenValue(tok, t.obj)
					if err != nil {
						return nil, err
					}
					return []any{v}, nil
				})}, nil
			}
		}
	}
	if len(args) == 1 {
		if tr, ok := args[0].(*lang.Traversal); ok {
			p, err := c.child(st.Name, tr)
			if err != nil {
				return nil, err
			}
			return &op{fn: func(r *run, f *frame, in []*traverser) ([]*traverser, error) {
				groups, err := r.runLocal(p, in)
				if err != nil {
					return nil, err
				}
				var out []*traverser
				for i, g := range groups {
					if len(g) == 0 {
						continue
					}
					key, ok := g[0].obj.(string)
					if !ok {
						return nil, invalid(st.Name, "the key traversal must yield a string")
					}
					if v, ok := r.selectLabel(in[i], key, pop); ok {
						out = append(out, in[i].to(v))
					}
				}
				return out, nil
			}}, nil
		}
	}
	labels, err := stringArgs(lang.Step{Name: st.Name, Args: args})
	if err != nil || len(labels) == 0 {
		return nil, invalid(st.Name, "needs one or more string keys")
	}
	bys, err := c.byMods(st, mods)
	if err != nil {
		return nil, err
	}
	return &op{fn: func(r *run, f *frame, in []*traverser) ([]*traverser, error) {
		var out []*traverser
	next:
		for _, t := range in {
			m := &graph.Map{}
			for i, l := range labels {
				v, ok := r.selectLabel(t, l, pop)
				if !ok {
					continue next
				}
				if len(bys) > 0 {
					if v, ok, err = r.byValue(bys[i%len(bys)], t.fresh(v)); err != nil {
						return nil, err
					}
					if !ok {
						continue next
					}
				}
				m.Put(l, v)
			}
			if len(labels) == 1 {
				out = append(out, t.to(m.Entries[0].Value))
			} else {
				out = append(out, t.to(m))
			}
		}
		return out, nil
	}}, nil
}

func buildProject(c *compiler, st lang.Step, mods []lang.Step) (*op, error) {
	keys, err := stringArgs(st)
	if err != nil || len(keys) == 0 {
		return nil, invalid(st.Name, "needs one or more string keys")
	}
	bys, err := c.byMods(st, mods)
	if err != nil {
		return nil, err
	}
	if len(bys) > len(keys) {
		return nil, invalid("by", "project() has %d keys but %d by() modulators", len(keys), len(bys))
	}
	return &op{fn: func(r *run, f *frame, in []*traverser) ([]*traverser, error) {
		maps := make([]*graph.Map, len(in))
		for i := range maps {
			maps[i] = &graph.Map{}
		}
		for j, k := range keys {
			b := &byMod{}
			if len(bys) > 0 {
				b = bys[j%len(bys)]
			}
			vals, oks, err := r.byValues(b, in)
			if err != nil {
				return nil, err
			}
			for i := range in {
				if oks[i] {
					maps[i].Put(k, vals[i])
				}
			}
		}
		out := make([]*traverser, len(in))
		for i, t := range in {
			out[i] = t.to(maps[i])
		}
		return out, nil
	}}, nil
}

// buildWhere compiles where(traversal), where(P) and where(label, P): a P
// compares labelled objects (its argument names a label), with by()
// modulators applied to each side in turn.
func buildWhere(c *compiler, st lang.Step, mods []lang.Step) (*op, error) {
	if len(st.Args) == 1 {
		if tr, ok := st.Args[0].(*lang.Traversal); ok {
			if err := noMods(st, mods); err != nil {
				return nil, err
			}
			return c.whereTraversal(tr)
		}
	}
	var start string
	var p lang.P
	switch len(st.Args) {
	case 1:
		x, ok := st.Args[0].(lang.P)
		if !ok {
			return nil, invalid(st.Name, "takes a traversal or a predicate")
		}
		p = x
	case 2:
		s, ok1 := st.Args[0].(string)
		x, ok2 := st.Args[1].(lang.P)
		if !ok1 || !ok2 {
			return nil, invalid(st.Name, "where(label, predicate) needs a string and a predicate")
		}
		start, p = s, x
	default:
		return nil, invalid(st.Name, "takes a traversal or a predicate")
	}
	if err := checkP(st.Name, p); err != nil {
		return nil, err
	}
	bys, err := c.byMods(st, mods)
	if err != nil {
		return nil, err
	}
	return &op{fn: filterOp(func(r *run, t *traverser) (bool, error) {
		var left any = t.obj
		if start != "" {
			v, ok := r.selectLabel(t, start, "last")
			if !ok {
				return false, nil
			}
			left = v
		}
		if len(bys) > 0 {
			v, ok, err := r.byValue(bys[0], t.fresh(left))
			if err != nil || !ok {
				return false, err
			}
			left = v
		}
		q, ok, err := r.resolveP(p, t, bys)
		if err != nil || !ok {
			return false, err
		}
		return graph.Test(q, left)
	})}, nil
}

// resolveP replaces a where() predicate's label arguments with the
// labelled objects (through the second by(), or the first).
func (r *run) resolveP(p lang.P, t *traverser, bys []*byMod) (lang.P, bool, error) {
	q := lang.P{Op: p.Op, Args: make([]lang.Value, len(p.Args))}
	for i, a := range p.Args {
		switch x := a.(type) {
		case lang.P:
			sub, ok, err := r.resolveP(x, t, bys)
			if err != nil || !ok {
				return q, ok, err
			}
			q.Args[i] = sub
		case string:
			v, ok := r.selectLabel(t, x, "last")
			if !ok {
				return q, false, nil
			}
			if len(bys) > 0 {
				b := bys[len(bys)-1]
				var err error
				if v, ok, err = r.byValue(b, t.fresh(v)); err != nil || !ok {
					return q, false, err
				}
			}
			if l, isList := v.([]any); isList && (p.Op == "within" || p.Op == "without") {
				q.Args = append(q.Args[:i], l...)
				continue
			}
			q.Args[i] = v
		default:
			q.Args[i] = a
		}
	}
	return q, true, nil
}

// buildGroup compiles group() and groupCount(), as a reducing step or,
// with a key, as a side effect that passes the traversers on.
func buildGroup(c *compiler, st lang.Step, mods []lang.Step) (*op, error) {
	keys, err := stringArgs(st)
	if err != nil || len(keys) > 1 {
		return nil, invalid(st.Name, "takes at most one side-effect key")
	}
	bys, err := c.byMods(st, mods)
	if err != nil {
		return nil, err
	}
	count := st.Name == "groupCount"
	if (count && len(bys) > 1) || len(bys) > 2 {
		return nil, invalid("by", "too many by() modulators for %s()", st.Name)
	}
	keyBy := &byMod{}
	if len(bys) > 0 {
		keyBy = bys[0]
	}
	var valBy *byMod
	if len(bys) > 1 {
		valBy = bys[1]
	}
	build := func(r *run, ts []*traverser, m *graph.Map) error {
		ks, oks, err := r.byValues(keyBy, ts)
		if err != nil {
			return err
		}
		if count {
			for i := range ts {
				if !oks[i] {
					continue
				}
				n, _ := m.Get(ks[i])
				c, _ := n.(int64)
				m.Put(ks[i], c+1)
			}
			return nil
		}
		// Members of each group, then the value by() over each group.
		var order []any
		members := map[int][]*traverser{}
		for i, t := range ts {
			if !oks[i] {
				continue
			}
			j := -1
			for k, o := range order {
				if graph.Equal(o, ks[i]) {
					j = k
					break
				}
			}
			if j < 0 {
				order = append(order, ks[i])
				j = len(order) - 1
			}
			members[j] = append(members[j], t)
		}
		for j, k := range order {
			vals, ok, err := r.groupValue(valBy, members[j])
			if err != nil {
				return err
			}
			if ok {
				m.Put(k, vals)
			}
		}
		return nil
	}
	if len(keys) == 1 {
		key := keys[0]
		if count {
			c.sides[key] = sideMap
		}
		return &op{fn: func(r *run, f *frame, in []*traverser) ([]*traverser, error) {
			s, ok := r.side[key]
			if !ok || (s.kind != sideMap && s.kind != sideGroup) {
				s = &sideEffect{kind: sideMap, m: &graph.Map{}}
				if !count {
					// group(key) keeps its members and reduces them when
					// read, so that a group filled over several
					// iterations reduces them all (Group.feature
					// g_V_repeatXout_groupXaX_byXnameX_byXcountX_timesX2X_capXaX).
					s = &sideEffect{kind: sideGroup, build: build}
				}
				r.side[key] = s
			}
			if s.kind == sideGroup {
				s.members = append(s.members, in...)
			} else if err := build(r, in, s.m); err != nil {
				return nil, err
			}
			r.sideMB += int64(len(in)) * 32
			return in, nil
		}}, nil
	}
	return &op{reduce: true, fn: func(r *run, f *frame, in []*traverser) ([]*traverser, error) {
		tags, groups := byTag(f, in)
		var out []*traverser
		for _, tag := range tags {
			m := &graph.Map{}
			if err := build(r, groups[tag], m); err != nil {
				return nil, err
			}
			out = append(out, &traverser{obj: m, path: &pathNode{obj: m}, tag: tag})
		}
		return out, nil
	}}, nil
}

// groupValue reduces one group's members: by default the list of the
// objects; with by(key) the list of the key's values; with a traversal,
// its first result over all the members (ok false when it has none).
func (r *run) groupValue(b *byMod, ts []*traverser) (any, bool, error) {
	if b == nil {
		out := make([]any, len(ts))
		for i, t := range ts {
			out[i] = t.obj
		}
		return out, true, nil
	}
	if b.kind != byTraversal {
		vals, oks, err := r.byValues(b, ts)
		if err != nil {
			return nil, false, err
		}
		out := []any{}
		for i := range vals {
			if oks[i] {
				out = append(out, vals[i])
			}
		}
		return out, true, nil
	}
	copies := make([]*traverser, len(ts))
	for i, t := range ts {
		c := *t
		c.tag = 0
		copies[i] = &c
	}
	// Each group runs the value traversal afresh (its own frame).
	r.frames++
	res, err := r.exec(&frame{tags: []int{0}, id: r.frames}, b.prog, copies)
	if err != nil {
		return nil, false, err
	}
	// The group's value is the traversal's first result; a group it
	// yields nothing for is left out (Grouping.doFinalReduction;
	// Group.feature g_V_group_byXvaluesXnameXX_byXvaluesXageX_fold_unfoldX).
	if len(res) == 0 {
		return nil, false, nil
	}
	return res[0].obj, true, nil
}

// buildAggregate compiles aggregate(key) and store(key): the objects (or
// their by() values) are added to a list side effect.
func buildAggregate(c *compiler, st lang.Step, mods []lang.Step) (*op, error) {
	args, _ := scopeArg(st.Args)
	keys, err := stringArgs(lang.Step{Name: st.Name, Args: args})
	if err != nil || len(keys) != 1 {
		return nil, invalid(st.Name, "takes one side-effect key")
	}
	bys, err := c.byMods(st, mods)
	if err != nil || len(bys) > 1 {
		return nil, invalid(st.Name, "takes at most one by()")
	}
	key := keys[0]
	c.sides[key] = sideList
	return &op{fn: func(r *run, f *frame, in []*traverser) ([]*traverser, error) {
		s, ok := r.side[key]
		if !ok || s.kind != sideList {
			ns := &sideEffect{kind: sideList}
			if ok && s.kind == sideValue {
				// withSideEffect('x', [...]) seeds the aggregate.
				if l, isList := s.value.([]any); isList {
					ns.list = append(ns.list, l...)
				} else {
					return nil, invalid(st.Name, "the side effect %q is not a list", key)
				}
			}
			s = ns
			r.side[key] = s
		}
		b := &byMod{}
		if len(bys) == 1 {
			b = bys[0]
		}
		vals, oks, err := r.byValues(b, in)
		if err != nil {
			return nil, err
		}
		for i, v := range vals {
			if oks[i] {
				s.list = append(s.list, v)
				r.sideMB += 16 + sizeOf(v, 0)
			}
		}
		if err := r.checkMemory(st.Name, nil); err != nil {
			return nil, err
		}
		return in, nil
	}}, nil
}

// buildCap emits side effects: one key gives its value, several a map.
func buildCap(c *compiler, st lang.Step, mods []lang.Step) (*op, error) {
	if err := noMods(st, mods); err != nil {
		return nil, err
	}
	keys, err := stringArgs(st)
	if err != nil || len(keys) == 0 {
		return nil, invalid(st.Name, "needs one or more side-effect keys")
	}
	return &op{reduce: true, fn: func(r *run, f *frame, in []*traverser) ([]*traverser, error) {
		var v any
		m := &graph.Map{}
		for _, k := range keys {
			s, ok := r.side[k]
			if !ok {
				return nil, invalid(st.Name, "no side effect named %q", k)
			}
			v, err := r.sideValue(s)
			if err != nil {
				return nil, err
			}
			m.Put(k, v)
		}
		if len(keys) == 1 {
			v = m.Entries[0].Value
		} else {
			v = m
		}
		var out []*traverser
		tags, _ := byTag(f, in)
		for _, tag := range tags {
			out = append(out, &traverser{obj: v, path: &pathNode{obj: v}, tag: tag})
		}
		return out, nil
	}}, nil
}

// buildTree builds the tree of the traversers' paths.
func buildTree(c *compiler, st lang.Step, mods []lang.Step) (*op, error) {
	if len(st.Args) > 0 {
		return nil, unsupported(st.Name, "tree(key) is not supported")
	}
	bys, err := c.byMods(st, mods)
	if err != nil {
		return nil, err
	}
	return &op{reduce: true, fn: func(r *run, f *frame, in []*traverser) ([]*traverser, error) {
		tags, groups := byTag(f, in)
		var out []*traverser
		for _, tag := range tags {
			tree := &graph.Tree{}
			for _, t := range groups[tag] {
				node := tree
				objs := pathObjects(t.path)
				for i, obj := range objs {
					if len(bys) > 0 {
						v, ok, err := r.byValue(bys[i%len(bys)], t.fresh(obj))
						if err != nil {
							return nil, err
						}
						if !ok {
							continue
						}
						obj = v
					}
					var next *graph.Tree
					for _, e := range node.Entries {
						if graph.Equal(e.Key, obj) {
							next = e.Children
							break
						}
					}
					if next == nil {
						next = &graph.Tree{}
						node.Entries = append(node.Entries, graph.TreeEntry{Key: obj, Children: next})
					}
					node = next
				}
			}
			out = append(out, &traverser{obj: tree, path: &pathNode{obj: tree}, tag: tag})
		}
		return out, nil
	}}, nil
}

// whereTraversal compiles where(traversal). As in TinkerPop's
// WhereTraversalStep, a leading as('a') starts the child from the object
// labelled a, and a trailing as('b') requires the child to reach the
// object labelled b; otherwise the traverser passes when the child yields
// anything. and(), or() and not() written as the child combine such
// patterns (Where.feature
// g_V_asXaX_outXcreatedX_asXbX_whereXandXasXbX_in__notXasXaX_outXcreatedX_hasXname_rippleXXX_selectXa_bX).
func (c *compiler) whereTraversal(tr *lang.Traversal) (*op, error) {
	test, err := c.whereTest(tr, 0)
	if err != nil {
		return nil, err
	}
	return &op{fn: func(r *run, f *frame, in []*traverser) ([]*traverser, error) {
		pass, err := test(r, in)
		if err != nil {
			return nil, err
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

type whereFn func(r *run, in []*traverser) ([]bool, error)

func (c *compiler) whereTest(tr *lang.Traversal, depth int) (whereFn, error) {
	if depth > maxDepth {
		return nil, invalid("where", "traversals nested deeper than %d", maxDepth)
	}
	steps := connectives(tr.Steps)
	if len(steps) == 1 && (steps[0].Name == "and" || steps[0].Name == "or" || steps[0].Name == "not") && len(steps[0].Args) > 0 {
		name := steps[0].Name
		var parts []whereFn
		for _, a := range steps[0].Args {
			sub, ok := a.(*lang.Traversal)
			if !ok {
				return nil, invalid(name, "takes traversals")
			}
			fn, err := c.whereTest(sub, depth+1)
			if err != nil {
				return nil, err
			}
			parts = append(parts, fn)
		}
		if name == "not" && len(parts) != 1 {
			return nil, invalid(name, "takes one traversal")
		}
		return func(r *run, in []*traverser) ([]bool, error) {
			res := make([]bool, len(in))
			for i := range res {
				res[i] = name == "and"
			}
			for _, p := range parts {
				got, err := p(r, in)
				if err != nil {
					return nil, err
				}
				for i := range res {
					switch name {
					case "and":
						res[i] = res[i] && got[i]
					case "or":
						res[i] = res[i] || got[i]
					default:
						res[i] = !got[i]
					}
				}
			}
			return res, nil
		}, nil
	}
	var start, end string
	if len(steps) > 0 && steps[0].Name == "as" && len(steps[0].Args) == 1 {
		if l, ok := steps[0].Args[0].(string); ok {
			start, steps = l, steps[1:]
		}
	}
	if n := len(steps); n > 0 && steps[n-1].Name == "as" && len(steps[n-1].Args) == 1 {
		if l, ok := steps[n-1].Args[0].(string); ok {
			end, steps = l, steps[:n-1]
		}
	}
	p, err := c.child("where", &lang.Traversal{Steps: steps, Anonymous: true})
	if err != nil {
		return nil, err
	}
	return func(r *run, in []*traverser) ([]bool, error) {
		res := make([]bool, len(in))
		starts := make([]*traverser, 0, len(in))
		idx := make([]int, 0, len(in))
		for i, t := range in {
			if start == "" {
				starts = append(starts, t)
				idx = append(idx, i)
				continue
			}
			v, ok := r.selectLabel(t, start, "last")
			if !ok {
				continue
			}
			n := *t
			n.obj = v
			starts = append(starts, &n)
			idx = append(idx, i)
		}
		groups, err := r.runLocal(p, starts)
		if err != nil {
			return nil, err
		}
		for j, g := range groups {
			t := in[idx[j]]
			pass := len(g) > 0
			if end != "" {
				pass = false
				if want, ok := r.selectLabel(t, end, "last"); ok {
					for _, o := range g {
						if graph.Equal(o.obj, want) {
							pass = true
							break
						}
					}
				}
			}
			res[idx[j]] = pass
		}
		return res, nil
	}, nil
}
