package engine

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/parsecdb/parsec/internal/epk"
	"github.com/parsecdb/parsec/internal/jsondoc"
)

func sampleCommands() []*Command {
	return []*Command{
		{Ops: []Op{{Kind: OpCreate, ID: "a", Key: epk.Key{epk.String("k")}, EPK: "0A1B", Body: []byte(`{"id":"a","pk":"k"}`)}},
			Ts: 1_800_000_000, Limits: Limits{LogicalBytes: 20 << 30}},
		{Atomic: true, Ts: -5, Limits: Limits{LogicalBytes: 1, PartitionBytes: 10 << 30}, Ops: []Op{
			{Kind: OpPatch, ID: "p", Key: epk.Key{epk.Number(-0.5), epk.Bool(true), epk.Null(), epk.Undefined(), epk.Bool(false)}, EPK: "FF",
				IfMatch: `"e"`, Condition: "FROM c WHERE c.n > 1", Patch: []jsondoc.PatchOp{
					{Op: "set", Path: "/a", Value: json.RawMessage(`null`)},
					{Op: "remove", Path: "/b"},
					{Op: "move", Path: "/c", From: "/d"},
					{Op: "add", Path: "/e", Value: json.RawMessage(``)},
				}},
			{Kind: OpDelete, ID: "\x00\xff", EPK: ""},
			{Kind: OpRead, ID: "r", Key: epk.Key{epk.Number(math.Inf(1))}},
		}},
		{Atomic: true, IfVersion: ptrTo(uint64(1) << 40), Ts: 1_800_000_001, Ops: []Op{
			{Kind: OpUpsert, ID: "s1", Key: epk.Key{epk.String("k")}, EPK: "0A1B", Body: []byte(`{"id":"s1","pk":"k"}`)},
			{Kind: OpDelete, ID: "s2", Key: epk.Key{epk.String("k")}, EPK: "0A1B", IfMatch: `"x"`},
		}},
		{Atomic: true, IfVersion: ptrTo(uint64(3)), IfSeq: ptrTo(uint64(1<<63 | 5<<40 | 77)), Ops: []Op{
			{Kind: OpCreate, ID: "q", Key: epk.Key{epk.String("k")}, EPK: "0A1B", Body: []byte(`{"id":"q","pk":"k"}`)}}},
		{Versions: true, Ops: []Op{{Kind: OpDelete, ID: "v", Key: epk.Key{epk.String("k")}, EPK: "0A1B"}}},
		{Versions: true, Expired: true, Ops: []Op{{Kind: OpDelete, ID: "x", Key: epk.Key{epk.String("k")}, EPK: "0A1B", IfMatch: `"e"`}}},
		{StopOnError: true, Ops: []Op{{Kind: OpDelete, ID: "x", Key: epk.Key{epk.String("k")}, EPK: "0A1B"}, {Kind: OpDelete, ID: "y", Key: epk.Key{epk.String("k")}, EPK: "0A1B"}}},
		{IfVersion: ptrTo(uint64(0)), Ops: []Op{{Kind: OpCreate, ID: "z", Key: epk.Key{epk.String("k")}, EPK: "0A1B", Body: []byte(`{"id":"z","pk":"k"}`)}}},
		{Split: &SplitCommand{Range: "12", Bounds: []string{"1F", "3FFF"}, FirstChild: 77, RangesSeq: 9}},
		{Split: &SplitCommand{Range: "0", FirstChild: 1}},
		{Reindex: &ReindexCommand{Gen: math.MaxUint32, Policy: []byte(`{"indexingMode":"none"}`), From: []byte{'D', 0}, To: []byte{'D', 1}}},
	}
}

