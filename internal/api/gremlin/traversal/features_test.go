package traversal_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/api/gremlin/graph"
	"github.com/parsecdb/parsec/internal/api/gremlin/graph/memgraph"
	"github.com/parsecdb/parsec/internal/api/gremlin/lang"
	"github.com/parsecdb/parsec/internal/api/gremlin/traversal"
)

// TestFeatures runs TinkerPop's gherkin scenarios over the modern and crew
// graphs (read-only ones: a scenario that writes or needs another graph is
// skipped) when PARSEC_TINKERPOP_FEATURES names the directory of the
// .feature files (gremlin-test/.../test/features in apache/tinkerpop). It
// logs each mismatch and a summary, and fails when the evaluator answers a
// scenario with a store error or a panic, or when more scenarios mismatch
// than PARSEC_TINKERPOP_MAX_MISMATCH (default: any). Ids are strings here,
// and steps Cosmos lacks are unsupported, so some mismatches are expected.
func TestFeatures(t *testing.T) {
	dir := os.Getenv("PARSEC_TINKERPOP_FEATURES")
	if dir == "" {
		t.Skip("PARSEC_TINKERPOP_FEATURES is not set")
	}
	var files []string
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && strings.HasSuffix(p, ".feature") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	graphs := map[string]*memgraph.Graph{"modern": modern(t), "crew": crew(t)}
	counts := map[string]int{}
	var mismatches []string
	reasons := map[string]int{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, sc := range parseFeature(string(b)) {
			outcome, detail := runScenario(t, graphs, sc)
			counts[outcome]++
			if outcome == "unsupported" {
				reasons[detail]++
			}
			switch outcome {
			case "mismatch", "error":
				mismatches = append(mismatches, fmt.Sprintf("%s %s: %s\n%s", outcome, sc.name, sc.traversal, detail))
			case "fatal":
				t.Errorf("%s: %s: %s", sc.name, sc.traversal, detail)
			}
		}
	}
	for _, m := range mismatches {
		t.Log(m)
	}
	type reason struct {
		text string
		n    int
	}
	var rs []reason
	for k, n := range reasons {
		rs = append(rs, reason{k, n})
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].n > rs[j].n || (rs[i].n == rs[j].n && rs[i].text < rs[j].text) })
	for i, r := range rs {
		if i == 40 {
			break
		}
		t.Logf("unsupported %4d %s", r.n, r.text)
	}
	t.Logf("features: %v", counts)
	if max := os.Getenv("PARSEC_TINKERPOP_MAX_MISMATCH"); max != "" {
		n, _ := strconv.Atoi(max)
		if counts["mismatch"] > n {
			t.Errorf("%d mismatches, more than %d", counts["mismatch"], n)
		}
	}
}

type scenario struct {
	name, graph, traversal string
	params                 map[string]string
	iterate                string // "list" or "next"
	expect                 string // "unordered", "ordered", "empty", "count", or "" (unsupported)
	count                  int
	rows                   []string
	skip                   bool
}

func parseFeature(text string) []scenario {
	var out []scenario
	parts := strings.Split(text, "\n  Scenario: ")
	for _, part := range parts[1:] {
		lines := strings.Split(part, "\n")
		sc := scenario{name: strings.TrimSpace(lines[0]), params: map[string]string{}}
		inTrav, inTable := false, false
		var trav []string
		for _, raw := range lines[1:] {
			l := strings.TrimSpace(raw)
			switch {
			case l == `"""`:
				inTrav = !inTrav
				continue
			case inTrav:
				trav = append(trav, l)
				continue
			case strings.HasPrefix(l, "Given the ") && strings.HasSuffix(l, " graph"):
				sc.graph = strings.TrimSuffix(strings.TrimPrefix(l, "Given the "), " graph")
			case strings.HasPrefix(l, "And using the parameter "):
				rest := strings.TrimPrefix(l, "And using the parameter ")
				name, val, ok := strings.Cut(rest, " defined as ")
				if !ok {
					sc.skip = true
				}
				sc.params[name] = strings.Trim(val, `"`)
			case l == "When iterated to list":
				sc.iterate = "list"
			case l == "When iterated next":
				sc.iterate = "next"
			case l == "Then the result should be unordered":
				sc.expect, inTable = "unordered", true
			case l == "Then the result should be ordered":
				sc.expect, inTable = "ordered", true
			case l == "Then the result should be empty":
				sc.expect = "empty"
			case strings.HasPrefix(l, "Then the result should have a count of "):
				sc.expect = "count"
				sc.count, _ = strconv.Atoi(strings.TrimPrefix(l, "Then the result should have a count of "))
			case strings.HasPrefix(l, "And the graph should return"), strings.HasPrefix(l, "And the graph initializer"),
				strings.HasPrefix(l, "And using the side effect"), strings.HasPrefix(l, "Then the traversal will raise"),
				strings.HasPrefix(l, "Then the result should be of"):
				sc.skip = true
			case inTable && strings.HasPrefix(l, "|"):
				cell := strings.TrimSpace(strings.Trim(l, "|"))
				if cell != "result" {
					sc.rows = append(sc.rows, cell)
				}
			case l == "" || strings.HasPrefix(l, "@") || strings.HasPrefix(l, "#"):
				inTable = false
			}
		}
		sc.traversal = strings.Join(trav, " ")
		out = append(out, sc)
	}
	return out
}

