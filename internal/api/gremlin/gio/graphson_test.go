package gio_test

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/api/gremlin/gio"
	"github.com/parsecdb/parsec/internal/api/gremlin/graph"
	"github.com/parsecdb/parsec/internal/api/gremlin/lang"
)

// jsonInject decodes a GraphSON bytecode request g.inject(<arg>) and
// returns the argument.
func jsonInject(t *testing.T, mime, arg string) (any, error) {
	t.Helper()
	body := `{"requestId":{"@type":"g:UUID","@value":"123E4567-E89B-12D3-A456-426614174000"},"op":"bytecode","processor":"traversal",
	"args":{"gremlin":{"@type":"g:Bytecode","@value":{"step":[["inject",` + arg + `]]}},"aliases":{"g":"g"}}}`
	req, err := gio.DecodeRequest(mime, []byte(body))
	if err != nil {
		return nil, err
	}
	if req.ID != "123e4567-e89b-12d3-a456-426614174000" {
		t.Fatalf("request id %q", req.ID)
	}
	tr, ok := req.Traversal()
	if !ok || len(tr.Steps) != 1 || len(tr.Steps[0].Args) != 1 || tr.Anonymous {
		t.Fatalf("traversal %s", dump(req.Args["gremlin"]))
	}
	return tr.Steps[0].Args[0], nil
}

