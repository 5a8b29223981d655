// Package binfmt holds the primitives of Parsec's stable binary formats
// (the engine's commands and catalog entries, the query executor's
// continuation states): length-prefixed strings and a Reader that checks
// every bound.
//
// Decoding untrusted or damaged bytes must never panic nor allocate more
// than the input can justify, and a format's decoder should read like its
// layout. So a Reader's first failure sticks: every later read returns a
// zero value, the decoder reads on without a check per field, and Err
// reports what went wrong first.
package binfmt

import (
	"encoding/binary"
	"fmt"
)

// AppendString appends s with its length as a uvarint before it.
func AppendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// Reader reads a byte string field by field.
type Reader struct {
	b   []byte
	err error
	bad error
}

// NewReader reads b. Every failure wraps bad.
func NewReader(b []byte, bad error) Reader { return Reader{b: b, bad: bad} }

// Err is the first failure, or nil.
func (r *Reader) Err() error { return r.err }

// Len is the number of bytes left.
func (r *Reader) Len() int { return len(r.b) }

// Fail records a failure, unless one is recorded already, and drops the
// rest of the input.
func (r *Reader) Fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s", r.bad, fmt.Sprintf(format, args...))
	}
	r.b = nil
}

// Byte reads one byte.
func (r *Reader) Byte() byte {
	if len(r.b) == 0 {
		r.Fail("truncated")
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

// Uvarint reads an unsigned varint.
func (r *Reader) Uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.Fail("truncated or overlong number")
		return 0
	}
	r.b = r.b[n:]
	return v
}

// Varint reads a signed varint.
func (r *Reader) Varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.Fail("truncated or overlong number")
		return 0
	}
	r.b = r.b[n:]
	return v
}

// Take reads the next n bytes. The result aliases the input, with no room
// to append into.
func (r *Reader) Take(n uint64) []byte {
	if n > uint64(len(r.b)) {
		r.Fail("length %d exceeds the remaining %d bytes", n, len(r.b))
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

// Bytes reads a string written by AppendString; the result aliases the
// input, like Take's.
func (r *Reader) Bytes() []byte { return r.Take(r.Uvarint()) }

// Count reads a count of elements that take at least min bytes each,
// refusing one that the bytes left cannot hold, so that damaged input
// allocates nothing large.
func (r *Reader) Count(min int) int {
	n := r.Uvarint()
	if n > uint64(len(r.b)/min) {
		r.Fail("count %d exceeds what the remaining %d bytes hold", n, len(r.b))
		return 0
	}
	return int(n)
}
