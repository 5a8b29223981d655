package traversal

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/parsecdb/parsec/internal/api/gremlin/graph"
	"github.com/parsecdb/parsec/internal/api/gremlin/lang"
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

// Format prints a traversal in the canonical Gremlin syntax (g.V().has(
// 'name','x')), for executionProfile()'s "gremlin" field when the request
// text is not at hand.
func Format(t *lang.Traversal) string {
	var b strings.Builder
	formatTraversal(&b, t)
	return b.String()
}

func formatTraversal(b *strings.Builder, t *lang.Traversal) {
	if t.Anonymous {
		b.WriteString("__")
	} else {
		b.WriteString("g")
	}
	for _, s := range t.Source {
		formatStep(b, s)
	}
	for _, s := range t.Steps {
		formatStep(b, s)
	}
}

func formatStep(b *strings.Builder, s lang.Step) {
	b.WriteByte('.')
	b.WriteString(s.Name)
	b.WriteByte('(')
	for i, a := range s.Args {
		if i > 0 {
			b.WriteString(", ")
		}
		formatValue(b, a)
	}
	b.WriteByte(')')
}

func formatValue(b *strings.Builder, v lang.Value) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case string:
		b.WriteString(strconv.Quote(x))
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case int32:
		b.WriteString(strconv.FormatInt(int64(x), 10))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10) + "L")
	case float32:
		b.WriteString(strconv.FormatFloat(float64(x), 'g', -1, 32) + "f")
	case float64:
		b.WriteString(strconv.FormatFloat(x, 'g', -1, 64) + "d")
	case *big.Int:
		b.WriteString(x.String() + "n")
	case *big.Float:
		b.WriteString(x.Text('g', -1) + "m")
	case lang.UUID:
		fmt.Fprintf(b, "UUID(%q)", string(x))
	case time.Time:
		fmt.Fprintf(b, "datetime(%q)", x.Format(time.RFC3339Nano))
	case []lang.Value:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			formatValue(b, e)
		}
		b.WriteByte(']')
	case lang.Set:
		b.WriteByte('{')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			formatValue(b, e)
		}
		b.WriteByte('}')
	case *lang.Map:
		b.WriteByte('[')
		if len(x.Entries) == 0 {
			b.WriteByte(':')
		}
		for i, e := range x.Entries {
			if i > 0 {
				b.WriteString(", ")
			}
			formatValue(b, e.Key)
			b.WriteByte(':')
			formatValue(b, e.Value)
		}
		b.WriteByte(']')
	case *lang.Traversal:
		formatTraversal(b, x)
	case lang.P:
		prefix := "P."
		switch x.Op {
		case "startingWith", "endingWith", "containing", "notStartingWith", "notEndingWith", "notContaining", "regex", "notRegex":
			prefix = "TextP."
		}
		if (x.Op == "and" || x.Op == "or") && len(x.Args) == 2 {
			formatValue(b, x.Args[0])
			b.WriteString("." + x.Op + "(")
			formatValue(b, x.Args[1])
			b.WriteByte(')')
			return
		}
		b.WriteString(prefix + x.Op + "(")
		for i, e := range x.Args {
			if i > 0 {
				b.WriteString(", ")
			}
			formatValue(b, e)
		}
		b.WriteByte(')')
	case lang.Token:
		b.WriteString(x.Type + "." + x.Name)
	default:
		fmt.Fprintf(b, "%v", x)
	}
}
