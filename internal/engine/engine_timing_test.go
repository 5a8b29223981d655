package engine

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// BenchmarkPointRead measures a 1 KB point read through the engine with and
// without request-unit metering (admission against the partition's bucket,
// charging it, and the hot-key sketch), to show what metering costs.
func BenchmarkPointRead(b *testing.B) {
	e, st := testEngineOpts(b, "", Options{PartitionMaxRUs: 10000, MaxThroughput: 1_000_000_000, MaxPartitions: 100_000, Now: time.Now})
	defer st.Close()
	defer e.Close()
	if _, err := e.CreateDatabase("db", Throughput{}); err != nil {
		b.Fatal(err)
	}
	// Enough throughput that the benchmark is never throttled.
	if _, err := e.CreateContainer("db", ContainerSpec{ID: "c", PartitionKey: hashDef("/pk")}, Throughput{RUs: 1_000_000_000}); err != nil {
		b.Fatal(err)
	}
	c, _ := e.Container("db", "c")
	const n = 10000
	pad := strings.Repeat("x", 950)
	ops := make([]Op, n)
	for i := range ops {
		pk := fmt.Sprint("p", i%1000)
		w, err := c.PrepareWrite(OpCreate, []byte(fmt.Sprintf(`{"id":"i%d","pk":%q,"pad":%q}`, i, pk, pad)), key(pk), true)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := c.Execute(&Command{Ops: []Op{w}}, ""); err != nil {
			b.Fatal(err)
		}
		ops[i], _ = c.PrepareKeyed(OpRead, w.ID, key(pk), true)
	}
	b.Run("metered", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, _, err := c.ReadItem(ops[i%n]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("unmetered", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := c.readItem(ops[i%n]); err != nil {
				b.Fatal(err)
			}
		}
	})
}
