package storage

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// ReadFile returns the contents of a small file that WriteFile wrote in
// the data directory, or ErrNotFound if there is none (or the store is in
// memory).
func (db *DB) ReadFile(name string) ([]byte, error) {
	if db.dir == "" {
		return nil, ErrNotFound
	}
	f, err := db.fs.Open(db.fs.PathJoin(db.dir, name))
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("cannot open %s: %w", name, err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", name, err)
	}
	return b, nil
}

// WriteFile durably replaces a small file in the data directory, outside
// the store's write-ahead log: it writes a temporary file, syncs it, renames
// it over name and syncs the directory, so a crash leaves either the old
// contents or the new. It does nothing for a store in memory. It is not
// safe to call concurrently for one name.
func (db *DB) WriteFile(name string, data []byte) error {
	if db.dir == "" {
		return nil
	}
	path := db.fs.PathJoin(db.dir, name)
	tmp := path + ".tmp"
	f, err := db.fs.Create(tmp, vfs.WriteCategoryUnspecified)
	if err != nil {
		return fmt.Errorf("cannot create %s: %w", tmp, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("cannot write %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("cannot sync %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("cannot close %s: %w", tmp, err)
	}
	if err := db.fs.Rename(tmp, path); err != nil {
		return fmt.Errorf("cannot rename %s: %w", tmp, err)
	}
	d, err := db.fs.OpenDir(db.dir)
	if err != nil {
		return fmt.Errorf("cannot open %s: %w", db.dir, err)
	}
	if err := d.Sync(); err != nil {
		d.Close()
		return fmt.Errorf("cannot sync %s: %w", db.dir, err)
	}
	return d.Close()
}
