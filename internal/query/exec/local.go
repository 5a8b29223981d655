package exec

import (
	"slices"

	"github.com/parsecdb/parsec/internal/query/eval"
)

// runLocal evaluates q completely in memory in the scope env and returns its
// rows without the undefined ones. It runs subqueries (correlated: their
// FROM refers to aliases of env) and FROM subqueries of a container query
// (then doc is the current document). The semantics are those of the
// distributed executor restricted to one input:
//
//   - ORDER BY sorts stably (ties keep the expansion order);
//   - DISTINCT keeps the first occurrence of each row; with ORDER BY rows
//     are sorted by the ORDER BY values then by row value and a row equal
//     to the one before it is dropped, as for a whole query;
//   - groups come in group-key order;
//   - then OFFSET, LIMIT and TOP.
func (p *Plan) runLocal(q *query, env *eval.Env, doc eval.Value) ([]eval.Value, error) {
	var out []eval.Value
	if q.grouped {
		t := newGroupTable(q)
		if len(q.groupBy) == 0 {
			t.get(nil, nil)
		}
		err := p.expand(q, env, doc, func(b vars) error {
			e := tupleEnv(env, b)
			if ok, err := q.filter(e); err != nil || !ok {
				return err
			}
			key, err := q.groupKey(e)
			if err != nil {
				return err
			}
			n := len(t.list)
			grew, err := t.get(key, b).accumulate(q, e)
			if err != nil {
				return err
			}
			if len(t.list) > n {
				grew += int(groupSize(key, len(q.aggs)))
			}
			if grew == 0 {
				return nil
			}
			return charge(env, q.ast.Pos(), int64(grew))
		})
		if err != nil {
			return nil, err
		}
		groups := slices.Clone(t.list)
		slices.SortStableFunc(groups, func(a, b *group) int { return cmpTuple(a.key, b.key) })
		for _, g := range groups {
			v, err := g.project(q, env)
			if err != nil {
				return nil, err
			}
			if v.IsDefined() {
				out = append(out, v)
			}
		}
		if q.distinct {
			out = firstOccurrences(out)
		}
	} else {
		var rows []row
		err := p.expand(q, env, doc, func(b vars) error {
			e := tupleEnv(env, b)
			if ok, err := q.filter(e); err != nil || !ok {
				return err
			}
			ord, err := q.orderValues(e)
			if err != nil {
				return err
			}
			v, err := q.project(e)
			if err != nil || !v.IsDefined() {
				return err
			}
			rows = append(rows, row{ord: ord, val: v})
			// The rows are held until the subquery ends.
			return charge(env, q.ast.Pos(), rowBytes)
		})
		if err != nil {
			return nil, err
		}
		switch {
		case len(q.orderBy) > 0 && q.distinct:
			slices.SortStableFunc(rows, func(a, b row) int {
				if c := q.cmpOrder(a.ord, b.ord); c != 0 {
					return c
				}
				return eval.Compare(a.val, b.val)
			})
			for i, r := range rows {
				if i == 0 || !eval.Equal(r.val, rows[i-1].val) {
					out = append(out, r.val)
				}
			}
		case len(q.orderBy) > 0:
			slices.SortStableFunc(rows, func(a, b row) int { return q.cmpOrder(a.ord, b.ord) })
			fallthrough
		default:
			for _, r := range rows {
				out = append(out, r.val)
			}
			if q.distinct {
				out = firstOccurrences(out)
			}
		}
	}
	offset, limit := q.limits()
	out = out[min(int64(len(out)), offset):]
	if limit >= 0 && int64(len(out)) > limit {
		out = out[:limit]
	}
	return out, nil
}

// rowBytes is what a row held by a subquery counts against the budget.
const rowBytes = 128

// firstOccurrences drops every value equal to an earlier one.
func firstOccurrences(vals []eval.Value) []eval.Value {
	seen := make(map[uint64][]eval.Value)
	out := vals[:0:0]
	for _, v := range vals {
		h := eval.Hash(v)
		if slices.ContainsFunc(seen[h], func(w eval.Value) bool { return eval.Equal(v, w) }) {
			continue
		}
		seen[h] = append(seen[h], v)
		out = append(out, v)
	}
	return out
}
