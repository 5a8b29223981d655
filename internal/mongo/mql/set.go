package mql

import (
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// valueSet is a set of values under MongoDB equality (Compare == 0), bucketed by hashKey so that
// $addToSet, $pullAll, $in and $group stay linear in the number of values.
type valueSet struct {
	buckets map[string][]any
}

func newValueSet() *valueSet {
	return &valueSet{buckets: map[string][]any{}}
}

// add adds v and reports whether it was not in the set yet.
func (s *valueSet) add(v any) bool {
	k := hashKey(v)
	for _, x := range s.buckets[k] {
		if Compare(x, v) == 0 {
			return false
		}
	}
	s.buckets[k] = append(s.buckets[k], v)
	return true
}

func (s *valueSet) contains(v any) bool {
	for _, x := range s.buckets[hashKey(v)] {
		if Compare(x, v) == 0 {
			return true
		}
	}
	return false
}

// hashKey maps a value to a string such that values equal under Compare map to the same string
// (numbers by their float64 value, so 1, 1.0 and NumberDecimal("1") share a key); distinct values may
// share a key too, and group lookup then compares them exactly.
func hashKey(v any) string {
	var b strings.Builder
	writeHashKey(&b, v)
	return b.String()
}

func writeHashKey(b *strings.Builder, v any) {
	fmt.Fprintf(b, "%d:", bracket(v))
	switch x := v.(type) {
	case bson.D:
		b.WriteByte('{')
		for _, e := range x {
			b.WriteString(e.Key)
			b.WriteByte('=')
			writeHashKey(b, e.Value)
			b.WriteByte(',')
		}
		b.WriteByte('}')
	case bson.A:
		b.WriteByte('[')
		for _, e := range x {
			writeHashKey(b, e)
			b.WriteByte(',')
		}
		b.WriteByte(']')
	default:
		if isNumber(v) {
			f, _ := Float(v)
			switch {
			case isNaN(v):
				b.WriteString("NaN")
			case f == 0:
				b.WriteString("0") // -0 equals 0
			default:
				fmt.Fprintf(b, "%g", f)
			}
			return
		}
		if s, ok := regexTarget(v); ok {
			b.WriteString(s)
			return
		}
		fmt.Fprintf(b, "%v", v)
	}
}
