package advise

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/parsecdb/parsec/internal/epk"
	"github.com/parsecdb/parsec/synthkey"
)

// PartitionRange is one physical partition: an id and its EPK range.
type PartitionRange struct {
	ID  string
	Min string
	Max string
}

// EvenLayout returns the n ranges of equal hash width a new container with
// the definition d gets, with the ids "0" to "n-1", as the engine creates
// them.
func EvenLayout(d epk.Definition, n int) []PartitionRange {
	out := make([]PartitionRange, 0, n)
	for i, r := range d.EvenRanges(n) {
		out = append(out, PartitionRange{ID: strconv.Itoa(i), Min: r.Min, Max: r.Max})
	}
	return out
}

// locate returns the index of the range that holds the EPK e. The ranges
// are contiguous and in key order.
func locate(ranges []PartitionRange, e string) int {
	i := sort.Search(len(ranges), func(i int) bool { return e < ranges[i].Max })
	return min(i, len(ranges)-1)
}

// DefinitionFor returns the partition key definition under which a
// candidate's keys are hashed: a plain path is a Hash version 2 key on that
// path; a computed key (concat) is a string stored in one property, a Hash
// version 2 key on a path of the container's choosing (shown as
// /partitionKey); a hierarchical key is MultiHash version 2 with a path per
// level (the level's own path when it is a plain path, /partitionKeyN for a
// computed level).
func DefinitionFor(e *synthkey.Expr) epk.Definition {
	if e.Levels() == 1 {
		if e.IsPath() {
			return epk.Definition{Kind: epk.Hash, Version: 2, Paths: e.Paths()}
		}
		return epk.Definition{Kind: epk.Hash, Version: 2, Paths: []string{"/partitionKey"}}
	}
	return epk.Definition{Kind: epk.MultiHash, Version: 2, Paths: levelPaths(e)}
}

// levelPaths names the path of each level of a hierarchical key: the
// level's own base path when the level is a plain path, /partitionKeyN
// otherwise. A plain-path level returns its base value unchanged (numbers
// stay numbers) while a computed level always returns a string, so
// computing the key from the base values 1, 2, 3, ... tells them apart.
func levelPaths(e *synthkey.Expr) []string {
	paths := e.Paths()
	base := make([]any, len(paths))
	for i := range base {
		base[i] = float64(i + 1)
	}
	out := make([]string, e.Levels())
	keys, err := e.Expand(base)
	for i := range out {
		out[i] = fmt.Sprintf("/partitionKey%d", i+1)
		if err != nil || len(keys) == 0 {
			continue
		}
		if f, ok := keys[0][i].(float64); ok && f >= 1 && int(f) <= len(paths) {
			out[i] = paths[int(f)-1]
		}
	}
	return out
}

// keyID is a compact identity of a key (its components, typed), used as a
// map key.
func keyID(k []any) string {
	var b []byte
	for _, c := range k {
		switch x := c.(type) {
		case string:
			b = append(b, 's')
			b = binary.AppendUvarint(b, uint64(len(x)))
			b = append(b, x...)
		case float64:
			b = append(b, 'n')
			b = binary.BigEndian.AppendUint64(b, math.Float64bits(x))
		case bool:
			if x {
				b = append(b, 't')
			} else {
				b = append(b, 'f')
			}
		case nil:
			b = append(b, 'z')
		default:
			b = append(b, 'u')
		}
	}
	return string(b)
}

// isUndefined reports whether a key component is the undefined value.
func isUndefined(v any) bool { return v == any(synthkey.Undefined) }

// showKey renders a key for people: a one-level string as itself, other
// one-level values as JSON (undefined as "(undefined)"), a hierarchical key
// as a JSON array.
func showKey(k synthkey.Key) string {
	if len(k) == 1 {
		switch x := k[0].(type) {
		case string:
			return x
		case nil:
			return "null"
		}
		if isUndefined(k[0]) {
			return "(undefined)"
		}
		return strings.TrimSuffix(strings.TrimPrefix(k.String(), "["), "]")
	}
	return k.String()
}

// typeOrder orders component types as Cosmos DB sorts values: undefined,
// null, booleans, numbers, strings.
func typeOrder(v any) int {
	switch x := v.(type) {
	case nil:
		return 1
	case bool:
		if x {
			return 3
		}
		return 2
	case float64:
		return 4
	case string:
		return 5
	}
	return 0
}

// compareKeys orders keys level by level in the values' natural order.
func compareKeys(a, b synthkey.Key) int {
	for i := range min(len(a), len(b)) {
		ta, tb := typeOrder(a[i]), typeOrder(b[i])
		if c := cmp.Compare(ta, tb); c != 0 {
			return c
		}
		switch x := a[i].(type) {
		case float64:
			if c := cmp.Compare(x, b[i].(float64)); c != 0 {
				return c
			}
		case string:
			if c := strings.Compare(x, b[i].(string)); c != 0 {
				return c
			}
		}
	}
	return cmp.Compare(len(a), len(b))
}