// The typed forms below are those of TinkerPop's GraphSON 2.0/3.0
// reference (docs/src/dev/io/graphson.asciidoc) and of gremlin-javascript's
// writers (lib/structure/io/type-serializers.js: NumberSerializer leaves
// numbers plain, LongSerializer writes g:Int64, DateSerializer g:Date,
// PSerializer {"predicate","value"} with [value, other] for two
// arguments, EnumSerializer "g:"+typeName).
func TestGraphSONRequestValues(t *testing.T) {
	cases := []struct {
		name, in string
		want     any
	}{
		{"plain int", `7`, int32(7)},
		{"plain big int", `5000000000`, int64(5000000000)},
		{"plain huge int", `123456789012345678901234567890`, func() any { b, _ := new(big.Int).SetString("123456789012345678901234567890", 10); return b }()},
		{"plain double", `1.5`, 1.5},
		{"plain exponent", `1e3`, 1000.0},
		{"string", `"x"`, "x"},
		{"null", `null`, nil},
		{"bool", `false`, false},
		{"Int32", `{"@type":"g:Int32","@value":-3}`, int32(-3)},
		{"Int64", `{"@type":"g:Int64","@value":9007199254740993}`, int64(9007199254740993)},
		{"Int64 written as float", `{"@type":"g:Int64","@value":2.0}`, int64(2)},
		{"Double", `{"@type":"g:Double","@value":0.25}`, 0.25},
		{"Double NaN", `{"@type":"g:Double","@value":"NaN"}`, "NaN"},
		{"Double -Infinity", `{"@type":"g:Double","@value":"-Infinity"}`, math.Inf(-1)},
		{"Float", `{"@type":"g:Float","@value":0.5}`, float32(0.5)},
		{"UUID", `{"@type":"g:UUID","@value":"41D2E28A-20A4-4AB0-B379-D810DEDE3786"}`, lang.UUID("41d2e28a-20a4-4ab0-b379-d810dede3786")},
		{"Date", `{"@type":"g:Date","@value":1481750076295}`, time.UnixMilli(1481750076295)},
		{"Timestamp", `{"@type":"g:Timestamp","@value":1481750076295}`, time.UnixMilli(1481750076295)},
		{"OffsetDateTime", `{"@type":"gx:OffsetDateTime","@value":"2023-11-14T22:13:20.123Z"}`, time.UnixMilli(1700000000123)},
		{"OffsetDateTime with offset", `{"@type":"gx:OffsetDateTime","@value":"2007-12-03T10:15:30+01:00"}`,
			time.Date(2007, 12, 3, 9, 15, 30, 0, time.UTC)},
		{"BigInteger", `{"@type":"gx:BigInteger","@value":123456789987654321123456789987654321}`, func() any {
			b, _ := new(big.Int).SetString("123456789987654321123456789987654321", 10)
			return b
		}()},
		{"BigDecimal", `{"@type":"gx:BigDecimal","@value":1.25}`, bigDec("1.25")},
		{"Int16", `{"@type":"gx:Int16","@value":100}`, int32(100)},
		{"plain list", `[1,"a"]`, []any{int32(1), "a"}},
		{"List", `{"@type":"g:List","@value":[{"@type":"g:Int64","@value":1},"a"]}`, []any{int64(1), "a"}},
		{"Set", `{"@type":"g:Set","@value":[1,1,"a"]}`, lang.Set{int32(1), "a"}},
		{"plain map keeps order", `{"z":1,"a":2}`, &lang.Map{Entries: []lang.MapEntry{{Key: "z", Value: int32(1)}, {Key: "a", Value: int32(2)}}}},
		{"Map", `{"@type":"g:Map","@value":[{"@type":"g:T","@value":"id"},1,2,"b"]}`,
			&lang.Map{Entries: []lang.MapEntry{{Key: lang.Token{Type: "T", Name: "id"}, Value: int32(1)}, {Key: int32(2), Value: "b"}}}},
		{"T", `{"@type":"g:T","@value":"label"}`, lang.Token{Type: "T", Name: "label"}},
		{"Column", `{"@type":"g:Column","@value":"keys"}`, lang.Token{Type: "Column", Name: "keys"}},
		{"Pop", `{"@type":"g:Pop","@value":"last"}`, lang.Token{Type: "Pop", Name: "last"}},
		{"Order decr", `{"@type":"g:Order","@value":"decr"}`, lang.Token{Type: "Order", Name: "desc"}},
		{"Direction from", `{"@type":"g:Direction","@value":"from"}`, lang.Token{Type: "Direction", Name: "OUT"}},
		{"Direction lower", `{"@type":"g:Direction","@value":"both"}`, lang.Token{Type: "Direction", Name: "BOTH"}},
		{"Operator", `{"@type":"g:Operator","@value":"sum"}`, lang.Token{Type: "Operator", Name: "sum"}},
		{"Direction", `{"@type":"g:Direction","@value":"IN"}`, lang.Token{Type: "Direction", Name: "IN"}},
		{"Barrier", `{"@type":"g:Barrier","@value":"normSack"}`, lang.Token{Type: "Barrier", Name: "normSack"}},
		{"Pick", `{"@type":"g:Pick","@value":"none"}`, lang.Token{Type: "Pick", Name: "none"}},
		{"Binding", `{"@type":"g:Binding","@value":{"key":"x","value":{"@type":"g:Int32","@value":1}}}`, int32(1)},
		{"P", `{"@type":"g:P","@value":{"predicate":"gt","value":{"@type":"g:Int32","@value":0}}}`, lang.P{Op: "gt", Args: []any{int32(0)}}},
		{"P between", `{"@type":"g:P","@value":{"predicate":"between","value":[1,10]}}`, lang.P{Op: "between", Args: []any{int32(1), int32(10)}}},
		{"P within one", `{"@type":"g:P","@value":{"predicate":"within","value":"a"}}`, lang.P{Op: "within", Args: []any{"a"}}},
		{"P within g:List", `{"@type":"g:P","@value":{"predicate":"within","value":{"@type":"g:List","@value":["a","b"]}}}`,
			lang.P{Op: "within", Args: []any{"a", "b"}}},
		{"P eq list", `{"@type":"g:P","@value":{"predicate":"eq","value":[1,2]}}`, lang.P{Op: "eq", Args: []any{[]any{int32(1), int32(2)}}}},
		{"P and", `{"@type":"g:P","@value":{"predicate":"and","value":[{"@type":"g:P","@value":{"predicate":"gt","value":1}},{"@type":"g:P","@value":{"predicate":"lt","value":5}}]}}`,
			lang.P{Op: "and", Args: []any{lang.P{Op: "gt", Args: []any{int32(1)}}, lang.P{Op: "lt", Args: []any{int32(5)}}}}},
		{"P not", `{"@type":"g:P","@value":{"predicate":"not","value":{"@type":"g:P","@value":{"predicate":"eq","value":1}}}}`,
			lang.P{Op: "not", Args: []any{lang.P{Op: "eq", Args: []any{int32(1)}}}}},
		{"TextP", `{"@type":"g:TextP","@value":{"predicate":"notContaining","value":"x"}}`, lang.P{Op: "notContaining", Args: []any{"x"}}},
		{"Vertex is its id", `{"@type":"g:Vertex","@value":{"id":{"@type":"g:Int32","@value":1},"label":"person"}}`, int32(1)},
		{"nested Bytecode", `{"@type":"g:Bytecode","@value":{"step":[["out","knows"],["has","age",{"@type":"g:P","@value":{"predicate":"gte","value":30}}]]}}`,
			&lang.Traversal{Anonymous: true, Steps: []lang.Step{
				{Name: "out", Args: []any{"knows"}},
				{Name: "has", Args: []any{"age", lang.P{Op: "gte", Args: []any{int32(30)}}}},
			}}},
	}
	for _, mime := range []string{gio.MimeGraphSONv2, gio.MimeGraphSONv3, gio.MimeJSON} {
		for _, c := range cases {
			t.Run(mime+"/"+c.name, func(t *testing.T) {
				got, err := jsonInject(t, mime, c.in)
				if err != nil {
					t.Fatal(err)
				}
				if c.want == "NaN" {
					if f, ok := got.(float64); !ok || !math.IsNaN(f) {
						t.Fatalf("got %s, want NaN", dump(got))
					}
					return
				}
				if !equalValues(got, c.want) {
					t.Fatalf("got %s, want %s", dump(got), dump(c.want))
				}
			})
		}
	}
}

