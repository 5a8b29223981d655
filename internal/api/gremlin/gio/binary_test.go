package gio_test

import (
	"encoding/binary"
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/api/gremlin/gio"
	"github.com/parsecdb/parsec/internal/api/gremlin/graph"
	"github.com/parsecdb/parsec/internal/api/gremlin/lang"
)

// gb builds GraphBinary bytes by hand, following
// docs/src/dev/io/graphbinary.asciidoc (TinkerPop 3.8.1).
type gb []byte

func (b gb) u8(c ...byte) gb   { return append(b, c...) }
func (b gb) i32(v int32) gb    { return binary.BigEndian.AppendUint32(b, uint32(v)) }
func (b gb) i64(v int64) gb    { return binary.BigEndian.AppendUint64(b, uint64(v)) }
func (b gb) str(s string) gb   { return append(b.i32(int32(len(s))), s...) }
func (b gb) fq(code byte) gb   { return b.u8(code, 0x00) }
func (b gb) fqStr(s string) gb { return b.fq(0x03).str(s) }
func (b gb) fqInt(v int32) gb  { return b.fq(0x01).i32(v) }

var testID = []byte{0x12, 0x3e, 0x45, 0x67, 0xe8, 0x9b, 0x12, 0xd3, 0xa4, 0x56, 0x42, 0x66, 0x14, 0x17, 0x40, 0x00}

// binReq is a request {0x81}{id}{op}{processor}{args} whose args map
// holds "gremlin" -> the given fully qualified value bytes.
func binReq(op string, gremlin gb) []byte {
	b := gb{0x81}.u8(testID...).str(op).str("traversal").i32(1).fqStr("gremlin")
	return append(b, gremlin...)
}

// bytecode with one step "inject" whose arguments are the given values.
func injectOf(args ...gb) gb {
	b := gb{}.fq(0x15).i32(1).str("inject").i32(int32(len(args)))
	for _, a := range args {
		b = append(b, a...)
	}
	return b.i32(0) // no source instructions
}

func decodeInject(t *testing.T, args ...gb) []lang.Value {
	t.Helper()
	req, err := gio.DecodeRequest(gio.MimeGraphBinary, binReq("bytecode", injectOf(args...)))
	if err != nil {
		t.Fatal(err)
	}
	tr, ok := req.Traversal()
	if !ok || len(tr.Steps) != 1 || tr.Anonymous {
		t.Fatalf("traversal %s", dump(req.Args["gremlin"]))
	}
	return tr.Steps[0].Args
}

