package traversal_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/api/gremlin/graph"
	"github.com/parsecdb/parsec/internal/api/gremlin/graph/memgraph"
	"github.com/parsecdb/parsec/internal/api/gremlin/lang"
	"github.com/parsecdb/parsec/internal/api/gremlin/traversal"
)

func mustRun(t *testing.T, s graph.Store, script string) *traversal.Result {
	t.Helper()
	res, err := runScript(t, s, script, traversal.Options{})
	if err != nil {
		t.Fatalf("%s: %v", script, err)
	}
	return res
}

func one(t *testing.T, s graph.Store, script string) string {
	t.Helper()
	return strings.Join(renderAll(mustRun(t, s, script).Values, true), " ")
}

func TestWrites(t *testing.T) {
	g := modern(t)
	// addV with the partition key property (Cosmos: every vertex needs it).
	res := mustRun(t, g, "g.addV('person').property('name','ann').property('age', 40)")
	if res.Written != 1 || one(t, g, "g.V().has('name','ann').values('age')") != "40" {
		t.Fatalf("addV: written %d", res.Written)
	}
	// Without it: an error naming the partition key, nothing written.
	_, err := runScript(t, g, "g.addV('person').property('age', 1)", traversal.Options{})
	if !errors.Is(err, traversal.ErrPartitionKey) {
		t.Fatalf("addV without partition key: %v", err)
	}
	if _, v, _ := g.Stats(); v != 7 {
		t.Fatalf("vertices after failed addV: %d", v)
	}
	// A property set earlier in the traversal is visible later in it.
	if got := one(t, g, "g.V('1').property(single, 'age', 30).V('1').values('age')"); got != "30" {
		t.Fatalf("read your write: %s", got)
	}
	if got := one(t, g, "g.V('1').values('age')"); got != "30" {
		t.Fatalf("after commit: %s", got)
	}
	// Without a cardinality, property() on an existing vertex adds a value,
	// as Cosmos DB does where TinkerGraph replaces: a Cosmos DB user's
	// g.V().has('cId','XX').property('country','UK').property('country','USA')
	// reads back "country": ["UK","USA"], which Microsoft confirmed as
	// supported (github.com/MicrosoftDocs/azure-docs issue 78883, 2021;
	// also Azure/azure-cosmos-dotnet-v2 issue 297: "g.V('x').property('name',
	// 'value') adds a property"), and overwriting takes single
	// (Azure-Samples/azure-cosmos-db-graph-gremlindotnet-getting-started
	// issue 10: "Overwrite the property value list:
	// g.V('id0').property(single, 'myProp', 'overwrite')").
	if got := one(t, g, "g.V('1').property('age', 31).V('1').values('age')"); got != "30 31" {
		t.Fatalf("property without cardinality: %s", got)
	}
	if got := one(t, g, "g.V('1').property(single, 'age', 32).values('age')"); got != "32" {
		t.Fatalf("single after two values: %s", got)
	}
	// list cardinality appends (crew-style multi-properties).
	mustRun(t, g, "g.V('1').property(list, 'nick', 'mk').property(list, 'nick', 'marko2')")
	if got := one(t, g, "g.V('1').values('nick').fold()"); got != "[mk,marko2]" {
		t.Fatalf("list cardinality: %s", got)
	}
	// The partition key of an existing vertex cannot change.
	if _, err := runScript(t, g, "g.V('1').property('name','other')", traversal.Options{}); !errors.Is(err, traversal.ErrPartitionKey) {
		t.Fatalf("changing the partition key: %v", err)
	}
	// addE between labelled vertices, and from a traversal; the edge lives
	// with its source.
	mustRun(t, g, "g.V('1').as('a').V('6').addE('knows').from('a').property('weight', 0.1)")
	mustRun(t, g, "g.V('2').addE('likes').to(V('5'))")
	if got := one(t, g, "g.V('1').out('knows').values('name').order().fold()"); got != "[josh,peter,vadas]" {
		t.Fatalf("addE from: %s", got)
	}
	if got := one(t, g, "g.V('5').in('likes').values('name')"); got != "vadas" {
		t.Fatalf("addE to: %s", got)
	}
	// Edges added in the traversal are traversable in it.
	if got := one(t, g, "g.addV('x').property('name','n1').as('a').addV('x').property('name','n2').addE('e').from('a').outV().out('e').values('name')"); got != "n2" {
		t.Fatalf("pending edge: %s", got)
	}
	// Explicit id, then a duplicate id in the same partition conflicts.
	mustRun(t, g, "g.addV('x').property('id','fixed').property('name','dup')")
	_, err = runScript(t, g, "g.addV('x').property('id','fixed').property('name','dup')", traversal.Options{})
	if !errors.Is(err, memgraph.ErrConflict) {
		t.Fatalf("duplicate id: %v", err)
	}
	// drop: a property, an edge, a vertex with its edges.
	mustRun(t, g, "g.V('1').properties('nick').drop()")
	if got := one(t, g, "g.V('1').values('nick').count()"); got != "0l" {
		t.Fatalf("drop property: %s", got)
	}
	mustRun(t, g, "g.E('7').drop()")
	if got := one(t, g, "g.V('1').outE('knows').count()"); got != "2l" {
		t.Fatalf("drop edge: %s", got)
	}
	mustRun(t, g, "g.V('4').drop()")
	if got := one(t, g, "g.V('1').out().values('name').order().fold()"); got != "[lop,peter]" {
		t.Fatalf("drop vertex: %s", got)
	}
	if got := one(t, g, "g.V('3').in().count()"); got != "2l" {
		t.Fatalf("in-edges of dropped vertex: %s", got)
	}
	if _, err := runScript(t, g, "g.V('1').properties('name').drop()", traversal.Options{}); !errors.Is(err, traversal.ErrPartitionKey) {
		t.Fatalf("dropping the partition key: %v", err)
	}
	// Unsupported forms of Cosmos (support.md): set cardinality, null.
	for _, s := range []string{"g.V('1').property(set, 'a', 1)", "g.V('1').property('a', null)"} {
		if _, err := runScript(t, g, s, traversal.Options{}); !errors.Is(err, traversal.ErrUnsupported) {
			t.Errorf("%s: %v", s, err)
		}
	}
}