// TestGraphSONRequestJava: Gremlin Server's own GraphSON 3.0 request
// shape (the "Standard Request" of graphson.asciidoc) types the requestId
// and writes bindings and aliases as g:Map.
func TestGraphSONRequestJava(t *testing.T) {
	body := `{"requestId":{"@type":"g:UUID","@value":"cb682578-9d92-4499-9ebc-5c6aa73c5397"},"op":"eval","processor":"",
	"args":{"@type":"g:Map","@value":["gremlin","g.V(x)","bindings",{"@type":"g:Map","@value":["x",{"@type":"g:Int32","@value":1}]},
	"language","gremlin-groovy","aliases",{"@type":"g:Map","@value":["g","social"]},"batchSize",{"@type":"g:Int32","@value":64}]}}`
	req, err := gio.DecodeRequest(gio.MimeGraphSONv3, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if sc, _ := req.Script(); sc != "g.V(x)" || req.Op != "eval" || req.String("language") != "gremlin-groovy" {
		t.Fatalf("request %+v", req)
	}
	if !equalValues(req.Bindings(), map[string]any{"x": int32(1)}) || req.Aliases()["g"] != "social" {
		t.Fatalf("bindings %s aliases %v", dump(req.Bindings()), req.Aliases())
	}
	if n, ok, _ := req.Int("batchSize"); !ok || n != 64 {
		t.Fatalf("batchSize %v", n)
	}
}

func TestGraphSONRequestErrors(t *testing.T) {
	const id = `"requestId":"123e4567-e89b-12d3-a456-426614174000"`
	cases := []struct {
		name, in, want string
		withID         bool
	}{
		{"not json", `{"requestId":`, "JSON", false},
		{"not an object", `[1]`, "not a JSON object", false},
		{"trailing", `{` + id + `,"op":"eval"} {}`, "after the JSON", false},
		{"no id", `{"op":"eval"}`, "no requestId", false},
		{"bad id", `{"requestId":"nope","op":"eval"}`, "invalid UUID", false},
		{"no op", `{` + id + `}`, "no op", true},
		{"op not string", `{` + id + `,"op":1}`, "op is not a string", true},
		{"args not map", `{` + id + `,"op":"eval","args":[1]}`, "not a map", true},
		{"unknown type", `{` + id + `,"op":"eval","args":{"x":{"@type":"g:Frobnicator","@value":1}}}`, `"g:Frobnicator"`, true},
		{"lambda", `{` + id + `,"op":"eval","args":{"x":{"@type":"g:Lambda","@value":{"script":"it"}}}}`, "lambdas", true},
		{"strategy", `{` + id + `,"op":"eval","args":{"x":{"@type":"g:PartitionStrategy","@value":{}}}}`, "g:PartitionStrategy", true},
		{"Int32 overflow", `{` + id + `,"op":"eval","args":{"x":{"@type":"g:Int32","@value":3000000000}}}`, "range", true},
		{"Int32 fraction", `{` + id + `,"op":"eval","args":{"x":{"@type":"g:Int32","@value":1.5}}}`, "integer", true},
		{"OffsetDateTime bad", `{` + id + `,"op":"eval","args":{"x":{"@type":"gx:OffsetDateTime","@value":"yesterday"}}}`, "yesterday", true},
		{"UUID bad", `{` + id + `,"op":"eval","args":{"x":{"@type":"g:UUID","@value":"zz"}}}`, "invalid UUID", true},
		{"Map odd", `{` + id + `,"op":"eval","args":{"x":{"@type":"g:Map","@value":[1]}}}`, "g:Map", true},
		{"extra members", `{` + id + `,"op":"eval","args":{"x":{"@type":"g:Int32","@value":1,"y":2}}}`, "besides", true},
		{"bytecode member", `{` + id + `,"op":"bytecode","args":{"gremlin":{"@type":"g:Bytecode","@value":{"steps":[]}}}}`, "unknown member", true},
		{"empty instruction", `{` + id + `,"op":"bytecode","args":{"gremlin":{"@type":"g:Bytecode","@value":{"step":[[]]}}}}`, "non-empty", true},
		{"or of one", `{` + id + `,"op":"eval","args":{"x":{"@type":"g:P","@value":{"predicate":"or","value":1}}}}`, "list of arguments", true},
		{"bindings keys", `{` + id + `,"op":"eval","args":{"bindings":{"@type":"g:Map","@value":[1,2]}}}`, "not a string", true},
		{"gremlin number", `{` + id + `,"op":"eval","args":{"gremlin":1}}`, "neither", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := gio.DecodeRequest(gio.MimeGraphSONv2, []byte(c.in))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one mentioning %s", err, c.want)
			}
			var de *gio.DecodeError
			if !errors.As(err, &de) || (de.RequestID != "") != c.withID {
				t.Fatalf("error %#v: request id present should be %v", err, c.withID)
			}
		})
	}
}

