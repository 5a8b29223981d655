package advise

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/parsecdb/parsec/internal/epk"
)

// Operation is one line of a workload file: a class of operations with its
// rate. See the package documentation for the format.
type Operation struct {
	Name    string         `json:"name,omitempty"`
	Op      string         `json:"op"`               // read, write or query
	Filter  map[string]any `json:"filter,omitempty"` // path → value, values known in advance
	Fields  []string       `json:"fields,omitempty"` // paths fixed to values that vary like the sample's
	Rate    float64        `json:"rate"`             // operations per second
	Pattern string         `json:"pattern,omitempty"`
	Line    int            `json:"-"`

	// The filter and fields by canonical path (segments joined by NUL),
	// for matching against a candidate's base paths.
	canonFilter map[string]any
	canonFields []string
}

// canon fills in the canonical filter and fields (Operation values built in
// code rather than parsed have only the exported fields).
func (o *Operation) canon() error {
	if o.canonFilter != nil {
		return nil
	}
	o.canonFilter = make(map[string]any, len(o.Filter))
	o.canonFields = nil
	for p, v := range o.Filter {
		cp, err := canonicalPath(p)
		if err != nil {
			return fmt.Errorf("filter path %q: %v", p, err)
		}
		o.canonFilter[cp] = v
	}
	for _, f := range o.Fields {
		cp, err := canonicalPath(f)
		if err != nil {
			return fmt.Errorf("field %q: %v", f, err)
		}
		if _, ok := o.canonFilter[cp]; ok {
			return fmt.Errorf("%s is both in filter and in fields", f)
		}
		o.canonFields = append(o.canonFields, cp)
	}
	return nil
}

// label names the operation in reports.
func (o Operation) label() string {
	switch {
	case o.Name != "":
		return o.Name
	case o.Pattern != "":
		return o.Pattern
	}
	var parts []string
	keys := make([]string, 0, len(o.Filter))
	for k := range o.Filter {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b, _ := json.Marshal(o.Filter[k])
		parts = append(parts, k+"="+string(b))
	}
	for _, f := range o.Fields {
		parts = append(parts, f+"=?")
	}
	if len(parts) == 0 {
		return o.Op + " (no filter)"
	}
	return o.Op + " " + strings.Join(parts, ", ")
}

// WorkloadError is a problem in a workload file.
type WorkloadError struct {
	Line int
	Msg  string
}

func (e *WorkloadError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// ParseWorkload reads a workload file: NDJSON, one operation class per line;
// blank lines and lines starting with # or // are skipped. Errors are
// *WorkloadError.
func ParseWorkload(data []byte) ([]Operation, error) {
	var ops []Operation
	for i, line := range bytes.Split(data, []byte("\n")) {
		n := i + 1
		line = bytes.TrimSpace(line)
		if i == 0 {
			line = bytes.TrimPrefix(line, []byte("\xEF\xBB\xBF"))
		}
		if len(line) == 0 || line[0] == '#' || bytes.HasPrefix(line, []byte("//")) {
			continue
		}
		fail := func(format string, args ...any) ([]Operation, error) {
			return nil, &WorkloadError{Line: n, Msg: fmt.Sprintf(format, args...)}
		}
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(line, &raw); err != nil {
			var se *json.SyntaxError
			if ok := asSyntax(err, &se); ok {
				return fail("invalid JSON at column %d: %v", se.Offset, err)
			}
			return fail("each line must be a JSON object: %v", err)
		}
		var op Operation
		op.Line = n
		op.Rate = 1
		for k, v := range raw {
			var err error
			switch k {
			case "name":
				err = json.Unmarshal(v, &op.Name)
			case "op":
				err = json.Unmarshal(v, &op.Op)
			case "pattern":
				err = json.Unmarshal(v, &op.Pattern)
			case "rate":
				err = json.Unmarshal(v, &op.Rate)
				if err == nil && (op.Rate < 0 || math.IsInf(op.Rate, 0)) {
					return fail("rate must be a number of operations per second, at least 0")
				}
			case "fields":
				err = json.Unmarshal(v, &op.Fields)
			case "filter":
				err = json.Unmarshal(v, &op.Filter)
			default:
				return fail("unknown member %q (want op, filter, fields, rate, pattern, name)", k)
			}
			if err != nil {
				return fail("member %q: %v", k, err)
			}
		}
		switch op.Op {
		case "":
			if op.Pattern == "" {
				return fail(`missing "op" (read, write or query)`)
			}
			op.Op = "query"
		case "read", "write", "query":
		default:
			return fail(`op %q: want read, write or query`, op.Op)
		}
		for p, v := range op.Filter {
			switch v.(type) {
			case string, float64, bool, nil:
			default:
				return fail("filter %s: the value must be a string, number, boolean or null", p)
			}
		}
		if err := op.canon(); err != nil {
			return fail("%v", err)
		}
		ops = append(ops, op)
	}
	return ops, nil
}

func asSyntax(err error, se **json.SyntaxError) bool {
	s, ok := err.(*json.SyntaxError)
	if ok {
		*se = s
	}
	return ok
}

// canonicalPath turns a path as users write it ("/a/b", "a.b" is not
// accepted, a leading slash may be left out) into a comparable form: its
// segments joined by NUL.
func canonicalPath(p string) (string, error) {
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	segs, err := epk.ParsePath(p)
	if err != nil {
		return "", fmt.Errorf("not a valid path")
	}
	return strings.Join(segs, "\x00"), nil
}

// Growth is how fast the data grows. Either field may be zero; Analyze
// derives one from the other with the sample's average document size.
type Growth struct {
	DocumentsPerDay float64
	BytesPerDay     float64
}

// ParseGrowth reads a --growth value: a number of documents per day
// ("50000", "50000/day", "50000 docs/day", "2000/h", "3/s") or a size per day
// ("2GB/day", "500MB/d", "10 GiB/day", "1MB/h").
func ParseGrowth(s string) (Growth, error) {
	bad := func() (Growth, error) {
		return Growth{}, fmt.Errorf("%q is not a growth rate: give documents per day (50000/day) or bytes per day (2GB/day); /h and /s also work", s)
	}
	t := strings.ToLower(strings.TrimSpace(s))
	per := 1.0
	if i := strings.LastIndexByte(t, '/'); i >= 0 {
		switch strings.TrimSpace(t[i+1:]) {
		case "day", "d":
		case "h", "hour":
			per = 24
		case "s", "sec", "second":
			per = 86400
		default:
			return bad()
		}
		t = strings.TrimSpace(t[:i])
	}
	for _, suf := range []string{"documents", "document", "docs", "doc"} {
		if strings.HasSuffix(t, suf) {
			t = strings.TrimSpace(strings.TrimSuffix(t, suf))
			f, err := strconv.ParseFloat(t, 64)
			if err != nil || f <= 0 || math.IsInf(f, 0) {
				return bad()
			}
			return Growth{DocumentsPerDay: f * per}, nil
		}
	}
	if f, err := strconv.ParseFloat(t, 64); err == nil {
		if f <= 0 || math.IsInf(f, 0) {
			return bad()
		}
		return Growth{DocumentsPerDay: f * per}, nil
	}
	units := []struct {
		suffix string
		mult   float64
	}{
		{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
		{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12}, {"b", 1},
	}
	for _, u := range units {
		if strings.HasSuffix(t, u.suffix) {
			f, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), 64)
			if err != nil || f <= 0 || math.IsInf(f, 0) {
				return bad()
			}
			return Growth{BytesPerDay: f * u.mult * per}, nil
		}
	}
	return bad()
}
