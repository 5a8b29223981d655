package traversal

import (
	"math/big"
	"sort"

	"github.com/parsecdb/parsec/internal/api/gremlin/graph"
	"github.com/parsecdb/parsec/internal/api/gremlin/lang"
)

// scopeArg strips a leading Scope token and says whether it was local.
func scopeArg(args []lang.Value) ([]lang.Value, bool) {
	if len(args) > 0 {
		if tok, ok := args[0].(lang.Token); ok && tok.Type == "Scope" {
			return args[1:], tok.Name == "local"
		}
	}
	return args, false
}

// buildReduce compiles count, sum, min, max, mean, fold: per tag (each
// input of a local child reduces separately), or with Scope.local over the
// list in hand.
func buildReduce(c *compiler, st lang.Step, mods []lang.Step) (*op, error) {
	if err := noMods(st, mods); err != nil {
		return nil, err
	}
	args, local := scopeArg(st.Args)
	if len(args) != 0 {
		return nil, unsupported(st.Name, "arguments are not supported")
	}
	name := st.Name
	if local {
		return &op{fn: func(r *run, f *frame, in []*traverser) ([]*traverser, error) {
			var out []*traverser
			for _, t := range in {
				vals := unroll(t.obj)
				if m, ok := t.obj.(*graph.Map); ok && name != "count" {
					vals = nil
					for _, e := range m.Entries {
						vals = append(vals, e.Value)
					}
				}
				v, ok, err := reduceValues(name, vals)
				if err != nil {
					return nil, err
				}
				if ok {
					out = append(out, t.to(v))
				}
			}
			return out, nil
		}}, nil
	}
	return &op{reduce: true, fn: func(r *run, f *frame, in []*traverser) ([]*traverser, error) {
		tags, groups := byTag(f, in)
		var out []*traverser
		for _, tag := range tags {
			g := groups[tag]
			vals := make([]any, len(g))
			for i, t := range g {
				vals[i] = t.obj
			}
			v, ok, err := reduceValues(name, vals)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
			nt := &traverser{obj: v, path: &pathNode{obj: v}, tag: tag}
			if len(g) > 0 {
				nt.loops = g[0].loops
			}
			out = append(out, nt)
		}
		return out, nil
	}}, nil
}

// reduceValues reduces one group. ok is false when the reduction has no
// value (sum, min, max, mean of nothing).
func reduceValues(name string, vals []any) (any, bool, error) {
	switch name {
	case "count":
		return int64(len(vals)), true, nil
	case "fold":
		out := make([]any, len(vals))
		copy(out, vals)
		return out, true, nil
	case "min", "max":
		var best any
		found := false
		for _, v := range vals {
			if v == nil {
				continue
			}
			if !found {
				best, found = v, true
				continue
			}
			c, _ := graph.Compare(v, best)
			if (name == "min" && c < 0) || (name == "max" && c > 0) {
				best = v
			}
		}
		return best, found, nil
	case "sum", "mean":
		// The sum keeps the widest type of its inputs (int32 + int32 is an
		// int32, promoted to int64 on overflow, any float64 makes a
		// float64), as TinkerPop's NumberHelper does: Sum.feature
		// g_V_age_sum answers d[123].i.
		var isum int64
		var fsum float64
		var bsum *big.Int // set once a BigInteger is seen
		wide, floats, doubles := false, false, false
		n := 0
		for _, v := range vals {
			if v == nil {
				continue
			}
			if bi, ok := v.(*big.Int); ok {
				if bsum == nil {
					bsum = big.NewInt(isum)
				}
				bsum.Add(bsum, bi)
				f, _ := new(big.Float).SetInt(bi).Float64()
				fsum += f
				n++
				continue
			}
			if bsum != nil {
				if i, ok := toInt64(v); ok {
					bsum.Add(bsum, big.NewInt(i))
				}
			}
			switch x := v.(type) {
			case int32:
				isum += int64(x)
				fsum += float64(x)
			case int64:
				wide = true
				isum += x
				fsum += float64(x)
			case int:
				wide = true
				isum += int64(x)
				fsum += float64(x)
			case float32:
				floats = true
				fsum += float64(x)
			case float64:
				floats, doubles = true, true
				fsum += x
			default:
				return nil, false, invalid(name, "applies to numbers, not %s", describe(v))
			}
			n++
		}
		if n == 0 {
			return nil, false, nil
		}
		switch {
		case name == "mean":
			return fsum / float64(n), true, nil
		case bsum != nil && !floats:
			return bsum, true, nil
		case doubles:
			return fsum, true, nil
		case floats:
			return float32(fsum), true, nil
		case wide || isum > 1<<31-1 || isum < -1<<31:
			return isum, true, nil
		}
		return int32(isum), true, nil
	}
	return nil, false, unsupported(name, "unknown reduction")
}

