package gio

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/parsecdb/parsec/internal/api/gremlin/lang"
)

// GraphBinary 1.0 type codes (TinkerPop docs/src/dev/io/graphbinary.asciidoc).
const (
	gbCustom            = 0x00
	gbInt               = 0x01
	gbLong              = 0x02
	gbString            = 0x03
	gbDate              = 0x04
	gbTimestamp         = 0x05
	gbClass             = 0x06
	gbDouble            = 0x07
	gbFloat             = 0x08
	gbList              = 0x09
	gbMap               = 0x0a
	gbSet               = 0x0b
	gbUUID              = 0x0c
	gbEdge              = 0x0d
	gbPath              = 0x0e
	gbProperty          = 0x0f
	gbGraph             = 0x10
	gbVertex            = 0x11
	gbVertexProperty    = 0x12
	gbBarrier           = 0x13
	gbBinding           = 0x14
	gbBytecode          = 0x15
	gbCardinality       = 0x16
	gbColumn            = 0x17
	gbDirection         = 0x18
	gbOperator          = 0x19
	gbOrder             = 0x1a
	gbPick              = 0x1b
	gbPop               = 0x1c
	gbLambda            = 0x1d
	gbP                 = 0x1e
	gbScope             = 0x1f
	gbT                 = 0x20
	gbTraverser         = 0x21
	gbBigDecimal        = 0x22
	gbBigInteger        = 0x23
	gbByte              = 0x24
	gbByteBuffer        = 0x25
	gbShort             = 0x26
	gbBoolean           = 0x27
	gbTextP             = 0x28
	gbTraversalStrategy = 0x29
	gbBulkSet           = 0x2a
	gbTree              = 0x2b
	gbMetrics           = 0x2c
	gbTraversalMetrics  = 0x2d
	gbMerge             = 0x2e
	gbDT                = 0x2f
	gbGType             = 0x30
	gbChar              = 0x80
	gbDuration          = 0x81
	gbOffsetDateTime    = 0x88
	gbUnspecifiedNull   = 0xfe
)

// gbEnumTypes maps an enum type code to the lang.Token type name.
var gbEnumTypes = map[byte]string{
	gbBarrier:     "Barrier",
	gbCardinality: "Cardinality",
	gbColumn:      "Column",
	gbDirection:   "Direction",
	gbOperator:    "Operator",
	gbOrder:       "Order",
	gbPick:        "Pick",
	gbPop:         "Pop",
	gbScope:       "Scope",
	gbT:           "T",
	gbMerge:       "Merge",
	gbDT:          "DT",
	gbGType:       "GType",
}

var gbTypeNames = map[byte]string{
	gbCustom: "Custom", gbInt: "Int", gbLong: "Long", gbString: "String", gbDate: "Date",
	gbTimestamp: "Timestamp", gbClass: "Class", gbDouble: "Double", gbFloat: "Float",
	gbList: "List", gbMap: "Map", gbSet: "Set", gbUUID: "UUID", gbEdge: "Edge", gbPath: "Path",
	gbProperty: "Property", gbGraph: "Graph", gbVertex: "Vertex", gbVertexProperty: "VertexProperty",
	gbBinding: "Binding", gbBytecode: "Bytecode", gbLambda: "Lambda", gbP: "P",
	gbTraverser: "Traverser", gbBigDecimal: "BigDecimal", gbBigInteger: "BigInteger",
	gbByte: "Byte", gbByteBuffer: "ByteBuffer", gbShort: "Short", gbBoolean: "Boolean",
	gbTextP: "TextP", gbTraversalStrategy: "TraversalStrategy", gbBulkSet: "BulkSet",
	gbTree: "Tree", gbMetrics: "Metrics", gbTraversalMetrics: "TraversalMetrics",
	gbChar: "Char", gbDuration: "Duration", gbOffsetDateTime: "OffsetDateTime",
	gbUnspecifiedNull: "UnspecifiedNull",
}

func gbTypeName(code byte) string {
	if n, ok := gbTypeNames[code]; ok {
		return n
	}
	if n, ok := gbEnumTypes[code]; ok {
		return n
	}
	return fmt.Sprintf("0x%02x", code)
}

const gbVersion = 0x81

var errTruncated = errors.New("truncated GraphBinary data")

type binReader struct {
	b     []byte
	pos   int
	lim   Limits
	depth int
}

func (r *binReader) need(n int) error {
	if n < 0 || len(r.b)-r.pos < n {
		return fmt.Errorf("%w at offset %d", errTruncated, r.pos)
	}
	return nil
}

