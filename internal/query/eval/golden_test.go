package eval

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/query/ast"
	"github.com/parsecdb/parsec/internal/query/parser"
)

var rewrite = flag.Bool("rewrite", false, "rewrite testdata/eval.txt with the current output")

const goldenPath = "testdata/eval.txt"

// goldenCase is one case of testdata/eval.txt:
//
//	eval             (or: check, to run CheckParams on a whole query)
//	<input, one or more lines>
//	----
//	<output: the value as Value.String prints it, or "error: <message>";
//	 for check, "ok" or "error: <message>">
//	<blank line>
//
// Between cases, lines starting with # are comments, and two directives
// set the context of the cases after them:
//
//	doc <JSON>       the document bound to the alias c (default {})
//	params <JSON>    an object whose members are the parameters (default {})
//
// Every case runs with the clock at 2024-05-06T07:08:09.1234567Z, the query
// start 2024-05-06T07:08:00Z, RAND returning 0.25, and a small executor for
// subqueries (see testSubquery).
type goldenCase struct {
	line   int
	cmd    string
	input  string
	want   string
	doc    Value
	params map[string]Value
}

func readGolden(t testing.TB) (cases []*goldenCase, between [][]string) {
	t.Helper()
	data, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	doc := ObjectValue(nil)
	params := map[string]Value{}
	var pending []string
	for i := 0; i < len(lines); {
		l := lines[i]
		if l != "eval" && l != "check" {
			switch {
			case strings.HasPrefix(l, "doc "):
				v, err := FromJSON([]byte(l[4:]))
				if err != nil {
					t.Fatalf("%s:%d: %v", goldenPath, i+1, err)
				}
				doc = v
			case strings.HasPrefix(l, "params "):
				v, err := FromJSON([]byte(l[7:]))
				if err != nil || v.Kind() != Object {
					t.Fatalf("%s:%d: params must be a JSON object: %v", goldenPath, i+1, err)
				}
				params = map[string]Value{}
				for j := range v.Len() {
					k, pv := v.Member(j)
					params[k] = pv
				}
			case strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "#"):
				t.Fatalf("%s:%d: expected eval, check, doc, params, a comment or a blank line, got %q", goldenPath, i+1, l)
			}
			pending = append(pending, l)
			i++
			continue
		}
		c := &goldenCase{line: i + 1, cmd: l, doc: doc, params: params}
		i++
		var in []string
		for i < len(lines) && lines[i] != "----" {
			in = append(in, lines[i])
			i++
		}
		if i == len(lines) {
			t.Fatalf("%s:%d: case without ----", goldenPath, c.line)
		}
		i++
		var out []string
		for i < len(lines) && lines[i] != "" {
			out = append(out, lines[i])
			i++
		}
		c.input, c.want = strings.Join(in, "\n"), strings.Join(out, "\n")
		between = append(between, pending)
		pending = nil
		cases = append(cases, c)
	}
	between = append(between, pending)
	return cases, between
}

var (
	testNow   = time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.UTC)
	testStart = time.Date(2024, 5, 6, 7, 8, 0, 0, time.UTC)
)

func testEnv(doc Value, params map[string]Value) *Env {
	return &Env{
		Vars:       map[string]Value{"c": doc},
		Params:     params,
		Subquery:   testSubquery,
		Now:        func() time.Time { return testNow },
		QueryStart: testStart,
		Rand:       func() float64 { return 0.25 },
		Cache:      NewCache(),
	}
}

// run evaluates the case and renders the result as the golden file stores
// it.
func (c *goldenCase) run() string {
	switch c.cmd {
	case "eval":
		e, err := parser.ParseExpr(c.input)
		if err != nil {
			return "error: " + err.Error()
		}
		v, err := Eval(e, testEnv(c.doc, c.params))
		if err != nil {
			return "error: " + errText(err)
		}
		return v.String()
	case "check":
		q, err := parser.Parse(c.input)
		if err != nil {
			return "error: " + err.Error()
		}
		if err := CheckParams(q, c.params); err != nil {
			return "error: " + errText(err)
		}
		return "ok"
	}
	panic("unreachable")
}

// errText is the message of err, checked to be an *Error of a known kind.
func errText(err error) string {
	var e *Error
	if !errors.As(err, &e) {
		return fmt.Sprintf("not an *Error: %T %v", err, err)
	}
	return err.Error()
}

