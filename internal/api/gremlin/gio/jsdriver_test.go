package gio_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/api/gremlin/gio"
	"github.com/parsecdb/parsec/internal/api/gremlin/graph"
	"github.com/parsecdb/parsec/internal/api/gremlin/lang"
)

// The JavaScript driver tests run the real npm gremlin 3.7.4 driver
// (testdata/jsclient/client.js) when GIO_NODE_PATH names a node_modules
// directory holding it (npm install gremlin@3.7.4). Without it they are
// skipped; TestJSRecordedFrames still decodes the frames that driver sent,
// kept in testdata/jsframes (GIO_RECORD=1 refreshes them).

var jsMimes = map[string]string{
	"v2":     gio.MimeGraphSONv2,
	"v3":     gio.MimeGraphSONv3,
	"binary": gio.MimeGraphBinary,
}

// jsAnswer answers the script with a 206 and a 200 batch, and the bytecode
// traversal with one 200 batch of traversers.
func jsAnswer(req *gio.Request) []*gio.Response {
	if req.Op == "bytecode" {
		return []*gio.Response{{RequestID: req.ID, Status: gio.Status{Code: 200},
			Result: gio.Result{Data: []graph.Value{"marko", int64(7)}, Traversers: true}}}
	}
	path := &graph.Path{Labels: [][]string{{"a"}, {}}, Objects: []any{josh, "x"}}
	m := &graph.Map{Entries: []graph.Entry{{Key: "count", Value: int64(3)}, {Key: lang.Token{Type: "T", Name: "id"}, Value: "1"}}}
	return []*gio.Response{
		{RequestID: req.ID, Status: gio.Status{Code: 206}, Result: gio.Result{Data: []graph.Value{marko, knows}}},
		{RequestID: req.ID, Status: gio.Status{Code: 200, Attributes: map[string]any{"x-ms-request-charge": 3.5}},
			Result: gio.Result{Data: []graph.Value{path, m, []any{int32(1), "two"}, int64(1) << 40, 2.25, someUUID, nil,
				time.UnixMilli(1700000000123).UTC()}}},
	}
}

// jsWantTraversal is the tree of the traversal client.js builds.
func jsWantTraversal() *lang.Traversal {
	return &lang.Traversal{
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
			{Name: "has", Args: []lang.Value{"age", lang.P{Op: "between", Args: []lang.Value{int32(20), int32(30)}}}},
			{Name: "values", Args: []lang.Value{"name"}},
			{Name: "limit", Args: []lang.Value{int32(2)}},
		},
	}
}

func jsWantBindings() map[string]any {
	return map[string]any{
		"x":     int32(27),
		"name":  "marko",
		"ratio": 0.5,
		"when":  time.UnixMilli(1700000000123).UTC(),
		"list":  []any{int32(1), "two"},
		"obj":   &lang.Map{Entries: []lang.MapEntry{{Key: "a", Value: int32(1)}}},
	}
}

// checkJSRequests checks the two requests client.js sends.
func checkJSRequests(t *testing.T, mime string, reqs []*gio.Request) {
	t.Helper()
	if len(reqs) != 2 {
		t.Fatalf("%s: %d requests", mime, len(reqs))
	}
	eval, bc := reqs[0], reqs[1]
	// client.js Client.submit: op eval, processor '', language, bindings,
	// aliases, accept (gremlin-javascript lib/driver/client.js submit).
	if eval.Op != "eval" || eval.Processor != "" || eval.String("language") != "gremlin-groovy" {
		t.Errorf("%s: eval request %+v", mime, eval)
	}
	if sc, _ := eval.Script(); sc != "g.V().has('age', gt(x))" {
		t.Errorf("%s: script %q", mime, sc)
	}
	if a := eval.Aliases(); a["g"] != "g" {
		t.Errorf("%s: aliases %v", mime, a)
	}
	if got, want := eval.Bindings(), jsWantBindings(); !equalValues(got, want) {
		t.Errorf("%s: bindings\n got %s\nwant %s", mime, dump(got), dump(want))
	}
	if bc.Op != "bytecode" || bc.Processor != "traversal" {
		t.Errorf("%s: bytecode request op %q processor %q", mime, bc.Op, bc.Processor)
	}
	tr, ok := bc.Traversal()
	if !ok {
		t.Fatalf("%s: gremlin is %T", mime, bc.Args["gremlin"])
	}
	if want := jsWantTraversal(); !equalValues(tr, want) {
		t.Errorf("%s: traversal\n got %s\nwant %s", mime, dump(tr), dump(want))
	}
}

func TestJSDriver(t *testing.T) {
	nodePath := os.Getenv("GIO_NODE_PATH")
	if nodePath == "" {
		t.Skip("GIO_NODE_PATH (a node_modules with gremlin@3.7.4) not set")
	}
	for name, mime := range jsMimes {
		t.Run(name, func(t *testing.T) {
			s := newWSServer(t, jsAnswer)
			cmd := exec.Command("node", filepath.Join("testdata", "jsclient", "client.js"), s.url(), mime)
			cmd.Env = append(os.Environ(), "NODE_PATH="+nodePath)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			reqs, _, errs := s.requests()
			if len(errs) > 0 {
				t.Fatalf("server errors: %v", errs)
			}
			if err != nil {
				t.Fatalf("node: %v\n%s", err, stderr.String())
			}
			if os.Getenv("GIO_RECORD") != "" {
				if err := s.record(filepath.Join("testdata", "jsframes"), name); err != nil {
					t.Fatal(err)
				}
			}
			checkJSRequests(t, mime, reqs)
			var got map[string]any
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("node output %s: %v", out, err)
			}
			checkJSResults(t, name, got)
		})
	}
}

