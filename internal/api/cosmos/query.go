package cosmos

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/jsondoc"
	"github.com/parsecdb/parsec/internal/query/eval"
	"github.com/parsecdb/parsec/internal/query/exec"
	"github.com/parsecdb/parsec/internal/query/parser"
)

// readQuery reads a query request: its body {"query", "parameters"}, parsed,
// checked and compiled, and the scope its headers give.
//
// c, when set, is the container queried, whose user-defined functions the
// query may call.
func readQuery(req *request, c *engine.Container) (*exec.Plan, engine.QueryScope, error) {
	var scope engine.QueryScope
	body, err := readBody(req)
	if err != nil {
		return nil, scope, err
	}
	var in struct {
		Query      *string `json:"query"`
		Parameters []struct {
			Name  string          `json:"name"`
			Value json.RawMessage `json:"value"`
		} `json:"parameters"`
	}
	if err := decodeStrict(body, &in); err != nil {
		return nil, scope, err
	}
	if in.Query == nil {
		return nil, scope, errBadRequest("the query body has no \"query\" property")
	}
	params := map[string]eval.Value{}
	for _, p := range in.Parameters {
		name := strings.TrimPrefix(p.Name, "@")
		if name == "" {
			return nil, scope, errBadRequest("a query parameter has no name")
		}
		v := eval.Value{}
		if len(p.Value) > 0 {
			// The document rules (depth, number range, UTF-8, unique
			// names) hold for parameters too.
			if err = jsondoc.Validate(p.Value); err == nil {
				v, err = eval.FromJSON(p.Value)
			}
			if err != nil {
				return nil, scope, errBadRequest("query parameter %s has an invalid value: %v", p.Name, err)
			}
		}
		params[name] = v
	}
	q, err := parser.Parse(*in.Query)
	if err != nil {
		return nil, scope, errBadRequest("%v", err)
	}
	var plan *exec.Plan
	if c != nil {
		plan, err = c.CompileQuery(q, params)
	} else {
		plan, err = engine.CompileQuery(q, params)
	}
	if err != nil {
		return nil, scope, err
	}
	scope, err = queryScope(req.r)
	return plan, scope, err
}

// queryScope reads the partition key and range headers of a query.
func queryScope(r *http.Request) (engine.QueryScope, error) {
	var s engine.QueryScope
	k, has, err := partitionKeyHeader(r)
	if err != nil {
		return s, err
	}
	s.Key, s.HasKey = k, has
	s.RangeID = r.Header.Get(hdrRangeID)
	return s, nil
}

func (s *Server) query(req *request, c *engine.Container) error {
	start := time.Now()
	plan, scope, err := readQuery(req, c)
	if err != nil {
		return err
	}
	return s.runQuery(req, c, plan, scope, start)
}

// runQuery runs one page of a compiled query with its scope, started at
// start (for the query metrics).
func (s *Server) runQuery(req *request, c *engine.Container, plan *exec.Plan, scope engine.QueryScope, start time.Time) error {
	r := req.r
	if err := crossPartitionConsent(r, c, plan, scope); err != nil {
		return err
	}
	if err := s.awaitReplicas(req, c.Partitions()); err != nil {
		return err
	}
	pageSize, err := maxItemCount(r)
	if err != nil {
		return err
	}
	if pageSize == 0 {
		pageSize = 1000 // -1: the server's choice
	}
	rid := c.Info().Rid
	var state *exec.State
	if token := r.Header.Get("x-ms-continuation"); token != "" {
		if state, err = decodeQueryToken(token, rid, scope.RangeID, plan); err != nil {
			return err
		}
	}
	// The request's context ends when the client leaves: the page stops.
	page, err := c.QueryContext(r.Context(), plan, scope, state, pageSize)
	if err != nil {
		return err
	}
	var continuation string
	if page.Next != nil {
		if continuation, err = encodeQueryToken(rid, scope.RangeID, page.Next); err != nil {
			return err
		}
	}
	if headerBool(r, "x-ms-documentdb-populatequerymetrics") {
		out := 0
		for _, d := range page.Rows {
			out += len(d)
		}
		ms := float64(time.Since(start).Microseconds()) / 1000
		req.w.Header().Set("x-ms-documentdb-query-metrics", fmt.Sprintf(
			"totalExecutionTimeInMs=%.2f;queryCompileTimeInMs=0.00;queryLogicalPlanBuildTimeInMs=0.00;queryPhysicalPlanBuildTimeInMs=0.00;queryOptimizationTimeInMs=0.00;VMExecutionTimeInMs=%.2f;indexLookupTimeInMs=0.00;documentLoadTimeInMs=0.00;systemFunctionExecuteTimeInMs=0.00;userFunctionExecuteTimeInMs=0.00;retrievedDocumentCount=%d;retrievedDocumentSize=%d;outputDocumentCount=%d;outputDocumentSize=%d;writeOutputTimeInMs=0.00;indexUtilizationRatio=%.2f",
			ms, ms, page.DocsRead, page.BytesRead, len(page.Rows), out, utilizationRatio(len(page.Rows), page.DocsRead)))
	}
	if headerBool(r, "x-ms-cosmos-populateindexmetrics") {
		req.w.Header().Set("x-ms-cosmos-index-utilization", indexUtilizationHeader(page.Index, page.Search))
	} else if headerBool(r, "x-ms-cosmos-populateindexmetrics-V2") {
		// The JavaScript SDK 4.x asks with the -V2 name and reads the
		// JSON URI-encoded (decodeAndParseJSONString in headerUtils.ts).
		b, _ := base64.StdEncoding.DecodeString(indexUtilizationHeader(page.Index, page.Search))
		req.w.Header().Set("x-ms-cosmos-index-utilization", url.PathEscape(string(b)))
	}
	s.writeDocuments(req, c, page.Rows, continuation, page.Sessions, page.Charge)
	return nil
}