// jsonEq compares two JSON documents structurally.
func jsonEq(t *testing.T, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad expectation: %v", err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

var (
	vMarko = &graph.Vertex{ID: "a7111ba7-0ea1-43c9-b6b2-efc5e3aea4c0", Label: "person", Keys: []string{"firstName", "age"},
		Properties: map[string][]*graph.VertexProperty{
			"firstName": {{ID: "p1", Key: "firstName", Value: "Thomas"}},
			"age":       {{ID: "p2", Key: "age", Value: int32(45)}, {ID: "p3", Key: "age", Value: int64(46), Meta: map[string]any{"src": "x"}}},
		}}
	eKnows = &graph.Edge{ID: "3ee53a60", Label: "knows", Out: graph.Ref{ID: "a7111ba7-0ea1-43c9-b6b2-efc5e3aea4c0", Label: "person"},
		In: graph.Ref{ID: "04779300", Label: "person"}, Keys: []string{"since"}, Properties: map[string]any{"since": int32(2009)}}
)

// TestEncodeCosmos checks the untyped JSON Cosmos returns for GraphSON 2.0
// clients. The vertex follows support.md "Gremlin wire format" (id,
// label, type, properties as lists of {id, value}); the edge carries
// inV/outV and their labels with plain-valued properties.
func TestEncodeCosmos(t *testing.T) {
	path := &graph.Path{Labels: [][]string{{"a"}, {}}, Objects: []any{vMarko.ID, int64(3)}}
	m := &graph.Map{Entries: []graph.Entry{
		{Key: lang.Token{Type: "T", Name: "id"}, Value: "1"},
		{Key: "names", Value: []any{"x", "y"}},
		{Key: int32(3), Value: 1.5},
		{Key: vMarko, Value: int64(2)},
	}}
	tree := &graph.Tree{Entries: []graph.TreeEntry{{Key: "root", Children: &graph.Tree{Entries: []graph.TreeEntry{{Key: int32(1)}}}}}}
	resp := &gio.Response{RequestID: "123E4567-e89b-12d3-a456-426614174000",
		Status: gio.Status{Code: 200, Attributes: map[string]any{"x-ms-request-charge": 2.5, "x-ms-status-code": int32(200)}},
		Result: gio.Result{Data: []graph.Value{vMarko, eKnows, path, m, tree,
			&graph.BulkSet{Items: []any{"a", "b"}, Bulks: []int64{2, 1}},
			&graph.VertexProperty{ID: "p1", Key: "firstName", Value: "Thomas"},
			&graph.Property{Key: "since", Value: int32(2009)},
			someUUID, time.UnixMilli(5), nil, true, math.NaN(), float32(0.5)}}}
	out, err := gio.EncodeResponse(gio.MimeGraphSONv2, resp)
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, out, `{"requestId":"123e4567-e89b-12d3-a456-426614174000",
	"status":{"message":"","code":200,"attributes":{"x-ms-request-charge":2.5,"x-ms-status-code":200}},
	"result":{"data":[
	 {"id":"a7111ba7-0ea1-43c9-b6b2-efc5e3aea4c0","label":"person","type":"vertex","properties":{
	   "firstName":[{"id":"p1","value":"Thomas"}],
	   "age":[{"id":"p2","value":45},{"id":"p3","value":46,"properties":{"src":"x"}}]}},
	 {"id":"3ee53a60","label":"knows","type":"edge","inVLabel":"person","outVLabel":"person","inV":"04779300",
	  "outV":"a7111ba7-0ea1-43c9-b6b2-efc5e3aea4c0","properties":{"since":2009}},
	 {"labels":[["a"],[]],"objects":["a7111ba7-0ea1-43c9-b6b2-efc5e3aea4c0",3]},
	 {"id":"1","names":["x","y"],"3":1.5,"a7111ba7-0ea1-43c9-b6b2-efc5e3aea4c0":2},
	 {"root":{"key":"root","value":{"1":{"key":1,"value":{}}}}},
	 ["a","a","b"],
	 {"id":"p1","value":"Thomas","label":"firstName"},
	 {"key":"since","value":2009},
	 "123e4567-e89b-12d3-a456-426614174000", 5, null, true, "NaN", 0.5
	],"meta":{}}}`)
	if other, err := gio.EncodeResponse(gio.MimeJSON, resp); err != nil || string(other) != string(out) {
		t.Fatalf("application/json answered differently: %v", err)
	}
}