func TestPartialWrite(t *testing.T) {
	g := modern(t)
	g.FailPartition = func(pk any) error {
		if pk == "vadas" {
			return errors.New("partition unavailable")
		}
		return nil
	}
	res, err := runScript(t, g, "g.V('1','2','4').property('seen', true)", traversal.Options{})
	var e *traversal.Error
	if !errors.As(err, &e) || e.Code != traversal.CodeStore {
		t.Fatalf("partial write error: %v", err)
	}
	if res.Written != 1 {
		t.Fatalf("written %d, want 1 (marko's partition before vadas's)", res.Written)
	}
	g.FailPartition = nil
	if got := one(t, g, "g.V().has('seen').values('name')"); got != "marko" {
		t.Fatalf("committed: %s", got)
	}
}

func TestPushDown(t *testing.T) {
	g := modern(t)
	// Routed by partition key: one partition read.
	res := mustRun(t, g, "g.V('1').has('name','marko')")
	if len(res.Ops) != 1 || res.Ops[0].Partitions != 1 || res.Ops[0].Count != 1 {
		t.Fatalf("routed read: %+v", res.Ops)
	}
	res = mustRun(t, g, "g.V().has('name', within('marko','josh')).has('age', gt(30))")
	if len(res.Values) != 1 || res.Ops[0].Partitions != 2 || res.Ops[0].Count != 1 {
		t.Fatalf("within routed read: %+v %v", res.Ops, res.Values)
	}
	// Unrouted with a condition: every partition, through the index.
	res = mustRun(t, g, "g.V().has('age', 29)")
	if res.Ops[0].Partitions != 6 || res.Ops[0].Count != 1 || res.Ops[0].Index == "" {
		t.Fatalf("unrouted read: %+v", res.Ops)
	}
	// Breadth-first: one edge query and one vertex query per out() step,
	// whatever the frontier's size.
	res = mustRun(t, g, "g.V().out().out()")
	if len(res.Ops) != 5 {
		t.Fatalf("ops for V().out().out(): %d (%+v)", len(res.Ops), res.Ops)
	}
	// has() after outE() goes into the edge query, after out() into the
	// neighbour query; a limit() after V() caps the scan.
	res = mustRun(t, g, "g.V('1').outE().has('weight', gt(0.5))")
	if len(res.Values) != 1 || res.Ops[1].Count != 1 {
		t.Fatalf("edge has push-down: %+v", res.Ops)
	}
	res = mustRun(t, g, "g.V('1').out().hasLabel('software')")
	if len(res.Values) != 1 || res.Ops[2].Count != 1 || res.Ops[1].Count != 3 {
		t.Fatalf("neighbour has push-down: %+v", res.Ops)
	}
	res = mustRun(t, g, "g.V().limit(2)")
	if len(res.Values) != 2 || res.Ops[0].Count != 2 {
		t.Fatalf("limit push-down: %+v", res.Ops)
	}
	// Pairs [pk, id] address one vertex each.
	res = mustRun(t, g, "g.V(['marko','1'], ['josh','4']).values('name')")
	if len(res.Values) != 2 || res.Ops[0].Partitions != 2 {
		t.Fatalf("pairs: %+v", res.Ops)
	}
}

