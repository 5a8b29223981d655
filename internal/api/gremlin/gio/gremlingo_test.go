package gio_test

import (
	"encoding/base64"
	"reflect"
	"strings"
	"testing"
	"time"

	gremlingo "github.com/apache/tinkerpop/gremlin-go/v3/driver"

	"github.com/parsecdb/parsec/internal/api/gremlin/gio"
	"github.com/parsecdb/parsec/internal/api/gremlin/graph"
	"github.com/parsecdb/parsec/internal/api/gremlin/lang"
)

// The fixed graph the answers are made of.
var (
	marko = &graph.Vertex{ID: "1", Label: "person", Keys: []string{"name", "age"},
		Properties: map[string][]*graph.VertexProperty{
			"name": {{ID: "p1", Key: "name", Value: "marko", Meta: map[string]any{"since": int32(2009)}}},
			"age":  {{ID: "p2", Key: "age", Value: int32(29)}},
		}}
	josh  = &graph.Vertex{ID: "4", Label: "person"}
	knows = &graph.Edge{ID: "e7", Label: "knows", Out: graph.Ref{ID: "1", Label: "person"},
		In: graph.Ref{ID: "4", Label: "person"}, Keys: []string{"weight"},
		Properties: map[string]any{"weight": 0.5}}
	someUUID = lang.UUID("123e4567-e89b-12d3-a456-426614174000")
)

func quietClient(s *gremlingo.ClientSettings) { s.LogVerbosity = gremlingo.Off }

func TestGremlinGoBytecode(t *testing.T) {
	s := newWSServer(t, func(req *gio.Request) []*gio.Response {
		return []*gio.Response{{RequestID: req.ID, Status: gio.Status{Code: 200},
			Result: gio.Result{Data: []graph.Value{marko, josh}, Traversers: true}}}
	})
	drc, err := gremlingo.NewDriverRemoteConnection(s.url(), func(st *gremlingo.DriverRemoteConnectionSettings) {
		st.LogVerbosity = gremlingo.Off
	})
	if err != nil {
		t.Fatal(err)
	}
	defer drc.Close()
	g := gremlingo.Traversal_().With(drc)
	res, err := g.V().Has("name", gremlingo.P.Gt(3)).Out("knows").ToList()
	if err != nil {
		t.Fatal(err)
	}
	reqs, mimes, errs := s.requests()
	if len(errs) > 0 {
		t.Fatalf("server errors: %v", errs)
	}
	if len(reqs) != 1 || mimes[0] != gio.MimeGraphBinary {
		t.Fatalf("requests %d, mimes %v", len(reqs), mimes)
	}
	req := reqs[0]
	if req.Op != "bytecode" || req.Processor != "traversal" {
		t.Fatalf("op %q processor %q", req.Op, req.Processor)
	}
	tr, ok := req.Traversal()
	if !ok {
		t.Fatalf("gremlin arg is %T", req.Args["gremlin"])
	}
	// gremlin-go writes a Go int as a GraphBinary Long (graphBinary.go getType).
	want := &lang.Traversal{Steps: []lang.Step{
		{Name: "V"},
		{Name: "has", Args: []lang.Value{"name", lang.P{Op: "gt", Args: []lang.Value{int64(3)}}}},
		{Name: "out", Args: []lang.Value{"knows"}},
	}}
	if !reflect.DeepEqual(tr, want) {
		t.Fatalf("traversal\n got %#v\nwant %#v", tr, want)
	}
	if a := req.Aliases(); a["g"] != "g" {
		t.Fatalf("aliases %v", a)
	}
	if len(res) != 2 {
		t.Fatalf("%d results", len(res))
	}
	v, err := res[0].GetVertex()
	if err != nil {
		t.Fatal(err)
	}
	if v.Id != "1" || v.Label != "person" {
		t.Fatalf("vertex %v", v)
	}
	props, _ := v.Properties.([]any)
	if len(props) != 2 {
		t.Fatalf("vertex properties %#v", v.Properties)
	}
	name := props[0].(*gremlingo.VertexProperty)
	age := props[1].(*gremlingo.VertexProperty)
	if name.Id != "p1" || name.Label != "name" || name.Value != "marko" || age.Value != int32(29) {
		t.Fatalf("vertex properties %v %v", name, age)
	}
	meta, _ := name.Properties.([]any)
	if len(meta) != 1 || meta[0].(*gremlingo.Property).Key != "since" || meta[0].(*gremlingo.Property).Value != int32(2009) {
		t.Fatalf("meta-properties %#v", name.Properties)
	}
	v2, err := res[1].GetVertex()
	if err != nil || v2.Id != "4" {
		t.Fatalf("second vertex %v %v", v2, err)
	}
}

