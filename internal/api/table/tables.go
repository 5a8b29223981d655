package table

import (
	"encoding/json"
	"errors"
	"net/http"
	"sort"
	"strconv"

	"github.com/parsecdb/parsec/internal/api/table/edm"
	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/epk"
)

// partitionKeyPath is the partition key of a table's container.
const partitionKeyPath = "/PartitionKey"

// checkTableName refuses a name the service refuses: 3 to 63 characters
// (OutOfRangeInput), letters and digits, not starting with a digit
// (InvalidResourceName), and not the reserved "tables". As on Cosmos DB,
// names are case-sensitive.
func checkTableName(name string) error {
	if len(name) < 3 || len(name) > 63 {
		return newErr(http.StatusBadRequest, codeOutOfRangeInput, "The table name %q is %d characters long; table names are 3 to 63 characters.", name, len(name))
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && !(i > 0 && c >= '0' && c <= '9') {
			return newErr(http.StatusBadRequest, codeInvalidResourceName, "The table name %q is invalid: table names hold letters and digits and start with a letter.", name)
		}
	}
	if name == "tables" || name == "Tables" {
		return newErr(http.StatusBadRequest, codeInvalidResourceName, "The table name %q is reserved.", name)
	}
	return nil
}

// openTable returns a table's container, or TableNotFound.
func (s *Server) openTable(name string) (*engine.Container, error) {
	c, err := s.eng.Container(Database, name)
	if err != nil {
		if errors.Is(err, engine.ErrNotFound) {
			return nil, errTableNotFound(name)
		}
		return nil, err
	}
	return c, nil
}

func (s *Server) createTable(req *request) error {
	body, err := readBody(req)
	if err != nil {
		return err
	}
	var in struct {
		TableName *string `json:"TableName"`
	}
	if err := json.Unmarshal(body, &in); err != nil || in.TableName == nil {
		return errInput("The request body is not {\"TableName\": \"…\"}.")
	}
	name := *in.TableName
	if err := checkTableName(name); err != nil {
		return err
	}
	if _, err := s.eng.Database(Database); err != nil {
		if _, err := s.eng.CreateDatabase(Database, engine.Throughput{}); err != nil && !errors.Is(err, engine.ErrConflict) {
			return err
		}
	}
	spec := engine.ContainerSpec{ID: name, PartitionKey: epk.Definition{Kind: epk.Hash, Version: 2, Paths: []string{partitionKeyPath}}}
	if _, err := s.eng.CreateContainer(Database, spec, engine.Throughput{RUs: s.cfg.Throughput}); err != nil {
		if errors.Is(err, engine.ErrConflict) {
			return newErr(http.StatusConflict, codeTableAlreadyExists, "The table specified already exists.")
		}
		return err
	}
	req.w.Header().Set("Location", req.base+"/Tables('"+name+"')")
	content, applied := preference(req.r, true)
	if applied != "" {
		req.w.Header().Set("Preference-Applied", applied)
	}
	if !content {
		s.writeNoContent(req)
		return nil
	}
	s.writeJSON(req, http.StatusCreated, s.tableJSON(req, name, true))
	return nil
}

// tableJSON renders one table; alone (a created table) it carries its
// own odata.metadata.
func (s *Server) tableJSON(req *request, name string, alone bool) []byte {
	b := []byte{'{'}
	sep := false
	add := func(k, v string) {
		if sep {
			b = append(b, ',')
		}
		sep = true
		b = appendJSONString(b, k)
		b = append(b, ':')
		b = appendJSONString(b, v)
	}
	if alone && req.meta != noMetadata {
		add("odata.metadata", req.base+"/$metadata#Tables/@Element")
	}
	if req.meta == fullMetadata {
		add("odata.type", req.account+".Tables")
		add("odata.id", req.base+"/Tables('"+name+"')")
		add("odata.editLink", "Tables('"+name+"')")
	}
	add("TableName", name)
	return append(b, '}')
}

func (s *Server) deleteTable(req *request, name string) error {
	if err := s.eng.DeleteContainer(Database, name); err != nil {
		if errors.Is(err, engine.ErrNotFound) {
			return errEntityNotFound()
		}
		return err
	}
	s.writeNoContent(req)
	return nil
}

// queryTables lists the tables: one (GET /Tables('t')), or those the
// $filter on TableName matches, $top at a time, in name order, with
// x-ms-continuation-NextTableName naming where the next page starts.
func (s *Server) queryTables(req *request, one string) error {
	var names []string
	if one != "" {
		if _, err := s.openTable(one); err != nil {
			return errEntityNotFound()
		}
		names = []string{one}
	} else {
		infos, err := s.eng.Containers(Database)
		if err != nil && !errors.Is(err, engine.ErrNotFound) {
			return err
		}
		for _, ci := range infos {
			names = append(names, ci.ID)
		}
		sort.Strings(names)
	}
	top, err := topOf(req)
	if err != nil {
		return err
	}
	match, err := compileFilter(req.query.Get("$filter"))
	if err != nil {
		return err
	}
	after := req.query.Get("NextTableName")
	var out []string
	next := ""
	for _, n := range names {
		if after != "" && n < after {
			continue
		}
		if match != nil && !match(func(p string) (edm.Value, bool) {
			if p == "TableName" {
				return edm.Value{Type: edm.String, S: n}, true
			}
			return edm.Value{}, false
		}) {
			continue
		}
		if top > 0 && len(out) == top {
			next = n
			break
		}
		out = append(out, n)
	}
	if one != "" {
		s.writeJSON(req, http.StatusOK, s.tableJSON(req, one, true))
		return nil
	}
	b := []byte{'{'}
	if req.meta != noMetadata {
		b = append(b, `"odata.metadata":`...)
		b = appendJSONString(b, req.base+"/$metadata#Tables")
		b = append(b, ',')
	}
	b = append(b, `"value":[`...)
	for i, n := range out {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, s.tableJSON(req, n, false)...)
	}
	b = append(b, "]}"...)
	if next != "" {
		req.w.Header().Set("x-ms-continuation-NextTableName", next)
	}
	s.writeJSON(req, http.StatusOK, b)
	return nil
}

// maxTop is the most entities or tables one page returns.
const maxTop = 1000

// topOf reads $top (0 when absent): 1 to 1000.
func topOf(req *request) (int, error) {
	t := req.query.Get("$top")
	if t == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(t)
	if err != nil || n < 1 || n > maxTop {
		return 0, newErr(http.StatusBadRequest, codeInvalidQueryParameter, "$top must be a whole number from 1 to %d, not %q.", maxTop, t)
	}
	return n, nil
}
