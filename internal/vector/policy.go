package vector

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// ErrInvalidPolicy is wrapped by every error that rejects a vector
// embedding policy, a vector index definition or a VectorDistance option.
// The API layer maps it to 400 Bad Request.
var ErrInvalidPolicy = errors.New("invalid vector policy")

// ErrInvalidVector is wrapped by every error that rejects a vector value:
// wrong dimensions, an element outside its data type, a non-number.
var ErrInvalidVector = errors.New("invalid vector")

// DataType is the element type of a vector embedding (the policy's
// dataType). The zero value is Float32, the service's default.
type DataType uint8

// The element types of the service's vector embedding policy.
const (
	Float32 DataType = iota
	Float16
	Int8
	Uint8
)

var dataTypeNames = [...]string{"float32", "float16", "int8", "uint8"}

// String returns the policy spelling of t ("float32", ...).
func (t DataType) String() string {
	if int(t) < len(dataTypeNames) {
		return dataTypeNames[t]
	}
	return fmt.Sprintf("DataType(%d)", uint8(t))
}

// ParseDataType reads a dataType, ignoring case (the policy spells it
// "float32", VectorDistance's options "Float32").
func ParseDataType(s string) (DataType, error) {
	for i, n := range dataTypeNames {
		if strings.EqualFold(s, n) {
			return DataType(i), nil
		}
	}
	return 0, fmt.Errorf("%w: unknown dataType %q (want float32, float16, int8 or uint8)", ErrInvalidPolicy, s)
}

// DistanceFunction is the similarity measure of a vector embedding (the
// policy's distanceFunction). The zero value is Cosine, the service's
// default.
type DistanceFunction uint8

// The distance functions of the service's vector embedding policy.
const (
	Cosine DistanceFunction = iota
	DotProduct
	Euclidean
)

var distanceNames = [...]string{"cosine", "dotproduct", "euclidean"}

// String returns the policy spelling of f ("cosine", ...).
func (f DistanceFunction) String() string {
	if int(f) < len(distanceNames) {
		return distanceNames[f]
	}
	return fmt.Sprintf("DistanceFunction(%d)", uint8(f))
}

// ParseDistanceFunction reads a distanceFunction, ignoring case.
func ParseDistanceFunction(s string) (DistanceFunction, error) {
	for i, n := range distanceNames {
		if strings.EqualFold(s, n) {
			return DistanceFunction(i), nil
		}
	}
	return 0, fmt.Errorf("%w: unknown distanceFunction %q (want cosine, dotproduct or euclidean)", ErrInvalidPolicy, s)
}

// IndexType is the type of a vector index (indexingPolicy.vectorIndexes[].type).
type IndexType uint8

// The vector index types of the service.
const (
	IndexFlat IndexType = iota
	IndexQuantizedFlat
	IndexDiskANN
)

var indexTypeNames = [...]string{"flat", "quantizedFlat", "diskANN"}

// String returns the policy spelling of t ("flat", "quantizedFlat", "diskANN").
func (t IndexType) String() string {
	if int(t) < len(indexTypeNames) {
		return indexTypeNames[t]
	}
	return fmt.Sprintf("IndexType(%d)", uint8(t))
}

// ParseIndexType reads a vector index type, ignoring case.
func ParseIndexType(s string) (IndexType, error) {
	for i, n := range indexTypeNames {
		if strings.EqualFold(s, n) {
			return IndexType(i), nil
		}
	}
	return 0, fmt.Errorf("%w: unknown vector index type %q (want flat, quantizedFlat or diskANN)", ErrInvalidPolicy, s)
}

