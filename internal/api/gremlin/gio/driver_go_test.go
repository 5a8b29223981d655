package gio_test

import (
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	gremlingo "github.com/apache/tinkerpop/gremlin-go/v3/driver"
	"github.com/gorilla/websocket"

	"github.com/parsecdb/parsec/internal/api/gremlin/gio"
	"github.com/parsecdb/parsec/internal/api/gremlin/graph"
	"github.com/parsecdb/parsec/internal/api/gremlin/lang"
)

// wsServer is a minimal Gremlin Server for the driver tests: it decodes
// each binary frame with gio, records the request, and answers with the
// responses answer returns, encoded with gio for the request's mime type.
type wsServer struct {
	t      *testing.T
	srv    *httptest.Server
	answer func(req *gio.Request) []*gio.Response

	mu    sync.Mutex
	reqs  []*gio.Request
	mimes []string
	errs  []error
}

func newWSServer(t *testing.T, answer func(req *gio.Request) []*gio.Response) *wsServer {
	s := &wsServer{t: t, answer: answer}
	up := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer conn.Close()
		for {
			_, frame, err := conn.ReadMessage()
			if err != nil {
				return
			}
			mime, req, err := gio.DecodeFrame(frame)
			s.mu.Lock()
			s.mimes = append(s.mimes, mime)
			if err != nil {
				s.errs = append(s.errs, err)
				s.mu.Unlock()
				return
			}
			s.reqs = append(s.reqs, req)
			s.mu.Unlock()
			for _, resp := range s.answer(req) {
				out, err := gio.EncodeResponse(mime, resp)
				if err != nil {
					s.mu.Lock()
					s.errs = append(s.errs, err)
					s.mu.Unlock()
					return
				}
				if err := conn.WriteMessage(websocket.BinaryMessage, out); err != nil {
					return
				}
			}
		}
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *wsServer) url() string { return "ws" + strings.TrimPrefix(s.srv.URL, "http") + "/gremlin" }

func (s *wsServer) requests() ([]*gio.Request, []string, []error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*gio.Request(nil), s.reqs...), append([]string(nil), s.mimes...), append([]error(nil), s.errs...)
}

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
	want := &lang.Traversal{Source: []lang.Step{}, Steps: []lang.Step{
		{Name: "V", Args: []lang.Value{}},
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
			{Name: "where", Args: []lang.Value{&lang.Traversal{Source: []lang.Step{}, Anonymous: true, Steps: []lang.Step{
				{Name: "out", Args: []lang.Value{"knows"}},
				{Name: "has", Args: []lang.Value{"name", lang.P{Op: "startingWith", Args: []lang.Value{"j"}}}},
			}}}},
			{Name: "order", Args: []lang.Value{}},
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
