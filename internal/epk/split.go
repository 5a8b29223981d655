package epk

import (
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
)

// SplitRange divides r into n contiguous ranges of equal width over the hash
// domain of this definition, exactly as EvenRanges divides the whole space:
// splitting each of EvenRanges(2) in two gives EvenRanges(4). Boundaries that
// are not hash boundaries (a storage split at a stored EPK) are placed by
// their hash prefix, which is all that matters for width.
func (d Definition) SplitRange(r Range, n int) ([]Range, error) {
	if n < 1 {
		return nil, fmt.Errorf("cannot split a range into %d parts", n)
	}
	if r.IsEmpty() {
		return nil, fmt.Errorf("cannot split the empty range %s", r)
	}
	v1 := d.Kind != MultiHash && d.Version != 2
	lo, hi, err := d.domainBounds(r, v1)
	if err != nil {
		return nil, err
	}
	width := new(big.Int).Sub(hi, lo)
	if width.Cmp(big.NewInt(int64(n))) < 0 {
		return nil, fmt.Errorf("the range %s is too narrow to split into %d parts", r, n)
	}
	bounds := make([]string, n+1)
	bounds[0], bounds[n] = r.Min, r.Max
	for i := 1; i < n; i++ {
		b := new(big.Int).Mul(width, big.NewInt(int64(i)))
		b.Quo(b, big.NewInt(int64(n)))
		b.Add(b, lo)
		bounds[i] = renderBound(b, v1)
	}
	out := make([]Range, n)
	for i := range out {
		out[i] = Range{Min: bounds[i], Max: bounds[i+1]}
		if out[i].IsEmpty() {
			return nil, fmt.Errorf("the range %s is too narrow to split into %d parts", r, n)
		}
	}
	return out, nil
}

// domainBounds returns the hash values of r's bounds: for V2 and MultiHash
// the first 16 bytes of the EPK (MaxEPK is 2^126-1), for V1 the murmur hash
// decoded from Cosmos's number encoding (MaxEPK is 2^32-1), the same
// domain tops as EvenRanges.
func (d Definition) domainBounds(r Range, v1 bool) (lo, hi *big.Int, err error) {
	conv := func(s string) (*big.Int, error) {
		switch s {
		case MinEPK:
			return new(big.Int), nil
		case MaxEPK:
			if v1 {
				return new(big.Int).SetUint64(math.MaxUint32), nil
			}
			return new(big.Int).Set(maxHashV2), nil
		}
		b, err := hex.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("range bound %q is not hex: %v", s, err)
		}
		if v1 {
			h, ok := decodeV1Hash(b)
			if !ok {
				return nil, fmt.Errorf("range bound %q is not a V1 effective partition key", s)
			}
			return new(big.Int).SetUint64(h), nil
		}
		var raw [16]byte
		copy(raw[:], b)
		return new(big.Int).SetBytes(raw[:]), nil
	}
	if lo, err = conv(r.Min); err != nil {
		return nil, nil, err
	}
	if hi, err = conv(r.Max); err != nil {
		return nil, nil, err
	}
	return lo, hi, nil
}

func renderBound(b *big.Int, v1 bool) string {
	if v1 {
		var buf [10]byte
		return string(appendHexBytes(nil, appendEncodeNumber(buf[:0], float64(b.Uint64()))))
	}
	var raw [16]byte
	b.FillBytes(raw[:])
	return string(appendHexBytes(nil, raw[:]))
}

// decodeV1Hash inverts appendEncodeNumber for the non-negative integral
// hash that starts a V1 EPK.
func decodeV1Hash(b []byte) (uint64, bool) {
	if len(b) < 2 || b[0] != byte(KindNumber) {
		return 0, false
	}
	p := uint64(b[1]) << 56
	shift := 56
	for _, c := range b[2:] {
		shift -= 7
		if shift < 0 {
			return 0, false
		}
		p |= uint64(c>>1) << uint(shift)
		if c&1 == 0 {
			break
		}
	}
	if p < 1<<63 {
		return 0, false // a negative number: never a hash
	}
	f := math.Float64frombits(p ^ 1<<63)
	if f < 0 || f > math.MaxUint32 || f != math.Trunc(f) {
		return 0, false
	}
	return uint64(f), true
}
