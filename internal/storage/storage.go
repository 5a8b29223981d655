package storage

import (
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// ErrNotFound means a key is absent.
var ErrNotFound = errors.New("storage: not found")

// Options configure Open.
type Options struct {
	// Dir is the data directory. Ignored when InMemory is set.
	Dir string
	// InMemory keeps everything in memory (vfs.NewMem), with no write-ahead
	// log: nothing survives Close.
	InMemory bool
	// CacheBytes is the block cache size; 0 picks a default.
	CacheBytes int64
	// FS, when set, is the filesystem that holds Dir (tests use vfs.NewMem
	// and errorfs to inject faults). Default: the operating system's.
	FS vfs.FS
	// AcceptDataLoss lets Open start on a write-ahead log that is damaged
	// before its end: the log is cut at the damage (the original is kept
	// beside it, see ErrDataLoss) and the writes after it are lost. It also
	// lets Open start on a damaged MANIFEST (see findManifestDamage) from
	// the state recorded before the damage, if every table that state names
	// still exists (the original is kept beside it); the tables recorded
	// after it are lost. Without it Open refuses with ErrDataLoss.
	AcceptDataLoss bool
	// Logf logs what Open repaired. Default log.Printf.
	Logf func(format string, args ...any)
	// Reserve is the free space, in bytes, below which writes fail with
	// ErrNoSpace before the disk is full. 0 means DefaultReserve; a negative
	// value turns the check off. Ignored when InMemory is set.
	Reserve int64
	// FreeSpace reports the bytes free to the store on the filesystem of
	// Dir. Default: the FS's GetDiskUsage (statfs on the operating
	// system's filesystem). Tests inject it.
	FreeSpace func() (uint64, error)
	// OnFatal is called once when the store meets an error it cannot
	// recover from (a write-ahead log that cannot be created, written or
	// synced, a MANIFEST that cannot be written, a filesystem that turned
	// read-only under Pebble's flushes): what Pebble has in memory may then differ
	// from what is durable, so the process must stop. The default prints
	// the error and exits with status 1. If OnFatal returns (tests), the
	// store stays failed: the write that met the error and every later one
	// fail with ErrFailed; an error met by Pebble's background work then
	// panics in its goroutine, as Pebble cannot continue past it.
	OnFatal func(error)
}

// DefaultReserve is the free space below which writes are refused: room
// for Pebble to flush its memtables and finish compactions, so that a full
// disk never reaches a write-ahead log write.
const DefaultReserve = 256 << 20

// DB is an open store. It is safe for concurrent use.
type DB struct {
	pdb   *pebble.DB
	fs    vfs.FS
	dir   string
	popts *pebble.Options
	// staged holds the names of the staged tables (ingest.go), nil until
	// first listed; stagedMu guards it.
	stagedMu sync.Mutex
	staged   map[string]struct{}
	logf     func(format string, args ...any)
	space    spaceMonitor
	failed   atomic.Pointer[error]
	// full is set while Pebble's flushes fail for lack of space (see
	// events), cleared by the next flush that does not.
	full       atomic.Pointer[error]
	fullLogged atomic.Bool
	// onFatal is Options.OnFatal; fatalOnce makes it run once.
	onFatal   func(error)
	fatalOnce sync.Once
	// wals describes the write-ahead log files found at open, for messages.
	wals string
	// sync is how writes commit: synced to the log, or, in memory, where
	// there is no log, applied only.
	sync *pebble.WriteOptions
	// onClose holds what OnClose registered; closeMu guards it.
	closeMu sync.Mutex
	onClose []func() error
}

// Open opens (creating if needed) the store described by o.
func Open(o Options) (*DB, error) {
	db := &DB{logf: o.Logf, onFatal: o.OnFatal, sync: pebble.Sync}
	if db.logf == nil {
		db.logf = log.Printf
	}
	if db.onFatal == nil {
		db.onFatal = exitOnFatal
	}
	popts := &pebble.Options{}
	if o.CacheBytes <= 0 {
		o.CacheBytes = 256 << 20
	}
	cache := pebble.NewCache(o.CacheBytes)
	defer cache.Unref()
	popts.Cache = cache
	popts.Logger = quietLogger{db}
	popts.EventListener = db.events()
	// Write-ahead log records say up to where the log was synced, so a
	// damaged log is told apart from a torn tail, and recovery fails
	// instead of stopping silently at the damage.
	popts.FormatMajorVersion = pebble.FormatWALSyncChunks
	// Memtables of 64 MB instead of Pebble's 4 MB: a write-heavy load
	// (every item write also writes its index entries) otherwise flushes a
	// small table every second or so and spends a third of the server's CPU
	// compacting them. Memory grows with what is written, up to two
	// memtables.
	popts.MemTableSize = 64 << 20
	// Bloom filters on every level: a create checks that its key is absent,
	// and without filters that check reads a block from every table.
	for i := range popts.Levels {
		popts.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	dir := o.Dir
	switch {
	case o.InMemory:
		popts.FS = vfs.NewMem()
		dir = ""
		// Nothing survives Close, so a log to recover from after a crash
		// has no use: without it, a write is one copy into the memtable.
		popts.DisableWAL = true
		db.sync = pebble.NoSync
	case dir == "":
		return nil, errors.New("storage: a data directory is required unless in memory")
	case o.FS != nil:
		popts.FS = o.FS
	default:
		popts.FS = vfs.Default
	}
	db.fs, db.dir = popts.FS, dir
	popts.FS = walGuardFS{FS: popts.FS, db: db}
	if !o.InMemory {
		db.space = newSpaceMonitor(o.Reserve, o.FreeSpace, popts.FS, dir)
	}
	popts.EnsureDefaults()
	db.wals = describeWALs(popts.FS, dir)
	lostManifest := false
	if !o.InMemory {
		var err error
		if lostManifest, err = db.checkManifest(popts.FS, dir, o.AcceptDataLoss); err != nil {
			return nil, fmt.Errorf("cannot open storage in %q: %w", dir, err)
		}
	}
	pdb, err := pebble.Open(dir, popts)
	if err != nil && lostManifest {
		return nil, fmt.Errorf("cannot open storage in %q: the state recorded before the damage to its MANIFEST cannot be used either (%w); restore the data directory from a backup", dir, err)
	}
	// Each round cuts one damaged log; more than one damaged log is rare.
	for round := 0; err != nil && pebble.IsCorruptionError(err) && !o.InMemory && round < 16; round++ {
		dmg, derr := findWALDamage(popts.FS, dir)
		if derr != nil || dmg == nil {
			break
		}
		if !o.AcceptDataLoss {
			return nil, fmt.Errorf("cannot open storage in %q: %w: %s; the acknowledged writes logged after that point cannot be replayed (%v)", dir, ErrDataLoss, dmg, err)
		}
		if err := dmg.cut(popts.FS); err != nil {
			return nil, fmt.Errorf("cannot cut the damaged write-ahead log: %w", err)
		}
		db.logf("storage: DATA LOSS accepted: %s; the log was cut there (the original is kept as %s) and the writes logged after the damage are lost", dmg, dmg.keptAs())
		pdb, err = pebble.Open(dir, popts)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot open storage in %q: %w", dir, err)
	}
	db.pdb = pdb
	db.popts = popts
	return db, nil
}

// checkManifest refuses a damaged MANIFEST (findManifestDamage) with
// ErrDataLoss, or with acceptDataLoss keeps a copy of it beside it, logs
// the loss and returns true: Pebble then opens the state recorded before
// the damage if every table it names still exists (a later compaction
// may have replaced them), and deletes the tables recorded after it as
// unused. The record of the last clean stop is kept while the store is
// refused, and dropped once it may open.
func (db *DB) checkManifest(fs vfs.FS, dir string, acceptDataLoss bool) (bool, error) {
	stop, err := db.readStop()
	if err != nil {
		return false, err
	}
	dmg, err := findManifestDamage(fs, dir, stop)
	if err != nil {
		return false, err
	}
	if dmg != nil && !acceptDataLoss {
		return false, fmt.Errorf("%w: %s; the store would start without the tables recorded after that point and the acknowledged writes they hold", ErrDataLoss, dmg)
	}
	if dmg != nil {
		if err := dmg.keep(fs); err != nil {
			return false, fmt.Errorf("cannot keep a copy of the damaged MANIFEST: %w", err)
		}
	}
	if err := db.dropStop(); err != nil {
		return false, err
	}
	if dmg != nil {
		db.logf("storage: DATA LOSS accepted: %s; the store starts from the state recorded before the damage (the original is kept as %s) and the writes in the tables recorded after it are lost", dmg, dmg.keptAs())
	}
	return dmg != nil, nil
}

// ErrDataLoss means the store holds less than it acknowledged: its
// write-ahead log or its MANIFEST is damaged, or its log is missing.
var ErrDataLoss = errors.New("acknowledged writes are missing")

// WALFiles describes the write-ahead log files found when the store
// opened (names and sizes), for messages about a damaged or missing log.
func (db *DB) WALFiles() string { return db.wals }

// Close flushes nothing extra (every acknowledged write is already in the
// synced WAL) and releases the store. It then records the MANIFEST the
// store stopped with (stopFile), against which the next Open checks it.
func (db *DB) Close() error {
	cerr := db.runOnClose()
	if err := db.pdb.Close(); err != nil {
		return err
	}
	if err := db.recordStop(); err != nil {
		return err
	}
	return cerr
}

// Get appends the value of key to dst. It returns ErrNotFound if key is absent.
func (db *DB) Get(dst, key []byte) ([]byte, error) {
	return get(db.pdb, dst, key)
}

type getter interface {
	Get(key []byte) ([]byte, io.Closer, error)
}

func get(g getter, dst, key []byte) ([]byte, error) {
	v, c, err := g.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return dst, ErrNotFound
	}
	if err != nil {
		return dst, err
	}
	dst = append(dst, v...)
	return dst, c.Close()
}

// Set durably writes one key. Used for rare metadata writes. It fails with
// ErrNoSpace when free space is below the reserve.
func (db *DB) Set(key, value []byte) error {
	if err := db.writable(); err != nil {
		return err
	}
	return db.guard(func() error { return db.pdb.Set(key, value, db.sync) })
}

// NewBatch returns an empty batch whose Get sees its own writes over the
// committed state.
func (db *DB) NewBatch() *Batch {
	return &Batch{db: db, b: db.pdb.NewIndexedBatch()}
}

// Iterate calls fn for each key in [lo, hi) in order until fn returns false or
// an error. The key and value slices are valid only during the call.
func (db *DB) Iterate(lo, hi []byte, fn func(key, value []byte) (bool, error)) error {
	return iterate(db.pdb, lo, hi, fn)
}

type iterable interface {
	NewIter(o *pebble.IterOptions) (*pebble.Iterator, error)
}

func iterate(r iterable, lo, hi []byte, fn func(key, value []byte) (bool, error)) error {
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return err
	}
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			it.Close()
			return err
		}
		more, err := fn(it.Key(), v)
		if err != nil {
			it.Close()
			return err
		}
		if !more {
			break
		}
	}
	if err := it.Error(); err != nil {
		it.Close()
		return err
	}
	return it.Close()
}

