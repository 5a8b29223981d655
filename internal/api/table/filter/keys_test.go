package filter

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/parsecdb/parsec/internal/api/table/edm"
)

func TestPartitionKeys(t *testing.T) {
	cases := []struct {
		f    string
		want []string // nil: ok=false
	}{
		{"PartitionKey eq 'a'", []string{"a"}},
		{"PartitionKey eq 'a' and Age gt 3", []string{"a"}},
		{"Age gt 3 and PartitionKey eq 'a'", []string{"a"}},
		{"PartitionKey eq 'b' or PartitionKey eq 'a' or PartitionKey eq 'b'", []string{"a", "b"}},
		{"(PartitionKey eq 'a' and RowKey eq 'x') or (PartitionKey eq 'b' and Age eq 1)", []string{"a", "b"}},
		{"PartitionKey eq 'a' and PartitionKey eq 'b'", []string{}},
		{"(PartitionKey eq 'a' or PartitionKey eq 'b') and (PartitionKey eq 'b' or PartitionKey eq 'c')", []string{"b"}},
		{"not (PartitionKey ne 'a')", []string{"a"}},
		{"not (PartitionKey ne 'a' and PartitionKey ne 'b')", []string{"a", "b"}},
		{"PartitionKey eq 5", []string{}}, // a string never equals an Int32
		{"false", []string{}},
		{"PartitionKey eq 'a' or Age gt 3", nil},
		{"PartitionKey ne 'a'", nil},
		{"PartitionKey ge 'a' and PartitionKey lt 'b'", nil},
		{"not (PartitionKey eq 'a')", nil},
		{"not (PartitionKey eq 5)", nil},
		{"true", nil},
		{"RowKey eq 'a'", nil},
	}
	for _, c := range cases {
		e, err := Parse(c.f)
		if err != nil {
			t.Fatal(err)
		}
		keys, ok := PartitionKeys(e)
		if c.want == nil {
			if ok {
				t.Errorf("PartitionKeys(%q) = %q, want ok=false", c.f, keys)
			}
			continue
		}
		if !ok || !reflect.DeepEqual(keys, c.want) {
			t.Errorf("PartitionKeys(%q) = %q %v, want %q", c.f, keys, ok, c.want)
		}
	}
}

func TestKeyRange(t *testing.T) {
	iv := func(lo string, loInc bool, hi string, hiInc bool) Interval {
		return Interval{Lo: lo, HasLo: lo != "", LoInc: loInc, Hi: hi, HasHi: hi != "", HiInc: hiInc}
	}
	cases := []struct {
		f    string
		want Range
	}{
		{"PartitionKey ge 'a' and PartitionKey lt 'b'", Range{PartitionKey: iv("a", true, "b", false)}},
		{"PartitionKey eq 'p' and RowKey gt 'r1' and RowKey le 'r9'",
			Range{PartitionKey: iv("p", true, "p", true), RowKey: iv("r1", false, "r9", true)}},
		{"PartitionKey gt 'b' and PartitionKey ge 'a'", Range{PartitionKey: iv("b", false, "", false)}},
		{"PartitionKey ge 'b' and PartitionKey gt 'b'", Range{PartitionKey: iv("b", false, "", false)}},
		{"(PartitionKey eq 'a' and RowKey ge 'x') or (PartitionKey eq 'c' and RowKey lt 'c')",
			Range{PartitionKey: iv("a", true, "c", true)}},
		{"PartitionKey lt 'a' and PartitionKey gt 'b'", Range{Empty: true}},
		{"PartitionKey lt 'a' and PartitionKey ge 'a'", Range{Empty: true}},
		{"PartitionKey le 'a' and PartitionKey ge 'a'", Range{PartitionKey: iv("a", true, "a", true)}},
		{"not (PartitionKey lt 'm')", Range{PartitionKey: iv("m", true, "", false)}},
		{"not (PartitionKey lt 'm' or RowKey gt 'z')", Range{PartitionKey: iv("m", true, "", false), RowKey: iv("", false, "z", true)}},
		{"RowKey eq 1", Range{Empty: true}},
		{"not (RowKey eq 1)", Range{}},
		{"PartitionKey ne 'a'", Range{}},
		{"Age gt 1", Range{}},
		{"false or PartitionKey eq 'a'", Range{PartitionKey: iv("a", true, "a", true)}},
	}
	for _, c := range cases {
		e, err := Parse(c.f)
		if err != nil {
			t.Fatal(err)
		}
		if got := KeyRange(e); !reflect.DeepEqual(got, c.want) {
			t.Errorf("KeyRange(%q) =\n %+v, want\n %+v", c.f, got, c.want)
		}
	}
}

