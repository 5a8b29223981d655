package lint

import (
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
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
		case "internal/server", "internal/auth", "internal/bench":
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
					t.Errorf("%s imports net/http: only the commands, the API, the server, auth and bench speak HTTP", p.ImportPath)
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
	for _, p := range []string{"partition", "epk", "index", "jsondoc", "query/token", "query/ast", "query/scanner", "query/parser"} {
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
