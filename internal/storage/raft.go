package storage

import "github.com/cockroachdb/pebble/v2"

// CommitNoSync makes the batch visible and appends it to the write-ahead log
// without waiting for the log to reach the disk: a crash may lose it, and
// the next synced commit makes it durable with everything before it (the
// log is sequential). It is for writes that can be recomputed after a
// crash, as a raft state machine's applied state is from its synced log.
// It fails like Commit when the store cannot take writes.
func (b *Batch) CommitNoSync() error {
	err := b.db.writable()
	if err == nil {
		err = b.db.guard(func() error { return b.b.Commit(pebble.NoSync) })
	}
	if cerr := b.b.Close(); err == nil {
		err = cerr
	}
	return err
}

// Empty reports whether the batch holds no writes.
func (b *Batch) Empty() bool { return b.b.Empty() }