func (r *binReader) u8() (byte, error) {
	if err := r.need(1); err != nil {
		return 0, err
	}
	c := r.b[r.pos]
	r.pos++
	return c, nil
}

func (r *binReader) i32() (int32, error) {
	if err := r.need(4); err != nil {
		return 0, err
	}
	v := int32(binary.BigEndian.Uint32(r.b[r.pos:]))
	r.pos += 4
	return v, nil
}

func (r *binReader) i64() (int64, error) {
	if err := r.need(8); err != nil {
		return 0, err
	}
	v := int64(binary.BigEndian.Uint64(r.b[r.pos:]))
	r.pos += 8
	return v, nil
}

func (r *binReader) bytes(n int) ([]byte, error) {
	if err := r.need(n); err != nil {
		return nil, err
	}
	v := r.b[r.pos : r.pos+n]
	r.pos += n
	return v, nil
}

// count reads a collection length: not negative, within MaxItems, and no
// more than the bytes left (every item takes at least one byte), so that a
// forged length cannot make the reader allocate or loop beyond the input.
func (r *binReader) count(what string) (int, error) {
	n, err := r.i32()
	if err != nil {
		return 0, err
	}
	if n < 0 {
		return 0, fmt.Errorf("negative %s length %d", what, n)
	}
	if int(n) > r.lim.MaxItems {
		return 0, fmt.Errorf("%s of %d items exceeds the limit of %d", what, n, r.lim.MaxItems)
	}
	if int(n) > len(r.b)-r.pos {
		return 0, fmt.Errorf("%w: %s claims %d items with %d bytes left", errTruncated, what, n, len(r.b)-r.pos)
	}
	return int(n), nil
}

func (r *binReader) str() (string, error) {
	n, err := r.i32()
	if err != nil {
		return "", err
	}
	if n < 0 {
		return "", fmt.Errorf("negative string length %d", n)
	}
	b, err := r.bytes(int(n))
	if err != nil {
		return "", err
	}
	if !utf8.Valid(b) {
		return "", errors.New("string is not valid UTF-8")
	}
	return string(b), nil
}

func (r *binReader) enter() error {
	r.depth++
	if r.depth > r.lim.MaxDepth {
		return fmt.Errorf("values nested deeper than %d", r.lim.MaxDepth)
	}
	return nil
}

func (r *binReader) leave() { r.depth-- }

// value reads a fully qualified value: {type_code}{type_info}{value_flag}{value}.
func (r *binReader) value() (any, error) {
	code, err := r.u8()
	if err != nil {
		return nil, err
	}
	if code == gbCustom {
		return nil, errors.New("GraphBinary custom types are not supported")
	}
	flag, err := r.u8()
	if err != nil {
		return nil, err
	}
	switch flag {
	case 0x00:
	case 0x01:
		if _, ok := gbTypeNames[code]; !ok {
			if _, ok := gbEnumTypes[code]; !ok {
				return nil, fmt.Errorf("unknown GraphBinary type code 0x%02x", code)
			}
		}
		return nil, nil
	default:
		return nil, fmt.Errorf("invalid value flag 0x%02x for type %s", flag, gbTypeName(code))
	}
	if code == gbUnspecifiedNull {
		return nil, errors.New("unspecified null with a value flag other than null")
	}
	return r.bare(code)
}