// TestEncodeGraphSON3 compares with the GraphSON 3.0 examples of
// graphson.asciidoc (TinkerPop 3.8.1): Edge, VertexProperty, Path, BulkSet,
// Tree, Traverser and the standard result envelope.
func TestEncodeGraphSON3(t *testing.T) {
	v10 := &graph.Vertex{ID: "10", Label: "software"}
	tree := &graph.Tree{Entries: []graph.TreeEntry{{Key: v10, Children: &graph.Tree{}}}}
	resp := &gio.Response{RequestID: "41d2e28a-20a4-4ab0-b379-d810dede3786", Status: gio.Status{Code: 200},
		Result: gio.Result{Data: []graph.Value{eKnows,
			&graph.VertexProperty{ID: "0", Key: "name", Value: "marko"},
			&graph.Path{Labels: [][]string{{}, {"b"}}, Objects: []any{v10, int32(1)}},
			&graph.BulkSet{Items: []any{"marko", "josh"}, Bulks: []int64{1, 2}},
			tree,
			&graph.Map{Entries: []graph.Entry{{Key: lang.Token{Type: "T", Name: "label"}, Value: "x"}}},
			lang.Set{"a"}, someUUID, time.UnixMilli(1481750076295), int64(7), 1.5, float32(2), []int64{1}},
			Meta: map[string]any{}}}
	out, err := gio.EncodeResponse(gio.MimeGraphSONv3, resp)
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, out, `{"requestId":"41d2e28a-20a4-4ab0-b379-d810dede3786",
	"status":{"message":"","code":200,"attributes":{"@type":"g:Map","@value":[]}},
	"result":{"data":{"@type":"g:List","@value":[
	 {"@type":"g:Edge","@value":{"id":"3ee53a60","label":"knows","inVLabel":"person","outVLabel":"person","inV":"04779300",
	  "outV":"a7111ba7-0ea1-43c9-b6b2-efc5e3aea4c0",
	  "properties":{"since":{"@type":"g:Property","@value":{"key":"since","value":{"@type":"g:Int32","@value":2009}}}}}},
	 {"@type":"g:VertexProperty","@value":{"id":"0","value":"marko","label":"name"}},
	 {"@type":"g:Path","@value":{"labels":{"@type":"g:List","@value":[{"@type":"g:Set","@value":[]},{"@type":"g:Set","@value":["b"]}]},
	  "objects":{"@type":"g:List","@value":[{"@type":"g:Vertex","@value":{"id":"10","label":"software"}},{"@type":"g:Int32","@value":1}]}}},
	 {"@type":"g:BulkSet","@value":["marko",{"@type":"g:Int64","@value":1},"josh",{"@type":"g:Int64","@value":2}]},
	 {"@type":"g:Tree","@value":[{"key":{"@type":"g:Vertex","@value":{"id":"10","label":"software"}},"value":{"@type":"g:Tree","@value":[]}}]},
	 {"@type":"g:Map","@value":[{"@type":"g:T","@value":"label"},"x"]},
	 {"@type":"g:Set","@value":["a"]},
	 {"@type":"g:UUID","@value":"123e4567-e89b-12d3-a456-426614174000"},
	 {"@type":"g:Date","@value":1481750076295},
	 {"@type":"g:Int64","@value":7},
	 {"@type":"g:Double","@value":1.5},
	 {"@type":"g:Float","@value":2},
	 {"@type":"g:List","@value":[{"@type":"g:Int64","@value":1}]}
	]},"meta":{"@type":"g:Map","@value":[]}}}`)

	resp = &gio.Response{RequestID: "41d2e28a-20a4-4ab0-b379-d810dede3786", Status: gio.Status{Code: 200},
		Result: gio.Result{Data: []graph.Value{int32(1)}, Traversers: true}}
	out, err = gio.EncodeResponse(gio.MimeGraphSONv3, resp)
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, out, `{"requestId":"41d2e28a-20a4-4ab0-b379-d810dede3786",
	"status":{"message":"","code":200,"attributes":{"@type":"g:Map","@value":[]}},
	"result":{"data":{"@type":"g:List","@value":[
	 {"@type":"g:Traverser","@value":{"bulk":{"@type":"g:Int64","@value":1},"value":{"@type":"g:Int32","@value":1}}}
	]},"meta":{"@type":"g:Map","@value":[]}}}`)
}