func TestGremlinGoBytecodeNested(t *testing.T) {
	s := newWSServer(t, func(req *gio.Request) []*gio.Response {
		return []*gio.Response{{RequestID: req.ID, Status: gio.Status{Code: 200},
			Result: gio.Result{Data: []graph.Value{"marko"}, Traversers: true}}}
	})
	drc, err := gremlingo.NewDriverRemoteConnection(s.url(), func(st *gremlingo.DriverRemoteConnectionSettings) {
		st.LogVerbosity = gremlingo.Off
	})
	if err != nil {
		t.Fatal(err)
	}
	defer drc.Close()
	g := gremlingo.Traversal_().With(drc)
	T__ := gremlingo.T__
	res, err := g.WithSideEffect("x", int32(1)).V("1").
		Has("age", gremlingo.P.Within(int32(1), int32(2)).Or(gremlingo.P.Lt(int32(0)))).
		Where(T__.Out("knows").Has("name", gremlingo.TextP.StartingWith("j"))).
		Order().By("name", gremlingo.Order.Desc).
		Property(gremlingo.Cardinality.List, "k", 1.5).
		Values("name").Limit(int64(2)).ToList()
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].GetString() != "marko" {
		t.Fatalf("results %v", res)
	}
	reqs, _, errs := s.requests()
	if len(errs) > 0 || len(reqs) != 1 {
		t.Fatalf("server errors %v, %d requests", errs, len(reqs))
	}
	tr, _ := reqs[0].Traversal()
	want := &lang.Traversal{
		Source: []lang.Step{{Name: "withSideEffect", Args: []lang.Value{"x", int32(1)}}},
		Steps: []lang.Step{
			{Name: "V", Args: []lang.Value{"1"}},
			{Name: "has", Args: []lang.Value{"age", lang.P{Op: "or", Args: []lang.Value{
				lang.P{Op: "within", Args: []lang.Value{int32(1), int32(2)}},
				lang.P{Op: "lt", Args: []lang.Value{int32(0)}},
			}}}},
			{Name: "where", Args: []lang.Value{&lang.Traversal{Anonymous: true, Steps: []lang.Step{
				{Name: "out", Args: []lang.Value{"knows"}},
				{Name: "has", Args: []lang.Value{"name", lang.P{Op: "startingWith", Args: []lang.Value{"j"}}}},
			}}}},
			{Name: "order"},
			{Name: "by", Args: []lang.Value{"name", lang.Token{Type: "Order", Name: "desc"}}},
			{Name: "property", Args: []lang.Value{lang.Token{Type: "Cardinality", Name: "list"}, "k", 1.5}},
			{Name: "values", Args: []lang.Value{"name"}},
			{Name: "limit", Args: []lang.Value{int64(2)}},
		},
	}
	if !reflect.DeepEqual(tr, want) {
		t.Fatalf("traversal\n got %#v\nwant %#v", tr, want)
	}
}

