package fulltext

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ErrInvalidPolicy is the cause of every policy error: the request is a bad
// request (400). The error's text is the message for the client.
var ErrInvalidPolicy = errors.New("invalid full-text policy")

// PolicyError is a rejected full-text or indexing policy. Error returns the
// message as the service words it where its wording is known (see the
// tests); errors.Is(err, ErrInvalidPolicy) holds.
type PolicyError struct{ Msg string }

func (e *PolicyError) Error() string { return e.Msg }

// Unwrap makes PolicyError match ErrInvalidPolicy.
func (e *PolicyError) Unwrap() error { return ErrInvalidPolicy }

func policyErr(format string, args ...any) error {
	return &PolicyError{Msg: fmt.Sprintf(format, args...)}
}

// MaxPaths bounds the paths of one policy, and MaxPathBytes the length of
// one path; the service's own limits are not documented, these only keep
// input bounded.
const (
	MaxPaths     = 256
	MaxPathBytes = 512
)

// Path is one full-text path of a policy.
type Path struct {
	// Path is the path as the policy spells it: "/text" or "/a/b".
	Path string
	// Segments are its property names: ["a", "b"].
	Segments []string
	// Language is the path's language, or the policy's default.
	Language Language
	// Indexed reports that indexingPolicy.fullTextIndexes names the path.
	Indexed bool
}

// Policy is a container's compiled full-text policy together with the
// full-text indexes of its indexing policy. The zero Policy (and a nil
// *Policy) has no paths and the default language English.
type Policy struct {
	DefaultLanguage Language
	Paths           []Path
}

// Compile validates a container's fullTextPolicy and the fullTextIndexes of
// its indexingPolicy, as the service does on container create and replace,
// and returns the compiled policy. Either may be empty (absent or null).
//
// A full-text path names a property by "/"-separated names; wildcards ("*",
// "[]") are not allowed in either list (articles/cosmos-db/gen-ai/
// full-text-search-faq.md). Every full-text index path must be a path of
// the full-text policy. A path's language defaults to the policy's
// defaultLanguage, which defaults to en-US when absent.
func Compile(fullTextPolicy, indexingPolicy json.RawMessage) (*Policy, error) {
	p := &Policy{DefaultLanguage: English}
	if !isNull(fullTextPolicy) {
		var in struct {
			DefaultLanguage *string `json:"defaultLanguage"`
			Paths           []struct {
				Path     *string `json:"path"`
				Language *string `json:"language"`
			} `json:"fullTextPaths"`
		}
		if err := json.Unmarshal(fullTextPolicy, &in); err != nil {
			return nil, policyErr("The Full Text Policy is not a valid policy object: %v", err)
		}
		if in.DefaultLanguage != nil {
			l, err := parseLanguage(*in.DefaultLanguage)
			if err != nil {
				return nil, err
			}
			p.DefaultLanguage = l
		}
		if len(in.Paths) > MaxPaths {
			return nil, policyErr("The Full Text Policy has %d paths, more than the %d allowed", len(in.Paths), MaxPaths)
		}
		seen := make(map[string]bool, len(in.Paths))
		for _, fp := range in.Paths {
			raw := ""
			if fp.Path != nil {
				raw = *fp.Path
			}
			segs, ok := parsePath(raw)
			if !ok {
				return nil, policyErr("The Full Text Policy contains an invalid Path: %s", raw)
			}
			key := strings.Join(segs, "/")
			if seen[key] {
				return nil, policyErr("The Full Text Policy contains duplicate Path: %s", raw)
			}
			seen[key] = true
			lang := p.DefaultLanguage
			if fp.Language != nil {
				l, err := parseLanguage(*fp.Language)
				if err != nil {
					return nil, err
				}
				lang = l
			}
			p.Paths = append(p.Paths, Path{Path: raw, Segments: segs, Language: lang})
		}
	}
	if isNull(indexingPolicy) {
		return p, nil
	}
	var ip struct {
		FullTextIndexes []map[string]json.RawMessage `json:"fullTextIndexes"`
	}
	if err := json.Unmarshal(indexingPolicy, &ip); err != nil {
		return nil, policyErr("The indexing policy's fullTextIndexes are not valid: %v", err)
	}
	if len(ip.FullTextIndexes) > MaxPaths {
		return nil, policyErr("The indexing policy has %d full-text indexes, more than the %d allowed", len(ip.FullTextIndexes), MaxPaths)
	}
	indexed := make(map[string]bool, len(ip.FullTextIndexes))
	for i, spec := range ip.FullTextIndexes {
		rawPath, ok := spec["path"]
		if !ok || isNull(rawPath) {
			return nil, policyErr("Missing path in full-text index specification at index (%d)", i)
		}
		var path string
		if err := json.Unmarshal(rawPath, &path); err != nil {
			return nil, policyErr("Full-text index specification at index (%d) contains invalid path", i)
		}
		segs, ok := parsePath(path)
		if !ok {
			return nil, policyErr("Full-text index specification at index (%d) contains invalid path", i)
		}
		key := strings.Join(segs, "/")
		if indexed[key] {
			return nil, policyErr("Full-text index specification at index (%d) contains duplicate path %s", i, path)
		}
		indexed[key] = true
		j := p.find(segs)
		if j < 0 {
			return nil, policyErr("The path of the Full Text Index %s does not match the path specified in the Full Text Policy", path)
		}
		p.Paths[j].Indexed = true
	}
	return p, nil
}

