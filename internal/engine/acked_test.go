package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/parsecdb/parsec/internal/storage"
)

// TestCrashNeverReportsDataLoss writes concurrently while the record of
// acknowledged LSNs is rewritten continually, and takes crash images of
// the disk (only what was synced, or that plus a random part of what was
// not) at several points, one right after a container is deleted. Every
// image must open without a data-loss alarm and hold every write
// acknowledged before it was taken.
func TestCrashNeverReportsDataLoss(t *testing.T) {
	fs := vfs.NewCrashableMem()
	if err := fs.MkdirAll("/d", 0o755); err != nil {
		t.Fatal(err)
	}
	opts := Options{PartitionMaxRUs: 1000, NoThrottle: true, AckedInterval: time.Millisecond,
		Now: func() time.Time { return time.Unix(1_800_000_000, 0) }}
	st, err := storage.Open(storage.Options{Dir: "/d", FS: fs, Reserve: -1})
	if err != nil {
		t.Fatal(err)
	}
	e, err := Open(st, opts)
	if err != nil {
		t.Fatal(err)
	}
	c := mustContainer(t, e, 4000)
	if _, err := e.CreateContainer("db", ContainerSpec{ID: "doomed", PartitionKey: hashDef("/pk")}, Throughput{}); err != nil {
		t.Fatal(err)
	}
	doomed, _ := e.Container("db", "doomed")

	var mu sync.Mutex
	var acked []string
	var stop sync.WaitGroup
	quit := make(chan struct{})
	for w := 0; w < 4; w++ {
		stop.Add(1)
		go func(w int) {
			defer stop.Done()
			for i := 0; ; i++ {
				select {
				case <-quit:
					return
				default:
				}
				id, pk := fmt.Sprintf("%d-%d", w, i), fmt.Sprintf("k%d", i%17)
				for _, ct := range []*Container{c, doomed} {
					op, err := ct.PrepareWrite(OpCreate, []byte(fmt.Sprintf(`{"id":%q,"pk":%q}`, id, pk)), key(pk), true)
					if err != nil {
						t.Error(err)
						return
					}
					res, _, err := ct.Execute(&Command{Ops: []Op{op}}, "")
					if ct == doomed {
						continue // it is deleted while writes run
					}
					if err != nil || res[0].Err != nil {
						t.Errorf("write %s: %v", id, err)
						return
					}
				}
				mu.Lock()
				acked = append(acked, id+"|"+pk)
				mu.Unlock()
			}
		}(w)
	}

	type image struct {
		fs    *vfs.MemFS
		acked []string
	}
	var images []image
	rng := rand.New(rand.NewPCG(1, 2))
	snap := func() {
		mu.Lock()
		done := append([]string(nil), acked...)
		mu.Unlock()
		cfg := vfs.CrashCloneCfg{}
		if len(images)%2 == 1 {
			cfg = vfs.CrashCloneCfg{UnsyncedDataPercent: 50, RNG: rng}
		}
		images = append(images, image{fs: fs.CrashClone(cfg), acked: done})
	}
	// Take images as the record advances; each waits for more writes to be
	// acknowledged, not for time to pass.
	waitFor := func(n int) {
		for {
			mu.Lock()
			k := len(acked)
			mu.Unlock()
			if k >= n {
				return
			}
			time.Sleep(time.Millisecond)
		}
	}
	for i := 1; i <= 6; i++ {
		waitFor(200 * i)
		snap()
		if i == 3 {
			if err := e.DeleteContainer("db", "doomed"); err != nil {
				t.Fatal(err)
			}
			snap()
		}
	}
	close(quit)
	stop.Wait()
	e.Close()
	st.Close()

	recorded := 0
	for n, im := range images {
		v, err := im.fs.Open("/d/" + AckedFile)
		if err == nil {
			var rec ackedRecord
			b := make([]byte, 1<<20)
			k, _ := v.Read(b)
			v.Close()
			if json.Unmarshal(b[:k], &rec) == nil && len(rec.Partitions) > 0 {
				recorded++
			}
		}
		st, err := storage.Open(storage.Options{Dir: "/d", FS: im.fs, Reserve: -1})
		if err != nil {
			t.Fatalf("image %d: %v", n, err)
		}
		e, err := Open(st, opts)
		if errors.Is(err, storage.ErrDataLoss) {
			t.Fatalf("image %d: false data-loss alarm: %v", n, err)
		}
		if err != nil {
			t.Fatalf("image %d: %v", n, err)
		}
		c, err := e.Container("db", "c")
		if err != nil {
			t.Fatalf("image %d: %v", n, err)
		}
		for _, k := range im.acked {
			var id, pk string
			for i := range k {
				if k[i] == '|' {
					id, pk = k[:i], k[i+1:]
				}
			}
			op, err := c.PrepareKeyed(OpRead, id, key(pk), true)
			if err != nil {
				t.Fatal(err)
			}
			if r, _, err := c.ReadItem(op); err != nil || r.Err != nil {
				t.Fatalf("image %d: acknowledged write %s lost: %v %v", n, id, err, r.Err)
			}
		}
		e.Close()
		st.Close()
	}
	if recorded < len(images)/2 {
		t.Fatalf("only %d of %d images hold a record of acknowledged LSNs: the check was not exercised", recorded, len(images))
	}
}

