package exec

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/parsecdb/parsec/internal/binfmt"
	"github.com/parsecdb/parsec/internal/query/eval"
)

// State is where a query stands between two pages: the sort key of the
// last row the merge consumed (emitted, or skipped by OFFSET) and the
// OFFSET and LIMIT/TOP still to apply. It does not depend on how many
// partitions there are or how they are split: every partition resumes by
// filtering its rows to those strictly after that sort key, so a partition
// that split since the last page resumes correctly in both children. What
// the key is depends on the plan's shape:
//
//	Streaming        pos  = (document key, fan-out ordinal) of the last row consumed,
//	                        or (key of the last document read, wholeDoc)
//	Ordered          vals = its ORDER BY values, pos = (document key, fan-out ordinal)
//	Distinct         vals = [the row]
//	OrderedDistinct  vals = its ORDER BY values + [the row]; last = the last row emitted
//	Grouped          vals = the group key (GROUP BY values); with DISTINCT: [the row]
//	Aggregate        nothing: the only page ends the query
//	Ranked           vals = [the number of fused rows consumed]
//
// A nil *State is the start of the query. States are immutable values;
// each page returns a new one.
//
// The binary form (MarshalBinary; stable, version 1) is
//
//	+---------+-------------+-------+--------+-------+---------+---------+---------+--------+--------+
//	| version | fingerprint | flags | offset | limit | key len | key     | fan     | nvals  | vals.. | [last]
//	| 1 byte  | 8 bytes LE  | 1     | varint | varint| uvarint | bytes   | varint  | uvarint| values |
//	+---------+-------------+-------+--------+-------+---------+---------+---------+--------+--------+
//
// with flags 1 = done, 2 = started (a sort key is present), 4 = last is
// present, values as in codec.go, and the fingerprint a hash of the query
// text and parameters: a state is accepted only by a plan of the same
// query (UnmarshalState). The caller wraps it in its continuation token
// (with the container's identity) and must treat it as opaque.
type State struct {
	fp      uint64
	done    bool
	started bool
	pos     pos
	vals    []eval.Value
	last    eval.Value
	hasLast bool
	offset  int64 // rows still to skip
	limit   int64 // rows still to return, -1 for no limit
}

const stateVersion = 1

const (
	flagDone    = 1
	flagStarted = 2
	flagLast    = 4
)

// Start returns the state before the first page.
func (p *Plan) Start() *State {
	s := &State{fp: p.fp}
	s.offset, s.limit = p.top.limits()
	if s.limit == 0 {
		s.done = true
	}
	return s
}

// Done reports whether the query has no more rows.
func (s *State) Done() bool { return s != nil && s.done }

// Key is the source key of the state's position (see the table above),
// or nil before the first page. Sources that can read a partition in more
// than one order use it to keep reading in the order that produced it.
func (s *State) Key() []byte {
	if s == nil || !s.started {
		return nil
	}
	return s.pos.key
}

// MarshalBinary returns the binary form of s.
func (s *State) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, 64)
	b = append(b, stateVersion)
	b = binary.LittleEndian.AppendUint64(b, s.fp)
	var flags byte
	if s.done {
		flags |= flagDone
	}
	if s.started {
		flags |= flagStarted
	}
	if s.hasLast {
		flags |= flagLast
	}
	b = append(b, flags)
	b = binary.AppendVarint(b, s.offset)
	b = binary.AppendVarint(b, s.limit)
	b = binary.AppendUvarint(b, uint64(len(s.pos.key)))
	b = append(b, s.pos.key...)
	b = binary.AppendVarint(b, s.pos.fan)
	b = binary.AppendUvarint(b, uint64(len(s.vals)))
	for _, v := range s.vals {
		b = appendValue(b, v)
	}
	if s.hasLast {
		b = appendValue(b, s.last)
	}
	return b, nil
}

// UnmarshalState decodes a state made by MarshalBinary for a plan of the
// same query and parameters. Anything else, truncated or corrupt input
// included, is an error wrapping ErrBadContinuation.
func (p *Plan) UnmarshalState(b []byte) (*State, error) {
	d := &decoder{binfmt.NewReader(b, errCorrupt)}
	if v := d.Byte(); d.Err() == nil && v != stateVersion {
		return nil, badContinuation("unknown version %d", v)
	}
	s := &State{fp: d.uint64()}
	flags := d.Byte()
	s.done, s.started, s.hasLast = flags&flagDone != 0, flags&flagStarted != 0, flags&flagLast != 0
	s.offset = d.Varint()
	s.limit = d.Varint()
	s.pos.key = append([]byte(nil), d.Bytes()...)
	s.pos.fan = d.Varint()
	n := d.Count(1)
	for range n {
		s.vals = append(s.vals, d.value(0))
	}
	if s.hasLast {
		s.last = d.value(0)
	}
	switch {
	case d.Err() != nil:
		return nil, badContinuation("%v", d.Err())
	case d.Len() != 0:
		return nil, badContinuation("%d trailing bytes", d.Len())
	case s.fp != p.fp:
		return nil, badContinuation("the continuation belongs to another query")
	case flags&^(flagDone|flagStarted|flagLast) != 0, s.offset < 0, s.limit < -1, s.pos.fan < 0:
		return nil, badContinuation("bad header")
	case s.started && len(s.vals) != p.sortWidth():
		return nil, badContinuation("sort key of %d values, want %d", len(s.vals), p.sortWidth())
	}
	return s, nil
}

// sortWidth is the number of values in the sort key of a started state.
func (p *Plan) sortWidth() int {
	q := p.top
	switch p.shape {
	case Ordered:
		return len(q.orderBy)
	case Distinct:
		return 1
	case OrderedDistinct:
		return len(q.orderBy) + 1
	case Ranked:
		return 1
	case Grouped:
		if q.distinct {
			return 1
		}
		return len(q.groupBy)
	}
	return 0
}

// String describes s for tests and logs.
func (s *State) String() string {
	if s == nil {
		return "start"
	}
	var b strings.Builder
	if s.done {
		b.WriteString("done ")
	}
	fmt.Fprintf(&b, "offset=%d limit=%d", s.offset, s.limit)
	if s.started {
		fmt.Fprintf(&b, " after key=%q fan=%d", s.pos.key, s.pos.fan)
		for _, v := range s.vals {
			b.WriteString(" ")
			b.WriteString(v.String())
		}
	}
	if s.hasLast {
		b.WriteString(" last=")
		b.WriteString(s.last.String())
	}
	return b.String()
}

// after reports whether r's sort key comes strictly after the state's.
func (p *Plan) after(s *State, r *row) bool {
	return !s.started || p.cmpRows(r, p.sortRow(s)) > 0
}

// sortRow returns the state's sort key as a row.
func (p *Plan) sortRow(s *State) *row {
	r := &row{pos: s.pos}
	switch n := len(s.vals); p.shape {
	case Ordered:
		r.ord = s.vals
	case Distinct:
		r.val = s.vals[0]
	case OrderedDistinct:
		r.ord, r.val = s.vals[:n-1], s.vals[n-1]
	}
	return r
}

// setSortKey records r as the last row consumed.
func (p *Plan) setSortKey(s *State, r *row) {
	s.started = true
	s.pos = r.pos
	switch p.shape {
	case Ordered:
		s.vals = r.ord
	case Distinct:
		s.vals = []eval.Value{r.val}
	case OrderedDistinct:
		s.vals = append(append([]eval.Value(nil), r.ord...), r.val)
	default:
		s.vals = nil
	}
}
