package partition

import (
	"fmt"

	"github.com/parsecdb/parsec/internal/epk"
)

// StorageSplitNeeded reports whether a partition holding bytes must split
// because it is past the storage limit. A limit of zero or less never
// splits, nor does a fixed container (one created without a partition key,
// which has one partition for ever).
func StorageSplitNeeded(bytes, limit int64, fixed bool) bool {
	return !fixed && limit > 0 && bytes > limit
}

// Logical is the stored size of a logical partition: the bytes of the
// items of one partition key value, at its EPK.
type Logical struct {
	EPK   string
	Bytes int64
}

// MedianBound returns the EPK at which a partition whose logical partitions
// are sizes splits so that each side holds about half of its bytes: the EPK
// of the first logical partition past the midpoint. sizes must be in EPK
// order; entries that share an EPK (distinct keys that hash alike) count as
// one logical partition, so the bound never cuts one. ok is false when the
// sizes hold fewer than two EPKs: the partition cannot split.
//
// The left side (EPKs below the bound) holds at least half of the bytes and
// loses that by giving up its last EPK, unless the midpoint is only reached
// at the last EPK, which then forms the right side alone.
func MedianBound(sizes []Logical) (bound string, ok bool) {
	type entry struct {
		epk   string
		bytes int64
	}
	var entries []entry
	var total int64
	for _, s := range sizes {
		if n := len(entries); n > 0 && entries[n-1].epk == s.EPK {
			entries[n-1].bytes += s.Bytes
		} else {
			entries = append(entries, entry{epk: s.EPK, bytes: s.Bytes})
		}
		total += s.Bytes
	}
	if len(entries) < 2 {
		return "", false
	}
	var acc int64
	for i, e := range entries {
		acc += e.bytes
		if acc*2 >= total {
			j := i + 1 // the right side starts after the entry that crosses the middle
			if j == len(entries) {
				j = len(entries) - 1
			}
			return entries[j].epk, true
		}
	}
	return entries[len(entries)-1].epk, true
}

// ThroughputSplit returns how many children each of n partitions splits
// into when the container's throughput becomes rus and one partition
// serves at most perPartition RU/s: the smallest power of two k with
// rus / (n·k) <= perPartition. 1 means no split. n and perPartition must be
// positive; ThroughputSplit panics otherwise.
func ThroughputSplit(rus, n, perPartition int) int {
	if n <= 0 || perPartition <= 0 {
		panic(fmt.Sprintf("BUG: partition.ThroughputSplit called with %d partitions of %d RU/s", n, perPartition))
	}
	k := 1
	for float64(rus)/float64(n*k) > float64(perPartition) {
		k *= 2
	}
	return k
}

// EvenBounds returns the k-1 interior boundaries that divide r into k
// children of equal width over def's hash domain (epk.Definition.SplitRange),
// for Map.Split. The error says why r cannot be divided so.
func EvenBounds(def epk.Definition, r Range, k int) ([]string, error) {
	sub, err := def.SplitRange(epk.Range{Min: r.Min, Max: r.Max}, k)
	if err != nil {
		return nil, err
	}
	bounds := make([]string, 0, k-1)
	for _, c := range sub[1:] {
		bounds = append(bounds, c.Min)
	}
	return bounds, nil
}
