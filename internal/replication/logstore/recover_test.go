package logstore

import (
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// readFile and writeFile read and replace a whole file.
func readFile(t testing.TB, fs vfs.FS, name string) []byte {
	t.Helper()
	f, err := fs.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t testing.TB, fs vfs.FS, name string, b []byte) {
	t.Helper()
	f, err := fs.Create(name, vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	// A copy: under the race detector, Pebble's MemFS scrambles what it
	// was given to write, to catch callers that reuse it.
	if _, err := f.Write(slices.Clone(b)); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func cloneFS(t testing.TB, fs vfs.FS) *vfs.MemFS {
	t.Helper()
	mem := vfs.NewMem()
	if _, err := vfs.Clone(fs, mem, "/log", "/log"); err != nil {
		t.Fatal(err)
	}
	_ = mem.Remove("/log/LOCK")
	return mem
}

// tornFixture writes a few rounds, then one last round whose record is
// the one the tests tear. It returns the files, the last segment's name,
// the offset where the last record starts, and the expected logs before
// the last round.
func tornFixture(t *testing.T) (fs *vfs.MemFS, seg string, start int, want map[uint64]state) {
	fs = vfs.NewMem()
	s := open(t, fs, Options{})
	want = map[uint64]state{}
	for r := range uint64(5) {
		b := s.NewBatch()
		for _, g := range []uint64{1, 2} {
			e := []*raftpb.Entry{ent(2*r+1, 1, fmt.Sprint(g, r)), ent(2*r+2, 1, fmt.Sprint(g, r, "b"))}
			b.Append(g, e)
			m := want[g]
			m.ents = append(m.ents, e...)
			want[g] = m
		}
		commit(t, s, b, true)
	}
	seg = s.segName(s.active().num)
	start = int(s.active().size)
	b := s.NewBatch()
	b.Append(1, []*raftpb.Entry{ent(11, 2, "last one"), ent(12, 2, "and another")})
	commit(t, s, b, true)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return fs, seg, start, want
}

// checkRecovered opens fs and checks that the logs are exactly want, and
// that the store takes and keeps new writes.
func checkRecovered(t *testing.T, fs vfs.FS, want map[uint64]state) {
	t.Helper()
	s := open(t, fs, Options{})
	for g, m := range want {
		if err := matches(s, g, m); err != nil {
			t.Fatal(err)
		}
		if first, _ := s.Range(g); first != 1 {
			t.Fatalf("group %d starts at %d", g, first)
		}
	}
	b := s.NewBatch()
	_, last := s.Range(1)
	e := ent(last+1, 3, "after recovery")
	b.Append(1, []*raftpb.Entry{e})
	commit(t, s, b, true)
	_ = s.Close()
	s = open(t, fs, Options{})
	defer s.Close()
	got, err := s.Entries(1, last+1, last+2, 1<<20)
	if err != nil || len(got) != 1 || !proto.Equal(got[0], e) {
		t.Fatalf("entry written after recovery: %v, %v", got, err)
	}
}

// TestTornTail cuts the last record at every offset: recovery keeps every
// earlier record, drops the torn one, cuts the file back to the last whole
// record, and later writes survive.
func TestTornTail(t *testing.T) {
	base, seg, start, want := tornFixture(t)
	full := readFile(t, base, seg)
	for cut := start; cut < len(full); cut++ {
		fs := cloneFS(t, base)
		writeFile(t, fs, seg, full[:cut])
		s := open(t, fs, Options{})
		if n := len(readFile(t, fs, seg)); n != start {
			t.Fatalf("cut at %d: segment is %d bytes after recovery, want %d", cut, n, start)
		}
		_ = s.Close()
		checkRecovered(t, fs, want)
	}
	// Uncut, the last round is there.
	m := want[1]
	m.ents = append(m.ents, ent(11, 2, "last one"), ent(12, 2, "and another"))
	all := map[uint64]state{1: m, 2: want[2]}
	checkRecovered(t, cloneFS(t, base), all)
}

// TestFlippedBytes flips each byte of the last record (the CRC catches it
// and the record is dropped as a torn tail), and bytes of an earlier,
// sealed segment (an error, never a panic).
func TestFlippedBytes(t *testing.T) {
	base, seg, start, want := tornFixture(t)
	full := readFile(t, base, seg)
	for i := start; i < len(full); i++ {
		fs := cloneFS(t, base)
		b := append([]byte(nil), full...)
		b[i] ^= 0x40
		writeFile(t, fs, seg, b)
		checkRecovered(t, fs, want)
	}
	// A sealed segment: make a second one, then damage the first.
	fs := cloneFS(t, base)
	s := open(t, fs, Options{})
	b := s.NewBatch()
	b.Append(2, []*raftpb.Entry{ent(11, 1, "x")})
	commit(t, s, b, true)
	_ = s.Close()
	for _, i := range []int{3, headerLen + 2, headerLen + 9, start - 1} {
		fs2 := cloneFS(t, fs)
		d := append([]byte(nil), full[:start]...)
		d[i] ^= 1
		writeFile(t, fs2, seg, d)
		if s, err := Open(Options{FS: fs2, Dir: "/log"}); err == nil {
			_ = s.Close()
			t.Errorf("damage at %d of a sealed segment was accepted", i)
		}
	}
}

// recoveryCase builds logs from seed on a crashable file system, a part
// synced and a part not, then damages only the unsynced tail of the last
// segment (cut at cut, flip bytes, append garbage) and checks that
// recovery neither fails nor loses a synced entry nor invents one.
func recoveryCase(t *testing.T, seed uint64, cut uint32, flips []byte, garbage []byte) {
	rng := rand.New(rand.NewPCG(seed, 5))
	fs := vfs.NewMem()
	opts := Options{SegmentBytes: 512 + int64(rng.IntN(2048))}
	s := open(t, fs, opts)
	cur := map[uint64]state{}
	hist := map[uint64][]state{}
	ids := []uint64{1, 9}
	for _, id := range ids {
		hist[id] = []state{{}}
	}
	rounds := 2 + rng.IntN(20)
	syncUntil := rng.IntN(rounds)
	for r := range rounds {
		b := s.NewBatch()
		id := ids[rng.IntN(2)]
		m := cur[id].clone()
		if rng.IntN(6) == 0 {
			idx := m.last() + rng.Uint64N(3)
			b.Reset(id, idx)
			m = state{trunc: idx}
		} else {
			start := m.trunc + 1 + rng.Uint64N(uint64(len(m.ents))+1)
			ents := make([]*raftpb.Entry, 1+rng.IntN(4))
			for i := range ents {
				ents[i] = ent(start+uint64(i), uint64(r+1), fmt.Sprintf("%d.%d", r, rng.IntN(1000)))
			}
			b.Append(id, ents)
			m.ents = append(m.ents[:start-m.trunc-1], ents...)
		}
		cur[id] = m
		commit(t, s, b, r <= syncUntil)
		hist[id] = append(hist[id], m.clone())
		if r <= syncUntil {
			for _, id := range ids {
				hist[id] = []state{cur[id].clone()}
			}
		}
	}
	name, synced := s.segName(s.active().num), int(s.active().synced)
	_ = s.Close()
	data := readFile(t, fs, name)
	if tail := len(data) - synced; tail > 0 {
		data = data[:synced+int(cut)%(tail+1)]
	}
	for i := 0; i+1 < len(flips); i += 2 {
		if tail := len(data) - synced; tail > 0 {
			data[synced+int(flips[i])*int(flips[i+1])%tail] ^= flips[i+1] | 1
		}
	}
	data = append(data, garbage...)
	writeFile(t, fs, name, data)
	s, err := Open(Options{FS: fs, Dir: "/log", SegmentBytes: opts.SegmentBytes})
	if err != nil {
		t.Fatalf("recovery failed: %v", err)
	}
	defer s.Close()
	for _, id := range ids {
		ok := false
		for _, h := range hist[id] {
			if matches(s, id, h) == nil {
				ok = true
				break
			}
		}
		if !ok {
			t.Fatalf("group %d: recovered log matches no state since the last sync", id)
		}
	}
}

func TestRecoveryCases(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for seed := range uint64(200) {
		flips := make([]byte, rng.IntN(8))
		for i := range flips {
			flips[i] = byte(rng.Uint32())
		}
		garbage := make([]byte, rng.IntN(3)*rng.IntN(40))
		for i := range garbage {
			garbage[i] = byte(rng.Uint32())
		}
		recoveryCase(t, seed, rng.Uint32(), flips, garbage)
	}
}

// FuzzRecovery: random logs with random torn, damaged or garbage-extended
// unsynced tails never make recovery fail or panic, and never lose a
// synced entry.
func FuzzRecovery(f *testing.F) {
	f.Add(uint64(1), uint32(0), []byte{}, []byte{})
	f.Add(uint64(2), uint32(7), []byte{3, 9, 200, 1}, []byte{0, 0, 0, 0})
	f.Add(uint64(3), uint32(1<<31), []byte{}, []byte{8, 0, 0, 0, 1, 2, 3, 4, 5})
	f.Fuzz(func(t *testing.T, seed uint64, cut uint32, flips, garbage []byte) {
		if len(flips) > 64 || len(garbage) > 4096 {
			return
		}
		recoveryCase(t, seed, cut, flips, garbage)
	})
}