func isNull(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s == "" || s == "null"
}

func parseLanguage(s string) (Language, error) {
	l, ok := ParseLanguage(s)
	if !ok {
		names := make([]string, len(Languages))
		for i, l := range Languages {
			names[i] = string(l)
		}
		return "", policyErr("The Full Text Policy contains an unsupported language %s. Supported languages are: %s", s, strings.Join(names, ", "))
	}
	return l, nil
}

// parsePath splits "/a/b" into ["a", "b"]. A path must start with "/", have
// no empty segment, and no wildcard or array segment ("*", "?", "[]").
func parsePath(p string) ([]string, bool) {
	if len(p) < 2 || len(p) > MaxPathBytes || p[0] != '/' {
		return nil, false
	}
	segs := strings.Split(p[1:], "/")
	for i, s := range segs {
		if s == "" || strings.ContainsAny(s, "*?[]") {
			return nil, false
		}
		if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
			segs[i] = s[1 : len(s)-1]
			if segs[i] == "" {
				return nil, false
			}
		}
	}
	return segs, true
}

func (p *Policy) find(segs []string) int {
	if p == nil {
		return -1
	}
	for i := range p.Paths {
		if equalSegs(p.Paths[i].Segments, segs) {
			return i
		}
	}
	return -1
}

func equalSegs(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Lookup returns the policy's path for a property path, if it has one.
func (p *Policy) Lookup(segs []string) (Path, bool) {
	if i := p.find(segs); i >= 0 {
		return p.Paths[i], true
	}
	return Path{}, false
}

// Indexed returns the paths that have a full-text index, the ones whose
// terms the engine stores with every write.
func (p *Policy) Indexed() []Path {
	if p == nil {
		return nil
	}
	var out []Path
	for _, x := range p.Paths {
		if x.Indexed {
			out = append(out, x)
		}
	}
	return out
}

// Analyzer returns the analyzer for a property path: the path's language
// when the policy names it, else the policy's default language (English
// for a nil policy). Full-text functions work on paths outside the policy,
// without an index (articles/cosmos-db/gen-ai/full-text-search.md).
func (p *Policy) Analyzer(segs []string) *Analyzer {
	if p == nil {
		return AnalyzerFor(English)
	}
	if x, ok := p.Lookup(segs); ok {
		return AnalyzerFor(x.Language)
	}
	return AnalyzerFor(p.DefaultLanguage)
}
