package synthkey

import "strconv"

// FNV-1a, 64-bit (http://www.isthe.com/chongo/tech/comp/fnv/).
const (
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211
)

// fnv1a64 returns the 64-bit FNV-1a hash of b.
func fnv1a64(b []byte) uint64 {
	h := uint64(fnvOffset64)
	for _, c := range b {
		h ^= uint64(c)
		h *= fnvPrime64
	}
	return h
}

// bucket maps the canonical text of a value to 1..n.
func bucket(text []byte, n int) int {
	return 1 + int(fnv1a64(text)%uint64(n))
}

// Hash returns the suffix hash(/path, n) appends for the value v: an integer
// from 1 to n, computed as
//
//	1 + FNV-1a-64(text(v)) mod n
//
// where text(v) is the value's text as concat uses it (see the package
// documentation): a string's UTF-8 bytes, a number in JavaScript's shortest
// form, or true, false, null. v is a base value as FromBase takes it
// (string, float64, int, int64, json.Number, bool or nil).
//
// Hash panics if n < 1 or if v has no text: Undefined, an object, an array,
// NaN, ±Inf or a value of another Go type. (Expressions report these cases
// as a *ValueError instead.)
func Hash(v any, n int) int {
	if n < 1 {
		panic("synthkey: Hash with n = " + strconv.Itoa(n) + "; n must be at least 1")
	}
	val := fromAny(v)
	switch val.kind {
	case vMissing:
		panic("synthkey: Hash of a missing value")
	case vBad:
		panic("synthkey: Hash of " + val.str)
	}
	var stack [64]byte
	return bucket(val.appendText(stack[:0]), n)
}
