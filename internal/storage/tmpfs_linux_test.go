package storage

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// tinyFS mounts a tmpfs of size bytes and returns its path, or skips the
// test when mounting is not permitted here.
func tinyFS(t *testing.T, size int) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		t.Skipf("skipping: cannot mount a tmpfs to fill (needs root or CAP_SYS_ADMIN): %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// TestRealDiskFull fills a real 64 MiB filesystem: writes must be refused
// with ErrNoSpace before Pebble meets ENOSPC, and accepted again once
// space is freed.
func TestRealDiskFull(t *testing.T) {
	root := tinyFS(t, 64<<20)
	dir := filepath.Join(root, "data")
	filler := filepath.Join(root, "filler")
	if err := os.WriteFile(filler, make([]byte, 24<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := Open(Options{Dir: dir, Reserve: 16 << 20, CacheBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	value := make([]byte, 256<<10)
	refused := -1
	for i := 0; i < 1000; i++ {
		b := db.NewBatch()
		_ = b.Set([]byte(fmt.Sprintf("k%04d", i)), value)
		err := b.Commit()
		if errors.Is(err, ErrNoSpace) {
			refused = i
			break
		}
		if err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	if refused < 0 {
		t.Fatal("64 MiB filesystem never reported being nearly full")
	}
	t.Logf("write %d refused: %v", refused, db.Ready())
	if err := db.Ready(); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("Ready when full: %v", err)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if err := db.Ready(); err != nil {
		t.Fatalf("Ready after freeing space: %v", err)
	}
	if err := commitOne(db, "after"); err != nil {
		t.Fatalf("write after freeing space: %v", err)
	}
}

// TestRealDiskFullWithoutReserve fills a real filesystem with the reserve
// turned off, as when another process takes the last of the space: Pebble's
// flush fails with ENOSPC and it retries until space returns, stalling the
// writes already inside it. From then on new writes must fail with
// ErrNoSpace instead of joining the stall, and once space is freed the
// stalled writes finish and new ones succeed. Which of Pebble's writes meets
// the full disk first is a race: if it is a write-ahead log append rather
// than a flush, the store must fail-stop cleanly instead (OnFatal once, then
// ErrFailed), which the test accepts as the other correct outcome.
func TestRealDiskFullWithoutReserve(t *testing.T) {
	root := tinyFS(t, 32<<20)
	filler := filepath.Join(root, "filler")
	if err := os.WriteFile(filler, make([]byte, 8<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	var fatal atomic.Pointer[error]
	db, err := Open(Options{Dir: filepath.Join(root, "data"), Reserve: -1, CacheBytes: 1 << 20,
		OnFatal: func(err error) { fatal.CompareAndSwap(nil, &err) }})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if fatal.Load() == nil {
			db.Close()
		}
	}()
	var stop atomic.Bool
	writer := make(chan error, 1)
	go func() {
		value := make([]byte, 256<<10)
		for i := 0; !stop.Load(); i++ {
			rand.Read(value) // incompressible, so the tables fill the disk too
			b := db.NewBatch()
			_ = b.Set([]byte(fmt.Sprintf("k%04d", i)), value)
			if err := b.Commit(); err != nil {
				writer <- fmt.Errorf("write %d: %w", i, err)
				return
			}
		}
		writer <- nil
	}()
	for { // the writer fills the disk
		err := db.Ready()
		if errors.Is(err, ErrNoSpace) {
			break
		}
		if errors.Is(err, ErrFailed) {
			// A log append met the full disk first: a clean fail-stop.
			stop.Store(true)
			if f := fatal.Load(); f == nil || !strings.Contains((*f).Error(), syscall.ENOSPC.Error()) {
				t.Fatalf("the store failed (%v) without calling OnFatal with ENOSPC", err)
			}
			if err := commitOne(db, "refused"); !errors.Is(err, ErrFailed) {
				t.Fatalf("write on a failed store: %v, want ErrFailed", err)
			}
			t.Logf("fail-stop: %v", *fatal.Load())
			return
		}
		time.Sleep(time.Millisecond)
	}
	stop.Store(true)
	if err := commitOne(db, "refused"); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("write on a full disk: %v, want ErrNoSpace", err)
	} else {
		t.Log(err)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if err := <-writer; err != nil && !errors.Is(err, ErrNoSpace) {
		t.Fatalf("writer: %v", err)
	}
	for db.Ready() != nil { // Pebble retries the flush until it succeeds
		time.Sleep(10 * time.Millisecond)
	}
	if err := commitOne(db, "after"); err != nil {
		t.Fatalf("write after freeing space: %v", err)
	}
}
