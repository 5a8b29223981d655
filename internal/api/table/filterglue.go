package table

import (
	"math"
	"strconv"
	"strings"

	"github.com/parsecdb/parsec/internal/api/table/edm"
	"github.com/parsecdb/parsec/internal/api/table/filter"
	"github.com/parsecdb/parsec/internal/query/eval"
)

// compiledFilter is a parsed $filter (expr nil: every entity).
type compiledFilter struct {
	expr filter.Expr
}

// parseFilter parses a $filter; a syntax error or one past the parser's
// limits is 400 InvalidInput.
func parseFilter(text string) (*compiledFilter, error) {
	if strings.TrimSpace(text) == "" {
		return &compiledFilter{}, nil
	}
	e, err := filter.Parse(text)
	if err != nil {
		return nil, errInput("The $filter is invalid: %v", err)
	}
	return &compiledFilter{expr: e}, nil
}

func (f *compiledFilter) match(get func(string) (edm.Value, bool)) bool {
	return f.expr == nil || filter.Eval(f.expr, get)
}

// compileFilter returns the matcher of a $filter, nil when there is none.
func compileFilter(text string) (func(func(string) (edm.Value, bool)) bool, error) {
	f, err := parseFilter(text)
	if err != nil || f.expr == nil {
		return nil, err
	}
	return f.match, nil
}

// prefilter translates the filter into a SQL condition on the stored
// items that every match satisfies (DESIGN.md, "Queries"). A comparison
// is translated only where the stored form makes the SQL comparison agree
// with the filter's for every value of the literal's type:
//
//   - strings (PartitionKey, RowKey as c.id, and String properties): eq,
//     and the orderings when the literal holds no character at or above
//     U+D800, below which the filter's UTF-16 order and the engine's byte
//     order agree;
//   - Int32 and finite Double literals: every ordering, since those types
//     are stored as JSON numbers (a Double's infinities as strings, which
//     the condition also lets through);
//   - Boolean and Guid: eq; DateTime: every ordering, as its stored text
//     has a fixed width.
//
// ne is never translated (a NaN is ne everything, and the stored JSON
// type may differ); Int64 and Binary are not either. An and keeps what
// either side translates, an or only what both do, a not nothing.
func (f *compiledFilter) prefilter() prefilter {
	p := prefilter{params: map[string]eval.Value{}}
	if f.expr == nil {
		return p
	}
	if keys, ok := filter.PartitionKeys(f.expr); ok {
		switch len(keys) {
		case 0:
			p.none = true
		case 1:
			p.key, p.hasKey = keys[0], true
		}
	}
	p.where = p.sql(f.expr)
	return p
}

// sql returns the condition of e, "" when it translates to nothing.
func (p *prefilter) sql(e filter.Expr) string {
	switch e := e.(type) {
	case *filter.And:
		l, r := p.sql(e.L), p.sql(e.R)
		switch {
		case l == "":
			return r
		case r == "":
			return l
		}
		return "(" + l + " AND " + r + ")"
	case *filter.Or:
		l, r := p.sql(e.L), p.sql(e.R)
		if l == "" || r == "" {
			return ""
		}
		return "(" + l + " OR " + r + ")"
	case *filter.Compare:
		return p.compare(e)
	}
	return ""
}

var sqlOps = map[filter.Op]string{filter.Eq: "=", filter.Gt: ">", filter.Ge: ">=", filter.Lt: "<", filter.Le: "<="}

func (p *prefilter) compare(c *filter.Compare) string {
	op, ok := sqlOps[c.Op]
	if !ok {
		return ""
	}
	var path string
	switch c.Prop {
	case "PartitionKey":
		path = "c.PartitionKey"
	case "RowKey":
		path = "c.id"
	case "Timestamp":
		path = "c.Timestamp"
	default:
		if !asciiIdentifier(c.Prop) {
			return ""
		}
		path = `c["` + storedName(c.Prop) + `"]`
	}
	if (c.Prop == "PartitionKey" || c.Prop == "RowKey") && c.Value.Type != edm.String {
		return "" // matches nothing; the filter decides
	}
	var v eval.Value
	switch c.Value.Type {
	case edm.String:
		if c.Op != filter.Eq && !belowSurrogates(c.Value.S) {
			return ""
		}
		v = eval.StringValue(c.Value.S)
	case edm.Guid:
		if c.Op != filter.Eq {
			return ""
		}
		v = eval.StringValue(c.Value.S)
	case edm.Boolean:
		if c.Op != filter.Eq {
			return ""
		}
		v = eval.BoolValue(c.Value.B)
	case edm.Int32:
		v = eval.NumberValue(float64(c.Value.I))
	case edm.Double:
		if math.IsNaN(c.Value.F) || math.IsInf(c.Value.F, 0) {
			return ""
		}
		v = eval.NumberValue(c.Value.F)
	case edm.DateTime:
		v = eval.StringValue(edm.FormatDateTime(c.Value.T))
	default:
		return ""
	}
	name := "p" + strconv.Itoa(len(p.params))
	p.params[name] = v
	cond := path + " " + op + " @" + name
	if c.Value.Type == edm.Double {
		// The infinities (and NaN) are stored as strings, and an
		// infinity compares with finite literals.
		cond = "(" + cond + " OR IS_STRING(" + path + "))"
	}
	return cond
}

func belowSurrogates(s string) bool {
	for _, r := range s {
		if r >= 0xD800 {
			return false
		}
	}
	return true
}

func asciiIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		return false
	}
	return true
}