func TestProfile(t *testing.T) {
	g := modern(t)
	res := mustRun(t, g, "g.V('1').out('created').count().executionProfile()")
	if len(res.Values) != 1 {
		t.Fatalf("profile values: %d", len(res.Values))
	}
	top := res.Values[0].([]any)[0].(*graph.Map)
	gremlin, _ := top.Get("gremlin")
	if !strings.Contains(gremlin.(string), "out(") {
		t.Fatalf("gremlin text: %v", gremlin)
	}
	ms, _ := top.Get("metrics")
	var names []string
	for _, m := range ms.([]any) {
		n, _ := m.(*graph.Map).Get("name")
		names = append(names, n.(string))
	}
	if strings.Join(names, ",") != "GetVertices,GetNeighborVertices,ProjectAggregation" {
		t.Fatalf("operators: %v", names)
	}
	m1 := ms.([]any)[1].(*graph.Map)
	counts, _ := m1.Get("counts")
	rc, _ := counts.(*graph.Map).Get("resultCount")
	if rc != int64(1) {
		t.Fatalf("resultCount: %v", rc)
	}
	ops, _ := m1.Get("storeOps")
	if len(ops.([]any)) != 2 {
		t.Fatalf("storeOps of out(): %v", render(ops))
	}
	if _, err := runScript(t, g, "g.V().executionProfile().count()", traversal.Options{}); err == nil {
		t.Fatal("executionProfile not last: no error")
	}
}

func TestErrors(t *testing.T) {
	g := modern(t)
	for _, c := range []struct {
		script string
		want   error
		step   string
	}{
		{"g.V().match(__.as('a'))", traversal.ErrUnsupported, "match"},
		{"g.V().frobnicate()", traversal.ErrUnsupported, "frobnicate"},
		{"g.V().values(1)", traversal.ErrInvalid, "values"},
		{"g.V().values('age').out()", traversal.ErrInvalid, "out"},
		{"g.V().limit('x')", traversal.ErrInvalid, "limit"},
		{"g.V().out().by('name')", traversal.ErrInvalid, "by"},
		{"g.V().cap('nothing')", traversal.ErrInvalid, "cap"},
		{"g.V().values('name').sum()", traversal.ErrInvalid, "sum"},
		{"g.V().emit()", traversal.ErrInvalid, "emit"},
		{"g.union(out())", traversal.ErrInvalid, "union"},
		{"g.V().has('age', gt(V('1').values('age')))", traversal.ErrUnsupported, "has"},
		{"g.inject(1).math('1 +')", traversal.ErrInvalid, "math"},
		{"g.inject(1).math('(((1)')", traversal.ErrInvalid, "math"},
		{"g.inject('x').math('_ + 1')", traversal.ErrInvalid, "math"},
		{"g.V().has('age', TextP.regex('('))", traversal.ErrInvalid, "has"},
	} {
		_, err := runScript(t, g, c.script, traversal.Options{})
		var e *traversal.Error
		if !errors.As(err, &e) || !errors.Is(err, c.want) || e.Step != c.step || e.Code != traversal.CodeBadRequest {
			t.Errorf("%s: got %v (%#v), want %v at %s", c.script, err, e, c.want, c.step)
		}
	}
}

