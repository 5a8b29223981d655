package exec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/parsecdb/parsec/internal/query/ast"
	"github.com/parsecdb/parsec/internal/query/eval"
)

// OrderByFilter is the placeholder of an ORDER BY rewritten query's WHERE
// clause. An SDK replaces it with "true" (or, resuming, with a filter of
// its own) before sending the query to a partition.
const OrderByFilter = "{documentdb-formattableorderbyquery-filter}"

// ReplaceOrderByFilter replaces the ORDER BY placeholder of a rewritten
// query by true, as the SDKs do, so that a client that sends the rewritten
// text unchanged still gets a query that parses.
func ReplaceOrderByFilter(text string) string {
	return strings.ReplaceAll(text, OrderByFilter, "true")
}

// QueryRange is one range of effective partition keys that a query covers,
// as the query plan reports it (hex EPK strings, "" to "FF" for all).
type QueryRange struct {
	Min            string `json:"min"`
	Max            string `json:"max"`
	IsMinInclusive bool   `json:"isMinInclusive"`
	IsMaxInclusive bool   `json:"isMaxInclusive"`
}

type queryPlanJSON struct {
	Version     int           `json:"partitionedQueryExecutionInfoVersion"`
	QueryInfo   queryInfoJSON `json:"queryInfo"`
	QueryRanges []QueryRange  `json:"queryRanges"`
	Hybrid      *hybridJSON   `json:"hybridSearchQueryInfo"`
}

// hybridJSON is the hybridSearchQueryInfo of an ORDER BY RANK query, as
// the JavaScript SDK 4.10 reads it (hybridQueryExecutionContext.ts).
type hybridJSON struct {
	GlobalStatisticsQuery    string          `json:"globalStatisticsQuery"`
	ComponentQueryInfos      []queryInfoJSON `json:"componentQueryInfos"`
	ComponentWeights         []float64       `json:"componentWeights"`
	Skip                     *int64          `json:"skip"`
	Take                     *int64          `json:"take"`
	RequiresGlobalStatistics bool            `json:"requiresGlobalStatistics"`
}

type queryInfoJSON struct {
	DistinctType                string             `json:"distinctType"`
	Top                         *int64             `json:"top"`
	Offset                      *int64             `json:"offset"`
	Limit                       *int64             `json:"limit"`
	OrderBy                     []string           `json:"orderBy"`
	OrderByExpressions          []string           `json:"orderByExpressions"`
	GroupByExpressions          []string           `json:"groupByExpressions"`
	GroupByAliases              []string           `json:"groupByAliases"`
	Aggregates                  []string           `json:"aggregates"`
	GroupByAliasToAggregateType map[string]*string `json:"groupByAliasToAggregateType"`
	RewrittenQuery              string             `json:"rewrittenQuery"`
	HasSelectValue              bool               `json:"hasSelectValue"`
	DCountInfo                  *struct{}          `json:"dCountInfo"`
	HasNonStreamingOrderBy      bool               `json:"hasNonStreamingOrderBy"`
}

// aggregateTypes are the names of the aggregates in a query plan.
var aggregateTypes = [...]string{
	eval.AggCount: "Count", eval.AggSum: "Sum", eval.AggAvg: "Average",
	eval.AggMin: "Min", eval.AggMax: "Max", eval.AggCountIf: "CountIf", eval.AggMakeList: "MakeList", eval.AggMakeSet: "MakeSet",
}

