package logstore

import (
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// BenchmarkCommit measures rounds of one entry for each of 16 groups,
// written with one write and one sync, on disk, with purging of the
// truncated entries every 32 rounds.
func BenchmarkCommit(b *testing.B) {
	for _, size := range []int{256, 4096} {
		b.Run(fmt.Sprintf("entry=%d", size), func(b *testing.B) {
			s, err := Open(Options{FS: vfs.Default, Dir: b.TempDir(), SegmentBytes: 8 << 20})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			data := make([]byte, size)
			last := make([]uint64, 16)
			b.ResetTimer()
			for r := range b.N {
				batch := s.NewBatch()
				for g := range last {
					last[g]++
					batch.Append(uint64(g), []*raftpb.Entry{{Index: proto.Uint64(last[g]), Term: proto.Uint64(1), Data: data}})
					if r%32 == 31 {
						batch.Truncate(uint64(g), last[g]-8)
					}
				}
				if err := s.Commit(batch, true); err != nil {
					b.Fatal(err)
				}
				if r%32 == 31 {
					if err := s.Purge(); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.StopTimer()
			st := s.Stats()
			b.ReportMetric(float64(b.N*len(last))/b.Elapsed().Seconds(), "entries/s")
			b.ReportMetric(float64(st.BytesWritten)/float64(b.N), "written-B/round")
			b.ReportMetric(float64(st.Syncs)/float64(b.N), "syncs/round")
		})
	}
}
