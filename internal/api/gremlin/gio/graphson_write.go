package gio

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/big"
	"slices"
	"strconv"
	"time"

	"github.com/parsecdb/parsec/internal/api/gremlin/graph"
	"github.com/parsecdb/parsec/internal/api/gremlin/lang"
)

// maxBulkExpansion caps the values untyped BulkSets expand into, over a
// whole response (nested bulk sets multiply).
const maxBulkExpansion = 1 << 20

type jsonWriter struct {
	b     []byte
	typed bool // GraphSON 3.0 type wrappers; false: Cosmos's untyped JSON
	depth int
	// expanded counts the values written for untyped BulkSets.
	expanded *int64
}

func (w *jsonWriter) raw(s string) { w.b = append(w.b, s...) }

func (w *jsonWriter) str(s string) {
	b, _ := json.Marshal(s) // a Go string always marshals
	w.b = append(w.b, b...)
}

func (w *jsonWriter) key(k string) {
	w.str(k)
	w.b = append(w.b, ':')
}

func (w *jsonWriter) comma(i int) {
	if i > 0 {
		w.b = append(w.b, ',')
	}
}

// open starts a typed wrapper {"@type":t,"@value": when typed.
func (w *jsonWriter) open(t string) {
	if w.typed {
		w.raw(`{"@type":`)
		w.str(t)
		w.raw(`,"@value":`)
	}
}

func (w *jsonWriter) close() {
	if w.typed {
		w.raw("}")
	}
}

func (w *jsonWriter) float(f float64, bits int) {
	switch {
	case math.IsNaN(f):
		w.str("NaN")
	case math.IsInf(f, 1):
		w.str("Infinity")
	case math.IsInf(f, -1):
		w.str("-Infinity")
	default:
		w.raw(strconv.FormatFloat(f, 'g', -1, bits))
	}
}

// encodeCosmosResponse writes the response as Azure Cosmos DB does for
// GraphSON 2.0 requests: the TinkerPop envelope with untyped values
// (GraphSON 1.0-like). gremlin-javascript's GraphSON2Reader passes plain
// JSON through (graph-serializer.js read: objects without @type are read
// member by member).
func encodeCosmosResponse(r *Response) ([]byte, error) {
	return encodeJSONResponse(r, false)
}

// encodeGraphSON3Response writes typed GraphSON 3.0 as Gremlin Server does.
func encodeGraphSON3Response(r *Response) ([]byte, error) {
	return encodeJSONResponse(r, true)
}

func encodeJSONResponse(r *Response, typed bool) ([]byte, error) {
	w := &jsonWriter{b: make([]byte, 0, 256), typed: typed}
	w.raw(`{"requestId":`)
	if r.RequestID == "" {
		w.raw("null")
	} else {
		id, err := normalizeUUID(r.RequestID)
		if err != nil {
			return nil, fmt.Errorf("request id: %w", err)
		}
		w.str(id)
	}
	w.raw(`,"status":{"message":`)
	w.str(r.Status.Message)
	w.raw(`,"code":`)
	w.raw(strconv.Itoa(r.Status.Code))
	w.raw(`,"attributes":`)
	if err := w.stringMap(r.Status.Attributes); err != nil {
		return nil, fmt.Errorf("status attributes: %w", err)
	}
	w.raw(`},"result":{"data":`)
	w.open("g:List")
	w.raw("[")
	for i, v := range r.Result.Data {
		w.comma(i)
		if r.Result.Traversers {
			// Typed even in untyped output: gremlin-javascript's
			// RemoteTraversal iterates Traverser objects (traversal.js),
			// and its GraphSON2Reader reads g:Traverser and g:Int64.
			w.raw(`{"@type":"g:Traverser","@value":{"bulk":{"@type":"g:Int64","@value":1},"value":`)
			if err := w.value(v); err != nil {
				return nil, err
			}
			w.raw("}}")
			continue
		}
		if err := w.value(v); err != nil {
			return nil, err
		}
	}
	w.raw("]")
	w.close()
	w.raw(`,"meta":`)
	if err := w.stringMap(r.Result.Meta); err != nil {
		return nil, fmt.Errorf("result meta: %w", err)
	}
	w.raw("}}")
	return w.b, nil
}

