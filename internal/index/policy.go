package index

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Policy is a compiled indexing policy: which property paths are indexed.
// A nil *Policy indexes nothing.
type Policy struct {
	// None is indexingMode "none": nothing is indexed.
	None  bool
	rules []rule
}

// rule is one included or excluded path: "/a/b/?" (exactly /a/b), or
// "/a/b/*" (/a/b and everything below it). The most specific matching rule
// decides: the one with more segments, and "?" before "*" at equal length.
type rule struct {
	segs    []string
	exact   bool // "?" rather than "*"
	include bool
	// array marks a rule with an array segment ("[]" or a number): it
	// names array elements, which terms never reach.
	array bool
}

// Default is the policy of a container created without one: every path
// indexed but the etag
// (includedPaths /*, excludedPaths /"_etag"/?).
var Default = &Policy{rules: []rule{{include: true}, {segs: []string{"_etag"}, exact: true}}}

// MustCompile is Compile for policies known to be valid.
func MustCompile(raw json.RawMessage) *Policy {
	p, err := Compile(raw)
	if err != nil {
		panic("BUG: index: " + err.Error())
	}
	return p
}

// Compile reads an indexing policy as Cosmos DB gives it:
//
//	{"indexingMode":"consistent"|"lazy"|"none","automatic":true,
//	 "includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/a/?"}], ...}
//
// Composite, spatial and vector indexes are accepted and not used. An empty
// policy is the default one.
func Compile(raw json.RawMessage) (*Policy, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return Default, nil
	}
	var in struct {
		Mode     string `json:"indexingMode"`
		Included []struct {
			Path string `json:"path"`
		} `json:"includedPaths"`
		Excluded []struct {
			Path string `json:"path"`
		} `json:"excludedPaths"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, fmt.Errorf("indexingPolicy is not a valid policy object: %v", err)
	}
	p := &Policy{}
	switch strings.ToLower(in.Mode) {
	case "", "consistent", "lazy":
	case "none":
		p.None = true
		return p, nil
	default:
		return nil, fmt.Errorf("indexingPolicy.indexingMode must be \"consistent\" or \"none\", not %q", in.Mode)
	}
	if in.Included == nil && in.Excluded == nil {
		return Default, nil
	}
	for _, inc := range in.Included {
		r, err := parseRule(inc.Path, true)
		if err != nil {
			return nil, err
		}
		p.rules = append(p.rules, r)
	}
	for _, exc := range in.Excluded {
		r, err := parseRule(exc.Path, false)
		if err != nil {
			return nil, err
		}
		p.rules = append(p.rules, r)
	}
	return p, nil
}

func parseRule(path string, include bool) (rule, error) {
	r := rule{include: include}
	bad := func(why string) (rule, error) {
		return rule{}, fmt.Errorf("indexingPolicy path %q is invalid: %s (paths look like /*, /a/? or /a/b/*)", path, why)
	}
	if !strings.HasPrefix(path, "/") {
		return bad("it must start with /")
	}
	rest := path[1:]
	for {
		if rest == "?" || rest == "*" {
			r.exact = rest == "?"
			if r.exact && len(r.segs) == 0 {
				return bad("/? names no property")
			}
			return r, nil
		}
		if rest == "" {
			return bad("it must end with /? or /*")
		}
		var seg string
		if rest[0] == '"' {
			end := strings.IndexByte(rest[1:], '"')
			if end < 0 {
				return bad("a quoted name is not closed")
			}
			seg, rest = rest[1:1+end], rest[2+end:]
		} else {
			i := strings.IndexByte(rest, '/')
			if i < 0 {
				return bad("it must end with /? or /*")
			}
			seg, rest = rest[:i], rest[i:]
			if seg == "[]" || isNumber(seg) {
				r.array = true
			}
		}
		if !strings.HasPrefix(rest, "/") {
			return bad("a segment must be followed by /")
		}
		rest = rest[1:]
		r.segs = append(r.segs, seg)
	}
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Indexed reports whether the value at path is indexed: the policy
// includes it and the index can hold it (Fits).
func (p *Policy) Indexed(path []string) bool {
	if p == nil || p.None || !Fits(path) {
		return false
	}
	best, found := rule{}, false
	for _, r := range p.rules {
		if r.array || !r.matches(path) {
			continue
		}
		if !found || r.moreSpecific(best) {
			best, found = r, true
		}
	}
	return found && best.include
}

func (r rule) matches(path []string) bool {
	if len(r.segs) > len(path) || (r.exact && len(r.segs) != len(path)) {
		return false
	}
	for i, s := range r.segs {
		if path[i] != s {
			return false
		}
	}
	return true
}

func (r rule) moreSpecific(o rule) bool {
	if len(r.segs) != len(o.segs) {
		return len(r.segs) > len(o.segs)
	}
	if r.exact != o.exact {
		return r.exact
	}
	return !r.include // an exclusion wins a tie
}

// mayIndexBelow reports whether some path below the object at path may be
// indexed, so that the walk can skip excluded subtrees.
func (p *Policy) mayIndexBelow(path []string) bool {
	if p.Indexed(append(path[:len(path):len(path)], "\x00")) {
		return true
	}
	for _, r := range p.rules {
		if r.include && !r.array && len(r.segs) > len(path) && r.matchesPrefix(path) {
			return true
		}
	}
	return false
}

func (r rule) matchesPrefix(path []string) bool {
	for i, s := range path {
		if r.segs[i] != s {
			return false
		}
	}
	return true
}

// Spec is the index path that serves equality and range filters on path,
// as Cosmos DB names it in index metrics: "/a/b/?".
func Spec(path []string) string {
	var b strings.Builder
	for _, s := range path {
		b.WriteByte('/')
		b.WriteString(s)
	}
	b.WriteString("/?")
	return b.String()
}
