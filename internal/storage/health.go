package storage

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// ErrNoSpace means a write was refused because the filesystem holding the
// store has less free space than the reserve (Options.Reserve). Nothing was
// written; writes succeed again once space is freed.
var ErrNoSpace = errors.New("storage: not enough free disk space")

// ErrFailed means the store met an error it cannot recover from and
// refuses every write (see Options.OnFatal).
var ErrFailed = errors.New("storage: failed")

// spaceMonitor refuses writes when free space falls below the reserve. It
// asks the filesystem (statfs) on every write: that costs about a microsecond,
// next to the millisecond of the WAL sync that every write waits for.
type spaceMonitor struct {
	reserve uint64
	free    func() (uint64, error)
	dir     string
}

func newSpaceMonitor(reserve int64, free func() (uint64, error), fs vfs.FS, dir string) spaceMonitor {
	if reserve == 0 {
		reserve = DefaultReserve
	}
	if reserve < 0 {
		return spaceMonitor{}
	}
	if free == nil {
		free = func() (uint64, error) {
			u, err := fs.GetDiskUsage(dir)
			return u.AvailBytes, err
		}
	}
	return spaceMonitor{reserve: uint64(reserve), free: free, dir: dir}
}

// check returns ErrNoSpace, with the numbers, if free space is below the
// reserve. A failure to measure does not refuse writes: Pebble then meets
// whatever the filesystem says.
func (m *spaceMonitor) check() error {
	if m.free == nil {
		return nil
	}
	n, err := m.free()
	if err != nil || n >= m.reserve {
		return nil
	}
	return fmt.Errorf("%w: %s free in %s, below the reserve of %s kept so the store can flush and compact; writes resume once space is freed",
		ErrNoSpace, bytesText(n), m.dir, bytesText(m.reserve))
}

func bytesText(n uint64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}

// writable returns why a write cannot be made now, or nil.
func (db *DB) writable() error {
	if p := db.failed.Load(); p != nil {
		return fmt.Errorf("%w: %v", ErrFailed, *p)
	}
	if p := db.full.Load(); p != nil {
		return fmt.Errorf("%w: the store cannot flush its memory to disk (%v); writes resume once space is freed", ErrNoSpace, *p)
	}
	return db.space.check()
}

// events watches Pebble's background work. When the disk fills anyway
// (below the reserve by another process, or the check off), a flush fails
// with ENOSPC and Pebble retries it until space returns, stalling every
// write that needs room meanwhile: new writes are refused with ErrNoSpace
// from the first such failed flush until a flush gets through, and
// failures for lack of space are logged once, not at every retry.
func (db *DB) events() *pebble.EventListener {
	return &pebble.EventListener{
		BackgroundError: func(err error) {
			if errors.Is(err, syscall.EROFS) {
				// Pebble would retry the flush or compaction for ever
				// while writes stall: a read-only filesystem does not
				// heal by itself.
				db.fail(fmt.Errorf("storage: the filesystem is read-only: %w", err))
				return
			}
			if errors.Is(err, syscall.ENOSPC) {
				if !db.fullLogged.Swap(true) {
					fmt.Fprintf(os.Stderr, "storage: the disk is full: %v\n", err)
				}
				return
			}
			fmt.Fprintf(os.Stderr, "storage: background error: %v\n", err)
		},
		FlushEnd: func(info pebble.FlushInfo) {
			if err := info.Err; errors.Is(err, syscall.ENOSPC) {
				if db.full.Swap(&err) == nil {
					fmt.Fprintf(os.Stderr, "storage: refusing writes until space is freed: a flush failed: %v\n", err)
				}
				return
			}
			if db.full.Swap(nil) != nil {
				fmt.Fprintf(os.Stderr, "storage: accepting writes again: a flush succeeded\n")
			}
			db.fullLogged.Store(false)
		},
	}
}

// Ready returns nil if the store accepts writes, or the reason it does not
// (ErrNoSpace, ErrFailed).
func (db *DB) Ready() error { return db.writable() }

// fail marks the store failed and calls OnFatal, once.
func (db *DB) fail(err error) {
	db.failed.CompareAndSwap(nil, &err)
	db.fatalOnce.Do(func() { db.onFatal(err) })
}

// fatalUnwind is the panic value with which Fatalf leaves Pebble.
type fatalUnwind struct{ err error }

// guard runs a Pebble write. Pebble reports an unrecoverable failure
// (a WAL write or sync that failed) through Logger.Fatalf or a panic in
// the committing goroutine; guard turns either into a failed store and an
// error, never a crash labelled as a bug.
func (db *DB) guard(write func() error) (err error) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		if u, ok := r.(fatalUnwind); ok {
			err = fmt.Errorf("%w: %v", ErrFailed, u.err)
			return
		}
		ferr := fmt.Errorf("storage: write failed: %v", r)
		db.fail(ferr)
		err = fmt.Errorf("%w: %v", ErrFailed, ferr)
	}()
	return write()
}

// exitOnFatal is the default OnFatal: a clean fail-stop.
func exitOnFatal(err error) {
	fmt.Fprintf(os.Stderr, "parsec: stopping: the store cannot continue safely: %v\n", err)
	os.Exit(1)
}

// walGuardFS wraps the store's filesystem so that a failed creation,
// write, sync or close of a write-ahead log file (a full disk, a
// filesystem remounted read-only) fails the store (OnFatal) before Pebble
// sees the error. Pebble meets some of these where it cannot unwind: when
// it moves to a new log, it closes (and so syncs) the old one with its
// lock released and panics if that fails, which then ends the process
// with a runtime error about the lock instead of the clean fail-stop.
type walGuardFS struct {
	vfs.FS
	db *DB
}

func (fs walGuardFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, c)
	return fs.wrap(name, f, err)
}

func (fs walGuardFS) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname, c)
	return fs.wrap(newname, f, err)
}

func (fs walGuardFS) wrap(name string, f vfs.File, err error) (vfs.File, error) {
	if !strings.HasSuffix(name, ".log") {
		return f, err
	}
	if err != nil {
		// Pebble creates a log when it moves to a new one, with its lock
		// released, and panics if that fails.
		fs.db.fail(fmt.Errorf("storage: cannot create the write-ahead log %s: %w", name, err))
		return f, err
	}
	return &walFile{File: f, name: name, db: fs.db}, nil
}

// walFile is a write-ahead log file whose write errors fail the store.
type walFile struct {
	vfs.File
	name string
	db   *DB
}

func (f *walFile) check(err error) error {
	if err != nil {
		f.db.fail(fmt.Errorf("storage: write-ahead log %s: %w", f.name, err))
	}
	return err
}

func (f *walFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	return n, f.check(err)
}

func (f *walFile) Sync() error { return f.check(f.File.Sync()) }

func (f *walFile) SyncData() error { return f.check(f.File.SyncData()) }

func (f *walFile) SyncTo(length int64) (bool, error) {
	full, err := f.File.SyncTo(length)
	return full, f.check(err)
}

func (f *walFile) Close() error { return f.check(f.File.Close()) }