func TestBinaryRequestValues(t *testing.T) {
	negBig := gb{}.fq(0x23).i32(2).u8(0xff, 0x00) // -256 in two's complement
	cases := []struct {
		name string
		in   gb
		want any
	}{
		{"int", gb{}.fqInt(-7), int32(-7)},
		{"long", gb{}.fq(0x02).i64(1 << 40), int64(1 << 40)},
		{"double", gb{}.fq(0x07).i64(int64(math.Float64bits(2.5))), 2.5},
		{"float", gb{}.fq(0x08).i32(int32(math.Float32bits(1.5))), float32(1.5)},
		{"short", gb{}.fq(0x26).u8(0xff, 0xfe), int32(-2)},
		{"byte", gb{}.fq(0x24).u8(0x80), int32(-128)},
		{"bool", gb{}.fq(0x27).u8(1), true},
		{"null", gb{}.u8(0xfe, 0x01), nil},
		{"null string", gb{}.u8(0x03, 0x01), nil},
		{"char", gb{}.fq(0x80).u8(0xc3, 0xa9), "é"},
		{"uuid", gb{}.fq(0x0c).u8(testID...), lang.UUID("123e4567-e89b-12d3-a456-426614174000")},
		{"date", gb{}.fq(0x04).i64(1700000000123), time.UnixMilli(1700000000123)},
		{"timestamp", gb{}.fq(0x05).i64(5), time.UnixMilli(5)},
		{"offset date time", gb{}.fq(0x88).i32(2024).u8(2, 29).i64(int64(13*time.Hour + 30*time.Minute)).i32(3600),
			time.Date(2024, 2, 29, 12, 30, 0, 0, time.UTC)},
		{"big integer", negBig, big.NewInt(-256)},
		{"big decimal", gb{}.fq(0x22).i32(2).i32(1).u8(0x7b), bigDec("1.23")},
		{"list", gb{}.fq(0x09).i32(2).fqInt(1).fqStr("a"), []any{int32(1), "a"}},
		{"set dedups", gb{}.fq(0x0b).i32(3).fqInt(1).fqInt(1).fqStr("a"), lang.Set{int32(1), "a"}},
		{"map keeps order", gb{}.fq(0x0a).i32(2).fqStr("z").fqInt(1).fqInt(2).fqStr("b"),
			&lang.Map{Entries: []lang.MapEntry{{Key: "z", Value: int32(1)}, {Key: int32(2), Value: "b"}}}},
		{"binding is its value", gb{}.fq(0x14).str("x").fqInt(9), int32(9)},
		{"T enum", gb{}.fq(0x20).fqStr("id"), lang.Token{Type: "T", Name: "id"}},
		{"Scope enum", gb{}.fq(0x1f).fqStr("local"), lang.Token{Type: "Scope", Name: "local"}},
		{"Direction enum", gb{}.fq(0x18).fqStr("OUT"), lang.Token{Type: "Direction", Name: "OUT"}},
		{"Merge enum", gb{}.fq(0x2e).fqStr("onCreate"), lang.Token{Type: "Merge", Name: "onCreate"}},
		{"P", gb{}.fq(0x1e).str("between").i32(2).fqInt(1).fqInt(5), lang.P{Op: "between", Args: []any{int32(1), int32(5)}}},
		{"within list flattened", gb{}.fq(0x1e).str("within").i32(1).fq(0x09).i32(2).fqStr("a").fqStr("b"),
			lang.P{Op: "within", Args: []any{"a", "b"}}},
		{"within no args", gb{}.fq(0x1e).str("within").i32(0), lang.P{Op: "within", Args: []any{}}},
		{"not", gb{}.fq(0x1e).str("not").i32(1).fq(0x1e).str("eq").i32(1).fqInt(1),
			lang.P{Op: "not", Args: []any{lang.P{Op: "eq", Args: []any{int32(1)}}}}},
		{"TextP", gb{}.fq(0x28).str("containing").i32(1).fqStr("ar"), lang.P{Op: "containing", Args: []any{"ar"}}},
		{"vertex is its id", gb{}.fq(0x11).fqStr("v1").str("person").u8(0xfe, 0x01), "v1"},
		{"nested bytecode", gb{}.fq(0x15).i32(1).str("out").i32(1).fqStr("knows").i32(0),
			&lang.Traversal{Anonymous: true, Steps: []lang.Step{{Name: "out", Args: []any{"knows"}}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := decodeInject(t, c.in)
			if len(got) != 1 || !equalValues(got[0], c.want) {
				t.Fatalf("got %s, want %s", dump(got), dump(c.want))
			}
		})
	}
}

func TestBinaryRequestEnvelope(t *testing.T) {
	// An eval request with bindings and aliases, as gremlin-go writes one
	// (driver/serializer.go buildMessage: args as {length}{key}{value}...).
	b := gb{0x81}.u8(testID...).str("eval").str("").i32(4).
		fqStr("gremlin").fqStr("g.V(x)").
		fqStr("bindings").fq(0x0a).i32(1).fqStr("x").fqInt(1).
		fqStr("aliases").fq(0x0a).i32(1).fqStr("g").fqStr("g").
		fqStr("batchSize").fqInt(64)
	req, err := gio.DecodeRequest(gio.MimeGraphBinary, b)
	if err != nil {
		t.Fatal(err)
	}
	if req.ID != "123e4567-e89b-12d3-a456-426614174000" || req.Op != "eval" || req.Processor != "" {
		t.Fatalf("request %+v", req)
	}
	if sc, ok := req.Script(); !ok || sc != "g.V(x)" {
		t.Fatalf("script %q", sc)
	}
	if !equalValues(req.Bindings(), map[string]any{"x": int32(1)}) || req.Aliases()["g"] != "g" {
		t.Fatalf("bindings %v aliases %v", req.Bindings(), req.Aliases())
	}
	if n, ok, err := req.Int("batchSize"); n != 64 || !ok || err != nil {
		t.Fatalf("batchSize %v %v %v", n, ok, err)
	}
	if _, ok, err := req.Int("evaluationTimeout"); ok || err != nil {
		t.Fatalf("absent evaluationTimeout: %v %v", ok, err)
	}
	if _, _, err := req.Int("gremlin"); err == nil {
		t.Fatal("a string read as an integer")
	}
}

func TestBinaryRequestErrors(t *testing.T) {
	deep := gb{}
	for i := 0; i < 500; i++ {
		deep = deep.fq(0x09).i32(1)
	}
	deep = deep.fqInt(1)
	cases := []struct {
		name   string
		in     []byte
		want   string
		withID bool
	}{
		{"empty", nil, "truncated", false},
		{"bad version", gb{0x01}.u8(testID...), "version", false},
		{"short id", gb{0x81, 1, 2}, "truncated", false},
		{"no op", gb{0x81}.u8(testID...), "op", true},
		{"negative string", gb{0x81}.u8(testID...).i32(-1), "negative", true},
		{"string past end", gb{0x81}.u8(testID...).i32(1 << 30), "truncated", true},
		{"huge args count", gb{0x81}.u8(testID...).str("eval").str("").i32(1 << 30), "args", true},
		{"args key not a string", gb{0x81}.u8(testID...).str("eval").str("").i32(1).fqInt(1).fqInt(1), "not a string", true},
		{"unknown type", binReq("bytecode", injectOf(gb{}.fq(0x77))), "0x77", true},
		{"unknown null type", binReq("bytecode", injectOf(gb{}.u8(0x77, 0x01))), "0x77", true},
		{"lambda", binReq("bytecode", injectOf(gb{}.fq(0x1d).str("gremlin-groovy").str("it").i32(-1))), "lambdas", true},
		{"custom", binReq("bytecode", injectOf(gb{}.u8(0x00))), "custom", true},
		{"strategy", binReq("bytecode", injectOf(gb{}.fq(0x29).str("x").i32(0))), "TraversalStrategy", true},
		{"bad flag", binReq("bytecode", injectOf(gb{}.u8(0x01, 0x07))), "flag", true},
		{"bad bool", binReq("bytecode", injectOf(gb{}.fq(0x27).u8(2))), "boolean", true},
		{"bad utf8", binReq("bytecode", injectOf(gb{}.fq(0x03).str("\xff"))), "UTF-8", true},
		{"enum not string", binReq("bytecode", injectOf(gb{}.fq(0x20).fqInt(1))), "not a string", true},
		{"and of values", binReq("bytecode", injectOf(gb{}.fq(0x1e).str("and").i32(2).fqInt(1).fqInt(2))), "predicates", true},
		{"too deep", binReq("bytecode", injectOf(deep)), "deeper", true},
		{"list past end", binReq("bytecode", injectOf(gb{}.fq(0x09).i32(1000))), "truncated", true},
		{"trailing bytes", append(binReq("eval", gb{}.fqStr("g.V()")), 0), "after the request", true},
		{"gremlin not a traversal", binReq("bytecode", gb{}.fqInt(1)), "neither", true},
		{"bindings not a map", gb{0x81}.u8(testID...).str("eval").str("").i32(1).fqStr("bindings").fqInt(1), "not a map", true},
		{"bad offset date", binReq("bytecode", injectOf(gb{}.fq(0x88).i32(2024).u8(13, 1).i64(0).i32(0))), "range", true},
		{"big integer too long", binReq("bytecode", injectOf(gb{}.fq(0x23).i32(5000))), "out of range", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := gio.DecodeRequest(gio.MimeGraphBinary, c.in)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one mentioning %q", err, c.want)
			}
			var de *gio.DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %T is not a *DecodeError", err)
			}
			if got := de.RequestID != ""; got != c.withID {
				t.Fatalf("request id %q, want present=%v", de.RequestID, c.withID)
			}
		})
	}
}