func TestJSRecordedFrames(t *testing.T) {
	for name, mime := range jsMimes {
		var reqs []*gio.Request
		for i := 0; i < 2; i++ {
			frame, err := os.ReadFile(filepath.Join("testdata", "jsframes", name+"-"+string(rune('0'+i))+".bin"))
			if err != nil {
				t.Fatal(err)
			}
			m, req, err := gio.DecodeFrame(frame)
			if err != nil {
				t.Fatalf("%s frame %d: %v", name, i, err)
			}
			if m != mime {
				t.Fatalf("%s frame %d: mime %q", name, i, m)
			}
			reqs = append(reqs, req)
		}
		checkJSRequests(t, mime, reqs)
	}
}

// at walks a decoded JSON document by member names and list indexes.
func at(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

// checkJSResults checks what the JavaScript driver decoded from the
// answers of jsAnswer (client.js describe tags each value with its class).
func checkJSResults(t *testing.T, format string, got map[string]any) {
	t.Helper()
	check := func(what string, got, want any) {
		t.Helper()
		if !equalValues(got, want) {
			t.Errorf("%s: %s = %#v, want %#v", format, what, got, want)
		}
	}
	// Both batches (206 then 200) arrive as one result list.
	check("script results", len(at(got, "script").([]any)), 10)
	check("bytecode results", at(got, "bytecode"), []any{"marko", 7.0})
	script := at(got, "script").([]any)
	switch format {
	case "v2":
		// Cosmos answers untyped JSON; GraphSON2Reader hands it over as
		// plain objects (support.md "Gremlin wire format").
		v := at(script[0], "members")
		check("vertex id", at(v, "id"), "1")
		check("vertex type", at(v, "type"), "vertex")
		check("vertex name", at(v, "properties", "members", "name", 0, "members", "value"), "marko")
		check("vertex name id", at(v, "properties", "members", "name", 0, "members", "id"), "p1")
		check("meta-property", at(v, "properties", "members", "name", 0, "members", "properties", "members", "since"), 2009.0)
		check("age", at(v, "properties", "members", "age", 0, "members", "value"), 29.0)
		e := at(script[1], "members")
		check("edge", []any{at(e, "type"), at(e, "inV"), at(e, "outV"), at(e, "inVLabel"), at(e, "outVLabel")},
			[]any{"edge", "4", "1", "person", "person"})
		check("edge weight", at(e, "properties", "members", "weight"), 0.5)
		check("path labels", at(script[2], "members", "labels"), []any{[]any{"a"}, []any{}})
		check("path object", at(script[2], "members", "objects", 0, "members", "id"), "4")
		check("map", at(script[3], "members"), map[string]any{"count": 3.0, "id": "1"})
		check("uuid", script[7], string(someUUID))
		check("date", script[9], 1700000000123.0)
		check("attributes", at(got, "attributes", "members", "x-ms-request-charge"), 3.5)
	default:
		check("vertex class", at(script[0], "class"), "Vertex")
		check("vertex id", at(script[0], "id"), "1")
		if format == "v3" {
			check("vertex name", at(script[0], "properties", "members", "name", 0, "value"), "marko")
			check("meta-property", at(script[0], "properties", "members", "name", 0, "properties", "members", "since"), 2009.0)
			check("edge weight", at(script[1], "properties", "members", "weight"), 0.5)
		} else {
			check("vertex name", at(script[0], "properties", 0, "value"), "marko")
			check("meta-property", at(script[0], "properties", 0, "properties", 0, "value"), 2009.0)
			// gremlin-javascript 3.7.4 builds Edge.properties from an
			// object keyed by property name (structure/graph.js Edge), so
			// GraphBinary's List of Property (the layout the spec gives and
			// Gremlin Server sends) comes out keyed by index.
			check("edge weight", at(script[1], "properties", "members", "0"), 0.5)
		}
		check("edge", []any{at(script[1], "class"), at(script[1], "inV", "id"), at(script[1], "outV", "id"), at(script[1], "label")},
			[]any{"Edge", "4", "1", "knows"})
		check("path", []any{at(script[2], "class"), at(script[2], "labels"), at(script[2], "objects", 0, "id"), at(script[2], "objects", 1)},
			[]any{"Path", []any{[]any{"a"}, []any{}}, "4", "x"})
		check("map", at(script[3], "entries"), []any{[]any{"count", 3.0}, []any{map[string]any{"class": "Enum", "type": "T", "name": "id"}, "1"}})
		check("uuid", script[7], string(someUUID))
		check("date", at(script[9], "ms"), 1700000000123.0)
		check("attributes", at(got, "attributes", "entries"), []any{[]any{"x-ms-request-charge", 3.5}})
	}
	check("list", script[4], []any{1.0, "two"})
	check("int64", script[5], float64(int64(1)<<40))
	check("double", script[6], 2.25)
	check("null", script[8], nil)
}
