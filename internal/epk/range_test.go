package epk

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/twmb/murmur3"
)

func randomString(rng *rand.Rand) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789-_"
	n := 1 + rng.IntN(24)
	var sb strings.Builder
	for range n {
		sb.WriteByte(alphabet[rng.IntN(len(alphabet))])
	}
	return sb.String()
}

func randomKey(rng *rand.Rand, d Definition) Key {
	k := make(Key, len(d.Paths))
	for i := range k {
		k[i] = String(randomString(rng))
	}
	return k
}

func TestEvenRanges(t *testing.T) {
	const keys = 20000
	for _, d := range []Definition{hashV1, hashV2, multiHash} {
		rng := rand.New(rand.NewPCG(42, uint64(d.Version)+uint64(len(d.Paths))))
		epks := make([]string, keys)
		for i := range epks {
			e, err := d.EPK(randomKey(rng, d))
			if err != nil {
				t.Fatal(err)
			}
			epks[i] = e
		}
		for _, n := range []int{1, 2, 3, 4, 7, 16} {
			t.Run(fmt.Sprintf("%s-v%d/n=%d", d.Kind, d.Version, n), func(t *testing.T) {
				rs := d.EvenRanges(n)
				if len(rs) != n {
					t.Fatalf("got %d ranges, want %d", len(rs), n)
				}
				if rs[0].Min != MinEPK || rs[n-1].Max != MaxEPK {
					t.Fatalf("ranges do not cover \"\"..FF: %v .. %v", rs[0], rs[n-1])
				}
				for i, r := range rs {
					if r.IsEmpty() {
						t.Fatalf("range %d %v is empty", i, r)
					}
					if i > 0 && rs[i-1].Max != r.Min {
						t.Fatalf("gap or overlap between %v and %v", rs[i-1], r)
					}
				}
				counts := make([]int, n)
				for _, e := range epks {
					in := -1
					for i, r := range rs {
						if r.Contains(e) {
							if in >= 0 {
								t.Fatalf("EPK %s is in ranges %d and %d", e, in, i)
							}
							in = i
						}
					}
					if in < 0 {
						t.Fatalf("EPK %s is in no range", e)
					}
					counts[in]++
				}
				mean := float64(keys) / float64(n)
				for i, c := range counts {
					if math.Abs(float64(c)-mean) > 0.15*mean {
						t.Fatalf("range %d %v holds %d of %d keys, mean %.0f: not an even split (counts %v)", i, rs[i], c, keys, mean, counts)
					}
				}
			})
		}
	}
}

// The n = 2 boundaries equal the ones the service creates.
func TestEvenRangesServiceBoundaries(t *testing.T) {
	if got := hashV2.EvenRanges(2)[0].Max; got != "1FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF" {
		t.Errorf("V2 boundary = %s", got)
	}
	if got := multiHash.EvenRanges(2)[0].Max; got != "1FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF" {
		t.Errorf("MultiHash boundary = %s", got)
	}
	if got := hashV1.EvenRanges(2)[0].Max; got != "05C1DFFFFFFFFC" {
		t.Errorf("V1 boundary = %s", got)
	}
	want := []string{"", "0FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF", "1FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF", "2FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF", "FF"}
	for i, r := range hashV2.EvenRanges(4) {
		if r.Min != want[i] || r.Max != want[i+1] {
			t.Errorf("V2 n=4 range %d = %v, want [%q,%q)", i, r, want[i], want[i+1])
		}
	}
}

// Every masked V2 EPK lies below "40": an even split of the hex space would
// leave all keys in the first quarter.
func TestV2EPKsAreMasked(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for range 5000 {
		for _, d := range []Definition{hashV2, multiHash} {
			e, _ := d.EPK(randomKey(rng, d))
			for lvl := 0; lvl < len(e); lvl += 32 {
				if e[lvl] > '3' {
					t.Fatalf("EPK %s level %d is not masked", e, lvl/32)
				}
			}
		}
	}
}

// A V1 EPK lands in the range whose boundary hashes bracket its murmur hash.
func TestEvenRangesV1ByHash(t *testing.T) {
	const n = 7
	rs := hashV1.EvenRanges(n)
	rng := rand.New(rand.NewPCG(3, 4))
	check := func(c Component) {
		t.Helper()
		h := uint64(murmur3.Sum32(appendV1HashInput(nil, c)))
		want := 0
		for i := 1; i < n; i++ {
			if h >= uint64(i)*math.MaxUint32/n {
				want = i
			}
		}
		e, _ := hashV1.EPK(Key{c})
		if !rs[want].Contains(e) {
			t.Fatalf("key %s hash %d EPK %s not in range %d %v", c, h, e, want, rs[want])
		}
	}
	for range 5000 {
		check(String(randomString(rng)))
		check(Number(rng.NormFloat64() * 1000))
	}
	for _, c := range []Component{Undefined(), Null(), Bool(true), Bool(false), Number(0), Number(2), String("")} {
		check(c)
	}
}