// bare reads the value of a type after its type code and flag.
func (r *binReader) bare(code byte) (any, error) {
	switch code {
	case gbInt:
		return r.i32()
	case gbLong:
		return r.i64()
	case gbString:
		return r.str()
	case gbDate, gbTimestamp:
		ms, err := r.i64()
		if err != nil {
			return nil, err
		}
		return time.UnixMilli(ms).UTC(), nil
	case gbDouble:
		v, err := r.i64()
		return math.Float64frombits(uint64(v)), err
	case gbFloat:
		v, err := r.i32()
		return math.Float32frombits(uint32(v)), err
	case gbBoolean:
		c, err := r.u8()
		if err != nil {
			return nil, err
		}
		if c > 1 {
			return nil, fmt.Errorf("invalid boolean byte 0x%02x", c)
		}
		return c == 1, nil
	case gbByte:
		c, err := r.u8()
		return int32(int8(c)), err
	case gbShort:
		b, err := r.bytes(2)
		if err != nil {
			return nil, err
		}
		return int32(int16(binary.BigEndian.Uint16(b))), nil
	case gbChar:
		c, err := r.u8()
		if err != nil {
			return nil, err
		}
		n := 1
		switch {
		case c&0xe0 == 0xc0:
			n = 2
		case c&0xf0 == 0xe0:
			n = 3
		case c&0xf8 == 0xf0:
			n = 4
		}
		rest, err := r.bytes(n - 1)
		if err != nil {
			return nil, err
		}
		s := string(append([]byte{c}, rest...))
		if !utf8.ValidString(s) {
			return nil, errors.New("char is not valid UTF-8")
		}
		return s, nil
	case gbUUID:
		b, err := r.bytes(16)
		if err != nil {
			return nil, err
		}
		return lang.UUID(uuidString(b)), nil
	case gbBigInteger:
		return r.bigInt()
	case gbBigDecimal:
		scale, err := r.i32()
		if err != nil {
			return nil, err
		}
		unscaled, err := r.bigInt()
		if err != nil {
			return nil, err
		}
		return bigDecimal(unscaled, scale)
	case gbOffsetDateTime:
		return r.offsetDateTime()
	case gbList, gbSet:
		if err := r.enter(); err != nil {
			return nil, err
		}
		defer r.leave()
		n, err := r.count(gbTypeName(code))
		if err != nil {
			return nil, err
		}
		items := make([]any, 0, n)
		for i := 0; i < n; i++ {
			v, err := r.value()
			if err != nil {
				return nil, err
			}
			items = append(items, v)
		}
		if code == gbSet {
			return dedupSet(items), nil
		}
		return items, nil
	case gbMap:
		if err := r.enter(); err != nil {
			return nil, err
		}
		defer r.leave()
		n, err := r.count("Map")
		if err != nil {
			return nil, err
		}
		m := &lang.Map{Entries: make([]lang.MapEntry, 0, n)}
		for i := 0; i < n; i++ {
			k, err := r.value()
			if err != nil {
				return nil, err
			}
			v, err := r.value()
			if err != nil {
				return nil, err
			}
			m.Entries = append(m.Entries, lang.MapEntry{Key: k, Value: v})
		}
		return m, nil
	case gbBytecode:
		if err := r.enter(); err != nil {
			return nil, err
		}
		defer r.leave()
		steps, err := r.instructions()
		if err != nil {
			return nil, err
		}
		sources, err := r.instructions()
		if err != nil {
			return nil, err
		}
		return &lang.Traversal{Source: sources, Steps: steps, Anonymous: true}, nil
	case gbP, gbTextP:
		if err := r.enter(); err != nil {
			return nil, err
		}
		defer r.leave()
		op, err := r.str()
		if err != nil {
			return nil, err
		}
		n, err := r.count("predicate arguments")
		if err != nil {
			return nil, err
		}
		args := make([]any, 0, n)
		for i := 0; i < n; i++ {
			v, err := r.value()
			if err != nil {
				return nil, err
			}
			args = append(args, v)
		}
		return makeP(op, args)
	case gbBinding:
		if _, err := r.str(); err != nil {
			return nil, err
		}
		if err := r.enter(); err != nil {
			return nil, err
		}
		defer r.leave()
		return r.value()
	case gbVertex:
		// A vertex given as a step argument (g.V(v)) stands for its id.
		if err := r.enter(); err != nil {
			return nil, err
		}
		defer r.leave()
		id, err := r.value()
		if err != nil {
			return nil, err
		}
		if _, err := r.str(); err != nil {
			return nil, err
		}
		if _, err := r.value(); err != nil {
			return nil, err
		}
		return id, nil
	case gbEdge:
		if err := r.enter(); err != nil {
			return nil, err
		}
		defer r.leave()
		id, err := r.value()
		if err != nil {
			return nil, err
		}
		if _, err := r.str(); err != nil {
			return nil, err
		}
		for i := 0; i < 2; i++ { // in vertex, out vertex: {id}{label}
			if _, err := r.value(); err != nil {
				return nil, err
			}
			if _, err := r.str(); err != nil {
				return nil, err
			}
		}
		for i := 0; i < 2; i++ { // parent, properties
			if _, err := r.value(); err != nil {
				return nil, err
			}
		}
		return id, nil
	}
	if name, ok := gbEnumTypes[code]; ok {
		if err := r.enter(); err != nil {
			return nil, err
		}
		defer r.leave()
		v, err := r.value()
		if err != nil {
			return nil, err
		}
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("%s enum value is %T, not a string", name, v)
		}
		return canonicalToken(name, s), nil
	}
	if code == gbLambda {
		return nil, errors.New("lambdas are not supported")
	}
	return nil, fmt.Errorf("unsupported GraphBinary type %s in a request", gbTypeName(code))
}

