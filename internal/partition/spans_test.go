package partition

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/parsecdb/parsec/internal/epk"
)

// spansString renders spans as "<range id>:[min,max)" or "<range id>:=epk".
func spansString(m Map, ss []Span) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		if s.Point {
			parts[i] = fmt.Sprintf("%s:=%s", m.At(s.Index).ID, s.Min)
		} else {
			parts[i] = fmt.Sprintf("%s:[%s,%s)", m.At(s.Index).ID, s.Min, s.Max)
		}
	}
	return strings.Join(parts, " ")
}

func TestSpans(t *testing.T) {
	m := quarters(t)
	f := func(s Scope, want string) {
		t.Helper()
		ss, err := m.Spans(s)
		got := spansString(m, ss)
		if err != nil {
			got = "error: " + err.Error()
		}
		if got != want {
			t.Errorf("Spans(%+v)\n got %s\nwant %s", s, got, want)
		}
	}
	full := epk.FullRange()
	f(Scope{Range: full}, "0:[,40) 1:[40,80) 2:[80,C0) 3:[C0,FF)")
	f(Scope{Range: full, RangeID: "2"}, "2:[80,C0)")
	f(Scope{Range: full, RangeID: "9"}, `error: no such partition key range: "9"`)
	// A key prefix: [EPK, EPK+"FF").
	f(Scope{Range: epk.Range{Min: "4A", Max: "4AFF"}}, "1:[4A,4AFF)")
	f(Scope{Range: epk.Range{Min: "7F", Max: "7FFF"}}, "1:[7F,7FFF)")
	f(Scope{Range: epk.Range{Min: "C1", Max: "C1FF"}}, "3:[C1,C1FF)")
	f(Scope{Range: epk.Range{Min: "4A", Max: "4AFF"}, RangeID: "0"}, "")
	// A range across partitions.
	f(Scope{Range: epk.Range{Min: "50", Max: "90"}}, "1:[50,80) 2:[80,90)")
	f(Scope{Range: epk.Range{Min: "40", Max: "80"}}, "1:[40,80)")
	// A full key: one EPK.
	f(Scope{Range: epk.Range{Min: "8123", Max: "8123"}, Point: true}, "2:=8123")
	f(Scope{Range: epk.Range{Min: "C0", Max: "C0"}, Point: true}, "3:=C0")
	f(Scope{Range: epk.Range{Min: "8123", Max: "8123"}, Point: true, RangeID: "2"}, "2:=8123")
	f(Scope{Range: epk.Range{Min: "8123", Max: "8123"}, Point: true, RangeID: "1"}, "")
	f(Scope{Range: epk.Range{Min: "8123", Max: "8123"}, Point: true, RangeID: "9"}, `error: no such partition key range: "9"`)
	// Points: each in the range that holds it; an unknown range keeps none.
	f(Scope{Points: []string{"10", "3F", "41", "D0"}}, "0:=10 0:=3F 1:=41 3:=D0")
	f(Scope{Points: []string{"10", "3F", "41", "D0"}, RangeID: "0"}, "0:=10 0:=3F")
	f(Scope{Points: []string{"10"}, RangeID: "9"}, "")
}

func TestSpansFixed(t *testing.T) {
	m := Initial(hashV2, 1)
	ss, err := m.Spans(Scope{Range: epk.FullRange()})
	if err != nil || spansString(m, ss) != "0:[,FF)" {
		t.Errorf("got %s, %v", spansString(m, ss), err)
	}
	ss, err = m.Spans(Scope{Range: epk.Range{Min: "", Max: ""}, Point: true})
	if err != nil || spansString(m, ss) != "0:=" {
		t.Errorf("point: got %s, %v", spansString(m, ss), err)
	}
	if _, err := m.Spans(Scope{Range: epk.FullRange(), RangeID: "1"}); !errors.Is(err, ErrNoRange) {
		t.Errorf("unknown range: %v", err)
	}
}