// buildOrder sorts per tag (global) or the list/map in hand (local).
func buildOrder(c *compiler, st lang.Step, mods []lang.Step) (*op, error) {
	args, local := scopeArg(st.Args)
	if len(args) != 0 {
		return nil, invalid(st.Name, "takes only a scope")
	}
	bys, err := c.byMods(st, mods)
	if err != nil {
		return nil, err
	}
	if len(bys) == 0 {
		bys = []*byMod{{order: "asc"}}
	}
	if local {
		return &op{fn: func(r *run, f *frame, in []*traverser) ([]*traverser, error) {
			out := make([]*traverser, 0, len(in))
			for _, t := range in {
				switch x := t.obj.(type) {
				case []any:
					ts := make([]*traverser, len(x))
					for i, v := range x {
						ts[i] = t.fresh(v)
					}
					sorted, err := r.sortTraversers(bys, ts)
					if err != nil {
						return nil, err
					}
					l := make([]any, len(sorted))
					for i, s := range sorted {
						l[i] = s.obj
					}
					out = append(out, t.to(l))
				case *graph.Map:
					ts := make([]*traverser, len(x.Entries))
					for i, e := range x.Entries {
						ts[i] = t.fresh(&graph.Map{Entries: []graph.Entry{e}})
					}
					sorted, err := r.sortTraversers(entryBys(bys), ts)
					if err != nil {
						return nil, err
					}
					m := &graph.Map{}
					for _, s := range sorted {
						m.Entries = append(m.Entries, s.obj.(*graph.Map).Entries[0])
					}
					out = append(out, t.to(m))
				default:
					out = append(out, t)
				}
			}
			return out, nil
		}}, nil
	}
	return &op{fn: func(r *run, f *frame, in []*traverser) ([]*traverser, error) {
		tags, groups := byTag(f, in)
		var out []*traverser
		for _, tag := range tags {
			sorted, err := r.sortTraversers(bys, groups[tag])
			if err != nil {
				return nil, err
			}
			out = append(out, sorted...)
		}
		return out, nil
	}}, nil
}

// entryBys adapts by(keys)/by(values) for single-entry maps: Column
// tokens read the entry's key or value rather than a list.
func entryBys(bys []*byMod) []*byMod {
	out := make([]*byMod, len(bys))
	for i, b := range bys {
		c := *b
		if b.kind == byToken && b.token.Type == "Column" {
			c.kind = byEntry
		}
		if b.kind == byIdentity {
			c.kind = byEntry
			c.token = lang.Token{Type: "Column", Name: "keys"}
		}
		out[i] = &c
	}
	return out
}

const byEntry = 100

// sortTraversers sorts stably by the by() keys; a traverser a by() yields
// nothing for is dropped.
func (r *run) sortTraversers(bys []*byMod, ts []*traverser) ([]*traverser, error) {
	keys := make([][]any, len(ts))
	keep := make([]bool, len(ts))
	for i := range keep {
		keep[i] = true
	}
	for j, b := range bys {
		var vals []any
		var oks []bool
		if b.kind == byEntry {
			vals = make([]any, len(ts))
			oks = make([]bool, len(ts))
			for i, t := range ts {
				e := t.obj.(*graph.Map).Entries[0]
				vals[i], oks[i] = e.Value, true
				if b.token.Name == "keys" {
					vals[i] = e.Key
				}
			}
		} else {
			var err error
			if vals, oks, err = r.byValues(b, ts); err != nil {
				return nil, err
			}
		}
		for i := range ts {
			if j == 0 {
				keys[i] = make([]any, len(bys))
			}
			keys[i][j] = vals[i]
			keep[i] = keep[i] && oks[i]
		}
	}
	idx := make([]int, 0, len(ts))
	for i := range ts {
		if keep[i] {
			idx = append(idx, i)
		}
	}
	if bys[0].order == "shuffle" {
		r.rng.Shuffle(len(idx), func(a, b int) { idx[a], idx[b] = idx[b], idx[a] })
	} else {
		sort.SliceStable(idx, func(a, b int) bool {
			for j, by := range bys {
				c, _ := graph.Compare(keys[idx[a]][j], keys[idx[b]][j])
				if by.order == "desc" {
					c = -c
				}
				if c != 0 {
					return c < 0
				}
			}
			return false
		})
	}
	out := make([]*traverser, len(idx))
	for i, k := range idx {
		out[i] = ts[k]
	}
	return out, nil
}