// crossPartitionConsent refuses, as the service does, a query that is not
// scoped to one logical partition (by the partition key or range header,
// or by a filter that pins one key) unless the client consented with
// x-ms-documentdb-query-enablecrosspartition: true. The answer depends on
// the query alone, never on how many physical partitions there are.
func crossPartitionConsent(r *http.Request, c *engine.Container, plan *exec.Plan, scope engine.QueryScope) error {
	if scope.HasKey || scope.RangeID != "" || headerBool(r, "x-ms-documentdb-query-enablecrosspartition") {
		return nil
	}
	ranges, err := c.QueryRanges(plan, scope)
	if err != nil {
		return err
	}
	if len(ranges) == 1 && ranges[0].Min == ranges[0].Max {
		return nil // the filter pins one key
	}
	return errBadRequest("Cross partition query is required but disabled. Please set x-ms-documentdb-query-enablecrosspartition to true, specify x-ms-documentdb-partitionkey, or revise your query to avoid this exception.")
}

// utilizationRatio is output rows over retrieved documents (1 when nothing
// was read), as Cosmos DB reports it.
func utilizationRatio(rows, docs int) float64 {
	if docs == 0 {
		return 1
	}
	return float64(rows) / float64(docs)
}

// indexUtilizationHeader encodes x-ms-cosmos-index-utilization as the SDKs
// decode it: base64 of a JSON object listing the single-path indexes the
// query used and those it could have used.
//
// The vector and full-text functions are listed among the utilized
// indexes with their path, the index the policy gives it, and that this
// version scanned (the number of vectors compared or texts analysed).
func indexUtilizationHeader(u engine.IndexUtilization, s engine.SearchUtilization) string {
	type single struct {
		FilterExpression string
		IndexSpec        string
		FilterPreciseSet bool
		IndexPreciseSet  bool
		IndexImpactScore string
	}
	list := func(specs []string, impact string) []single {
		out := make([]single, 0, len(specs))
		for _, spec := range specs {
			out = append(out, single{IndexSpec: spec, FilterPreciseSet: true, IndexPreciseSet: true, IndexImpactScore: impact})
		}
		return out
	}
	utilized := list(u.Utilized, "High")
	for _, v := range s.Vector {
		utilized = append(utilized, single{FilterExpression: "VectorDistance", IndexSpec: v, IndexImpactScore: "High"})
	}
	for _, t := range s.Text {
		utilized = append(utilized, single{FilterExpression: "FullText", IndexSpec: t, IndexImpactScore: "High"})
	}
	b, _ := json.Marshal(map[string]any{
		"UtilizedSingleIndexes":     utilized,
		"PotentialSingleIndexes":    list(u.Potential, "High"),
		"UtilizedCompositeIndexes":  []any{},
		"PotentialCompositeIndexes": []any{},
	})
	return base64.StdEncoding.EncodeToString(b)
}

// queryPlan answers a query plan request: how a client that merges
// partitions itself must run the query.
func (s *Server) queryPlan(req *request, c *engine.Container) error {
	plan, scope, err := readQuery(req, c)
	if err != nil {
		return err
	}
	ranges, err := c.QueryRanges(plan, scope)
	if err != nil {
		return err
	}
	out, err := plan.QueryPlan(ranges)
	if err != nil {
		if errors.Is(err, exec.ErrNotPlannable) {
			return errBadRequest("%v", err)
		}
		return err
	}
	req.charge = 1
	s.writeJSON(req, http.StatusOK, out)
	return nil
}
