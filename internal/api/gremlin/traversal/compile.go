package traversal

import (
	"fmt"

	"github.com/parsecdb/parsec/internal/api/gremlin/graph"
	"github.com/parsecdb/parsec/internal/api/gremlin/lang"
)

// A program is a compiled traversal: its operators in order.
type program struct {
	ops []*op
	// reduces is true when the last operator is a reducing barrier (count,
	// fold, sum, ...): group().by(k).by(<program>) then takes its one
	// result instead of folding.
	reduces bool
	// sides: the side effects to create empty (the root program's).
	sides map[string]int
}

// An op is one operator: a step (with its modulators, or a V() with the
// has steps fused into its query).
type op struct {
	name   string // the step as written
	metric string // Cosmos's operator name for executionProfile
	fn     func(r *run, f *frame, in []*traverser) ([]*traverser, error)
	reduce bool
}

// maxDepth bounds the nesting of traversals (Cosmos: operator depth 400).
const maxDepth = 400

type compiler struct {
	depth int
	// sides are the side effects the traversal fills (aggregate, store,
	// groupCount with a key): they exist, empty, from the start, as
	// TinkerPop registers them, so that where(without('x')) before the
	// first aggregate('x') sees an empty collection.
	sides map[string]int
}

// compileRoot compiles a script's traversal and says whether it ends with
// executionProfile().
func compileRoot(t *lang.Traversal) (*program, bool, error) {
	steps := t.Steps
	profile := false
	for i, st := range steps {
		if st.Name == "executionProfile" || st.Name == "profile" {
			if i != len(steps)-1 {
				return nil, false, invalid(st.Name, "must be the last step")
			}
			if len(st.Args) != 0 {
				return nil, false, invalid(st.Name, "takes no arguments")
			}
			profile = true
			steps = steps[:i]
		}
	}
	if len(steps) == 0 {
		return nil, false, invalid("", "the traversal has no steps")
	}
	if !t.Anonymous && !isStart(steps[0].Name) {
		return nil, false, invalid(steps[0].Name, "a traversal from g must start with V, E, addV, addE, inject or union")
	}
	if !t.Anonymous && steps[0].Name == "union" {
		for _, a := range steps[0].Args {
			if b, ok := a.(*lang.Traversal); ok && (len(b.Steps) == 0 || !isStart(b.Steps[0].Name)) {
				return nil, false, invalid("union", "each branch of a starting union() must start with V, E, addV, addE, inject or union")
			}
		}
	}
	c := &compiler{sides: map[string]int{}}
	p, err := c.compile(steps)
	if err == nil {
		p.sides = c.sides
	}
	return p, profile, err
}

func isStart(name string) bool {
	switch name {
	case "V", "E", "addV", "addE", "inject", "union":
		return true
	}
	return false
}

// child compiles a nested traversal argument.
func (c *compiler) child(step string, v lang.Value) (*program, error) {
	t, ok := v.(*lang.Traversal)
	if !ok {
		return nil, invalid(step, "expects a traversal, got %s", describe(v))
	}
	if len(t.Source) > 0 || !t.Anonymous {
		return nil, invalid(step, "expects an anonymous traversal (__.)")
	}
	c.depth++
	defer func() { c.depth-- }()
	if c.depth > maxDepth {
		return nil, invalid(step, "traversals nested deeper than %d", maxDepth)
	}
	return c.compile(t.Steps)
}

func isModulator(name string) bool {
	switch name {
	case "by", "from", "to", "option", "times", "until", "emit", "with":
		return true
	}
	return false
}

func isLoopModulator(name string) bool {
	return name == "emit" || name == "until" || name == "times"
}

func isAdjacent(name string) bool {
	switch name {
	case "out", "in", "both", "outE", "inE", "bothE":
		return true
	}
	return false
}

func isHasStep(name string) bool {
	switch name {
	case "has", "hasLabel", "hasId", "hasNot":
		return true
	}
	return false
}

