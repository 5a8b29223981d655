package gio

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/parsecdb/parsec/internal/api/gremlin/lang"
)

// jsonObject is a JSON object with its keys in the order written (plain
// JSON objects become *lang.Map, whose order the evaluator keeps).
type jsonObject struct {
	keys []string
	vals []any
}

func (o *jsonObject) get(k string) (any, bool) {
	for i, kk := range o.keys {
		if kk == k {
			return o.vals[i], true
		}
	}
	return nil, false
}

// parseJSON reads one JSON document into jsonObject, []any, json.Number,
// string, bool and nil, within the nesting and collection limits.
func parseJSON(body []byte, lim Limits) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	v, err := parseJSONValue(dec, lim, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON document")
	}
	return v, nil
}

func parseJSONValue(dec *json.Decoder, lim Limits, depth int) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			return nil, errors.New("unexpected end of JSON")
		}
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil
	}
	if depth >= lim.MaxDepth {
		return nil, fmt.Errorf("JSON nested deeper than %d", lim.MaxDepth)
	}
	switch d {
	case '[':
		var arr []any
		for dec.More() {
			if len(arr) >= lim.MaxItems {
				return nil, fmt.Errorf("JSON array longer than %d", lim.MaxItems)
			}
			v, err := parseJSONValue(dec, lim, depth+1)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		if _, err := dec.Token(); err != nil {
			return nil, fmt.Errorf("invalid JSON: %w", err)
		}
		if arr == nil {
			arr = []any{}
		}
		return arr, nil
	case '{':
		obj := &jsonObject{}
		for dec.More() {
			if len(obj.keys) >= lim.MaxItems {
				return nil, fmt.Errorf("JSON object with more than %d members", lim.MaxItems)
			}
			kt, err := dec.Token()
			if err != nil {
				return nil, fmt.Errorf("invalid JSON: %w", err)
			}
			k, ok := kt.(string)
			if !ok {
				return nil, errors.New("invalid JSON object key")
			}
			v, err := parseJSONValue(dec, lim, depth+1)
			if err != nil {
				return nil, err
			}
			obj.keys = append(obj.keys, k)
			obj.vals = append(obj.vals, v)
		}
		if _, err := dec.Token(); err != nil {
			return nil, fmt.Errorf("invalid JSON: %w", err)
		}
		return obj, nil
	}
	return nil, fmt.Errorf("invalid JSON delimiter %v", d)
}

// decodeJSONRequest reads a GraphSON request (2.0 or 3.0, typed or not):
// {"requestId": <uuid>, "op": ..., "processor": ..., "args": {...}}.
// requestId may be a string or {"@type":"g:UUID","@value":...} (the
// gremlin-javascript GraphSON writers send the typed form:
// lib/structure/io/graph-serializer.js writeRequest).
func decodeJSONRequest(body []byte, lim Limits) (*Request, error) {
	doc, err := parseJSON(body, lim)
	if err != nil {
		return nil, &DecodeError{Err: err}
	}
	obj, ok := doc.(*jsonObject)
	if !ok {
		return nil, &DecodeError{Err: errors.New("request is not a JSON object")}
	}
	req := &Request{}
	fail := func(e error) (*Request, error) { return nil, &DecodeError{RequestID: req.ID, Err: e} }
	c := &jsonConv{lim: lim}
	rawID, ok := obj.get("requestId")
	if !ok {
		return fail(errors.New("request has no requestId"))
	}
	idv, err := c.value(rawID, 0)
	if err != nil {
		return fail(fmt.Errorf("requestId: %w", err))
	}
	var ids string
	switch x := idv.(type) {
	case string:
		ids = x
	case lang.UUID:
		ids = string(x)
	default:
		return fail(fmt.Errorf("requestId is %s, not a UUID", typeName(idv)))
	}
	if req.ID, err = normalizeUUID(ids); err != nil {
		return fail(fmt.Errorf("requestId: %w", err))
	}
	for _, f := range []struct {
		key string
		dst *string
		req bool
	}{{"op", &req.Op, true}, {"processor", &req.Processor, false}} {
		raw, ok := obj.get(f.key)
		if !ok || raw == nil {
			if f.req {
				return fail(fmt.Errorf("request has no %s", f.key))
			}
			continue
		}
		s, ok := raw.(string)
		if !ok {
			return fail(fmt.Errorf("%s is not a string", f.key))
		}
		*f.dst = s
	}
	req.Args = map[string]any{}
	if raw, ok := obj.get("args"); ok && raw != nil {
		av, err := c.value(raw, 0)
		if err != nil {
			return fail(fmt.Errorf("args: %w", err))
		}
		m, ok := av.(*lang.Map)
		if !ok {
			return fail(fmt.Errorf("args is %s, not a map", typeName(av)))
		}
		for _, e := range m.Entries {
			k, ok := e.Key.(string)
			if !ok {
				return fail(fmt.Errorf("args key is %s, not a string", typeName(e.Key)))
			}
			req.Args[k] = e.Value
		}
	}
	if err := finishArgs(req); err != nil {
		return fail(err)
	}
	return req, nil
}