func TestRequestLimits(t *testing.T) {
	list := gb{}.fq(0x09).i32(3).fqInt(1).fqInt(2).fqInt(3)
	in := binReq("bytecode", injectOf(list))
	if _, err := gio.DecodeRequestLimits(gio.MimeGraphBinary, in, gio.Limits{MaxItems: 2}); err == nil || !strings.Contains(err.Error(), "limit of 2") {
		t.Fatalf("items limit: %v", err)
	}
	if _, err := gio.DecodeRequestLimits(gio.MimeGraphBinary, in, gio.Limits{MaxBytes: 10}); err == nil || !strings.Contains(err.Error(), "exceeds the limit") {
		t.Fatalf("size limit: %v", err)
	}
	if _, err := gio.DecodeRequestLimits(gio.MimeGraphBinary, in, gio.Limits{MaxDepth: 1}); err == nil || !strings.Contains(err.Error(), "deeper than 1") {
		t.Fatalf("depth limit: %v", err)
	}
	if _, err := gio.DecodeRequestLimits(gio.MimeGraphBinary, in, gio.Limits{MaxDepth: 2}); err != nil {
		t.Fatalf("within limits: %v", err)
	}
	js := `{"requestId":"123e4567-e89b-12d3-a456-426614174000","op":"eval","args":{"gremlin":"g","bindings":{"x":[1,2,3,4]}}}`
	if _, err := gio.DecodeRequestLimits(gio.MimeGraphSONv2, []byte(js), gio.Limits{MaxItems: 3}); err == nil || !strings.Contains(err.Error(), "longer than 3") {
		t.Fatalf("JSON items limit: %v", err)
	}
	if _, err := gio.DecodeRequestLimits(gio.MimeGraphSONv2, []byte(js), gio.Limits{MaxDepth: 3}); err == nil || !strings.Contains(err.Error(), "deeper than 3") {
		t.Fatalf("JSON depth limit: %v", err)
	}
	if _, err := gio.DecodeRequest("text/plain", []byte(js)); !errors.Is(err, gio.ErrUnsupportedMime) {
		t.Fatalf("unknown mime: %v", err)
	}
}

