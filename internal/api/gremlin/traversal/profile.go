package traversal

import (
	"time"

	"github.com/parsecdb/parsec/internal/api/gremlin/graph"
)

// ProfileValue renders a run's profile in Cosmos's executionProfile()
// format (gremlin/reference-execution-profile.md):
//
//	[{"gremlin": <text>, "totalTime": ms, "metrics": [{"name", "time",
//	  "annotations": {"percentTime"}, "counts": {"resultCount"},
//	  "storeOps": [{"fanoutFactor", "count", "size", "time", "index"}]}]}]
//
// "index" is Parsec's own: the index that served the lookup ("" when the
// store read by key or scanned). Times are milliseconds.
func ProfileValue(gremlin string, res *Result) []any {
	total := res.Duration
	var sum time.Duration
	for _, m := range res.Profile {
		sum += m.Time
	}
	if total < sum {
		total = sum
	}
	var metrics []any
	for _, m := range res.Profile {
		pct := 0.0
		if total > 0 {
			pct = float64(m.Time) * 100 / float64(total)
		}
		var ops []any
		for _, op := range m.Ops {
			o := &graph.Map{}
			o.Put("fanoutFactor", int64(op.Partitions))
			o.Put("count", int64(op.Count))
			o.Put("size", int64(op.Size))
			o.Put("time", 0.0)
			o.Put("index", op.Index)
			ops = append(ops, o)
		}
		mm := &graph.Map{}
		mm.Put("name", m.Name)
		mm.Put("time", ms(m.Time))
		ann := &graph.Map{}
		ann.Put("percentTime", pct)
		mm.Put("annotations", ann)
		counts := &graph.Map{}
		counts.Put("resultCount", int64(m.Count))
		mm.Put("counts", counts)
		if len(ops) > 0 {
			mm.Put("storeOps", ops)
		}
		metrics = append(metrics, mm)
	}
	if metrics == nil {
		metrics = []any{}
	}
	top := &graph.Map{}
	top.Put("gremlin", gremlin)
	top.Put("totalTime", ms(total))
	top.Put("metrics", metrics)
	return []any{top}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