type jsonConv struct {
	lim Limits
}

// value converts a parsed JSON value to a lang.Value, reading GraphSON
// type wrappers {"@type": ..., "@value": ...}.
func (c *jsonConv) value(v any, depth int) (any, error) {
	if depth > c.lim.MaxDepth {
		return nil, fmt.Errorf("values nested deeper than %d", c.lim.MaxDepth)
	}
	switch x := v.(type) {
	case nil, bool, string:
		return x, nil
	case json.Number:
		return plainNumber(x)
	case []any:
		out := make([]any, len(x))
		for i, it := range x {
			cv, err := c.value(it, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = cv
		}
		return out, nil
	case *jsonObject:
		if t, ok := x.get("@type"); ok {
			ts, ok := t.(string)
			if !ok {
				return nil, errors.New("@type is not a string")
			}
			if len(x.keys) > 2 {
				return nil, fmt.Errorf("typed value %s has members besides @type and @value", ts)
			}
			val, _ := x.get("@value")
			return c.typed(ts, val, depth)
		}
		m := &lang.Map{Entries: make([]lang.MapEntry, len(x.keys))}
		for i, k := range x.keys {
			cv, err := c.value(x.vals[i], depth+1)
			if err != nil {
				return nil, err
			}
			m.Entries[i] = lang.MapEntry{Key: k, Value: cv}
		}
		return m, nil
	}
	return nil, fmt.Errorf("unexpected JSON value %T", v)
}

// plainNumber types an untyped JSON number the way the GraphSON readers
// do: an integer is Int32 when it fits, else Int64 (else BigInteger); a
// number with a fraction or exponent is a Double.
func plainNumber(n json.Number) (any, error) {
	s := string(n)
	if !strings.ContainsAny(s, ".eE") {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			if i >= math.MinInt32 && i <= math.MaxInt32 {
				return int32(i), nil
			}
			return i, nil
		}
		b, ok := new(big.Int).SetString(s, 10)
		if ok && len(s) <= 4096 {
			return b, nil
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, fmt.Errorf("number %s out of range", truncate(s))
	}
	return f, nil
}

var jsonEnumTypes = map[string]string{
	"g:T": "T", "g:Order": "Order", "g:Scope": "Scope", "g:Column": "Column",
	"g:Cardinality": "Cardinality", "g:Pop": "Pop", "g:Operator": "Operator",
	"g:Direction": "Direction", "g:Barrier": "Barrier", "g:Pick": "Pick",
	"g:Merge": "Merge", "g:DT": "DT", "g:GType": "GType",
}

func (c *jsonConv) typed(t string, val any, depth int) (any, error) {
	if name, ok := jsonEnumTypes[t]; ok {
		s, ok := val.(string)
		if !ok {
			return nil, fmt.Errorf("%s value is not a string", t)
		}
		return canonicalToken(name, s), nil
	}
	switch t {
	case "g:Int32", "g:Int16", "gx:Int16", "gx:Byte", "g:Byte":
		n, err := jsonInt(t, val, math.MinInt32, math.MaxInt32)
		return int32(n), err
	case "g:Int64":
		return jsonInt(t, val, math.MinInt64, math.MaxInt64)
	case "g:Double", "g:Float":
		f, err := jsonFloat(t, val)
		if err != nil {
			return nil, err
		}
		if t == "g:Float" {
			return float32(f), nil
		}
		return f, nil
	case "g:UUID":
		s, ok := val.(string)
		if !ok {
			return nil, errors.New("g:UUID value is not a string")
		}
		u, err := normalizeUUID(s)
		if err != nil {
			return nil, err
		}
		return lang.UUID(u), nil
	case "g:Date", "g:Timestamp":
		ms, err := jsonInt(t, val, math.MinInt64, math.MaxInt64)
		if err != nil {
			return nil, err
		}
		return time.UnixMilli(ms).UTC(), nil
	case "gx:OffsetDateTime", "gx:Instant":
		// gremlin-javascript 3.8 writes a Date this way, as
		// Date.toISOString() (type-serializers.js OffsetDateTimeSerializer).
		s, ok := val.(string)
		if !ok {
			return nil, fmt.Errorf("%s value is not a string", t)
		}
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return nil, fmt.Errorf("%s value %q: %w", t, truncate(s), err)
		}
		return tm, nil
	case "gx:BigInteger":
		var s string
		switch x := val.(type) {
		case json.Number:
			s = string(x)
		case string:
			s = x
		}
		if len(s) > 4096 {
			return nil, errors.New("gx:BigInteger too long")
		}
		b, ok := new(big.Int).SetString(s, 10)
		if !ok {
			return nil, fmt.Errorf("gx:BigInteger value %q is not an integer", truncate(s))
		}
		return b, nil
	case "gx:BigDecimal":
		var s string
		switch x := val.(type) {
		case json.Number:
			s = string(x)
		case string:
			s = x
		}
		if len(s) > 4096 {
			return nil, errors.New("gx:BigDecimal too long")
		}
		f, _, err := big.ParseFloat(s, 10, 256, big.ToNearestEven)
		if err != nil {
			return nil, fmt.Errorf("gx:BigDecimal value %q: %w", truncate(s), err)
		}
		return f, nil
	case "g:List", "g:Set":
		arr, ok := val.([]any)
		if !ok {
			return nil, fmt.Errorf("%s value is not an array", t)
		}
		lv, err := c.value(arr, depth+1)
		if err != nil {
			return nil, err
		}
		if t == "g:Set" {
			return dedupSet(lv.([]any)), nil
		}
		return lv, nil
	case "g:Map":
		arr, ok := val.([]any)
		if !ok || len(arr)%2 != 0 {
			return nil, errors.New("g:Map value is not an array of keys and values")
		}
		m := &lang.Map{Entries: make([]lang.MapEntry, 0, len(arr)/2)}
		for i := 0; i < len(arr); i += 2 {
			k, err := c.value(arr[i], depth+1)
			if err != nil {
				return nil, err
			}
			v, err := c.value(arr[i+1], depth+1)
			if err != nil {
				return nil, err
			}
			m.Entries = append(m.Entries, lang.MapEntry{Key: k, Value: v})
		}
		return m, nil
	case "g:Bytecode":
		return c.bytecode(val, depth+1)
	case "g:P", "g:TextP":
		obj, ok := val.(*jsonObject)
		if !ok {
			return nil, fmt.Errorf("%s value is not an object", t)
		}
		opv, _ := obj.get("predicate")
		op, ok := opv.(string)
		if !ok {
			return nil, fmt.Errorf("%s has no predicate name", t)
		}
		raw, _ := obj.get("value")
		v, err := c.value(raw, depth+1)
		if err != nil {
			return nil, err
		}
		return jsonP(op, v)
	case "g:Binding":
		obj, ok := val.(*jsonObject)
		if !ok {
			return nil, errors.New("g:Binding value is not an object")
		}
		raw, _ := obj.get("value")
		return c.value(raw, depth+1)
	case "g:Vertex", "g:Edge", "g:VertexProperty":
		// An element given as a step argument stands for its id.
		obj, ok := val.(*jsonObject)
		if !ok {
			return nil, fmt.Errorf("%s value is not an object", t)
		}
		raw, _ := obj.get("id")
		return c.value(raw, depth+1)
	case "g:Lambda":
		return nil, errors.New("lambdas are not supported")
	}
	return nil, fmt.Errorf("unsupported GraphSON type %q", truncate(t))
}

