package store

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/parsecdb/parsec/internal/api/gremlin/graph"
	"github.com/parsecdb/parsec/internal/api/gremlin/lang"
)

// The stored shape of vertices and edges; see doc.go.
const (
	fID          = "id"
	fLabel       = "label"
	fValue       = "_value"
	fMeta        = "_meta"
	fIsEdge      = "_isEdge"
	fVertexID    = "_vertexId"
	fVertexLabel = "_vertexLabel"
	fSink        = "_sink"
	fSinkLabel   = "_sinkLabel"
	fSinkPart    = "_sinkPartition"
	fEtag        = "_etag"
	// fWholeFloats marks a document holding a whole float (2.0): the
	// engine's query path re-encodes numbers by value, which writes 2.0 as
	// 2, so a query row so marked is read again by key, as written.
	fWholeFloats  = "_wholeFloats"
	maxValueDepth = 16
)

// systemNames are the top-level members the engine or the graph shape own:
// no property may use them.
var systemNames = map[string]bool{
	"_rid": true, "_self": true, fEtag: true, "_attachments": true, "_ts": true, "_lsn": true,
	fIsEdge: true, fVertexID: true, fVertexLabel: true, fSink: true, fSinkLabel: true, fSinkPart: true,
	fWholeFloats: true,
}

// wholeFloatsMarker is the text encodeVertex and encodeEdge end a document
// with when it holds a whole float.
var wholeFloatsMarker = []byte(`,"` + fWholeFloats + `":true}`)

// isWholeFloat reports whether v is a float without a fraction, which
// appendScalar writes as 2.0.
func isWholeFloat(v any) bool {
	switch v.(type) {
	case float32, float64:
		f, _ := toFloat(v)
		return f == math.Trunc(f) && math.Abs(f) < 1e21
	}
	return false
}

// reserved reports whether a top-level name belongs to the shape rather
// than to a property.
func reserved(name string) bool { return systemNames[name] }

// newGUID returns a random version 4 UUID, as Cosmos DB gives elements and
// vertex properties written without an id.
func newGUID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("BUG: crypto/rand failed: " + err.Error())
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// asString returns the text of a string-like value (a string or a UUID).
func asString(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case lang.UUID:
		return string(x), true
	}
	return "", false
}

// toFloat returns a number's value as a float64.
func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int8:
		return float64(x), true
	case int16:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint8:
		return float64(x), true
	case uint16:
		return float64(x), true
	case uint32:
		return float64(x), true
	case uint64:
		return float64(x), true
	case float32:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// appendScalar appends the JSON of a property value: a string, number or
// boolean (Cosmos DB's graph stores no other property values).
func appendScalar(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case string:
		return appendJSONString(dst, x), nil
	case lang.UUID:
		return appendJSONString(dst, string(x)), nil
	case bool:
		return strconv.AppendBool(dst, x), nil
	case int:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int8, int16, int32, int64:
		return strconv.AppendInt(dst, signedInt(x), 10), nil
	case uint8, uint16, uint32:
		f, _ := toFloat(x)
		return strconv.AppendUint(dst, uint64(f), 10), nil
	case uint64:
		return strconv.AppendUint(dst, x, 10), nil
	case float32, float64:
		f, _ := toFloat(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("%w: a property value cannot be %v (JSON has no such number)", ErrInvalid, f)
		}
		if f == math.Trunc(f) && math.Abs(f) < 1e21 {
			// Whole floats keep a fraction so that they read back as
			// floats: 2.0, not 2.
			return strconv.AppendFloat(dst, f, 'f', 1, 64), nil
		}
		return strconv.AppendFloat(dst, f, 'g', -1, 64), nil
	case nil:
		return nil, fmt.Errorf("%w: a property value cannot be null", ErrInvalid)
	case time.Time:
		return nil, fmt.Errorf("%w: a property value cannot be a date; store it as a string or a number", ErrInvalid)
	}
	return nil, fmt.Errorf("%w: a property value must be a string, number or boolean, not %T", ErrInvalid, v)
}

