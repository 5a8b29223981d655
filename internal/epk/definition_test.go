package epk

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestDefinitionValidate(t *testing.T) {
	ok := func(d Definition) {
		t.Helper()
		if err := d.Validate(); err != nil {
			t.Fatalf("Validate(%+v): %v", d, err)
		}
	}
	ok(Definition{Kind: Hash, Version: 1, Paths: []string{"/pk"}})
	ok(Definition{Kind: Hash, Version: 2, Paths: []string{"/a/b/c"}})
	ok(Definition{Kind: Hash, Version: 2, Paths: []string{`/"a b"/c`}})
	ok(Definition{Kind: MultiHash, Version: 2, Paths: []string{"/tenant", "/user"}})
	ok(Definition{Kind: MultiHash, Version: 2, Paths: []string{"/tenant", "/user", "/session/id"}})

	bad := func(d Definition, wantSub string) {
		t.Helper()
		err := d.Validate()
		if err == nil || !errors.Is(err, ErrInvalidDefinition) || !strings.Contains(err.Error(), wantSub) {
			t.Fatalf("Validate(%+v) = %v, want an error containing %q", d, err, wantSub)
		}
	}
	bad(Definition{Kind: Hash, Version: 2}, "kind Hash needs exactly 1 path, got 0")
	bad(Definition{Kind: Hash, Version: 2, Paths: []string{"/a", "/b"}}, "exactly 1 path, got 2")
	bad(Definition{Kind: Hash, Version: 0, Paths: []string{"/a"}}, "version must be 1 or 2, got 0")
	bad(Definition{Kind: Hash, Version: 3, Paths: []string{"/a"}}, "version must be 1 or 2, got 3")
	bad(Definition{Kind: MultiHash, Version: 2}, "kind MultiHash needs 1 to 3 paths, got 0")
	bad(Definition{Kind: MultiHash, Version: 2, Paths: []string{"/a", "/b", "/c", "/d"}}, "1 to 3 paths, got 4")
	bad(Definition{Kind: MultiHash, Version: 1, Paths: []string{"/a", "/b"}}, "kind MultiHash needs version 2, got 1")
	bad(Definition{Kind: MultiHash, Version: 2, Paths: []string{"/a", "/a"}}, `path "/a" appears twice`)
	bad(Definition{Kind: MultiHash, Version: 2, Paths: []string{`/"a"`, "/a"}}, "appears twice")
	bad(Definition{Kind: "Range", Version: 1, Paths: []string{"/a"}}, `unsupported kind "Range"; want Hash or MultiHash`)
	bad(Definition{Kind: "", Version: 1, Paths: []string{"/a"}}, `unsupported kind ""`)
	bad(Definition{Kind: Hash, Version: 2, Paths: []string{"a"}}, `The partition key component definition path 'a' could not be accepted, failed near position '0'. Partition key paths must contain only valid characters and not contain a trailing slash or wildcard character. (The path must start with '/'.)`)
	bad(Definition{Kind: Hash, Version: 2, Paths: []string{""}}, "path '' could not be accepted, failed near position '0'. Partition key paths must contain only valid characters and not contain a trailing slash or wildcard character. (The path is empty.)")
	bad(Definition{Kind: Hash, Version: 2, Paths: []string{"/"}}, "has an empty segment")
	bad(Definition{Kind: Hash, Version: 2, Paths: []string{"/a//b"}}, "has an empty segment")
	bad(Definition{Kind: Hash, Version: 2, Paths: []string{"/a/"}}, "path '/a/' could not be accepted, failed near position '3'")
	bad(Definition{Kind: Hash, Version: 2, Paths: []string{"/a/*"}}, "wildcard")
	bad(Definition{Kind: MultiHash, Version: 2, Paths: []string{"/a", "/b/"}}, `path '/b/' could not be accepted, failed near position '3'`)
}

func TestParsePath(t *testing.T) {
	f := func(p string, want ...string) {
		t.Helper()
		got, err := ParsePath(p)
		if err != nil {
			t.Fatalf("ParsePath(%q): %v", p, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("ParsePath(%q) = %q, want %q", p, got, want)
		}
		if s := SplitPath(p); !reflect.DeepEqual(s, want) {
			t.Fatalf("SplitPath(%q) = %q", p, s)
		}
	}
	f("/a", "a")
	f("/a/b", "a", "b")
	f("/_partitionKey", "_partitionKey")
	f(`/"a b"/c`, "a b", "c")
	f(`/"a/b"`, "a/b")
	f(`/"say \"hi\""/x`, `say "hi"`, "x")
	f(`/a/"b"`, "a", "b")
	f("/日本", "日本")

	e := func(p, wantSub string) {
		t.Helper()
		if _, err := ParsePath(p); err == nil || !strings.Contains(err.Error(), wantSub) {
			t.Fatalf("ParsePath(%q) error = %v, want containing %q", p, err, wantSub)
		}
		if s := SplitPath(p); s != nil {
			t.Fatalf("SplitPath(%q) = %q, want nil", p, s)
		}
	}
	e(`/"a`, "unterminated quoted segment")
	e(`/"a"b`, "text after a quoted segment")
	e(`/""`, "empty segment")
	e(`/a"b`, `'"' inside an unquoted segment`)
	e(`/"\q"`, "invalid quoted segment")

	// A new definition is read as the service reads it: whitespace
	// separates names, so /id ds is refused near the second name.
	v := func(path, want string) {
		t.Helper()
		err := Definition{Kind: Hash, Version: 2, Paths: []string{path}}.Validate()
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Fatalf("Validate(%q) = %v, want %q", path, err, want)
		}
	}
	v("/id ds", "The partition key component definition path '/id ds' could not be accepted, failed near position '4'.")
	v("/asdwqr31 @#$#$WRadf", "failed near position '10'")
	v("/a/b c/d", "failed near position '5'")
	v(`/"id ds"`, "")
	v("/id ", "")
	v("/ id", "")
}

func TestDefinitionJSON(t *testing.T) {
	var d Definition
	if err := json.Unmarshal([]byte(`{"paths":["/t","/u"],"kind":"MultiHash","version":2}`), &d); err != nil {
		t.Fatal(err)
	}
	if d.Kind != MultiHash || d.Version != 2 || !reflect.DeepEqual(d.Paths, []string{"/t", "/u"}) {
		t.Fatalf("%+v", d)
	}
	b, _ := json.Marshal(Definition{Kind: Hash, Version: 2, Paths: []string{"/pk"}})
	if string(b) != `{"kind":"Hash","version":2,"paths":["/pk"]}` {
		t.Fatalf("%s", b)
	}
}

// A MultiHash key of one path hashes as a Hash version 2 key: the service
// accepts the definition, and the SDKs route it the same way.
func TestMultiHashOfOnePathIsHashV2(t *testing.T) {
	mh := Definition{Kind: MultiHash, Version: 2, Paths: []string{"/a"}}
	if err := mh.Validate(); err != nil {
		t.Fatal(err)
	}
	h2 := Definition{Kind: Hash, Version: 2, Paths: []string{"/a"}}
	for _, k := range []Key{{String("x")}, {Number(42)}, {Bool(true)}, {Null()}} {
		a, err1 := mh.EPK(k)
		b, err2 := h2.EPK(k)
		if err1 != nil || err2 != nil || a != b {
			t.Errorf("%v: MultiHash %q (%v), Hash v2 %q (%v)", k, a, err1, b, err2)
		}
	}
}
