package traversal_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/parsecdb/parsec/internal/api/gremlin/graph"
	"github.com/parsecdb/parsec/internal/api/gremlin/graph/memgraph"
	"github.com/parsecdb/parsec/internal/api/gremlin/lang"
	"github.com/parsecdb/parsec/internal/api/gremlin/traversal"
)

// The toy graphs of TinkerPop's reference documentation ("The Graph
// Structure": modern and crew), with string ids as Cosmos has them and
// "name" as the partition key property (every vertex has one).

type gv struct {
	id, label string
	props     [][2]any
}

type ge struct {
	id, label, out, in string
	props              [][2]any
}

func loadGraph(t testing.TB, vs []gv, es []ge) *memgraph.Graph {
	t.Helper()
	g := memgraph.New("name")
	byID := map[string]*graph.Vertex{}
	var ms []graph.Mutation
	for _, v := range vs {
		x := &graph.Vertex{ID: v.id, Label: v.label, Properties: map[string][]*graph.VertexProperty{}}
		for i, p := range v.props {
			k := p[0].(string)
			vp := &graph.VertexProperty{ID: fmt.Sprintf("%s-%d", v.id, i), Key: k, Value: p[1], Vertex: x}
			if m, ok := p[1].(map[string]any); ok {
				vp.Value, vp.Meta = m["value"], map[string]any{}
				for mk, mv := range m {
					if mk != "value" {
						vp.Meta[mk] = mv
					}
				}
			}
			if _, ok := x.Properties[k]; !ok {
				x.Keys = append(x.Keys, k)
			}
			x.Properties[k] = append(x.Properties[k], vp)
			if k == "name" {
				x.PartitionKey = vp.Value
			}
		}
		byID[v.id] = x
		ms = append(ms, graph.Mutation{Kind: graph.AddVertex, Vertex: x})
	}
	for _, e := range es {
		o, i := byID[e.out], byID[e.in]
		x := &graph.Edge{ID: e.id, Label: e.label, Properties: map[string]any{},
			Out: graph.Ref{ID: o.ID, Label: o.Label, PartitionKey: o.PartitionKey},
			In:  graph.Ref{ID: i.ID, Label: i.Label, PartitionKey: i.PartitionKey}}
		for _, p := range e.props {
			x.Properties[p[0].(string)] = p[1]
			x.Keys = append(x.Keys, p[0].(string))
		}
		ms = append(ms, graph.Mutation{Kind: graph.AddEdge, Edge: x})
	}
	if _, err := g.Apply(context.Background(), ms); err != nil {
		t.Fatal(err)
	}
	return g
}

func modern(t testing.TB) *memgraph.Graph {
	return loadGraph(t, []gv{
		{"1", "person", [][2]any{{"name", "marko"}, {"age", int32(29)}}},
		{"2", "person", [][2]any{{"name", "vadas"}, {"age", int32(27)}}},
		{"3", "software", [][2]any{{"name", "lop"}, {"lang", "java"}}},
		{"4", "person", [][2]any{{"name", "josh"}, {"age", int32(32)}}},
		{"5", "software", [][2]any{{"name", "ripple"}, {"lang", "java"}}},
		{"6", "person", [][2]any{{"name", "peter"}, {"age", int32(35)}}},
	}, []ge{
		{"7", "knows", "1", "2", [][2]any{{"weight", 0.5}}},
		{"8", "knows", "1", "4", [][2]any{{"weight", 1.0}}},
		{"9", "created", "1", "3", [][2]any{{"weight", 0.4}}},
		{"10", "created", "4", "5", [][2]any{{"weight", 1.0}}},
		{"11", "created", "4", "3", [][2]any{{"weight", 0.4}}},
		{"12", "created", "6", "3", [][2]any{{"weight", 0.2}}},
	})
}

func loc(place string, start int32, end ...int32) [2]any {
	m := map[string]any{"value": place, "startTime": start}
	if len(end) > 0 {
		m["endTime"] = end[0]
	}
	return [2]any{"location", m}
}