func TestSplitMime(t *testing.T) {
	frame := append([]byte{byte(len(gio.MimeGraphBinary))}, gio.MimeGraphBinary...)
	frame = append(frame, 0x81, 0x00)
	mime, body, err := gio.SplitMime(frame)
	if err != nil || mime != gio.MimeGraphBinary || string(body) != "\x81\x00" {
		t.Fatalf("binary frame: %q %q %v", mime, body, err)
	}
	// A JSON text frame without the header (gremlin-python and Gremlin.Net
	// may send GraphSON this way) is read as application/json.
	for _, js := range []string{`{"requestId":"x"}`, "{\n \"op\":1}", "{}"} {
		mime, body, err = gio.SplitMime([]byte(js))
		if err != nil || mime != gio.MimeJSON || string(body) != js {
			t.Fatalf("JSON frame %q: %q %q %v", js, mime, body, err)
		}
	}
	for _, bad := range [][]byte{nil, {0}, {5, 'a', 'b'}, {2, 'a', 0x01}} {
		if _, _, err := gio.SplitMime(bad); err == nil {
			t.Fatalf("frame %q accepted", bad)
		}
	}
	for mime, want := range map[string]gio.Format{
		"Application/Vnd.Gremlin-V3.0+JSON; types=true": gio.FormatGraphSONv3,
		"application/vnd.gremlin-v3.0+json;types=false": gio.FormatGraphSONv2,
		"application/json":                         gio.FormatGraphSONv2,
		"application/vnd.graphbinary-v1.0":         gio.FormatGraphBinary,
		"application/vnd.graphbinary-v1.0-stringd": gio.FormatUnknown,
		"text/plain":                               gio.FormatUnknown,
	} {
		if f := gio.FormatOf(mime); f != want {
			t.Errorf("FormatOf(%q) = %v, want %v", mime, f, want)
		}
	}
}

