package partition

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/parsecdb/parsec/internal/epk"
)

// Range is one physical partition's range in the partition map: the EPKs
// from Min (inclusive) to Max (exclusive). The JSON field names are those
// of the stored container record and must not change.
type Range struct {
	ID  string `json:"id"`
	Min string `json:"min"`
	Max string `json:"max"`
	// Parents are the ids of the ranges this one was split from, oldest
	// first; empty for a range the container was created with.
	Parents []string `json:"parents,omitempty"`
}

// ErrNoRange means that a range id is not one of the map's current ranges.
var ErrNoRange = errors.New("no such partition key range")

// Map is a container's partition map: its current ranges, ordered by EPK,
// covering "" … "FF" with no gap or overlap (see Check). A Map is immutable
// and safe for concurrent use; the zero Map has no ranges and routes
// nothing.
type Map struct {
	ranges []Range
}

// New returns the map of the given ranges, in EPK order whatever their
// order in the list. It fails if they do not pass Check. The ranges are
// copied.
func New(ranges []Range) (Map, error) {
	rs := cloneRanges(ranges)
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].Min < rs[j].Min })
	m := Map{ranges: rs}
	if err := m.Check(); err != nil {
		return Map{}, err
	}
	return m, nil
}

// Initial returns the map of a new container: n ranges of equal width over
// the hash domain of def (epk.Definition.EvenRanges), with ids "0" … "n-1".
// n must be at least 1.
func Initial(def epk.Definition, n int) Map {
	even := def.EvenRanges(n)
	rs := make([]Range, len(even))
	for i, r := range even {
		rs[i] = Range{ID: strconv.Itoa(i), Min: r.Min, Max: r.Max}
	}
	return Map{ranges: rs}
}

// Len returns the number of ranges.
func (m Map) Len() int { return len(m.ranges) }

// At returns the i-th range in EPK order, 0 <= i < Len(). The caller must
// not modify its Parents.
func (m Map) At(i int) Range { return m.ranges[i] }

// Ranges returns a copy of the ranges in EPK order.
func (m Map) Ranges() []Range { return cloneRanges(m.ranges) }

// Locate returns the position of the range that holds e: the first range
// whose Max is above e, or the last range, which holds every EPK at or
// above its Min. It panics if the map is empty.
func (m Map) Locate(e string) int {
	n := len(m.ranges)
	if n == 0 {
		panic("BUG: partition.Map.Locate on an empty map")
	}
	return sort.Search(n-1, func(i int) bool { return m.ranges[i].Max > e })
}

// Route returns the range that holds e (see Locate).
func (m Map) Route(e string) Range { return m.ranges[m.Locate(e)] }

// Index returns the position of the range with the id, and whether there
// is one.
func (m Map) Index(id string) (int, bool) {
	for i := range m.ranges {
		if m.ranges[i].ID == id {
			return i, true
		}
	}
	return -1, false
}

// Check reports whether the map is a partition map: at least one range;
// the first starting at epk.MinEPK and only the last ending at epk.MaxEPK;
// each other range non-empty (Min < Max) and ending where the next starts;
// ids non-empty and distinct. The error names the first rule broken.
func (m Map) Check() error {
	rs := m.ranges
	if len(rs) == 0 {
		return errors.New("the partition map has no ranges")
	}
	if rs[0].Min != epk.MinEPK {
		return fmt.Errorf("the partition map starts at %q, not %q", rs[0].Min, epk.MinEPK)
	}
	last := len(rs) - 1
	if rs[last].Max != epk.MaxEPK {
		return fmt.Errorf("the partition map ends at %q, not %q", rs[last].Max, epk.MaxEPK)
	}
	ids := make(map[string]bool, len(rs))
	for i, r := range rs {
		if r.ID == "" {
			return fmt.Errorf("range %d [%q, %q) has no id", i, r.Min, r.Max)
		}
		if ids[r.ID] {
			return fmt.Errorf("range id %q appears twice in the partition map", r.ID)
		}
		ids[r.ID] = true
		if i == last {
			break
		}
		if r.Max == epk.MaxEPK {
			return fmt.Errorf("range %s [%q, %q) ends the partition map but is not its last range", r.ID, r.Min, r.Max)
		}
		if r.Min >= r.Max {
			return fmt.Errorf("range %s [%q, %q) is empty", r.ID, r.Min, r.Max)
		}
		if next := rs[i+1]; r.Max != next.Min {
			if r.Max < next.Min {
				return fmt.Errorf("the partition map has a gap [%q, %q) between ranges %s and %s", r.Max, next.Min, r.ID, next.ID)
			}
			return fmt.Errorf("ranges %s [%q, %q) and %s [%q, %q) overlap", r.ID, r.Min, r.Max, next.ID, next.Min, next.Max)
		}
	}
	return nil
}

