package throughput

// sizePoint is a published charge for an item of a given size.
type sizePoint struct {
	kb float64
	ru float64
}

// Cosmos DB's published charges by item size, in one region at session
// consistency (learn.microsoft.com/azure/cosmos-db/understand-request-unit-consumption,
// "Document size" table). The write column is the size-based part of a write:
// the same page prices a create as "5.0 (document size based) + 0.2 × 10
// (indexing)" for a 1 KB item with 10 indexed terms, so index terms come on
// top of it (IndexTermCharge).
var (
	readCurve = []sizePoint{
		{1, 1.00}, {2, 1.04}, {4, 1.14}, {8, 1.33}, {16, 1.67}, {32, 2.19},
		{64, 4.76}, {128, 9.95}, {256, 20.28}, {512, 40.95}, {1024, 145.9}, {2048, 291.8},
	}
	writeCurve = []sizePoint{
		{1, 4.95}, {2, 6.29}, {4, 6.67}, {8, 7.04}, {16, 9.52}, {32, 11.23},
		{64, 22.67}, {128, 48.19}, {256, 98.29}, {512, 184.57}, {1024, 625}, {2048, 1250},
	}
)

// interpolate returns the charge for size bytes on curve: flat below the first
// point, linear between points and beyond the last (Cosmos caps items at 2 MB,
// the last point, so extrapolation only serves oversized internal uses).
func interpolate(curve []sizePoint, size int) float64 {
	kb := float64(size) / 1024
	if kb <= curve[0].kb {
		return curve[0].ru
	}
	for i := 1; i < len(curve); i++ {
		if kb <= curve[i].kb || i == len(curve)-1 {
			a, b := curve[i-1], curve[i]
			return a.ru + (kb-a.kb)*(b.ru-a.ru)/(b.kb-a.kb)
		}
	}
	panic("BUG: unreachable")
}

// IndexTermCharge is the charge of adding or removing one index term: Cosmos
// DB's published figure ("0.2 × 10 (indexing)" for a 1 KB item with 10
// indexed terms). A container whose indexing mode is none has 0 terms; the
// engine counts the terms it writes under the container's policy
// (jsondoc.Terms estimates them for the default policy).
const IndexTermCharge = 0.2

// PatchOpCharge is the extra charge of a partial update per patched
// property, on top of the replace it amounts to (published: "0.4 × 2 (base
// charge for patch)" for two modified properties).
const PatchOpCharge = 0.4

// ReadCharge is the charge of a point read of an item of size bytes (session
// or eventual consistency): 1 RU up to 1 KB, then the published curve.
func ReadCharge(size int) float64 { return interpolate(readCurve, size) }

// writeSizeCharge is the size-based part of writing or deleting an item.
func writeSizeCharge(size int) float64 { return interpolate(writeCurve, size) }

// WriteCharge is the charge of creating an item of size bytes that has terms
// index terms. Cosmos's published write charges (1 KB ≈ 5 RU) are for items
// with default indexing, so they are taken to hold for an item with
// ReferenceTerms (10) index terms, the item of Microsoft's worked example;
// each term above or below that adds or removes IndexTermCharge, the per-term
// figure the same page gives. So a 1 KB item with 10 terms costs 4.95 RU, and
// the charge rises with both size and terms. A write is never cheaper than
// twice a read of the same size (indexing mode none, terms = 0, comes close).
//
// It is also the charge of an upsert; ReplaceCharge and PatchCharge price
// replaces and patches.
func WriteCharge(size, terms int) float64 {
	c := writeSizeCharge(size) + IndexTermCharge*float64(max(terms, 0)-ReferenceTerms)
	return max(c, 2*ReadCharge(size))
}

// ReferenceTerms is the number of index terms for which the published write
// charges hold.
const ReferenceTerms = 10

