package traversal

import (
	"github.com/parsecdb/parsec/internal/api/gremlin/graph"
	"github.com/parsecdb/parsec/internal/api/gremlin/lang"
)

// buildUnion runs each branch over the whole frontier (a global child,
// breadth-first) and concatenates the branches' results in branch order.
func buildUnion(c *compiler, st lang.Step, mods []lang.Step) (*op, error) {
	if err := noMods(st, mods); err != nil {
		return nil, err
	}
	var progs []*program
	for _, a := range st.Args {
		p, err := c.child(st.Name, a)
		if err != nil {
			return nil, err
		}
		progs = append(progs, p)
	}
	return &op{fn: func(r *run, f *frame, in []*traverser) ([]*traverser, error) {
		// As a start step (g.union(__.V(), ...)), each branch starts from
		// the traversal's seed: its own start step replaces it.
		var out []*traverser
		for _, p := range progs {
			res, err := r.exec(subFrame(f, in), p, in)
			if err != nil {
				return nil, err
			}
			out = append(out, res...)
		}
		return out, nil
	}}, nil
}

// buildCoalesce: per traverser, the results of the first branch that
// yields any; optional(t): t's results, or the traverser itself.
func buildCoalesce(c *compiler, st lang.Step, mods []lang.Step) (*op, error) {
	if err := noMods(st, mods); err != nil {
		return nil, err
	}
	if len(st.Args) == 0 || (st.Name == "optional" && len(st.Args) != 1) {
		return nil, invalid(st.Name, "needs traversal arguments")
	}
	var progs []*program
	for _, a := range st.Args {
		p, err := c.child(st.Name, a)
		if err != nil {
			return nil, err
		}
		progs = append(progs, p)
	}
	optional := st.Name == "optional"
	return &op{fn: func(r *run, f *frame, in []*traverser) ([]*traverser, error) {
		results := make([][]*traverser, len(in))
		done := make([]bool, len(in))
		pending := in
		idx := make([]int, len(in))
		for i := range idx {
			idx[i] = i
		}
		for _, p := range progs {
			if len(pending) == 0 {
				break
			}
			groups, err := r.runLocal(p, pending)
			if err != nil {
				return nil, err
			}
			var nextPending []*traverser
			var nextIdx []int
			for j, g := range groups {
				if len(g) > 0 {
					results[idx[j]] = g
					done[idx[j]] = true
				} else {
					nextPending = append(nextPending, pending[j])
					nextIdx = append(nextIdx, idx[j])
				}
			}
			pending, idx = nextPending, nextIdx
		}
		var out []*traverser
		for i, t := range in {
			if done[i] {
				out = append(out, results[i]...)
			} else if optional {
				out = append(out, t)
			}
		}
		return out, nil
	}}, nil
}