func TestGolden(t *testing.T) {
	cases, between := readGolden(t)
	var b strings.Builder
	for i, c := range cases {
		got := c.run()
		if !*rewrite && got != c.want {
			t.Errorf("%s:%d: %s\n%s\ngot:  %s\nwant: %s", goldenPath, c.line, c.cmd, c.input, got, c.want)
		}
		for _, l := range between[i] {
			b.WriteString(l + "\n")
		}
		fmt.Fprintf(&b, "%s\n%s\n----\n%s\n", c.cmd, c.input, got)
	}
	for _, l := range between[len(cases)] {
		b.WriteString(l + "\n")
	}
	if *rewrite {
		if err := os.WriteFile(goldenPath, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestGoldenCoverage keeps the corpus as large as promised and makes sure
// every built-in function appears in it.
func TestGoldenCoverage(t *testing.T) {
	cases, _ := readGolden(t)
	var evals, checks int
	text := strings.Builder{}
	for _, c := range cases {
		if c.cmd == "eval" {
			evals++
		} else {
			checks++
		}
		text.WriteString(strings.ToUpper(c.input) + "\n")
	}
	t.Logf("%d cases: %d eval, %d check", len(cases), evals, checks)
	if evals < 250 || checks < 15 {
		t.Errorf("want at least 250 eval and 15 check cases, have %d and %d", evals, checks)
	}
	all := text.String()
	for _, name := range FunctionNames() {
		if !strings.Contains(all, strings.ToUpper(name)+"(") {
			t.Errorf("function %s has no golden case", name)
		}
	}
}

// testSubquery is a toy executor for the golden tests: one FROM source
// (alias IN path, or path [AS alias]), WHERE, and SELECT VALUE, SELECT *
// or a select list; an aggregate in SELECT VALUE or a select list folds
// all rows into one with Accumulators.
func testSubquery(q *ast.Query, env *Env) ([]Value, error) {
	scopes := []*Env{env}
	if q.From != nil {
		if len(q.From.Joins) > 0 {
			return nil, errors.New("testSubquery: no JOIN")
		}
		src := q.From.Source
		if src.Coll.Query != nil {
			return nil, errors.New("testSubquery: no subquery in FROM")
		}
		v, ok := env.Lookup(src.Coll.Root)
		if !ok {
			return nil, fmt.Errorf("testSubquery: unbound %s", src.Coll.Root)
		}
		for _, seg := range src.Coll.Path {
			switch seg.Kind {
			case ast.SegName, ast.SegKey:
				v = v.Property(seg.Text)
			case ast.SegIndex:
				n, _ := strconv.Atoi(seg.Text)
				v = index(v, IntValue(int64(n)))
			}
		}
		alias := src.Alias
		if alias == "" {
			alias = src.Coll.Root
			if len(src.Coll.Path) > 0 {
				alias = src.Coll.Path[len(src.Coll.Path)-1].Text
			}
		}
		scopes = nil
		if src.Iter {
			for _, e := range v.Elems() {
				scopes = append(scopes, env.Child(map[string]Value{alias: e}))
			}
		} else if v.IsDefined() {
			scopes = append(scopes, env.Child(map[string]Value{alias: v}))
		}
	}
	var kept []*Env
	for _, s := range scopes {
		if q.Where != nil {
			w, err := Eval(q.Where, s)
			if err != nil {
				return nil, err
			}
			if !w.AsBool() {
				continue
			}
		}
		kept = append(kept, s)
	}
	// Aggregates: evaluate their argument over every row.
	aggregating := false
	var exprs []ast.Expr
	switch q.Select.Kind {
	case ast.SelectValue:
		exprs = []ast.Expr{q.Select.Value}
	case ast.SelectList:
		for _, it := range q.Select.Items {
			exprs = append(exprs, it.X)
		}
	}
	for _, x := range exprs {
		if c, ok := x.(*ast.Call); ok && !c.UDF && IsAggregate(c.Name) {
			aggregating = true
		}
	}
	project := func(s *Env) (Value, error) {
		switch q.Select.Kind {
		case ast.SelectValue:
			return Eval(q.Select.Value, s)
		case ast.SelectStar:
			if q.From == nil {
				return Value{}, errors.New("testSubquery: SELECT * without FROM")
			}
			for _, v := range s.Vars {
				return v, nil
			}
			return Value{}, nil
		}
		var ms []Member
		for i, it := range q.Select.Items {
			v, err := Eval(it.X, s)
			if err != nil {
				return Value{}, err
			}
			name := it.Alias
			if name == "" {
				if d, ok := it.X.(*ast.Dot); ok {
					name = d.Name
				} else {
					name = "$" + strconv.Itoa(i+1)
				}
			}
			ms = append(ms, Member{name, v})
		}
		return ObjectValue(ms), nil
	}
	var rows []Value
	if aggregating {
		rowEnv := *env
		rowEnv.Aggregate = func(call *ast.Call, _ *Env) (Value, error) {
			kind, _ := ParseAggKind(call.Name)
			acc := NewAccumulator(kind)
			for _, s := range kept {
				v, err := Eval(call.Args[0], s)
				if err != nil {
					return Value{}, err
				}
				acc.Add(v)
			}
			return acc.Result(), nil
		}
		v, err := project(&rowEnv)
		if err != nil {
			return nil, err
		}
		if v.IsDefined() {
			rows = append(rows, v)
		}
		return rows, nil
	}
	for _, s := range kept {
		v, err := project(s)
		if err != nil {
			return nil, err
		}
		if v.IsDefined() {
			rows = append(rows, v)
		}
	}
	return rows, nil
}