func signedInt(v any) int64 {
	switch x := v.(type) {
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case int64:
		return x
	}
	return 0
}

func appendJSONString(dst []byte, s string) []byte {
	b, _ := json.Marshal(s) // a string always marshals
	return append(dst, b...)
}

// marshalValue is appendScalar alone, for query parameters.
func marshalValue(v any) ([]byte, error) {
	return appendScalar(nil, v)
}

// checkName checks a property key.
func (s *Store) checkName(name, what string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: a %s key cannot be empty", ErrInvalid, what)
	case name == fID || name == fLabel:
		return fmt.Errorf("%w: %q is not a %s key: it names the element's T.%s", ErrInvalid, name, what, name)
	case reserved(name):
		return fmt.Errorf("%w: %q is reserved by the graph's stored form and cannot be a %s key", ErrInvalid, name, what)
	}
	return nil
}

// vertexPK returns the partition key value of a vertex: its PartitionKey,
// or the value of its partition key property.
func (s *Store) vertexPK(v *graph.Vertex) (any, error) {
	pk := v.PartitionKey
	if pk == nil {
		if ps := v.Properties[s.pk]; len(ps) > 0 {
			pk = ps[0].Value
		}
	}
	if pk == nil {
		return nil, fmt.Errorf("%w: the vertex %q has no value for the partition key property %q", ErrInvalid, v.ID, s.pk)
	}
	if ps := v.Properties[s.pk]; len(ps) > 1 {
		return nil, fmt.Errorf("%w: the partition key property %q has one value, not %d", ErrInvalid, s.pk, len(ps))
	}
	if _, err := component(pk); err != nil {
		return nil, err
	}
	return pk, nil
}

