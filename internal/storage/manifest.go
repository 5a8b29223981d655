package storage

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/record"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Pebble writes its MANIFEST as a record log (package record): 32 KiB
// blocks of chunks, a record being one full chunk or a first, middles and
// a last. No chunk crosses a block, so every block starts with a chunk.
//
//	+----------+-----------+----------+--- ... ---+
//	| CRC (4B) | Size (2B) | Type (1B)| Payload   |
//	+----------+-----------+----------+--- ... ---+
//
// The CRC is a masked CRC-32C of the type and the payload; a MANIFEST
// uses the legacy types 1 (full), 2 (first), 3 (middle) and 4 (last).
const (
	recordBlockSize = 32 << 10
	chunkHeaderSize = 7
	chunkFull       = 1
	chunkFirst      = 2
	chunkLast       = 4
	crcMaskDelta    = 0xa282ead8
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

var (
	errChunkType     = errors.New("invalid chunk type")
	errChunkLength   = errors.New("chunk length past the end of its 32 KiB block")
	errChunkChecksum = errors.New("checksum mismatch")
)

// checkChunk returns the type and payload length of the chunk at the start
// of b, which ends where the chunk's block ends, or why it is not a valid
// chunk.
func checkChunk(b []byte) (typ byte, n int, err error) {
	if len(b) < chunkHeaderSize {
		return 0, 0, errChunkLength
	}
	typ, n = b[6], int(binary.LittleEndian.Uint16(b[4:6]))
	if typ < chunkFull || typ > chunkLast {
		return typ, n, errChunkType
	}
	if chunkHeaderSize+n > len(b) {
		return typ, n, errChunkLength
	}
	c := crc32.Update(0, crcTable, b[6:chunkHeaderSize+n])
	if binary.LittleEndian.Uint32(b[0:4]) != (c>>15|c<<17)+crcMaskDelta {
		return typ, n, errChunkChecksum
	}
	return typ, n, nil
}

// stopFile, in the data directory, records the MANIFEST the store stopped
// with at its last clean Close, and its size:
//
//	{"manifest": "MANIFEST-000123", "size": 4567}
//
// The format is stable. Open reads it, and removes it before Pebble starts
// (Pebble then writes a new MANIFEST), so it is present only while the
// store is stopped after a clean Close.
const stopFile = "parsec-manifest-at-stop.json"

type stopRecord struct {
	Manifest string `json:"manifest"`
	Size     int64  `json:"size"`
}

// recordStop writes stopFile after Pebble closed. A failed store writes
// none: its files may not be what it last knew.
func (db *DB) recordStop() error {
	if db.dir == "" || db.failed.Load() != nil {
		return nil
	}
	desc, err := pebble.Peek(db.dir, db.fs)
	if err != nil || !desc.Exists {
		return err
	}
	fi, err := db.fs.Stat(desc.ManifestFilename)
	if err != nil {
		return fmt.Errorf("cannot stat the MANIFEST: %w", err)
	}
	b, err := json.Marshal(stopRecord{Manifest: db.fs.PathBase(desc.ManifestFilename), Size: fi.Size()})
	if err != nil {
		return err
	}
	return db.WriteFile(stopFile, b)
}

// readStop reads stopFile. It returns nil if there is none or it cannot
// be decoded (then the MANIFEST is checked as after a crash).
func (db *DB) readStop() (*stopRecord, error) {
	b, err := db.ReadFile(stopFile)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var rec *stopRecord
	if json.Unmarshal(b, &rec) != nil {
		rec = nil
	}
	return rec, nil
}

// dropStop durably removes stopFile, once the MANIFEST it describes passed
// its check: Pebble writes a new one as it opens.
func (db *DB) dropStop() error {
	err := db.fs.Remove(db.fs.PathJoin(db.dir, stopFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cannot remove %s: %w", stopFile, err)
	}
	d, err := db.fs.OpenDir(db.dir)
	if err != nil {
		return fmt.Errorf("cannot open %s: %w", db.dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("cannot sync %s: %w", db.dir, err)
	}
	return nil
}

// findManifestDamage reads the store's current MANIFEST as Pebble does and
// returns where it is damaged. It returns nil if dir holds no store yet,
// or if the MANIFEST reads to its end or only ends in a torn record.
//
// Pebble itself reads a MANIFEST up to its first unreadable record and
// ignores the rest, as it would the torn end of an edit being written at a
// crash (edits are synced one at a time, and only a synced one is used).
// On a damaged MANIFEST it would so start without every table recorded
// after the damage, and then delete those tables as unused. Damage is
// told from a torn end in two ways. After a crash: a torn end is followed
// by nothing that starts a record, so an unreadable record with a whole
// record after it is damage. After a clean stop (stop names the MANIFEST):
// no edit was being written, so any unreadable record is damage, and so is
// a size other than the one recorded.
func findManifestDamage(fs vfs.FS, dir string, stop *stopRecord) (*damage, error) {
	desc, err := pebble.Peek(dir, fs)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot find the MANIFEST: %w", err)
	}
	if !desc.Exists {
		return nil, nil
	}
	name := desc.ManifestFilename
	f, err := fs.Open(name)
	if err != nil {
		return nil, fmt.Errorf("cannot open the MANIFEST: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("cannot stat the MANIFEST %s: %w", name, err)
	}
	size := fi.Size()
	clean := stop != nil && stop.Manifest == fs.PathBase(name)
	if clean && size != stop.Size {
		return &damage{kind: "MANIFEST", file: name, offset: min(size, stop.Size), size: size,
			err: fmt.Errorf("it was %d bytes when the store last stopped cleanly", stop.Size)}, nil
	}
	rr := record.NewReader(f, 0)
	for {
		off := rr.Offset()
		r, err := rr.Next()
		if err == nil {
			_, err = io.Copy(io.Discard, r)
		}
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		if err == nil {
			continue
		}
		if !record.IsInvalidRecord(err) {
			return nil, fmt.Errorf("cannot read the MANIFEST %s: %w", name, err)
		}
		found, why, err := recordAfter(f, off, size)
		if err != nil {
			return nil, fmt.Errorf("cannot read the MANIFEST %s: %w", name, err)
		}
		because := "a whole record starts after it, so it is not the torn end of an interrupted write"
		if !found {
			if !clean {
				return nil, nil
			}
			because = "the store stopped cleanly, so no edit was being written"
		}
		return &damage{kind: "MANIFEST", file: name, offset: off, size: size,
			err: fmt.Errorf("the record there fails its check: %v; %s", why, because)}, nil
	}
}

// recordAfter reports whether a valid chunk that starts a record (full or
// first) begins in f after off, where a record cannot be read, and why the
// chunk at off is invalid. Past off, chunks are followed from the start of
// each block while they are valid; after an invalid one, every byte of the
// block is tried as the start of a chunk, as its length cannot be trusted.
func recordAfter(f vfs.File, off, size int64) (found bool, why error, err error) {
	buf := make([]byte, recordBlockSize)
	why = errors.New("a later chunk of the record is invalid")
	for b := off - off%recordBlockSize; b < size; b += recordBlockSize {
		n, err := f.ReadAt(buf[:min(recordBlockSize, size-b)], b)
		if err != nil && !errors.Is(err, io.EOF) {
			return false, nil, err
		}
		blk := buf[:n]
		follow, p := true, 0
		if b <= off {
			p = int(off - b)
			if _, _, cerr := checkChunk(blk[p:]); cerr != nil {
				why = cerr
			}
			follow, p = false, p+1
		}
		for p+chunkHeaderSize <= n {
			typ, l, cerr := checkChunk(blk[p:])
			if cerr == nil && (typ == chunkFull || typ == chunkFirst) {
				return true, why, nil
			}
			if cerr == nil && follow {
				p += chunkHeaderSize + l
				continue
			}
			follow = false
			p++
		}
	}
	return false, why, nil
}
