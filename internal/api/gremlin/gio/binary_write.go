package gio

import (
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"math/big"
	"reflect"
	"slices"
	"sort"
	"time"

	"github.com/parsecdb/parsec/internal/api/gremlin/graph"
	"github.com/parsecdb/parsec/internal/api/gremlin/lang"
)

// maxEncodeDepth bounds the recursion of the encoders; result values are
// built by the evaluator, but a cyclic or absurdly deep value must fail
// rather than exhaust the stack.
const maxEncodeDepth = 1000

var gbEnumCodes = func() map[string]byte {
	m := make(map[string]byte, len(gbEnumTypes))
	for c, n := range gbEnumTypes {
		m[n] = c
	}
	return m
}()

type binWriter struct {
	b     []byte
	depth int
}

func (w *binWriter) u8(c byte)    { w.b = append(w.b, c) }
func (w *binWriter) i32(v int32)  { w.b = binary.BigEndian.AppendUint32(w.b, uint32(v)) }
func (w *binWriter) i64(v int64)  { w.b = binary.BigEndian.AppendUint64(w.b, uint64(v)) }
func (w *binWriter) str(s string) { w.i32(int32(len(s))); w.b = append(w.b, s...) }
func (w *binWriter) null()        { w.b = append(w.b, gbUnspecifiedNull, 0x01) }
func (w *binWriter) head(code byte) {
	w.b = append(w.b, code, 0x00)
}

// encodeBinaryResponse writes {version}{request_id}{status_code}
// {status_message}{status_attributes}{result_meta}{result_data}; the id is
// a nullable UUID, the message a nullable String, attributes and meta are
// Maps without type code and flag, the data is fully qualified. Checked
// against gremlin-go v3.8.1 driver/serializer.go DeserializeMessage.
func encodeBinaryResponse(r *Response) ([]byte, error) {
	w := &binWriter{b: make([]byte, 0, 256)}
	w.u8(gbVersion)
	if r.RequestID == "" {
		w.u8(0x01)
	} else {
		id, err := uuidBytes(r.RequestID)
		if err != nil {
			return nil, fmt.Errorf("request id: %w", err)
		}
		w.u8(0x00)
		w.b = append(w.b, id[:]...)
	}
	w.i32(int32(r.Status.Code))
	w.u8(0x00)
	w.str(r.Status.Message)
	if err := w.stringMap(r.Status.Attributes); err != nil {
		return nil, fmt.Errorf("status attributes: %w", err)
	}
	if err := w.stringMap(r.Result.Meta); err != nil {
		return nil, fmt.Errorf("result meta: %w", err)
	}
	w.head(gbList)
	w.i32(int32(len(r.Result.Data)))
	for _, v := range r.Result.Data {
		if r.Result.Traversers {
			w.head(gbTraverser)
			w.i64(1)
		}
		if err := w.value(v); err != nil {
			return nil, err
		}
	}
	return w.b, nil
}

// stringMap writes a Map's value part ({length}{key}{value}...) with
// String keys in sorted order.
func (w *binWriter) stringMap(m map[string]any) error {
	w.i32(int32(len(m)))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		w.head(gbString)
		w.str(k)
		if err := w.value(m[k]); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	return nil
}

