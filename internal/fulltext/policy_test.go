package fulltext

import (
	"errors"
	"strings"
	"testing"
)

func TestCompilePolicy(t *testing.T) {
	// The service's own examples (articles/cosmos-db/gen-ai/full-text-search.md).
	p, err := Compile([]byte(`{"defaultLanguage":"en-US","fullTextPaths":[{"path":"/text1","language":"en-US"},{"path":"/a/text2","language":"fr-fr"}]}`),
		[]byte(`{"indexingMode":"consistent","includedPaths":[{"path":"/*"}],"fullTextIndexes":[{"path":"/a/text2"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if p.DefaultLanguage != English || len(p.Paths) != 2 {
		t.Fatalf("policy %+v", p)
	}
	if got := p.Paths[1]; got.Language != French || !got.Indexed || strings.Join(got.Segments, ",") != "a,text2" {
		t.Fatalf("path %+v", got)
	}
	if p.Paths[0].Indexed {
		t.Fatal("/text1 has no full-text index")
	}
	if ix := p.Indexed(); len(ix) != 1 || ix[0].Path != "/a/text2" {
		t.Fatalf("Indexed %+v", ix)
	}
	if p.Analyzer([]string{"a", "text2"}).Language() != French || p.Analyzer([]string{"other"}).Language() != English {
		t.Fatal("analyzer choice")
	}

	// A policy with only a default language, and a path without a language
	// (azure-cosmos Python tests/test_full_text_policy.py
	// test_create_full_text_container): the path takes the default.
	p, err = Compile([]byte(`{"defaultLanguage":"de-DE","fullTextPaths":[{"path":"/abstract"}]}`), nil)
	if err != nil || p.Paths[0].Language != German {
		t.Fatalf("%+v %v", p, err)
	}
	p, err = Compile(nil, []byte(`null`))
	if err != nil || p.DefaultLanguage != English || len(p.Paths) != 0 {
		t.Fatalf("%+v %v", p, err)
	}
	var nilPolicy *Policy
	if nilPolicy.Analyzer([]string{"x"}).Language() != English || nilPolicy.Indexed() != nil {
		t.Fatal("nil policy")
	}
}

func TestCompilePolicyErrors(t *testing.T) {
	// Messages marked "service" are the service's, asserted by azure-cosmos
	// Python tests/test_full_text_policy.py (test_fail_create_full_text_policy,
	// test_fail_create_full_text_indexing_policy); the others are Parsec's.
	cases := []struct {
		name, policy, indexing, want string
	}{
		{"service: relative path", `{"defaultLanguage":"en-US","fullTextPaths":[{"path":"abstract","language":"en-US"}]}`, ``,
			"The Full Text Policy contains an invalid Path: abstract"},
		{"service: bad default language", `{"defaultLanguage":"spa-SPA","fullTextPaths":[{"path":"/abstract","language":"en-US"}]}`, ``,
			"The Full Text Policy contains an unsupported language spa-SPA. Supported languages are:"},
		{"service: bad path language", `{"defaultLanguage":"en-US","fullTextPaths":[{"path":"/abstract","language":"spa-SPA"}]}`, ``,
			"The Full Text Policy contains an unsupported language spa-SPA. Supported languages are:"},
		{"service: index path not in policy", `{"defaultLanguage":"en-US","fullTextPaths":[{"path":"/abstract"}]}`, `{"fullTextIndexes":[{"path":"/path"}]}`,
			"The path of the Full Text Index /path does not match the path specified in the Full Text Policy"},
		{"service: index path without a policy", ``, `{"fullTextIndexes":[{"path":"/path"}]}`,
			"The path of the Full Text Index /path does not match the path specified in the Full Text Policy"},
		{"service: relative index path", `{"defaultLanguage":"en-US","fullTextPaths":[{"path":"/abstract"}]}`, `{"fullTextIndexes":[{"path":"abstract"}]}`,
			"Full-text index specification at index (0) contains invalid path"},
		{"service: index without path", `{"defaultLanguage":"en-US","fullTextPaths":[{"path":"/abstract"}]}`, `{"fullTextIndexes":[{"not_path":"abstract"}]}`,
			"Missing path in full-text index specification at index (0)"},
		{"wildcard", `{"fullTextPaths":[{"path":"/a/*"}]}`, ``, "The Full Text Policy contains an invalid Path: /a/*"},
		{"array", `{"fullTextPaths":[{"path":"/a/[]/b"}]}`, ``, "The Full Text Policy contains an invalid Path: /a/[]/b"},
		{"empty segment", `{"fullTextPaths":[{"path":"/a//b"}]}`, ``, "The Full Text Policy contains an invalid Path: /a//b"},
		{"missing path", `{"fullTextPaths":[{"language":"en-US"}]}`, ``, "The Full Text Policy contains an invalid Path: "},
		{"duplicate path", `{"fullTextPaths":[{"path":"/a"},{"path":"/a","language":"de-DE"}]}`, ``, "The Full Text Policy contains duplicate Path: /a"},
		{"duplicate index", `{"fullTextPaths":[{"path":"/a"}]}`, `{"fullTextIndexes":[{"path":"/a"},{"path":"/a"}]}`,
			"Full-text index specification at index (1) contains duplicate path /a"},
		{"wildcard index", `{"fullTextPaths":[{"path":"/a"}]}`, `{"fullTextIndexes":[{"path":"/a/?"}]}`,
			"Full-text index specification at index (0) contains invalid path"},
		{"index path not a string", `{"fullTextPaths":[{"path":"/a"}]}`, `{"fullTextIndexes":[{"path":5}]}`,
			"Full-text index specification at index (0) contains invalid path"},
		{"not an object", `[1]`, ``, "The Full Text Policy is not a valid policy object"},
	}
	for _, c := range cases {
		_, err := Compile([]byte(c.policy), []byte(c.indexing))
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		if !errors.Is(err, ErrInvalidPolicy) {
			t.Errorf("%s: %v is not ErrInvalidPolicy", c.name, err)
		}
		if !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: got %q, want prefix %q", c.name, err.Error(), c.want)
		}
	}
	_, err := Compile([]byte(`{"defaultLanguage":"xx"}`), nil)
	for _, l := range Languages {
		if !strings.Contains(err.Error(), string(l)) {
			t.Errorf("error %q does not list %s", err, l)
		}
	}
}

func TestParseLanguage(t *testing.T) {
	for in, want := range map[string]Language{"en-US": English, "en-us": English, "PT-br": PortugueseBR, "es-ES": Spanish} {
		if got, ok := ParseLanguage(in); !ok || got != want {
			t.Errorf("ParseLanguage(%q) = %q, %v", in, got, ok)
		}
	}
	for _, in := range []string{"", "en", "english", "en-GB"} {
		if _, ok := ParseLanguage(in); ok {
			t.Errorf("ParseLanguage(%q) accepted", in)
		}
	}
}
