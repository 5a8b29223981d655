package storage

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

func commitOne(db *DB, k string) error {
	b := db.NewBatch()
	if err := b.Set([]byte(k), []byte("v")); err != nil {
		b.Discard()
		return err
	}
	return b.Commit()
}

// TestNoSpaceRefusesWrites checks that writes fail with ErrNoSpace, and
// write nothing, while free space is below the reserve, that Ready says
// why, and that both recover once space returns.
func TestNoSpaceRefusesWrites(t *testing.T) {
	fs := vfs.NewMem()
	if err := fs.MkdirAll("/d", 0o755); err != nil {
		t.Fatal(err)
	}
	setFree := func(n uint64) { fs.TestingSetDiskUsage(vfs.DiskUsage{AvailBytes: n, TotalBytes: 100 << 30}) }
	setFree(10 << 30)
	db, err := Open(Options{Dir: "/d", FS: fs, Reserve: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := commitOne(db, "a"); err != nil {
		t.Fatal(err)
	}

	setFree(100 << 20)
	if err := db.Ready(); !errors.Is(err, ErrNoSpace) || !strings.Contains(err.Error(), "100.0 MiB free") {
		t.Errorf("Ready with 100 MiB free: %v", err)
	}
	if err := commitOne(db, "b"); !errors.Is(err, ErrNoSpace) {
		t.Errorf("commit with 100 MiB free: %v, want ErrNoSpace", err)
	}
	if err := db.Set([]byte("c"), []byte("v")); !errors.Is(err, ErrNoSpace) {
		t.Errorf("set with 100 MiB free: %v, want ErrNoSpace", err)
	}
	for _, k := range []string{"b", "c"} {
		if _, err := db.Get(nil, []byte(k)); !errors.Is(err, ErrNotFound) {
			t.Errorf("refused write of %q is visible: %v", k, err)
		}
	}

	setFree(2 << 30)
	if err := db.Ready(); err != nil {
		t.Errorf("Ready after space returned: %v", err)
	}
	if err := commitOne(db, "b"); err != nil {
		t.Errorf("commit after space returned: %v", err)
	}
}

// TestWALFailureStopsCleanly makes every write-ahead log write and sync
// fail with ENOSPC. The write that meets it must return ErrFailed (not
// panic), OnFatal must be called once with the cause, and the store must
// refuse every later write and report itself not ready.
func TestWALFailureStopsCleanly(t *testing.T) {
	mem := vfs.NewMem()
	if err := mem.MkdirAll("/d", 0o755); err != nil {
		t.Fatal(err)
	}
	var broken atomic.Bool
	fs := errorfs.Wrap(mem, errorfs.InjectorFunc(func(op errorfs.Op) error {
		if broken.Load() && strings.HasSuffix(op.Path, ".log") && op.Kind.ReadOrWrite() == errorfs.OpIsWrite {
			return fmt.Errorf("write %s: %w", op.Path, syscall.ENOSPC)
		}
		return nil
	}))
	var mu sync.Mutex
	var fatal []error
	db, err := Open(Options{Dir: "/d", FS: fs, Reserve: -1, OnFatal: func(err error) {
		mu.Lock()
		fatal = append(fatal, err)
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	// The store is failed and Pebble's state is unknown: it is not closed.
	if err := commitOne(db, "a"); err != nil {
		t.Fatal(err)
	}
	broken.Store(true)
	err = commitOne(db, "b")
	if !errors.Is(err, ErrFailed) || !strings.Contains(err.Error(), "no space left on device") {
		t.Errorf("commit on a failing WAL: %v, want ErrFailed naming the cause", err)
	}
	if err := commitOne(db, "c"); !errors.Is(err, ErrFailed) {
		t.Errorf("commit after the failure: %v, want ErrFailed", err)
	}
	if err := db.Ready(); !errors.Is(err, ErrFailed) {
		t.Errorf("Ready after the failure: %v, want ErrFailed", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(fatal) != 1 || !strings.Contains(fatal[0].Error(), "no space left on device") {
		t.Errorf("OnFatal calls: %v, want one naming the cause", fatal)
	}
}
