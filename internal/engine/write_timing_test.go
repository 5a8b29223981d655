package engine

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// BenchmarkWritePath measures the engine's side of 1 KB creates (prepare,
// apply with its index entries, in-memory commit; in a container with and
// without a time to live) and of a page of 100
// documents of SELECT * FROM c, the query whose rows are the stored
// documents, in a container of 4 partitions.
func BenchmarkWritePath(b *testing.B) {
	e, c := benchContainer(b)
	pad := strings.Repeat("x", 950)
	i := 0
	b.Run("create", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			pk := fmt.Sprint("p", i%1000)
			w, err := c.PrepareWrite(OpCreate, fmt.Appendf(nil, `{"id":"i%d","pk":%q,"n":%d,"v":0,"pad":%q}`, i, pk, i, pad), key(pk), true)
			if err != nil {
				b.Fatal(err)
			}
			if _, _, err := c.Execute(&Command{Ops: []Op{w}}, ""); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	// The same creates into a container with a time to live: each write
	// first looks for an expired item of its id (clearExpired).
	ttl := int64(3600)
	if _, err := e.CreateContainer("db", ContainerSpec{ID: "ttl", PartitionKey: hashDef("/pk"), DefaultTTL: &ttl}, Throughput{RUs: 40000}); err != nil {
		b.Fatal(err)
	}
	ct, _ := e.Container("db", "ttl")
	b.Run("create-ttl", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			pk := fmt.Sprint("p", i%1000)
			w, err := ct.PrepareWrite(OpCreate, fmt.Appendf(nil, `{"id":"i%d","pk":%q,"n":%d,"v":0,"pad":%q}`, i, pk, i, pad), key(pk), true)
			if err != nil {
				b.Fatal(err)
			}
			if _, _, err := ct.Execute(&Command{Ops: []Op{w}}, ""); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	plan := compileQuery(b, "SELECT * FROM c")
	b.Run("select-star-page", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			page, err := c.Query(plan, QueryScope{}, nil, 100)
			if err != nil || len(page.Rows) != 100 {
				b.Fatal(err, len(page.Rows))
			}
		}
	})
}

// benchContainer opens an in-memory engine for a benchmark (no throttling,
// the real clock, no background sweep) with container db/c: 4 partitions
// (40,000 RU/s), partition key /pk. It is closed when the benchmark ends.
func benchContainer(b *testing.B) (*Engine, *Container) {
	e, st := testEngineOpts(b, "", Options{PartitionMaxRUs: 10000, NoThrottle: true, Now: time.Now, TTLSweepInterval: -1})
	b.Cleanup(func() {
		e.Close()
		st.Close()
	})
	if _, err := e.CreateDatabase("db", Throughput{}); err != nil {
		b.Fatal(err)
	}
	if _, err := e.CreateContainer("db", ContainerSpec{ID: "c", PartitionKey: hashDef("/pk")}, Throughput{RUs: 40000}); err != nil {
		b.Fatal(err)
	}
	c, _ := e.Container("db", "c")
	return e, c
}