func TestEvenRangesPanics(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "BUG") {
			t.Fatalf("recover() = %v, want a BUG panic", r)
		}
	}()
	hashV2.EvenRanges(0)
}

func TestPrefixRange(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	tenant := String("contoso")
	user := String("alice")
	r1, err := multiHash.PrefixRange(Key{tenant})
	if err != nil {
		t.Fatal(err)
	}
	r2, err := multiHash.PrefixRange(Key{tenant, user})
	if err != nil {
		t.Fatal(err)
	}
	tenantEPK, _ := hashV2.EPK(Key{tenant})
	if r1.Min != tenantEPK || r1.Max != tenantEPK+"FF" || len(r2.Min) != 64 || r2.Max != r2.Min+"FF" {
		t.Fatalf("prefix ranges %v %v", r1, r2)
	}
	for range 2000 {
		k := randomKey(rng, multiHash)
		own, _ := multiHash.EPK(k)
		// Same tenant: inside r1; same tenant and user: inside r2.
		k[0] = tenant
		e1, _ := multiHash.EPK(k)
		k[1] = user
		e2, _ := multiHash.EPK(k)
		if !r1.Contains(e1) || !r1.Contains(e2) || !r2.Contains(e2) {
			t.Fatalf("prefix range misses %s / %s", e1, e2)
		}
		if r2.Contains(e1) && !strings.HasPrefix(e1, r2.Min) {
			t.Fatalf("r2 holds %s", e1)
		}
		if r1.Contains(own) {
			t.Fatalf("random key %s EPK %s is in the prefix range of %s", k, own, tenant)
		}
		// A full key's range holds exactly its own EPK.
		full, err := multiHash.PrefixRange(k)
		if err != nil {
			t.Fatal(err)
		}
		if full.Min != e2 || !full.Contains(e2) || full.Contains(e1) && e1 != e2 {
			t.Fatalf("full-key range %v vs %s", full, e2)
		}
	}
	// Undefined is a valid component of a prefix.
	if _, err := multiHash.PrefixRange(Key{Undefined(), Null()}); err != nil {
		t.Fatal(err)
	}
	// Hash definitions: a full key gives [EPK, EPK+"FF").
	for _, d := range []Definition{hashV1, hashV2} {
		r, err := d.PrefixRange(Key{String("x")})
		if err != nil {
			t.Fatal(err)
		}
		e, _ := d.EPK(Key{String("x")})
		if r.Min != e || r.Max != e+"FF" {
			t.Fatalf("%v", r)
		}
	}
}

func TestPrefixRangeErrors(t *testing.T) {
	f := func(d Definition, k Key, wantSub string) {
		t.Helper()
		_, err := d.PrefixRange(k)
		if err == nil || !strings.Contains(err.Error(), wantSub) || !errors.Is(err, ErrInvalidKey) {
			t.Fatalf("PrefixRange(%s) error = %v, want containing %q", k, err, wantSub)
		}
	}
	f(multiHash, Key{}, "has 0 component(s)")
	f(multiHash, Key{Null(), Null(), Null(), Null()}, "has 4 component(s)")
	d2 := Definition{Kind: Hash, Version: 2, Paths: []string{"/a", "/b"}} // invalid, but shows the rule
	f(d2, Key{Null()}, "only MultiHash accepts a prefix")
}

func TestRange(t *testing.T) {
	r := Range{Min: "10", Max: "20"}
	for _, c := range []struct {
		epk  string
		want bool
	}{{"", false}, {"0F", false}, {"10", true}, {"10FF", true}, {"1FFFFFFF", true}, {"20", false}, {"2000", false}} {
		if got := r.Contains(c.epk); got != c.want {
			t.Errorf("%v.Contains(%q) = %v", r, c.epk, got)
		}
	}
	if !FullRange().Contains("") || FullRange().Contains("FF") || !FullRange().Contains("3F") {
		t.Error("FullRange")
	}
	if !r.Overlaps(Range{"1F", "30"}) || r.Overlaps(Range{"20", "30"}) || r.Overlaps(Range{"", "10"}) || r.Overlaps(Range{"15", "15"}) {
		t.Error("Overlaps")
	}
	if got := r.String(); got != `["10","20")` {
		t.Errorf("String() = %s", got)
	}
}