// buildChoose compiles choose(pred, true[, false]) (pred a traversal or
// a P) and choose(traversal).option(key, branch)...
func buildChoose(c *compiler, st lang.Step, mods []lang.Step) (*op, error) {
	if len(st.Args) < 1 || len(st.Args) > 3 {
		return nil, invalid(st.Name, "takes one to three arguments")
	}
	var test *program
	var pred *lang.P
	switch x := st.Args[0].(type) {
	case lang.P:
		if err := checkP(st.Name, x); err != nil {
			return nil, err
		}
		pred = &x
	case *lang.Traversal:
		p, err := c.child(st.Name, x)
		if err != nil {
			return nil, err
		}
		test = p
	case lang.Token:
		// choose(T.label) is choose(__.label()).
		if x.Type != "T" || (x.Name != "label" && x.Name != "id") {
			return nil, unsupported(st.Name, "choose(%s.%s) is not supported", x.Type, x.Name)
		}
		p, err := c.compile([]lang.Step{{Name: x.Name}})
		if err != nil {
			return nil, err
		}
		test = p
	default:
		return nil, invalid(st.Name, "takes a traversal or a predicate first")
	}
	if len(st.Args) == 1 {
		// choose(traversal).option(key, branch)...
		type option struct {
			key  any
			pred *lang.P // option(P.between(26, 30), ...) matches by test
			none bool
			prog *program
		}
		var opts []option
		for _, m := range mods {
			if m.Name != "option" || len(m.Args) != 2 {
				return nil, invalid(m.Name, "choose(traversal) takes option(key, traversal) modulators")
			}
			p, err := c.child("option", m.Args[1])
			if err != nil {
				return nil, err
			}
			o := option{key: importValue(m.Args[0]), prog: p}
			if pk, ok := m.Args[0].(lang.P); ok {
				if err := checkP("option", pk); err != nil {
					return nil, err
				}
				o.pred = &pk
			}
			if tok, ok := m.Args[0].(lang.Token); ok && tok.Type == "Pick" {
				o.none = tok.Name == "none"
				if tok.Name == "any" {
					return nil, unsupported("option", "Pick.any is not supported")
				}
			}
			opts = append(opts, o)
		}
		if test == nil {
			return nil, invalid(st.Name, "choose(predicate) needs the branches as arguments")
		}
		return &op{fn: func(r *run, f *frame, in []*traverser) ([]*traverser, error) {
			groups, err := r.runLocal(test, in)
			if err != nil {
				return nil, err
			}
			branch := make([][]*traverser, len(opts))
			var unmatched []*traverser
			for i, g := range groups {
				if len(g) == 0 {
					// The choice yields nothing: the traverser passes
					// unchanged (Choose.feature
					// g_V_chooseXageX_optionXbetweenX26_30X_nameX_optionXnone_nameX).
					unmatched = append(unmatched, in[i])
					continue
				}
				matched := false
				if len(g) > 0 {
					for j, o := range opts {
						hit := !o.none && o.pred == nil && graph.Equal(o.key, g[0].obj)
						if o.pred != nil {
							ok, err := graph.Test(*o.pred, g[0].obj)
							if err != nil {
								return nil, err
							}
							hit = ok
						}
						if hit {
							branch[j] = append(branch[j], in[i])
							matched = true
							break
						}
					}
				}
				if !matched {
					found := false
					for j, o := range opts {
						if o.none {
							branch[j] = append(branch[j], in[i])
							found = true
							break
						}
					}
					if !found {
						unmatched = append(unmatched, in[i])
					}
				}
			}
			var out []*traverser
			for j, o := range opts {
				if len(branch[j]) == 0 {
					continue
				}
				res, err := r.exec(subFrame(f, branch[j]), o.prog, branch[j])
				if err != nil {
					return nil, err
				}
				out = append(out, res...)
			}
			// Without a matching option or Pick.none, TinkerPop passes the
			// traverser through unchanged.
			return append(out, unmatched...), nil
		}}, nil
	}
	if err := noMods(st, mods); err != nil {
		return nil, err
	}
	yes, err := c.child(st.Name, st.Args[1])
	if err != nil {
		return nil, err
	}
	var no *program
	if len(st.Args) == 3 {
		if no, err = c.child(st.Name, st.Args[2]); err != nil {
			return nil, err
		}
	}
	return &op{fn: func(r *run, f *frame, in []*traverser) ([]*traverser, error) {
		var ts, fs []*traverser
		if pred != nil {
			for _, t := range in {
				ok, err := graph.Test(*pred, t.obj)
				if err != nil {
					return nil, err
				}
				if ok {
					ts = append(ts, t)
				} else {
					fs = append(fs, t)
				}
			}
		} else {
			groups, err := r.runLocal(test, in)
			if err != nil {
				return nil, err
			}
			for i, g := range groups {
				if len(g) > 0 {
					ts = append(ts, in[i])
				} else {
					fs = append(fs, in[i])
				}
			}
		}
		out, err := r.exec(subFrame(f, ts), yes, ts)
		if err != nil {
			return nil, err
		}
		if no == nil {
			return append(out, fs...), nil
		}
		res, err := r.exec(subFrame(f, fs), no, fs)
		if err != nil {
			return nil, err
		}
		return append(out, res...), nil
	}}, nil
}

