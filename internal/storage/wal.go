package storage

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/cockroachdb/pebble/v2/record"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/wal"
)

// describeWALs lists the write-ahead log files of dir with their sizes, in
// log order, for messages: "the write-ahead log file is
// /data/000012.log (1234567 bytes)", or a sentence saying there is none.
func describeWALs(fs vfs.FS, dir string) string {
	if dir == "" {
		return "the store is in memory"
	}
	names, err := fs.List(dir)
	if err != nil {
		return fmt.Sprintf("cannot list %s: %v", dir, err)
	}
	sort.Strings(names)
	var logs []string
	for _, n := range names {
		if !strings.HasSuffix(n, ".log") {
			continue
		}
		size := "size unknown"
		if fi, err := fs.Stat(fs.PathJoin(dir, n)); err == nil {
			size = fmt.Sprintf("%d bytes", fi.Size())
		}
		logs = append(logs, fmt.Sprintf("%s (%s)", fs.PathJoin(dir, n), size))
	}
	switch len(logs) {
	case 0:
		return "there is no write-ahead log file in " + dir
	case 1:
		return "the write-ahead log file is " + logs[0]
	}
	return "the write-ahead log files are " + strings.Join(logs[:len(logs)-1], ", ") + " and, the newest, " + logs[len(logs)-1]
}

// damage is where a file of the store (a write-ahead log, the MANIFEST)
// stops being readable before its end.
type damage struct {
	kind   string // "write-ahead log", "MANIFEST"
	file   string // path of the physical file
	offset int64  // where the first unreadable record starts
	size   int64  // the file's size
	err    error  // what the reader met
}

func (d *damage) String() string {
	return fmt.Sprintf("the %s %s is damaged at byte %d of %d (%v)", d.kind, d.file, d.offset, d.size, d.err)
}

// keptAs is where a copy of the damaged file is kept.
func (d *damage) keptAs() string { return d.file + ".damaged" }

// keep durably copies the damaged file to keptAs.
func (d *damage) keep(fs vfs.FS) error { return copyFile(fs, d.file, d.keptAs(), -1) }

// cut keeps a copy of the damaged file beside it and replaces the file with
// its bytes up to where its first unreadable record starts, so that
// recovery replays every record before the damage and stops there cleanly.
func (d *damage) cut(fs vfs.FS) error {
	if err := d.keep(fs); err != nil {
		return err
	}
	tmp := d.file + ".cut"
	if err := copyFile(fs, d.file, tmp, d.offset); err != nil {
		return err
	}
	if err := fs.Rename(tmp, d.file); err != nil {
		return fmt.Errorf("cannot replace %s: %w", d.file, err)
	}
	dir, err := fs.OpenDir(fs.PathDir(d.file))
	if err != nil {
		return fmt.Errorf("cannot open %s: %w", fs.PathDir(d.file), err)
	}
	defer dir.Close()
	return dir.Sync()
}

// copyFile durably copies the first n bytes of from (all if n < 0) to to.
func copyFile(fs vfs.FS, from, to string, n int64) error {
	src, err := fs.Open(from)
	if err != nil {
		return fmt.Errorf("cannot open %s: %w", from, err)
	}
	defer src.Close()
	dst, err := fs.Create(to, vfs.WriteCategoryUnspecified)
	if err != nil {
		return fmt.Errorf("cannot create %s: %w", to, err)
	}
	var r io.Reader = src
	if n >= 0 {
		r = io.LimitReader(src, n)
	}
	if _, err := io.Copy(dst, r); err != nil {
		dst.Close()
		return fmt.Errorf("cannot copy %s: %w", from, err)
	}
	if err := dst.Sync(); err != nil {
		dst.Close()
		return fmt.Errorf("cannot sync %s: %w", to, err)
	}
	return dst.Close()
}

// findWALDamage reads every write-ahead log of dir as recovery does and
// returns the first place where a log is definitely damaged: a record that
// fails its checksum although a later record shows the log was synced past
// it. A log that merely ends in a torn record (a crash during a write) is
// not damage. It returns nil if no log is damaged.
func findWALDamage(fs vfs.FS, dir string) (*damage, error) {
	logs, err := wal.Scan(wal.Dir{FS: fs, Dirname: dir})
	if err != nil {
		return nil, fmt.Errorf("cannot list the write-ahead logs: %w", err)
	}
	for _, ll := range logs {
		r := ll.OpenForRead()
		for {
			rec, off, err := r.NextRecord()
			if err == nil {
				_, err = io.Copy(io.Discard, rec)
			}
			if err == nil {
				continue
			}
			r.Close()
			if errors.Is(err, io.EOF) || errors.Is(err, record.ErrUnexpectedEOF) || off.PhysicalFile == "" {
				break
			}
			d := &damage{kind: "write-ahead log", file: off.PhysicalFile, offset: off.Physical, err: err}
			if fi, err := fs.Stat(d.file); err == nil {
				d.size = fi.Size()
			}
			return d, nil
		}
	}
	return nil, nil
}