// TestCommandRoundTrip: every field of every kind of command survives its
// encoding, and the encoding is a function of the command.
func TestCommandRoundTrip(t *testing.T) {
	for i, c := range sampleCommands() {
		b := EncodeCommand(nil, c)
		got, err := DecodeCommand(b)
		if err != nil {
			t.Fatalf("command %d: %v", i, err)
		}
		if !reflect.DeepEqual(got, c) {
			t.Fatalf("command %d:\n got %+v\nwant %+v", i, got, c)
		}
		if again := EncodeCommand(nil, got); string(again) != string(b) {
			t.Fatalf("command %d encodes differently after a round trip", i)
		}
		// Every proper prefix is refused, never misread.
		for n := range len(b) {
			if _, err := DecodeCommand(b[:n]); !errors.Is(err, errBadCommand) {
				t.Fatalf("command %d cut to %d of %d bytes: %v", i, n, len(b), err)
			}
		}
	}
}

func ptrTo[T any](v T) *T { return &v }

// TestCommandVersion1Decodes: commands written before the version
// precondition existed (version 1) still decode, and version 1 does not
// take the new flag.
func TestCommandVersion1Decodes(t *testing.T) {
	for i, c := range sampleCommands() {
		if c.IfVersion != nil || c.IfSeq != nil || c.Versions || c.Expired || c.StopOnError {
			continue
		}
		b := EncodeCommand(nil, c)
		b[0] = 1
		got, err := DecodeCommand(b)
		if err != nil || !reflect.DeepEqual(got, c) {
			t.Fatalf("command %d as version 1: %v\n got %+v\nwant %+v", i, err, got, c)
		}
	}
	v := uint64(7)
	b := EncodeCommand(nil, &Command{IfVersion: &v, Ops: []Op{{Kind: OpDelete, ID: "a"}}})
	b[0] = 1
	if _, err := DecodeCommand(b); !errors.Is(err, errBadCommand) {
		t.Fatalf("a version 1 command with the version flag decoded: %v", err)
	}
	b = EncodeCommand(nil, &Command{Versions: true, Ops: []Op{{Kind: OpDelete, ID: "a"}}})
	b[0] = 2
	if _, err := DecodeCommand(b); !errors.Is(err, errBadCommand) {
		t.Fatalf("a version 2 command with the versions flag decoded: %v", err)
	}
	b = EncodeCommand(nil, &Command{StopOnError: true, Ops: []Op{{Kind: OpDelete, ID: "a"}}})
	b[0] = 3
	if _, err := DecodeCommand(b); !errors.Is(err, errBadCommand) {
		t.Fatalf("a version 3 command with the stop-on-error flag decoded: %v", err)
	}
}

// FuzzDecodeCommand: any bytes decode to a command (or a catalog batch) or
// to errBadCommand,
// never a panic or a huge allocation, and a decoded command encodes to
// bytes that decode to a command with the same encoding.
func FuzzDecodeCommand(f *testing.F) {
	for _, c := range sampleCommands() {
		f.Add(EncodeCommand(nil, c))
	}
	f.Add([]byte{1, 1, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Add([]byte{2, 1, 2, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		if m, err := decodeCatalogBatch(b); err == nil {
			if again, err := decodeCatalogBatch(m.encode()); err != nil || !reflect.DeepEqual(again, m) {
				t.Fatalf("a catalog batch does not survive a round trip: %v", err)
			}
		} else if !errors.Is(err, errBadCommand) {
			t.Fatalf("catalog batch error %v does not wrap errBadCommand", err)
		}
		c, err := DecodeCommand(b)
		if err != nil {
			if !errors.Is(err, errBadCommand) {
				t.Fatalf("error %v does not wrap errBadCommand", err)
			}
			return
		}
		// Compared by encoding: a NaN key component is not DeepEqual to itself.
		enc := EncodeCommand(nil, c)
		again, err := DecodeCommand(enc)
		if err != nil {
			t.Fatalf("a decoded command re-encodes to bytes that do not decode: %v", err)
		}
		if string(EncodeCommand(nil, again)) != string(enc) {
			t.Fatalf("round trip changed the command:\n%+v\n%+v", c, again)
		}
	})
}