// instructions reads {length}{name}{values_length}{value_0}...
func (r *binReader) instructions() ([]lang.Step, error) {
	n, err := r.count("bytecode instructions")
	if err != nil {
		return nil, err
	}
	var steps []lang.Step
	for i := 0; i < n; i++ {
		name, err := r.str()
		if err != nil {
			return nil, err
		}
		if name == "" {
			return nil, errors.New("bytecode instruction without a name")
		}
		m, err := r.count("instruction arguments")
		if err != nil {
			return nil, err
		}
		st := lang.Step{Name: name}
		for j := 0; j < m; j++ {
			v, err := r.value()
			if err != nil {
				return nil, fmt.Errorf("argument %d of %s: %w", j, name, err)
			}
			st.Args = append(st.Args, v)
		}
		steps = append(steps, st)
	}
	return steps, nil
}

const maxBigIntBytes = 1024

func (r *binReader) bigInt() (*big.Int, error) {
	n, err := r.i32()
	if err != nil {
		return nil, err
	}
	if n < 0 || n > maxBigIntBytes {
		return nil, fmt.Errorf("BigInteger length %d out of range", n)
	}
	b, err := r.bytes(int(n))
	if err != nil {
		return nil, err
	}
	v := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 { // two's complement negative
		v.Sub(v, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return v, nil
}

const maxDecimalScale = 4096

func bigDecimal(unscaled *big.Int, scale int32) (*big.Float, error) {
	if scale > maxDecimalScale || scale < -maxDecimalScale {
		return nil, fmt.Errorf("BigDecimal scale %d out of range", scale)
	}
	rat := new(big.Rat).SetInt(unscaled)
	pow := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs32(scale))), nil)
	if scale > 0 {
		rat.Quo(rat, new(big.Rat).SetInt(pow))
	} else {
		rat.Mul(rat, new(big.Rat).SetInt(pow))
	}
	f := new(big.Float).SetPrec(256)
	f.SetRat(rat)
	return f, nil
}

func abs32(v int32) int32 {
	if v < 0 {
		return -v
	}
	return v
}

func (r *binReader) offsetDateTime() (time.Time, error) {
	year, err := r.i32()
	if err != nil {
		return time.Time{}, err
	}
	month, err := r.u8()
	if err != nil {
		return time.Time{}, err
	}
	day, err := r.u8()
	if err != nil {
		return time.Time{}, err
	}
	nanos, err := r.i64()
	if err != nil {
		return time.Time{}, err
	}
	offset, err := r.i32()
	if err != nil {
		return time.Time{}, err
	}
	if month < 1 || month > 12 || day < 1 || day > 31 || nanos < 0 || nanos >= 24*int64(time.Hour) ||
		offset < -18*3600 || offset > 18*3600 || year < -999999 || year > 999999 {
		return time.Time{}, errors.New("OffsetDateTime out of range")
	}
	loc := time.FixedZone("", int(offset))
	return time.Date(int(year), time.Month(month), int(day), 0, 0, 0, 0, loc).Add(time.Duration(nanos)), nil
}

// decodeBinaryRequest reads {version}{request_id}{op}{processor}{args}.
func decodeBinaryRequest(body []byte, lim Limits) (req *Request, err error) {
	r := &binReader{b: body, lim: lim}
	fail := func(e error) (*Request, error) {
		id := ""
		if req != nil {
			id = req.ID
		}
		return nil, &DecodeError{RequestID: id, Err: e}
	}
	v, err := r.u8()
	if err != nil {
		return fail(err)
	}
	if v&0x80 == 0 { // Gremlin Server checks only the high bit (RequestMessageSerializer)
		return fail(fmt.Errorf("unsupported GraphBinary version byte 0x%02x", v))
	}
	idb, err := r.bytes(16)
	if err != nil {
		return fail(err)
	}
	req = &Request{ID: uuidString(idb)}
	if req.Op, err = r.str(); err != nil {
		return fail(fmt.Errorf("op: %w", err))
	}
	if req.Processor, err = r.str(); err != nil {
		return fail(fmt.Errorf("processor: %w", err))
	}
	n, err := r.count("args")
	if err != nil {
		return fail(err)
	}
	req.Args = make(map[string]any, n)
	for i := 0; i < n; i++ {
		k, err := r.value()
		if err != nil {
			return fail(fmt.Errorf("args key: %w", err))
		}
		ks, ok := k.(string)
		if !ok {
			return fail(fmt.Errorf("args key is %s, not a string", typeName(k)))
		}
		val, err := r.value()
		if err != nil {
			return fail(fmt.Errorf("args %q: %w", ks, err))
		}
		req.Args[ks] = val
	}
	if r.pos != len(body) {
		return fail(fmt.Errorf("%d bytes after the request", len(body)-r.pos))
	}
	if err := finishArgs(req); err != nil {
		return fail(err)
	}
	return req, nil
}

