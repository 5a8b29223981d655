package epk

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/twmb/murmur3"
)

var (
	hashV1    = Definition{Kind: Hash, Version: 1, Paths: []string{"/pk"}}
	hashV2    = Definition{Kind: Hash, Version: 2, Paths: []string{"/pk"}}
	multiHash = Definition{Kind: MultiHash, Version: 2, Paths: []string{"/a", "/b", "/c"}}
)

type vector struct {
	key  Key
	want string
}

func mustParse(t testing.TB, s string) Key {
	t.Helper()
	k, err := ParseHeader(s)
	if err != nil {
		t.Fatalf("ParseHeader(%s): %v", s, err)
	}
	return k
}

// The vectors of reference §4, from the JS SDK's v1.spec.ts and v2.spec.ts.
func TestEPKReferenceV2(t *testing.T) {
	f := func(header, want string) {
		t.Helper()
		k := mustParse(t, header)
		got, err := hashV2.EPK(k)
		if err != nil {
			t.Fatalf("EPK(%s): %v", header, err)
		}
		if got != want {
			t.Fatalf("V2 EPK(%s) = %s, want %s", header, got, want)
		}
	}
	f(`["redmond"]`, "22E342F38A486A088463DFF7838A5963")
	f(`[""]`, "32E9366E637A71B4E710384B2F4970A0")
	f(`["aa"]`, "05033626483AE80D00E44FBD35362B19")
	f(`[null]`, "378867E4430E67857ACE5C908374FE16")
	f(`[true]`, "0E711127C5B5A8E4726AC6DD306A3E59")
	f(`[false]`, "2FE1BE91E90A3439635E0E9E37361EF2")
	f(`[{}]`, "11622DAA78F835834610ABE56EFF5CB5")
	f(`[5]`, "19C08621B135968252FB34B4CF66F811")
	f(`[5.5]`, "0E2EE47829D1AF775EEFB6540FD1D0ED")
	f(`[12313.1221]`, "27E7ECA8F2EE3E53424DE8D5220631C6")
	f(`[123456789]`, "1F56D2538088EBA82CCF988F36E16760")
	// V2 strings are not truncated.
	f(`["`+strings.Repeat("a", 110)+`"]`, "0BA3E9CA8EE4C14538828D1612A4B652")
}

