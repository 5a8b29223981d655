package mql

import (
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// maxSortKeys bounds the number of fields in a sort specification (mongod allows 32 in a compound
// index; a sort may name a few more, but not thousands).
const maxSortKeys = 64

// Sort is a parsed sort specification. It is immutable and safe for concurrent use.
type Sort struct {
	keys []sortKey
}

type sortKey struct {
	path []string
	dir  int // +1 ascending, -1 descending
}

// ParseSort parses a sort specification such as {a: 1, b: -1}. An array field sorts by its smallest
// element ascending and by its largest element descending, as MongoDB does; a missing field sorts as
// null and an empty array below null. A malformed specification yields an *Error.
func ParseSort(s bson.D) (*Sort, error) {
	if len(s) > maxSortKeys {
		return nil, badValue("sort specification has more than %d fields", maxSortKeys)
	}
	out := &Sort{}
	seen := map[string]bool{}
	for _, e := range s {
		if e.Key == "" {
			return nil, newError(40352, "FieldPath cannot be constructed with empty string")
		}
		if e.Key == "$natural" {
			// Storage order: the caller's order, which a stable sort keeps.
			if n, ok := wholeNumber(e.Value); !ok || (n != 1 && n != -1) {
				return nil, newError(15975, "$sort key ordering must be 1 (for ascending) or -1 (for descending)")
			}
			continue
		}
		if strings.HasPrefix(e.Key, "$") {
			return nil, newError(16410, "FieldPath field names may not start with '$'. Consider using $getField or $setField.")
		}
		for _, p := range strings.Split(e.Key, ".") {
			if p == "" {
				return nil, newError(15998, "FieldPath field names may not be empty strings.")
			}
		}
		if seen[e.Key] {
			return nil, badValue("sort specification has the field %q twice", e.Key)
		}
		seen[e.Key] = true
		if d, ok := e.Value.(bson.D); ok {
			if len(d) == 0 || d[0].Key != "$meta" {
				return nil, newError(17312, "$meta is the only expression supported by $sort right now")
			}
			return nil, badValue("$meta sort is not supported")
		}
		n, ok := wholeNumber(e.Value)
		if !isNumber(e.Value) {
			return nil, newError(15974, "Illegal key in $sort specification: %s: %s", e.Key, formatValue(e.Value))
		}
		if !ok || (n != 1 && n != -1) {
			return nil, newError(15975, "$sort key ordering must be 1 (for ascending) or -1 (for descending)")
		}
		out.keys = append(out.keys, sortKey{path: strings.Split(e.Key, "."), dir: int(n)})
	}
	return out, nil
}

// Compare orders two documents by the specification and returns -1, 0 or +1. Documents equal on all
// sort keys compare 0 (callers use a stable sort to keep their input order).
func (s *Sort) Compare(a, b bson.D) int {
	if s == nil {
		return 0
	}
	for _, k := range s.keys {
		ka, kb := sortKeyValue(a, k), sortKeyValue(b, k)
		if c := Compare(ka, kb); c != 0 {
			return c * k.dir
		}
	}
	return 0
}

// sortKeyValue returns the value a document sorts by for one key: the smallest (ascending) or largest
// (descending) of the values the path reaches, arrays contributing their elements; null if the path
// is missing on some branch; undefined (below null) for an empty array.
func sortKeyValue(doc bson.D, k sortKey) any {
	var best any
	have := false
	consider := func(v any) {
		if !have {
			best, have = v, true
			return
		}
		if c := Compare(v, best); c*k.dir < 0 {
			best = v
		}
	}
	walkPath(doc, k.path, func(v any, miss bool) {
		if miss {
			consider(nil)
			return
		}
		if a, ok := v.(bson.A); ok {
			if len(a) == 0 {
				consider(bson.Undefined{})
				return
			}
			for _, el := range a {
				consider(el)
			}
			return
		}
		consider(v)
	})
	if !have {
		return nil
	}
	return best
}
