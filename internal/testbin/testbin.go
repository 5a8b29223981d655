// Package testbin builds the parsec binary once for the tests of a package
// that run it as a process (crash, damaged-disk, resource and cluster
// tests), and collects what such a process prints.
package testbin

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// Main builds cmd/parsec into a temporary directory, sets *bin to its path,
// runs the package's tests and exits with their status, removing the
// binary. Call it from TestMain.
func Main(m *testing.M, bin *string) {
	dir, err := os.MkdirTemp("", "parsec-bin")
	if err != nil {
		panic(err)
	}
	*bin = filepath.Join(dir, "parsec")
	build := exec.Command("go", "build", "-o", *bin, "github.com/parsecdb/parsec/cmd/parsec")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		os.RemoveAll(dir)
		panic("cannot build parsec: " + err.Error())
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// Output collects what a process prints (its stdout and stderr), safe for
// the two writers at once.
type Output struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}