// The mixed 8-component V2 vector hashes all components together, which a
// Hash definition with 8 paths would do (Validate rejects such a definition,
// the hashing itself is generic).
func TestEPKReferenceV2Mixed(t *testing.T) {
	k := mustParse(t, `["redmond",50,5.5,true,false,null,"",12313.1221]`)
	d := Definition{Kind: Hash, Version: 2, Paths: make([]string, len(k))}
	got, err := d.EPK(k)
	if err != nil {
		t.Fatal(err)
	}
	if want := "1A5E512F591E980E07A6D8AD5BD5AB2F"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestEPKReferenceV1(t *testing.T) {
	f := func(header, want string) {
		t.Helper()
		k := mustParse(t, header)
		got, err := hashV1.EPK(k)
		if err != nil {
			t.Fatalf("EPK(%s): %v", header, err)
		}
		if got != want {
			t.Fatalf("V1 EPK(%s) = %s, want %s", header, got, want)
		}
	}
	f(`["partitionKey"]`, "05C1E1B3D9CD2608716273756A756A706F4C667A00")
	f(`["redmond"]`, "05C1EFE313830C087366656E706F6500")
	f(`[""]`, "05C1CF33970FF80800")
	f(`["aa"]`, "05C1C7B7270FE008626200")
	f(`[null]`, "05C1ED45D7475601")
	f(`[true]`, "05C1D7C5A903D803")
	f(`[false]`, "05C1DB857D857C02")
	f(`[{}]`, "05C1D529E345DC00")
	f(`[5]`, "05C1D9C1C5517C05C014")
	f(`[5.5]`, "05C1D7A771716C05C016")
	f(`[12313.1221]`, "05C1ED154D592E05C0C90723F50FC925D8")
	f(`[123456789]`, "05C1D9E1A5311C05C19DB7CD8B40")
}

// Cross-SDK vectors from the Rust and Java SDKs' EPK tests (the same values
// appear in both), which add long strings, extreme numbers and a V1 string
// cut to 100 characters.
func TestEPKCrossSDK(t *testing.T) {
	a1024 := strings.Repeat("a", 1024)
	v2 := []vector{
		{Key{String("")}, "32E9366E637A71B4E710384B2F4970A0"},
		{Key{String("partitionKey")}, "013AEFCF77FA271571CF665A58C933F1"},
		{Key{String(a1024)}, "332BDF5512AE49615F32C7D98C2DB86C"},
		{Key{Null()}, "378867E4430E67857ACE5C908374FE16"},
		{Key{Number(-128)}, "01DAEDABF913540367FE219B2AD06148"},
		{Key{Number(127)}, "0C507ACAC853ECA7977BF4CEFB562A25"},
		{Key{Number(math.MinInt64)}, "23D5C6395512BDFEAFADAD15328AD2BB"},
		{Key{Number(math.MaxInt64)}, "2EDB959178DFCCA18983F89384D1629B"},
		{Key{Number(math.MinInt32)}, "0B1660D5233C3171725B30D4A5F4CC1F"},
		{Key{Number(math.MaxInt32)}, "2D9349D64712AEB5EB1406E2F0BE2725"},
		{Key{Number(math.SmallestNonzeroFloat64)}, "0E6CBA63A280927DE485DEF865800139"},
		{Key{Number(math.MaxFloat64)}, "31424D996457102634591FF245DBCC4D"},
		{Key{Number(5.123124190509124)}, "0EF2E2D82460884AF0F6440BE4F726A8"},
	}
	for _, v := range v2 {
		if got := string(appendV2(nil, v.key)); got != v.want {
			t.Errorf("V2 %s = %s, want %s", clipKey(v.key), got, v.want)
		}
	}
	if got, want := string(appendV2(nil, Key{Number(5), String("redmond"), Bool(true), Null()})), "3032DECBE2AB1768D8E0AEDEA35881DF"; got != want {
		t.Errorf("V2 4 components = %s, want %s", got, want)
	}

	v1 := []vector{
		{Key{String("")}, "05C1CF33970FF80800"},
		{Key{String("partitionKey")}, "05C1E1B3D9CD2608716273756A756A706F4C667A00"},
		// Cut to 100 characters before hashing and encoding: 08, 100 x 62, 00.
		{Key{String(a1024)}, "05C1EB5921F70608" + strings.Repeat("62", 100) + "00"},
		{Key{Null()}, "05C1ED45D7475601"},
		{Key{Bool(true)}, "05C1D7C5A903D803"},
		{Key{Bool(false)}, "05C1DB857D857C02"},
		{Key{Number(-128)}, "05C1D73349F54C053FA0"},
		{Key{Number(127)}, "05C1DD539DDFCC05C05FE0"},
		{Key{Number(math.MinInt64)}, "05C1DB35F33D1C053C20"},
		{Key{Number(math.MaxInt64)}, "05C1B799AB2DD005C3E0"},
		{Key{Number(math.MinInt32)}, "05C1DFBF252BCC053E20"},
		{Key{Number(math.MaxInt32)}, "05C1E1F503DFB205C1DFFFFFFFFC"},
		{Key{Number(math.SmallestNonzeroFloat64)}, "05C1E5C91F4D3005800101010101010102"},
		{Key{Number(math.MaxFloat64)}, "05C1CBE367C53005FFEFFFFFFFFFFFFFFE"},
	}
	for _, v := range v1 {
		got, err := hashV1.EPK(v.key)
		if err != nil {
			t.Fatal(err)
		}
		if got != v.want {
			t.Errorf("V1 %s = %s, want %s", clipKey(v.key), got, v.want)
		}
	}
}

// unmaskedV2 is the V2 hash without the routing mask, the form of the .NET
// baseline files.
func unmaskedV2(comps ...Component) string {
	var in []byte
	for _, c := range comps {
		in = appendHashInput(in, c, v2StringTerminator)
	}
	h1, h2 := murmur3.Sum128(in)
	return fmt.Sprintf("%016X%016X", h2, h1)
}

func mask(hexEPK string) string {
	var b byte
	fmt.Sscanf(hexEPK[:2], "%02X", &b)
	return fmt.Sprintf("%02X", b&0x3F) + hexEPK[2:]
}

// The .NET PartitionKeyHashBaselineTest.*.xml baselines (shipped in the Go
// SDK's internal/epk/testdata): V2 unmasked, V1 as murmur3_32 of the
// untruncated hashing input (the 12-zero-byte form's last 8 digits).
func TestEPKDotNetBaselines(t *testing.T) {
	type baseline struct {
		name string
		c    Component
		v1   string // murmur3_32, %08X
		v2   string // unmasked
	}
	a := func(n int) Component { return String(strings.Repeat("a", n)) }
	cases := []baseline{
		{"undefined", Undefined(), "514E28B7", "51622DAA78F835834610ABE56EFF5CB5"},
		{"null", Null(), "E45AD1AB", "778867E4430E67857ACE5C908374FE16"},
		{"true", Bool(true), "5E2A8076", "4E711127C5B5A8E4726AC6DD306A3E59"},
		{"false", Bool(false), "6C27D09F", "EFE1BE91E90A3439635E0E9E37361EF2"},
		{"0", Number(0), "1EDA80A6", "555B95BEDAC4B1E9EC1CDC9BB0DDDE58"},
		{"-0", Number(math.Copysign(0, -1)), "B03DA650", "3D018BB1DF3DB27235766E81FD10406E"},
		{"1", Number(1), "E1655A93", "A0CD98B339BA78A5D0CF6953B87070B0"},
		{"-1", Number(-1), "452BDBE7", "59938E7A936C1C5B9E3AE842BBC16839"},
		{"5E-324", Number(5e-324), "AC83D318", "0E6CBA63A280927DE485DEF865800139"},
		{"MaxValue", Number(math.MaxFloat64), "378B3C46", "71424D996457102634591FF245DBCC4D"},
		{"MinValue", Number(-math.MaxFloat64), "E38DD8A1", "27050CC4910CFD9DACE1283D3801DF25"},
		{"NaN (.NET bits)", Number(math.Float64frombits(0xFFF8000000000000)), "AF04DA37", "5AA4222583D70ECAA0922D8CA8EDFCB1"},
		{"-Infinity", Number(math.Inf(-1)), "0F5A6CC5", "5B63B3FB266DB3B6CD3BC79FE893CDE8"},
		{"Infinity", Number(math.Inf(1)), "D2F84F93", "3889F7F08A8CE2A5C9829BBB1944B4FF"},
		{"long MaxValue", Number(9223372036854775807), "1732A96D", "6EDB959178DFCCA18983F89384D1629B"},
		{"long MinValue", Number(-9223372036854775808), "69AF2787", "63D5C6395512BDFEAFADAD15328AD2BB"},
		{"MaxSafeInteger", Number(9007199254740991), "13F69B8A", "12C221C7032CED1F9E6693CE1428E6CF"},
		{"MaxSafeInteger-1", Number(9007199254740990), "E5744366", "8FEA3467D94AA6E4628EF0B248C1FD9B"},
		{"MaxSafeInteger+1", Number(9007199254740992), "A30CCE12", "55335910D01122E3D99DA5DE569B065D"},
		{"empty string", String(""), "3CCCB0FF", "B2E9366E637A71B4E710384B2F4970A0"},
		{"asdf", String("asdf"), "B02BABC2", "608BF1D598F5B63AD5520F04FE58C5E8"},
		{"99 bytes", a(99), "CCC122D9", "3C02F609961C32AAC2B912B940D1209A"},
		{"100 bytes", a(100), "D5843D83", "8DBD7D229437BB665DE6417747994D57"},
		{"101 bytes", a(101), "3B1B5D8D", "88042541D30C8BF90D7092B1519AE0BC"},
		{"2 KB", a(2048), "9C91058D", "B3E0AE996F53F2CD5DD5574ACAB3BF19"},
	}
	for _, c := range cases {
		if got := unmaskedV2(c.c); got != c.v2 {
			t.Errorf("%s: unmasked V2 = %s, want %s", c.name, got, c.v2)
		}
		if got, want := string(appendV2(nil, []Component{c.c})), mask(c.v2); got != want {
			t.Errorf("%s: V2 EPK = %s, want the masked baseline %s", c.name, got, want)
		}
		if got := fmt.Sprintf("%08X", murmur3.Sum32(appendHashInput(nil, c.c, v1StringTerminator))); got != c.v1 {
			t.Errorf("%s: murmur3_32 = %s, want %s", c.name, got, c.v1)
		}
	}
	// The brief's spot checks.
	if got, want := string(appendV2(nil, Key{String("asdf")})), "208BF1D598F5B63AD5520F04FE58C5E8"; got != want {
		t.Errorf("asdf masked = %s, want %s", got, want)
	}

	// The baselines hash long strings whole, but V1 routing (JS, .NET
	// PartitionKeyInternal, Rust, Java) hashes the first 100 characters: a
	// 101-byte string has the same V1 hash as the 100-byte one.
	if got, want := string(appendV1HashInput(nil, a(101))), string(appendV1HashInput(nil, a(100))); got != want {
		t.Errorf("V1 hash input of a 101-char string is not cut to 100 chars")
	}
	e100, _ := hashV1.EPK(Key{a(100)})
	e101, _ := hashV1.EPK(Key{a(101)})
	if e100 != e101 || !strings.HasPrefix(e100, "05") {
		t.Errorf("V1 EPKs of 100 and 101 a's differ: %s vs %s", e100, e101)
	}
}

// The .NET MultiHash baseline ["/path1","/path2"] (and its 1- and 3-level
// siblings) is the unmasked V2 hash of each component, concatenated: its
// levels start with B4, E7 and EC, none masked. The routing EPK masks every
// 32-digit level on its own (the Go SDK's ComputeV2MultiHashForRouting, the
// JS SDK's hashMultiHashPartitionKey).
func TestEPKMultiHashBaseline(t *testing.T) {
	const (
		l1 = "B499FD5198AE0F1EB6B77F6E428D2FF0"
		l2 = "E7A1848BD1102A3B65AFF266874D0FF5"
		l3 = "ECA5ABC953544CF9BD94776DA5E6EA52"
	)
	if got := unmaskedV2(String("/path1")) + unmaskedV2(String("/path2")); got != l1+l2 {
		t.Fatalf("unmasked per-level hash = %s, want the baseline %s", got, l1+l2)
	}
	if got := unmaskedV2(String("/path3")); got != l3 {
		t.Fatalf("unmasked /path3 = %s, want %s", got, l3)
	}
	d2 := Definition{Kind: MultiHash, Version: 2, Paths: []string{"/a", "/b"}}
	got, err := d2.EPK(Key{String("/path1"), String("/path2")})
	if err != nil {
		t.Fatal(err)
	}
	want := "3499FD5198AE0F1EB6B77F6E428D2FF0" + "27A1848BD1102A3B65AFF266874D0FF5"
	if got != want || want != mask(l1)+mask(l2) {
		t.Fatalf("MultiHash EPK = %s, want per-level masked %s", got, want)
	}
	got3, err := multiHash.EPK(Key{String("/path1"), String("/path2"), String("/path3")})
	if err != nil {
		t.Fatal(err)
	}
	if want3 := mask(l1) + mask(l2) + mask(l3); got3 != want3 {
		t.Fatalf("3-level MultiHash EPK = %s, want %s", got3, want3)
	}
	// Each level equals the single-component V2 EPK.
	for i, s := range []string{"/path1", "/path2", "/path3"} {
		single, _ := hashV2.EPK(Key{String(s)})
		if got3[32*i:32*(i+1)] != single {
			t.Fatalf("level %d = %s, want V2 EPK %s", i, got3[32*i:32*(i+1)], single)
		}
	}
}

func TestEncodeNumberTrailingZero(t *testing.T) {
	// Payloads with only the top byte set end with an explicit 00 (the
	// .NET/Java/Python form; JS drops it).
	f := func(x float64, want string) {
		t.Helper()
		if got := fmt.Sprintf("%X", appendEncodeNumber(nil, x)); got != want {
			t.Errorf("encodeNumber(%v) = %s, want %s", x, got, want)
		}
	}
	f(0, "058000")
	f(math.Copysign(0, -1), "058000")
	f(2, "05C000")
	f(131072, "05C100")
	f(5, "05C014")
	f(-1, "054010")
	f(2147483647, "05C1DFFFFFFFFC")
}

// encodeNumber must be order preserving and prefix-free (self-delimiting)
// for EvenRanges' V1 boundaries and for V1 EPK ordering.
func TestEncodeNumberOrderAndPrefixFree(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	vals := []float64{0, math.Copysign(0, -1), 1, -1, 2, -2, 131072, 0.5, math.MaxFloat64, -math.MaxFloat64,
		math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64, math.Inf(1), math.Inf(-1), math.MaxUint32, math.MaxUint32 - 1}
	for i := 0; i < 3000; i++ {
		switch i % 3 {
		case 0:
			vals = append(vals, float64(rng.Uint32()))
		case 1:
			vals = append(vals, math.Float64frombits(rng.Uint64()))
		default:
			vals = append(vals, rng.NormFloat64()*1e6)
		}
	}
	for h := 0; h < 300; h++ { // all small hashes, including 0 and 2
		vals = append(vals, float64(h))
	}
	var clean []float64
	for _, v := range vals {
		if !math.IsNaN(v) {
			clean = append(clean, v)
		}
	}
	sort.Float64s(clean)
	enc := make([][]byte, len(clean))
	for i, v := range clean {
		enc[i] = appendEncodeNumber(nil, v)
	}
	for i := 1; i < len(clean); i++ {
		a, b := clean[i-1], clean[i]
		c := bytes.Compare(enc[i-1], enc[i])
		switch {
		case a < b && c >= 0:
			t.Fatalf("encodeNumber not order preserving: %v -> %X, %v -> %X", a, enc[i-1], b, enc[i])
		case a == b && c != 0 && !(a == 0): // 0 and -0 encode the same
			t.Fatalf("equal values %v, %v encode differently", a, b)
		}
	}
	// Prefix-free: no encoding is a proper prefix of another. Sorted
	// encodings make it enough to check neighbours.
	sorted := append([][]byte(nil), enc...)
	sort.Slice(sorted, func(i, j int) bool { return bytes.Compare(sorted[i], sorted[j]) < 0 })
	for i := 1; i < len(sorted); i++ {
		if len(sorted[i-1]) < len(sorted[i]) && bytes.HasPrefix(sorted[i], sorted[i-1]) {
			t.Fatalf("%X is a proper prefix of %X", sorted[i-1], sorted[i])
		}
	}
	// Self-delimiting: the length is determined by the bytes (the first byte
	// after the first payload byte with a clear low bit ends it).
	for _, e := range enc {
		n := 2
		for e[n]&1 == 1 {
			n++
		}
		if n+1 != len(e) {
			t.Fatalf("%X: decoded length %d, actual %d", e, n+1, len(e))
		}
	}
}

func TestV1Truncation(t *testing.T) {
	emoji := "\U0001F600" // two UTF-16 units, four UTF-8 bytes
	f := func(s, want string) {
		t.Helper()
		if got := string(appendV1Truncated(nil, s)); got != want {
			t.Errorf("truncate(%d bytes) = %q (%d bytes), want %q", len(s), got, len(got), want)
		}
	}
	f("abc", "abc")
	f(strings.Repeat("a", 100), strings.Repeat("a", 100))
	f(strings.Repeat("a", 101), strings.Repeat("a", 100))
	f(strings.Repeat("é", 150), strings.Repeat("é", 100))
	f(strings.Repeat(emoji, 50), strings.Repeat(emoji, 50))
	f(strings.Repeat(emoji, 51), strings.Repeat(emoji, 50))
	// The cut at 100 units falls inside the 50th emoji: its high surrogate
	// stays and becomes U+FFFD.
	f("a"+strings.Repeat(emoji, 50), "a"+strings.Repeat(emoji, 49)+"\uFFFD")

	// A string of 100 characters but more than 100 UTF-8 bytes is encoded
	// as its first 101 bytes plus one, with no terminator.
	enc := appendEncodeValue(nil, String(strings.Repeat("é", 100)))
	if len(enc) != 1+101 || enc[0] != 0x08 || enc[1] != 0xC3+1 || enc[2] != 0xA9+1 || enc[101] != 0xC3+1 {
		t.Errorf("long string encoding = %X", enc)
	}
	enc = appendEncodeValue(nil, String("a\x00"))
	if want := []byte{0x08, 0x62, 0x01, 0x00}; !bytes.Equal(enc, want) {
		t.Errorf("encodeValue(a\\x00) = %X, want %X", enc, want)
	}
}

func TestEPKErrors(t *testing.T) {
	f := func(d Definition, k Key, wantSub string) {
		t.Helper()
		_, err := d.EPK(k)
		if err == nil || !strings.Contains(err.Error(), wantSub) {
			t.Fatalf("EPK(%v, %s) error = %v, want containing %q", d, k, err, wantSub)
		}
	}
	f(multiHash, Key{String("a")}, "has 1 component(s) but the container's partition key has 3 path(s)")
	f(hashV2, Key{}, "has 0 component(s)")
	f(hashV2, Key{String("a"), String("b")}, "has 2 component(s)")
	f(Definition{Kind: Hash, Version: 3, Paths: []string{"/a"}}, Key{String("a")}, `kind "Hash" version 3`)
	f(Definition{Kind: "Range", Version: 1, Paths: []string{"/a"}}, Key{String("a")}, `kind "Range"`)
	f(Definition{Kind: Hash, Version: 2}, Key{}, "no paths")
}

func TestAppendEPKNoAlloc(t *testing.T) {
	k := Key{String("tenant-42")}
	dst := make([]byte, 0, 128)
	for _, d := range []Definition{hashV1, hashV2} {
		allocs := testing.AllocsPerRun(100, func() {
			_, _ = d.AppendEPK(dst[:0], k)
		})
		if allocs != 0 {
			t.Errorf("%s v%d AppendEPK allocates %v times", d.Kind, d.Version, allocs)
		}
	}
	k3 := Key{String("t"), String("u"), Number(3)}
	if allocs := testing.AllocsPerRun(100, func() { _, _ = multiHash.AppendEPK(dst[:0], k3) }); allocs != 0 {
		t.Errorf("MultiHash AppendEPK allocates %v times", allocs)
	}
	if allocs := testing.AllocsPerRun(100, func() { _, _ = hashV2.EPK(k) }); allocs > 1 {
		t.Errorf("V2 EPK allocates %v times, want <= 1", allocs)
	}
}