// QueryPlan returns the query plan (PartitionedQueryExecutionInfo, version
// 2) that the JS SDK asks for before running a query across partitions,
// with ranges as its queryRanges. The plan says how the SDK must merge the
// partitions' results (orderBy, aggregates, groupBy*, distinctType, top,
// offset, limit) and gives the rewrittenQuery to send to each partition,
// in the shapes of Cosmos DB's own planner:
//
//   - ORDER BY: SELECT [TOP n] c._rid, [{"item": k1}, ...] AS orderByItems,
//     <projection> AS payload FROM ... WHERE ({documentdb-formattableorderbyquery-filter})
//     ORDER BY ..., with the query's own WHERE ANDed in front, IS_DEFINED of
//     the value ANDed behind for SELECT VALUE, and OFFSET 0 LIMIT offset+limit;
//   - aggregates: SELECT VALUE [{"item": AGG(x)}] (AVG as {"sum", "count"},
//     MIN and MAX with "item2": {"min"/"max", "count"}); without VALUE,
//     SELECT {"alias": {"item": ...}, ...} AS payload;
//   - GROUP BY: SELECT [{"item": g1}, ...] AS groupByItems, <payload> AS
//     payload ... GROUP BY ...;
//   - OFFSET/LIMIT without ORDER BY: OFFSET 0 LIMIT offset+limit; DISTINCT,
//     aggregates and GROUP BY drop TOP, OFFSET and LIMIT, which the SDK
//     applies; otherwise the rewrittenQuery is "" (send the query as is).
//
// An aggregate composed with other expressions (SELECT VALUE COUNT(1) + 1,
// SELECT ABS(AVG(c.n))) cannot be merged by the SDKs: the error wraps
// ErrNotPlannable, as Cosmos DB refuses to plan it. A query without FROM
// gets an empty plan.
func (p *Plan) QueryPlan(ranges []QueryRange) ([]byte, error) {
	info, err := p.queryInfo()
	if err != nil {
		return nil, err
	}
	if ranges == nil {
		ranges = []QueryRange{}
	}
	out := queryPlanJSON{Version: 2, QueryInfo: info, QueryRanges: ranges}
	if p.rank != nil {
		out.Hybrid = p.hybridInfo()
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		panic("BUG: exec: cannot encode a query plan: " + err.Error())
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func (p *Plan) queryInfo() (queryInfoJSON, error) {
	q, a := p.top, p.top.ast
	info := queryInfoJSON{
		DistinctType:                "None",
		OrderBy:                     []string{},
		OrderByExpressions:          []string{},
		GroupByExpressions:          []string{},
		GroupByAliases:              []string{},
		Aggregates:                  []string{},
		GroupByAliasToAggregateType: map[string]*string{},
		HasSelectValue:              q.kind == ast.SelectValue,
	}
	if q.noFrom {
		info.HasSelectValue = false
		return info, nil
	}
	if q.top >= 0 {
		info.Top = ptr(q.top)
	}
	if q.offset >= 0 {
		info.Offset, info.Limit = ptr(q.offset), ptr(q.limit)
	}
	if q.distinct {
		info.DistinctType = "Unordered"
	}
	w := &rewriter{q: q}
	switch {
	case q.grouped:
		for _, g := range q.groupBy {
			info.GroupByExpressions = append(info.GroupByExpressions, g.String())
		}
		var sel string
		switch q.kind {
		case ast.SelectValue:
			payload, kind, err := w.aggItem(q.value)
			if err != nil {
				return info, err
			}
			if kind >= 0 {
				info.Aggregates = append(info.Aggregates, aggregateTypes[kind])
				payload = "[" + payload + "]"
			}
			if len(q.groupBy) == 0 {
				sel = "SELECT VALUE " + payload
			} else {
				sel = "SELECT " + w.groupByItems() + " AS groupByItems, " + parens(payload, q.value) + " AS payload"
			}
		case ast.SelectList:
			var members []string
			for _, it := range q.items {
				text, kind, err := w.aggItem(it.x)
				if err != nil {
					return info, err
				}
				var typ *string
				if kind >= 0 {
					typ = ptr(aggregateTypes[kind])
				}
				info.GroupByAliases = append(info.GroupByAliases, it.name)
				info.GroupByAliasToAggregateType[it.name] = typ
				members = append(members, ast.Quote(it.name)+": "+text)
			}
			sel = "SELECT {" + strings.Join(members, ", ") + "} AS payload"
			if len(q.groupBy) > 0 {
				sel = "SELECT " + w.groupByItems() + " AS groupByItems, {" + strings.Join(members, ", ") + "} AS payload"
			}
		}
		text := sel + "\n" + a.From.String() + w.where()
		if len(a.GroupBy) > 0 {
			text += "\nGROUP BY " + exprList(a.GroupBy)
		}
		if a.OrderBy != nil {
			text += "\n" + a.OrderBy.String()
		}
		info.RewrittenQuery = text

	case len(q.orderBy) > 0:
		if alias := q.sources[0].alias; strings.HasPrefix(alias, "$") {
			return info, queryError(a.From.At, ErrNotPlannable, "an ORDER BY query over a FROM subquery needs an alias for it")
		}
		if q.distinct {
			info.DistinctType = "Ordered"
		}
		items := make([]string, len(q.orderBy))
		for i, k := range q.orderBy {
			if k.desc {
				info.OrderBy = append(info.OrderBy, "Descending")
			} else {
				info.OrderBy = append(info.OrderBy, "Ascending")
			}
			info.OrderByExpressions = append(info.OrderByExpressions, k.x.String())
			items[i] = `{"item": ` + k.x.String() + `}`
		}
		for _, k := range q.orderBy {
			if hasVectorDistance(k.x) {
				// Every partition's best rows are merged in memory by
				// the SDK (its NonStreamingOrderBy stage).
				info.HasNonStreamingOrderBy = true
			}
		}
		sel := "SELECT "
		if a.Select.Top != nil && !q.distinct {
			sel += "TOP " + a.Select.Top.String() + " "
		}
		sel += q.sources[0].alias + "._rid, [" + strings.Join(items, ", ") + "] AS orderByItems, " + w.payload() + " AS payload"
		cond := "(" + OrderByFilter + ")"
		if a.Where != nil {
			cond = "((" + a.Where.String() + ") AND " + cond + ")"
		}
		if q.kind == ast.SelectValue {
			cond = "(" + cond + " AND IS_DEFINED(" + q.value.String() + "))"
		}
		text := sel + "\n" + a.From.String() + "\nWHERE " + cond + "\n" + a.OrderBy.String()
		if q.offset >= 0 && !q.distinct {
			text += "\nOFFSET 0 LIMIT " + strconv.FormatInt(min(q.offset+q.limit, maxInt), 10)
		}
		info.RewrittenQuery = text

	case q.distinct:
		if a.Select.Top != nil || a.Offset != nil {
			s := *a.Select
			s.Top = nil
			info.RewrittenQuery = s.String() + "\n" + a.From.String() + w.where()
		}

	case a.Offset != nil:
		info.RewrittenQuery = a.Select.String() + "\n" + a.From.String() + w.where() +
			"\nOFFSET 0 LIMIT " + strconv.FormatInt(min(q.offset+q.limit, maxInt), 10)
	}
	return info, nil
}

func ptr[T any](v T) *T { return &v }

func hasVectorDistance(e ast.Expr) bool {
	found := false
	walk(e, func(x ast.Expr) bool {
		if c, ok := x.(*ast.Call); ok && eval.IsVectorDistance(c) {
			found = true
		}
		return !found
	})
	return found
}

// Placeholders of a hybrid query plan that the SDKs replace with the sums
// of the global statistics query's results (hybridQueryExecutionContext.ts):
// the document count, and per component i the total word count and the
// hit counts of its terms.
const (
	hybridDocCount  = "{documentdb-formattablehybridsearchquery-totaldocumentcount}"
	hybridWordCount = "{documentdb-formattablehybridsearchquery-totalwordcount-%d}"
	hybridHitCounts = "{documentdb-formattablehybridsearchquery-hitcountsarray-%d}"
)

// hybridInfo describes an ORDER BY RANK query for an SDK that runs it:
//
//   - globalStatisticsQuery, run on every partition and summed by the SDK:
//     SELECT COUNT(1) AS documentCount, [{"totalWordCount":
//     SUM(_FullTextWordCount(path)), "hitCounts": [COUNTIF(FullTextContains(path,
//     term)), ...]}, ...] AS fullTextStatistics FROM c, one entry per
//     FullTextScore component in order;
//   - one component query per RRF component (one for FullTextScore alone):
//     an ORDER BY query of the component's score, best first, of at most
//     the rank window's rows, whose payload holds the projection and the
//     scores of every component ({"payload": ..., "componentScores": [...]}),
//     FullTextScore written _FullTextScore(path, [terms], N, words, [hits])
//     with the statistics' placeholders;
//   - the weights, and skip and take from OFFSET, LIMIT and TOP.
//
// The SDK ranks the union of the components' rows per component and fuses
// the ranks, as Parsec's own Ranked execution does.
func (p *Plan) hybridInfo() *hybridJSON {
	q, a := p.top, p.top.ast
	h := &hybridJSON{ComponentWeights: q.weights}
	if q.offset >= 0 {
		h.Skip, h.Take = ptr(q.offset), ptr(q.limit)
	}
	if q.top >= 0 && (h.Take == nil || q.top < *h.Take) {
		h.Take = ptr(q.top)
	}
	alias := q.sources[0].alias
	texts := make([]string, len(q.orderBy))
	var stats []string
	for i, k := range q.orderBy {
		call := k.x.(*ast.Call)
		if !eval.IsFullTextScore(call) {
			texts[i] = call.String()
			continue
		}
		path := call.Args[0].String()
		var terms, hits []string
		for _, arg := range call.Args[1:] {
			elems := []ast.Expr{arg}
			if arr, ok := arg.(*ast.ArrayCreate); ok {
				elems = arr.Elems
			}
			for _, t := range elems {
				terms = append(terms, t.String())
				hits = append(hits, "COUNTIF(FullTextContains("+path+", "+t.String()+"))")
			}
		}
		stats = append(stats, `{"totalWordCount": SUM(_FullTextWordCount(`+path+`)), "hitCounts": [`+strings.Join(hits, ", ")+`]}`)
		texts[i] = "_FullTextScore(" + path + ", [" + strings.Join(terms, ", ") + "], " + hybridDocCount + ", " +
			fmt.Sprintf(hybridWordCount, i) + ", " + fmt.Sprintf(hybridHitCounts, i) + ")"
	}
	if len(stats) > 0 {
		h.RequiresGlobalStatistics = true
		h.GlobalStatisticsQuery = "SELECT COUNT(1) AS documentCount, [" + strings.Join(stats, ", ") + "] AS fullTextStatistics\nFROM " + alias
	}
	w := &rewriter{q: q}
	window := int64(p.rankWindow())
	cond := "(" + OrderByFilter + ")"
	if a.Where != nil {
		cond = "((" + a.Where.String() + ") AND " + cond + ")"
	}
	for i, k := range q.orderBy {
		dir, dirWord := "Ascending", "ASC"
		if k.desc {
			dir, dirWord = "Descending", "DESC"
		}
		text := "SELECT TOP " + strconv.FormatInt(window, 10) + " " + alias + `._rid, [{"item": ` + texts[i] + `}] AS orderByItems, ` +
			`{"payload": ` + w.payload() + `, "componentScores": [` + strings.Join(texts, ", ") + `]} AS payload` +
			"\n" + a.From.String() + "\nWHERE " + cond + "\nORDER BY " + texts[i] + " " + dirWord
		h.ComponentQueryInfos = append(h.ComponentQueryInfos, queryInfoJSON{
			DistinctType:                "None",
			Top:                         ptr(window),
			OrderBy:                     []string{dir},
			OrderByExpressions:          []string{texts[i]},
			GroupByExpressions:          []string{},
			GroupByAliases:              []string{},
			Aggregates:                  []string{},
			GroupByAliasToAggregateType: map[string]*string{},
			RewrittenQuery:              text,
			HasNonStreamingOrderBy:      true,
		})
	}
	return h
}

// rewriter prints the parts of rewritten queries.
type rewriter struct{ q *query }

// where returns "\nWHERE (cond)" for the query's WHERE clause, or "".
func (w *rewriter) where() string {
	if w.q.where == nil {
		return ""
	}
	return "\nWHERE (" + w.q.where.String() + ")"
}

// groupByItems returns [{"item": g1}, {"item": g2}, ...].
func (w *rewriter) groupByItems() string {
	items := make([]string, len(w.q.groupBy))
	for i, g := range w.q.groupBy {
		items[i] = `{"item": ` + g.String() + `}`
	}
	return "[" + strings.Join(items, ", ") + "]"
}

// payload returns the projection of an ORDER BY query as one expression.
func (w *rewriter) payload() string {
	q := w.q
	switch q.kind {
	case ast.SelectStar:
		return q.star
	case ast.SelectValue:
		return parens(q.value.String(), q.value)
	}
	members := make([]string, len(q.items))
	for i, it := range q.items {
		members[i] = ast.Quote(it.name) + ": " + it.x.String()
	}
	return "{" + strings.Join(members, ", ") + "}"
}

// aggItem returns the partial-aggregate form of a select expression that is
// an aggregate call, with its kind; or the expression itself and -1 if it
// has no aggregate. An aggregate inside a larger expression is an error.
func (w *rewriter) aggItem(e ast.Expr) (string, int, error) {
	if call, ok := e.(*ast.Call); ok && isAggregate(call) {
		kind := w.q.aggKinds[w.q.aggIndex[call]]
		arg := call.Args[0].String()
		switch k := int(kind); kind {
		case eval.AggAvg:
			return `{"item": {"sum": SUM(` + arg + `), "count": COUNT(` + arg + `)}}`, k, nil
		case eval.AggMin:
			return `{"item": MIN(` + arg + `), "item2": {"min": MIN(` + arg + `), "count": COUNT(` + arg + `)}}`, k, nil
		case eval.AggMax:
			return `{"item": MAX(` + arg + `), "item2": {"max": MAX(` + arg + `), "count": COUNT(` + arg + `)}}`, k, nil
		default:
			return `{"item": ` + call.String() + `}`, k, nil
		}
	}
	var bad *ast.Call
	walk(e, func(x ast.Expr) bool {
		if call, ok := x.(*ast.Call); ok && isAggregate(call) && bad == nil {
			bad = call
		}
		_, isSub := x.(*ast.Subquery)
		return bad == nil && !isSub
	})
	if bad != nil {
		return "", 0, queryError(bad.At, ErrNotPlannable, "Compositions of aggregates and other expressions are not allowed.")
	}
	return e.String(), -1, nil
}

// parens wraps text, the printed e, in parentheses unless e is a primary
// expression, so that it can be followed by AS.
func parens(text string, e ast.Expr) string {
	if ast.Prec(e) >= ast.Prec(&ast.Ident{}) {
		return text
	}
	return "(" + text + ")"
}

func exprList(es []ast.Expr) string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.String()
	}
	return strings.Join(s, ", ")
}