// finishArgs normalizes the protocol-level arguments: bindings and aliases
// become map[string]any, and the traversal of a bytecode request is marked
// as rooted at g.
func finishArgs(req *Request) error {
	for _, key := range []string{"bindings", "aliases"} {
		v, ok := req.Args[key]
		if !ok || v == nil {
			continue
		}
		switch m := v.(type) {
		case *lang.Map:
			out := make(map[string]any, len(m.Entries))
			for _, e := range m.Entries {
				k, ok := e.Key.(string)
				if !ok {
					return fmt.Errorf("%s key is %s, not a string", key, typeName(e.Key))
				}
				out[k] = e.Value
			}
			req.Args[key] = out
		case map[string]any:
		default:
			return fmt.Errorf("%s is %s, not a map", key, typeName(v))
		}
	}
	if g, ok := req.Args["gremlin"]; ok {
		switch t := g.(type) {
		case string:
		case *lang.Traversal:
			t.Anonymous = false
		default:
			return fmt.Errorf("gremlin is %s, neither a script nor bytecode", typeName(g))
		}
	}
	return nil
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case int32, int64:
		return "an integer"
	case float32, float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case lang.Set:
		return "a set"
	case *lang.Map, map[string]any:
		return "a map"
	case *lang.Traversal:
		return "a traversal"
	case lang.P:
		return "a predicate"
	case lang.Token:
		return "an enum"
	case lang.UUID:
		return "a UUID"
	}
	return fmt.Sprintf("%T", v)
}

// makeP builds a predicate from its operator and arguments as the wire
// carries them: within/without arguments are flattened (one list argument
// or several values give the same P), and/or/not take predicates.
func makeP(op string, args []any) (lang.P, error) {
	if op == "" {
		return lang.P{}, errors.New("predicate without an operator")
	}
	switch op {
	case "within", "without":
		if len(args) == 1 {
			switch l := args[0].(type) {
			case []any:
				args = l
			case lang.Set:
				args = []any(l)
			}
		}
	case "and", "or":
		if len(args) < 2 {
			return lang.P{}, fmt.Errorf("predicate %s needs two predicates, got %d arguments", op, len(args))
		}
		fallthrough
	case "not":
		if op == "not" && len(args) != 1 {
			return lang.P{}, fmt.Errorf("predicate not needs one predicate, got %d arguments", len(args))
		}
		for _, a := range args {
			if _, ok := a.(lang.P); !ok {
				return lang.P{}, fmt.Errorf("predicate %s takes predicates, got %s", op, typeName(a))
			}
		}
	}
	if args == nil {
		args = []any{}
	}
	return lang.P{Op: op, Args: args}, nil
}

// dedupSet removes duplicates among comparable scalar elements, keeping
// the first of each.
func dedupSet(items []any) lang.Set {
	seen := make(map[any]bool, len(items))
	out := make(lang.Set, 0, len(items))
	for _, it := range items {
		switch it.(type) {
		case nil, bool, int32, int64, float32, float64, string, lang.UUID, lang.Token:
			if seen[it] {
				continue
			}
			seen[it] = true
		}
		out = append(out, it)
	}
	return out
}

// canonicalToken maps the aliases drivers may send to the names the lang
// parser gives the same constants: Order incr/decr (pre-3.5) are asc/desc,
// Direction from/to are OUT/IN and directions are upper case, GType names
// are upper case.
func canonicalToken(typ, name string) lang.Token {
	switch typ {
	case "Order":
		switch name {
		case "incr":
			name = "asc"
		case "decr":
			name = "desc"
		}
	case "Direction":
		switch name {
		case "from":
			name = "OUT"
		case "to":
			name = "IN"
		default:
			name = strings.ToUpper(name)
		}
	case "GType":
		name = strings.ToUpper(name)
	}
	return lang.Token{Type: typ, Name: name}
}