// TestMalformedTree: trees the parser would refuse but a bytecode decoder
// might hand over still get an *Error, not a panic.
func TestMalformedTree(t *testing.T) {
	g := modern(t)
	for _, tr := range []*lang.Traversal{
		{Steps: []lang.Step{{Name: "V"}, {Name: "has", Args: []lang.Value{lang.Token{Type: "T", Name: "id"}, lang.P{Op: "eq"}}}}},
		{Steps: []lang.Step{{Name: "V"}, {Name: "has", Args: []lang.Value{"age", lang.P{Op: "between", Args: []lang.Value{int32(1)}}}}}},
		{Steps: []lang.Step{{Name: "V"}, {Name: "where", Args: []lang.Value{lang.P{Op: "and", Args: []lang.Value{"x"}}}}}},
		{Steps: []lang.Step{{Name: "V"}, {Name: "repeat", Args: []lang.Value{&lang.Traversal{Steps: []lang.Step{{Name: "out"}}}}}}},
		{Steps: []lang.Step{{Name: "V"}, {Name: "local", Args: []lang.Value{"notatraversal"}}}},
		{Steps: []lang.Step{{Name: "out"}}},
		{},
	} {
		_, err := traversal.Run(context.Background(), tr, g, traversal.Options{})
		var e *traversal.Error
		if !errors.As(err, &e) || e.Code != traversal.CodeBadRequest {
			t.Errorf("%s: %v", lang.Format(tr), err)
		}
	}
}

func TestLimits(t *testing.T) {
	g := modern(t)
	limit := func(script string, o traversal.Options, want error) {
		t.Helper()
		_, err := runScript(t, g, script, o)
		var e *traversal.Error
		if !errors.Is(err, want) || !errors.As(err, &e) || e.Code != traversal.CodeTooMany {
			t.Errorf("%s: %v, want %v with 429", script, err, want)
		}
	}
	// Cosmos limits.md: 32 repeat() iterations.
	limit("g.V().repeat(both()).times(33)", traversal.Options{}, traversal.ErrRepeatLimit)
	limit("g.V('1').repeat(both().sample(1)).until(hasId('none'))", traversal.Options{}, traversal.ErrRepeatLimit)
	if _, err := runScript(t, g, "g.V('1').repeat(both().sample(1)).times(32)", traversal.Options{}); err != nil {
		t.Errorf("32 iterations: %v", err)
	}
	limit("g.V().both().both().both()", traversal.Options{MemoryBudget: 4096}, traversal.ErrMemory)
	limit("g.V().values('name').aggregate('x').cap('x')", traversal.Options{MemoryBudget: 600}, traversal.ErrMemory)
	limit("g.V()", traversal.Options{MaxResults: 5}, traversal.ErrTooManyResults)
	// The timeout: a clock-free check through a store that waits past it.
	slow := &slowStore{Store: g, delay: 50 * time.Millisecond}
	tr, _ := lang.Parse("g.V().out().out()", nil, lang.Limits{})
	_, err := traversal.Run(context.Background(), tr, slow, traversal.Options{Timeout: 20 * time.Millisecond})
	if !errors.Is(err, traversal.ErrTimeout) {
		t.Errorf("timeout: %v", err)
	}
}

// slowStore delays each read until the context ends or delay passes.
type slowStore struct {
	graph.Store
	delay time.Duration
}

func (s *slowStore) Vertices(ctx context.Context, q graph.VertexQuery) ([]*graph.Vertex, graph.StoreOp, error) {
	select {
	case <-ctx.Done():
		return nil, graph.StoreOp{}, fmt.Errorf("cannot read vertices: %w", ctx.Err())
	case <-time.After(s.delay):
	}
	return s.Store.Vertices(ctx, q)
}