// names maps the toy graphs' vertex names to their ids here.
func vertexByName(g *memgraph.Graph, name string) *graph.Vertex {
	for _, v := range g.AllVertices() {
		if ps := v.Properties["name"]; len(ps) > 0 && ps[0].Value == name {
			return v
		}
	}
	return nil
}

func runScenario(t *testing.T, graphs map[string]*memgraph.Graph, sc scenario) (outcome, detail string) {
	g, ok := graphs[sc.graph]
	if !ok || sc.skip || sc.expect == "" || sc.iterate != "list" {
		return "skipped", ""
	}
	bindings := map[string]any{}
	for k, v := range sc.params {
		val, ok := bindingOf(g, v)
		if !ok {
			return "skipped", ""
		}
		bindings[k] = val
	}
	tr, err := lang.Parse(sc.traversal, bindings, lang.Limits{})
	if err != nil {
		return "unparsed", err.Error()
	}
	defer func() {
		if r := recover(); r != nil {
			outcome, detail = "fatal", fmt.Sprintf("panic: %v", r)
		}
	}()
	n := 1000
	res, err := traversal.Run(t.Context(), tr, g, traversal.Options{Timeout: 5 * time.Second, NewID: func() string { n++; return fmt.Sprint(n) }})
	if err != nil {
		var e *traversal.Error
		if errors.As(err, &e) && errors.Is(err, traversal.ErrUnsupported) {
			return "unsupported", err.Error()
		}
		if errors.As(err, &e) && e.Code == traversal.CodeStore {
			return "fatal", err.Error()
		}
		return "error", err.Error()
	}
	if res.Written > 0 {
		return "fatal", "a read-only scenario wrote"
	}
	got := make([]string, len(res.Values))
	for i, v := range res.Values {
		got[i] = canon(v)
	}
	var want []string
	for _, r := range sc.rows {
		c, ok := canonNotation(g, r)
		if !ok {
			return "skipped", ""
		}
		want = append(want, c)
	}
	switch sc.expect {
	case "empty":
		if len(got) == 0 {
			return "pass", ""
		}
	case "count":
		if len(got) == sc.count {
			return "pass", ""
		}
	case "unordered", "ordered":
		if sc.expect == "unordered" {
			sort.Strings(got)
			sort.Strings(want)
		}
		if strings.Join(got, "\n") == strings.Join(want, "\n") {
			return "pass", ""
		}
	}
	return "mismatch", fmt.Sprintf("  got:  %v\n  want: %v (%s %d)", got, want, sc.expect, sc.count)
}

func bindingOf(g *memgraph.Graph, v string) (any, bool) {
	if strings.HasPrefix(v, "v[") && strings.HasSuffix(v, "].id") {
		x := vertexByName(g, strings.TrimSuffix(strings.TrimPrefix(v, "v["), "].id"))
		if x == nil {
			return nil, false
		}
		return x.ID, true
	}
	c, ok := decodeNotation(g, v)
	if !ok {
		return nil, false
	}
	switch c.(type) {
	case string, int32, int64, float64, float32, bool, nil:
		return c, true
	}
	return nil, false
}