// Snapshot is a consistent read-only view of the store as of its creation:
// writes committed later are invisible to it. Close it when done; an open
// snapshot keeps the versions it sees from being compacted away.
type Snapshot struct {
	s *pebble.Snapshot
}

// NewSnapshot returns a snapshot of the committed state.
func (db *DB) NewSnapshot() *Snapshot { return &Snapshot{s: db.pdb.NewSnapshot()} }

// Get appends the value of key as of the snapshot to dst. It returns
// ErrNotFound if key is absent.
func (s *Snapshot) Get(dst, key []byte) ([]byte, error) { return get(s.s, dst, key) }

// Iterate is DB.Iterate as of the snapshot.
func (s *Snapshot) Iterate(lo, hi []byte, fn func(key, value []byte) (bool, error)) error {
	return iterate(s.s, lo, hi, fn)
}

// NewIter is DB.NewIter as of the snapshot.
func (s *Snapshot) NewIter(lo, hi []byte) (*Iter, error) { return newIter(s.s, lo, hi) }

// Close releases the snapshot.
func (s *Snapshot) Close() error { return s.s.Close() }

// Batch collects writes that commit atomically. It is not safe for concurrent use.
type Batch struct {
	db *DB
	b  *pebble.Batch
}

// Get appends the value of key as seen by the batch (its own writes over the
// committed state) to dst.
func (b *Batch) Get(dst, key []byte) ([]byte, error) { return get(b.b, dst, key) }

