package synthkey

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"testing"
)

// TestHashVectors pins the documented hash (the table in doc.go). These
// values are part of the stored data's layout and must never change.
func TestHashVectors(t *testing.T) {
	tests := []struct {
		v    any
		text string
		fnv  uint64
		b400 int
		b1m  int // n = 1,000,000
	}{
		{"", "", 0xcbf29ce484222325, 38, 656038},
		{"a", "a", 0xaf63dc4c8601ec8c, 397, 641997},
		{"1HGCM82633A004352", "1HGCM82633A004352", 0x0f989797ed2dae82, 211, 988611},
		{"2018-08-09", "2018-08-09", 0x4ede2b2bc6874a5f, 304, 487904},
		{"é", "\xc3\xa9", 0x0ac21707b7181e01, 18, 167618},
		{7, "7", 0xaf63aa4c86019796, 247, 231447},
		{7.0, "7", 0xaf63aa4c86019796, 247, 231447},
		{int64(7), "7", 0xaf63aa4c86019796, 247, 231447},
		{json.Number("7.0"), "7", 0xaf63aa4c86019796, 247, 231447},
		{"7", "7", 0xaf63aa4c86019796, 247, 231447},
		{1.5, "1.5", 0x457d3818182e17b9, 58, 904058},
		{1e21, "1e+21", 0xba1aa6cca8a13b15, 262, 751062},
		{1e-7, "1e-7", 0x5377adeffe1a272f, 176, 502576},
		{0.1, "0.1", 0x4e18dd181d0a2066, 71, 591271},
		{math.Copysign(0, -1), "0", 0xaf63ad4c86019caf, 80, 116080},
		{true, "true", 0x5b5c98ef514dbfa5, 54, 478054},
		{false, "false", 0xb5fae2c14238b978, 73, 199673},
		{nil, "null", 0x5b9bc4ba528108e4, 341, 743141},
	}
	for _, tc := range tests {
		v := fromAny(tc.v)
		if got := string(v.appendText(nil)); got != tc.text {
			t.Errorf("text of %#v = %q, want %q", tc.v, got, tc.text)
		}
		if got := fnv1a64([]byte(tc.text)); got != tc.fnv {
			t.Errorf("FNV-1a-64(%q) = %#016x, want %#016x", tc.text, got, tc.fnv)
		}
		std := fnv.New64a()
		std.Write([]byte(tc.text))
		if got := std.Sum64(); got != tc.fnv {
			t.Errorf("hash/fnv FNV-1a-64(%q) = %#016x, want %#016x", tc.text, got, tc.fnv)
		}
		if got := Hash(tc.v, 400); got != tc.b400 {
			t.Errorf("Hash(%#v, 400) = %d, want %d", tc.v, got, tc.b400)
		}
		if got := Hash(tc.v, 1000000); got != tc.b1m {
			t.Errorf("Hash(%#v, 1000000) = %d, want %d", tc.v, got, tc.b1m)
		}
		if got := Hash(tc.v, 1); got != 1 {
			t.Errorf("Hash(%#v, 1) = %d, want 1", tc.v, got)
		}
	}
}

// TestHashMatchesStdlib checks Hash against an independent computation with
// hash/fnv over random strings, and its range.
func TestHashMatchesStdlib(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		b := make([]rune, r.IntN(20))
		for i := range b {
			b[i] = rune(r.IntN(0x3000))
		}
		s := string(b)
		n := 1 + r.IntN(MaxBound)
		h := fnv.New64a()
		h.Write([]byte(s))
		want := 1 + int(h.Sum64()%uint64(n))
		if got := Hash(s, n); got != want || got < 1 || got > n {
			t.Fatalf("Hash(%q, %d) = %d, want %d", s, n, got, want)
		}
	}
	// n above MaxBound is fine for the function itself.
	if got := Hash("a", math.MaxInt); got != 1+int(0xaf63dc4c8601ec8c%uint64(math.MaxInt)) {
		t.Errorf("Hash(a, MaxInt) = %d", got)
	}
}

// TestHashSpread checks that buckets of typical identifiers are about even.
func TestHashSpread(t *testing.T) {
	const n, count = 400, 200000
	buckets := make([]int, n+1)
	for i := range count {
		buckets[Hash(fmt.Sprintf("device-%06d", i), n)]++
	}
	want := count / n
	for b := 1; b <= n; b++ {
		if buckets[b] < want*8/10 || buckets[b] > want*12/10 {
			t.Fatalf("bucket %d holds %d of %d values, want about %d", b, buckets[b], count, want)
		}
	}
}

func TestHashPanics(t *testing.T) {
	for _, tc := range []struct {
		v any
		n int
	}{
		{"a", 0}, {"a", -1}, {Undefined, 4}, {map[string]any{}, 4}, {[]any{}, 4}, {math.Inf(1), 4}, {math.NaN(), 4}, {struct{}{}, 4},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Hash(%#v, %d) did not panic", tc.v, tc.n)
				}
			}()
			Hash(tc.v, tc.n)
		}()
	}
}