// connectives rewrites the infix and()/or() of a traversal
// (a.and().b.or().c) into their prefix forms (or(and(a, b), c)), as
// TinkerPop's ConnectiveStrategy does: the operands are the steps after
// the start step (V, E), and and() binds tighter than or().
func connectives(steps []lang.Step) []lang.Step {
	infix := func(st lang.Step) bool { return (st.Name == "and" || st.Name == "or") && len(st.Args) == 0 }
	found := false
	for _, st := range steps {
		if infix(st) {
			found = true
			break
		}
	}
	if !found {
		return steps
	}
	base := 0
	if len(steps) > 0 && (steps[0].Name == "V" || steps[0].Name == "E") {
		base = 1
	}
	anon := func(ss []lang.Step) lang.Value {
		return &lang.Traversal{Steps: append([]lang.Step(nil), ss...), Anonymous: true}
	}
	var ors []lang.Value
	var ands []lang.Value
	var cur []lang.Step
	flushAnd := func() {
		ands = append(ands, anon(cur))
		cur = nil
	}
	flushOr := func() {
		flushAnd()
		if len(ands) == 1 {
			ors = append(ors, ands[0])
		} else {
			ors = append(ors, anon([]lang.Step{{Name: "and", Args: ands}}))
		}
		ands = nil
	}
	for _, st := range steps[base:] {
		switch {
		case infix(st) && st.Name == "and":
			flushAnd()
		case infix(st):
			flushOr()
		default:
			cur = append(cur, st)
		}
	}
	flushOr()
	out := append([]lang.Step(nil), steps[:base]...)
	if len(ors) == 1 {
		return append(out, ors[0].(*lang.Traversal).Steps...)
	}
	return append(out, lang.Step{Name: "or", Args: ors})
}

func (c *compiler) compile(steps []lang.Step) (*program, error) {
	steps = connectives(steps)
	p := &program{}
	var pre []lang.Step // emit/until/times written before their repeat
	for i := 0; i < len(steps); {
		st := steps[i]
		i++
		if st.Name == "emit" || st.Name == "until" || st.Name == "times" {
			// A loop modulator before repeat(): kept for the next repeat.
			pre = append(pre, st)
			continue
		}
		var mods []lang.Step
		for i < len(steps) && isModulator(steps[i].Name) && (st.Name == "repeat" || !isLoopModulator(steps[i].Name)) {
			mods = append(mods, steps[i])
			i++
		}
		if st.Name == "by" || st.Name == "from" || st.Name == "to" || st.Name == "option" || st.Name == "with" {
			return nil, invalid(st.Name, "modulates no step")
		}
		if st.Name == "V" || st.Name == "E" {
			// Fuse the has steps that follow into the query.
			if err := noMods(st, mods); err != nil {
				return nil, err
			}
			var has []lang.Step
			for i < len(steps) && isHasStep(steps[i].Name) {
				has = append(has, steps[i])
				i++
			}
			// A limit(n) right after caps the store's scan (the limit step
			// still runs).
			limit := 0
			if i < len(steps) && steps[i].Name == "limit" && len(steps[i].Args) == 1 {
				if n, ok := toInt64(steps[i].Args[0]); ok && n > 0 && n <= 1<<31 {
					limit = int(n)
				}
			}
			o, err := c.startQuery(st, has, limit)
			if err != nil {
				return nil, err
			}
			p.ops = append(p.ops, o)
			continue
		}
		if isAdjacent(st.Name) && len(mods) == 0 {
			// Fuse the has steps that follow into the edge query (outE,
			// inE, bothE) or the neighbour query (out, in, both).
			var has []lang.Step
			for i < len(steps) && isHasStep(steps[i].Name) {
				has = append(has, steps[i])
				i++
			}
			o, err := c.adjacent(st, has)
			if err != nil {
				return nil, err
			}
			o.name, o.metric = st.Name, metricName(st.Name)
			p.ops = append(p.ops, o)
			continue
		}
		if st.Name == "repeat" {
			mods = append(append(pre, lang.Step{Name: "\x00repeat"}), mods...)
			pre = nil
		}
		o, err := c.build(st, mods)
		if err != nil {
			return nil, err
		}
		p.ops = append(p.ops, o)
	}
	if len(pre) > 0 {
		return nil, invalid(pre[0].Name, "modulates no repeat()")
	}
	if n := len(p.ops); n > 0 {
		p.reduces = p.ops[n-1].reduce
	}
	return p, nil
}