// stringMap writes a map with string keys (sorted): a g:Map when typed, an
// object otherwise.
func (w *jsonWriter) stringMap(m map[string]any) error {
	keys := slices.Sorted(maps.Keys(m))
	if w.typed {
		w.raw(`{"@type":"g:Map","@value":[`)
		for i, k := range keys {
			w.comma(i)
			w.str(k)
			w.raw(",")
			if err := w.value(m[k]); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
		}
		w.raw("]}")
		return nil
	}
	w.raw("{")
	for i, k := range keys {
		w.comma(i)
		w.key(k)
		if err := w.value(m[k]); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	w.raw("}")
	return nil
}

func (w *jsonWriter) value(v any) error {
	w.depth++
	defer func() { w.depth-- }()
	if w.depth > maxEncodeDepth {
		return fmt.Errorf("result value nested deeper than %d", maxEncodeDepth)
	}
	switch x := v.(type) {
	case nil:
		w.raw("null")
	case bool:
		w.raw(strconv.FormatBool(x))
	case string:
		w.str(x)
	case int32:
		w.open("g:Int32")
		w.raw(strconv.FormatInt(int64(x), 10))
		w.close()
	case int64:
		w.open("g:Int64")
		w.raw(strconv.FormatInt(x, 10))
		w.close()
	case int:
		w.open("g:Int64")
		w.raw(strconv.Itoa(x))
		w.close()
	case float64:
		w.open("g:Double")
		w.float(x, 64)
		w.close()
	case float32:
		w.open("g:Float")
		w.float(float64(x), 32)
		w.close()
	case lang.UUID:
		id, err := normalizeUUID(string(x))
		if err != nil {
			return err
		}
		w.open("g:UUID")
		w.str(id)
		w.close()
	case time.Time:
		w.open("g:Date")
		w.raw(strconv.FormatInt(x.UnixMilli(), 10))
		w.close()
	case *big.Int:
		if x == nil {
			w.raw("null")
			return nil
		}
		w.open("gx:BigInteger")
		w.raw(x.String())
		w.close()
	case *big.Float:
		if x == nil {
			w.raw("null")
			return nil
		}
		w.open("gx:BigDecimal")
		w.raw(x.Text('g', -1))
		w.close()
	case lang.Token:
		if w.typed {
			w.open("g:" + x.Type)
			w.str(x.Name)
			w.close()
		} else {
			w.str(x.Name)
		}
	case []any:
		w.open("g:List")
		if err := w.list(x); err != nil {
			return err
		}
		w.close()
	case []string:
		w.open("g:List")
		w.raw("[")
		for i, s := range x {
			w.comma(i)
			w.str(s)
		}
		w.raw("]")
		w.close()
	case lang.Set:
		w.open("g:Set")
		if err := w.list([]any(x)); err != nil {
			return err
		}
		w.close()
	case map[string]any:
		return w.stringMap(x)
	case *graph.Map:
		if x == nil {
			w.raw("null")
			return nil
		}
		entries := make([]lang.MapEntry, len(x.Entries))
		for i, e := range x.Entries {
			entries[i] = lang.MapEntry{Key: e.Key, Value: e.Value}
		}
		return w.mapEntries(entries)
	case *lang.Map:
		if x == nil {
			w.raw("null")
			return nil
		}
		return w.mapEntries(x.Entries)
	case *graph.Vertex:
		if x == nil {
			w.raw("null")
			return nil
		}
		return w.vertex(x)
	case *graph.Edge:
		if x == nil {
			w.raw("null")
			return nil
		}
		return w.edge(x)
	case *graph.VertexProperty:
		if x == nil {
			w.raw("null")
			return nil
		}
		return w.vertexProperty(x, true)
	case *graph.Property:
		if x == nil {
			w.raw("null")
			return nil
		}
		w.open("g:Property")
		w.raw(`{"key":`)
		w.str(x.Key)
		w.raw(`,"value":`)
		if err := w.value(x.Value); err != nil {
			return err
		}
		w.raw("}")
		w.close()
	case *graph.Path:
		if x == nil {
			w.raw("null")
			return nil
		}
		return w.path(x)
	case *graph.BulkSet:
		if x == nil {
			w.raw("null")
			return nil
		}
		return w.bulkSet(x)
	case *graph.Tree:
		if x == nil {
			w.raw("null")
			return nil
		}
		return w.tree(x)
	default:
		if l, ok := asList(v); ok {
			w.open("g:List")
			if err := w.list(l); err != nil {
				return err
			}
			w.close()
			return nil
		}
		return fmt.Errorf("cannot serialize a %T as GraphSON", v)
	}
	return nil
}

func (w *jsonWriter) list(items []any) error {
	w.raw("[")
	for i, it := range items {
		w.comma(i)
		if err := w.value(it); err != nil {
			return err
		}
	}
	w.raw("]")
	return nil
}

// mapEntries writes an ordered map: typed, a g:Map of alternating keys and
// values; untyped, a JSON object whose member names are the keys as text
// (see cosmosKey).
func (w *jsonWriter) mapEntries(entries []lang.MapEntry) error {
	if w.typed {
		w.raw(`{"@type":"g:Map","@value":[`)
		for i, e := range entries {
			w.comma(i)
			if err := w.value(e.Key); err != nil {
				return err
			}
			w.raw(",")
			if err := w.value(e.Value); err != nil {
				return err
			}
		}
		w.raw("]}")
		return nil
	}
	w.raw("{")
	for i, e := range entries {
		w.comma(i)
		k, err := w.cosmosKey(e.Key)
		if err != nil {
			return err
		}
		w.key(k)
		if err := w.value(e.Value); err != nil {
			return err
		}
	}
	w.raw("}")
	return nil
}

// cosmosKey is the member name of a map key in untyped JSON. JSON object
// names are strings, so as in GraphSON 1.0 (TinkerPop's untyped format,
// which Cosmos's responses follow) a graph element key is written as its
// id, an enum (T.id, T.label in valueMap(true)) as its name, and any other
// key as its text.
func (w *jsonWriter) cosmosKey(k any) (string, error) {
	switch x := k.(type) {
	case nil:
		return "null", nil
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case int32:
		return strconv.FormatInt(int64(x), 10), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case int:
		return strconv.Itoa(x), nil
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32), nil
	case lang.UUID:
		return string(x), nil
	case lang.Token:
		return x.Name, nil
	case time.Time:
		return strconv.FormatInt(x.UnixMilli(), 10), nil
	case *graph.Vertex:
		return x.ID, nil
	case *graph.Edge:
		return x.ID, nil
	case *graph.VertexProperty:
		return x.ID, nil
	case *graph.Property:
		return x.Key, nil
	}
	sub := &jsonWriter{depth: w.depth, expanded: w.expanded} // keeps the bounds across keys
	if err := sub.value(k); err != nil {
		return "", err
	}
	return string(sub.b), nil
}

