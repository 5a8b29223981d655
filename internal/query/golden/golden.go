// Package golden reads the hand-checked query corpus files
// (internal/query/exec/testdata/queries.txt and queryplans.txt) that the
// executor's tests and the SDK tests both run.
//
// Format: cases are separated by blank lines. In a case, lines starting
// with # are comments; "params: {...}" gives the parameters as a JSON
// object; "order: any" compares rows as a multiset even with ORDER BY;
// "=> [...]" gives the expected rows as JSON, continuing to the end of the
// case; "error: text" expects an error containing text; every other line is
// query text.
package golden

import (
	"fmt"
	"os"
	"strings"
)

// Case is one case of a corpus file.
type Case struct {
	Line     int    // line of the case's first line, 1-based
	Query    string // the query text
	Params   string // JSON object, or ""
	AnyOrder bool   // "order: any"
	Expect   string // JSON array of rows, or ""
	Err      string // expected error substring, or ""
}

// Load reads the corpus file at path.
func Load(path string) ([]Case, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	cases, err := Parse(string(raw))
	if err != nil {
		return nil, fmt.Errorf("%s:%w", path, err)
	}
	return cases, nil
}

// Parse reads a corpus; an error names the line of an incomplete case.
func Parse(text string) ([]Case, error) {
	var cases []Case
	var c *Case
	inExpect := false
	flush := func() error {
		if c != nil {
			if c.Query == "" || c.Expect == "" && c.Err == "" {
				return fmt.Errorf("%d: incomplete case", c.Line)
			}
			cases = append(cases, *c)
		}
		c, inExpect = nil, false
		return nil
	}
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "":
			if err := flush(); err != nil {
				return nil, err
			}
			continue
		case strings.HasPrefix(trimmed, "#"):
			continue
		}
		if c == nil {
			c = &Case{Line: i + 1}
		}
		switch {
		case inExpect:
			c.Expect += "\n" + line
		case strings.HasPrefix(trimmed, "params:"):
			c.Params = strings.TrimSpace(strings.TrimPrefix(trimmed, "params:"))
		case trimmed == "order: any":
			c.AnyOrder = true
		case strings.HasPrefix(trimmed, "=>"):
			c.Expect, inExpect = strings.TrimPrefix(trimmed, "=>"), true
		case strings.HasPrefix(trimmed, "error:"):
			c.Err = strings.TrimSpace(strings.TrimPrefix(trimmed, "error:"))
		default:
			if c.Query != "" {
				c.Query += "\n"
			}
			c.Query += line
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return cases, nil
}
