package table

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/api/table/edm"
	"github.com/parsecdb/parsec/internal/api/table/filter"
)

// TestQueryMatchesFilter is a differential test of the two-step query:
// for random filters over entities whose properties vary in type from one
// entity to the next (and include NaN, infinities, characters on both
// sides of U+D800, missing properties), the server's answer, paged with
// random $top, is exactly the set filter.Eval selects from the entities
// as written. A prefilter that were not a superset of the matches, or
// paging that lost or repeated an entity, would fail it.
func TestQueryMatchesFilter(t *testing.T) {
	ts := newTestServer(t)
	ts.mustDo(t, 201, "POST", "/Tables", []byte(`{"TableName":"diff"}`))
	rng := rand.New(rand.NewSource(1))
	pks := []string{"a", "b", "ab", "é", "\ue000x", "😀", "B"}
	strs := []edm.Value{edm.StringValue(""), edm.StringValue("a"), edm.StringValue("ab"), edm.StringValue("b"), edm.StringValue("\ue000"), edm.StringValue("😀"), edm.StringValue("ä"), edm.StringValue("it's")}
	t0 := time.Date(2020, 1, 2, 3, 4, 5, 100, time.UTC)
	vals := map[string][]edm.Value{
		"S": strs,
		"N": {edm.Int32Value(-3), edm.Int32Value(0), edm.Int32Value(2), edm.Int32Value(7)},
		"D": {edm.DoubleValue(-1.5), edm.DoubleValue(0), edm.DoubleValue(2), edm.DoubleValue(2.5), edm.DoubleValue(math.NaN()), edm.DoubleValue(math.Inf(1)), edm.DoubleValue(math.Inf(-1))},
		"B": {edm.BooleanValue(false), edm.BooleanValue(true)},
		"T": {edm.DateTimeValue(t0), edm.DateTimeValue(t0.Add(time.Hour)), edm.DateTimeValue(time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC))},
		"G": {edm.GuidValue("0e9c5a3c-2b1f-4c7e-9a47-4f8c2e6d9b10"), edm.GuidValue("ffffffff-0000-0000-0000-000000000000")},
		"L": {edm.Int64Value(-1), edm.Int64Value(2), edm.Int64Value(1 << 60)},
		"Y": {edm.BinaryValue([]byte{1, 2}), edm.BinaryValue(nil)},
	}
	// X takes values of every type, one entity to the next.
	for _, k := range []string{"S", "N", "D", "B", "T", "G", "L"} {
		vals["X"] = append(vals["X"], vals[k]...)
	}
	names := []string{"S", "N", "D", "B", "T", "G", "L", "Y", "X"}
	type model struct {
		pk, rk string
		props  map[string]edm.Value
	}
	var ents []model
	for i := range 120 {
		m := model{pk: pks[rng.Intn(len(pks))], rk: fmt.Sprintf("r%03d", i), props: map[string]edm.Value{}}
		b := []byte(`{"PartitionKey":`)
		b = appendJSONString(b, m.pk)
		b = append(b, `,"RowKey":`...)
		b = appendJSONString(b, m.rk)
		for _, n := range names {
			if rng.Intn(4) == 0 {
				continue // missing
			}
			v := vals[n][rng.Intn(len(vals[n]))]
			m.props[n] = v
			b = appendProp(b, n, v, true)
		}
		b = append(b, '}')
		ts.mustDo(t, 201, "POST", "/diff", b)
		ents = append(ents, m)
	}
	// literal draws a literal, usually of the property's own types.
	literal := func(prop string) edm.Value {
		switch prop {
		case "PartitionKey", "RowKey":
			if rng.Intn(8) == 0 {
				return edm.Int32Value(1)
			}
			if prop == "PartitionKey" {
				return edm.StringValue(pks[rng.Intn(len(pks))])
			}
			return edm.StringValue(fmt.Sprintf("r%03d", rng.Intn(130)))
		case "Missing":
			return edm.StringValue("a")
		}
		if rng.Intn(6) == 0 {
			prop = names[rng.Intn(len(names))]
		}
		return vals[prop][rng.Intn(len(vals[prop]))]
	}
	props := append([]string{"PartitionKey", "PartitionKey", "RowKey", "Missing"}, names...)
	ops := []string{"eq", "ne", "gt", "ge", "lt", "le"}
	var gen func(depth int) string
	gen = func(depth int) string {
		if depth > 0 {
			switch rng.Intn(5) {
			case 0:
				return "(" + gen(depth-1) + ") and (" + gen(depth-1) + ")"
			case 1:
				return "(" + gen(depth-1) + ") or (" + gen(depth-1) + ")"
			case 2:
				return "not (" + gen(depth-1) + ")"
			}
		}
		p := props[rng.Intn(len(props))]
		return p + " " + ops[rng.Intn(len(ops))] + " " + filter.Literal(literal(p))
	}
	for i := 0; i < 250; i++ {
		text := gen(rng.Intn(4))
		expr, err := filter.Parse(text)
		if err != nil {
			continue // past the parser's limits
		}
		var want []string
		for _, m := range ents {
			if filter.Eval(expr, func(p string) (edm.Value, bool) {
				switch p {
				case "PartitionKey":
					return edm.StringValue(m.pk), true
				case "RowKey":
					return edm.StringValue(m.rk), true
				}
				v, ok := m.props[p]
				return v, ok
			}) {
				want = append(want, m.rk)
			}
		}
		got := queryAll(t, ts, "diff", text, 1+rng.Intn(40))
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("$filter=%s: the server returned %d entities %v, want %d %v", text, len(got), got, len(want), want)
		}
	}
}

// queryAll reads every page of a query and returns the RowKeys.
func queryAll(t *testing.T, ts *testServer, table, filterText string, top int) []string {
	t.Helper()
	var out []string
	q := url.Values{"$filter": {filterText}, "$top": {fmt.Sprint(top)}}
	for pages := 0; ; pages++ {
		if pages > 1000 {
			t.Fatal("the query never ended")
		}
		st, h, b := ts.do(t, "GET", "/"+table+"()?"+q.Encode(), nil, nil)
		if st != 200 {
			t.Fatalf("query %s: %d %s", filterText, st, b)
		}
		var page struct {
			Value []struct{ RowKey string } `json:"value"`
		}
		if err := json.Unmarshal(b, &page); err != nil {
			t.Fatal(err)
		}
		if len(page.Value) > top {
			t.Fatalf("a page of $top=%d holds %d", top, len(page.Value))
		}
		for _, e := range page.Value {
			out = append(out, e.RowKey)
		}
		npk, nrk := h.Get("x-ms-continuation-NextPartitionKey"), h.Get("x-ms-continuation-NextRowKey")
		if npk == "" && nrk == "" {
			return out
		}
		q.Set("NextPartitionKey", npk)
		q.Set("NextRowKey", nrk)
	}
}
