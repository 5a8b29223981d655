package partition

import (
	"fmt"

	"github.com/parsecdb/parsec/internal/epk"
)

// Scope is what a query reads, in EPKs: either single EPKs (Points), or an
// EPK range, optionally narrowed to one range of the map.
type Scope struct {
	// Points, when not empty, are the EPKs read, each alone (the items of
	// one EPK), ascending and distinct. Range and Point are then ignored.
	Points []string
	// Range is the EPK range read when there are no Points. Point says
	// that it is the single EPK Range.Min (a full partition key).
	Range epk.Range
	Point bool
	// RangeID, when set, keeps only what the range with this id holds. With
	// Points, a range id that is not in the map keeps nothing; with a
	// Range, it is an error wrapping ErrNoRange.
	RangeID string
}

// Span is the part of a scope that one range holds.
type Span struct {
	// Index is the range's position in the map.
	Index int
	// Point says that the span is the items of the single EPK Min.
	// Otherwise it is the EPKs [Min, Max), where Max epk.MaxEPK stands for
	// everything above Min.
	Point    bool
	Min, Max string
}

// Spans returns the spans of scope, range by range in EPK order: for
// Points, one span per point, in the range that holds it; for a Range, the
// intersection of the scope's range with each range of the map that it
// overlaps (a Point scope is one span, in the range that holds it). The
// map must not be empty.
func (m Map) Spans(s Scope) ([]Span, error) {
	if len(s.Points) > 0 {
		out := make([]Span, 0, len(s.Points))
		for _, e := range s.Points {
			i := m.Locate(e)
			if s.RangeID != "" && m.ranges[i].ID != s.RangeID {
				continue
			}
			out = append(out, Span{Index: i, Point: true, Min: e, Max: e})
		}
		return out, nil
	}
	first, last := 0, len(m.ranges)-1
	if s.RangeID != "" {
		i, ok := m.Index(s.RangeID)
		if !ok {
			return nil, fmt.Errorf("%w: %q", ErrNoRange, s.RangeID)
		}
		first, last = i, i
	}
	r := s.Range
	var out []Span
	for i := first; i <= last; i++ {
		pr := m.ranges[i]
		if s.Point {
			if pr.Min <= r.Min && (r.Min < pr.Max || pr.Max == epk.MaxEPK) {
				out = append(out, Span{Index: i, Point: true, Min: r.Min, Max: r.Min})
			}
			continue
		}
		lo, hi := max(pr.Min, r.Min), pr.Max
		if r.Max != epk.MaxEPK && (hi == epk.MaxEPK || r.Max < hi) {
			hi = r.Max
		}
		if hi != epk.MaxEPK && lo >= hi {
			continue
		}
		out = append(out, Span{Index: i, Min: lo, Max: hi})
	}
	return out, nil
}