// randFilter builds a random filter over the keys and two other
// properties, with literals from small alphabets so that comparisons hit.
func randFilter(r *rand.Rand, depth int) string {
	keys := []string{"", "a", "ab", "b", "\uff01", "\U0001F600", "a'b"}
	lit := func() string {
		switch r.IntN(8) {
		case 0:
			return fmt.Sprint(r.IntN(3))
		case 1:
			return "true"
		default:
			return "'" + strings.ReplaceAll(keys[r.IntN(len(keys))], "'", "''") + "'"
		}
	}
	if depth <= 0 || r.IntN(3) == 0 {
		props := []string{"PartitionKey", "RowKey", "PartitionKey", "RowKey", "S", "Flag"}
		p := props[r.IntN(len(props))]
		switch r.IntN(10) {
		case 0:
			return p
		case 1:
			return []string{"true", "false"}[r.IntN(2)]
		case 2:
			return lit() + " " + opNames[r.IntN(len(opNames))] + " " + p
		}
		return p + " " + opNames[r.IntN(len(opNames))] + " " + lit()
	}
	switch r.IntN(4) {
	case 0:
		return "not (" + randFilter(r, depth-1) + ")"
	case 1:
		return "(" + randFilter(r, depth-1) + ") or (" + randFilter(r, depth-1) + ")"
	default:
		return "(" + randFilter(r, depth-1) + ") and (" + randFilter(r, depth-1) + ")"
	}
}

// TestKeyAnalysesSound checks, for random filters and entities, that
// whenever Eval accepts an entity its keys lie in what PartitionKeys and
// KeyRange report.
func TestKeyAnalysesSound(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	keys := []string{"", "a", "a\x00", "aa", "ab", "b", "ba", "\uff01", "\ue000", "\U0001F600", "a'b", "z"}
	n := 3000
	if testing.Short() {
		n = 300
	}
	narrowed := 0
	for i := 0; i < n; i++ {
		f := randFilter(r, 4)
		e, err := Parse(f)
		if err != nil {
			t.Fatalf("Parse(%q): %v", f, err)
		}
		pks, pkOK := PartitionKeys(e)
		rng := KeyRange(e)
		if pkOK || rng.Empty || rng.PartitionKey.HasLo || rng.PartitionKey.HasHi || rng.RowKey.HasLo || rng.RowKey.HasHi {
			narrowed++
		}
		for j := 0; j < 40; j++ {
			ent := entity{
				"PartitionKey": str(keys[r.IntN(len(keys))]),
				"RowKey":       str(keys[r.IntN(len(keys))]),
			}
			if r.IntN(2) == 0 {
				ent["S"] = str(keys[r.IntN(len(keys))])
			}
			if r.IntN(2) == 0 {
				ent["Flag"] = edm.BooleanValue(r.IntN(2) == 0)
			}
			if !Eval(e, ent.get) {
				continue
			}
			pk, rk := ent["PartitionKey"].S, ent["RowKey"].S
			if pkOK && !containsKey(pks, pk) {
				t.Fatalf("%s: matches PartitionKey %q outside PartitionKeys %q", f, pk, pks)
			}
			if !rng.Contains(pk, rk) {
				t.Fatalf("%s: matches (%q, %q) outside KeyRange %+v", f, pk, rk, rng)
			}
			if !rng.PartitionKey.ByteBounds().ContainsBytes(pk) || !rng.RowKey.ByteBounds().ContainsBytes(rk) {
				t.Fatalf("%s: matches (%q, %q) outside the byte bounds of %+v", f, pk, rk, rng)
			}
		}
	}
	// The test means little if the analyses never narrow anything.
	if narrowed < n/10 {
		t.Fatalf("only %d of %d random filters were narrowed", narrowed, n)
	}
}

func TestByteBounds(t *testing.T) {
	alphabet := []rune{'a', 'b', 0xe9, 0xd7ff, 0xe000, 0xff01, 0xffff, 0x10000, 0x1f600}
	r := rand.New(rand.NewPCG(7, 8))
	gen := func() string {
		var b strings.Builder
		for range r.IntN(4) {
			b.WriteRune(alphabet[r.IntN(len(alphabet))])
		}
		return b.String()
	}
	changed := 0
	for range 20000 {
		iv := Interval{Lo: gen(), Hi: gen(), HasLo: r.IntN(4) > 0, HasHi: r.IntN(4) > 0, LoInc: r.IntN(2) == 0, HiInc: r.IntN(2) == 0}
		bb := iv.ByteBounds()
		if bb != iv {
			changed++
		}
		for range 20 {
			s := gen()
			if iv.Contains(s) && !bb.ContainsBytes(s) {
				t.Fatalf("%+q is in %+v but not in its byte bounds %+v", s, iv, bb)
			}
		}
	}
	if changed == 0 {
		t.Fatal("no interval needed new byte bounds; the test proves nothing")
	}
	// Bounds of characters below U+E000 are kept as they are.
	iv := Interval{Lo: "a\u00e9", Hi: "b", HasLo: true, HasHi: true, HiInc: true}
	if iv.ByteBounds() != iv {
		t.Fatalf("ByteBounds(%+v) = %+v", iv, iv.ByteBounds())
	}
	iv = Interval{Lo: "a\uff01b", Hi: "a\U0001F600", HasLo: true, HasHi: true}
	want := Interval{Lo: "a", Hi: "a\xff", HasLo: true, HasHi: true, LoInc: true}
	if got := iv.ByteBounds(); got != want {
		t.Fatalf("ByteBounds(%+v) = %+v, want %+v", iv, got, want)
	}
}