// TestDeleteThenCrashIsNotDataLoss records the acknowledged LSNs, deletes a
// container and a database, and opens a crash image taken right after:
// the deletions are not lost writes.
func TestDeleteThenCrashIsNotDataLoss(t *testing.T) {
	fs := vfs.NewCrashableMem()
	if err := fs.MkdirAll("/d", 0o755); err != nil {
		t.Fatal(err)
	}
	opts := Options{PartitionMaxRUs: 1000, NoThrottle: true, AckedInterval: time.Hour}
	st, err := storage.Open(storage.Options{Dir: "/d", FS: fs, Reserve: -1})
	if err != nil {
		t.Fatal(err)
	}
	e, err := Open(st, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	defer e.Close()
	mustContainer(t, e, 400)
	if _, err := e.CreateDatabase("db2", Throughput{}); err != nil {
		t.Fatal(err)
	}
	for _, x := range [][2]string{{"db", "gone"}, {"db2", "c"}} {
		if _, err := e.CreateContainer(x[0], ContainerSpec{ID: x[1], PartitionKey: hashDef("/pk")}, Throughput{}); err != nil {
			t.Fatal(err)
		}
		c, _ := e.Container(x[0], x[1])
		mustWrite(t, c, `{"id":"1","pk":"k"}`)
	}
	if err := e.writeAcked(); err != nil {
		t.Fatal(err)
	}
	if err := e.DeleteContainer("db", "gone"); err != nil {
		t.Fatal(err)
	}
	if err := e.DeleteDatabase("db2"); err != nil {
		t.Fatal(err)
	}
	img := fs.CrashClone(vfs.CrashCloneCfg{})
	st2, err := storage.Open(storage.Options{Dir: "/d", FS: img, Reserve: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	e2, err := Open(st2, opts)
	if err != nil {
		t.Fatalf("after deleting and crashing: %v", err)
	}
	e2.Close()
}

// TestLostWritesRefuseToOpen removes a partition's last writes behind the
// engine's back (as a damaged log would) and checks that Open refuses
// with ErrDataLoss naming the partition and the LSNs, and that
// AcceptDataLoss opens, logs the same, and records the state found.
func TestLostWritesRefuseToOpen(t *testing.T) {
	dir := t.TempDir()
	e, st := testEngine(t, dir)
	c := mustContainer(t, e, 400)
	mustWrite(t, c, `{"id":"1","pk":"k"}`)
	mustWrite(t, c, `{"id":"2","pk":"k"}`)
	e.Close()
	// Roll the partition's state back to LSN 1, as if the second write's
	// log record were gone.
	v, _ := st.Get(nil, storage.PartitionKey(c.rid, "0"))
	ps, _ := decodePartState("0", v)
	ps.LSN = 1
	if err := st.Set(storage.PartitionKey(c.rid, "0"), ps.encode()); err != nil {
		t.Fatal(err)
	}
	o := Options{PartitionMaxRUs: 1000, NoThrottle: true}
	_, err := Open(st, o)
	const says = `container "db"/"c" partition key range 0: acknowledged up to LSN 2, found LSN 1 (1 acknowledged writes lost)`
	if !errors.Is(err, storage.ErrDataLoss) || !strings.Contains(err.Error(), says) {
		t.Fatalf("Open: %v; want ErrDataLoss saying %s", err, says)
	}
	var logged []string
	o.AcceptDataLoss = true
	o.Logf = func(f string, args ...any) { logged = append(logged, fmt.Sprintf(f, args...)) }
	e, err = Open(st, o)
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	if !strings.Contains(strings.Join(logged, "\n"), "DATA LOSS accepted: "+says) {
		t.Errorf("AcceptDataLoss logged %q; want %s", logged, says)
	}
	o.AcceptDataLoss = false
	e, err = Open(st, o)
	if err != nil {
		t.Fatalf("open after accepting the loss: %v", err)
	}
	e.Close()
	st.Close()
}
