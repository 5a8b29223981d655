package eval

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/parsecdb/parsec/internal/query/ast"
	"github.com/parsecdb/parsec/internal/query/parser"
)

const goldenPath = "testdata/eval.txt"

// TestGolden runs testdata/eval.txt, a datadriven file of cases
//
//	eval             (or: check, to run CheckParams on a whole query)
//	<input, one or more lines>
//	----
//	<output: the value as Value.String prints it, or "error: <message>";
//	 for check, "ok" or "error: <message>">
//
// and two commands, with an empty output, that set the context of the cases
// after them:
//
//	doc              the document bound to the alias c (default {})
//	<JSON>
//	----
//
//	params           an object whose members are the parameters (default {})
//	<JSON>
//	----
//
// Every case runs with the clock at 2024-05-06T07:08:09.1234567Z, the query
// start 2024-05-06T07:08:00Z, RAND returning 0.25, and a small executor for
// subqueries (see testSubquery). The corpus must stay as large as promised
// and name every built-in function. Regenerate with -rewrite and review the
// diff.
func TestGolden(t *testing.T) {
	doc := ObjectValue(nil)
	params := map[string]Value{}
	var evals, checks int
	var text strings.Builder
	datadriven.RunTest(t, goldenPath, func(t *testing.T, d *datadriven.TestData) string {
		switch d.Cmd {
		case "doc":
			v, err := FromJSON([]byte(d.Input))
			if err != nil {
				d.Fatalf(t, "%v", err)
			}
			doc = v
			return ""
		case "params":
			v, err := FromJSON([]byte(d.Input))
			if err != nil || v.Kind() != Object {
				d.Fatalf(t, "params must be a JSON object: %v", err)
			}
			params = map[string]Value{}
			for j := range v.Len() {
				k, pv := v.Member(j)
				params[k] = pv
			}
			return ""
		case "eval":
			evals++
			text.WriteString(strings.ToUpper(d.Input) + "\n")
			return runEval(d.Input, doc, params)
		case "check":
			checks++
			text.WriteString(strings.ToUpper(d.Input) + "\n")
			return runCheck(d.Input, params)
		}
		d.Fatalf(t, "unknown command %q", d.Cmd)
		return ""
	})
	t.Logf("%d cases: %d eval, %d check", evals+checks, evals, checks)
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

// runEval evaluates an expression with c bound to doc and renders the
// result as the golden file stores it.
func runEval(src string, doc Value, params map[string]Value) string {
	e, err := parser.ParseExpr(src)
	if err != nil {
		return "error: " + err.Error()
	}
	v, err := Eval(e, testEnv(doc, params))
	if err != nil {
		return "error: " + errText(err)
	}
	return v.String()
}

// runCheck runs CheckParams on a query and renders the result as the
// golden file stores it.
func runCheck(src string, params map[string]Value) string {
	q, err := parser.Parse(src)
	if err != nil {
		return "error: " + err.Error()
	}
	if err := CheckParams(q, params); err != nil {
		return "error: " + errText(err)
	}
	return "ok"
}

// errText is the message of err, checked to be an *Error of a known kind.
func errText(err error) string {
	var e *Error
	if !errors.As(err, &e) {
		return fmt.Sprintf("not an *Error: %T %v", err, err)
	}
	return err.Error()
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
