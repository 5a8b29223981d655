package parser

import (
	"errors"
	"fmt"
	"strconv"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/parsecdb/parsec/internal/query/ast"
)

const goldenPath = "testdata/parse.txt"

// TestGolden runs testdata/parse.txt, a datadriven file:
//
//	parse            (or: expr, to parse a lone scalar expression)
//	<input, one or more lines>
//	----
//	<output: the canonical text, then the tree; or "error: <message>">
//
// The input is taken with its surrounding space trimmed; "parse quoted" and
// "expr quoted" take a Go-quoted string instead, for inputs whose leading or
// trailing space matters. Every case that parses must also print and parse
// back to the same tree (checkRoundTrip), and the corpus must stay as large
// as promised. Regenerate with -rewrite and review the diff.
func TestGolden(t *testing.T) {
	var ok, bad int
	datadriven.RunTest(t, goldenPath, func(t *testing.T, d *datadriven.TestData) string {
		n, out := run(t, d)
		if n != nil {
			ok++
			checkRoundTrip(t, n, fmt.Sprintf("%s: %q", d.Pos, input(t, d)))
		} else {
			bad++
		}
		return out
	})
	t.Logf("%d cases: %d parse, %d errors", ok+bad, ok, bad)
	if ok < 150 || bad < 30 {
		t.Errorf("want at least 150 parsing cases and 30 error cases, have %d and %d", ok, bad)
	}
}

// input returns the source text of a case: its input, or with the quoted
// argument the input unquoted.
func input(t testing.TB, d *datadriven.TestData) string {
	if !d.HasArg("quoted") {
		return d.Input
	}
	s, err := strconv.Unquote(d.Input)
	if err != nil {
		d.Fatalf(t, "quoted input: %v", err)
	}
	return s
}

// run parses the input of the case and renders the result as the golden
// file stores it. It returns the parsed node (nil on error).
func run(t testing.TB, d *datadriven.TestData) (ast.Node, string) {
	src := input(t, d)
	var err error
	switch d.Cmd {
	case "parse":
		var q *ast.Query
		if q, err = Parse(src); err == nil {
			return q, q.String() + "\n" + ast.Dump(q)
		}
	case "expr":
		var e ast.Expr
		if e, err = ParseExpr(src); err == nil {
			return e, e.String() + "\n" + ast.Tree(e)
		}
	default:
		d.Fatalf(t, "unknown command %q", d.Cmd)
	}
	if !errors.Is(err, ErrSyntax) {
		return nil, fmt.Sprintf("error not wrapping ErrSyntax: %v", err)
	}
	return nil, "error: " + err.Error()
}

// goldenInputs returns the inputs of every case of the golden file, without
// checking their outputs.
func goldenInputs(t testing.TB) []string {
	var ins []string
	datadriven.RunTestAny(t, goldenPath, func(t testing.TB, d *datadriven.TestData) string {
		ins = append(ins, input(t, d))
		return d.Expected
	})
	return ins
}

// checkRoundTrip fails unless printing n and parsing the text again gives
// a tree equal to n, whose text is the same again.
func checkRoundTrip(t *testing.T, n ast.Node, what string) {
	t.Helper()
	text := n.String()
	var again ast.Node
	var err error
	if _, isQuery := n.(*ast.Query); isQuery {
		again, err = Parse(text)
	} else {
		again, err = ParseExpr(text)
	}
	if err != nil {
		t.Fatalf("%s\nprinted as %q, which does not parse: %v", what, text, err)
	}
	if !ast.Equal(n, again) {
		t.Fatalf("%s\nprinted as %q, which parses to a different tree:\n%s\n%s", what, text, ast.Tree(n), ast.Tree(again))
	}
	if ast.Tree(n) != ast.Tree(again) {
		t.Fatalf("%s\nequal trees with different dumps:\n%s\n%s", what, ast.Tree(n), ast.Tree(again))
	}
	if text2 := again.String(); text2 != text {
		t.Fatalf("%s\nprinting is not stable: %q then %q", what, text, text2)
	}
}

func FuzzParse(f *testing.F) {
	for _, in := range goldenInputs(f) {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, src string) {
		q, err := Parse(src)
		if err != nil {
			var perr *Error
			if !errors.As(err, &perr) || !errors.Is(err, ErrSyntax) {
				t.Fatalf("error of the wrong type: %T %v", err, err)
			}
			if perr.Pos.Offset < 0 || perr.Pos.Offset > len(src) || perr.Pos.Line < 1 || perr.Pos.Col < 1 {
				t.Fatalf("error position %+v out of range for %d bytes", perr.Pos, len(src))
			}
			return
		}
		checkRoundTrip(t, q, fmt.Sprintf("%q", src))
	})
}
