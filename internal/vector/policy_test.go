package vector

import (
	"errors"
	"strings"
	"testing"
)

// Limits from the service's documentation: flat indexes up to 505
// dimensions, quantizedFlat and diskANN up to 4096
// (learn.microsoft.com/azure/cosmos-db/nosql/vector-search, "Vector
// indexing policies"); quantizationByteSize from 1 to min(dimensions, 512)
// and indexingSearchListSize from 25 to 500, each only for the index types
// that use it (the JavaScript SDK's VectorIndex reference,
// learn.microsoft.com/javascript/api/@azure/cosmos/vectorindex).
func TestValidateIndexes(t *testing.T) {
	es := []Embedding{
		{Path: "/small", Dimensions: 505},
		{Path: "/wide", Dimensions: 506},
		{Path: "/huge", Dimensions: 4096, DataType: Int8, DistanceFunction: Euclidean},
		{Path: "/tiny", Dimensions: 8},
	}
	if err := ValidateEmbeddings(es); err != nil {
		t.Fatal(err)
	}
	ok := func(ix ...IndexSpec) {
		t.Helper()
		if err := ValidateIndexes(ix, es); err != nil {
			t.Errorf("ValidateIndexes(%+v) = %v, want nil", ix, err)
		}
	}
	bad := func(want string, ix ...IndexSpec) {
		t.Helper()
		err := ValidateIndexes(ix, es)
		if !errors.Is(err, ErrInvalidPolicy) || !strings.Contains(err.Error(), want) {
			t.Errorf("ValidateIndexes(%+v) = %v, want ErrInvalidPolicy mentioning %q", ix, err, want)
		}
	}
	ok(IndexSpec{Path: "/small", Type: IndexFlat})
	ok(IndexSpec{Path: "/wide", Type: IndexQuantizedFlat, QuantizationByteSize: 506})
	ok(IndexSpec{Path: "/huge", Type: IndexDiskANN, QuantizationByteSize: 512, IndexingSearchListSize: 500})
	ok(IndexSpec{Path: "/tiny", Type: IndexDiskANN, QuantizationByteSize: 8, IndexingSearchListSize: 25, VectorIndexShardKey: []string{"/tenant"}})
	bad("at most 505 dimensions", IndexSpec{Path: "/wide", Type: IndexFlat})
	bad("not in the container's vector embedding policy", IndexSpec{Path: "/nope", Type: IndexFlat})
	bad("more than once", IndexSpec{Path: "/small", Type: IndexFlat}, IndexSpec{Path: "/small", Type: IndexDiskANN})
	bad("between 1 and 512", IndexSpec{Path: "/huge", Type: IndexDiskANN, QuantizationByteSize: 513})
	bad("between 1 and 8", IndexSpec{Path: "/tiny", Type: IndexQuantizedFlat, QuantizationByteSize: 9})
	bad("between 1 and 505", IndexSpec{Path: "/small", Type: IndexQuantizedFlat, QuantizationByteSize: -1})
	bad("only to quantizedFlat and diskANN", IndexSpec{Path: "/small", Type: IndexFlat, QuantizationByteSize: 4})
	bad("only to diskANN", IndexSpec{Path: "/small", Type: IndexQuantizedFlat, IndexingSearchListSize: 100})
	bad("between 25 and 500", IndexSpec{Path: "/small", Type: IndexDiskANN, IndexingSearchListSize: 24})
	bad("between 25 and 500", IndexSpec{Path: "/small", Type: IndexDiskANN, IndexingSearchListSize: 501})
	bad("vectorIndexShardKey applies only", IndexSpec{Path: "/small", Type: IndexFlat, VectorIndexShardKey: []string{"/t"}})
	bad("wildcards", IndexSpec{Path: "/small/*", Type: IndexFlat})
	bad("unknown type", IndexSpec{Path: "/small", Type: IndexType(9)})
}

func TestValidateEmbeddings(t *testing.T) {
	bad := func(want string, es ...Embedding) {
		t.Helper()
		err := ValidateEmbeddings(es)
		if !errors.Is(err, ErrInvalidPolicy) || !strings.Contains(err.Error(), want) {
			t.Errorf("ValidateEmbeddings(%+v) = %v, want ErrInvalidPolicy mentioning %q", es, err, want)
		}
	}
	if err := ValidateEmbeddings([]Embedding{{Path: "/a/b", Dimensions: DefaultDimensions}, {Path: "/c", Dimensions: 1}}); err != nil {
		t.Fatal(err)
	}
	bad("dimensions 0", Embedding{Path: "/a"})
	bad("dimensions 4097", Embedding{Path: "/a", Dimensions: 4097})
	bad("more than once", Embedding{Path: "/a", Dimensions: 3}, Embedding{Path: "/a", Dimensions: 4})
	bad("must start with '/'", Embedding{Path: "a", Dimensions: 3})
	bad("is empty", Embedding{Path: "", Dimensions: 3})
	bad("empty segment", Embedding{Path: "/a//b", Dimensions: 3})
	bad("inside arrays", Embedding{Path: "/a/[]/b", Dimensions: 3})
	bad("wildcards", Embedding{Path: "/a/?", Dimensions: 3})
	bad("unknown dataType", Embedding{Path: "/a", Dimensions: 3, DataType: 7})
}

// searchListSizeMultiplier: Min=1, Default=5, Max=100
// (learn.microsoft.com/azure/cosmos-db/nosql/query/vectordistance);
// Parsec applies the same range to quantizedVectorListMultiplier, and
// filterPriority ranges from 0.0 to 1.0 (the options table of
// learn.microsoft.com/cosmos-db/query/vectordistance).
func TestQueryOptions(t *testing.T) {
	for _, o := range []QueryOptions{{}, {SearchListSizeMultiplier: 1}, {SearchListSizeMultiplier: 100, QuantizedVectorListMultiplier: 100, FilterPriority: 1}} {
		if err := o.Validate(); err != nil {
			t.Errorf("%+v: %v", o, err)
		}
	}
	for _, o := range []QueryOptions{{SearchListSizeMultiplier: -1}, {SearchListSizeMultiplier: 101}, {QuantizedVectorListMultiplier: 101}, {FilterPriority: 1.5}, {FilterPriority: -0.1}} {
		if err := o.Validate(); !errors.Is(err, ErrInvalidPolicy) {
			t.Errorf("%+v: got %v, want ErrInvalidPolicy", o, err)
		}
	}
	if (QueryOptions{}).searchMultiplier() != 5 || (QueryOptions{}).quantizedMultiplier() != 5 {
		t.Error("the default multipliers must be 5")
	}
}

func TestThresholdAndDefaults(t *testing.T) {
	// The service scans below 1,000 vectors (nosql/vector-search.md: the
	// quantizedFlat and diskANN indexes need at least 1,000 vectors).
	if UseIndex(999) || !UseIndex(1000) {
		t.Error("UseIndex must switch at 1,000 vectors")
	}
	for _, c := range []struct{ dims, want int }{{1, 1}, {5, 5}, {8, 8}, {64, 16}, {768, 192}, {1536, 384}, {4096, 512}} {
		if got := DefaultQuantizationByteSize(c.dims); got != c.want {
			t.Errorf("DefaultQuantizationByteSize(%d) = %d, want %d", c.dims, got, c.want)
		}
	}
}
