package binfmt

import (
	"encoding/binary"
	"errors"
	"testing"
)

var errBad = errors.New("bad input")

// TestReader: fields read back as written; the first failure sticks, is
// the one reported, wraps the Reader's error, and later reads give zeros.
func TestReader(t *testing.T) {
	b := []byte{7}
	b = binary.AppendUvarint(b, 300)
	b = binary.AppendVarint(b, -5)
	b = AppendString(b, "héllo")
	b = append(binary.AppendUvarint(b, 2), 'x', 'y')
	r := NewReader(b, errBad)
	if v, u, i, s, n := r.Byte(), r.Uvarint(), r.Varint(), string(r.Bytes()), r.Count(1); v != 7 || u != 300 || i != -5 || s != "héllo" || n != 2 || r.Err() != nil {
		t.Fatalf("read %d %d %d %q %d, err %v", v, u, i, s, n, r.Err())
	}
	if got := string(r.Take(2)); got != "xy" || r.Len() != 0 {
		t.Fatalf("took %q, %d bytes left", got, r.Len())
	}

	r = NewReader(AppendString(nil, "abc")[:3], errBad)
	if got := r.Bytes(); got != nil || !errors.Is(r.Err(), errBad) {
		t.Fatalf("a cut string read %q, err %v", got, r.Err())
	}
	first := r.Err()
	r.Fail("later")
	if r.Byte() != 0 || r.Uvarint() != 0 || r.Varint() != 0 || r.Err() != first {
		t.Fatalf("after a failure: err %v, want the first, %v", r.Err(), first)
	}

	r = NewReader(binary.AppendUvarint(nil, 5), errBad)
	if r.Count(2) != 0 || !errors.Is(r.Err(), errBad) {
		t.Fatalf("a count larger than the input: err %v", r.Err())
	}
	r = NewReader([]byte{0x80}, errBad)
	if r.Uvarint() != 0 || !errors.Is(r.Err(), errBad) {
		t.Fatalf("a truncated varint: err %v", r.Err())
	}
}
