package eval

import (
	"testing"

	"github.com/parsecdb/parsec/internal/query/parser"
)

var benchDoc = []byte(`{"id": "5741047452", "pk": "electronics", "name": "Joltage Kid's Vest", "price": 155.23478,
"tags": ["kids", "winter", "vest"], "stock": {"small": 15, "medium": 24, "large": 2},
"updated": "2024-05-06T07:08:09.1234567Z", "ratings": [4.5, 3, 5, 4], "active": true, "_ts": 1714979289}`)

func BenchmarkFromJSON(b *testing.B) {
	b.SetBytes(int64(len(benchDoc)))
	for b.Loop() {
		if _, err := FromJSON(benchDoc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendJSON(b *testing.B) {
	v, _ := FromJSON(benchDoc)
	buf := make([]byte, 0, 512)
	for b.Loop() {
		buf = v.AppendJSON(buf[:0])
	}
}

// BenchmarkEvalWhere evaluates a typical filter against one document.
func BenchmarkEvalWhere(b *testing.B) {
	e, err := parser.ParseExpr(`c.pk = "electronics" AND c.price BETWEEN 100 AND 200 AND ARRAY_CONTAINS(c.tags, "winter") AND STARTSWITH(c.name, "jolt", true)`)
	if err != nil {
		b.Fatal(err)
	}
	doc, _ := FromJSON(benchDoc)
	env := &Env{Vars: map[string]Value{"c": doc}}
	for b.Loop() {
		v, err := Eval(e, env)
		if err != nil || !v.AsBool() {
			b.Fatal(v, err)
		}
	}
}

// BenchmarkEvalWhereBudget is BenchmarkEvalWhere with a Budget counting
// steps and bytes: the cost of the counters.
func BenchmarkEvalWhereBudget(b *testing.B) {
	e, err := parser.ParseExpr(`c.pk = "electronics" AND c.price BETWEEN 100 AND 200 AND ARRAY_CONTAINS(c.tags, "winter") AND STARTSWITH(c.name, "jolt", true)`)
	if err != nil {
		b.Fatal(err)
	}
	doc, _ := FromJSON(benchDoc)
	budget := &Budget{MaxBytes: 1 << 30, Check: func() error { return nil }}
	env := &Env{Vars: map[string]Value{"c": doc}, Budget: budget}
	for b.Loop() {
		budget.ResetBytes()
		v, err := Eval(e, env)
		if err != nil || !v.AsBool() {
			b.Fatal(v, err)
		}
	}
}