// buildDedup drops traversers whose object (or by() value, or labelled
// objects) was seen before in the same tag.
func buildDedup(c *compiler, st lang.Step, mods []lang.Step) (*op, error) {
	args, local := scopeArg(st.Args)
	labels, err := stringArgs(lang.Step{Name: st.Name, Args: args})
	if err != nil {
		return nil, err
	}
	bys, err := c.byMods(st, mods)
	if err != nil || len(bys) > 1 {
		return nil, invalid(st.Name, "takes at most one by()")
	}
	if local {
		return &op{fn: mapOp(func(r *run, t *traverser) ([]any, error) {
			l, ok := t.obj.([]any)
			if !ok {
				return []any{t.obj}, nil
			}
			var out []any
			for _, v := range l {
				if !containsValue(out, v) {
					out = append(out, v)
				}
			}
			if out == nil {
				out = []any{}
			}
			return []any{out}, nil
		})}, nil
	}
	self := new(int)
	return &op{fn: func(r *run, f *frame, in []*traverser) ([]*traverser, error) {
		vals := make([]any, len(in))
		oks := make([]bool, len(in))
		switch {
		case len(labels) > 0:
			for i, t := range in {
				var tuple []any
				oks[i] = true
				for _, l := range labels {
					v, ok := r.selectLabel(t, l, "last")
					if !ok {
						oks[i] = false
					}
					tuple = append(tuple, v)
				}
				vals[i] = tuple
			}
		case len(bys) == 1:
			if vals, oks, err = r.byValues(bys[0], in); err != nil {
				return nil, err
			}
		default:
			for i, t := range in {
				vals[i], oks[i] = t.obj, true
			}
		}
		var out []*traverser
		for i, t := range in {
			if !oks[i] {
				continue
			}
			k := stateKey{step: self, frame: f.id, tag: t.tag}
			s, _ := r.state[k].(*seenSet)
			if s == nil {
				s = newSeenSet()
				r.state[k] = s
			}
			if s.add(vals[i]) {
				out = append(out, t)
			}
		}
		return out, nil
	}}, nil
}

// seenSet is a set of values under Gremlin equality, hashed by a coarse
// key and compared with graph.Equal within a bucket.
type seenSet struct{ buckets map[string][]any }

func newSeenSet() *seenSet { return &seenSet{buckets: map[string][]any{}} }

// add reports whether v was new.
func (s *seenSet) add(v any) bool {
	k := hashKey(v)
	for _, x := range s.buckets[k] {
		if graph.Equal(x, v) {
			return false
		}
	}
	s.buckets[k] = append(s.buckets[k], v)
	return true
}

func hashKey(v any) string {
	switch x := v.(type) {
	case string:
		return "s" + x
	case *graph.Vertex:
		return "v" + x.ID
	case *graph.Edge:
		return "e" + x.ID
	case bool:
		if x {
			return "t"
		}
		return "f"
	}
	if graph.IsNumber(v) {
		return "n"
	}
	return "o"
}

func containsValue(xs []any, v any) bool {
	for _, x := range xs {
		if graph.Equal(x, v) {
			return true
		}
	}
	return false
}

// buildSample picks n traversers at random per tag, in their order.
func buildSample(c *compiler, st lang.Step, mods []lang.Step) (*op, error) {
	if err := noMods(st, mods); err != nil {
		return nil, err
	}
	args, local := scopeArg(st.Args)
	if len(args) != 1 {
		return nil, invalid(st.Name, "takes one count")
	}
	n, ok := toInt64(args[0])
	if !ok || n < 0 {
		return nil, invalid(st.Name, "takes a non-negative count")
	}
	if local {
		// sample(local, n): n elements of the list in hand, in order.
		return &op{fn: mapOp(func(r *run, t *traverser) ([]any, error) {
			l, ok := t.obj.([]any)
			if !ok {
				return []any{t.obj}, nil
			}
			if int64(len(l)) <= n {
				return []any{append([]any{}, l...)}, nil
			}
			idx := r.rng.Perm(len(l))[:n]
			sort.Ints(idx)
			out := make([]any, 0, n)
			for _, i := range idx {
				out = append(out, l[i])
			}
			return []any{out}, nil
		})}, nil
	}
	return &op{fn: func(r *run, f *frame, in []*traverser) ([]*traverser, error) {
		tags, groups := byTag(f, in)
		var out []*traverser
		for _, tag := range tags {
			g := groups[tag]
			if int64(len(g)) <= n {
				out = append(out, g...)
				continue
			}
			idx := r.rng.Perm(len(g))[:n]
			sort.Ints(idx)
			for _, i := range idx {
				out = append(out, g[i])
			}
		}
		return out, nil
	}}, nil
}
