package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/api/gremlin/graph"
	"github.com/parsecdb/parsec/internal/api/gremlin/lang"
	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/epk"
	"github.com/parsecdb/parsec/internal/storage"
)

// env is an in-process engine with one graph container.
type env struct {
	eng *engine.Engine
	c   *engine.Container
	s   *Store
}

type envOpts struct {
	pkPath   string
	rus      int // 4000: four partitions
	throttle bool
	now      func() time.Time
}

func newEnv(t testing.TB, o envOpts) *env {
	t.Helper()
	if o.pkPath == "" {
		o.pkPath = "/pk"
	}
	if o.rus == 0 {
		o.rus = 4000
	}
	st, err := storage.Open(storage.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	eo := engine.Options{PartitionMaxRUs: 1000, NoThrottle: !o.throttle, TTLSweepInterval: -1}
	if o.now != nil {
		eo.Now = o.now
	}
	eng, err := engine.Open(st, eo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close(); st.Close() })
	if _, err := eng.CreateDatabase("db", engine.Throughput{}); err != nil {
		t.Fatal(err)
	}
	def := epk.Definition{Kind: "Hash", Version: 2, Paths: []string{o.pkPath}}
	if _, err := eng.CreateContainer("db", engine.ContainerSpec{ID: "graph", PartitionKey: def}, engine.Throughput{RUs: o.rus}); err != nil {
		t.Fatal(err)
	}
	c, err := eng.Container("db", "graph")
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &env{eng: eng, c: c, s: s}
}

// vertex builds a vertex with single-valued properties (key, value, key,
// value, ...).
func vertex(id, label string, pk any, kv ...any) *graph.Vertex {
	v := &graph.Vertex{ID: id, Label: label, PartitionKey: pk, Properties: map[string][]*graph.VertexProperty{}}
	for i := 0; i+1 < len(kv); i += 2 {
		k := kv[i].(string)
		if _, ok := v.Properties[k]; !ok {
			v.Keys = append(v.Keys, k)
		}
		v.Properties[k] = append(v.Properties[k], &graph.VertexProperty{Key: k, Value: kv[i+1]})
	}
	return v
}

func ref(v *graph.Vertex) graph.Ref {
	return graph.Ref{ID: v.ID, Label: v.Label, PartitionKey: v.PartitionKey}
}

func edge(id, label string, out, in *graph.Vertex, kv ...any) *graph.Edge {
	e := &graph.Edge{ID: id, Label: label, Out: ref(out), In: ref(in), Properties: map[string]any{}}
	for i := 0; i+1 < len(kv); i += 2 {
		k := kv[i].(string)
		e.Keys = append(e.Keys, k)
		e.Properties[k] = kv[i+1]
	}
	return e
}

func (e *env) apply(t testing.TB, ms ...graph.Mutation) graph.StoreOp {
	t.Helper()
	op, err := e.s.Apply(context.Background(), ms)
	if err != nil {
		t.Fatal(err)
	}
	return op
}

func addV(vs ...*graph.Vertex) []graph.Mutation {
	var ms []graph.Mutation
	for _, v := range vs {
		ms = append(ms, graph.Mutation{Kind: graph.AddVertex, Vertex: v})
	}
	return ms
}

func addE(es ...*graph.Edge) []graph.Mutation {
	var ms []graph.Mutation
	for _, e := range es {
		ms = append(ms, graph.Mutation{Kind: graph.AddEdge, Edge: e})
	}
	return ms
}

func ids[T interface{ *graph.Vertex | *graph.Edge }](xs []T) []string {
	var out []string
	for _, x := range xs {
		switch y := any(x).(type) {
		case *graph.Vertex:
			out = append(out, y.ID)
		case *graph.Edge:
			out = append(out, y.ID)
		}
	}
	sortStrings(out)
	return out
}

func same(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestAddAndReadVertexAndOutEdges(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := context.Background()
	marko := vertex("marko", "person", "p1", "name", "marko", "age", int32(29))
	vadas := vertex("vadas", "person", "p2", "name", "vadas", "age", int32(27))
	lop := vertex("lop", "software", "p1", "name", "lop", "lang", "java")
	e.apply(t, addV(marko, vadas, lop)...)
	e.apply(t, addE(edge("e1", "knows", marko, vadas, "weight", 0.5), edge("e2", "created", marko, lop, "weight", 0.4))...)

	vs, op, err := e.s.Vertices(ctx, graph.VertexQuery{IDs: []string{"marko"}, PartitionKeys: []any{"p1"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 1 || vs[0].ID != "marko" || vs[0].Label != "person" || vs[0].PartitionKey != "p1" {
		t.Fatalf("got %+v", vs)
	}
	if op.Partitions != 1 || op.Count != 1 || op.Charge <= 0 || op.Size <= 0 {
		t.Errorf("point read StoreOp %+v", op)
	}
	if got := vs[0].Properties["age"]; len(got) != 1 || got[0].Value != int64(29) || got[0].ID == "" {
		t.Errorf("age: %+v", got)
	}
	if got := vs[0].Properties["pk"]; len(got) != 1 || got[0].Value != "p1" {
		t.Errorf("the partition key property: %+v", got)
	}
	if want := []string{"name", "age", "pk"}; !same(vs[0].Keys, want) {
		// Keys keeps the order written; the partition key comes last.
		if len(vs[0].Keys) != 3 || vs[0].Keys[0] != "name" || vs[0].Keys[1] != "age" {
			t.Errorf("keys %v, want %v", vs[0].Keys, want)
		}
	}

	es, _, err := e.s.Edges(ctx, graph.EdgeQuery{Vertices: []graph.Ref{ref(marko)}, Dir: graph.Out})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(es); !same(got, []string{"e1", "e2"}) {
		t.Fatalf("out edges %v", got)
	}
	for _, x := range es {
		if x.Out.ID != "marko" || x.Out.PartitionKey != "p1" || x.Out.Label != "person" {
			t.Errorf("edge %s out %+v", x.ID, x.Out)
		}
		if x.ID == "e1" && (x.In.ID != "vadas" || x.In.PartitionKey != "p2" || x.Properties["weight"] != 0.5) {
			t.Errorf("e1 %+v", x)
		}
	}
	es, _, err = e.s.Edges(ctx, graph.EdgeQuery{Vertices: []graph.Ref{ref(marko)}, Dir: graph.Out, Labels: []string{"knows"}})
	if err != nil || !same(ids(es), []string{"e1"}) {
		t.Fatalf("out knows: %v %v", ids(es), err)
	}
}

func TestVertexWithoutPartitionKeyRefused(t *testing.T) {
	e := newEnv(t, envOpts{})
	_, err := e.s.Apply(context.Background(), addV(vertex("x", "person", nil)))
	if !errors.Is(err, ErrInvalid) || !errors.Is(err, engine.ErrBadRequest) {
		t.Fatalf("got %v, want ErrInvalid", err)
	}
}

var _ = lang.P{}