// Limits and defaults, as the service documents them (sources in doc.go).
const (
	// MaxDimensions is the largest dimensions of an embedding and of a
	// quantizedFlat or diskANN index.
	MaxDimensions = 4096
	// MaxFlatDimensions is the largest dimensions a flat index accepts.
	MaxFlatDimensions = 505
	// DefaultDimensions is the policy's default dimensions.
	DefaultDimensions = 1536
	// MaxQuantizationByteSize bounds quantizationByteSize (and dimensions
	// bound it too: 1 to min(dimensions, 512)).
	MaxQuantizationByteSize = 512
	// MinIndexingSearchListSize and MaxIndexingSearchListSize bound
	// indexingSearchListSize; DefaultIndexingSearchListSize is its default.
	MinIndexingSearchListSize     = 25
	MaxIndexingSearchListSize     = 500
	DefaultIndexingSearchListSize = 100
	// MinListMultiplier and MaxListMultiplier bound searchListSizeMultiplier
	// and quantizedVectorListMultiplier; DefaultListMultiplier is their
	// default.
	MinListMultiplier     = 1
	MaxListMultiplier     = 100
	DefaultListMultiplier = 5
	// ScanThreshold is the number of vectors below which the service does
	// not use a quantizedFlat or diskANN index and scans instead: an engine
	// holding fewer vectors in a partition (or shard) than this should
	// answer with an exact scan.
	ScanThreshold = 1000
)

// UseIndex reports whether a partition (or shard) holding n vectors should
// be searched through its quantizedFlat or diskANN index rather than
// scanned exactly, as the service decides.
func UseIndex(n int) bool { return n >= ScanThreshold }

// MaxIndexDimensions returns the largest dimensions an index of type t
// accepts.
func MaxIndexDimensions(t IndexType) int {
	if t == IndexFlat {
		return MaxFlatDimensions
	}
	return MaxDimensions
}

// Embedding is one entry of a container's vectorEmbeddingPolicy.vectorEmbeddings.
type Embedding struct {
	Path             string
	DataType         DataType
	Dimensions       int
	DistanceFunction DistanceFunction
}

// IndexSpec is one entry of indexingPolicy.vectorIndexes. Zero values of
// the optional fields mean "not given".
type IndexSpec struct {
	Path                   string
	Type                   IndexType
	QuantizationByteSize   int
	IndexingSearchListSize int
	VectorIndexShardKey    []string
}

// checkPath validates a vector path: it starts with '/', has no empty
// segment, no wildcard and no array step, since the service indexes
// vectors only at concrete paths outside arrays.
func checkPath(what, p string) error {
	if p == "" {
		return fmt.Errorf("%w: %s path is empty", ErrInvalidPolicy, what)
	}
	if len(p) > 1024 {
		return fmt.Errorf("%w: %s path is longer than 1024 bytes", ErrInvalidPolicy, what)
	}
	if p[0] != '/' || p == "/" {
		return fmt.Errorf("%w: %s path %q must start with '/' and name a property", ErrInvalidPolicy, what, p)
	}
	for _, seg := range strings.Split(p[1:], "/") {
		switch {
		case seg == "":
			return fmt.Errorf("%w: %s path %q has an empty segment", ErrInvalidPolicy, what, p)
		case strings.ContainsAny(seg, "*?"):
			return fmt.Errorf("%w: %s path %q: wildcards are not allowed in vector paths", ErrInvalidPolicy, what, p)
		case strings.HasPrefix(seg, "[") || strings.HasSuffix(seg, "]"):
			return fmt.Errorf("%w: %s path %q: vector paths cannot be inside arrays", ErrInvalidPolicy, what, p)
		}
	}
	return nil
}

// ValidateEmbeddings checks a vectorEmbeddingPolicy's vectorEmbeddings:
// valid paths, each path at most once, dimensions from 1 to MaxDimensions.
// (Data types and distance functions are checked by their Parse functions.)
func ValidateEmbeddings(es []Embedding) error {
	seen := make(map[string]bool, len(es))
	for _, e := range es {
		if err := checkPath("vector embedding", e.Path); err != nil {
			return err
		}
		if seen[e.Path] {
			return fmt.Errorf("%w: vector embedding path %q appears more than once", ErrInvalidPolicy, e.Path)
		}
		seen[e.Path] = true
		if e.Dimensions < 1 || e.Dimensions > MaxDimensions {
			return fmt.Errorf("%w: vector embedding %q: dimensions %d must be between 1 and %d", ErrInvalidPolicy, e.Path, e.Dimensions, MaxDimensions)
		}
		if int(e.DataType) >= len(dataTypeNames) || int(e.DistanceFunction) >= len(distanceNames) {
			return fmt.Errorf("%w: vector embedding %q has an unknown dataType or distanceFunction", ErrInvalidPolicy, e.Path)
		}
	}
	return nil
}

