package table

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/parsecdb/parsec/internal/api/table/tableauth"
	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/query/eval"
	"github.com/parsecdb/parsec/internal/query/exec"
	"github.com/parsecdb/parsec/internal/query/parser"
)

// maxExamined bounds the stored entities one query request examines when
// its filter keeps few of them: the page then ends early, with a
// continuation.
const maxExamined = 10000

// maxEnginePages bounds the engine pages one request reads (each bounded
// in time by the engine), should pages come back short.
const maxEnginePages = 64

// queryEntities answers GET /t() and GET /t: the entities $filter
// matches, at most $top (default and most 1000) a page, with $select.
//
// The filter runs in two steps (DESIGN.md, "Queries"): a SQL prefilter,
// translated from the comparisons the stored form lets the engine decide
// (key ranges, string, boolean, number and date comparisons), is run by
// the engine, which routes it to one logical partition when it fixes the
// PartitionKey, serves it from the index where it can and charges it in
// request units; each candidate is then decided exactly by the filter.
func (s *Server) queryEntities(req *request, table string) error {
	c, err := s.openTable(table)
	if err != nil {
		return err
	}
	top, err := topOf(req)
	if err != nil {
		return err
	}
	if top == 0 {
		top = maxTop
	}
	sel, err := selectOf(req)
	if err != nil {
		return err
	}
	f, err := parseFilter(req.query.Get("$filter"))
	if err != nil {
		return err
	}
	pre := f.prefilter()
	if pre.none {
		s.writeJSON(req, http.StatusOK, s.rowsJSON(req, table, nil, nil))
		return nil
	}
	sql := "SELECT * FROM c"
	if pre.where != "" {
		sql += " WHERE " + pre.where
	}
	q, err := parser.Parse(sql)
	if err != nil {
		return newErr(http.StatusInternalServerError, codeInternalError, "the filter's prefilter %q does not parse: %v", sql, err)
	}
	plan, err := c.CompileQuery(q, pre.params)
	if err != nil {
		return err
	}
	scope := engine.QueryScope{}
	if pre.hasKey {
		scope.Key, scope.HasKey = keyOf(pre.key), true
	}
	rid := c.Info().Rid
	var state *exec.State
	if tok := req.query.Get("NextPartitionKey"); tok != "" {
		if state, err = decodeToken(tok, rid, plan); err != nil {
			return err
		}
	}
	var rows []*entity
	examined := 0
	for pages := 1; ; pages++ {
		page, err := c.QueryContext(req.r.Context(), plan, scope, state, top-len(rows))
		req.charge += page.Charge
		if err != nil {
			return err
		}
		for _, raw := range page.Rows {
			examined++
			e, err := decodeEntity(raw)
			if err != nil {
				continue // not an object: written through the NoSQL API
			}
			if f.match(e.get) && req.grant.AllowEntity(tableauth.QueryEntities, table, e.pk, e.rk) == nil {
				rows = append(rows, e)
			}
		}
		state = page.Next
		if state == nil || len(rows) >= top || examined >= maxExamined || pages >= maxEnginePages {
			break
		}
	}
	if state != nil {
		tok, err := encodeToken(rid, state)
		if err != nil {
			return err
		}
		// The position is opaque: the whole of it travels as
		// NextPartitionKey, and NextRowKey only marks it as ours.
		req.w.Header().Set("x-ms-continuation-NextPartitionKey", tok)
		req.w.Header().Set("x-ms-continuation-NextRowKey", "NA")
	}
	s.writeJSON(req, http.StatusOK, s.rowsJSON(req, table, rows, sel))
	return nil
}

// rowsJSON renders a page of a query.
func (s *Server) rowsJSON(req *request, table string, rows []*entity, sel map[string]bool) []byte {
	b := []byte{'{'}
	if req.meta != noMetadata {
		b = append(b, `"odata.metadata":`...)
		b = appendJSONString(b, req.base+"/$metadata#"+table)
		b = append(b, ',')
	}
	b = append(b, `"value":[`...)
	for i, e := range rows {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, s.entityJSON(req, table, e, sel, false)...)
	}
	return append(b, "]}"...)
}

// selectOf reads $select: nil for every property.
func selectOf(req *request) (map[string]bool, error) {
	v := req.query.Get("$select")
	if v == "" || v == "*" {
		return nil, nil
	}
	sel := map[string]bool{}
	for _, n := range strings.Split(v, ",") {
		n = strings.TrimSpace(n)
		if n == "" || len(sel) > MaxProperties {
			return nil, newErr(http.StatusBadRequest, codeInvalidQueryParameter, "$select %q is not a list of property names.", v)
		}
		sel[n] = true
	}
	return sel, nil
}

// token is a query's continuation: the container it belongs to and the
// engine's query state.
type token struct {
	Rid   string `json:"r"`
	State []byte `json:"s"`
}

func encodeToken(rid string, state *exec.State) (string, error) {
	b, err := state.MarshalBinary()
	if err != nil {
		return "", newErr(http.StatusInternalServerError, codeInternalError, "cannot encode the query's position: %v", err)
	}
	t, _ := json.Marshal(token{Rid: rid, State: b})
	return base64.RawURLEncoding.EncodeToString(t), nil
}

func decodeToken(s, rid string, plan *exec.Plan) (*exec.State, error) {
	bad := newErr(http.StatusBadRequest, codeInvalidInput, "The continuation NextPartitionKey %.40q is not one this server gave for this query (the request must repeat the query's $filter).", s)
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, bad
	}
	var t token
	if json.Unmarshal(raw, &t) != nil || t.Rid != rid {
		return nil, bad
	}
	st, err := plan.UnmarshalState(t.State)
	if err != nil {
		return nil, bad
	}
	return st, nil
}

// prefilter is the SQL condition a filter's matches satisfy (a superset
// of them), its parameters, and the one PartitionKey it fixes.
type prefilter struct {
	where  string
	params map[string]eval.Value
	key    string
	hasKey bool
	// none: the filter can match no entity.
	none bool
}
