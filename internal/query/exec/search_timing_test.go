package exec

import (
	"encoding/json"
	"testing"
)

// BenchmarkSearchOrderBy compares a TOP 10 ORDER BY of a computed number
// with ORDER BY VectorDistance over stored 16-dimension vectors and with
// ORDER BY RANK FullTextScore, over 5,000 documents in 4 partitions.
func BenchmarkSearchOrderBy(b *testing.B) {
	t := &testing.T{}
	docs := searchDocs(t, 1, 5000, 16)
	parts := split(docs, 4)
	q := make([]float64, 16)
	for i := range q {
		q[i] = float64(i%5) / 5
	}
	qj, _ := json.Marshal(q)
	for _, c := range []struct{ name, query string }{
		{"computed", "SELECT TOP 10 c.id FROM c ORDER BY c.n * 0.5"},
		{"vector", "SELECT TOP 10 c.id FROM c ORDER BY VectorDistance(c.v, " + string(qj) + ")"},
		{"fulltext", `SELECT TOP 10 c.id FROM c ORDER BY RANK FullTextScore(c.text, "gamma", "delta")`},
	} {
		p, err := compile(c.query, "")
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				if _, err := runPages(p, parts, 0, false, true); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