func TestGremlinGoScript(t *testing.T) {
	path := &graph.Path{Labels: [][]string{{"a"}, {}}, Objects: []any{marko, josh}}
	m := &graph.Map{Entries: []graph.Entry{{Key: "count", Value: int64(3)}, {Key: lang.Token{Type: "T", Name: "id"}, Value: "1"}}}
	when := time.UnixMilli(1700000000123).UTC()
	s := newWSServer(t, func(req *gio.Request) []*gio.Response {
		return []*gio.Response{
			{RequestID: req.ID, Status: gio.Status{Code: 206},
				Result: gio.Result{Data: []graph.Value{marko, knows}}},
			{RequestID: req.ID, Status: gio.Status{Code: 200, Attributes: map[string]any{"x-ms-request-charge": 3.5}},
				Result: gio.Result{Data: []graph.Value{path, m, []any{int32(1), "two"}, int64(1) << 40, 2.25,
					someUUID, nil, true, when, &graph.BulkSet{Items: []any{"a", "b"}, Bulks: []int64{2, 1}}}}},
		}
	})
	client, err := gremlingo.NewClient(s.url(), quietClient)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	rs, err := client.Submit("g.V().has('age', gt(x))", map[string]any{"x": 27, "names": []any{"a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := rs.All()
	if err != nil {
		t.Fatal(err)
	}
	reqs, _, errs := s.requests()
	if len(errs) > 0 || len(reqs) != 1 {
		t.Fatalf("server errors %v, %d requests", errs, len(reqs))
	}
	req := reqs[0]
	if sc, ok := req.Script(); !ok || sc != "g.V().has('age', gt(x))" || req.Op != "eval" || req.Processor != "" {
		t.Fatalf("request %+v", req)
	}
	wantB := map[string]any{"x": int64(27), "names": []any{"a", "b"}}
	if !reflect.DeepEqual(req.Bindings(), wantB) {
		t.Fatalf("bindings %#v", req.Bindings())
	}
	if len(res) != 12 {
		t.Fatalf("%d results: %v", len(res), res)
	}
	if v, err := res[0].GetVertex(); err != nil || v.Id != "1" {
		t.Fatalf("vertex %v %v", v, err)
	}
	e, err := res[1].GetEdge()
	if err != nil {
		t.Fatal(err)
	}
	if e.Id != "e7" || e.Label != "knows" || e.OutV.Id != "1" || e.InV.Id != "4" || e.InV.Label != "person" {
		t.Fatalf("edge %+v", e)
	}
	eps, _ := e.Properties.([]any)
	if len(eps) != 1 || eps[0].(*gremlingo.Property).Key != "weight" || eps[0].(*gremlingo.Property).Value != 0.5 {
		t.Fatalf("edge properties %#v", e.Properties)
	}
	p, err := res[2].GetPath()
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Labels) != 2 || p.Labels[0].ToSlice()[0] != "a" || len(p.Labels[1].ToSlice()) != 0 || len(p.Objects) != 2 ||
		p.Objects[1].(*gremlingo.Vertex).Id != "4" {
		t.Fatalf("path %+v", p)
	}
	gm, ok := res[3].GetInterface().(map[any]any)
	if !ok || gm["count"] != int64(3) || gm["id"] != "1" {
		t.Fatalf("map %#v", res[3].GetInterface())
	}
	if l, ok := res[4].GetInterface().([]any); !ok || !reflect.DeepEqual(l, []any{int32(1), "two"}) {
		t.Fatalf("list %#v", res[4].GetInterface())
	}
	if n, err := res[5].GetInt64(); err != nil || n != 1<<40 {
		t.Fatalf("int64 %v %v", n, err)
	}
	if f, err := res[6].GetFloat64(); err != nil || f != 2.25 {
		t.Fatalf("double %v %v", f, err)
	}
	if u := res[7].GetInterface(); reflect.TypeOf(u).String() != "uuid.UUID" || res[7].GetString() != string(someUUID) {
		t.Fatalf("uuid %T %v", u, u)
	}
	if !res[8].IsNil() {
		t.Fatalf("null %v", res[8])
	}
	if b, err := res[9].GetBool(); err != nil || !b {
		t.Fatalf("bool %v %v", b, err)
	}
	if tm, ok := res[10].GetInterface().(time.Time); !ok || !tm.Equal(when) {
		t.Fatalf("date %#v", res[10].GetInterface())
	}
	// gremlin-go expands a BulkSet into a list (graphBinary.go bulkSetReader).
	if l, ok := res[11].GetInterface().([]any); !ok || !reflect.DeepEqual(l, []any{"a", "a", "b"}) {
		t.Fatalf("bulk set %#v", res[11].GetInterface())
	}
	if attrs := rs.GetStatusAttributes(); attrs["x-ms-request-charge"] != 3.5 {
		t.Fatalf("status attributes %v", attrs)
	}
}

// TestGremlinGoStatuses: an error status reaches the caller with its
// message; 204 gives an empty result.
func TestGremlinGoStatuses(t *testing.T) {
	s := newWSServer(t, func(req *gio.Request) []*gio.Response {
		sc, _ := req.Script()
		if sc == "empty" {
			return []*gio.Response{{RequestID: req.ID, Status: gio.Status{Code: gio.StatusNoContent}}}
		}
		return []*gio.Response{{RequestID: req.ID, Status: gio.Status{Code: gio.StatusScriptEvaluationError,
			Message: "unknown step frobnicate", Attributes: map[string]any{"exceptions": []any{"GraphSyntaxException"}}}}}
	})
	client, err := gremlingo.NewClient(s.url(), quietClient)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	rs, err := client.Submit("g.V().frobnicate()")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rs.All(); err == nil || !strings.Contains(err.Error(), "unknown step frobnicate") {
		t.Fatalf("error %v, want the server's message", err)
	}
	opts := new(gremlingo.RequestOptionsBuilder).SetBatchSize(10).SetEvaluationTimeout(1500).
		SetUserAgent("parsec-test").AddBinding("when", time.Date(2024, 2, 29, 1, 2, 3, 0, time.UTC)).Create()
	rs, err = client.SubmitWithOptions("empty", opts)
	if err != nil {
		t.Fatal(err)
	}
	res, err := rs.All()
	if err != nil || len(res) != 0 {
		t.Fatalf("no content: %v %v", res, err)
	}
	reqs, _, _ := s.requests()
	last := reqs[len(reqs)-1]
	bs, ok1, _ := last.Int("batchSize")
	et, ok2, _ := last.Int("evaluationTimeout")
	if bs != 10 || et != 1500 || !ok1 || !ok2 || last.String("userAgent") != "parsec-test" {
		t.Fatalf("options %v", last.Args)
	}
	// gremlin-go writes a time.Time as an OffsetDateTime (graphBinary.go getType).
	if w, ok := last.Bindings()["when"].(time.Time); !ok || !w.Equal(time.Date(2024, 2, 29, 1, 2, 3, 0, time.UTC)) {
		t.Fatalf("time binding %#v", last.Bindings()["when"])
	}
}

// TestGremlinGoAuthentication runs the SASL PLAIN exchange: the server
// challenges the first request with 407, gremlin-go answers with an
// authentication request (its own id, args.sasl = base64("\x00user\x00pass"),
// driver/request.go makeBasicAuthRequest), and the server then answers the
// original request.
func TestGremlinGoAuthentication(t *testing.T) {
	var pending string
	s := newWSServer(t, func(req *gio.Request) []*gio.Response {
		if req.Op == "authentication" {
			raw, err := base64.StdEncoding.DecodeString(req.String("sasl"))
			if err != nil || string(raw) != "\x00/dbs/db/colls/graph\x00secret" {
				return []*gio.Response{{RequestID: pending, Status: gio.Status{Code: gio.StatusUnauthorized, Message: "bad credentials"}}}
			}
			return []*gio.Response{{RequestID: pending, Status: gio.Status{Code: 200}, Result: gio.Result{Data: []graph.Value{int64(6)}}}}
		}
		pending = req.ID
		return []*gio.Response{{RequestID: req.ID, Status: gio.Status{Code: gio.StatusAuthenticate}}}
	})
	client, err := gremlingo.NewClient(s.url(), func(st *gremlingo.ClientSettings) {
		st.LogVerbosity = gremlingo.Off
		st.AuthInfo = gremlingo.BasicAuthInfo("/dbs/db/colls/graph", "secret")
	})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	rs, err := client.Submit("g.V().count()")
	if err != nil {
		t.Fatal(err)
	}
	res, err := rs.All()
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 {
		t.Fatalf("results %v", res)
	}
	if n, err := res[0].GetInt64(); err != nil || n != 6 {
		t.Fatalf("count %v %v", n, err)
	}
	reqs, _, _ := s.requests()
	if len(reqs) != 2 || reqs[1].Op != "authentication" || reqs[1].Processor != "traversal" {
		t.Fatalf("requests %+v", reqs)
	}
}
