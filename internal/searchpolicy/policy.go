package searchpolicy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/parsecdb/parsec/internal/fulltext"
	"github.com/parsecdb/parsec/internal/query/eval"
	"github.com/parsecdb/parsec/internal/vector"
)

// ErrInvalid is wrapped by every error of Parse and CheckReplace: the
// request is a bad request (400), and the error's text is the message.
var ErrInvalid = errors.New("invalid search policy")

// Error is a rejected policy; its text is the message for the client.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

// Unwrap makes Error match ErrInvalid.
func (e *Error) Unwrap() error { return ErrInvalid }

func fail(format string, args ...any) error { return &Error{Msg: fmt.Sprintf(format, args...)} }

// MaxEmbeddings bounds the embeddings of one policy (and the vector
// indexes): the service documents no limit, this keeps input bounded.
const MaxEmbeddings = 64

// DefaultDimensions is the dimensions of an embedding that gives none
// (nosql/vector-search.md).
const DefaultDimensions = 1536

// Policies are a container's search policies, validated.
type Policies struct {
	Embeddings []vector.Embedding
	Indexes    []vector.IndexSpec
	// Text is the full-text policy with its indexes; nil when the
	// container has neither.
	Text *fulltext.Policy
}

func absent(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

// Parse validates a container's vectorEmbeddingPolicy, fullTextPolicy and
// indexingPolicy (any may be absent) together. Errors wrap ErrInvalid.
func Parse(vectorPolicy, fullTextPolicy, indexingPolicy json.RawMessage) (*Policies, error) {
	p := &Policies{}
	if !absent(vectorPolicy) {
		var in struct {
			Embeddings []struct {
				Path             *string      `json:"path"`
				DataType         *string      `json:"dataType"`
				Dimensions       *json.Number `json:"dimensions"`
				DistanceFunction *string      `json:"distanceFunction"`
			} `json:"vectorEmbeddings"`
		}
		if err := json.Unmarshal(vectorPolicy, &in); err != nil {
			return nil, fail("The Vector Embedding Policy is not valid: %v", err)
		}
		if len(in.Embeddings) > MaxEmbeddings {
			return nil, fail("The Vector Embedding Policy has %d embeddings; at most %d are allowed", len(in.Embeddings), MaxEmbeddings)
		}
		for _, e := range in.Embeddings {
			var emb vector.Embedding
			if e.Path == nil {
				return nil, fail("Vector Embedding Policy has an embedding without a path")
			}
			emb.Path = *e.Path
			emb.DataType = vector.Float32
			if e.DataType != nil {
				t, err := vector.ParseDataType(*e.DataType)
				if err != nil {
					return nil, fail("Vector Embedding Policy has invalid DataType:%s", *e.DataType)
				}
				emb.DataType = t
			}
			emb.DistanceFunction = vector.Cosine
			if e.DistanceFunction != nil {
				f, err := vector.ParseDistanceFunction(*e.DistanceFunction)
				if err != nil {
					return nil, fail("Vector Embedding Policy has invalid DistanceFunction:%s", *e.DistanceFunction)
				}
				emb.DistanceFunction = f
			}
			emb.Dimensions = DefaultDimensions
			if e.Dimensions != nil {
				n, err := e.Dimensions.Int64()
				if err != nil || n <= 0 {
					return nil, fail("Vector Embedding Policy has invalid Dimensions:%s, it should be positive integer", *e.Dimensions)
				}
				if n > vector.MaxDimensions {
					return nil, fail("Vector Embedding Policy has Dimensions:%d which is more than max:%d", n, vector.MaxDimensions)
				}
				emb.Dimensions = int(n)
			}
			p.Embeddings = append(p.Embeddings, emb)
		}
		if err := vector.ValidateEmbeddings(p.Embeddings); err != nil {
			return nil, fail("Vector Embedding Policy is invalid: %v", trim(err))
		}
	}
	if !absent(indexingPolicy) {
		var in struct {
			Vector []struct {
				Path                   *string      `json:"path"`
				Type                   *string      `json:"type"`
				QuantizationByteSize   *json.Number `json:"quantizationByteSize"`
				IndexingSearchListSize *json.Number `json:"indexingSearchListSize"`
				VectorIndexShardKey    []string     `json:"vectorIndexShardKey"`
			} `json:"vectorIndexes"`
		}
		if err := json.Unmarshal(indexingPolicy, &in); err != nil {
			return nil, fail("The indexing policy's vectorIndexes are not valid: %v", err)
		}
		if len(in.Vector) > MaxEmbeddings {
			return nil, fail("The indexing policy has %d vector indexes; at most %d are allowed", len(in.Vector), MaxEmbeddings)
		}
		byPath := map[string]bool{}
		for _, e := range p.Embeddings {
			byPath[e.Path] = true
		}
		for _, x := range in.Vector {
			var ix vector.IndexSpec
			if x.Path == nil {
				return nil, fail("Vector Indexing Policy has an index without a path")
			}
			ix.Path = *x.Path
			if x.Type == nil {
				return nil, fail("Vector Indexing Policy's path::%s has no index type", escapeSlashes(ix.Path))
			}
			t, err := vector.ParseIndexType(*x.Type)
			if err != nil {
				return nil, fail("Index Type::%s is invalid", *x.Type)
			}
			ix.Type = t
			if !byPath[ix.Path] {
				return nil, fail("Vector Indexing Policy's path::%s not matching in Embedding's path", escapeSlashes(ix.Path))
			}
			num := func(n *json.Number, what string) (int, error) {
				if n == nil {
					return 0, nil
				}
				v, err := n.Int64()
				if err != nil || v <= 0 || v > 1<<20 {
					return 0, fail("Vector Indexing Policy's path::%s has invalid %s:%s", escapeSlashes(ix.Path), what, *n)
				}
				return int(v), nil
			}
			if ix.QuantizationByteSize, err = num(x.QuantizationByteSize, "quantizationByteSize"); err != nil {
				return nil, err
			}
			if ix.IndexingSearchListSize, err = num(x.IndexingSearchListSize, "indexingSearchListSize"); err != nil {
				return nil, err
			}
			ix.VectorIndexShardKey = x.VectorIndexShardKey
			p.Indexes = append(p.Indexes, ix)
		}
		if err := vector.ValidateIndexes(p.Indexes, p.Embeddings); err != nil {
			return nil, fail("Vector Indexing Policy is invalid: %v", trim(err))
		}
	}
	text, err := fulltext.Compile(fullTextPolicy, indexingPolicy)
	if err != nil {
		return nil, fail("%v", err)
	}
	if !absent(fullTextPolicy) || text != nil && len(text.Paths) > 0 {
		p.Text = text
	}
	return p, nil
}

// trim drops the package prefix of a vector error ("invalid vector
// policy: ").
func trim(err error) string {
	return strings.TrimPrefix(err.Error(), vector.ErrInvalidPolicy.Error()+": ")
}

// escapeSlashes writes a path as the service's messages do ("\/vector1").
func escapeSlashes(p string) string { return strings.ReplaceAll(p, "/", `\/`) }

// CheckReplace reports what a container replace may not change: the
// vector embedding policy ("The vector embedding policy cannot be changed
// after creation", nosql/vector-search.md) and the vector indexes (the
// service: "Vector Indexing Policy cannot be changed in Collection
// Replace"). Indexes are compared by path and type, and by their options
// where the new policy gives them: clients whose types do not carry the
// options (the Go SDK's VectorIndex has path and type only) send them
// back without.
func CheckReplace(old, new *Policies) error {
	if !slices.Equal(old.Embeddings, new.Embeddings) {
		return fail("Vector Embedding Policy cannot be changed in Collection Replace")
	}
	if len(old.Indexes) != len(new.Indexes) {
		return fail("Vector Indexing Policy cannot be changed in Collection Replace")
	}
	for _, n := range new.Indexes {
		i := slices.IndexFunc(old.Indexes, func(o vector.IndexSpec) bool { return o.Path == n.Path })
		if i < 0 {
			return fail("Vector Indexing Policy cannot be changed in Collection Replace")
		}
		o := old.Indexes[i]
		if o.Type != n.Type ||
			n.QuantizationByteSize != 0 && n.QuantizationByteSize != o.QuantizationByteSize ||
			n.IndexingSearchListSize != 0 && n.IndexingSearchListSize != o.IndexingSearchListSize ||
			n.VectorIndexShardKey != nil && !slices.Equal(n.VectorIndexShardKey, o.VectorIndexShardKey) {
			return fail("Vector Indexing Policy cannot be changed in Collection Replace")
		}
	}
	return nil
}

// Search returns what the query layer's search functions need.
func (p *Policies) Search() *eval.Search {
	s := &eval.Search{Embeddings: make(map[string]vector.Embedding, len(p.Embeddings)), Text: p.Text}
	for _, e := range p.Embeddings {
		s.Embeddings[e.Path] = e
	}
	return s
}

// IndexFor returns the vector index on path, if any.
func (p *Policies) IndexFor(path string) (vector.IndexSpec, bool) {
	for _, ix := range p.Indexes {
		if ix.Path == path {
			return ix, true
		}
	}
	return vector.IndexSpec{}, false
}
