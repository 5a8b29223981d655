package parser

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/parsecdb/parsec/internal/query/ast"
)

var rewrite = flag.Bool("rewrite", false, "rewrite testdata/parse.txt with the current output")

const goldenPath = "testdata/parse.txt"

// goldenCase is one case of testdata/parse.txt:
//
//	parse            (or: expr, to parse a lone scalar expression)
//	<input, one or more lines>
//	----
//	<output: the canonical text, then the tree; or "error: <message>">
//	<blank line>
//
// Lines starting with # between cases are comments.
type goldenCase struct {
	line  int // line of the directive
	cmd   string
	input string
	want  string
}

// readGolden splits the golden file into its cases and the text around
// them, so that -rewrite can keep the comments.
func readGolden(t testing.TB) (cases []*goldenCase, between [][]string) {
	t.Helper()
	data, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	var pending []string
	for i := 0; i < len(lines); {
		l := lines[i]
		if l != "parse" && l != "expr" {
			if strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "#") {
				t.Fatalf("%s:%d: expected parse, expr, a comment or a blank line, got %q", goldenPath, i+1, l)
			}
			pending = append(pending, l)
			i++
			continue
		}
		c := &goldenCase{line: i + 1, cmd: l}
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

// run parses the input of c and renders the result as the golden file
// stores it. It returns the parsed node (nil on error).
func (c *goldenCase) run() (ast.Node, string) {
	var n ast.Node
	var err error
	switch c.cmd {
	case "parse":
		var q *ast.Query
		if q, err = Parse(c.input); err == nil {
			return q, q.String() + "\n" + ast.Dump(q)
		}
	case "expr":
		var e ast.Expr
		if e, err = ParseExpr(c.input); err == nil {
			return e, e.String() + "\n" + ast.Tree(e)
		}
	}
	if !errors.Is(err, ErrSyntax) {
		return n, fmt.Sprintf("error not wrapping ErrSyntax: %v", err)
	}
	return nil, "error: " + err.Error()
}

func TestGolden(t *testing.T) {
	cases, between := readGolden(t)
	var b strings.Builder
	for i, c := range cases {
		_, got := c.run()
		if !*rewrite && got != c.want {
			t.Errorf("%s:%d: %s\n%s\ngot:\n%s\nwant:\n%s", goldenPath, c.line, c.cmd, c.input, got, c.want)
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

// TestGoldenCoverage keeps the corpus as large as promised.
func TestGoldenCoverage(t *testing.T) {
	cases, _ := readGolden(t)
	var ok, bad int
	for _, c := range cases {
		if n, _ := c.run(); n != nil {
			ok++
		} else {
			bad++
		}
	}
	t.Logf("%d cases: %d parse, %d errors", len(cases), ok, bad)
	if ok < 150 || bad < 30 {
		t.Errorf("want at least 150 parsing cases and 30 error cases, have %d and %d", ok, bad)
	}
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

func TestRoundTrip(t *testing.T) {
	cases, _ := readGolden(t)
	for _, c := range cases {
		if n, _ := c.run(); n != nil {
			checkRoundTrip(t, n, fmt.Sprintf("%s:%d: %q", goldenPath, c.line, c.input))
		}
	}
}

func FuzzParse(f *testing.F) {
	cases, _ := readGolden(f)
	for _, c := range cases {
		f.Add(c.input)
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