// buildRepeat compiles repeat() with times/until/emit, before (checked
// ahead of each iteration) or after (checked after it). The body runs over
// the whole frontier per iteration: breadth-first, as on Cosmos.
func buildRepeat(c *compiler, st lang.Step, mods []lang.Step) (*op, error) {
	if len(st.Args) != 1 {
		return nil, invalid(st.Name, "takes one traversal")
	}
	body, err := c.child(st.Name, st.Args[0])
	if err != nil {
		return nil, err
	}
	// Modulators before the repeat come first in mods, marked by position:
	// compile() puts the pre-modulators ahead; we find the split by
	// scanning for the repeat's own position, recorded as preCount.
	var times int64 = -1
	var until, emit *program
	emitAll := false
	untilBefore, emitBefore, timesBefore := false, false, false
	seenRepeat := false
	for _, m := range mods {
		if m.Name == "\x00repeat" {
			seenRepeat = true
			continue
		}
		before := !seenRepeat
		switch m.Name {
		case "times":
			if len(m.Args) != 1 {
				return nil, invalid(m.Name, "takes one count")
			}
			n, ok := toInt64(m.Args[0])
			if !ok || n < 0 {
				return nil, invalid(m.Name, "takes a non-negative count")
			}
			times, timesBefore = n, before
		case "until":
			if len(m.Args) != 1 {
				return nil, invalid(m.Name, "takes one traversal")
			}
			p, err := c.loopCondition(m)
			if err != nil {
				return nil, err
			}
			until, untilBefore = p, before
		case "emit":
			switch len(m.Args) {
			case 0:
				emitAll = true
			case 1:
				p, err := c.loopCondition(m)
				if err != nil {
					return nil, err
				}
				emit = p
			default:
				return nil, invalid(m.Name, "takes at most one traversal")
			}
			emitBefore = before
		default:
			return nil, invalid(m.Name, "cannot modulate repeat()")
		}
	}
	_ = timesBefore
	return &op{fn: func(r *run, f *frame, in []*traverser) ([]*traverser, error) {
		if times > int64(r.o.MaxRepeat) {
			return nil, newErr(ErrRepeatLimit, st.Name, "times(%d) exceeds the limit of %d iterations", times, r.o.MaxRepeat)
		}
		// Each traverser gets a loop counter for this repeat.
		frontier := make([]*traverser, len(in))
		for i, t := range in {
			n := *t
			n.loops = append(append([]int(nil), t.loops...), 0)
			frontier[i] = &n
		}
		pop := func(t *traverser) *traverser {
			n := *t
			n.loops = n.loops[:len(n.loops)-1]
			return &n
		}
		var out []*traverser
		test := func(p *program, ts []*traverser) ([]bool, error) {
			res := make([]bool, len(ts))
			if p == nil {
				return res, nil
			}
			groups, err := r.runLocal(p, ts)
			if err != nil {
				return nil, err
			}
			for i, g := range groups {
				res[i] = len(g) > 0
			}
			return res, nil
		}
		emitting := func(ts []*traverser) ([]bool, error) {
			if emitAll {
				res := make([]bool, len(ts))
				for i := range res {
					res[i] = true
				}
				return res, nil
			}
			return test(emit, ts)
		}
		// check splits the frontier into those that leave (until/times
		// met) and those that continue, emitting copies of the latter.
		check := func(ts []*traverser, before bool) ([]*traverser, error) {
			var leave []bool
			var err error
			if until != nil && untilBefore == before {
				if leave, err = test(until, ts); err != nil {
					return nil, err
				}
			} else {
				leave = make([]bool, len(ts))
			}
			if times >= 0 && timesBefore == before {
				for i, t := range ts {
					if int64(t.loops[len(t.loops)-1]) >= times {
						leave[i] = true
					}
				}
			}
			var em []bool
			if (emit != nil || emitAll) && emitBefore == before {
				if em, err = emitting(ts); err != nil {
					return nil, err
				}
			}
			var stay []*traverser
			for i, t := range ts {
				if leave[i] {
					out = append(out, pop(t))
					continue
				}
				if em != nil && em[i] {
					out = append(out, pop(t))
				}
				stay = append(stay, t)
			}
			return stay, nil
		}
		var err error
		if frontier, err = check(frontier, true); err != nil {
			return nil, err
		}
		for iter := 0; len(frontier) > 0; iter++ {
			if iter >= r.o.MaxRepeat {
				return nil, newErr(ErrRepeatLimit, st.Name, "more than %d iterations", r.o.MaxRepeat)
			}
			next, err := r.exec(subFrame(f, frontier), body, frontier)
			if err != nil {
				return nil, err
			}
			for i, t := range next {
				n := *t
				n.loops = append([]int(nil), t.loops...)
				n.loops[len(n.loops)-1]++
				next[i] = &n
			}
			if frontier, err = check(next, false); err != nil {
				return nil, err
			}
			if frontier, err = check(frontier, true); err != nil {
				return nil, err
			}
		}
		return out, nil
	}}, nil
}

// loopCondition compiles until()/emit()'s argument: a traversal, or a P
// tested against the object.
func (c *compiler) loopCondition(m lang.Step) (*program, error) {
	if p, ok := m.Args[0].(lang.P); ok {
		if err := checkP(m.Name, p); err != nil {
			return nil, err
		}
		return &program{ops: []*op{{name: "is", fn: filterOp(func(r *run, t *traverser) (bool, error) { return graph.Test(p, t.obj) })}}}, nil
	}
	return c.child(m.Name, m.Args[0])
}
