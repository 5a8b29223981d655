// Package partition holds a container's partition map and the decisions that
// change it: which physical partition an effective partition key (EPK) routes
// to, which partitions a query's EPK range touches, and where a partition
// splits. It is pure: no storage, no goroutines, no clock. The engine reads
// what it needs from storage (logical partition sizes, the stored map), calls
// these functions, and acts on the values they return; the tests need no
// store and no sleep.
//
// # Model
//
// A Map is the ordered list of a container's current Ranges. Each Range has
// an id, a half-open EPK interval [Min, Max) and the ids of the ranges it was
// split from (Parents, oldest first). Together the ranges cover "" … "FF"
// with no gap and no overlap: the first starts at epk.MinEPK, each ends where
// the next starts, and only the last ends at epk.MaxEPK, which stands for
// "everything above": Route sends any EPK at or past the last range's Min to
// it. Check states these rules; New refuses a list that breaks them.
//
// A Map is a value and never changes: Split returns a new Map with the
// children in place of their parent. The caller that owns the container
// (the engine, under its lock) swaps maps, so a reader holding an older map
// sees a consistent, if stale, routing table.
//
// Range carries the JSON field names of the container record (id, min, max,
// parents): the engine stores ranges in that record as they are, and the
// names are a stable on-disk format.
//
// # Routing
//
//   - Route(epk) is a binary search over the ranges' upper bounds.
//   - Spans(scope) lists, range by range in EPK order, the part of a query's
//     EPK range (or its single EPKs) that each range holds, optionally
//     narrowed to one range id. Turning spans into storage keys is the
//     caller's business.
//
// # Splits
//
// A split replaces one range by children that divide it at interior
// boundaries; the children get fresh ids (the container's next range id
// onward) and their parent's lineage. Three functions decide splits over
// explicit inputs:
//
//   - StorageSplitNeeded: a partition past the storage limit splits (a
//     container without a partition key never does);
//   - MedianBound: it splits at the EPK where half of its bytes lie on each
//     side, computed from the logical partition sizes in EPK order, and never
//     inside a logical partition (every logical partition has one EPK);
//   - ThroughputSplit and EvenBounds: raising a container's throughput past
//     what its partitions can serve splits every partition into the smallest
//     power of two of children of equal hash width that brings each to at
//     most the per-partition maximum, so scale-ups never leave 50/25/25
//     shares.
//
// The engine runs the split itself (sizing the children, committing the new
// record, starting their apply loops).
package partition
