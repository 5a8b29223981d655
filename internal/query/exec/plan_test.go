package exec

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/parsecdb/parsec/internal/query/eval"
	"github.com/parsecdb/parsec/internal/query/parser"
)

const defaultQueryInfo = `{"distinctType": "None", "top": null, "offset": null, "limit": null,
	"orderBy": [], "orderByExpressions": [], "groupByExpressions": [], "groupByAliases": [],
	"aggregates": [], "groupByAliasToAggregateType": {}, "rewrittenQuery": "",
	"hasSelectValue": false, "dCountInfo": null, "hasNonStreamingOrderBy": false}`

// TestQueryPlan checks the plans of testdata/queryplans.txt, and that
// every rewritten query parses once its placeholder is replaced.
func TestQueryPlan(t *testing.T) {
	defaults, err := eval.FromJSON([]byte(defaultQueryInfo))
	if err != nil {
		t.Fatal(err)
	}
	ranges := []QueryRange{{Min: "", Max: "FF", IsMinInclusive: true}}
	for _, c := range parseGolden(t, "testdata/queryplans.txt") {
		t.Run(fmt.Sprintf("line%d", c.line), func(t *testing.T) {
			p, err := compile(c.query, c.params)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := p.QueryPlan(ranges)
			if c.err != "" {
				if err == nil || !errors.Is(err, ErrNotPlannable) || err.Error()[len(err.Error())-len(c.err):] != c.err {
					t.Fatalf("%s: want error %q, got %v", c.query, c.err, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", c.query, err)
			}
			plan, err := eval.FromJSON(raw)
			if err != nil {
				t.Fatalf("%s: plan is not JSON: %v\n%s", c.query, err, raw)
			}
			overrides, err := eval.FromJSON([]byte(c.expect))
			if err != nil {
				t.Fatalf("line %d: %v", c.line, err)
			}
			var members []eval.Member
			for i := range defaults.Len() {
				k, v := defaults.Member(i)
				if o, ok := overrides.Get(k); ok {
					v = o
				}
				members = append(members, eval.Member{Key: k, Value: v})
			}
			if overrides.Len() > 0 {
				for i := range overrides.Len() {
					if k, _ := overrides.Member(i); !defaults.Property(k).IsDefined() && k != "top" && k != "offset" && k != "limit" && k != "dCountInfo" {
						t.Fatalf("line %d: unknown field %s", c.line, k)
					}
				}
			}
			want := eval.ObjectValue(members)
			got := plan.Property("queryInfo")
			if !eval.Equal(got, want) {
				t.Errorf("%s\n got %s\nwant %s", c.query, got, want)
			}
			if v := plan.Property("partitionedQueryExecutionInfoVersion"); !eval.Equal(v, eval.IntValue(2)) {
				t.Errorf("version %s", v)
			}
			wantRanges := `[{"min": "", "max": "FF", "isMinInclusive": true, "isMaxInclusive": false}]`
			if r, _ := eval.FromJSON([]byte(wantRanges)); !eval.Equal(plan.Property("queryRanges"), r) {
				t.Errorf("queryRanges %s", plan.Property("queryRanges"))
			}
			if rq := got.Property("rewrittenQuery").AsString(); rq != "" {
				if _, err := parser.Parse(ReplaceOrderByFilter(rq)); err != nil {
					t.Errorf("rewritten query does not parse: %v\n%s", err, rq)
				}
			}
		})
	}
}

// TestRewrittenOrderByShape runs an ORDER BY query's rewritten form (the
// placeholder replaced by true, as the SDKs send it) on one partition: the
// rows are {orderByItems, payload} in ORDER BY order (the documents have no
// _rid here, so that member is absent).
func TestRewrittenOrderByShape(t *testing.T) {
	p, err := compile(`SELECT c.id FROM c WHERE c.kind = "fruit" ORDER BY c.n DESC`, "")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := p.QueryPlan(nil)
	if err != nil {
		t.Fatal(err)
	}
	plan, _ := eval.FromJSON(raw)
	text := ReplaceOrderByFilter(plan.Property("queryInfo").Property("rewrittenQuery").AsString())
	rp, err := compile(text, "")
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	rows, err := runPages(rp, [][]doc{loadDataset(t)}, 3, true, true)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"orderByItems":[{"item":10}],"payload":{"id":"d06"}},{"orderByItems":[{"item":8}],"payload":{"id":"d03"}},{"orderByItems":[{"item":7}],"payload":{"id":"d10"}}]`
	if len(rows) != 10 || rowsString(rows[:3]) != want {
		t.Errorf("%s\ngot %s", text, rowsString(rows))
	}
	if !bytes.Contains(raw, []byte(`"queryRanges":[]`)) {
		t.Errorf("nil ranges should give an empty list: %s", raw)
	}
}
