package engine

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkChangeFeed reads the whole change feed of one partition of a
// 4-partition container holding 20,000 items of 1 KB (one op reads every
// change of the partition, about 5,000, in pages of 1,000), next to its
// read feed; and the whole container's change feed, range by range, next
// to the container's read feed. Throughput is reported as changes (or
// items) per second.
func BenchmarkChangeFeed(b *testing.B) {
	_, c := benchContainer(b)
	pad := strings.Repeat("x", 950)
	for i := range 20000 {
		pk := fmt.Sprint("p", i%1000)
		w, err := c.PrepareWrite(OpCreate, fmt.Appendf(nil, `{"id":"i%d","pk":%q,"pad":%q}`, i, pk, pad), key(pk), true)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := c.Execute(&Command{Ops: []Op{w}}, ""); err != nil {
			b.Fatal(err)
		}
	}
	parts := c.Partitions()
	changes := func(rangeID string) int {
		n := 0
		start := ChangeFeedStart{}
		for {
			pg, err := c.ChangeFeed(ChangeFeedScope{RangeID: rangeID}, start, 1000)
			if err != nil {
				b.Fatal(err)
			}
			if len(pg.Docs) == 0 {
				return n
			}
			n += len(pg.Docs)
			start = ChangeFeedStart{After: pg.Position}
		}
	}
	feed := func(rangeID string) int {
		n := 0
		var after []byte
		for {
			f, err := c.ReadFeed(rangeID, after, 1000)
			if err != nil {
				b.Fatal(err)
			}
			n += len(f.Docs)
			if f.Next == nil {
				return n
			}
			after = f.Next
		}
	}
	report := func(b *testing.B, read func() int) {
		total := 0
		for b.Loop() {
			total += read()
		}
		b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "docs/s")
	}
	b.Run("change-feed-one-range", func(b *testing.B) { report(b, func() int { return changes(parts[0].ID()) }) })
	b.Run("read-feed-one-range", func(b *testing.B) { report(b, func() int { return feed(parts[0].ID()) }) })
	b.Run("change-feed-container", func(b *testing.B) {
		report(b, func() int {
			n := 0
			for _, p := range parts {
				n += changes(p.ID())
			}
			return n
		})
	})
	b.Run("read-feed-container", func(b *testing.B) { report(b, func() int { return feed("") }) })
}
