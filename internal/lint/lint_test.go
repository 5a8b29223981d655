package lint

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/parsecdb/parsec"

// pkg is what `go list -json` says of one package that the rules read.
type pkg struct {
	ImportPath string
	Imports    []string
}

// listPackages returns every package of the module, with its non-test
// imports.
func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", module+"/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("cannot decode go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	return pkgs
}

// TestImportRules checks which packages may import Pebble and net/http.
func TestImportRules(t *testing.T) {
	httpAllowed := func(path string) bool {
		rel := strings.TrimPrefix(path, module+"/")
		switch {
		case strings.HasPrefix(rel, "cmd/"), strings.HasPrefix(rel, "internal/api/"):
			return true
		}
		switch rel {
		case "internal/server", "internal/auth", "internal/bench", "internal/explorer":
			return true
		}
		return false
	}
	sawPebble, sawHTTP := false, false
	for _, p := range listPackages(t) {
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, "github.com/cockroachdb/pebble") {
				sawPebble = true
				if p.ImportPath != module+"/internal/storage" {
					t.Errorf("%s imports %s: only internal/storage may import Pebble", p.ImportPath, imp)
				}
			}
			if imp == "net/http" {
				sawHTTP = true
				if !httpAllowed(p.ImportPath) {
					t.Errorf("%s imports net/http: only the commands, the API, the server, auth, bench and the explorer speak HTTP", p.ImportPath)
				}
			}
		}
	}
	if !sawPebble || !sawHTTP {
		t.Fatalf("the imports were not read: Pebble seen %v, net/http seen %v", sawPebble, sawHTTP)
	}
}

// TestPurePackagesStayPure checks that the packages documented as pure
// (values and decisions over explicit inputs) import no I/O, clock,
// goroutine plumbing or storage, and none of the module's stateful layers.
func TestPurePackagesStayPure(t *testing.T) {
	pure := map[string]bool{}
	for _, p := range []string{"partition", "epk", "index", "jsondoc", "binfmt", "query/token", "query/ast", "query/scanner", "query/parser"} {
		pure[module+"/internal/"+p] = true
	}
	forbidden := func(imp string) bool {
		switch imp {
		case "os", "os/exec", "io/fs", "net", "net/http", "time", "sync", "sync/atomic", "math/rand", "math/rand/v2", "log":
			return true
		}
		for _, layer := range []string{"storage", "engine", "server", "api/", "auth", "bench"} {
			if strings.HasPrefix(imp, module+"/internal/"+layer) {
				return true
			}
		}
		return strings.HasPrefix(imp, "github.com/cockroachdb/pebble")
	}
	seen := 0
	for _, p := range listPackages(t) {
		if !pure[p.ImportPath] {
			continue
		}
		seen++
		for _, imp := range p.Imports {
			if forbidden(imp) {
				t.Errorf("%s is pure but imports %s", p.ImportPath, imp)
			}
		}
	}
	if seen != len(pure) {
		t.Fatalf("found %d of the %d pure packages", seen, len(pure))
	}
}

// TestNoReturnedBugErrors checks that no non-test Go file of the module
// builds an error whose message starts with "BUG" (errors.New or fmt.Errorf
// with such a literal): a broken invariant panics with "BUG:", damaged stored
// data is engine.ErrCorrupt, and a broken invariant where a panic could take
// the server down is engine.ErrInternal.
func TestNoReturnedBugErrors(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the module root is not %s: %v", root, err)
	}
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		rel, _ := filepath.Rel(root, path)
		for _, at := range bugErrors(t, rel, src) {
			t.Errorf("%s returns an error starting with \"BUG\": panic(\"BUG: ...\") if it is a broken invariant, wrap engine.ErrCorrupt if it is damaged stored data", at)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("read only %d Go files under %s", files, root)
	}
}

// TestBugErrorsAreFound checks that the rule above sees what it forbids,
// under any import name, and allows panics and other messages.
func TestBugErrorsAreFound(t *testing.T) {
	const src = `package p

import (
	"errors"
	xerrors "errors"
	"fmt"
)

func f(n int) error {
	if n == 0 {
		panic("BUG: n is zero")
	}
	_ = errors.New("cannot read: BUG in the disk")
	_ = fmt.Errorf("%w: corrupt", errors.New("damaged"))
	_ = xerrors.New(` + "`BUG: raw`" + `)
	return fmt.Errorf("BUG: n is %d", n)
}
`
	got := bugErrors(t, "p.go", []byte(src))
	want := []string{"p.go:15:6", "p.go:16:9"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("found %v, want %v", got, want)
	}
}

// bugErrors returns the positions in one Go source file of the calls to
// errors.New and fmt.Errorf whose first argument is a string literal
// starting with "BUG".
func bugErrors(t *testing.T, name string, src []byte) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("cannot parse %s: %v", name, err)
	}
	// The local name of each package the rule watches, and its functions.
	watched := map[string]string{}
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		var fn string
		switch path {
		case "errors":
			fn = "New"
		case "fmt":
			fn = "Errorf"
		default:
			continue
		}
		local := path
		if imp.Name != nil {
			local = imp.Name.Name
		}
		watched[local] = fn
	}
	var found []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) == 0 {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		pkg, ok := sel.X.(*ast.Ident)
		if !ok || watched[pkg.Name] != sel.Sel.Name {
			return true
		}
		lit, ok := call.Args[0].(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		if msg, err := strconv.Unquote(lit.Value); err == nil && strings.HasPrefix(msg, "BUG") {
			found = append(found, fset.Position(call.Pos()).String())
		}
		return true
	})
	return found
}
