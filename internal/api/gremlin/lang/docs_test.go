package lang

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// docBindings binds the variables that the TinkerPop documentation's
// examples define in earlier console lines, so that those examples parse
// as a client would send them with bindings.
var docBindings = map[string]any{
	"v1": int32(1), "v2": int32(2), "vMarko": int32(1), "vPeter": int32(6), "vA": int32(1),
	"vRexsterJob1": "job1", "vBlueprintsJob1": "job2", "vStephen": "stephen", "vBob": "bob",
	"ids":       []any{1, 2, 3},
	"persons":   []any{map[string]any{"id": 1, "name": "marko", "age": 29}},
	"relations": []any{map[string]any{"from": 1, "to": 2, "since": 2010}},
	"maps":      []any{map[string]any{"name": "marko"}},
	"results":   []any{},
}

type docExample struct {
	source, script, wantErr string
	bindings                []string // names of the scenario's parameters
	line                    int
}

// readDocExamples reads testdata/tinkerpop-docs.txt (its header says what
// it holds).
func readDocExamples(t testing.TB) []docExample {
	return readExamples(t, "testdata/tinkerpop-docs.txt")
}

// readExamples reads a file of examples: entries separated by blank lines,
// each "# <source>", optional "# bindings: <names>" and "# error: <message>"
// lines, then the script.
func readExamples(t testing.TB, path string) []docExample {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []docExample
	var cur docExample
	var script []string
	flush := func() {
		if len(script) > 0 {
			cur.script = strings.Join(script, "\n")
			out = append(out, cur)
		}
		cur, script = docExample{}, nil
	}
	for i, line := range strings.Split(string(b), "\n") {
		switch {
		case line == "":
			flush()
		case strings.HasPrefix(line, "# error: "):
			cur.wantErr = strings.TrimPrefix(line, "# error: ")
		case strings.HasPrefix(line, "# bindings: "):
			cur.bindings = strings.Fields(strings.TrimPrefix(line, "# bindings: "))
		case strings.HasPrefix(line, "# "):
			if cur.source == "" {
				cur.source, cur.line = strings.TrimPrefix(line, "# "), i+1
			}
		default:
			script = append(script, line)
		}
	}
	flush()
	return out
}

func TestTinkerPopDocExamples(t *testing.T) {
	examples := readDocExamples(t)
	if len(examples) < 700 {
		t.Fatalf("read %d examples, want the whole file", len(examples))
	}
	parsed := 0
	for _, ex := range examples {
		tr, err := Parse(ex.script, docBindings, Limits{})
		if ex.wantErr != "" {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Msg != ex.wantErr {
				t.Errorf("testdata line %d (%s): %s\n got error %v\nwant syntax error %q", ex.line, ex.source, ex.script, err, ex.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("testdata line %d (%s): %s\n%v", ex.line, ex.source, ex.script, err)
			continue
		}
		parsed++
		text := Format(tr)
		back, err := Parse(text, nil, Limits{})
		if err != nil || !Equal(tr, back) {
			t.Errorf("testdata line %d: %s\nformats as %s, which reads back as %v (err %v)", ex.line, ex.script, text, back, err)
		}
	}
	t.Logf("%d of %d documentation examples parse", parsed, len(examples))
}
