// Temporary: Pebble Get cost with and without bloom filters (deleted after use).
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
)

func main() {
	for _, bl := range []bool{false, true} {
		run(bl, false)
	}
}

func run(useBloom, compact bool) {
	dir, _ := os.MkdirTemp("", "pb")
	defer os.RemoveAll(dir)
	o := &pebble.Options{Cache: pebble.NewCache(256 << 20)}
	if useBloom {
		for i := range o.Levels {
			o.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
		}
	}
	o.EnsureDefaults()
	db, err := pebble.Open(dir, o)
	if err != nil {
		panic(err)
	}
	const n = 100000
	keys := make([][]byte, n)
	val := make([]byte, 1200)
	for i := range keys {
		var h [16]byte
		rand.Read(h[:])
		k := append([]byte("D12345678"), hex.EncodeToString(h[:])...)
		keys[i] = append(append(k, 0), fmt.Sprintf("i%d", i)...)
	}
	for i := 0; i < n; i += 8 {
		b := db.NewBatch()
		for j := i; j < i+8 && j < n; j++ {
			rand.Read(val)
			b.Set(keys[j], val, nil)
		}
		b.Commit(pebble.Sync)
	}
	if compact {
		db.Compact(context.Background(), []byte("A"), []byte("Z"), true)
	}
	time.Sleep(2 * time.Second) // let flushes and compactions settle
	m := db.Metrics()
	const dur = 3 * time.Second
	var wg sync.WaitGroup
	var total int64
	var mu sync.Mutex
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := mrand.New(mrand.NewPCG(uint64(g), 1))
			cnt := int64(0)
			buf := make([]byte, 0, 64)
			end := time.Now().Add(dur)
			for time.Now().Before(end) {
				for range 100 {
					k := append(buf[:0], keys[rng.IntN(n)]...)
					k[len(k)-2] ^= 0x80 // an absent key, as a create of a new id looks up
					_, c, err := db.Get(k)
					if err != pebble.ErrNotFound {
						panic(err)
					}
					_ = c
					cnt++
				}
			}
			mu.Lock()
			total += cnt
			mu.Unlock()
		}()
	}
	wg.Wait()
	fmt.Printf("bloom=%v compacted=%v: %.0f negative Gets/s on 2 goroutines (%.2f µs of CPU each at 2 cores); L0 files %d, total files %d\n",
		useBloom, compact, float64(total)/dur.Seconds(), 2*dur.Seconds()*1e6/float64(total), m.Levels[0].TablesCount, m.Total().TablesCount)
	db.Close()
}