// TestNumericPartitionKey: a partition key written as an int32 literal
// routes a read written with a long or a double literal.
func TestNumericPartitionKey(t *testing.T) {
	g := memgraph.New("pk")
	mustRun(t, g, "g.addV('x').property('pk', 1).property('id', 'a').addV('x').property('pk', 2).property('id', 'b')")
	for _, s := range []string{"g.V().has('pk', 1L)", "g.V().has('pk', 1.0d)", "g.V(['1', 'a'])", "g.V([1L, 'a'])"} {
		res := mustRun(t, g, s)
		if s == "g.V(['1', 'a'])" {
			// A string is not the number 1.
			if len(res.Values) != 0 {
				t.Errorf("%s: %d results", s, len(res.Values))
			}
			continue
		}
		if len(res.Values) != 1 || res.Ops[0].Partitions != 1 {
			t.Errorf("%s: %d results, %+v", s, len(res.Values), res.Ops)
		}
	}
}

// TestCosmosForms: the forms of Cosmos DB's quickstart and the terminal
// methods of Gremlin's grammar (Gremlin.g4 traversalTerminalMethod).
func TestCosmosForms(t *testing.T) {
	g := modern(t)
	// addE with from()/to() given g.V(...) (read as __.V(...)), and an edge
	// id from property('id', ...), as Cosmos DB's quickstart writes them
	// (learn.microsoft.com/azure/cosmos-db/gremlin/quickstart-console:
	// g.V('thomas').addE('knows').to(g.V('mary'))).
	if got := one(t, g, "g.addE('knows').from(g.V('2')).to(g.V('3')).property('id', 'e-new').property('weight', 0.25)"); got != "e[e-new][2-knows->3]" {
		t.Fatalf("addE from/to g.V: %s", got)
	}
	if got := one(t, g, "g.E('e-new').values('weight')"); got != "0.25d" {
		t.Fatalf("edge by its id: %s", got)
	}
	if got := one(t, g, "g.V('4').addE('knows').to(g.V('6')).inV().values('name')"); got != "peter" {
		t.Fatalf("addE to g.V: %s", got)
	}
	if _, err := runScript(t, g, "g.E('7').property('id', 'other')", traversal.Options{}); !errors.Is(err, traversal.ErrInvalid) {
		t.Fatalf("changing an existing edge's id: %v", err)
	}
	for script, want := range map[string]string{
		"g.V().hasLabel('person').values('name').next()":      "marko",
		"g.V().hasLabel('person').values('name').next(2)":     "marko vadas",
		"g.V().hasLabel('person').values('name').next(9)":     "marko vadas josh peter",
		"g.V().hasLabel('person').values('name').toList()":    "marko vadas josh peter",
		"g.V('nope').tryNext()":                               "",
		"g.V('1').values('name').tryNext()":                   "marko",
		"g.V('nope').hasNext()":                               "false",
		"g.V('1').hasNext()":                                  "true",
		"g.V().values('lang').toSet()":                        "java",
		"g.V().values('lang').toBulkSet()":                    "java java",
		"g.V().hasLabel('software').values('name').iterate()": "",
	} {
		if got := one(t, g, script); got != want {
			t.Errorf("%s: %q, want %q", script, got, want)
		}
	}
	// iterate() returns nothing but writes.
	if got := one(t, g, "g.addV('person').property('name', 'zed').iterate()"); got != "" {
		t.Fatalf("iterate(): %q", got)
	}
	if got := one(t, g, "g.V().has('name', 'zed').values('name').next()"); got != "zed" {
		t.Fatalf("after iterate(): %q", got)
	}
	// next() of nothing fails, as TinkerPop's NoSuchElementException, and
	// writes nothing.
	if _, err := runScript(t, g, "g.addV('person').property('name', 'quinn').V('nope').next()", traversal.Options{}); !errors.Is(err, traversal.ErrInvalid) {
		t.Fatalf("next() of nothing: %v", err)
	}
	if got := one(t, g, "g.V().has('name', 'quinn').count()"); got != "0l" {
		t.Fatalf("next() of nothing wrote: %s", got)
	}
	for script, word := range map[string]string{
		"g.V().explain()": "explain",
		"g.withStrategies(PartitionStrategy.build().partitionKey('name').writePartition('a').create()).V()": "PartitionStrategy",
	} {
		_, err := runScript(t, g, script, traversal.Options{})
		if !errors.Is(err, traversal.ErrUnsupported) || !strings.Contains(err.Error(), word) {
			t.Errorf("%s: %v, want an unsupported error naming %s", script, err, word)
		}
	}
}
