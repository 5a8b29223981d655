package storage

import (
	"fmt"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Files returns the file system and directory that hold the store (for an
// in-memory store, a memory file system and ""), so that companions that
// keep files of their own beside it, such as the raft log store, share its
// place and its fate.
func (db *DB) Files() (vfs.FS, string) { return db.fs, db.dir }

// OnClose registers fn to run when Close is called, before the store
// closes; the first error fn returns is Close's. Companions opened over
// the store close with it.
func (db *DB) OnClose(fn func() error) {
	db.closeMu.Lock()
	defer db.closeMu.Unlock()
	db.onClose = append(db.onClose, fn)
}

func (db *DB) runOnClose() error {
	db.closeMu.Lock()
	fns := db.onClose
	db.onClose = nil
	db.closeMu.Unlock()
	var first error
	for i := len(fns) - 1; i >= 0; i-- {
		if err := fns[i](); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// SyncLog makes every write committed so far durable, as a synced commit
// would (the write-ahead log is sequential): for companions whose own
// cleanup must wait for writes committed without a sync. It writes an
// empty log record only, so unlike a commit it is not refused below the
// free space reserve: the cleanup it allows is what frees space.
func (db *DB) SyncLog() error {
	if p := db.failed.Load(); p != nil {
		return fmt.Errorf("%w: %v", ErrFailed, *p)
	}
	return db.guard(func() error { return db.pdb.LogData(nil, db.sync) })
}