// value writes a fully qualified value.
func (w *binWriter) value(v any) error {
	w.depth++
	defer func() { w.depth-- }()
	if w.depth > maxEncodeDepth {
		return fmt.Errorf("result value nested deeper than %d", maxEncodeDepth)
	}
	switch x := v.(type) {
	case nil:
		w.null()
	case bool:
		w.head(gbBoolean)
		if x {
			w.u8(1)
		} else {
			w.u8(0)
		}
	case int32:
		w.head(gbInt)
		w.i32(x)
	case int64:
		w.head(gbLong)
		w.i64(x)
	case int:
		w.head(gbLong)
		w.i64(int64(x))
	case float32:
		w.head(gbFloat)
		w.i32(int32(math.Float32bits(x)))
	case float64:
		w.head(gbDouble)
		w.i64(int64(math.Float64bits(x)))
	case string:
		w.head(gbString)
		w.str(x)
	case lang.UUID:
		b, err := uuidBytes(string(x))
		if err != nil {
			return err
		}
		w.head(gbUUID)
		w.b = append(w.b, b[:]...)
	case time.Time:
		w.head(gbDate)
		w.i64(x.UnixMilli())
	case *big.Int:
		if x == nil {
			w.null()
			return nil
		}
		w.head(gbBigInteger)
		w.bigInt(x)
	case []any:
		w.head(gbList)
		return w.list(x)
	case lang.Set:
		w.head(gbSet)
		return w.list([]any(x))
	case []string:
		w.head(gbList)
		w.i32(int32(len(x)))
		for _, s := range x {
			w.head(gbString)
			w.str(s)
		}
	case map[string]any:
		w.head(gbMap)
		return w.stringMap(x)
	case *graph.Map:
		if x == nil {
			w.null()
			return nil
		}
		w.head(gbMap)
		w.i32(int32(len(x.Entries)))
		for _, e := range x.Entries {
			if err := w.value(e.Key); err != nil {
				return err
			}
			if err := w.value(e.Value); err != nil {
				return err
			}
		}
	case *lang.Map:
		if x == nil {
			w.null()
			return nil
		}
		w.head(gbMap)
		w.i32(int32(len(x.Entries)))
		for _, e := range x.Entries {
			if err := w.value(e.Key); err != nil {
				return err
			}
			if err := w.value(e.Value); err != nil {
				return err
			}
		}
	case lang.Token:
		code, ok := gbEnumCodes[x.Type]
		if !ok {
			return fmt.Errorf("enum type %q has no GraphBinary code", x.Type)
		}
		w.head(code)
		w.head(gbString)
		w.str(x.Name)
	case *graph.Vertex:
		if x == nil {
			w.null()
			return nil
		}
		return w.vertex(x)
	case *graph.Edge:
		if x == nil {
			w.null()
			return nil
		}
		return w.edge(x)
	case *graph.VertexProperty:
		if x == nil {
			w.null()
			return nil
		}
		return w.vertexProperty(x)
	case *graph.Property:
		if x == nil {
			w.null()
			return nil
		}
		w.head(gbProperty)
		w.str(x.Key)
		if err := w.value(x.Value); err != nil {
			return err
		}
		w.null() // parent
	case *graph.Path:
		if x == nil {
			w.null()
			return nil
		}
		// {labels}{objects}: a List of Sets of Strings, then a List.
		w.head(gbPath)
		w.head(gbList)
		w.i32(int32(len(x.Labels)))
		for _, ls := range x.Labels {
			w.head(gbSet)
			w.i32(int32(len(ls)))
			for _, l := range ls {
				w.head(gbString)
				w.str(l)
			}
		}
		w.head(gbList)
		return w.list(x.Objects)
	case *graph.BulkSet:
		if x == nil {
			w.null()
			return nil
		}
		if len(x.Bulks) != len(x.Items) {
			return fmt.Errorf("bulk set has %d items and %d bulks", len(x.Items), len(x.Bulks))
		}
		w.head(gbBulkSet)
		w.i32(int32(len(x.Items)))
		for i, it := range x.Items {
			if err := w.value(it); err != nil {
				return err
			}
			w.i64(x.Bulks[i])
		}
	case *graph.Tree:
		if x == nil {
			w.null()
			return nil
		}
		w.head(gbTree)
		return w.tree(x)
	default:
		if l, ok := asList(v); ok {
			w.head(gbList)
			return w.list(l)
		}
		return fmt.Errorf("cannot serialize a %T as GraphBinary", v)
	}
	return nil
}

func (w *binWriter) list(items []any) error {
	w.i32(int32(len(items)))
	for _, it := range items {
		if err := w.value(it); err != nil {
			return err
		}
	}
	return nil
}

// tree writes {length}{key_0}{subtree_0}...: each key fully qualified,
// each subtree a bare Tree value (no type code or flag), as TinkerPop's
// TreeSerializer writes it (context.writeValue(subtree, buffer, false)).
func (w *binWriter) tree(t *graph.Tree) error {
	w.depth++
	defer func() { w.depth-- }()
	if w.depth > maxEncodeDepth {
		return fmt.Errorf("tree nested deeper than %d", maxEncodeDepth)
	}
	w.i32(int32(len(t.Entries)))
	for _, e := range t.Entries {
		if err := w.value(e.Key); err != nil {
			return err
		}
		child := e.Children
		if child == nil {
			child = &graph.Tree{}
		}
		if err := w.tree(child); err != nil {
			return err
		}
	}
	return nil
}

