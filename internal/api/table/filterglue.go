package table

import (
	"net/http"

	"github.com/parsecdb/parsec/internal/api/table/edm"
)

// compiledFilter is a parsed $filter.
type compiledFilter struct{}

func parseFilter(text string) (*compiledFilter, error) {
	if text != "" {
		return nil, newErr(http.StatusNotImplemented, codeNotImplemented, "$filter is not supported yet")
	}
	return &compiledFilter{}, nil
}

func (f *compiledFilter) match(get func(string) (edm.Value, bool)) bool { return true }

func (f *compiledFilter) prefilter() prefilter { return prefilter{} }

// compileFilter returns the matcher of a $filter, nil when there is none.
func compileFilter(text string) (func(func(string) (edm.Value, bool)) bool, error) {
	f, err := parseFilter(text)
	if err != nil || text == "" {
		return nil, err
	}
	return f.match, nil
}
