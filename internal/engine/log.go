package engine

import (
	"encoding/binary"

	"github.com/parsecdb/parsec/internal/binfmt"
	"github.com/parsecdb/parsec/internal/storage"
)

// The logs. Every change to the store is an entry of one of two kinds of
// log, and applying the entries in order to an empty store gives the same
// key-value contents (ApplyLog; the replay test holds the engine to it):
//
//   - each physical partition's log of commands (EncodeCommand), which
//     apply executes deterministically; and
//   - the catalog's log: database and container records, offers, the end
//     of an index build, the deletion of a database or container. A
//     catalog entry carries its writes themselves (catalogBatch), decided
//     by the engine that made the change, with the proposer's allocator
//     position and fence (catalog_log.go).
//
// These logs are the partitions' and the catalog's logs of the write path
// (a single node's local logs, or a cluster's raft groups); the command
// log hands what a single node's applied to a test (Options.commandLog),
// with the index of the entry that applied it, which a replica records as
// the partition's or the catalog's applied index.
//
// The one key outside both is the id allocator's high-water mark
// (storage.SeqKey), which is the node's own: it only keeps the numbers a
// node hands out (carried in the commands) from repeating after a restart.
// Applying a catalog entry moves every node's allocator past the position
// it carries.

// LogEntry is one entry of a log, as the engine hands it to
// Options.commandLog once it is durable.
type LogEntry struct {
	// Container is the rid of the container whose partition Range applied
	// the command; both are zero for a catalog entry.
	Container [storage.RidLen]byte
	Range     string
	// Index is the index of the partition's log entry that applied the
	// command (several commands share one: a group), or of the catalog's.
	Index uint64
	// Data is the encoded command, or the catalog's log entry.
	Data []byte
}

// catalogBatch is the writes of one catalog change.
type catalogBatch struct {
	ops []catalogOp
	// seq is the number the change took from the id allocator, 0 if none
	// (the catalog's log checks it was not taken from a stale one; it
	// is not part of the encoding).
	seq uint64
}

type catalogOp struct {
	kind     byte // catalogSet, catalogDelete or catalogDeleteRange
	key, val []byte
}

const (
	catalogSet         = 1
	catalogDelete      = 2
	catalogDeleteRange = 3
)

func (m *catalogBatch) set(k, v []byte) {
	m.ops = append(m.ops, catalogOp{catalogSet, k, v})
}

func (m *catalogBatch) delete(k []byte) {
	m.ops = append(m.ops, catalogOp{catalogDelete, k, nil})
}

func (m *catalogBatch) deleteRange(lo, hi []byte) {
	m.ops = append(m.ops, catalogOp{catalogDeleteRange, lo, hi})
}

// Catalog entries: version:1 count:uvarint (kind:1 key:str val:str)*,
// where val is the value of a set and the end of a deleted range.
func (m *catalogBatch) encode() []byte {
	b := []byte{catalogVersion}
	b = binary.AppendUvarint(b, uint64(len(m.ops)))
	for _, op := range m.ops {
		b = append(b, op.kind)
		b = binfmt.AppendString(b, string(op.key))
		b = binfmt.AppendString(b, string(op.val))
	}
	return b
}

func decodeCatalogBatch(data []byte) (*catalogBatch, error) {
	d := newDecoder(data)
	if v := d.Byte(); v != catalogVersion {
		d.Fail("unknown catalog entry version %d", v)
	}
	n := d.Count(3)
	m := &catalogBatch{ops: make([]catalogOp, 0, n)}
	for i := 0; i < n; i++ {
		op := catalogOp{kind: d.Byte(), key: d.bytes(), val: d.bytes()}
		if op.kind < catalogSet || op.kind > catalogDeleteRange {
			d.Fail("unknown catalog write kind %d", op.kind)
		}
		m.ops = append(m.ops, op)
	}
	if d.Len() != 0 {
		d.Fail("%d bytes after the catalog entry", d.Len())
	}
	return m, d.Err()
}

// into writes the batch's operations into b.
func (m *catalogBatch) into(b *storage.Batch) error {
	for _, op := range m.ops {
		var err error
		switch op.kind {
		case catalogSet:
			err = b.Set(op.key, op.val)
		case catalogDelete:
			err = b.Delete(op.key)
		default:
			err = b.DeleteRange(op.key, op.val)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// commitCatalog commits a catalog change through the catalog's log (the
// meta group's with Options.Catalog, else the local one) and returns once
// this node has applied it (catalog_log.go). Callers hold the locks that
// order their change against the others on the same records (e.mu,
// c.recordMu), so the log has the order of the store.
func (e *Engine) commitCatalog(m *catalogBatch, what string) error {
	return e.proposeCatalog(m, what)
}
