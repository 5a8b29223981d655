package traversal

import (
	"github.com/parsecdb/parsec/internal/api/gremlin/graph"
	"github.com/parsecdb/parsec/internal/api/gremlin/lang"
)

// byMod is one by() modulator: what it maps a traverser's object to, and
// for order() the direction.
type byMod struct {
	kind  int // byIdentity, byKey, byToken, byTraversal
	key   string
	token lang.Token
	prog  *program
	order string // "asc", "desc", "shuffle"
}

const (
	byIdentity = iota
	byKey
	byToken
	byTraversal
)

func (c *compiler) byModulator(m lang.Step) (*byMod, error) {
	b := &byMod{order: "asc"}
	args := m.Args
	if len(args) == 2 {
		tok, ok := args[1].(lang.Token)
		if !ok || tok.Type != "Order" {
			return nil, unsupported("by", "a comparator argument is not supported")
		}
		b.order = orderName(tok.Name)
		args = args[:1]
	}
	if len(args) > 1 {
		return nil, invalid("by", "takes at most two arguments")
	}
	if len(args) == 0 {
		return b, nil
	}
	switch x := args[0].(type) {
	case string:
		b.kind, b.key = byKey, x
	case lang.Token:
		switch {
		case x.Type == "Order":
			b.order = orderName(x.Name)
		case x.Type == "T" || x.Type == "Column":
			b.kind, b.token = byToken, x
		default:
			return nil, unsupported("by", "by(%s.%s) is not supported", x.Type, x.Name)
		}
	case *lang.Traversal:
		p, err := c.child("by", x)
		if err != nil {
			return nil, err
		}
		b.kind, b.prog = byTraversal, p
	default:
		return nil, unsupported("by", "by(%s) is not supported", describe(args[0]))
	}
	return b, nil
}

func orderName(n string) string {
	switch n {
	case "desc", "decr":
		return "desc"
	case "shuffle":
		return "shuffle"
	}
	return "asc"
}

// byMods compiles a step's by() modulators; any other modulator is an
// error.
func (c *compiler) byMods(st lang.Step, mods []lang.Step) ([]*byMod, error) {
	var out []*byMod
	for _, m := range mods {
		if m.Name != "by" {
			return nil, invalid(m.Name, "cannot modulate %s()", st.Name)
		}
		b, err := c.byModulator(m)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// byValue applies a by() to one traverser. ok is false when it yields
// nothing (a missing property, an empty traversal): TinkerPop 3.6+ then
// filters the traverser rather than failing.
func (r *run) byValue(b *byMod, t *traverser) (any, bool, error) {
	vs, oks, err := r.byValues(b, []*traverser{t})
	if err != nil {
		return nil, false, err
	}
	return vs[0], oks[0], nil
}

// byValues applies a by() to a batch of traversers (a traversal by() runs
// once for the batch).
func (r *run) byValues(b *byMod, ts []*traverser) ([]any, []bool, error) {
	vals := make([]any, len(ts))
	oks := make([]bool, len(ts))
	switch b.kind {
	case byIdentity:
		for i, t := range ts {
			vals[i], oks[i] = t.obj, true
		}
	case byKey:
		for i, t := range ts {
			if m, ok := t.obj.(*graph.Map); ok {
				vals[i], oks[i] = m.Get(b.key)
				continue
			}
			vs := propertyValues(t.obj, b.key)
			if len(vs) > 0 {
				vals[i], oks[i] = vs[0], true
			}
		}
	case byToken:
		for i, t := range ts {
			v, ok, err := tokenValue(b.token, t.obj)
			if err != nil {
				return nil, nil, err
			}
			vals[i], oks[i] = v, ok
		}
	case byTraversal:
		groups, err := r.runLocal(b.prog, ts)
		if err != nil {
			return nil, nil, err
		}
		for i, g := range groups {
			if len(g) > 0 {
				vals[i], oks[i] = g[0].obj, true
			}
		}
	}
	return vals, oks, nil
}

// tokenValue reads T.id, T.label, T.key, T.value or Column.keys/values.
func tokenValue(tok lang.Token, obj any) (any, bool, error) {
	if tok.Type == "Column" {
		switch x := obj.(type) {
		case *graph.Entry:
			if tok.Name == "keys" {
				return x.Key, true, nil
			}
			return x.Value, true, nil
		case *graph.Map:
			var out []any
			for _, e := range x.Entries {
				if tok.Name == "keys" {
					out = append(out, e.Key)
				} else {
					out = append(out, e.Value)
				}
			}
			if out == nil {
				out = []any{}
			}
			return out, true, nil
		}
		return nil, false, invalid("by", "Column.%s applies to maps, not %s", tok.Name, describe(obj))
	}
	switch tok.Name {
	case "id", "label":
		v, err := idOrLabel(tok.Name, obj)
		return v, err == nil, err
	case "key", "value":
		switch x := obj.(type) {
		case *graph.VertexProperty:
			if tok.Name == "key" {
				return x.Key, true, nil
			}
			return x.Value, true, nil
		case *graph.Property:
			if tok.Name == "key" {
				return x.Key, true, nil
			}
			return x.Value, true, nil
		}
	}
	return nil, false, invalid("by", "T.%s does not apply to %s", tok.Name, describe(obj))
}