// DeleteCharge is the charge of deleting an item of size bytes that has terms
// index terms: the document is removed and each term is removed from the
// index, priced as a create (published: 7 RU for 1 KB and 10 terms).
func DeleteCharge(size, terms int) float64 { return WriteCharge(size, terms) }

// ReplaceCharge is the charge of replacing an item of oldSize bytes by a
// version of newSize bytes when changedTerms index terms differ between the
// two (terms added, removed or changed in value; each is removed and added):
// a delete plus an insert of the document, plus 2 × IndexTermCharge per
// changed term (published: 5.0 + 5.0 + 0.2 × 2 + 0.2 × 2 = 10.8 RU for 1 KB and
// two changed terms). When the changed terms are not known,
// |Terms(old) − Terms(new)| is a lower bound and Terms(old) + Terms(new) an
// upper bound.
func ReplaceCharge(oldSize, newSize, changedTerms int) float64 {
	return writeSizeCharge(oldSize) + writeSizeCharge(newSize) + 2*IndexTermCharge*float64(max(changedTerms, 0))
}

// PatchCharge is the charge of a partial update with ops operations: a
// replace plus PatchOpCharge per operation (published: 11.6 RU for 1 KB, two
// operations, two changed terms).
func PatchCharge(oldSize, newSize, changedTerms, ops int) float64 {
	return ReplaceCharge(oldSize, newSize, changedTerms) + PatchOpCharge*float64(max(ops, 0))
}

// FailedCharge is the charge of an operation that failed a check after
// reading the item (a conflict, a failed precondition, a missing item).
const FailedCharge = 1.0

// MetadataCharge is the charge of reading or changing a database, container
// or partition map.
const MetadataCharge = 1.0

// FeedCharge is the charge of a read-feed page of n items of total size
// bytes: n point reads of the average size, at least 1 RU (published: "five
// 1-KB documents through a feed consumes approximately the same RUs as
// reading those five documents individually").
func FeedCharge(n, size int) float64 {
	if n <= 0 {
		return 1
	}
	return max(1, ReadCharge(size/n)*float64(n))
}

// Query charge constants. Cosmos publishes no formula for queries; these are
// fitted to charges measured on Cosmos DB and published with the measurement
// (azure.courselabs.co/labs/cosmos-perf, 1,000 items of about 60 bytes):
//
//	index lookup, one item                       2.82 RU   model 2.81
//	SELECT * over all 1,000 items (58.6 KB)       7.46 RU   model 13.39
//	full scan with a filter, 1,000 items         18.59 RU   model 13.39
//	one item of about 60 KB (assumed size)        3.59 RU   model 3.41
//
// The two 1,000-item queries load the same items; the model prices loading and
// takes the middle (it cannot see what the filter costs).
const (
	// QueryBaseCharge is the fixed cost of executing a query page: parsing,
	// planning and answering. It is also the minimum query charge, matching
	// the ~2.8 RU Cosmos charges for a query that returns one small item.
	QueryBaseCharge = 2.8
	// QueryDocCharge is the cost of loading one item during a query.
	QueryDocCharge = 0.01
	// QueryKBCharge is the cost of loading 1 KB of items during a query.
	QueryKBCharge = 0.01
	// IndexEntryCharge is the cost of reading one index entry during a query.
	// No published anchor: an entry is a few dozen bytes, so it is priced at a
	// fifth of loading a small item.
	IndexEntryCharge = 0.002
)

// QueryCharge is the charge of executing one page of a query that loaded
// docsRead items of bytesRead bytes in total and read indexEntries index
// entries: QueryBaseCharge plus the work, so a query is charged for what it
// read rather than a flat fee. A query that loads many items is far cheaper
// per item than point reads of them, as on Cosmos.
func QueryCharge(docsRead, bytesRead, indexEntries int) float64 {
	return QueryBaseCharge +
		QueryDocCharge*float64(max(docsRead, 0)) +
		QueryKBCharge*float64(max(bytesRead, 0))/1024 +
		IndexEntryCharge*float64(max(indexEntries, 0))
}