// ValidateIndexes checks indexingPolicy.vectorIndexes against the
// container's embeddings: every index path is an embedding's path, at most
// one index per path, the embedding's dimensions within the index type's
// limit, and the options only where the type takes them and within range.
func ValidateIndexes(ixs []IndexSpec, es []Embedding) error {
	byPath := make(map[string]Embedding, len(es))
	for _, e := range es {
		byPath[e.Path] = e
	}
	seen := make(map[string]bool, len(ixs))
	for _, ix := range ixs {
		if err := checkPath("vector index", ix.Path); err != nil {
			return err
		}
		if seen[ix.Path] {
			return fmt.Errorf("%w: vector index path %q appears more than once", ErrInvalidPolicy, ix.Path)
		}
		seen[ix.Path] = true
		e, ok := byPath[ix.Path]
		if !ok {
			return fmt.Errorf("%w: vector index path %q is not in the container's vector embedding policy", ErrInvalidPolicy, ix.Path)
		}
		if int(ix.Type) >= len(indexTypeNames) {
			return fmt.Errorf("%w: vector index %q has an unknown type", ErrInvalidPolicy, ix.Path)
		}
		if max := MaxIndexDimensions(ix.Type); e.Dimensions > max {
			return fmt.Errorf("%w: vector index %q of type %s supports at most %d dimensions, the embedding has %d",
				ErrInvalidPolicy, ix.Path, ix.Type, max, e.Dimensions)
		}
		if ix.QuantizationByteSize != 0 {
			if ix.Type == IndexFlat {
				return fmt.Errorf("%w: vector index %q: quantizationByteSize applies only to quantizedFlat and diskANN indexes", ErrInvalidPolicy, ix.Path)
			}
			if max := min(e.Dimensions, MaxQuantizationByteSize); ix.QuantizationByteSize < 1 || ix.QuantizationByteSize > max {
				return fmt.Errorf("%w: vector index %q: quantizationByteSize %d must be between 1 and %d (min(dimensions, %d))",
					ErrInvalidPolicy, ix.Path, ix.QuantizationByteSize, max, MaxQuantizationByteSize)
			}
		}
		if ix.IndexingSearchListSize != 0 {
			if ix.Type != IndexDiskANN {
				return fmt.Errorf("%w: vector index %q: indexingSearchListSize applies only to diskANN indexes", ErrInvalidPolicy, ix.Path)
			}
			if ix.IndexingSearchListSize < MinIndexingSearchListSize || ix.IndexingSearchListSize > MaxIndexingSearchListSize {
				return fmt.Errorf("%w: vector index %q: indexingSearchListSize %d must be between %d and %d",
					ErrInvalidPolicy, ix.Path, ix.IndexingSearchListSize, MinIndexingSearchListSize, MaxIndexingSearchListSize)
			}
		}
		if len(ix.VectorIndexShardKey) > 0 {
			if ix.Type == IndexFlat {
				return fmt.Errorf("%w: vector index %q: vectorIndexShardKey applies only to quantizedFlat and diskANN indexes", ErrInvalidPolicy, ix.Path)
			}
			for _, k := range ix.VectorIndexShardKey {
				if err := checkPath("vectorIndexShardKey", k); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// DefaultQuantizationByteSize is the number of code bytes Parsec uses when
// an index does not give quantizationByteSize (the service chooses it
// itself and does not document how): one byte per four dimensions, at
// least min(dimensions, 8) and at most min(dimensions, 512). Each byte is
// one product-quantization subspace of 256 centroids.
func DefaultQuantizationByteSize(dimensions int) int {
	m := dimensions / 4
	m = max(m, min(dimensions, 8))
	return min(m, MaxQuantizationByteSize, dimensions)
}

// QueryOptions are VectorDistance's options that the indexes use. Zero
// values mean the defaults.
type QueryOptions struct {
	// SearchListSizeMultiplier scales diskANN's search list: L = k × it.
	SearchListSizeMultiplier int
	// QuantizedVectorListMultiplier scales the candidates quantizedFlat
	// re-ranks exactly: k × it.
	QuantizedVectorListMultiplier int
	// FilterPriority is accepted and validated (0 to 1); see doc.go for
	// what Parsec does with it.
	FilterPriority float64
}

// Validate checks the options' ranges.
func (o QueryOptions) Validate() error {
	if m := o.SearchListSizeMultiplier; m != 0 && (m < MinListMultiplier || m > MaxListMultiplier) {
		return fmt.Errorf("%w: searchListSizeMultiplier %d must be between %d and %d", ErrInvalidPolicy, m, MinListMultiplier, MaxListMultiplier)
	}
	if m := o.QuantizedVectorListMultiplier; m != 0 && (m < MinListMultiplier || m > MaxListMultiplier) {
		return fmt.Errorf("%w: quantizedVectorListMultiplier %d must be between %d and %d", ErrInvalidPolicy, m, MinListMultiplier, MaxListMultiplier)
	}
	if p := o.FilterPriority; math.IsNaN(p) || p < 0 || p > 1 {
		return fmt.Errorf("%w: filterPriority %v must be between 0.0 and 1.0", ErrInvalidPolicy, p)
	}
	return nil
}

func (o QueryOptions) searchMultiplier() int {
	if o.SearchListSizeMultiplier == 0 {
		return DefaultListMultiplier
	}
	return o.SearchListSizeMultiplier
}

func (o QueryOptions) quantizedMultiplier() int {
	if o.QuantizedVectorListMultiplier == 0 {
		return DefaultListMultiplier
	}
	return o.QuantizedVectorListMultiplier
}

// FromFloat64 converts a JSON array's numbers to a vector of data type t,
// checking that it has dims elements (dims > 0) and that every element is
// a value of t: a finite float32 for Float32, a finite half-precision
// value for Float16 (rounded to the nearest, so that distances are those
// of the stored precision), an integer from -128 to 127 for Int8 and from
// 0 to 255 for Uint8. Errors wrap ErrInvalidVector.
func FromFloat64(vals []float64, dims int, t DataType) ([]float32, error) {
	if dims > 0 && len(vals) != dims {
		return nil, fmt.Errorf("%w: %d elements, the policy says %d dimensions", ErrInvalidVector, len(vals), dims)
	}
	if len(vals) == 0 || len(vals) > MaxDimensions {
		return nil, fmt.Errorf("%w: %d elements (want 1 to %d)", ErrInvalidVector, len(vals), MaxDimensions)
	}
	out := make([]float32, len(vals))
	for i, x := range vals {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("%w: element %d is not a finite number", ErrInvalidVector, i)
		}
		switch t {
		case Float32:
			if math.Abs(x) > math.MaxFloat32 {
				return nil, fmt.Errorf("%w: element %d (%v) is outside float32", ErrInvalidVector, i, x)
			}
			out[i] = float32(x)
		case Float16:
			h, ok := roundHalf(x)
			if !ok {
				return nil, fmt.Errorf("%w: element %d (%v) is outside float16", ErrInvalidVector, i, x)
			}
			out[i] = h
		case Int8, Uint8:
			lo, hi := -128.0, 127.0
			if t == Uint8 {
				lo, hi = 0, 255
			}
			if x != math.Trunc(x) || x < lo || x > hi {
				return nil, fmt.Errorf("%w: element %d (%v) is not a %s (an integer from %v to %v)", ErrInvalidVector, i, x, t, lo, hi)
			}
			out[i] = float32(x)
		default:
			return nil, fmt.Errorf("%w: unknown data type %d", ErrInvalidVector, t)
		}
	}
	return out, nil
}

// roundHalf rounds x to the nearest IEEE 754 half-precision value (ties to
// even) and returns it as a float32; ok is false when x is beyond the
// largest half (65504) after rounding.
func roundHalf(x float64) (float32, bool) {
	const maxHalf = 65504
	ax := math.Abs(x)
	if ax == 0 {
		return float32(x), true
	}
	// The spacing of halves around ax: 2^(e-10) for normal numbers with
	// exponent e, 2^-24 for subnormals (e < -14).
	_, exp := math.Frexp(ax) // ax = f × 2^exp with f in [0.5, 1)
	e := max(exp-1, -14)
	ulp := math.Ldexp(1, e-10)
	r := math.RoundToEven(ax/ulp) * ulp
	if r > maxHalf {
		return 0, false
	}
	return float32(math.Copysign(r, x)), true
}