func crew(t testing.TB) *memgraph.Graph {
	return loadGraph(t, []gv{
		{"1", "person", [][2]any{{"name", "marko"}, loc("san diego", 1997, 2001), loc("santa cruz", 2001, 2004), loc("brussels", 2004, 2005), loc("santa fe", 2005)}},
		{"7", "person", [][2]any{{"name", "stephen"}, loc("centreville", 1990, 2000), loc("dulles", 2000, 2006), loc("purcellville", 2006)}},
		{"8", "person", [][2]any{{"name", "matthias"}, loc("bremen", 2004, 2007), loc("baltimore", 2007, 2011), loc("oakland", 2011, 2014), loc("seattle", 2014)}},
		{"9", "person", [][2]any{{"name", "daniel"}, loc("spremberg", 1982, 2005), loc("kaiserslautern", 2005, 2009), loc("aachen", 2009)}},
		{"10", "software", [][2]any{{"name", "gremlin"}}},
		{"11", "software", [][2]any{{"name", "tinkergraph"}}},
	}, []ge{
		{"13", "develops", "1", "10", [][2]any{{"since", int32(2009)}}},
		{"14", "develops", "1", "11", [][2]any{{"since", int32(2010)}}},
		{"15", "uses", "1", "10", [][2]any{{"skill", int32(4)}}},
		{"16", "uses", "1", "11", [][2]any{{"skill", int32(5)}}},
		{"17", "develops", "7", "10", [][2]any{{"since", int32(2010)}}},
		{"18", "develops", "7", "11", [][2]any{{"since", int32(2011)}}},
		{"19", "uses", "7", "10", [][2]any{{"skill", int32(5)}}},
		{"20", "uses", "7", "11", [][2]any{{"skill", int32(4)}}},
		{"21", "develops", "8", "10", [][2]any{{"since", int32(2012)}}},
		{"22", "uses", "8", "10", [][2]any{{"skill", int32(3)}}},
		{"23", "uses", "8", "11", [][2]any{{"skill", int32(3)}}},
		{"24", "uses", "9", "10", [][2]any{{"skill", int32(5)}}},
		{"25", "uses", "9", "11", [][2]any{{"skill", int32(3)}}},
		{"26", "traverses", "10", "11", nil},
	})
}

// render prints a result value compactly: v[id], e[id][out-label->in],
// lists, maps in order, paths, trees.
func render(v any) string {
	switch x := v.(type) {
	case *graph.Vertex:
		return "v[" + x.ID + "]"
	case *graph.Edge:
		return fmt.Sprintf("e[%s][%s-%s->%s]", x.ID, x.Out.ID, x.Label, x.In.ID)
	case *graph.VertexProperty:
		return fmt.Sprintf("vp[%s->%v]", x.Key, x.Value)
	case *graph.Property:
		return fmt.Sprintf("p[%s->%v]", x.Key, x.Value)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = render(e)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case *graph.Map:
		parts := make([]string, len(x.Entries))
		for i, e := range x.Entries {
			parts[i] = render(e.Key) + ":" + render(e.Value)
		}
		return "{" + strings.Join(parts, ",") + "}"
	case *graph.Path:
		return "path" + render(x.Objects)
	case *graph.Tree:
		parts := make([]string, len(x.Entries))
		for i, e := range x.Entries {
			parts[i] = render(e.Key) + render(e.Children)
		}
		return "{" + strings.Join(parts, ",") + "}"
	case lang.Token:
		return x.Type + "." + x.Name
	case float64:
		return fmt.Sprintf("%gd", x)
	case int64:
		return fmt.Sprintf("%dl", x)
	}
	return fmt.Sprint(v)
}

func runScript(t testing.TB, s graph.Store, script string, o traversal.Options) (*traversal.Result, error) {
	t.Helper()
	tr, err := lang.Parse(script, nil, lang.Limits{})
	if err != nil {
		t.Fatalf("parse %s: %v", script, err)
	}
	if o.NewID == nil {
		n := 100
		o.NewID = func() string { n++; return fmt.Sprint(n) }
	}
	return traversal.Run(context.Background(), tr, s, o)
}

func renderAll(vals []any, ordered bool) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = render(v)
	}
	if !ordered {
		sort.Strings(out)
	}
	return out
}

type graphStore = graph.Store

func modernStore(t testing.TB) graphStore { return modern(t) }
func crewStore(t testing.TB) graphStore   { return crew(t) }

// copyGraph returns a fresh copy of g (a new memgraph with the same
// elements), so that a test may write.
func copyGraph(t testing.TB, g *memgraph.Graph) *memgraph.Graph {
	t.Helper()
	c := memgraph.New(g.PartitionKey())
	var ms []graph.Mutation
	for _, v := range g.AllVertices() {
		ms = append(ms, graph.Mutation{Kind: graph.AddVertex, Vertex: v})
	}
	for _, e := range g.AllEdges() {
		ms = append(ms, graph.Mutation{Kind: graph.AddEdge, Edge: e})
	}
	if _, err := c.Apply(context.Background(), ms); err != nil {
		t.Fatal(err)
	}
	return c
}

func asError(err error, target **traversal.Error) bool { return errors.As(err, target) }
