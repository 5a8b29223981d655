package cosmos

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/query/ast"
	"github.com/parsecdb/parsec/internal/query/eval"
	"github.com/parsecdb/parsec/internal/query/exec"
	"github.com/parsecdb/parsec/internal/query/parser"
)

// queryRequest parses a query body {"query": ..., "parameters": [...]}
// into a checked, compiled plan.
func parseQueryBody(body []byte) (*ast.Query, *exec.Plan, error) {
	var in struct {
		Query      *string `json:"query"`
		Parameters []struct {
			Name  string          `json:"name"`
			Value json.RawMessage `json:"value"`
		} `json:"parameters"`
	}
	if err := decodeStrict(body, &in); err != nil {
		return nil, nil, err
	}
	if in.Query == nil {
		return nil, nil, errBadRequest("the query body has no \"query\" property")
	}
	params := map[string]eval.Value{}
	for _, p := range in.Parameters {
		name := strings.TrimPrefix(p.Name, "@")
		if name == "" {
			return nil, nil, errBadRequest("a query parameter has no name")
		}
		v := eval.Value{}
		if len(p.Value) > 0 {
			var err error
			if v, err = eval.FromJSON(p.Value); err != nil {
				return nil, nil, errBadRequest("query parameter %s has an invalid value: %v", p.Name, err)
			}
		}
		params[name] = v
	}
	q, err := parser.Parse(*in.Query)
	if err != nil {
		return nil, nil, errBadRequest("%v", err)
	}
	plan, err := engine.ParseQuery(q, params)
	if err != nil {
		return nil, nil, err
	}
	return q, plan, nil
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

func (s *Server) query(req *request, c *engine.Container) {
	r := req.r
	start := time.Now()
	body, err := readBody(req)
	if err != nil {
		s.writeError(req, err)
		return
	}
	_, plan, err := parseQueryBody(body)
	if err != nil {
		s.writeError(req, err)
		return
	}
	scope, err := queryScope(r)
	if err != nil {
		s.writeError(req, err)
		return
	}
	if !scope.HasKey && scope.RangeID == "" && strings.EqualFold(r.Header.Get("x-ms-documentdb-query-enablecrosspartition"), "false") && len(c.Partitions()) > 1 {
		s.writeError(req, errBadRequest("Cross partition query is required but disabled. Please set x-ms-documentdb-query-enablecrosspartition to true, specify x-ms-documentdb-partitionkey, or revise your query to avoid this exception."))
		return
	}
	pageSize := engine.DefaultPageSize
	if v := r.Header.Get("x-ms-max-item-count"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n == 0 || n < -1 {
			s.writeError(req, errBadRequest("x-ms-max-item-count must be a positive integer or -1, not %q", v))
			return
		}
		pageSize = n
		if n == -1 {
			pageSize = 1000
		}
	}
	page, err := c.Query(plan, scope, r.Header.Get("x-ms-continuation"), pageSize)
	if err != nil {
		s.writeError(req, err)
		return
	}
	var b bytes.Buffer
	b.WriteString(`{"_rid":"`)
	b.WriteString(c.Info().Rid)
	b.WriteString(`","Documents":[`)
	out := 0
	for i, d := range page.Rows {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(d)
		out += len(d)
	}
	b.WriteString(`],"_count":`)
	b.WriteString(strconv.Itoa(len(page.Rows)))
	b.WriteByte('}')
	req.charge = page.Charge
	req.session = strings.Join(page.Sessions, ",")
	h := req.w.Header()
	h.Set("x-ms-item-count", strconv.Itoa(len(page.Rows)))
	if page.Continuation != "" {
		h.Set("x-ms-continuation", page.Continuation)
	}
	if scope.RangeID != "" {
		h.Set(hdrRangeID, scope.RangeID)
	}
	if headerBool(r, "x-ms-documentdb-populatequerymetrics") {
		ms := float64(time.Since(start).Microseconds()) / 1000
		h.Set("x-ms-documentdb-query-metrics", fmt.Sprintf(
			"totalExecutionTimeInMs=%.2f;queryCompileTimeInMs=0.00;queryLogicalPlanBuildTimeInMs=0.00;queryPhysicalPlanBuildTimeInMs=0.00;queryOptimizationTimeInMs=0.00;VMExecutionTimeInMs=%.2f;indexLookupTimeInMs=0.00;documentLoadTimeInMs=0.00;systemFunctionExecuteTimeInMs=0.00;userFunctionExecuteTimeInMs=0.00;retrievedDocumentCount=%d;retrievedDocumentSize=%d;outputDocumentCount=%d;outputDocumentSize=%d;writeOutputTimeInMs=0.00;indexUtilizationRatio=0.00",
			ms, ms, page.DocsRead, page.BytesRead, len(page.Rows), out))
	}
	s.writeJSON(req, http.StatusOK, b.Bytes())
}

// queryPlan answers a query plan request: how a client that merges
// partitions itself must run the query.
func (s *Server) queryPlan(req *request, c *engine.Container) {
	body, err := readBody(req)
	if err != nil {
		s.writeError(req, err)
		return
	}
	_, plan, err := parseQueryBody(body)
	if err != nil {
		s.writeError(req, err)
		return
	}
	scope, err := queryScope(req.r)
	if err != nil {
		s.writeError(req, err)
		return
	}
	ranges, err := c.QueryRanges(scope)
	if err != nil {
		s.writeError(req, err)
		return
	}
	out, err := plan.QueryPlan(ranges)
	if err != nil {
		if errors.Is(err, exec.ErrNotPlannable) {
			s.writeError(req, errBadRequest("%v", err))
			return
		}
		s.writeError(req, err)
		return
	}
	req.charge = 1
	s.writeJSON(req, http.StatusOK, out)
}