// String renders the map one range a line, in EPK order, as
//
//	<id> ["<min>","<max>") <- <parent>,<parent>
//
// (the arrow only for a range with parents), for logs and golden tests.
func (m Map) String() string {
	var b strings.Builder
	for i, r := range m.ranges {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(r.ID)
		b.WriteString(" [")
		b.WriteString(strconv.Quote(r.Min))
		b.WriteByte(',')
		b.WriteString(strconv.Quote(r.Max))
		b.WriteByte(')')
		if len(r.Parents) > 0 {
			b.WriteString(" <- ")
			b.WriteString(strings.Join(r.Parents, ","))
		}
	}
	return b.String()
}

// Split returns the map with the range id replaced by children that divide
// it at the interior boundaries bounds (see SplitBounds), and the children.
// Child i gets the id strconv.Itoa(nextID+i) and the parents of the range
// followed by its id. No boundaries give one child: the same range under a
// new id. m is unchanged.
func (m Map) Split(id string, bounds []string, nextID int) (Map, []Range, error) {
	i, ok := m.Index(id)
	if !ok {
		return Map{}, nil, fmt.Errorf("%w: %q", ErrNoRange, id)
	}
	parent := m.ranges[i]
	all, err := SplitBounds(parent, bounds)
	if err != nil {
		return Map{}, nil, err
	}
	parents := append(slices.Clip(slices.Clone(parent.Parents)), parent.ID)
	children := make([]Range, len(all)-1)
	for j := range children {
		children[j] = Range{ID: strconv.Itoa(nextID + j), Min: all[j], Max: all[j+1], Parents: parents}
	}
	rs := make([]Range, 0, len(m.ranges)+len(children)-1)
	rs = append(rs, m.ranges[:i]...)
	rs = append(rs, children...)
	rs = append(rs, m.ranges[i+1:]...)
	out := Map{ranges: rs}
	if err := out.Check(); err != nil {
		return Map{}, nil, fmt.Errorf("cannot split range %s at %v: %w", id, bounds, err)
	}
	return out, cloneRanges(children), nil
}

// SplitBounds returns the boundaries of the children that split r at the
// interior boundaries bounds: r.Min, then bounds, then r.Max. Each boundary
// must lie strictly inside r and above the one before it; when r ends at
// epk.MaxEPK, which stands for everything above, a boundary may be any EPK
// above the previous one other than epk.MaxEPK itself.
func SplitBounds(r Range, bounds []string) ([]string, error) {
	all := make([]string, 0, len(bounds)+2)
	all = append(all, r.Min)
	all = append(all, bounds...)
	all = append(all, r.Max)
	for i := 1; i < len(all); i++ {
		lo, hi := all[i-1], all[i]
		inside := lo < hi
		if i == len(all)-1 && hi == epk.MaxEPK {
			inside = lo != epk.MaxEPK
		}
		if !inside {
			return nil, fmt.Errorf("split boundaries %v are not inside range [%q, %q)", bounds, r.Min, r.Max)
		}
	}
	return all, nil
}

func cloneRanges(rs []Range) []Range {
	if rs == nil {
		return nil
	}
	out := make([]Range, len(rs))
	for i, r := range rs {
		r.Parents = slices.Clone(r.Parents)
		out[i] = r
	}
	return out
}