// noMods fails when a step that takes no modulators has some.
func noMods(st lang.Step, mods []lang.Step) error {
	if len(mods) > 0 {
		return invalid(mods[0].Name, "cannot modulate %s()", st.Name)
	}
	return nil
}

func (c *compiler) build(st lang.Step, mods []lang.Step) (*op, error) {
	b, ok := builders[st.Name]
	if !ok {
		if _, known := knownUnsupported[st.Name]; known {
			return nil, unsupported(st.Name, "the step %s() is not supported", st.Name)
		}
		return nil, unsupported(st.Name, "unknown step %s()", st.Name)
	}
	o, err := b(c, st, mods)
	if err != nil {
		return nil, err
	}
	if o.name == "" {
		o.name = st.Name
	}
	if o.metric == "" {
		o.metric = metricName(st.Name)
	}
	return o, nil
}

type builder func(c *compiler, st lang.Step, mods []lang.Step) (*op, error)

var builders map[string]builder

// knownUnsupported are TinkerPop steps Cosmos does not offer; naming them
// gives a clearer message than "unknown".
var knownUnsupported = map[string]bool{
	"match": true, "subgraph": true, "program": true, "pageRank": true,
	"peerPressure": true, "connectedComponent": true, "shortestPath": true,
	"io": true, "call": true, "mergeV": true, "mergeE": true, "sack": true,
	"index": true, "element": true, "timeLimit": true, "coin": true,
}

func metricName(step string) string {
	switch step {
	case "V":
		return "GetVertices"
	case "E", "outE", "inE", "bothE":
		return "GetEdges"
	case "out", "in", "both", "outV", "inV", "bothV", "otherV":
		return "GetNeighborVertices"
	case "project", "select", "valueMap", "elementMap", "values", "properties", "id", "label", "path", "map", "key", "value":
		return "ProjectOperator"
	case "count", "fold", "sum", "min", "max", "mean", "group", "groupCount", "tree", "cap":
		return "ProjectAggregation"
	case "coalesce":
		return "Coalesce"
	case "constant", "inject":
		return "ConstantSourceOperator"
	case "addV":
		return "AddVertexOperator"
	case "addE":
		return "AddEdgeOperator"
	case "drop":
		return "DropOperator"
	case "property":
		return "AddPropertyOperator"
	}
	if step == "" {
		return "Operator"
	}
	return string(step[0]-'a'+'A') + step[1:] + "Operator"
}

// describe names a value's kind for error messages.
func describe(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case *lang.Traversal:
		return "a traversal"
	case lang.P:
		return "a predicate"
	case lang.Token:
		return "a token"
	case string:
		return "a string"
	case *graph.Vertex:
		return "a vertex"
	case *graph.Edge:
		return "an edge"
	case []any:
		return "a list"
	case *graph.Map:
		return "a map"
	}
	if graph.IsNumber(v) {
		return "a number"
	}
	return fmt.Sprintf("a %T", v)
}

// stringArgs returns a step's arguments as strings.
func stringArgs(st lang.Step) ([]string, error) {
	out := make([]string, 0, len(st.Args))
	for _, a := range st.Args {
		s, ok := a.(string)
		if !ok {
			return nil, invalid(st.Name, "expects string arguments, got %s", describe(a))
		}
		out = append(out, s)
	}
	return out, nil
}

func mustNoArgs(st lang.Step) error {
	if len(st.Args) != 0 {
		return invalid(st.Name, "takes no arguments")
	}
	return nil
}
