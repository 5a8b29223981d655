package raftlog

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/parsecdb/parsec/internal/storage"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// countFS counts the bytes written and the syncs of every file.
type countFS struct {
	vfs.FS
	bytes, syncs atomic.Int64
}

type countFile struct {
	vfs.File
	fs *countFS
}

func (f countFile) Write(p []byte) (int, error) {
	f.fs.bytes.Add(int64(len(p)))
	return f.File.Write(p)
}

func (f countFile) WriteAt(p []byte, off int64) (int, error) {
	f.fs.bytes.Add(int64(len(p)))
	return f.File.WriteAt(p, off)
}

func (f countFile) Sync() error     { f.fs.syncs.Add(1); return f.File.Sync() }
func (f countFile) SyncData() error { f.fs.syncs.Add(1); return f.File.SyncData() }

func (fs *countFS) wrap(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return countFile{File: f, fs: fs}, nil
}

func (fs *countFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	return fs.wrap(fs.FS.Create(name, c))
}

func (fs *countFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	return fs.wrap(fs.FS.OpenReadWrite(name, c, opts...))
}

func (fs *countFS) ReuseForWrite(old, name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	return fs.wrap(fs.FS.ReuseForWrite(old, name, c))
}

func (fs *countFS) OpenDir(name string) (vfs.File, error) { return fs.wrap(fs.FS.OpenDir(name)) }

// BenchmarkRounds measures rounds of the host's shape on disk: each round
// appends one entry to each of 16 groups (of 64) with their hard states in
// one synced batch; every 32 rounds a group truncates its log to 8 entries
// behind its commit index in an unsynced batch, as after a snapshot. It
// compares the entries in the DB (Pebble: memtable, WAL, flushes and
// compactions) with the entries in the log store, and reports entries per
// second, syncs and bytes written (every file, Pebble's included) per
// round.
func BenchmarkRounds(b *testing.B) {
	for _, size := range []int{256, 4096} {
		for _, files := range []bool{false, true} {
			name := fmt.Sprintf("entry=%d/db", size)
			if files {
				name = fmt.Sprintf("entry=%d/files", size)
			}
			b.Run(name, func(b *testing.B) { benchRounds(b, size, files) })
		}
	}
}

func benchRounds(b *testing.B, size int, files bool) {
	fs := &countFS{FS: vfs.Default}
	db, err := storage.Open(storage.Options{Dir: b.TempDir(), FS: fs, Reserve: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	s := OpenInDB(db)
	if files {
		s = Open(db)
	}
	const groups, perRound = 64, 16
	logs := make([]*Log, groups)
	for i := range logs {
		if logs[i], err = s.Group(uint64(i + 1)); err != nil {
			b.Fatal(err)
		}
	}
	data := make([]byte, size)
	last := make([]uint64, groups)
	bytes0, syncs0 := fs.bytes.Load(), fs.syncs.Load()
	b.ResetTimer()
	for r := range b.N {
		batch := s.NewBatch()
		for k := range perRound {
			g := (r*perRound + k) % groups
			last[g]++
			if err := logs[g].Append(batch, []*raftpb.Entry{{Index: proto.Uint64(last[g]), Term: proto.Uint64(1), Data: data}}); err != nil {
				b.Fatal(err)
			}
			if err := logs[g].SetHardState(batch, &raftpb.HardState{Term: proto.Uint64(1), Commit: proto.Uint64(last[g] - 1)}); err != nil {
				b.Fatal(err)
			}
		}
		if err := batch.Commit(); err != nil {
			b.Fatal(err)
		}
		if r%32 == 31 {
			after := s.NewBatch()
			for g := range groups {
				if first, _ := logs[g].FirstIndex(); last[g] > 9 && last[g]-9 >= first {
					if err := logs[g].Truncate(after, last[g]-9); err != nil {
						b.Fatal(err)
					}
				}
			}
			if err := after.CommitNoSync(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N*perRound)/b.Elapsed().Seconds(), "entries/s")
	b.ReportMetric(float64(fs.bytes.Load()-bytes0)/float64(b.N), "written-B/round")
	b.ReportMetric(float64(fs.syncs.Load()-syncs0)/float64(b.N), "syncs/round")
}
