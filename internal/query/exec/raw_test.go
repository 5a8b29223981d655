package exec

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/parsecdb/parsec/internal/query/eval"
)

// rawSliceSource is a sliceSource that also gives the documents' text: as
// AppendJSON writes it, or, for every third document, with a space added
// so that it is not canonical and must be decoded.
type rawSliceSource struct {
	sliceSource
	texts [][]byte
}

func newRawSliceSource(docs []doc) *rawSliceSource {
	s := &rawSliceSource{sliceSource: sliceSource{docs: docs}}
	for i, d := range docs {
		t := d.val.AppendJSON(nil)
		if i%3 == 2 {
			t = append([]byte{' '}, t...)
		}
		s.texts = append(s.texts, t)
	}
	return s
}

func (s *rawSliceSource) NextRaw() ([]byte, []byte, int, eval.Value, bool, error) {
	i := s.i
	key, val, ok, err := s.Next()
	if !ok || err != nil {
		return nil, nil, 0, eval.Value{}, ok, err
	}
	if size, canon := eval.CanonicalJSON(s.texts[i]); canon {
		return key, s.texts[i], size, eval.Value{}, true, nil
	}
	v, err := eval.FromJSON(s.texts[i])
	if err != nil {
		return nil, nil, 0, eval.Value{}, false, err
	}
	_ = val
	return key, nil, 0, v, true, nil
}

// TestExecJSONCopiesDocuments checks that ExecJSON over sources that give
// the documents' text returns, page by page, the same rows (as text) and
// the same continuations as ExecLimits over sources that give values, for
// queries whose rows are whole documents and for others.
func TestExecJSONCopiesDocuments(t *testing.T) {
	// Both sides read the values the text decodes to, as the engine does.
	var docs []doc
	for _, d := range loadDataset(t) {
		v, err := eval.FromJSON(d.val.AppendJSON(nil))
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, doc{key: d.key, val: v})
	}
	queries := []string{
		"SELECT * FROM c",
		"SELECT VALUE c FROM c",
		"SELECT VALUE r FROM root r",
		"SELECT TOP 7 * FROM c",
		"SELECT * FROM c OFFSET 3 LIMIT 11",
		"SELECT * FROM c WHERE c.id > 'a'",
		"SELECT c.id FROM c",
		"SELECT VALUE c.id FROM c",
	}
	for _, text := range queries {
		p, err := compile(text, "")
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		for _, nparts := range []int{1, 3} {
			parts := split(docs, nparts)
			for _, pageSize := range []int{1, 4, 1000} {
				for _, maxBytes := range []int{0, 300, 2000} {
					name := fmt.Sprintf("%s/parts=%d/page=%d/bytes=%d", text, nparts, pageSize, maxBytes)
					lim := &Limits{MaxPageBytes: maxBytes}
					var s1, s2 *State
					for page := 0; ; page++ {
						var plain, raw []Source
						for _, part := range parts {
							ps := &sliceSource{docs: part}
							plain = append(plain, ps)
							raw = append(raw, newRawSliceSource(part))
						}
						want, n1, err := ExecLimits(p, plain, s1, pageSize, lim)
						if err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						got, n2, err := ExecJSON(p, raw, s2, pageSize, lim)
						if err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						if len(got) != len(want) {
							t.Fatalf("%s page %d: %d rows, want %d", name, page, len(got), len(want))
						}
						for i := range want {
							if w := want[i].AppendJSON(nil); !bytes.Equal(got[i], w) {
								t.Fatalf("%s page %d row %d: %s, want %s", name, page, i, got[i], w)
							}
						}
						b1, _ := n1.MarshalBinary()
						b2, _ := n2.MarshalBinary()
						if !bytes.Equal(b1, b2) {
							t.Fatalf("%s page %d: state %s, want %s", name, page, n2, n1)
						}
						if n1.Done() {
							break
						}
						s1, s2 = n1, n2
					}
				}
			}
		}
	}
}

func TestIdentityPlans(t *testing.T) {
	for text, want := range map[string]bool{
		"SELECT * FROM c":                        true,
		"SELECT VALUE c FROM c":                  true,
		"SELECT TOP 3 * FROM c":                  true,
		"SELECT * FROM c WHERE c.a = 1":          false,
		"SELECT VALUE c.a FROM c":                false,
		"SELECT * FROM c ORDER BY c.a":           false,
		"SELECT DISTINCT VALUE c FROM c":         false,
		"SELECT * FROM c.a":                      false,
		"SELECT VALUE t FROM c JOIN t IN c.tags": false,
		"SELECT COUNT(1) FROM c":                 false,
	} {
		p, err := compile(text, "")
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		if got := p.identity(); got != want {
			t.Errorf("%s: identity %v, want %v", text, got, want)
		}
	}
}