// encodeVertex returns the stored form of a vertex:
//
//	{"id":…,"label":…,"<pk>":<value>,"<key>":[{"id":…,"_value":…,"_meta":{…}},…],…}
//
// It fills in the ids of the vertex and of its properties where they are
// empty.
func (s *Store) encodeVertex(v *graph.Vertex) ([]byte, any, error) {
	pk, err := s.vertexPK(v)
	if err != nil {
		return nil, nil, err
	}
	if v.ID == "" {
		v.ID = newGUID()
	}
	if v.Label == "" {
		v.Label = "vertex"
	}
	v.PartitionKey = pk
	b := []byte(`{"id":`)
	b = appendJSONString(b, v.ID)
	b = append(b, `,"label":`...)
	b = appendJSONString(b, v.Label)
	b = append(b, ',')
	b = appendJSONString(b, s.pk)
	b = append(b, ':')
	if b, err = appendScalar(b, pk); err != nil {
		return nil, nil, err
	}
	whole := false
	for _, key := range orderedKeys(v.Keys, v.Properties) {
		if key == s.pk {
			if ps := v.Properties[key]; len(ps) == 1 {
				if same, _ := sameKey(ps[0].Value, pk); !same {
					return nil, nil, fmt.Errorf("%w: the vertex's partition key property %q is %v but its partition key is %v", ErrInvalid, key, ps[0].Value, pk)
				}
			}
			continue
		}
		if err := s.checkName(key, "vertex property"); err != nil {
			return nil, nil, err
		}
		ps := v.Properties[key]
		if len(ps) == 0 {
			continue
		}
		b = append(b, ',')
		b = appendJSONString(b, key)
		b = append(b, ":["...)
		for i, p := range ps {
			if p == nil {
				return nil, nil, fmt.Errorf("%w: the vertex property %q has a nil value", ErrInvalid, key)
			}
			if p.ID == "" {
				p.ID = newGUID()
			}
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"id":`...)
			b = appendJSONString(b, p.ID)
			b = append(b, `,"_value":`...)
			whole = whole || isWholeFloat(p.Value)
			if b, err = appendScalar(b, p.Value); err != nil {
				return nil, nil, fmt.Errorf("vertex property %q: %w", key, err)
			}
			if len(p.Meta) > 0 {
				b = append(b, `,"_meta":{`...)
				for j, mk := range slices.Sorted(maps.Keys(p.Meta)) {
					if mk == "" {
						return nil, nil, fmt.Errorf("%w: a meta-property key cannot be empty", ErrInvalid)
					}
					if j > 0 {
						b = append(b, ',')
					}
					b = appendJSONString(b, mk)
					b = append(b, ':')
					whole = whole || isWholeFloat(p.Meta[mk])
					if b, err = appendScalar(b, p.Meta[mk]); err != nil {
						return nil, nil, fmt.Errorf("meta-property %q of %q: %w", mk, key, err)
					}
				}
				b = append(b, '}')
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if whole {
		return append(b, wholeFloatsMarker...), pk, nil
	}
	return append(b, '}'), pk, nil
}

// encodeEdge returns the stored form of an edge, in its source vertex's
// logical partition:
//
//	{"id":…,"label":…,"_isEdge":true,"_vertexId":…,"_vertexLabel":…,"_sink":…,
//	 "_sinkLabel":…,"_sinkPartition":…,"<pk>":<source's key>,"<key>":<value>,…}
func (s *Store) encodeEdge(e *graph.Edge) ([]byte, any, error) {
	if e.Out.ID == "" || e.In.ID == "" {
		return nil, nil, fmt.Errorf("%w: an edge needs both its vertices' ids", ErrInvalid)
	}
	pk := e.Out.PartitionKey
	if pk == nil {
		return nil, nil, fmt.Errorf("%w: the edge's source vertex %q has no partition key value", ErrInvalid, e.Out.ID)
	}
	if _, err := component(pk); err != nil {
		return nil, nil, err
	}
	if e.In.PartitionKey == nil {
		return nil, nil, fmt.Errorf("%w: the edge's target vertex %q has no partition key value", ErrInvalid, e.In.ID)
	}
	if e.Label == "" {
		return nil, nil, fmt.Errorf("%w: an edge needs a label", ErrInvalid)
	}
	if e.ID == "" {
		e.ID = newGUID()
	}
	b := []byte(`{"id":`)
	b = appendJSONString(b, e.ID)
	b = append(b, `,"label":`...)
	b = appendJSONString(b, e.Label)
	b = append(b, `,"_isEdge":true,"_vertexId":`...)
	b = appendJSONString(b, e.Out.ID)
	b = append(b, `,"_vertexLabel":`...)
	b = appendJSONString(b, e.Out.Label)
	b = append(b, `,"_sink":`...)
	b = appendJSONString(b, e.In.ID)
	b = append(b, `,"_sinkLabel":`...)
	b = appendJSONString(b, e.In.Label)
	b = append(b, `,"_sinkPartition":`...)
	var err error
	if b, err = appendScalar(b, e.In.PartitionKey); err != nil {
		return nil, nil, fmt.Errorf("the edge's target partition key: %w", err)
	}
	b = append(b, ',')
	b = appendJSONString(b, s.pk)
	b = append(b, ':')
	if b, err = appendScalar(b, pk); err != nil {
		return nil, nil, err
	}
	whole := false
	for _, key := range orderedKeys(e.Keys, e.Properties) {
		if key == s.pk {
			return nil, nil, fmt.Errorf("%w: an edge property cannot be named %q: the edge stores its source vertex's partition key there", ErrInvalid, key)
		}
		if err := s.checkName(key, "edge property"); err != nil {
			return nil, nil, err
		}
		b = append(b, ',')
		b = appendJSONString(b, key)
		b = append(b, ':')
		whole = whole || isWholeFloat(e.Properties[key])
		if b, err = appendScalar(b, e.Properties[key]); err != nil {
			return nil, nil, fmt.Errorf("edge property %q: %w", key, err)
		}
	}
	if whole {
		return append(b, wholeFloatsMarker...), pk, nil
	}
	return append(b, '}'), pk, nil
}

// orderedKeys returns keys, then the keys of props that keys lacks
// (sorted), without duplicates or keys that props lacks.
func orderedKeys[V any](keys []string, props map[string]V) []string {
	out := make([]string, 0, len(props))
	seen := make(map[string]bool, len(props))
	for _, k := range keys {
		if _, ok := props[k]; ok && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	var rest []string
	for k := range props {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	sortStrings(rest)
	return append(out, rest...)
}

// sameKey reports whether two partition key values are the same key.
func sameKey(a, b any) (bool, error) {
	x, err := keyText(a)
	if err != nil {
		return false, err
	}
	y, err := keyText(b)
	if err != nil {
		return false, err
	}
	return x == y, nil
}

// member is one top-level member of a stored document, in order.
type member struct {
	name string
	raw  json.RawMessage
}

// members splits a stored document into its top-level members in order.
func members(doc []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := t.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("not a JSON object")
	}
	var out []member
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name, ok := t.(string)
		if !ok {
			return nil, fmt.Errorf("member name is not a string")
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		out = append(out, member{name, raw})
	}
	if _, err := dec.Token(); err != nil && err != io.EOF {
		return nil, err
	}
	return out, nil
}

// decodeValue decodes a stored JSON value: strings, booleans, null;
// integers as int64 (when they fit), other numbers as float64; arrays as
// []any and objects as *graph.Map (which the graph never writes, but a
// document written through another API may hold).
func decodeValue(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return convert(v, 0), nil
}

func convert(v any, depth int) any {
	switch x := v.(type) {
	case json.Number:
		return number(string(x))
	case []any:
		if depth > maxValueDepth {
			return nil
		}
		for i := range x {
			x[i] = convert(x[i], depth+1)
		}
		return x
	case map[string]any:
		if depth > maxValueDepth {
			return nil
		}
		m := &graph.Map{}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			m.Entries = append(m.Entries, graph.Entry{Key: k, Value: convert(x[k], depth+1)})
		}
		return m
	}
	return v
}

// number reads a JSON number: an integer literal that fits is an int64,
// anything else a float64.
func number(s string) any {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i
	}
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

// stored is a decoded document: a vertex or an edge, and its etag.
type stored struct {
	vertex *graph.Vertex
	edge   *graph.Edge
	etag   string
	size   int
}

// decode reads a stored document as a vertex or an edge.
func (s *Store) decode(doc []byte) (*stored, error) {
	ms, err := members(doc)
	if err != nil {
		return nil, fmt.Errorf("%w: a stored graph element is not a JSON object: %v", ErrInvalid, err)
	}
	out := &stored{size: len(doc)}
	isEdge := false
	for _, m := range ms {
		if m.name == fIsEdge {
			var b bool
			if json.Unmarshal(m.raw, &b) == nil && b {
				isEdge = true
			}
		}
	}
	str := func(raw []byte) string {
		var x string
		if json.Unmarshal(raw, &x) != nil {
			return string(raw)
		}
		return x
	}
	if isEdge {
		e := &graph.Edge{Properties: map[string]any{}}
		for _, m := range ms {
			switch m.name {
			case fID:
				e.ID = str(m.raw)
			case fLabel:
				e.Label = str(m.raw)
			case fVertexID:
				e.Out.ID = str(m.raw)
			case fVertexLabel:
				e.Out.Label = str(m.raw)
			case fSink:
				e.In.ID = str(m.raw)
			case fSinkLabel:
				e.In.Label = str(m.raw)
			case fSinkPart:
				if e.In.PartitionKey, err = decodeValue(m.raw); err != nil {
					return nil, err
				}
			case s.pk:
				if e.Out.PartitionKey, err = decodeValue(m.raw); err != nil {
					return nil, err
				}
			case fEtag:
				out.etag = str(m.raw)
			default:
				if reserved(m.name) {
					continue
				}
				v, err := decodeValue(m.raw)
				if err != nil {
					return nil, err
				}
				if _, dup := e.Properties[m.name]; !dup {
					e.Keys = append(e.Keys, m.name)
				}
				e.Properties[m.name] = v
			}
		}
		out.edge = e
		return out, nil
	}
	v := &graph.Vertex{Properties: map[string][]*graph.VertexProperty{}}
	for _, m := range ms {
		switch m.name {
		case fID:
			v.ID = str(m.raw)
			continue
		case fLabel:
			v.Label = str(m.raw)
			continue
		case fEtag:
			out.etag = str(m.raw)
			continue
		}
		if reserved(m.name) {
			continue
		}
		if m.name == s.pk {
			pk, err := decodeValue(m.raw)
			if err != nil {
				return nil, err
			}
			v.PartitionKey = pk
			continue
		}
		ps, err := decodeProperty(m.name, m.raw)
		if err != nil {
			return nil, err
		}
		if _, dup := v.Properties[m.name]; !dup {
			v.Keys = append(v.Keys, m.name)
		}
		for _, p := range ps {
			p.Vertex = v
		}
		v.Properties[m.name] = append(v.Properties[m.name], ps...)
	}
	for _, ps := range v.Properties {
		for _, p := range ps {
			if p.ID == "" {
				p.ID = v.ID + "|" + p.Key // a flat value: see decodeProperty
			}
		}
	}
	if v.PartitionKey != nil {
		// The partition key is a property like any other to a traversal;
		// Cosmos DB stores it flat, and gives it the id "<vertex id>|<key>".
		if _, dup := v.Properties[s.pk]; !dup {
			v.Keys = append(v.Keys, s.pk)
		}
		v.Properties[s.pk] = []*graph.VertexProperty{{ID: v.ID + "|" + s.pk, Key: s.pk, Value: v.PartitionKey, Vertex: v}}
	}
	out.vertex = v
	return out, nil
}

// decodeProperty reads a vertex property's stored values: the array of
// {"id","_value","_meta"} objects the graph writes, or a flat value (as
// Cosmos DB's bulk importer writes with flat properties, or a document
// written through another API), one value without an id, to which decode
// gives "<vertex id>|<key>" as Cosmos DB gives the partition key's.
func decodeProperty(key string, raw []byte) ([]*graph.VertexProperty, error) {
	var arr []json.RawMessage
	if json.Unmarshal(raw, &arr) == nil {
		out := make([]*graph.VertexProperty, 0, len(arr))
		for _, el := range arr {
			var obj struct {
				ID    json.RawMessage            `json:"id"`
				Value json.RawMessage            `json:"_value"`
				Meta  map[string]json.RawMessage `json:"_meta"`
			}
			if json.Unmarshal(el, &obj) != nil || obj.Value == nil {
				v, err := decodeValue(el)
				if err != nil {
					return nil, err
				}
				out = append(out, &graph.VertexProperty{Key: key, Value: v})
				continue
			}
			p := &graph.VertexProperty{Key: key}
			if err := json.Unmarshal(obj.ID, &p.ID); err != nil {
				p.ID = string(obj.ID)
			}
			v, err := decodeValue(obj.Value)
			if err != nil {
				return nil, err
			}
			p.Value = v
			if len(obj.Meta) > 0 {
				p.Meta = make(map[string]any, len(obj.Meta))
				for k, mr := range obj.Meta {
					mv, err := decodeValue(mr)
					if err != nil {
						return nil, err
					}
					p.Meta[k] = mv
				}
			}
			out = append(out, p)
		}
		return out, nil
	}
	v, err := decodeValue(raw)
	if err != nil {
		return nil, err
	}
	return []*graph.VertexProperty{{Key: key, Value: v}}, nil
}