func bigDec(s string) *big.Float {
	f, _, err := big.ParseFloat(s, 10, 256, big.ToNearestEven)
	if err != nil {
		panic(err)
	}
	return f
}

// TestEncodeBinaryLayout checks the response bytes against the layouts of
// graphbinary.asciidoc and TinkerPop's ResponseMessageSerializer: version,
// nullable id, Int code, nullable String message, bare attribute and meta
// Maps, then the fully qualified data List.
func TestEncodeBinaryLayout(t *testing.T) {
	tree := &graph.Tree{Entries: []graph.TreeEntry{{Key: "a", Children: &graph.Tree{Entries: []graph.TreeEntry{{Key: int32(1)}}}}}}
	resp := &gio.Response{RequestID: "123e4567-e89b-12d3-a456-426614174000", Status: gio.Status{Code: 206, Message: "ok",
		Attributes: map[string]any{"k": int64(1)}},
		Result: gio.Result{Data: []graph.Value{tree, &graph.BulkSet{Items: []any{"x"}, Bulks: []int64{3}},
			lang.Token{Type: "Direction", Name: "OUT"}, big.NewInt(-129), lang.Set{"s"}}, Traversers: true}}
	out, err := gio.EncodeResponse(gio.MimeGraphBinary, resp)
	if err != nil {
		t.Fatal(err)
	}
	trav := func(v gb) gb { return append(gb{}.fq(0x21).i64(1), v...) }
	want := gb{0x81, 0x00}.u8(testID...).i32(206).u8(0x00).str("ok").
		i32(1).fqStr("k").fq(0x02).i64(1). // attributes
		i32(0).                            // meta
		fq(0x09).i32(5)
	// Tree: {length}{key}{subtree}, subtrees bare (TreeSerializer.writeValue).
	want = append(want, trav(gb{}.fq(0x2b).i32(1).fqStr("a").i32(1).fqInt(1).i32(0))...)
	// BulkSet: {length}{value}{bulk Long}.
	want = append(want, trav(gb{}.fq(0x2a).i32(1).fqStr("x").i64(3))...)
	// Enums: the name as a fully qualified String.
	want = append(want, trav(gb{}.fq(0x18).fqStr("OUT"))...)
	// BigInteger: two's complement, big-endian: -129 = 0xff7f.
	want = append(want, trav(gb{}.fq(0x23).i32(2).u8(0xff, 0x7f))...)
	want = append(want, trav(gb{}.fq(0x0b).i32(1).fqStr("s"))...)
	if string(out) != string(want) {
		t.Fatalf("got  % x\nwant % x", out, []byte(want))
	}
	// No request id: the nullable UUID's null flag alone.
	out, err = gio.EncodeResponse(gio.MimeGraphBinary, &gio.Response{Status: gio.Status{Code: 498}})
	if err != nil {
		t.Fatal(err)
	}
	if want := (gb{0x81, 0x01}).i32(498).u8(0x00).str("").i32(0).i32(0).fq(0x09).i32(0); string(out) != string(want) {
		t.Fatalf("got  % x\nwant % x", out, []byte(want))
	}
}
