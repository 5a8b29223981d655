// Package testbin builds the parsec binary once for the tests of a package
// that run it as a process (crash, damaged-disk and resource tests).
package testbin

import (
	"os"
	"os/exec"
	"path/filepath"
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
