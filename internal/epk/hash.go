package epk

import (
	"math"
	"unicode/utf8"

	"github.com/twmb/murmur3"
)

// Encoding constants (see doc.go).
const (
	// v1MaxStringChars is how many UTF-16 code units of a string V1 keeps
	// before hashing and encoding.
	v1MaxStringChars = 100
	// v1MaxStringBytes is the longest UTF-8 encoding that the V1 binary
	// encoding writes in full (then a 00 terminator); longer strings are cut
	// to v1MaxStringBytes+1 bytes and written with no terminator.
	v1MaxStringBytes = 100

	v1StringTerminator byte = 0x00
	v2StringTerminator byte = 0xFF

	// v2Mask clears the two top bits of the first byte of a V2 hash.
	v2Mask byte = 0x3F
)

// appendHashInput appends the hashing encoding of c: its type marker, then
// for a number the 8 little-endian bytes of its IEEE-754 bits, for a string
// its UTF-8 bytes and term.
func appendHashInput(dst []byte, c Component, term byte) []byte {
	switch c.Kind {
	case KindNumber:
		b := math.Float64bits(c.Num)
		return append(dst, byte(KindNumber),
			byte(b), byte(b>>8), byte(b>>16), byte(b>>24),
			byte(b>>32), byte(b>>40), byte(b>>48), byte(b>>56))
	case KindString:
		dst = append(dst, byte(KindString))
		dst = append(dst, c.Str...)
		return append(dst, term)
	}
	return append(dst, byte(c.Kind))
}

// appendV2 appends the 32 uppercase hex digits of the masked V2 hash of the
// concatenated hashing encodings of comps.
func appendV2(dst []byte, comps []Component) []byte {
	var scratch [128]byte
	in := scratch[:0]
	for _, c := range comps {
		in = appendHashInput(in, c, v2StringTerminator)
	}
	h1, h2 := murmur3.Sum128(in)
	return appendV2Hex(dst, h1, h2)
}

// appendV2Hex renders a 128-bit murmur result as a V2 EPK: the bytes
// LE64(h1)‖LE64(h2) reversed, i.e. BE64(h2)‖BE64(h1), with the first byte
// masked by 0x3F, in uppercase hex.
func appendV2Hex(dst []byte, h1, h2 uint64) []byte {
	dst = appendHex64(dst, h2&^(uint64(^v2Mask)<<56))
	return appendHex64(dst, h1)
}

func appendHex64(dst []byte, v uint64) []byte {
	for shift := 60; shift >= 0; shift -= 4 {
		dst = append(dst, hexUpper[(v>>uint(shift))&0xF])
	}
	return dst
}

func appendHexBytes(dst, b []byte) []byte {
	for _, x := range b {
		dst = append(dst, hexUpper[x>>4], hexUpper[x&0xF])
	}
	return dst
}

// appendMultiHash appends the MultiHash EPK of comps: the V2 EPK of each
// component on its own, 32 hex digits per component.
func appendMultiHash(dst []byte, comps []Component) []byte {
	for i := range comps {
		dst = appendV2(dst, comps[i:i+1])
	}
	return dst
}

// appendV1 appends the uppercase hex V1 EPK of comps:
//
//	encodeNumber(float64(murmur3_32(hashInput(truncated comps)))) ‖ encodeValue(truncated comp)...
//
// Strings are truncated to 100 UTF-16 code units first. With one component
// (the only valid V1 shape) this is the JS SDK's hashV1PartitionKey; with
// several it follows .NET's PartitionKeyInternal, which hashes them all.
func appendV1(dst []byte, comps []Component) []byte {
	var scratch [128]byte
	in := scratch[:0]
	for _, c := range comps {
		in = appendV1HashInput(in, c)
	}
	h := murmur3.Sum32(in)

	var outScratch [128]byte
	out := appendEncodeNumber(outScratch[:0], float64(h))
	for _, c := range comps {
		out = appendEncodeValue(out, c)
	}
	return appendHexBytes(dst, out)
}

// appendV1HashInput is appendHashInput with the V1 string truncation and the
// 00 terminator.
func appendV1HashInput(dst []byte, c Component) []byte {
	if c.Kind != KindString {
		return appendHashInput(dst, c, v1StringTerminator)
	}
	dst = append(dst, byte(KindString))
	dst = appendV1Truncated(dst, c.Str)
	return append(dst, v1StringTerminator)
}

// appendV1Truncated appends the UTF-8 encoding of the first 100 UTF-16 code
// units of s (JS key.substr(0, 100), .NET Substring(0, 100)). If the cut
// splits a surrogate pair, the lone high surrogate that remains is encoded as
// U+FFFD, as Node's Buffer.from and .NET's Encoding.UTF8 both do.
func appendV1Truncated(dst []byte, s string) []byte {
	if len(s) <= v1MaxStringChars {
		return append(dst, s...) // at most 100 bytes, so at most 100 units
	}
	units := 0
	for i, r := range s {
		w := 1
		if r >= 0x10000 {
			w = 2
		}
		if units+w > v1MaxStringChars {
			dst = append(dst, s[:i]...)
			if units < v1MaxStringChars {
				dst = utf8.AppendRune(dst, utf8.RuneError)
			}
			return dst
		}
		units += w
	}
	return append(dst, s...)
}

// appendEncodeNumber appends the order-preserving binary encoding of f used
// by V1 EPKs and partition key range boundaries:
//
//	p = bits(f) < 2^63 ? bits(f) ^ 2^63 : -bits(f) (mod 2^64)
//	05, p>>56, then the remaining 56 bits in 7-bit groups, each shifted left
//	by one with the low bit set, except the last group whose low bit is 0.
//
// Trailing zero groups are dropped, but the last byte is always written,
// even when it is 00 (that happens only when p has no bits below its top
// byte, e.g. for 0, 2 or 131072). That is the .NET, Java and Python form and
// keeps the encoding prefix-free; the JS SDK omits such a 00 byte.
func appendEncodeNumber(dst []byte, f float64) []byte {
	bits := math.Float64bits(f)
	var p uint64
	if bits < 1<<63 {
		p = bits ^ 1<<63
	} else {
		p = ^bits + 1
	}
	dst = append(dst, byte(KindNumber), byte(p>>56))
	p <<= 8
	for {
		b := byte(p>>56) | 0x01
		p <<= 7
		if p == 0 {
			return append(dst, b&0xFE)
		}
		dst = append(dst, b)
	}
}

// appendEncodeValue appends the V1 binary encoding of c (already subject to
// the 100-unit truncation for strings): the marker for undefined, null and
// booleans; appendEncodeNumber for numbers; for strings 08, then each UTF-8
// byte plus one (0xFF stays 0xFF), then 00 — or, when the UTF-8 form is
// longer than 100 bytes, its first 101 bytes plus one and no terminator.
func appendEncodeValue(dst []byte, c Component) []byte {
	switch c.Kind {
	case KindNumber:
		return appendEncodeNumber(dst, c.Num)
	case KindString:
		dst = append(dst, byte(KindString))
		start := len(dst)
		dst = appendV1Truncated(dst, c.Str)
		long := len(dst)-start > v1MaxStringBytes
		if long {
			dst = dst[:start+v1MaxStringBytes+1]
		}
		for i := start; i < len(dst); i++ {
			if dst[i] < 0xFF {
				dst[i]++
			}
		}
		if !long {
			dst = append(dst, 0x00)
		}
		return dst
	}
	return append(dst, byte(c.Kind))
}
