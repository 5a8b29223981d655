package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/api/gremlin/graph"
	"github.com/parsecdb/parsec/internal/api/gremlin/lang"
	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/epk"
)

func p(op string, args ...any) lang.P { return lang.P{Op: op, Args: args} }

func TestMultiValuedAndMetaPropertiesRoundTrip(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := context.Background()
	v := vertex("marko", "person", "p1", "name", "marko")
	v.Keys = append(v.Keys, "location")
	v.Properties["location"] = []*graph.VertexProperty{
		{ID: "loc-1", Key: "location", Value: "san diego", Meta: map[string]any{"startTime": int32(1997), "endTime": int64(2001)}},
		{Key: "location", Value: "santa cruz", Meta: map[string]any{"current": true, "score": 2.5}},
		{Key: "location", Value: "brussels"},
	}
	e.apply(t, addV(v)...)
	if v.Properties["location"][1].ID == "" || v.Properties["name"][0].ID == "" {
		t.Fatal("property ids were not given")
	}
	vs, _, err := e.s.Vertices(ctx, graph.VertexQuery{IDs: []string{"marko"}, PartitionKeys: []any{"p1"}})
	if err != nil || len(vs) != 1 {
		t.Fatalf("%v %v", vs, err)
	}
	got := vs[0].Properties["location"]
	if len(got) != 3 {
		t.Fatalf("location has %d values, want 3", len(got))
	}
	for i, want := range v.Properties["location"] {
		g := got[i]
		if g.ID != want.ID || g.Value != want.Value || g.Key != "location" || g.Vertex != vs[0] {
			t.Errorf("value %d: %+v, want %+v", i, g, want)
		}
	}
	if m := got[0].Meta; m["startTime"] != int64(1997) || m["endTime"] != int64(2001) || len(m) != 2 {
		t.Errorf("meta-properties %v", m)
	}
	if m := got[1].Meta; m["current"] != true || m["score"] != 2.5 {
		t.Errorf("meta-properties %v", m)
	}
	if got[2].Meta != nil {
		t.Errorf("meta-properties %v, want none", got[2].Meta)
	}
	if want := []string{"name", "location", "pk"}; !same(vs[0].Keys, want) {
		t.Errorf("keys %v, want %v", vs[0].Keys, want)
	}
	// The partition key property's id is "<vertex id>|<key>", as Cosmos DB
	// answers: a captured response in a public client reads
	// "pk":[{"id":"1st+derbyshire+...+1947|pk","value":"pk"}].
	if pk := vs[0].Properties["pk"]; len(pk) != 1 || pk[0].ID != "marko|pk" || pk[0].Value != "p1" {
		t.Errorf("partition key property %+v", pk)
	}
	// Whole floats stay floats; integers stay integers.
	w := vertex("w", "thing", "p1", "f", 2.0, "i", int64(2), "big", int64(1)<<60)
	e.apply(t, addV(w)...)
	vs, _, err = e.s.Vertices(ctx, graph.VertexQuery{IDs: []string{"w"}, PartitionKeys: []any{"p1"}})
	if err != nil || len(vs) != 1 {
		t.Fatalf("%v %v", vs, err)
	}
	if f := vs[0].Properties["f"][0].Value; f != 2.0 {
		t.Errorf("f = %#v, want float64 2", f)
	}
	if i := vs[0].Properties["i"][0].Value; i != int64(2) {
		t.Errorf("i = %#v, want int64 2", i)
	}
	if b := vs[0].Properties["big"][0].Value; b != int64(1)<<60 {
		t.Errorf("big = %#v", b)
	}
}

// predicateGraph writes six vertices over four partition keys for the
// predicate tests.
func predicateGraph(t *testing.T, e *env) {
	frank := vertex("v6", "person", "b", "name", "frank", "name", "francis")
	e.apply(t, addV(
		vertex("v1", "person", "a", "name", "alice", "age", int32(10)),
		vertex("v2", "person", "b", "name", "bob", "age", int64(20)),
		vertex("v3", "person", "c", "name", "carol", "age", int32(30)),
		vertex("v4", "robot", "d", "name", "dave", "age", 40.5),
		vertex("v5", "person", "a", "name", "erin", "age", "old"),
		frank,
	)...)
}

