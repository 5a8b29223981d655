package exec

import (
	"errors"
	"strconv"

	"github.com/parsecdb/parsec/internal/query/ast"
	"github.com/parsecdb/parsec/internal/query/eval"
)

// errStop ends an expansion early; it never leaves the package.
var errStop = errors.New("stop")

// vars binds the aliases of one tuple of a FROM clause.
type vars = map[string]eval.Value

// expand calls yield with the bindings of each tuple of q's FROM clause, in
// order: the nested loop over the FROM source and the JOINs, each JOIN
// evaluated in the scope of the aliases before it. env is the enclosing
// scope, doc the current document (the value of a container source). A
// query without FROM has one empty tuple. An error from yield (errStop
// included) ends the expansion and is returned.
func (p *Plan) expand(q *query, env *eval.Env, doc eval.Value, yield func(vars) error) error {
	if q.noFrom {
		return yield(nil)
	}
	return p.expandFrom(q, 0, env, doc, nil, yield)
}

func (p *Plan) expandFrom(q *query, i int, env *eval.Env, doc eval.Value, bound vars, yield func(vars) error) error {
	src := q.sources[i]
	scope := env
	if i > 0 {
		scope = env.Child(bound)
	}
	vals, err := p.collection(src, scope, doc)
	if err != nil {
		return err
	}
	last := i+1 == len(q.sources)
	for _, v := range vals {
		if err := step(env, src.at); err != nil {
			return err
		}
		next := make(vars, len(bound)+1)
		for k, b := range bound {
			next[k] = b
		}
		next[src.alias] = v
		if last {
			err = yield(next)
		} else {
			err = p.expandFrom(q, i+1, env, doc, next, yield)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// collection returns the values a source iterates: the rows of a subquery,
// the value of a path (if defined), or with IN the elements of the
// array(s).
func (p *Plan) collection(src *source, env *eval.Env, doc eval.Value) ([]eval.Value, error) {
	var vals []eval.Value
	if src.sub != nil {
		var err error
		if src.container {
			vals, err = p.runLocal(src.sub, env, doc)
		} else {
			vals, err = p.runLocal(src.sub, env, eval.Value{})
		}
		if err != nil {
			return nil, err
		}
	} else {
		base := doc
		if !src.container {
			base, _ = env.Lookup(src.root)
		}
		if v := applyPath(base, src.path); v.IsDefined() {
			vals = []eval.Value{v}
		}
	}
	if !src.iter {
		return vals, nil
	}
	var elems []eval.Value
	for _, v := range vals {
		elems = append(elems, v.Elems()...)
	}
	return elems, nil
}

// applyPath follows a FROM path (.name, [index], ["key"]) from v.
func applyPath(v eval.Value, path []*ast.PathSeg) eval.Value {
	for _, s := range path {
		switch s.Kind {
		case ast.SegName, ast.SegKey:
			v = v.Property(s.Text)
		case ast.SegIndex:
			i, err := strconv.ParseInt(s.Text, 10, 64)
			if err != nil || v.Kind() != eval.Array || i < 0 || i >= int64(v.Len()) {
				return eval.Value{}
			}
			v = v.Elem(int(i))
		}
		if !v.IsDefined() {
			return v
		}
	}
	return v
}

// tupleEnv is the scope of one tuple: its bindings nested in env. The
// aggregate hook of an enclosing group does not reach into it.
func tupleEnv(env *eval.Env, bound vars) *eval.Env {
	e := env.Child(bound)
	e.Aggregate = nil
	return e
}

// filter evaluates the WHERE clause in env: only true keeps the tuple.
func (q *query) filter(env *eval.Env) (bool, error) {
	if q.where == nil {
		return true, nil
	}
	v, err := eval.Eval(q.where, env)
	if err != nil {
		return false, err
	}
	return v.Kind() == eval.Bool && v.AsBool(), nil
}

// project evaluates the select clause in env. A SELECT VALUE row may be
// undefined, which the callers drop.
func (q *query) project(env *eval.Env) (eval.Value, error) {
	switch q.kind {
	case ast.SelectStar:
		v, _ := env.Lookup(q.star)
		return v, nil
	case ast.SelectValue:
		return eval.Eval(q.value, env)
	}
	members := make([]eval.Member, 0, len(q.items))
	for _, it := range q.items {
		v, err := eval.Eval(it.x, env)
		if err != nil {
			return eval.Value{}, err
		}
		members = append(members, eval.Member{Key: it.name, Value: v})
	}
	return eval.ObjectValue(members), nil
}

// orderValues evaluates the ORDER BY expressions in env.
func (q *query) orderValues(env *eval.Env) ([]eval.Value, error) {
	if len(q.orderBy) == 0 {
		return nil, nil
	}
	vals := make([]eval.Value, len(q.orderBy))
	for i, k := range q.orderBy {
		v, err := eval.Eval(k.x, env)
		if err != nil {
			return nil, err
		}
		vals[i] = v
	}
	return vals, nil
}

// groupKey evaluates the GROUP BY expressions in env.
func (q *query) groupKey(env *eval.Env) ([]eval.Value, error) {
	key := make([]eval.Value, len(q.groupBy))
	for i, g := range q.groupBy {
		v, err := eval.Eval(g, env)
		if err != nil {
			return nil, err
		}
		key[i] = v
	}
	return key, nil
}

// group is one group of an aggregate or GROUP BY query: its key, a
// representative tuple (any tuple of the group gives the same values to the
// GROUP BY expressions, the only references to the input that the select
// list may make outside aggregates), and one accumulator per aggregate.
type group struct {
	key  []eval.Value
	hash uint64
	rep  vars
	accs []*eval.Accumulator
}

// groupTable collects groups by key.
type groupTable struct {
	q    *query
	m    map[uint64][]*group
	list []*group
}

func newGroupTable(q *query) *groupTable {
	return &groupTable{q: q, m: make(map[uint64][]*group)}
}

func (t *groupTable) find(key []eval.Value, h uint64) *group {
	for _, g := range t.m[h] {
		if equalTuple(g.key, key) {
			return g
		}
	}
	return nil
}

// get returns the group of key, creating it with representative rep.
func (t *groupTable) get(key []eval.Value, rep vars) *group {
	h := hashTuple(key)
	if g := t.find(key, h); g != nil {
		return g
	}
	g := &group{key: key, hash: h, rep: rep, accs: make([]*eval.Accumulator, len(t.q.aggs))}
	for i, k := range t.q.aggKinds {
		g.accs[i] = eval.NewAccumulator(k)
	}
	t.m[h] = append(t.m[h], g)
	t.list = append(t.list, g)
	return g
}

// merge adds the accumulators of o into the group of o's key, creating it
// (with o's representative) if needed.
func (t *groupTable) merge(o *group) {
	if g := t.find(o.key, o.hash); g != nil {
		for i, a := range g.accs {
			a.Merge(o.accs[i])
		}
		return
	}
	g := &group{key: o.key, hash: o.hash, rep: o.rep, accs: make([]*eval.Accumulator, len(o.accs))}
	for i, a := range o.accs {
		g.accs[i] = eval.NewAccumulator(a.Kind())
		g.accs[i].Merge(a)
	}
	t.m[g.hash] = append(t.m[g.hash], g)
	t.list = append(t.list, g)
}

// reset keeps only the groups in list.
func (t *groupTable) reset(list []*group) {
	t.list = list
	clear(t.m)
	for _, g := range list {
		t.m[g.hash] = append(t.m[g.hash], g)
	}
}

// accumulate adds the aggregate arguments of the tuple in env to g, and
// returns by how many bytes what g's accumulators hold grew (MAKELIST and
// MAKESET hold their values).
func (g *group) accumulate(q *query, env *eval.Env) (int, error) {
	grew := 0
	for i, call := range q.aggs {
		v, err := eval.Eval(call.Args[0], env)
		if err != nil {
			return grew, err
		}
		before := g.accs[i].Size()
		g.accs[i].Add(v)
		grew += g.accs[i].Size() - before
	}
	return grew, nil
}

// project evaluates the select clause of q for group g in scope env.
func (g *group) project(q *query, env *eval.Env) (eval.Value, error) {
	e := env.Child(g.rep)
	e.Aggregate = func(call *ast.Call, _ *eval.Env) (eval.Value, error) {
		i, ok := q.aggIndex[call]
		if !ok {
			panic("BUG: exec: aggregate outside the select clause: " + call.String())
		}
		return g.accs[i].Result(), nil
	}
	return q.project(e)
}
