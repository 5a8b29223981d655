package storage

import (
	"bytes"
	"context"
	"fmt"
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
	path := db.fs.PathJoin(db.dir, stagedPrefix+name+".sst")
	f, err := db.fs.Create(path, "")
	if err != nil {
		return nil, fmt.Errorf("storage: cannot create the staged table %s: %w", name, err)
	}
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

// Last returns the last key added, or nil.
func (t *StagedTable) Last() []byte {
	if t.n == 0 {
		return nil
	}
	return t.last
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

// HasStaged reports whether the staged table name exists.
func (db *DB) HasStaged(name string) bool {
	_, err := db.fs.Stat(db.fs.PathJoin(db.dir, stagedPrefix+name+".sst"))
	return err == nil
}

// Ingest makes the keys of the finished staged table name part of the
// store, atomically and above every earlier write, and removes the file.
func (db *DB) Ingest(name string) error {
	if err := db.writable(); err != nil {
		return err
	}
	path := db.fs.PathJoin(db.dir, stagedPrefix+name+".sst")
	return db.guard(func() error { return db.pdb.Ingest(context.Background(), []string{path}) })
}

// RemoveStaged removes the staged tables whose names start with prefix.
func (db *DB) RemoveStaged(prefix string) error {
	names, err := db.fs.List(db.fs.PathJoin(db.dir, ""))
	if err != nil {
		return fmt.Errorf("storage: cannot list the staged tables: %w", err)
	}
	for _, n := range names {
		if strings.HasPrefix(n, stagedPrefix+prefix) && strings.HasSuffix(n, ".sst") {
			if err := db.fs.Remove(db.fs.PathJoin(db.dir, n)); err != nil {
				return fmt.Errorf("storage: cannot remove the staged table %s: %w", n, err)
			}
		}
	}
	return nil
}