func TestHasPushDownEachPredicate(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := context.Background()
	predicateGraph(t, e)
	withAge := []string{"v1", "v2", "v3", "v4", "v5"}
	all := []string{"v1", "v2", "v3", "v4", "v5", "v6"}
	cases := []struct {
		key  string
		t    bool
		p    lang.P
		want []string
		// exact is set when the SQL alone selects want (the predicate is
		// pushed down); otherwise the SQL selects superset.
		exact    bool
		superset []string
	}{
		{key: "age", p: p("eq", int32(20)), want: []string{"v2"}, exact: true},
		{key: "age", p: p("eq", 20.0), want: []string{"v2"}, exact: true},
		{key: "age", p: p("neq", int32(20)), want: []string{"v1", "v3", "v4", "v5"}, superset: withAge},
		{key: "age", p: p("lt", int32(30)), want: []string{"v1", "v2"}, exact: true},
		{key: "age", p: p("lte", int32(30)), want: []string{"v1", "v2", "v3"}, exact: true},
		{key: "age", p: p("gt", int32(30)), want: []string{"v4"}, exact: true},
		{key: "age", p: p("gte", int32(30)), want: []string{"v3", "v4"}, exact: true},
		{key: "age", p: p("inside", int32(10), int32(40)), want: []string{"v2", "v3"}, exact: true},
		{key: "age", p: p("outside", int32(20), int32(30)), want: []string{"v1", "v4"}, exact: true},
		{key: "age", p: p("between", int32(10), int32(30)), want: []string{"v1", "v2"}, exact: true},
		{key: "age", p: p("within", int32(10), int32(30), "old"), want: []string{"v1", "v3", "v5"}, exact: true},
		{key: "age", p: p("without", int32(10), int32(30)), want: []string{"v2", "v4", "v5"}, superset: withAge},
		{key: "name", p: p("startingWith", "fr"), want: []string{"v6"}, exact: true},
		{key: "name", p: p("endingWith", "ol"), want: []string{"v3"}, exact: true},
		{key: "name", p: p("containing", "a"), want: []string{"v1", "v3", "v4", "v6"}, exact: true},
		{key: "name", p: p("notStartingWith", "a"), want: []string{"v2", "v3", "v4", "v5", "v6"}, superset: all},
		{key: "name", p: p("notEndingWith", "e"), want: []string{"v2", "v3", "v5", "v6"}, superset: all},
		{key: "name", p: p("notContaining", "a"), want: []string{"v2", "v5"}, superset: all},
		{key: "name", p: p("regex", "^[ab]"), want: []string{"v1", "v2"}, superset: all},
		{key: "name", p: p("notRegex", "^[ab]"), want: []string{"v3", "v4", "v5", "v6"}, superset: all},
		{key: "age", p: p("and", p("gt", int32(10)), p("lt", int32(40))), want: []string{"v2", "v3"}, exact: true},
		{key: "age", p: p("and", p("gt", int32(10)), p("neq", int32(20))), want: []string{"v3", "v4"}, superset: []string{"v2", "v3", "v4"}},
		{key: "age", p: p("or", p("lt", int32(15)), p("gt", int32(35))), want: []string{"v1", "v4"}, exact: true},
		{key: "age", p: p("not", p("within", int32(10), int32(20))), want: []string{"v3", "v4", "v5"}, superset: withAge},
		{key: "age", p: lang.P{}, want: withAge, exact: true}, // has(key)
		{key: "id", t: true, p: p("within", "v1", "v3"), want: []string{"v1", "v3"}, exact: true},
		{key: "label", t: true, p: p("eq", "robot"), want: []string{"v4"}, exact: true},
		{key: "label", t: true, p: p("neq", "person"), want: []string{"v4"}, superset: all},
		{key: "pk", p: p("within", "a", "d"), want: []string{"v1", "v4", "v5"}, exact: true},
	}
	for _, tc := range cases {
		name := fmt.Sprintf("%s %s%v", tc.key, tc.p.Op, tc.p.Args)
		has := []graph.Has{{Key: tc.key, T: tc.t, P: tc.p}}
		vs, op, err := e.s.Vertices(ctx, graph.VertexQuery{Has: has})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got := ids(vs); !same(got, tc.want) {
			t.Errorf("%s: got %v, want %v", name, got, tc.want)
		}
		if op.Partitions != 4 {
			t.Errorf("%s: read %d partitions, want 4", name, op.Partitions)
		}
		// What the SQL alone selects, without the store's own test.
		sql, params := e.s.vertexSQL(graph.VertexQuery{Has: has}, nil)
		var sqlIDs []string
		err = e.s.runQuery(ctx, newAcct(), sql, params, engine.QueryScope{}, nil, func(row []byte) (bool, error) {
			var d struct{ ID string }
			if err := json.Unmarshal(row, &d); err != nil {
				return false, err
			}
			sqlIDs = append(sqlIDs, d.ID)
			return true, nil
		})
		if err != nil {
			t.Errorf("%s: %s: %v", name, sql, err)
			continue
		}
		sortStrings(sqlIDs)
		want := tc.want
		if !tc.exact {
			want = tc.superset
		}
		if !same(sqlIDs, want) {
			t.Errorf("%s: the query %s selects %v, want %v", name, sql, sqlIDs, want)
		}
	}
}

