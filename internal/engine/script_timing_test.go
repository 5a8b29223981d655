package engine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/parsecdb/parsec/internal/query/parser"
)

// BenchmarkScripts measures the engine's side of server-side scripts next
// to what they replace, in a container of 4 partitions in memory:
//
//   - point-create: one 1 KB create (as BenchmarkWritePath);
//   - sproc-noop: a procedure that sets its response body and writes
//     nothing (a fresh runtime, the call, a snapshot);
//   - sproc-create: a procedure that creates one 1 KB document (the
//     script's overhead on top of point-create);
//   - query-plain and query-udf: a page of 100 documents of a query that
//     projects one property, without and with a UDF call per document.
func BenchmarkScripts(b *testing.B) {
	_, c := benchContainer(b)
	for _, s := range []struct {
		kind     ScriptKind
		id, body string
	}{
		{StoredProcedure, "noop", `function () { getContext().getResponse().setBody("ok"); }`},
		{StoredProcedure, "create", `function (doc) { var c = getContext().getCollection(); c.createDocument(c.getSelfLink(), doc); }`},
		{UserFunction, "tax", `function (n) { return n * 1.25; }`},
	} {
		if _, err := c.CreateScript(s.kind, ScriptSpec{ID: s.id, Body: s.body}); err != nil {
			b.Fatal(err)
		}
	}
	pad := strings.Repeat("x", 950)
	i := 0
	b.Run("point-create", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			pk := fmt.Sprint("p", i%1000)
			w, err := c.PrepareWrite(OpCreate, fmt.Appendf(nil, `{"id":"i%d","pk":%q,"n":%d,"pad":%q}`, i, pk, i, pad), key(pk), true)
			if err != nil {
				b.Fatal(err)
			}
			if _, _, err := c.Execute(&Command{Ops: []Op{w}}, ""); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("sproc-noop", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			pk := fmt.Sprint("p", i%1000)
			if _, err := c.ExecuteProcedure("noop", key(pk), true, nil, ScriptEnv{}); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("sproc-create", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			pk := fmt.Sprint("p", i%1000)
			args := fmt.Appendf(nil, `[{"id":"i%d","pk":%q,"n":%d,"pad":%q}]`, i, pk, i, pad)
			if _, err := c.ExecuteProcedure("create", key(pk), true, args, ScriptEnv{}); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	for _, q := range []struct{ name, text string }{
		{"query-plain", "SELECT VALUE c.n * 1.25 FROM c"},
		{"query-udf", "SELECT VALUE udf.tax(c.n) FROM c"},
	} {
		b.Run(q.name, func(b *testing.B) {
			b.ReportAllocs()
			ast, err := parser.Parse(q.text)
			if err != nil {
				b.Fatal(err)
			}
			var charge float64
			for b.Loop() {
				// A plan per page, as per request: the UDF pool is the plan's.
				plan, err := c.CompileQuery(ast, nil)
				if err != nil {
					b.Fatal(err)
				}
				page, err := c.Query(plan, QueryScope{}, nil, 100)
				if err != nil || len(page.Rows) != 100 {
					b.Fatal(err, len(page.Rows))
				}
				charge = page.Charge
			}
			b.ReportMetric(charge/100, "RU/doc")
		})
	}
}
