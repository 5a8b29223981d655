package storage

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

// readOnlyChild is set in the environment of the process that
// TestReadOnlyFSStopsCleanly starts to meet the error.
const readOnlyChild = "PARSEC_STORAGE_READ_ONLY_CHILD"

// TestReadOnlyFSStopsCleanly makes the filesystem read-only (EROFS) once
// the store is open, then makes Pebble move to a new write-ahead log,
// which it must create. Pebble cannot continue past that error; the
// process must stop with the store's fail-stop message and status 1, not
// with a Go runtime error. The store stops the process, so it runs in a
// child process: this test binary, started again.
func TestReadOnlyFSStopsCleanly(t *testing.T) {
	if os.Getenv(readOnlyChild) != "" {
		readOnlyChildMain(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestReadOnlyFSStopsCleanly$", "-test.count=1")
	cmd.Env = append(os.Environ(), readOnlyChild+"=1")
	out, err := cmd.CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 1 {
		t.Fatalf("child: %v, want exit status 1; output:\n%s", err, out)
	}
	const want = "parsec: stopping: the store cannot continue safely: storage: cannot create the write-ahead log /d/"
	if !strings.Contains(string(out), want) || !strings.Contains(string(out), "read-only file system") {
		t.Errorf("child output does not say %q and name EROFS:\n%s", want, out)
	}
	if strings.Contains(string(out), "fatal error") || strings.Contains(string(out), "goroutine ") {
		t.Errorf("child crashed instead of stopping cleanly:\n%s", out)
	}
}

// readOnlyFS returns an in-memory filesystem holding /d that refuses, once
// *readOnly is set, to create, rename or remove the files whose names end
// in suffix, with EROFS as a filesystem remounted read-only does (files
// already open for writing may still be written).
func readOnlyFS(t *testing.T, readOnly *atomic.Bool, suffix string) vfs.FS {
	t.Helper()
	mem := vfs.NewMem()
	if err := mem.MkdirAll("/d", 0o755); err != nil {
		t.Fatal(err)
	}
	return errorfs.Wrap(mem, errorfs.InjectorFunc(func(op errorfs.Op) error {
		switch op.Kind {
		case errorfs.OpCreate, errorfs.OpReuseForWrite, errorfs.OpLink, errorfs.OpRename, errorfs.OpRemove:
			if readOnly.Load() && strings.HasSuffix(op.Path, suffix) {
				return &os.PathError{Op: "open", Path: op.Path, Err: syscall.EROFS}
			}
		}
		return nil
	}))
}

func readOnlyChildMain(t *testing.T) {
	var readOnly atomic.Bool
	db, err := Open(Options{Dir: "/d", FS: readOnlyFS(t, &readOnly, ""), Reserve: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := commitOne(db, "a"); err != nil {
		t.Fatal(err)
	}
	readOnly.Store(true)
	// A flush moves the store to a new write-ahead log first.
	err = db.pdb.Flush()
	t.Fatalf("flush on a read-only filesystem returned: %v", err)
}

// TestReadOnlyFSFailsFlush makes the filesystem refuse to create tables
// (EROFS) once the store is open. Pebble would retry the flush for ever
// while writes stall; the store must fail (OnFatal) naming the cause.
func TestReadOnlyFSFailsFlush(t *testing.T) {
	var readOnly atomic.Bool
	fatal := make(chan error, 1)
	db, err := Open(Options{Dir: "/d", FS: readOnlyFS(t, &readOnly, ".sst"), Reserve: -1,
		OnFatal: func(err error) { fatal <- err }})
	if err != nil {
		t.Fatal(err)
	}
	// The store is failed and Pebble keeps retrying: it is not closed.
	if err := commitOne(db, "a"); err != nil {
		t.Fatal(err)
	}
	readOnly.Store(true)
	db.pdb.AsyncFlush()
	if err := <-fatal; !strings.Contains(err.Error(), "storage: the filesystem is read-only") || !strings.Contains(err.Error(), ".sst") {
		t.Errorf("OnFatal(%v), want the read-only filesystem and the table named", err)
	}
	if err := commitOne(db, "b"); !errors.Is(err, ErrFailed) {
		t.Errorf("commit after the failure: %v, want ErrFailed", err)
	}
}
