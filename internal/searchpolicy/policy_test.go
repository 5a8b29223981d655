package searchpolicy

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/parsecdb/parsec/internal/vector"
)

// The service's messages for rejected vector policies, as the SDKs' tests
// match them: azure-sdk-for-python sdk/cosmos/azure-cosmos/tests/
// test_vector_policy_async.py and azure-sdk-for-js
// test/public/functional/vectorEmbeddingPolicy.spec.ts (the "\/" of the
// path is the service's).
func TestParseErrors(t *testing.T) {
	emb := func(fields string) string {
		return `{"vectorEmbeddings":[{"path":"/vector1",` + fields + `}]}`
	}
	ok := `"dataType":"float32","dimensions":500,"distanceFunction":"euclidean"`
	for _, c := range []struct{ vec, text, idx, want string }{
		{"", "", `{"vectorIndexes":[{"path":"/vector1","type":"flat"}]}`, `Vector Indexing Policy's path::\/vector1 not matching in Embedding's path`},
		{emb(ok), "", `{"vectorIndexes":[{"path":"/vector2","type":"flat"}]}`, "vector2 not matching in Embedding's path"},
		{emb(ok), "", `{"vectorIndexes":[{"path":"/vector1","type":"notFlat"}]}`, "Index Type::notFlat is invalid"},
		{emb(`"dataType":"float33","dimensions":500,"distanceFunction":"euclidean"`), "", "", "Vector Embedding Policy has invalid DataType:float33"},
		{emb(`"dataType":"float32","dimensions":-1,"distanceFunction":"euclidean"`), "", "", "Vector Embedding Policy has invalid Dimensions:-1, it should be positive integer"},
		{emb(`"dataType":"float32","dimensions":1.5,"distanceFunction":"euclidean"`), "", "", "invalid Dimensions:1.5"},
		{emb(`"dataType":"float32","dimensions":5000,"distanceFunction":"euclidean"`), "", "", "Vector Embedding Policy has Dimensions:5000 which is more than max:4096"},
		{emb(`"dataType":"float32","dimensions":500,"distanceFunction":"handMeasured"`), "", "", "Vector Embedding Policy has invalid DistanceFunction:handMeasured"},
		// flat takes at most 505 dimensions; options only where the type takes them.
		{emb(`"dataType":"float32","dimensions":600,"distanceFunction":"cosine"`), "", `{"vectorIndexes":[{"path":"/vector1","type":"flat"}]}`, "at most 505 dimensions"},
		{emb(ok), "", `{"vectorIndexes":[{"path":"/vector1","type":"flat","quantizationByteSize":8}]}`, "quantizationByteSize applies only"},
		{emb(ok), "", `{"vectorIndexes":[{"path":"/vector1","type":"diskANN","indexingSearchListSize":5}]}`, "indexingSearchListSize 5 must be between 25 and 500"},
		{emb(ok), "", `{"vectorIndexes":[{"path":"/vector1","type":"diskANN","quantizationByteSize":0}]}`, "invalid quantizationByteSize:0"},
		{`{"vectorEmbeddings":[{"path":"/a/*","dimensions":3}]}`, "", "", "wildcards"},
		{`{"vectorEmbeddings":"x"}`, "", "", "The Vector Embedding Policy is not valid"},
		{"", `{"defaultLanguage":"en-US","fullTextPaths":[{"path":"/text","language":"en-US"}]}`, `{"fullTextIndexes":[{"path":"/title"}]}`, "/title"},
	} {
		_, err := Parse(json.RawMessage(c.vec), json.RawMessage(c.text), json.RawMessage(c.idx))
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%s, %s, %s) = %v, want an error containing %q", c.vec, c.text, c.idx, err, c.want)
		}
	}
}

func TestParseDefaultsAndSearch(t *testing.T) {
	p, err := Parse(json.RawMessage(`{"vectorEmbeddings":[{"path":"/e"},{"path":"/f","dataType":"INT8","dimensions":3,"distanceFunction":"DotProduct"}]}`),
		json.RawMessage(`{"defaultLanguage":"de-DE","fullTextPaths":[{"path":"/t","language":"en-US"}]}`),
		json.RawMessage(`{"vectorIndexes":[{"path":"/f","type":"quantizedflat"}],"fullTextIndexes":[{"path":"/t"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []vector.Embedding{
		{Path: "/e", DataType: vector.Float32, Dimensions: DefaultDimensions, DistanceFunction: vector.Cosine},
		{Path: "/f", DataType: vector.Int8, Dimensions: 3, DistanceFunction: vector.DotProduct},
	}
	if len(p.Embeddings) != 2 || p.Embeddings[0] != want[0] || p.Embeddings[1] != want[1] {
		t.Fatalf("embeddings %+v, want %+v", p.Embeddings, want)
	}
	if ix, ok := p.IndexFor("/f"); !ok || ix.Type != vector.IndexQuantizedFlat {
		t.Fatalf("index of /f: %+v %v", ix, ok)
	}
	s := p.Search()
	if s.Embeddings["/f"] != want[1] || s.Text == nil || len(s.Text.Indexed()) != 1 {
		t.Fatalf("search %+v", s)
	}
	if p, err := Parse(nil, nil, json.RawMessage(`{"indexingMode":"consistent"}`)); err != nil || p.Text != nil || len(p.Embeddings) != 0 {
		t.Fatalf("no policies: %+v %v", p, err)
	}
}

func TestCheckReplace(t *testing.T) {
	parse := func(vec, idx string) *Policies {
		t.Helper()
		p, err := Parse(json.RawMessage(vec), nil, json.RawMessage(idx))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	vec := `{"vectorEmbeddings":[{"path":"/v","dimensions":8},{"path":"/w","dimensions":8}]}`
	old := parse(vec, `{"vectorIndexes":[{"path":"/v","type":"diskANN","quantizationByteSize":4},{"path":"/w","type":"flat"}]}`)
	for _, c := range []struct {
		vec, idx string
		ok       bool
	}{
		{vec, `{"vectorIndexes":[{"path":"/w","type":"flat"},{"path":"/v","type":"diskANN","quantizationByteSize":4}]}`, true},
		// A client that does not carry the options sends the index without them.
		{vec, `{"vectorIndexes":[{"path":"/v","type":"diskANN"},{"path":"/w","type":"flat"}]}`, true},
		{vec, `{"vectorIndexes":[{"path":"/v","type":"diskANN","quantizationByteSize":5},{"path":"/w","type":"flat"}]}`, false},
		{vec, `{"vectorIndexes":[{"path":"/v","type":"quantizedFlat"},{"path":"/w","type":"flat"}]}`, false},
		{vec, `{"vectorIndexes":[{"path":"/v","type":"diskANN"}]}`, false},
		{`{"vectorEmbeddings":[{"path":"/v","dimensions":8}]}`, `{}`, false},
		{`{"vectorEmbeddings":[{"path":"/v","dimensions":8},{"path":"/w","dimensions":9}]}`, `{}`, false},
	} {
		err := CheckReplace(old, parse(c.vec, c.idx))
		if (err == nil) != c.ok {
			t.Errorf("%s %s: %v, want ok %v", c.vec, c.idx, err, c.ok)
		}
	}
}