func TestEncodeErrors(t *testing.T) {
	deep := []any{}
	for i := 0; i < 2000; i++ {
		deep = []any{deep}
	}
	cyclic := &graph.Map{}
	cyclic.Entries = []graph.Entry{{Key: "self", Value: cyclic}}
	selfKeyed := &graph.Map{}
	selfKeyed.Entries = []graph.Entry{{Key: selfKeyed, Value: 1}}
	bad := []struct {
		name string
		r    *gio.Response
	}{
		{"unknown type", &gio.Response{RequestID: "123e4567-e89b-12d3-a456-426614174000", Result: gio.Result{Data: []graph.Value{struct{}{}}}}},
		{"bad request id", &gio.Response{RequestID: "nope"}},
		{"bad uuid value", &gio.Response{Result: gio.Result{Data: []graph.Value{lang.UUID("x")}}}},
		{"too deep", &gio.Response{Result: gio.Result{Data: []graph.Value{deep}}}},
		{"cyclic", &gio.Response{Result: gio.Result{Data: []graph.Value{cyclic}}}},
		{"self-keyed", &gio.Response{Result: gio.Result{Data: []graph.Value{selfKeyed}}}},
		{"bulk mismatch", &gio.Response{Result: gio.Result{Data: []graph.Value{&graph.BulkSet{Items: []any{1}}}}}},
		{"bad attribute", &gio.Response{Status: gio.Status{Attributes: map[string]any{"x": make(chan int)}}}},
	}
	for _, mime := range []string{gio.MimeGraphSONv2, gio.MimeGraphSONv3, gio.MimeGraphBinary} {
		for _, c := range bad {
			if _, err := gio.EncodeResponse(mime, c.r); err == nil {
				t.Errorf("%s %s: no error", mime, c.name)
			}
		}
	}
	if _, err := gio.EncodeResponse(gio.MimeGraphSONv2, &gio.Response{Result: gio.Result{Data: []graph.Value{
		&graph.BulkSet{Items: []any{"a"}, Bulks: []int64{1 << 40}}}}}); err == nil {
		t.Error("a bulk set of 2^40 values expanded")
	}
	inner := &graph.BulkSet{Items: []any{"a"}, Bulks: []int64{1 << 19}}
	if _, err := gio.EncodeResponse(gio.MimeGraphSONv2, &gio.Response{Result: gio.Result{Data: []graph.Value{
		&graph.BulkSet{Items: []any{inner}, Bulks: []int64{4}}}}}); err == nil {
		t.Error("nested bulk sets expanded to 2^21 values")
	}
	if _, err := gio.EncodeResponse("text/plain", &gio.Response{}); !errors.Is(err, gio.ErrUnsupportedMime) {
		t.Errorf("unknown mime: %v", err)
	}
	// A response without a request id (the request could not be read)
	// still encodes: TinkerPop writes a null id.
	out, err := gio.EncodeResponse(gio.MimeGraphSONv2, &gio.Response{Status: gio.Status{Code: 498, Message: "malformed"}})
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, out, `{"requestId":null,"status":{"message":"malformed","code":498,"attributes":{}},"result":{"data":[],"meta":{}}}`)
}