func (w *binWriter) bigInt(x *big.Int) {
	// Two's complement, big-endian, minimal length.
	var b []byte
	switch x.Sign() {
	case 0:
		b = []byte{0}
	case 1:
		b = x.Bytes()
		if b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
	default:
		n := len(x.Bytes()) + 1
		mod := new(big.Int).Lsh(big.NewInt(1), uint(8*n))
		b = new(big.Int).Add(mod, x).Bytes()
		for len(b) < n {
			b = append([]byte{0xff}, b...)
		}
		for len(b) > 1 && b[0] == 0xff && b[1]&0x80 != 0 {
			b = b[1:]
		}
	}
	w.i32(int32(len(b)))
	w.b = append(w.b, b...)
}

// vertex writes {id}{label}{properties}: the id fully qualified, the label
// a bare String, the properties a List of VertexProperty in key order
// (TinkerPop 3.7+ servers include them; gremlin-go exposes them as
// Vertex.Properties).
func (w *binWriter) vertex(v *graph.Vertex) error {
	w.head(gbVertex)
	w.head(gbString)
	w.str(v.ID)
	w.str(v.Label)
	props := vertexProps(v)
	if props == nil {
		w.null()
		return nil
	}
	w.head(gbList)
	w.i32(int32(len(props)))
	for _, p := range props {
		if err := w.vertexProperty(p); err != nil {
			return err
		}
	}
	return nil
}

// vertexProps lists a vertex's properties in Keys order, then any keys
// missing from Keys in sorted order; nil when it has none.
func vertexProps(v *graph.Vertex) []*graph.VertexProperty {
	var out []*graph.VertexProperty
	for _, k := range orderedKeys(v.Keys, v.Properties) {
		for _, p := range v.Properties[k] {
			if p != nil {
				out = append(out, p)
			}
		}
	}
	return out
}

// orderedKeys returns the keys of m: first those in order (once each),
// then the rest sorted.
func orderedKeys[T any](order []string, m map[string]T) []string {
	out := make([]string, 0, len(m))
	seen := make(map[string]bool, len(m))
	for _, k := range order {
		if _, ok := m[k]; ok && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	if len(out) < len(m) {
		var rest []string
		for k := range m {
			if !seen[k] {
				rest = append(rest, k)
			}
		}
		sort.Strings(rest)
		out = append(out, rest...)
	}
	return out
}

// vertexProperty writes {id}{label}{value}{parent}{properties}.
func (w *binWriter) vertexProperty(p *graph.VertexProperty) error {
	w.head(gbVertexProperty)
	w.head(gbString)
	w.str(p.ID)
	w.str(p.Key)
	if err := w.value(p.Value); err != nil {
		return err
	}
	w.null() // parent
	if len(p.Meta) == 0 {
		w.null()
		return nil
	}
	w.head(gbList)
	w.i32(int32(len(p.Meta)))
	for _, k := range slices.Sorted(maps.Keys(p.Meta)) {
		w.head(gbProperty)
		w.str(k)
		if err := w.value(p.Meta[k]); err != nil {
			return err
		}
		w.null()
	}
	return nil
}

// edge writes {id}{label}{inVId}{inVLabel}{outVId}{outVLabel}{parent}{properties}.
func (w *binWriter) edge(e *graph.Edge) error {
	w.head(gbEdge)
	w.head(gbString)
	w.str(e.ID)
	w.str(e.Label)
	w.head(gbString)
	w.str(e.In.ID)
	w.str(e.In.Label)
	w.head(gbString)
	w.str(e.Out.ID)
	w.str(e.Out.Label)
	w.null() // parent
	if len(e.Properties) == 0 {
		w.null()
		return nil
	}
	keys := orderedKeys(e.Keys, e.Properties)
	w.head(gbList)
	w.i32(int32(len(keys)))
	for _, k := range keys {
		w.head(gbProperty)
		w.str(k)
		if err := w.value(e.Properties[k]); err != nil {
			return err
		}
		w.null()
	}
	return nil
}

// asList converts a slice of another element type ([]*graph.Vertex,
// []int64, ...) to []any, so that the encoders accept what the evaluator
// may build; byte slices are not lists.
func asList(v any) ([]any, bool) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice || rv.Type().Elem().Kind() == reflect.Uint8 {
		return nil, false
	}
	out := make([]any, rv.Len())
	for i := range out {
		out[i] = rv.Index(i).Interface()
	}
	return out, true
}
