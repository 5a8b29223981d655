package gio_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/api/gremlin/gio"
	"github.com/parsecdb/parsec/internal/api/gremlin/graph"
	"github.com/parsecdb/parsec/internal/api/gremlin/lang"
)

// The JavaScript driver tests run the real npm gremlin driver
// (testdata/jsclient/client.js) when GIO_NODE_PATH names a node_modules
// directory holding it (npm install gremlin@3.7.4; 3.4.13, the version
// Cosmos DB recommends, and 3.8.1 pass too; drivers before 3.5 have no
// GraphBinary, so that case is skipped for them). Without it they are
// skipped; TestJSRecordedFrames still decodes the frames those drivers
// sent, kept in testdata/jsframes/<version> (GIO_RECORD=1 refreshes them).

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
	version := jsDriverVersion(t, nodePath)
	for name, mime := range jsMimes {
		t.Run(name, func(t *testing.T) {
			if name == "binary" && (strings.HasPrefix(version, "3.4.") || strings.HasPrefix(version, "3.3.")) {
				t.Skipf("gremlin %s has no GraphBinary serializer", version)
			}
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
				if err := s.record(filepath.Join("testdata", "jsframes", version), name); err != nil {
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

func jsDriverVersion(t *testing.T, nodePath string) string {
	b, err := os.ReadFile(filepath.Join(nodePath, "gremlin", "package.json"))
	if err != nil {
		t.Fatalf("gremlin driver not found under GIO_NODE_PATH: %v", err)
	}
	var pkg struct{ Version string }
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatal(err)
	}
	return pkg.Version
}

// TestJSRecordedFrames decodes the frames the JavaScript drivers sent
// (testdata/jsframes/<driver version>/<format>-<n>.bin).
func TestJSRecordedFrames(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join("testdata", "jsframes", "*"))
	if len(dirs) == 0 {
		t.Fatal("no recorded frames")
	}
	for _, dir := range dirs {
		for name, mime := range jsMimes {
			var reqs []*gio.Request
			for i := 0; i < 2; i++ {
				frame, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%s-%d.bin", name, i)))
				if errors.Is(err, os.ErrNotExist) && name == "binary" {
					break // drivers before 3.5 have no GraphBinary
				}
				if err != nil {
					t.Fatal(err)
				}
				m, req, err := gio.DecodeFrame(frame)
				if err != nil {
					t.Fatalf("%s %s frame %d: %v", dir, name, i, err)
				}
				if m != mime {
					t.Fatalf("%s %s frame %d: mime %q", dir, name, i, m)
				}
				reqs = append(reqs, req)
			}
			if len(reqs) > 0 {
				checkJSRequests(t, dir+" "+mime, reqs)
			}
		}
	}
}

// jsProp finds the vertex property named key in a vertex's properties as
// client.js describes them: an object of lists of VertexProperty
// (GraphSON with 3.7) or one list of VertexProperty (GraphBinary, and
// GraphSON with 3.8's deserializeProperties).
func jsProp(props any, key string) any {
	if l, ok := props.([]any); ok {
		for _, p := range l {
			if at(p, "label") == key {
				return p
			}
		}
		return nil
	}
	return at(props, "members", key, 0)
}

// jsPropValue finds the value of the property key among an element's
// properties: an object of plain values or of Property, or a list of
// Property.
func jsPropValue(props any, key string) any {
	if l, ok := props.([]any); ok {
		for _, p := range l {
			if at(p, "key") == key {
				return at(p, "value")
			}
		}
		return nil
	}
	v := at(props, "members", key)
	if m, ok := v.(map[string]any); ok && m["class"] == "Property" {
		return m["value"]
	}
	return v
}

// unSet turns the {"class":"Set","items":[...]} of client.js into its
// items (gremlin-javascript 3.8 reads path labels as Sets, 3.7 as arrays).
func unSet(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, it := range x {
			out[i] = unSet(it)
		}
		return out
	case map[string]any:
		if x["class"] == "Set" {
			return unSet(x["items"])
		}
	}
	return v
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
		name := jsProp(at(script[0], "properties"), "name")
		check("vertex name", at(name, "value"), "marko")
		check("vertex name id", at(name, "id"), "p1")
		check("meta-property", jsPropValue(at(name, "properties"), "since"), 2009.0)
		check("age", at(jsProp(at(script[0], "properties"), "age"), "value"), 29.0)
		// gremlin-javascript 3.7.4 builds Edge.properties from an object
		// keyed by property name (structure/graph.js Edge), so GraphBinary's
		// List of Property (the layout the spec gives and Gremlin Server
		// sends) comes out keyed by index there; 3.8 keeps a list.
		w := jsPropValue(at(script[1], "properties"), "weight")
		if w == nil && format == "binary" {
			w = at(script[1], "properties", "members", "0")
		}
		check("edge weight", w, 0.5)
		check("edge", []any{at(script[1], "class"), at(script[1], "inV", "id"), at(script[1], "outV", "id"), at(script[1], "label")},
			[]any{"Edge", "4", "1", "knows"})
		check("path", []any{at(script[2], "class"), unSet(at(script[2], "labels")), at(script[2], "objects", 0, "id"), at(script[2], "objects", 1)},
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