// vertex: {"id","label","type":"vertex","properties":{key:[{"id","value"}]}}
// untyped (Cosmos; support.md "Gremlin wire format"), a g:Vertex whose
// properties are g:VertexProperty lists when typed.
func (w *jsonWriter) vertex(v *graph.Vertex) error {
	w.open("g:Vertex")
	w.raw(`{"id":`)
	w.str(v.ID)
	w.raw(`,"label":`)
	w.str(v.Label)
	if !w.typed {
		w.raw(`,"type":"vertex"`)
	}
	keys := orderedKeys(v.Keys, v.Properties)
	if len(keys) > 0 {
		w.raw(`,"properties":{`)
		for i, k := range keys {
			w.comma(i)
			w.key(k)
			w.raw("[")
			n := 0
			for _, p := range v.Properties[k] {
				if p == nil {
					continue
				}
				w.comma(n)
				n++
				if err := w.vertexProperty(p, false); err != nil {
					return err
				}
			}
			w.raw("]")
		}
		w.raw("}")
	}
	w.raw("}")
	w.close()
	return nil
}

// vertexProperty writes {"id","value"[,"label"][,"properties"]}; inside a
// vertex Cosmos leaves out the label (the key names the list), standalone
// (g.V().properties()) it carries it.
func (w *jsonWriter) vertexProperty(p *graph.VertexProperty, standalone bool) error {
	w.open("g:VertexProperty")
	w.raw(`{"id":`)
	w.str(p.ID)
	w.raw(`,"value":`)
	if err := w.value(p.Value); err != nil {
		return err
	}
	if standalone || w.typed {
		w.raw(`,"label":`)
		w.str(p.Key)
	}
	if w.typed && p.Vertex != nil {
		w.raw(`,"vertex":`)
		w.str(p.Vertex.ID)
	}
	if len(p.Meta) > 0 {
		w.raw(`,"properties":{`)
		for i, k := range slices.Sorted(maps.Keys(p.Meta)) {
			w.comma(i)
			w.key(k)
			if err := w.value(p.Meta[k]); err != nil {
				return err
			}
		}
		w.raw("}")
	}
	w.raw("}")
	w.close()
	return nil
}