// jsonP builds a predicate from GraphSON's {"predicate","value"}: value
// is the single argument, or a list of the two arguments of between,
// inside, outside, and, or (gremlin-javascript PSerializer writes
// [value, other] when other is set), or the list of within/without.
func jsonP(op string, v any) (lang.P, error) {
	switch op {
	case "within", "without":
		if l, ok := v.([]any); ok {
			return makeP(op, l)
		}
		if s, ok := v.(lang.Set); ok {
			return makeP(op, []any(s))
		}
		return makeP(op, []any{v})
	case "and", "or", "between", "inside", "outside":
		if l, ok := v.([]any); ok {
			return makeP(op, l)
		}
		return lang.P{}, fmt.Errorf("predicate %s needs a list of arguments", op)
	}
	return makeP(op, []any{v})
}

func (c *jsonConv) bytecode(val any, depth int) (*lang.Traversal, error) {
	if depth > c.lim.MaxDepth {
		return nil, fmt.Errorf("values nested deeper than %d", c.lim.MaxDepth)
	}
	obj, ok := val.(*jsonObject)
	if !ok {
		return nil, errors.New("g:Bytecode value is not an object")
	}
	t := &lang.Traversal{Anonymous: true}
	for i, k := range obj.keys {
		var dst *[]lang.Step
		switch k {
		case "step":
			dst = &t.Steps
		case "source":
			dst = &t.Source
		default:
			return nil, fmt.Errorf("g:Bytecode has an unknown member %q", truncate(k))
		}
		list, ok := obj.vals[i].([]any)
		if !ok {
			return nil, fmt.Errorf("g:Bytecode %s is not an array", k)
		}
		for _, raw := range list {
			inst, ok := raw.([]any)
			if !ok || len(inst) == 0 {
				return nil, fmt.Errorf("g:Bytecode %s instruction is not a non-empty array", k)
			}
			name, ok := inst[0].(string)
			if !ok || name == "" {
				return nil, fmt.Errorf("g:Bytecode %s instruction has no name", k)
			}
			st := lang.Step{Name: name}
			for j, a := range inst[1:] {
				v, err := c.value(a, depth+1)
				if err != nil {
					return nil, fmt.Errorf("argument %d of %s: %w", j, name, err)
				}
				st.Args = append(st.Args, v)
			}
			*dst = append(*dst, st)
		}
	}
	return t, nil
}

func jsonInt(t string, val any, lo, hi int64) (int64, error) {
	n, ok := val.(json.Number)
	if !ok {
		return 0, fmt.Errorf("%s value is not a number", t)
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		// Some writers send integral values as 1.0.
		f, ferr := strconv.ParseFloat(string(n), 64)
		if ferr != nil || f != math.Trunc(f) || f < float64(lo) || f > float64(hi) {
			return 0, fmt.Errorf("%s value %s is not an integer in range", t, truncate(string(n)))
		}
		i = int64(f)
	}
	if i < lo || i > hi {
		return 0, fmt.Errorf("%s value %d out of range", t, i)
	}
	return i, nil
}

func jsonFloat(t string, val any) (float64, error) {
	switch x := val.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return 0, fmt.Errorf("%s value %s: %w", t, truncate(string(x)), err)
		}
		return f, nil
	case string:
		switch x {
		case "NaN":
			return math.NaN(), nil
		case "Infinity":
			return math.Inf(1), nil
		case "-Infinity":
			return math.Inf(-1), nil
		}
	}
	return 0, fmt.Errorf("%s value is not a number", t)
}