// decodeNotation reads the gherkin result notation: d[29].i, v[marko],
// e[marko-knows->vadas], m[{...}], l[...], s[...], p[...], t[id], null,
// and plain strings.
func decodeNotation(g *memgraph.Graph, s string) (any, bool) {
	switch {
	case s == "null":
		return nil, true
	case s == "true" || s == "false":
		return s == "true", true
	case strings.HasPrefix(s, "d[") && len(s) > 4 && s[len(s)-2] == '.':
		num, kind := s[2:len(s)-3], s[len(s)-1]
		switch kind {
		case 'i':
			n, err := strconv.ParseInt(num, 10, 32)
			return int32(n), err == nil
		case 'l', 's', 'b':
			n, err := strconv.ParseInt(num, 10, 64)
			return n, err == nil
		case 'f':
			f, err := strconv.ParseFloat(num, 32)
			return float32(f), err == nil
		case 'd':
			f, err := strconv.ParseFloat(num, 64)
			return f, err == nil
		case 'n':
			n, ok := new(big.Int).SetString(num, 10)
			return n, ok
		}
		return nil, false
	case strings.HasPrefix(s, "v[") && strings.HasSuffix(s, "]"):
		v := vertexByName(g, s[2:len(s)-1])
		return v, v != nil
	case strings.HasPrefix(s, "e[") && strings.HasSuffix(s, "]"):
		spec := s[2 : len(s)-1]
		out, rest, ok := strings.Cut(spec, "-")
		label, in, ok2 := strings.Cut(rest, "->")
		if !ok || !ok2 {
			return nil, false
		}
		ov, iv := vertexByName(g, out), vertexByName(g, in)
		if ov == nil || iv == nil {
			return nil, false
		}
		for _, e := range g.AllEdges() {
			if e.Out.ID == ov.ID && e.In.ID == iv.ID && e.Label == label {
				return e, true
			}
		}
		return nil, false
	case strings.HasPrefix(s, "t[") && strings.HasSuffix(s, "]"):
		return lang.Token{Type: "T", Name: s[2 : len(s)-1]}, true
	case strings.HasPrefix(s, "m[") && strings.HasSuffix(s, "]"):
		var raw any
		dec := json.NewDecoder(strings.NewReader(s[2 : len(s)-1]))
		dec.UseNumber()
		if err := dec.Decode(&raw); err != nil {
			return nil, false
		}
		return decodeJSON(g, raw)
	case (strings.HasPrefix(s, "l[") || strings.HasPrefix(s, "s[") || strings.HasPrefix(s, "p[")) && strings.HasSuffix(s, "]"):
		var items []any
		for _, part := range splitTop(s[2 : len(s)-1]) {
			v, ok := decodeNotation(g, part)
			if !ok {
				return nil, false
			}
			items = append(items, v)
		}
		if items == nil {
			items = []any{}
		}
		switch s[0] {
		case 's':
			sort.Slice(items, func(i, j int) bool { return canon(items[i]) < canon(items[j]) })
			return setOf(items), true
		case 'p':
			return &graph.Path{Objects: items}, true
		}
		return items, true
	case strings.HasPrefix(s, "str["):
		return strings.TrimSuffix(strings.TrimPrefix(s, "str["), "]"), true
	}
	if strings.ContainsAny(s[:min(len(s), 3)], "[") {
		return nil, false
	}
	return s, true
}

// setOf marks a decoded set, compared without order.
type setOf []any

func decodeJSON(g *memgraph.Graph, raw any) (any, bool) {
	switch x := raw.(type) {
	case string:
		return decodeNotation(g, x)
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i, true
		}
		f, err := x.Float64()
		return f, err == nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			v, ok := decodeJSON(g, e)
			if !ok {
				return nil, false
			}
			out[i] = v
		}
		return out, true
	case map[string]any:
		m := &graph.Map{}
		for k, v := range x {
			kv, ok := decodeNotation(g, k)
			vv, ok2 := decodeJSON(g, v)
			if !ok || !ok2 {
				return nil, false
			}
			m.Entries = append(m.Entries, graph.Entry{Key: kv, Value: vv})
		}
		return m, true
	case bool, nil:
		return x, true
	}
	return nil, false
}

func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '[', '{':
			depth++
		case ']', '}':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	if strings.TrimSpace(s[start:]) != "" {
		out = append(out, strings.TrimSpace(s[start:]))
	}
	return out
}

func canonNotation(g *memgraph.Graph, s string) (string, bool) {
	v, ok := decodeNotation(g, s)
	if !ok {
		return "", false
	}
	return canon(v), true
}

// canon prints a value so that Gremlin-equal values print alike: numbers
// by value, maps and sets without order.
func canon(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return strconv.Quote(x)
	case *graph.Vertex:
		return "v[" + x.ID + "]"
	case *graph.Edge:
		return "e[" + x.ID + "]"
	case *graph.VertexProperty:
		return "vp[" + x.Key + "->" + canon(x.Value) + "]"
	case *graph.Property:
		return "p[" + x.Key + "->" + canon(x.Value) + "]"
	case lang.Token:
		return "t[" + x.Name + "]"
	case setOf:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = canon(e)
		}
		sort.Strings(parts)
		return "[" + strings.Join(parts, ",") + "]"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = canon(e)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case *graph.Map:
		parts := make([]string, len(x.Entries))
		for i, e := range x.Entries {
			parts[i] = canon(e.Key) + ":" + canon(e.Value)
		}
		sort.Strings(parts)
		return "{" + strings.Join(parts, ",") + "}"
	case *graph.Path:
		return "path" + canon(x.Objects)
	case bool:
		return strconv.FormatBool(x)
	}
	if graph.IsNumber(v) {
		f, _ := strconv.ParseFloat(fmt.Sprint(v), 64)
		return "n:" + strconv.FormatFloat(f, 'g', -1, 64)
	}
	return fmt.Sprintf("%T:%v", v, v)
}
