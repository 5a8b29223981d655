package partition

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/parsecdb/parsec/internal/epk"
)

var hashV2 = epk.Definition{Kind: epk.Hash, Version: 2, Paths: []string{"/pk"}}

// quarters is a hand-made map of four ranges with short bounds.
func quarters(t *testing.T) Map {
	t.Helper()
	m, err := New([]Range{
		{ID: "0", Min: "", Max: "40"},
		{ID: "1", Min: "40", Max: "80"},
		{ID: "2", Min: "80", Max: "C0"},
		{ID: "3", Min: "C0", Max: "FF"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestInitial(t *testing.T) {
	f := func(def epk.Definition, n int, want string) {
		t.Helper()
		m := Initial(def, n)
		if err := m.Check(); err != nil {
			t.Fatalf("Initial(%d): %v", n, err)
		}
		if got := m.String(); got != want {
			t.Errorf("Initial(%d):\n%s\nwant\n%s", n, got, want)
		}
	}
	f(hashV2, 1, `0 ["","FF")`)
	f(hashV2, 2, `0 ["","1FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF")
1 ["1FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF","FF")`)
	f(epk.Definition{Kind: epk.Hash, Paths: []string{"/pk"}}, 2, `0 ["","05C1DFFFFFFFFC")
1 ["05C1DFFFFFFFFC","FF")`)
}

func TestNewSortsAndCopies(t *testing.T) {
	in := []Range{
		{ID: "7", Min: "80", Max: "FF", Parents: []string{"1"}},
		{ID: "0", Min: "", Max: "80"},
	}
	m, err := New(in)
	if err != nil {
		t.Fatal(err)
	}
	want := "0 [\"\",\"80\")\n7 [\"80\",\"FF\") <- 1"
	if got := m.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	in[0].Parents[0] = "changed"
	out := m.Ranges()
	out[1].Parents[0] = "changed too"
	if got := m.String(); got != want {
		t.Errorf("the map changed with its input or output: %s", got)
	}
}

func TestCheck(t *testing.T) {
	f := func(rs []Range, want string) {
		t.Helper()
		err := Map{ranges: rs}.Check()
		switch {
		case want == "" && err != nil:
			t.Errorf("%v: %v", rs, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%v: error %v, want one containing %q", rs, err, want)
		}
		if want != "" {
			if _, err := New(rs); err == nil {
				t.Errorf("New(%v) accepted a broken map", rs)
			}
		}
	}
	f([]Range{{ID: "0", Min: "", Max: "FF"}}, "")
	f([]Range{{ID: "0", Min: "", Max: "80"}, {ID: "1", Min: "80", Max: "FF"}}, "")
	// The last range holds every EPK above its Min, even past "FF".
	f([]Range{{ID: "0", Min: "", Max: "FF01"}, {ID: "1", Min: "FF01", Max: "FF"}}, "")
	f(nil, "no ranges")
	f([]Range{{ID: "0", Min: "00", Max: "FF"}}, `starts at "00"`)
	f([]Range{{ID: "0", Min: "", Max: "80"}}, `ends at "80"`)
	f([]Range{{ID: "0", Min: "", Max: "40"}, {ID: "1", Min: "80", Max: "FF"}}, `gap ["40", "80")`)
	f([]Range{{ID: "0", Min: "", Max: "80"}, {ID: "1", Min: "40", Max: "FF"}}, "overlap")
	f([]Range{{ID: "0", Min: "", Max: "80"}, {ID: "1", Min: "80", Max: "80"}, {ID: "2", Min: "80", Max: "FF"}}, "is empty")
	f([]Range{{ID: "0", Min: "", Max: "FF"}, {ID: "1", Min: "FF", Max: "FF"}}, "not its last range")
	f([]Range{{ID: "0", Min: "", Max: "80"}, {ID: "0", Min: "80", Max: "FF"}}, "appears twice")
	f([]Range{{ID: "", Min: "", Max: "FF"}}, "has no id")
}

func TestRoute(t *testing.T) {
	m := quarters(t)
	for e, want := range map[string]string{
		"":     "0",
		"00":   "0",
		"3FFF": "0",
		"40":   "1",
		"4000": "1",
		"7F":   "1",
		"80":   "2",
		"BF":   "2",
		"C0":   "3",
		"FE":   "3",
		"FF":   "3", // above every EPK: the last range
		"FF01": "3",
	} {
		if got := m.Route(e).ID; got != want {
			t.Errorf("Route(%q) = %s, want %s", e, got, want)
		}
	}
	one := Initial(hashV2, 1)
	for _, e := range []string{"", "3F", "FF", "FFFF"} {
		if got := one.Locate(e); got != 0 {
			t.Errorf("one range: Locate(%q) = %d", e, got)
		}
	}
}

func TestRouteEmptyMapPanics(t *testing.T) {
	defer func() {
		if x := recover(); x == nil || !strings.Contains(x.(string), "BUG:") {
			t.Errorf("recovered %v, want a BUG panic", x)
		}
	}()
	Map{}.Route("00")
}

func TestIndex(t *testing.T) {
	m := quarters(t)
	if i, ok := m.Index("2"); !ok || i != 2 {
		t.Errorf("Index(2) = %d, %v", i, ok)
	}
	if i, ok := m.Index("9"); ok || i != -1 {
		t.Errorf("Index(9) = %d, %v", i, ok)
	}
}

func TestSplit(t *testing.T) {
	m := quarters(t)
	before := m.String()
	m2, children, err := m.Split("1", []string{"50", "60"}, 4)
	if err != nil {
		t.Fatal(err)
	}
	want := `0 ["","40")
4 ["40","50") <- 1
5 ["50","60") <- 1
6 ["60","80") <- 1
2 ["80","C0")
3 ["C0","FF")`
	if got := m2.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if len(children) != 3 || children[0].ID != "4" || children[2].Max != "80" {
		t.Errorf("children %v", children)
	}
	if m.String() != before {
		t.Errorf("Split changed its map:\n%s", m)
	}
	// A second generation keeps the whole lineage, oldest first.
	m3, _, err := m2.Split("5", []string{"58"}, 7)
	if err != nil {
		t.Fatal(err)
	}
	if r := m3.Route("59"); r.ID != "8" || strings.Join(r.Parents, ",") != "1,5" {
		t.Errorf("Route(59) = %+v", r)
	}
	// No boundaries: the same range under a new id.
	m4, children, err := m.Split("3", nil, 4)
	if err != nil {
		t.Fatal(err)
	}
	if len(children) != 1 || m4.Route("D0").ID != "4" || m4.Route("D0").Max != "FF" {
		t.Errorf("split without boundaries: %v\n%s", children, m4)
	}
	if _, _, err := m.Split("9", nil, 4); !errors.Is(err, ErrNoRange) {
		t.Errorf("split of an unknown range: %v", err)
	}
	_, _, err = m.Split("1", []string{"90"}, 4)
	if err == nil || err.Error() != `split boundaries [90] are not inside range ["40", "80")` {
		t.Errorf("split outside the range: %v", err)
	}
}

func TestSplitBounds(t *testing.T) {
	f := func(r Range, bounds []string, want string) {
		t.Helper()
		all, err := SplitBounds(r, bounds)
		got := strings.Join(all, " ")
		if err != nil {
			got = "error"
		}
		if got != want {
			t.Errorf("SplitBounds([%q, %q), %q) = %s (%v), want %s", r.Min, r.Max, bounds, got, err, want)
		}
	}
	r := Range{ID: "1", Min: "40", Max: "80"}
	f(r, nil, "40 80")
	f(r, []string{"50"}, "40 50 80")
	f(r, []string{"50", "60"}, "40 50 60 80")
	f(r, []string{"40"}, "error")
	f(r, []string{"80"}, "error")
	f(r, []string{"60", "50"}, "error")
	f(r, []string{"50", "50"}, "error")
	f(r, []string{"30"}, "error")
	last := Range{ID: "3", Min: "C0", Max: "FF"}
	f(last, []string{"D0"}, "C0 D0 FF")
	f(last, []string{"FF01"}, "C0 FF01 FF") // MaxEPK stands for everything above
	f(last, []string{"FF"}, "error")
	f(last, []string{"B0"}, "error")
}

// TestRangeJSON pins the field names that the container record stores.
func TestRangeJSON(t *testing.T) {
	f := func(r Range, want string) {
		t.Helper()
		b, err := json.Marshal(r)
		if err != nil || string(b) != want {
			t.Errorf("json.Marshal(%+v) = %s, %v; want %s", r, b, err, want)
		}
		var back Range
		if err := json.Unmarshal(b, &back); err != nil || back.ID != r.ID || back.Min != r.Min || back.Max != r.Max || len(back.Parents) != len(r.Parents) {
			t.Errorf("round trip of %s: %+v, %v", b, back, err)
		}
	}
	f(Range{ID: "0", Min: "", Max: "FF"}, `{"id":"0","min":"","max":"FF"}`)
	f(Range{ID: "5", Min: "40", Max: "80", Parents: []string{"0", "2"}}, `{"id":"5","min":"40","max":"80","parents":["0","2"]}`)
}