func TestIndexServesTopLevelConditions(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := context.Background()
	predicateGraph(t, e)
	_, op, err := e.s.Vertices(ctx, graph.VertexQuery{Labels: []string{"robot"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(op.Index, "/label/?") {
		t.Errorf("a label query used the index %q, want /label/?", op.Index)
	}
	_, op, err = e.s.Vertices(ctx, graph.VertexQuery{IDs: []string{"v1", "v2"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(op.Index, "/id/?") {
		t.Errorf("an id query used the index %q, want /id/?", op.Index)
	}
}

func TestIDsWithoutPartitionKey(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := context.Background()
	// Ids are unique per logical partition only.
	e.apply(t, addV(vertex("x", "a", "p1"), vertex("x", "b", "p2"), vertex("y", "a", "p3"))...)
	vs, op, err := e.s.Vertices(ctx, graph.VertexQuery{IDs: []string{"x"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 2 || vs[0].ID != "x" || vs[1].ID != "x" {
		t.Fatalf("got %d vertices %v", len(vs), ids(vs))
	}
	if op.Partitions != 4 || op.Count != 2 {
		t.Errorf("StoreOp %+v, want 4 partitions and 2 results", op)
	}
	// With the partition key, one.
	vs, _, err = e.s.Vertices(ctx, graph.VertexQuery{IDs: []string{"x"}, PartitionKeys: []any{"p2"}})
	if err != nil || len(vs) != 1 || vs[0].Label != "b" {
		t.Fatalf("%v %v", vs, err)
	}
	// An absent id, and an id the engine cannot hold, find nothing.
	vs, _, err = e.s.Vertices(ctx, graph.VertexQuery{IDs: []string{"nope", "a/b"}, PartitionKeys: []any{"p2"}})
	if err != nil || len(vs) != 0 {
		t.Fatalf("%v %v", vs, err)
	}
}

func TestFanout(t *testing.T) {
	e := newEnv(t, envOpts{rus: 4000})
	ctx := context.Background()
	if n := len(e.c.Partitions()); n != 4 {
		t.Fatalf("the container has %d partitions, want 4", n)
	}
	for i := 0; i < 20; i++ {
		e.apply(t, addV(vertex(fmt.Sprint("v", i), "n", fmt.Sprint("k", i)))...)
	}
	_, op, err := e.s.Vertices(ctx, graph.VertexQuery{IDs: []string{"v3"}, PartitionKeys: []any{"k3"}})
	if err != nil || op.Partitions != 1 || op.Count != 1 {
		t.Errorf("routed point read: %+v %v", op, err)
	}
	_, op, err = e.s.Vertices(ctx, graph.VertexQuery{PartitionKeys: []any{"k5"}, Labels: []string{"n"}})
	if err != nil || op.Partitions != 1 || op.Count != 1 {
		t.Errorf("routed query: %+v %v", op, err)
	}
	_, op, err = e.s.Vertices(ctx, graph.VertexQuery{Labels: []string{"n"}})
	if err != nil || op.Partitions != 4 || op.Count != 20 || op.Charge <= 0 || op.Size <= 0 {
		t.Errorf("unrouted query: %+v %v", op, err)
	}
	_, all, err := e.s.Vertices(ctx, graph.VertexQuery{})
	if err != nil {
		t.Fatal(err)
	}
	vs, op, err := e.s.Vertices(ctx, graph.VertexQuery{Limit: 3})
	if err != nil || len(vs) != 3 || op.Count != 3 {
		t.Errorf("limit 3: %d vertices, %+v %v", len(vs), op, err)
	}
	// A limit reads less than the whole container.
	if op.Size >= all.Size || op.Charge >= all.Charge {
		t.Errorf("limit 3 read %d bytes for %.2f RU; all 20 read %d bytes for %.2f RU", op.Size, op.Charge, all.Size, all.Charge)
	}
}

// star writes a hub vertex with edges in from vertices of every partition
// key and out to some of them.
func star(t *testing.T, e *env) (hub *graph.Vertex, spokes []*graph.Vertex) {
	hub = vertex("hub", "hub", "h")
	e.apply(t, addV(hub)...)
	for i := 0; i < 12; i++ {
		v := vertex(fmt.Sprint("s", i), "spoke", fmt.Sprint("k", i))
		spokes = append(spokes, v)
		e.apply(t, addV(v)...)
		e.apply(t, addE(edge(fmt.Sprint("in", i), "to", v, hub, "w", int32(i)))...)
	}
	e.apply(t, addE(edge("out0", "from", hub, spokes[0]), edge("out1", "from", hub, spokes[1]))...)
	// A vertex with the hub's id in another partition, with its own in
	// edge: not the hub's.
	other := vertex("hub", "hub", "elsewhere")
	e.apply(t, addV(other)...)
	e.apply(t, addE(edge("in-other", "to", spokes[2], other))...)
	return hub, spokes
}

func TestInEdgesAcrossPartitionsThroughTheIndex(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := context.Background()
	hub, spokes := star(t, e)
	es, op, err := e.s.Edges(ctx, graph.EdgeQuery{Vertices: []graph.Ref{ref(hub)}, Dir: graph.In})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := range spokes {
		want = append(want, fmt.Sprint("in", i))
	}
	sortStrings(want)
	if got := ids(es); !same(got, want) {
		t.Fatalf("in edges %v, want %v", got, want)
	}
	if op.Partitions != 4 || !strings.Contains(op.Index, "/_sink/?") || op.Count != 12 {
		t.Errorf("StoreOp %+v, want 4 partitions through /_sink/?", op)
	}
	for _, x := range es {
		if x.In.ID != "hub" || x.In.PartitionKey != "h" || x.Out.Label != "spoke" {
			t.Errorf("edge %+v", x)
		}
	}
	// Both: the in edges, and the out edges read in the hub's partition.
	es, _, err = e.s.Edges(ctx, graph.EdgeQuery{Vertices: []graph.Ref{ref(hub)}, Dir: graph.Both, Labels: []string{"from"}})
	if err != nil || !same(ids(es), []string{"out0", "out1"}) {
		t.Fatalf("both/from: %v %v", ids(es), err)
	}
	es, _, err = e.s.Edges(ctx, graph.EdgeQuery{Vertices: []graph.Ref{ref(hub)}, Dir: graph.Both})
	if err != nil || len(es) != 14 {
		t.Fatalf("both: %d edges %v", len(es), err)
	}
	// Has on an edge property, through the index.
	es, op, err = e.s.Edges(ctx, graph.EdgeQuery{Vertices: []graph.Ref{ref(hub)}, Dir: graph.In, Has: []graph.Has{{Key: "w", P: p("gte", int32(10))}}})
	if err != nil || !same(ids(es), []string{"in10", "in11"}) {
		t.Fatalf("in has w >= 10: %v %v", ids(es), err)
	}
	// g.E() with a condition.
	es, op, err = e.s.Edges(ctx, graph.EdgeQuery{Has: []graph.Has{{Key: "w", P: p("lt", int32(2))}}})
	if err != nil || !same(ids(es), []string{"in0", "in1"}) || op.Partitions != 4 || !strings.Contains(op.Index, "/w/?") {
		t.Fatalf("g.E().has(w < 2): %v %+v %v", ids(es), op, err)
	}
	// g.E(id) without vertices.
	es, _, err = e.s.Edges(ctx, graph.EdgeQuery{IDs: []string{"out1", "in3"}})
	if err != nil || !same(ids(es), []string{"in3", "out1"}) {
		t.Fatalf("g.E(ids): %v %v", ids(es), err)
	}
	// A self-loop read both ways is one edge.
	loop := vertex("loop", "l", "k1")
	e.apply(t, addV(loop)...)
	e.apply(t, addE(edge("self", "l", loop, loop))...)
	es, _, err = e.s.Edges(ctx, graph.EdgeQuery{Vertices: []graph.Ref{ref(loop)}, Dir: graph.Both})
	if err != nil || !same(ids(es), []string{"self"}) {
		t.Fatalf("self-loop: %v %v", ids(es), err)
	}
}

func TestDropVertexDropsItsEdges(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := context.Background()
	hub, spokes := star(t, e)
	// An in edge from the hub's own partition.
	near := vertex("near", "spoke", "h")
	e.apply(t, addV(near)...)
	e.apply(t, addE(edge("near-in", "to", near, hub))...)
	op := e.apply(t, graph.Mutation{Kind: graph.DropVertex, Vertex: &graph.Vertex{ID: "hub", PartitionKey: "h"}})
	// The vertex, its 2 out edges and 13 in edges (12 from other
	// partitions, on 4 partitions).
	if op.Count != 16 || op.Charge <= 0 || op.Partitions != 4 {
		t.Errorf("StoreOp %+v", op)
	}
	vs, _, err := e.s.Vertices(ctx, graph.VertexQuery{IDs: []string{"hub"}})
	if err != nil || len(vs) != 1 || vs[0].PartitionKey != "elsewhere" {
		t.Fatalf("after the drop: %v %v", ids(vs), err)
	}
	es, _, err := e.s.Edges(ctx, graph.EdgeQuery{})
	if err != nil || !same(ids(es), []string{"in-other"}) {
		t.Fatalf("edges left: %v %v", ids(es), err)
	}
	vs, _, err = e.s.Vertices(ctx, graph.VertexQuery{Labels: []string{"spoke"}})
	if err != nil || len(vs) != len(spokes)+1 {
		t.Fatalf("spokes left: %d %v", len(vs), err)
	}
	// Dropping an edge.
	e.apply(t, graph.Mutation{Kind: graph.DropEdge, Edge: &graph.Edge{ID: "in-other", Out: ref(spokes[2])}})
	es, _, err = e.s.Edges(ctx, graph.EdgeQuery{})
	if err != nil || len(es) != 0 {
		t.Fatalf("edges left: %v %v", ids(es), err)
	}
}

func TestGroupIsAtomic(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := context.Background()
	e.apply(t, addV(vertex("taken", "x", "a"))...)
	// One partition: the conflict undoes the create before it.
	_, err := e.s.Apply(ctx, addV(vertex("new1", "x", "a"), vertex("taken", "x", "a")))
	if !errors.Is(err, engine.ErrConflict) {
		t.Fatalf("got %v, want a conflict", err)
	}
	var pw *graph.PartialWriteError
	if errors.As(err, &pw) {
		t.Fatalf("nothing was written, yet %v", err)
	}
	vs, _, _ := e.s.Vertices(ctx, graph.VertexQuery{IDs: []string{"new1"}})
	if len(vs) != 0 {
		t.Fatal("the create before the conflict was written")
	}
	// Two partitions: the first commits, the second fails whole.
	_, err = e.s.Apply(ctx, append(addV(vertex("b1", "x", "b")), addV(vertex("new2", "x", "a"), vertex("taken", "x", "a"))...))
	if !errors.As(err, &pw) || pw.Written != 1 || !errors.Is(err, engine.ErrConflict) {
		t.Fatalf("got %v, want a partial write of 1 with a conflict", err)
	}
	vs, _, _ = e.s.Vertices(ctx, graph.VertexQuery{IDs: []string{"b1", "new2"}})
	if !same(ids(vs), []string{"b1"}) {
		t.Fatalf("written: %v, want b1", ids(vs))
	}
}

func TestLargeGroupIsSplit(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := context.Background()
	var vs []*graph.Vertex
	for i := 0; i < 150; i++ {
		vs = append(vs, vertex(fmt.Sprintf("v%03d", i), "x", "one"))
	}
	// The 121st conflicts: the first batch of 100 is written, the second
	// (100..149) is not.
	e.apply(t, addV(vertex("v120", "x", "one"))...)
	_, err := e.s.Apply(ctx, addV(vs...))
	var pw *graph.PartialWriteError
	if !errors.As(err, &pw) || pw.Written != 100 || !errors.Is(err, engine.ErrConflict) {
		t.Fatalf("got %v, want a partial write of 100", err)
	}
	got, _, err := e.s.Vertices(ctx, graph.VertexQuery{PartitionKeys: []any{"one"}})
	if err != nil || len(got) != 101 {
		t.Fatalf("%d vertices, want 101: %v", len(got), err)
	}
}

func TestUpdateReplacesTheVersionRead(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := context.Background()
	e.apply(t, addV(vertex("v", "x", "a", "n", int32(1)))...)
	read := func(s *Store) *graph.Vertex {
		vs, _, err := s.Vertices(ctx, graph.VertexQuery{IDs: []string{"v"}, PartitionKeys: []any{"a"}})
		if err != nil || len(vs) != 1 {
			t.Fatalf("%v %v", vs, err)
		}
		return vs[0]
	}
	other, err := New(e.c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mine, theirs := read(e.s), read(other)
	theirs.Properties["n"][0].Value = int32(2)
	if _, err := other.Apply(ctx, []graph.Mutation{{Kind: graph.UpdateVertex, Vertex: theirs}}); err != nil {
		t.Fatal(err)
	}
	mine.Properties["n"][0].Value = int32(3)
	_, err = e.s.Apply(ctx, []graph.Mutation{{Kind: graph.UpdateVertex, Vertex: mine}})
	if !errors.Is(err, engine.ErrPreconditionFailed) {
		t.Fatalf("got %v, want precondition failed", err)
	}
	// Read again, then update twice in one Apply.
	mine = read(e.s)
	mine.Properties["n"][0].Value = int32(4)
	again := *mine
	again.Properties = map[string][]*graph.VertexProperty{"n": {{Key: "n", Value: int32(5)}}}
	e.apply(t, graph.Mutation{Kind: graph.UpdateVertex, Vertex: mine}, graph.Mutation{Kind: graph.UpdateVertex, Vertex: &again})
	if got := read(e.s).Properties["n"][0].Value; got != int64(5) {
		t.Fatalf("n = %v, want 5", got)
	}
	// Dropping a property.
	v := read(e.s)
	delete(v.Properties, "n")
	e.apply(t, graph.Mutation{Kind: graph.DropVertexProperty, Vertex: v})
	if got := read(e.s).Properties["n"]; got != nil {
		t.Fatalf("n = %v after the drop", got)
	}
	// Edge update and property drop.
	w := vertex("w", "x", "b")
	e.apply(t, addV(w)...)
	ed := edge("e", "l", read(e.s), w, "k", "v1")
	e.apply(t, addE(ed)...)
	ed.Properties["k"] = "v2"
	e.apply(t, graph.Mutation{Kind: graph.UpdateEdge, Edge: ed})
	es, _, err := e.s.Edges(ctx, graph.EdgeQuery{IDs: []string{"e"}})
	if err != nil || len(es) != 1 || es[0].Properties["k"] != "v2" {
		t.Fatalf("%v %v", es, err)
	}
	delete(es[0].Properties, "k")
	e.apply(t, graph.Mutation{Kind: graph.DropEdgeProperty, Edge: es[0]})
	es, _, err = e.s.Edges(ctx, graph.EdgeQuery{IDs: []string{"e"}})
	if err != nil || len(es) != 1 || len(es[0].Properties) != 0 {
		t.Fatalf("%v %v", es, err)
	}
}

func TestItemsReadableThroughNoSQL(t *testing.T) {
	e := newEnv(t, envOpts{})
	v := vertex("marko", "person", "p1", "name", "marko")
	v.Properties["name"][0].Meta = map[string]any{"since": int32(2001)}
	w := vertex("vadas", "person", "p2")
	e.apply(t, addV(v, w)...)
	e.apply(t, addE(edge("e1", "knows", v, w, "weight", 0.5))...)
	read := func(pk, id string) map[string]any {
		op, err := e.c.PrepareKeyed(engine.OpRead, id, epk.Key{epk.String(pk)}, true)
		if err != nil {
			t.Fatal(err)
		}
		r, _, err := e.c.ReadItem(op)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(r.Doc, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	vd := read("p1", "marko")
	if vd["id"] != "marko" || vd["label"] != "person" || vd["pk"] != "p1" || vd["_isEdge"] != nil {
		t.Errorf("vertex document %v", vd)
	}
	names, _ := vd["name"].([]any)
	if len(names) != 1 {
		t.Fatalf("name is %v, want a list of one", vd["name"])
	}
	n0, _ := names[0].(map[string]any)
	if n0["_value"] != "marko" || n0["id"] == "" || n0["id"] == nil {
		t.Errorf("name value %v", n0)
	}
	if meta, _ := n0["_meta"].(map[string]any); meta["since"] != 2001.0 {
		t.Errorf("_meta %v", n0["_meta"])
	}
	ed := read("p1", "e1")
	want := map[string]any{"id": "e1", "label": "knows", "_isEdge": true, "_vertexId": "marko", "_vertexLabel": "person",
		"_sink": "vadas", "_sinkLabel": "person", "_sinkPartition": "p2", "pk": "p1", "weight": 0.5}
	for k, x := range want {
		if ed[k] != x {
			t.Errorf("edge document: %s = %v, want %v", k, ed[k], x)
		}
	}
	// And a document written through the NoSQL API reads as a vertex.
	op, err := e.c.PrepareWrite(engine.OpCreate, []byte(`{"id":"doc","label":"thing","pk":"p3","color":"red","tags":[{"id":"t1","_value":"x"}]}`), epk.Key{epk.String("p3")}, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.c.Execute(&engine.Command{Ops: []engine.Op{op}}, ""); err != nil {
		t.Fatal(err)
	}
	vs, _, err := e.s.Vertices(context.Background(), graph.VertexQuery{Has: []graph.Has{{Key: "color", P: p("eq", "red")}}})
	if err != nil || len(vs) != 1 || vs[0].Properties["tags"][0].ID != "t1" {
		t.Fatalf("%v %v", vs, err)
	}
	// A flat value's id is "<vertex id>|<key>", as the partition key's.
	if c := vs[0].Properties["color"]; len(c) != 1 || c[0].ID != "doc|color" || c[0].Value != "red" {
		t.Errorf("color %+v", c)
	}
}

func TestNewRefusesPartitionKeys(t *testing.T) {
	for _, path := range []string{"/id", "/label", "/a/b", "/_sink"} {
		e := newEnv(t, envOpts{pkPath: "/pk"})
		def := epk.Definition{Kind: "Hash", Version: 2, Paths: []string{path}}
		if _, err := e.eng.CreateContainer("db", engine.ContainerSpec{ID: "g2", PartitionKey: def}, engine.Throughput{}); err != nil {
			t.Fatal(err)
		}
		c, err := e.eng.Container("db", "g2")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := New(c, Options{}); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: got %v, want ErrInvalid", path, err)
		}
	}
}

func TestInvalidInput(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := context.Background()
	bad := []graph.Mutation{
		{Kind: graph.AddVertex, Vertex: vertex("a", "x", "k", "id", "no")},
		{Kind: graph.AddVertex, Vertex: vertex("a", "x", "k", "_sink", "no")},
		{Kind: graph.AddVertex, Vertex: vertex("a", "x", "k", "m", map[string]any{})},
		{Kind: graph.AddVertex, Vertex: vertex("a", "x", []any{1})},
		{Kind: graph.AddEdge, Edge: &graph.Edge{ID: "e", Label: "l", Out: graph.Ref{ID: "a"}, In: graph.Ref{ID: "b", PartitionKey: "k"}}},
		{Kind: graph.AddEdge, Edge: &graph.Edge{ID: "e", Label: "l", Out: graph.Ref{ID: "a", PartitionKey: "k"}, In: graph.Ref{ID: "b", PartitionKey: "k"}, Properties: map[string]any{"pk": "x"}}},
		{Kind: graph.AddVertex},
		{Kind: graph.MutationKind(99)},
	}
	for i, m := range bad {
		if _, err := e.s.Apply(ctx, []graph.Mutation{m}); !errors.Is(err, ErrInvalid) {
			t.Errorf("mutation %d: got %v, want ErrInvalid", i, err)
		}
	}
	for _, pr := range []lang.P{p("bogus", 1), p("lt"), p("regex", "("), p("and", 1), p("and", p("gt", 1), p("bogus")), p("or", p("lt", 1), p("regex", "[")), p("startingWith", 1), p("not")} {
		if _, _, err := e.s.Vertices(ctx, graph.VertexQuery{Has: []graph.Has{{Key: "a", P: pr}}}); !errors.Is(err, ErrInvalid) {
			t.Errorf("%v: got %v, want ErrInvalid", pr, err)
		}
	}
}

func TestThrottledThroughApplyAndVertices(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	e := newEnv(t, envOpts{rus: 400, throttle: true, now: func() time.Time { return now }})
	ctx := context.Background()
	big := strings.Repeat("x", 64<<10)
	var err error
	// The clock stands still, so the budget does not refill: a burst of
	// writes runs out of it.
	for i := 0; i < 2000 && err == nil; i++ {
		_, err = e.s.Apply(ctx, addV(vertex(fmt.Sprint("v", i), "x", "k", "blob", big)))
	}
	var te *engine.ThrottledError
	if !errors.As(err, &te) || te.RetryAfter <= 0 || !errors.Is(err, engine.ErrThrottled) {
		t.Fatalf("got %v, want the engine's throttling error", err)
	}
	_, _, err = e.s.Vertices(ctx, graph.VertexQuery{Labels: []string{"x"}})
	if !errors.As(err, &te) {
		t.Fatalf("query: got %v, want the engine's throttling error", err)
	}
	_, _, err = e.s.Vertices(ctx, graph.VertexQuery{IDs: []string{"v0"}, PartitionKeys: []any{"k"}})
	if !errors.As(err, &te) {
		t.Fatalf("point read: got %v, want the engine's throttling error", err)
	}
}

func TestMaxElements(t *testing.T) {
	e := newEnv(t, envOpts{})
	s, err := New(e.c, Options{MaxElements: 5})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 6; i++ {
		e.apply(t, addV(vertex(fmt.Sprint("v", i), "x", "k"))...)
	}
	if _, _, err := s.Vertices(context.Background(), graph.VertexQuery{}); !errors.Is(err, ErrTooManyElements) {
		t.Fatalf("got %v, want ErrTooManyElements", err)
	}
	if vs, _, err := s.Vertices(context.Background(), graph.VertexQuery{Limit: 5}); err != nil || len(vs) != 5 {
		t.Fatalf("limit 5: %d %v", len(vs), err)
	}
}

func TestDropInTheSameApplyAsTheEdgesCreated(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := context.Background()
	a, b, c := vertex("a", "x", "k1"), vertex("b", "x", "k2"), vertex("c", "x", "k3")
	ms := addV(a, b, c)
	ms = append(ms, addE(edge("ab", "l", a, b), edge("cb", "l", c, b), edge("bc", "l", b, c))...)
	ms = append(ms, graph.Mutation{Kind: graph.DropVertex, Vertex: b})
	op := e.apply(t, ms...)
	// 3 vertices and 3 edges created, then b and its 3 edges deleted.
	if op.Count != 10 {
		t.Errorf("wrote %d items, want 10", op.Count)
	}
	es, _, err := e.s.Edges(ctx, graph.EdgeQuery{})
	if err != nil || len(es) != 0 {
		t.Fatalf("edges left: %v %v", ids(es), err)
	}
	vs, _, err := e.s.Vertices(ctx, graph.VertexQuery{})
	if err != nil || !same(ids(vs), []string{"a", "c"}) {
		t.Fatalf("vertices left: %v %v", ids(vs), err)
	}
}

// TestAgainstModel runs random single writes against the store and a map
// of the graph, and compares every read.
func TestAgainstModel(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := context.Background()
	type medge struct {
		id, label string
		out, in   vkey
	}
	verts := map[vkey]string{} // → label
	edges := map[vkey]medge{}  // (out pk, edge id) → edge
	rng := uint64(12345)
	next := func(n int) int {
		rng ^= rng << 13
		rng ^= rng >> 7
		rng ^= rng << 17
		return int(rng % uint64(n))
	}
	pks := []string{"k0", "k1", "k2", "k3", "k4"}
	done := map[graph.MutationKind]int{}
	maxEdges := 0
	defer func() {
		t.Logf("writes by kind %v, at most %d edges", done, maxEdges)
		// The walk must have done each kind of write, on a graph with edges.
		if !t.Failed() && (done[graph.AddVertex] < 5 || done[graph.AddEdge] < 5 || done[graph.DropVertex] < 3 || done[graph.DropEdge] < 3 || maxEdges < 5) {
			t.Errorf("the walk did too little: %v, at most %d edges", done, maxEdges)
		}
	}()
	refOf := func(k vkey) graph.Ref { return graph.Ref{ID: k.id, Label: verts[k], PartitionKey: k.pk} }
	for step := 0; step < 150; step++ {
		var m graph.Mutation
		var wantErr error
		apply := func() {}
		switch op := next(10); {
		case op < 4 || len(verts) < 2:
			k := vkey{pks[next(len(pks))], fmt.Sprint("v", next(12))}
			label := fmt.Sprint("L", next(3))
			m = graph.Mutation{Kind: graph.AddVertex, Vertex: vertex(k.id, label, k.pk)}
			if _, ok := verts[k]; ok {
				wantErr = engine.ErrConflict
			} else {
				apply = func() { verts[k] = label }
			}
		case op < 8:
			keys := keysOf(verts)
			out, in := keys[next(len(keys))], keys[next(len(keys))]
			id := fmt.Sprint("e", next(30))
			ed := &graph.Edge{ID: id, Label: fmt.Sprint("E", next(2)), Out: refOf(out), In: refOf(in), Properties: map[string]any{}}
			m = graph.Mutation{Kind: graph.AddEdge, Edge: ed}
			if _, ok := edges[vkey{out.pk, id}]; ok {
				wantErr = engine.ErrConflict
			} else if _, ok := verts[vkey{out.pk, id}]; ok {
				wantErr = engine.ErrConflict // ids are shared by vertices and edges
			} else {
				apply = func() { edges[vkey{out.pk, id}] = medge{id, ed.Label, out, in} }
			}
		case op < 9:
			keys := keysOf(verts)
			k := keys[next(len(keys))]
			m = graph.Mutation{Kind: graph.DropVertex, Vertex: &graph.Vertex{ID: k.id, PartitionKey: k.pk}}
			apply = func() {
				delete(verts, k)
				for ek, x := range edges {
					if x.out == k || x.in == k {
						delete(edges, ek)
					}
				}
			}
		default:
			if len(edges) == 0 {
				continue
			}
			var eks []vkey
			for ek := range edges {
				eks = append(eks, ek)
			}
			sortVKeys(eks)
			ek := eks[next(len(eks))]
			x := edges[ek]
			m = graph.Mutation{Kind: graph.DropEdge, Edge: &graph.Edge{ID: x.id, Out: refOf(x.out)}}
			apply = func() { delete(edges, ek) }
		}
		if m.Kind == graph.AddVertex {
			if _, ok := edges[vkey{m.Vertex.PartitionKey.(string), m.Vertex.ID}]; ok {
				wantErr, apply = engine.ErrConflict, func() {}
			}
		}
		_, err := e.s.Apply(ctx, []graph.Mutation{m})
		if wantErr != nil {
			if !errors.Is(err, wantErr) {
				t.Fatalf("step %d %+v: got %v, want %v", step, m, err, wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		apply()
		done[m.Kind]++
		maxEdges = max(maxEdges, len(edges))
		if step%10 != 9 {
			continue
		}
		// Compare every read.
		vs, _, err := e.s.Vertices(ctx, graph.VertexQuery{})
		if err != nil {
			t.Fatal(err)
		}
		var got, want []string
		for _, v := range vs {
			got = append(got, v.PartitionKey.(string)+"/"+v.ID+"/"+v.Label)
		}
		for k, l := range verts {
			want = append(want, k.pk+"/"+k.id+"/"+l)
		}
		sortStrings(got)
		sortStrings(want)
		if !same(got, want) {
			t.Fatalf("step %d: vertices %v, want %v", step, got, want)
		}
		for k := range verts {
			for _, dir := range []graph.Direction{graph.Out, graph.In, graph.Both} {
				es, _, err := e.s.Edges(ctx, graph.EdgeQuery{Vertices: []graph.Ref{refOf(k)}, Dir: dir})
				if err != nil {
					t.Fatal(err)
				}
				got, want = nil, nil
				for _, x := range es {
					got = append(got, x.Out.PartitionKey.(string)+"/"+x.ID)
				}
				for ek, x := range edges {
					if (dir != graph.In && x.out == k) || (dir != graph.Out && x.in == k) {
						want = append(want, ek.pk+"/"+ek.id)
					}
				}
				sortStrings(got)
				sortStrings(want)
				if !same(got, want) {
					t.Fatalf("step %d: edges %v of %v: %v, want %v", step, dir, k, got, want)
				}
			}
		}
	}
}

// vkey names a vertex (or an edge) by partition key and id.
type vkey struct{ pk, id string }

func sortVKeys(ks []vkey) {
	sort.Slice(ks, func(i, j int) bool {
		return ks[i].pk < ks[j].pk || (ks[i].pk == ks[j].pk && ks[i].id < ks[j].id)
	})
}

func keysOf(m map[vkey]string) []vkey {
	out := make([]vkey, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sortVKeys(out)
	return out
}

func TestOddPropertyKeys(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := context.Background()
	keys := []string{`we"ird]key`, `back\\slash`, "ünï cödé", "with space", "a.b", "@p0", "'quote'"}
	for i, k := range keys {
		v := vertex(fmt.Sprint("v", i), "x", "k", k, int32(i))
		e.apply(t, addV(v)...)
		w := vertex(fmt.Sprint("w", i), "x", "k")
		e.apply(t, addV(w)...)
		e.apply(t, addE(edge(fmt.Sprint("e", i), "l", v, w, k, int32(i)))...)
	}
	for i, k := range keys {
		vs, _, err := e.s.Vertices(ctx, graph.VertexQuery{Has: []graph.Has{{Key: k, P: p("eq", int32(i))}}})
		if err != nil || !same(ids(vs), []string{fmt.Sprint("v", i)}) {
			t.Errorf("vertex key %q: %v %v", k, ids(vs), err)
		}
		es, _, err := e.s.Edges(ctx, graph.EdgeQuery{Has: []graph.Has{{Key: k, P: p("within", int32(i), int32(100))}}})
		if err != nil || !same(ids(es), []string{fmt.Sprint("e", i)}) {
			t.Errorf("edge key %q: %v %v", k, ids(es), err)
		}
	}
}

// TestVertexRefs: references select exact (partition key, id) pairs, each
// read in its own logical partition (the far ends of a hop), never the
// product of their ids and keys.
func TestVertexRefs(t *testing.T) {
	e := newEnv(t, envOpts{rus: 4000})
	ctx := context.Background()
	e.apply(t, addV(vertex("x", "a", "p1"), vertex("x", "b", "p2"), vertex("y", "a", "p1"), vertex("y", "c", "p3"))...)
	refs := []graph.Ref{{ID: "x", PartitionKey: "p2"}, {ID: "y", PartitionKey: "p1"}, {ID: "y", PartitionKey: "p1"}, {ID: "x", PartitionKey: "p9"}}
	vs, op, err := e.s.Vertices(ctx, graph.VertexQuery{Refs: refs})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, v := range vs {
		got[v.ID+"@"+fmt.Sprint(v.PartitionKey)] = v.Label
	}
	if len(vs) != 2 || got["x@p2"] != "b" || got["y@p1"] != "a" {
		t.Fatalf("got %v", got)
	}
	if op.Count != 2 || op.Partitions > 3 {
		t.Errorf("StoreOp %+v, want 2 results from at most 3 partitions", op)
	}
	// The other fields still restrict.
	vs, _, err = e.s.Vertices(ctx, graph.VertexQuery{Refs: refs, Labels: []string{"a"}})
	if err != nil || len(vs) != 1 || vs[0].ID != "y" {
		t.Fatalf("with a label: %v %v", ids(vs), err)
	}
	// A reference without a key finds its id in every partition.
	vs, _, err = e.s.Vertices(ctx, graph.VertexQuery{Refs: []graph.Ref{{ID: "y"}}})
	if err != nil || len(vs) != 2 {
		t.Fatalf("unkeyed: %v %v", ids(vs), err)
	}
}

// TestWholeFloatsThroughQueries: a whole float (1.0) keeps its type through
// the engine's query path, which re-encodes numbers by value (1.0 as 1),
// as it does through point reads; an integer stays an integer.
func TestWholeFloatsThroughQueries(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := context.Background()
	a := vertex("a", "person", "p1", "score", 2.0, "n", int64(2))
	a.Properties["score"][0].Meta = map[string]any{"w": 3.0, "i": int64(3)}
	b := vertex("b", "person", "p2", "n", int64(5))
	e.apply(t, addV(a, b)...)
	e.apply(t, addE(edge("e1", "knows", a, b, "weight", 1.0, "hops", int64(1)), edge("e2", "knows", b, a, "weight", 0.5))...)
	es, _, err := e.s.Edges(ctx, graph.EdgeQuery{Vertices: []graph.Ref{ref(a), ref(b)}, Dir: graph.Both})
	if err != nil || len(es) != 2 {
		t.Fatalf("%v %v", es, err)
	}
	for _, x := range es {
		switch x.ID {
		case "e1":
			if x.Properties["weight"] != 1.0 || x.Properties["hops"] != int64(1) {
				t.Errorf("e1: weight %#v, hops %#v", x.Properties["weight"], x.Properties["hops"])
			}
		case "e2":
			if x.Properties["weight"] != 0.5 {
				t.Errorf("e2: weight %#v", x.Properties["weight"])
			}
		}
	}
	vs, _, err := e.s.Vertices(ctx, graph.VertexQuery{Labels: []string{"person"}})
	if err != nil || len(vs) != 2 {
		t.Fatalf("%v %v", vs, err)
	}
	for _, v := range vs {
		if v.ID != "a" {
			if v.Properties["n"][0].Value != int64(5) {
				t.Errorf("b.n = %#v", v.Properties["n"][0].Value)
			}
			continue
		}
		p := v.Properties["score"][0]
		if p.Value != 2.0 || p.Meta["w"] != 3.0 || p.Meta["i"] != int64(3) || v.Properties["n"][0].Value != int64(2) {
			t.Errorf("a: score %#v meta %#v n %#v", p.Value, p.Meta, v.Properties["n"][0].Value)
		}
		if _, ok := v.Properties["_wholeFloats"]; ok {
			t.Error("the marker reads as a property")
		}
	}
	// A property cannot take the marker's name.
	if _, err := e.s.Apply(ctx, addV(vertex("c", "x", "p3", "_wholeFloats", true))); !errors.Is(err, ErrInvalid) {
		t.Errorf("a property named _wholeFloats: %v", err)
	}
}