// Iterate is DB.Iterate over the store as the batch would leave it: the
// batch's own writes over the committed keys.
func (b *Batch) Iterate(lo, hi []byte, fn func(key, value []byte) (bool, error)) error {
	return iterate(b.b, lo, hi, fn)
}

// Set records a write of key.
func (b *Batch) Set(key, value []byte) error { return b.b.Set(key, value, nil) }

// Delete records a deletion of key.
func (b *Batch) Delete(key []byte) error { return b.b.Delete(key, nil) }

// DeleteRange records a deletion of every key in [lo, hi).
func (b *Batch) DeleteRange(lo, hi []byte) error { return b.b.DeleteRange(lo, hi, nil) }

// Commit makes the batch durable (the WAL is synced before it returns) and
// visible, then releases it. It fails with ErrNoSpace, writing nothing, when
// free space is below the reserve, and with ErrFailed once the store has
// failed.
func (b *Batch) Commit() error {
	err := b.db.writable()
	if err == nil {
		err = b.db.guard(func() error { return b.b.Commit(b.db.sync) })
	}
	if cerr := b.b.Close(); err == nil {
		err = cerr
	}
	return err
}

// Repr returns the batch's writes, encoded (valid until the batch is
// discarded).
func (b *Batch) Repr() []byte { return b.b.Repr() }

