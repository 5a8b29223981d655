package throughput

// sizePoint is a published charge for an item of a given size.
type sizePoint struct {
	kb float64
	ru float64
}

// Cosmos's published charges for point reads and writes with default indexing
// (learn.microsoft.com/azure/cosmos-db/understand-request-unit-consumption).
var (
	readCurve  = []sizePoint{{1, 1.00}, {2, 1.04}, {4, 1.14}, {8, 1.33}, {16, 1.67}, {64, 4.76}, {1024, 145.9}}
	writeCurve = []sizePoint{{1, 4.95}, {2, 6.29}, {4, 6.67}, {8, 7.04}, {16, 9.52}, {64, 22.67}, {1024, 625}}
)

// interpolate returns the charge for size bytes on curve: flat below the first
// point, linear between points and beyond the last.
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

// ReadCharge is the charge of a point read of an item of size bytes.
func ReadCharge(size int) float64 { return interpolate(readCurve, size) }

// WriteCharge is the charge of creating, replacing, upserting or patching an
// item whose new version has size bytes.
func WriteCharge(size int) float64 { return interpolate(writeCurve, size) }

// DeleteCharge is the charge of deleting an item of size bytes: its index
// entries are removed as a write would add them.
func DeleteCharge(size int) float64 { return interpolate(writeCurve, size) }

// FailedCharge is the charge of an operation that failed a check after
// reading the item (a conflict, a failed precondition, a missing item).
const FailedCharge = 1.0

// MetadataCharge is the charge of reading or changing a database, container
// or partition map.
const MetadataCharge = 1.0

// FeedCharge is the charge of reading a page of n items of total size bytes.
func FeedCharge(n, size int) float64 {
	if n == 0 {
		return 1
	}
	c := ReadCharge(size/n) * float64(n) * 0.5 // sequential reads of one span are cheaper than point reads
	if c < 1 {
		c = 1
	}
	return c
}
