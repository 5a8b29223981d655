package traversal

import (
	"math/big"
	"strconv"

	"github.com/parsecdb/parsec/internal/api/gremlin/graph"
	"github.com/parsecdb/parsec/internal/api/gremlin/lang"
)

// importValue turns an argument value into a result value: list and set
// literals become []any, map literals *graph.Map.
func importValue(v lang.Value) any {
	switch x := v.(type) {
	case []lang.Value:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = importValue(e)
		}
		return out
	case lang.Set:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = importValue(e)
		}
		return out
	case *lang.Map:
		m := &graph.Map{}
		for _, e := range x.Entries {
			m.Put(importValue(e.Key), importValue(e.Value))
		}
		return m
	}
	return v
}

// exportValue is the identity on result values; it exists so that the
// evaluator's internal markers never leak.
func exportValue(v any) any {
	out, _ := exportDepth(v, 0)
	return out
}

// exportDepth turns the evaluator's map entries into maps of one entry,
// wherever they sit in a result; changed says whether it made a copy.
func exportDepth(v any, depth int) (any, bool) {
	if depth > 64 {
		return v, false
	}
	switch x := v.(type) {
	case startMarker:
		panic("BUG: the start marker escaped the traversal")
	case *graph.Entry:
		k, _ := exportDepth(x.Key, depth+1)
		val, _ := exportDepth(x.Value, depth+1)
		return &graph.Map{Entries: []graph.Entry{{Key: k, Value: val}}}, true
	case []any:
		var out []any
		for i, e := range x {
			c, changed := exportDepth(e, depth+1)
			if changed && out == nil {
				out = append(make([]any, 0, len(x)), x[:i]...)
			}
			if out != nil {
				out = append(out, c)
			}
		}
		if out != nil {
			return out, true
		}
	case *graph.Map:
		var m *graph.Map
		for i, e := range x.Entries {
			k, c1 := exportDepth(e.Key, depth+1)
			val, c2 := exportDepth(e.Value, depth+1)
			if (c1 || c2) && m == nil {
				m = &graph.Map{Entries: append([]graph.Entry(nil), x.Entries[:i]...)}
			}
			if m != nil {
				m.Entries = append(m.Entries, graph.Entry{Key: k, Value: val})
			}
		}
		if m != nil {
			return m, true
		}
	case *graph.Path:
		if objs, changed := exportDepth(x.Objects, depth+1); changed {
			return &graph.Path{Labels: x.Labels, Objects: objs.([]any)}, true
		}
	}
	return v, false
}

// sizeOf approximates the bytes a value holds (elements are shared and
// counted small; lists and maps are walked to a bounded depth).
func sizeOf(v any, depth int) int64 {
	if depth > 8 {
		return 16
	}
	switch x := v.(type) {
	case string:
		return 16 + int64(len(x))
	case []any:
		n := int64(24)
		for _, e := range x {
			n += 16 + sizeOf(e, depth+1)
		}
		return n
	case *graph.Map:
		n := int64(24)
		for _, e := range x.Entries {
			n += 32 + sizeOf(e.Key, depth+1) + sizeOf(e.Value, depth+1)
		}
		return n
	case *graph.Path:
		return 24 + int64(len(x.Objects))*24
	case *graph.BulkSet:
		n := int64(24)
		for _, e := range x.Items {
			n += 24 + sizeOf(e, depth+1)
		}
		return n
	case *graph.Tree:
		n := int64(24)
		for _, e := range x.Entries {
			n += 32 + sizeOf(e.Key, depth+1)
			if e.Children != nil {
				n += sizeOf(e.Children, depth+1)
			}
		}
		return n
	}
	return 16
}

// idString converts an id argument to the string ids Cosmos uses: strings
// as they are, integers in decimal (g.V(1) reads the vertex "1").
func idString(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case lang.UUID:
		return string(x), true
	case int32:
		return strconv.FormatInt(int64(x), 10), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case int:
		return strconv.Itoa(x), true
	case *big.Int:
		return x.String(), true
	case *graph.Vertex:
		return x.ID, true
	case *graph.Edge:
		return x.ID, true
	}
	return "", false
}

// elementKey identifies a vertex across partitions: its partition key and
// id.
func vertexKey(pk any, id string) string {
	return pkKey(pk) + "\x00" + id
}

func edgeKey(e *graph.Edge) string {
	return vertexKey(e.Out.PartitionKey, e.ID)
}

func refOf(v *graph.Vertex) graph.Ref {
	return graph.Ref{ID: v.ID, Label: v.Label, PartitionKey: v.PartitionKey}
}

// toInt64 converts a numeric argument to an int64.
func toInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case int:
		return int64(x), true
	case *big.Int:
		if x.IsInt64() {
			return x.Int64(), true
		}
	}
	return 0, false
}