// ApplyRepr adds to the batch the writes of another batch's Repr.
func (b *Batch) ApplyRepr(repr []byte) error {
	o := b.db.pdb.NewBatch()
	defer o.Close()
	// SetRepr adopts the slice, and Close hands it back to Pebble's batch
	// pool for the next batch to write into: lend it a copy, never the
	// caller's bytes (a raft entry's data, still held by raft and the log
	// cache).
	if err := o.SetRepr(slices.Clone(repr)); err != nil {
		return err
	}
	return b.b.Apply(o, nil)
}

// Discard releases the batch without committing it.
func (b *Batch) Discard() { _ = b.b.Close() }

// quietLogger drops Pebble's informational chatter, keeps errors, and turns
// Pebble's fatal errors into a clean fail-stop (see DB.fail).
type quietLogger struct{ db *DB }

func (quietLogger) Infof(string, ...interface{}) {}
func (quietLogger) Errorf(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "storage: "+format+"\n", args...)
}
func (l quietLogger) Fatalf(format string, args ...interface{}) {
	err := fmt.Errorf("storage: "+format, args...)
	l.db.fail(err)
	// Pebble continues as if nothing happened if Fatalf returns: unwind
	// instead, to the guard of the write that met the error.
	panic(fatalUnwind{err})
}

// Iter walks the keys of [lo, hi) in order. It is not safe for concurrent
// use; Close it when done.
type Iter struct {
	it *pebble.Iterator
}

// NewIter returns an iterator over [lo, hi), positioned before the first key.
func (db *DB) NewIter(lo, hi []byte) (*Iter, error) { return newIter(db.pdb, lo, hi) }

func newIter(r iterable, lo, hi []byte) (*Iter, error) {
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return nil, err
	}
	return &Iter{it: it}, nil
}

// First moves to the first key; false when there is none.
func (i *Iter) First() bool { return i.it.First() }

// Next moves to the next key; false at the end.
func (i *Iter) Next() bool { return i.it.Next() }

// SeekGE moves to the first key at or after k.
func (i *Iter) SeekGE(k []byte) bool { return i.it.SeekGE(k) }

// Last moves to the last key; false when there is none.
func (i *Iter) Last() bool { return i.it.Last() }

// Prev moves to the previous key; false at the start.
func (i *Iter) Prev() bool { return i.it.Prev() }

// SeekLT moves to the last key before k.
func (i *Iter) SeekLT(k []byte) bool { return i.it.SeekLT(k) }

// Key is the current key, valid until the next move.
func (i *Iter) Key() []byte { return i.it.Key() }

// Value is the current value, valid until the next move.
func (i *Iter) Value() ([]byte, error) { return i.it.ValueAndErr() }

// Close releases the iterator and reports any error it met.
func (i *Iter) Close() error {
	err := i.it.Error()
	if cerr := i.it.Close(); err == nil {
		err = cerr
	}
	return err
}
