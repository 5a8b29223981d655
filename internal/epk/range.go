package epk

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
)

// EPK range sentinels: every EPK is >= MinEPK and < MaxEPK.
const (
	MinEPK = ""
	MaxEPK = "FF"
)

// Range is the half-open interval [Min, Max) of EPK strings, compared
// lexicographically as byte strings (uppercase hex compares like the bytes it
// encodes). Min "" is the lowest and Max "FF" the highest sentinel, so
// Range{MinEPK, MaxEPK} holds every EPK. Boundaries of different lengths mix
// freely: a MultiHash EPK (64 or 96 digits) sorts after a 32-digit boundary
// that is its prefix.
type Range struct {
	Min, Max string
}

// FullRange returns [MinEPK, MaxEPK), the range of every EPK.
func FullRange() Range { return Range{Min: MinEPK, Max: MaxEPK} }

// Contains reports whether Min <= epk < Max.
func (r Range) Contains(epk string) bool {
	return r.Min <= epk && epk < r.Max
}

// Overlaps reports whether r and o share at least one EPK string.
func (r Range) Overlaps(o Range) bool {
	return r.Min < o.Max && o.Min < r.Max && r.Min < r.Max && o.Min < o.Max
}

// IsEmpty reports whether the range holds nothing (Min >= Max).
func (r Range) IsEmpty() bool { return r.Min >= r.Max }

// String renders the range as ["min","max"), for logs and golden tests.
func (r Range) String() string {
	return "[" + strconv.Quote(r.Min) + "," + strconv.Quote(r.Max) + ")"
}

// PrefixRange returns the EPK range of all documents whose key starts with
// k: [EPK(k), EPK(k)+"FF").
//
// For MultiHash, k may hold 1..len(Paths) components; EPK(k) of a prefix is
// the concatenation of its per-component hashes, and every full key with
// that prefix extends it with digits whose first is 0-3 (the masked first
// byte), which sorts below "FF". For a full key of any kind the same form is
// returned; it is effectively a point range, since no other EPK of the
// definition has EPK(k) as a proper prefix (V2 EPKs have a fixed length and
// the V1 encoding is prefix-free), so it contains exactly the documents
// whose EPK equals EPK(k).
//
// An empty k, or one longer than the definition, is an error wrapping
// ErrInvalidKey; so is a partial key for a Hash definition.
func (d Definition) PrefixRange(k Key) (Range, error) {
	if len(k) == 0 || len(k) > len(d.Paths) || (d.Kind != MultiHash && len(k) != len(d.Paths)) {
		if len(k) > 0 && len(k) < len(d.Paths) {
			return Range{}, fmt.Errorf("%w: the key %s has %d component(s) but the container's partition key (kind %s) has %d path(s); only MultiHash accepts a prefix",
				ErrInvalidKey, clipKey(k), len(k), d.Kind, len(d.Paths))
		}
		return Range{}, d.countError(k)
	}
	var buf [128]byte
	b, err := d.appendEPK(buf[:0], k)
	if err != nil {
		return Range{}, err
	}
	min := string(b)
	return Range{Min: min, Max: min + MaxEPK}, nil
}

// maxHashV2 is the largest masked V2 (and MultiHash first-level) hash,
// 2^126 - 1: its first byte is 0x3F.
var maxHashV2 = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 126), big.NewInt(1))

// EvenRanges splits [MinEPK, MaxEPK) into n contiguous ranges of equal width
// over the hash values that this definition's EPKs can take. The first range
// starts at MinEPK, the last ends at MaxEPK, and each range's Max is the next
// one's Min. n must be at least 1 (for V1, at most 2^32); EvenRanges panics
// otherwise. MultiHash and version 2 use the V2 domain; anything else, such
// as an absent version, the V1 domain.
//
// Boundary i (1 <= i < n) is floor(i * maxHash / n) where maxHash is the
// largest hash: 2^126-1 for V2 and MultiHash, whose first byte is masked to
// 0x00-0x3F, so splitting the hex space 00..FF evenly would leave all data in
// the first quarter; 2^32-1 for V1. V2 boundaries are rendered as 32 uppercase
// hex digits; V1 boundary hash b as the hex of encodeNumber(float64(b)),
// which is order-preserving and prefix-free, so a V1 EPK (which starts with
// encodeNumber of its hash) sorts at or after the boundary exactly when its
// hash is >= b. For n = 2 this gives the boundaries that the service itself
// uses when it creates two ranges: "1FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF" for V2
// and "05C1DFFFFFFFFC" (encodeNumber(2147483647)) for V1.
func (d Definition) EvenRanges(n int) []Range {
	if n < 1 {
		panic(fmt.Sprintf("BUG: epk.EvenRanges called with n = %d", n))
	}
	v1 := d.Kind != MultiHash && d.Version != 2
	if v1 && uint64(n) > 1<<32 {
		panic(fmt.Sprintf("BUG: epk.EvenRanges called with n = %d > 2^32 for a V1 definition", n))
	}
	bounds := make([]string, n+1)
	bounds[0], bounds[n] = MinEPK, MaxEPK
	for i := 1; i < n; i++ {
		if v1 {
			h := uint64(i) * math.MaxUint32 / uint64(n) // no overflow: i < n <= 2^32
			var buf [10]byte
			bounds[i] = string(appendHexBytes(nil, appendEncodeNumber(buf[:0], float64(h))))
			continue
		}
		b := new(big.Int).Mul(maxHashV2, big.NewInt(int64(i)))
		b.Quo(b, big.NewInt(int64(n)))
		var raw [16]byte
		b.FillBytes(raw[:])
		bounds[i] = string(appendHexBytes(nil, raw[:]))
	}
	out := make([]Range, n)
	for i := range out {
		out[i] = Range{Min: bounds[i], Max: bounds[i+1]}
	}
	return out
}