// edge: {"id","label","type":"edge","inVLabel","outVLabel","inV","outV",
// "properties":{key:value}} untyped; typed, a g:Edge whose properties are
// g:Property values.
func (w *jsonWriter) edge(e *graph.Edge) error {
	w.open("g:Edge")
	w.raw(`{"id":`)
	w.str(e.ID)
	w.raw(`,"label":`)
	w.str(e.Label)
	if !w.typed {
		w.raw(`,"type":"edge"`)
	}
	w.raw(`,"inVLabel":`)
	w.str(e.In.Label)
	w.raw(`,"outVLabel":`)
	w.str(e.Out.Label)
	w.raw(`,"inV":`)
	w.str(e.In.ID)
	w.raw(`,"outV":`)
	w.str(e.Out.ID)
	keys := orderedKeys(e.Keys, e.Properties)
	if len(keys) > 0 {
		w.raw(`,"properties":{`)
		for i, k := range keys {
			w.comma(i)
			w.key(k)
			if w.typed {
				w.raw(`{"@type":"g:Property","@value":{"key":`)
				w.str(k)
				w.raw(`,"value":`)
			}
			if err := w.value(e.Properties[k]); err != nil {
				return err
			}
			if w.typed {
				w.raw("}}")
			}
		}
		w.raw("}")
	}
	w.raw("}")
	w.close()
	return nil
}

func (w *jsonWriter) path(p *graph.Path) error {
	w.open("g:Path")
	w.raw(`{"labels":`)
	w.open("g:List")
	w.raw("[")
	for i, ls := range p.Labels {
		w.comma(i)
		w.open("g:Set")
		w.raw("[")
		for j, l := range ls {
			w.comma(j)
			w.str(l)
		}
		w.raw("]")
		w.close()
	}
	w.raw("]")
	w.close()
	w.raw(`,"objects":`)
	w.open("g:List")
	if err := w.list(p.Objects); err != nil {
		return err
	}
	w.close()
	w.raw("}")
	w.close()
	return nil
}

// bulkSet: typed, g:BulkSet of alternating values and g:Int64 bulks;
// untyped, the list with each value repeated bulk times.
func (w *jsonWriter) bulkSet(b *graph.BulkSet) error {
	if len(b.Bulks) != len(b.Items) {
		return fmt.Errorf("bulk set has %d items and %d bulks", len(b.Items), len(b.Bulks))
	}
	if w.typed {
		w.raw(`{"@type":"g:BulkSet","@value":[`)
		for i, it := range b.Items {
			w.comma(i)
			if err := w.value(it); err != nil {
				return err
			}
			w.raw(`,{"@type":"g:Int64","@value":`)
			w.raw(strconv.FormatInt(b.Bulks[i], 10))
			w.raw("}")
		}
		w.raw("]}")
		return nil
	}
	if w.expanded == nil {
		w.expanded = new(int64)
	}
	for _, n := range b.Bulks {
		if n < 0 {
			return fmt.Errorf("negative bulk %d", n)
		}
		if n > maxBulkExpansion || *w.expanded+n > maxBulkExpansion {
			return fmt.Errorf("bulk sets expand to more than %d values", maxBulkExpansion)
		}
		*w.expanded += n
	}
	w.raw("[")
	n := 0
	for i, it := range b.Items {
		for j := int64(0); j < b.Bulks[i]; j++ {
			w.comma(n)
			n++
			if err := w.value(it); err != nil {
				return err
			}
		}
	}
	w.raw("]")
	return nil
}

// tree: typed, {"@type":"g:Tree","@value":[{"key":k,"value":<g:Tree>}]};
// untyped, as GraphSON 1.0 writes a tree: an object whose members are the
// keys as text (see cosmosKey), each {"key":k,"value":<subtree>}.
func (w *jsonWriter) tree(t *graph.Tree) error {
	w.depth++
	defer func() { w.depth-- }()
	if w.depth > maxEncodeDepth {
		return fmt.Errorf("tree nested deeper than %d", maxEncodeDepth)
	}
	if w.typed {
		w.raw(`{"@type":"g:Tree","@value":[`)
	} else {
		w.raw("{")
	}
	for i, e := range t.Entries {
		w.comma(i)
		if !w.typed {
			k, err := w.cosmosKey(e.Key)
			if err != nil {
				return err
			}
			w.key(k)
		}
		w.raw(`{"key":`)
		if err := w.value(e.Key); err != nil {
			return err
		}
		w.raw(`,"value":`)
		child := e.Children
		if child == nil {
			child = &graph.Tree{}
		}
		if err := w.tree(child); err != nil {
			return err
		}
		w.raw("}")
	}
	if w.typed {
		w.raw("]}")
	} else {
		w.raw("}")
	}
	return nil
}
