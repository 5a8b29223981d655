package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/v2/sstable"
)

// Staged tables. A large set of keys that must appear at once (a replica's
// snapshot) is written, in key order, into a table file next to the store
// (NewStagedTable), synced, and later ingested whole (Ingest): the keys
// become visible together, above every earlier write, and memory stays
// bounded however many there are. A staged table is a file of the store's
// directory (on its filesystem, so an in-memory store stages in memory)
// whose name starts with stagedPrefix; ingesting it moves it into the store.
// The names of the staged tables are listed from the directory once, then
// kept in memory, so that a replica's check for stale ones (at every
// group's start) reads no directory.

const stagedPrefix = "staged-"

// StagedTable writes one staged table.
type StagedTable struct {
	w    *sstable.Writer
	path string
	last []byte
	n    int
}

// NewStagedTable creates the staged table name (a file name of letters,
// digits and dashes), replacing any earlier one of that name.
func (db *DB) NewStagedTable(name string) (*StagedTable, error) {
	names, err := db.stagedNames()
	if err != nil {
		return nil, err
	}
	path := db.stagedPath(name)
	f, err := db.fs.Create(path, "")
	if err != nil {
		return nil, fmt.Errorf("storage: cannot create the staged table %s: %w", name, err)
	}
	names[name] = struct{}{}
	db.stagedMu.Unlock()
	o := db.popts.MakeWriterOptions(0, db.pdb.TableFormat())
	return &StagedTable{w: sstable.NewWriter(objstorageprovider.NewFileWritable(f), o), path: path}, nil
}

// Set adds a key; keys must come in strictly increasing order.
func (t *StagedTable) Set(key, value []byte) error {
	if t.n > 0 && bytes.Compare(key, t.last) <= 0 {
		return fmt.Errorf("storage: staged table key %x does not follow %x", key, t.last)
	}
	t.last = append(t.last[:0], key...)
	t.n++
	return t.w.Set(key, value)
}

// Finish completes the table and syncs it to its file.
func (t *StagedTable) Finish() error {
	if err := t.w.Close(); err != nil {
		return fmt.Errorf("storage: cannot write the staged table %s: %w", t.path, err)
	}
	return nil
}

// Abort abandons the table: call it instead of Finish on failure (the
// caller then removes the file with RemoveStaged).
func (t *StagedTable) Abort() { _ = t.w.Close() }

func (db *DB) stagedPath(name string) string {
	return db.fs.PathJoin(db.dir, stagedPrefix+name+".sst")
}

// stagedNames returns the names of the staged tables with db.stagedMu
// held, which the caller releases; the first call lists the directory.
func (db *DB) stagedNames() (map[string]struct{}, error) {
	db.stagedMu.Lock()
	if db.staged != nil {
		return db.staged, nil
	}
	files, err := db.fs.List(db.fs.PathJoin(db.dir, ""))
	if err != nil {
		db.stagedMu.Unlock()
		return nil, fmt.Errorf("storage: cannot list the staged tables: %w", err)
	}
	db.staged = map[string]struct{}{}
	for _, f := range files {
		if n, ok := strings.CutPrefix(f, stagedPrefix); ok && strings.HasSuffix(n, ".sst") {
			db.staged[strings.TrimSuffix(n, ".sst")] = struct{}{}
		}
	}
	return db.staged, nil
}

// HasStaged reports whether the staged table name exists.
func (db *DB) HasStaged(name string) bool {
	names, err := db.stagedNames()
	if err != nil {
		return false
	}
	_, ok := names[name]
	db.stagedMu.Unlock()
	return ok
}

// Ingest makes the keys of the finished staged table name part of the
// store, atomically and above every earlier write, and removes the file.
func (db *DB) Ingest(name string) error {
	if err := db.writable(); err != nil {
		return err
	}
	names, err := db.stagedNames()
	if err != nil {
		return err
	}
	defer db.stagedMu.Unlock()
	err = db.guard(func() error { return db.pdb.Ingest(context.Background(), []string{db.stagedPath(name)}) })
	if err == nil {
		delete(names, name)
	}
	return err
}

// RemoveStaged removes the staged tables whose names start with prefix.
func (db *DB) RemoveStaged(prefix string) error {
	names, err := db.stagedNames()
	if err != nil {
		return err
	}
	defer db.stagedMu.Unlock()
	for n := range names {
		if !strings.HasPrefix(n, prefix) {
			continue
		}
		if err := db.fs.Remove(db.stagedPath(n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("storage: cannot remove the staged table %s: %w", n, err)
		}
		delete(names, n)
	}
	return nil
}
