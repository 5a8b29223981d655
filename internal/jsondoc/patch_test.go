package jsondoc

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParsePatch(t *testing.T) {
	ok := func(body, wantCond string, want ...PatchOp) {
		t.Helper()
		cond, ops, err := ParsePatch([]byte(body))
		if err != nil {
			t.Fatalf("ParsePatch(%s): %v", body, err)
		}
		if cond != wantCond {
			t.Errorf("ParsePatch(%s) condition = %q, want %q", body, cond, wantCond)
		}
		if !reflect.DeepEqual(ops, want) {
			t.Errorf("ParsePatch(%s)\n got %+v\nwant %+v", body, ops, want)
		}
	}
	ok(`{"operations":[{"op":"add","path":"/a","value":1}]}`, "",
		PatchOp{Op: "add", Path: "/a", Value: json.RawMessage(`1`)})
	ok(`{"condition":"FROM c WHERE c.x = \"y\"","operations":[{"op":"remove","path":"/a"}]}`, `FROM c WHERE c.x = "y"`,
		PatchOp{Op: "remove", Path: "/a"})
	ok(`{"condition":null,"operations":[{"op":"remove","path":"/a"}],"extra":true}`, "",
		PatchOp{Op: "remove", Path: "/a"})
	ok(` [ {"op":"set","path":"/a/0","value": {"k" : [1, 2]} },
	       {"value":null,"op":"replace","path":"/b"},
	       {"op":"incr","path":"/n","value":-2.5},
	       {"op":"move","from":"/x","path":"/y"} ] `, "",
		PatchOp{Op: "set", Path: "/a/0", Value: json.RawMessage(`{"k" : [1, 2]}`)},
		PatchOp{Op: "replace", Path: "/b", Value: json.RawMessage(`null`)},
		PatchOp{Op: "incr", Path: "/n", Value: json.RawMessage(`-2.5`)},
		PatchOp{Op: "move", Path: "/y", From: "/x"})
	ok(`[{"op":"add","path":"/a~1b/~0","value":"x"}]`, "",
		PatchOp{Op: "add", Path: "/a~1b/~0", Value: json.RawMessage(`"x"`)})
	ok(`[{"op":"add","path":"/\u00e9","value":1}]`, "", PatchOp{Op: "add", Path: "/é", Value: json.RawMessage(`1`)})

	ten := strings.TrimSuffix(strings.Repeat(`{"op":"remove","path":"/a"},`, 10), ",")
	if _, ops, err := ParsePatch([]byte("[" + ten + "]")); err != nil || len(ops) != 10 {
		t.Fatalf("10 operations: %v, %d", err, len(ops))
	}

	bad := func(body, wantErr string, wantIndex int) {
		t.Helper()
		_, _, err := ParsePatch([]byte(body))
		var pe *PatchError
		if !errors.As(err, &pe) || !errors.Is(err, ErrInvalidPatch) {
			t.Fatalf("ParsePatch(%s) = %v, want *PatchError", body, err)
		}
		if pe.Index != wantIndex || err.Error() != wantErr {
			t.Errorf("ParsePatch(%s)\n got %q (index %d)\nwant %q (index %d)", body, err, pe.Index, wantErr, wantIndex)
		}
	}
	bad(`{"operations":[`, "invalid patch: body is not valid JSON: unexpected end of JSON input at offset 15", -1)
	bad(`"x"`, `invalid patch: body must be an object with "operations" or an array of operations`, -1)
	bad(`{"ops":[]}`, `invalid patch: missing "operations"`, -1)
	bad(`{"operations":{}}`, `invalid patch: "operations" must be an array`, -1)
	bad(`{"condition":1,"operations":[]}`, `invalid patch: "condition" must be a string`, -1)
	bad(`[]`, `invalid patch: no operations`, -1)
	bad("["+ten+`,{"op":"remove","path":"/b"}]`, `invalid patch: too many operations: 11 (at most 10 are allowed)`, -1)
	bad(`[{"op":"remove","path":"/a"},1]`, `operation 1: operation must be an object`, 1)
	bad(`[{"path":"/a"}]`, `operation 0: missing "op"`, 0)
	bad(`[{"op":"copy","path":"/a","from":"/b"}]`, `operation 0 (copy /a): unknown op "copy" (want add, set, replace, remove, incr or move)`, 0)
	bad(`[{"op":"Add","path":"/a","value":1}]`, `operation 0 (Add /a): unknown op "Add" (want add, set, replace, remove, incr or move)`, 0)
	bad(`[{"op":1,"path":"/a"}]`, `operation 0: "op" must be a string`, 0)
	bad(`[{"op":"remove","path":2}]`, `operation 0 (remove ): "path" must be a string`, 0)
	bad(`[{"op":"remove"}]`, `operation 0 (remove ): path is empty`, 0)
	bad(`[{"op":"remove","path":""}]`, `operation 0 (remove ): path is empty`, 0)
	bad(`[{"op":"remove","path":"a"}]`, `operation 0 (remove a): path must start with '/'`, 0)
	bad(`[{"op":"remove","path":"/a~2"}]`, `operation 0 (remove /a~2): invalid escape in path (use ~0 for '~' and ~1 for '/')`, 0)
	bad(`[{"op":"remove","path":"/a~"}]`, `operation 0 (remove /a~): invalid escape in path (use ~0 for '~' and ~1 for '/')`, 0)
	for _, op := range []string{"add", "set", "replace", "incr"} {
		bad(`[{"op":"remove","path":"/x"},{"op":"`+op+`","path":"/a"}]`, `operation 1 (`+op+` /a): missing "value"`, 1)
	}
	bad(`[{"op":"incr","path":"/a","value":"1"}]`, `operation 0 (incr /a): "value" of incr must be a number`, 0)
	bad(`[{"op":"add","path":"/a","value":"x","op":"remove"}]`, `invalid patch: body is not valid JSON: duplicate property name "op": a name may appear only once in an object at offset 37`, -1)
	bad(`[{"op":"set","path":"/a","value":{"b":1,"b":2}}]`, `invalid patch: body is not valid JSON: duplicate property name "b": a name may appear only once in an object at offset 40`, -1)
	bad(`[{"op":"incr","path":"/a","value":-1e400}]`, `invalid patch: body is not valid JSON: number -1e400 is out of range: numbers must be finite IEEE 754 double-precision values (at most about ±1.8e308) at offset 34`, -1)
	// A value may nest MaxDepth levels, as a document may; the envelope does not count.
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	if _, _, err := ParsePatch([]byte(`{"operations":[{"op":"set","path":"/a","value":` + deep(MaxDepth) + `}]}`)); err != nil {
		t.Errorf("value %d levels deep: %v", MaxDepth, err)
	}
	bad(`[{"op":"set","path":"/a","value":`+deep(MaxDepth+1)+`}]`, `operation 0 (set /a): "value" is not valid JSON: exceeded the maximum nesting depth: objects and arrays may be nested at most 128 levels deep at offset 128`, 0)
	bad(`{"operations":[{"op":"set","path":"/a","value":`+deep(MaxDepth+1)+`}]}`, `invalid patch: body is not valid JSON: exceeded the maximum nesting depth: objects and arrays may be nested at most 128 levels deep at offset 175`, -1)
	bad(`[{"op":"incr","path":"/a","value":null}]`, `operation 0 (incr /a): "value" of incr must be a number`, 0)
	bad(`[{"op":"move","path":"/a"}]`, `operation 0 (move /a): missing "from"`, 0)
	bad(`[{"op":"move","path":"/a","from":"b"}]`, `operation 0 (move /a): "from": path must start with '/'`, 0)
	bad(`[{"op":"move","path":"/a/b","from":"/a"}]`, `operation 0 (move /a/b): path cannot be a child of "from"`, 0)
	bad(`[{"op":"move","path":"/a","from":"/_ts"}]`, `operation 0 (move /a): cannot patch system property "_ts"`, 0)
	for _, p := range []string{"/_rid", "/_self", "/_etag", "/_ts/x", "/_attachments"} {
		bad(`[{"op":"set","path":"`+p+`","value":1}]`,
			`operation 0 (set `+p+`): cannot patch system property "`+p[1:strings.IndexByte(p[1:]+"/", '/')+1]+`"`, 0)
	}
}

func TestParsePatchCopiesValues(t *testing.T) {
	body := []byte(`[{"op":"set","path":"/a","value":"abc"}]`)
	_, ops, err := ParsePatch(body)
	if err != nil {
		t.Fatal(err)
	}
	copy(body, strings.Repeat("x", len(body)))
	if string(ops[0].Value) != `"abc"` {
		t.Fatalf("ops alias the body: %s", ops[0].Value)
	}
}

func TestApplyPatch(t *testing.T) {
	f := func(doc string, ops string, want string) {
		t.Helper()
		_, parsed, err := ParsePatch([]byte(ops))
		if err != nil {
			t.Fatalf("ParsePatch(%s): %v", ops, err)
		}
		orig := []byte(doc)
		got, err := ApplyPatch(orig, parsed)
		if err != nil {
			t.Fatalf("ApplyPatch(%s, %s): %v", doc, ops, err)
		}
		if string(got) != want {
			t.Errorf("ApplyPatch(%s, %s)\n got %s\nwant %s", doc, ops, got, want)
		}
		if string(orig) != doc {
			t.Errorf("input modified: %s", orig)
		}
	}
	// The example from the Cosmos DB documentation.
	f(`{"id":"e379aea5","name":"R-410 Road Bicycle","price":455.95,"inventory":{"quantity":15},"used":false,"categoryId":"road-bikes","tags":["r-series"]}`,
		`[{"op":"add","path":"/color","value":"silver"},{"op":"remove","path":"/used"},{"op":"set","path":"/price","value":355.45},
		  {"op":"incr","path":"/inventory/quantity","value":10},{"op":"add","path":"/tags/-","value":"featured-bikes"},
		  {"op":"move","from":"/color","path":"/inventory/color"}]`,
		`{"id":"e379aea5","name":"R-410 Road Bicycle","price":355.45,"inventory":{"quantity":25,"color":"silver"},"categoryId":"road-bikes","tags":["r-series","featured-bikes"]}`)

	// add
	f(`{"a":1,"b":2}`, `[{"op":"add","path":"/c","value":3}]`, `{"a":1,"b":2,"c":3}`)
	f(`{"a":1,"b":2}`, `[{"op":"add","path":"/a","value":{"x" : 1}}]`, `{"a":{"x" : 1},"b":2}`)
	f(`{"a":[1,2]}`, `[{"op":"add","path":"/a/0","value":0}]`, `{"a":[0,1,2]}`)
	f(`{"a":[1,2]}`, `[{"op":"add","path":"/a/1","value":9}]`, `{"a":[1,9,2]}`)
	f(`{"a":[1,2]}`, `[{"op":"add","path":"/a/2","value":3}]`, `{"a":[1,2,3]}`)
	f(`{"a":[1,2]}`, `[{"op":"add","path":"/a/-","value":3}]`, `{"a":[1,2,3]}`)
	f(`{"a":[]}`, `[{"op":"add","path":"/a/0","value":"x"}]`, `{"a":["x"]}`)
	f(`{"a":{"b":{}}}`, `[{"op":"add","path":"/a/b/c","value":null}]`, `{"a":{"b":{"c":null}}}`)
	f(`{"a":[{"b":1}]}`, `[{"op":"add","path":"/a/0/c","value":2}]`, `{"a":[{"b":1,"c":2}]}`)
	f(`{}`, `[{"op":"add","path":"/","value":"empty name"}]`, `{"":"empty name"}`)
	// escapes in paths and names
	f(`{"a/b":{"~":1}}`, `[{"op":"set","path":"/a~1b/~0","value":2}]`, `{"a/b":{"~":2}}`)
	f(`{"\u00e9":1}`, `[{"op":"set","path":"/é","value":2}]`, `{"\u00e9":2}`)
	f(`{}`, `[{"op":"add","path":"/~01","value":1}]`, `{"~1":1}`)
	f(`{}`, `[{"op":"add","path":"/q\"\\","value":1}]`, `{"q\"\\":1}`)
	// set
	f(`{"a":[1,2]}`, `[{"op":"set","path":"/a/0","value":9}]`, `{"a":[9,2]}`)
	f(`{"a":[1,2]}`, `[{"op":"set","path":"/a/2","value":9}]`, `{"a":[1,2,9]}`)
	f(`{"a":[1,2]}`, `[{"op":"set","path":"/a/-","value":9}]`, `{"a":[1,2,9]}`)
	f(`{"a":1}`, `[{"op":"set","path":"/b","value":[1]}]`, `{"a":1,"b":[1]}`)
	// replace
	f(`{"a":1,"b":2}`, `[{"op":"replace","path":"/a","value":"x"}]`, `{"a":"x","b":2}`)
	f(`{"a":[1,2]}`, `[{"op":"replace","path":"/a/1","value":3}]`, `{"a":[1,3]}`)
	f(`{"a":null}`, `[{"op":"replace","path":"/a","value":false}]`, `{"a":false}`)
	// remove
	f(`{"a":1,"b":2,"c":3}`, `[{"op":"remove","path":"/b"}]`, `{"a":1,"c":3}`)
	f(`{"a":[1,2,3]}`, `[{"op":"remove","path":"/a/0"}]`, `{"a":[2,3]}`)
	f(`{"a":[1,2,3]}`, `[{"op":"remove","path":"/a/2"},{"op":"remove","path":"/a/0"}]`, `{"a":[2]}`)
	// incr
	f(`{"n":5}`, `[{"op":"incr","path":"/n","value":1}]`, `{"n":6}`)
	f(`{"n":5}`, `[{"op":"incr","path":"/n","value":-7}]`, `{"n":-2}`)
	f(`{"n":5}`, `[{"op":"incr","path":"/n","value":0.5}]`, `{"n":5.5}`)
	f(`{"n":1.5}`, `[{"op":"incr","path":"/n","value":1.5}]`, `{"n":3}`)
	f(`{"n":1e2}`, `[{"op":"incr","path":"/n","value":1}]`, `{"n":101}`)
	f(`{"n":0.1}`, `[{"op":"incr","path":"/n","value":0.2}]`, `{"n":0.30000000000000004}`)
	f(`{"n":1e20}`, `[{"op":"incr","path":"/n","value":1e20}]`, `{"n":200000000000000000000}`)
	f(`{"n":1e21}`, `[{"op":"incr","path":"/n","value":1e21}]`, `{"n":2e+21}`)
	f(`{"n":9223372036854775807}`, `[{"op":"incr","path":"/n","value":1}]`, `{"n":9223372036854776000}`)
	f(`{"n":-9223372036854775808}`, `[{"op":"incr","path":"/n","value":-1}]`, `{"n":-9223372036854776000}`)
	f(`{"n":9007199254740993}`, `[{"op":"incr","path":"/n","value":1}]`, `{"n":9007199254740994}`)
	f(`{"a":1}`, `[{"op":"incr","path":"/n","value":3}]`, `{"a":1,"n":3}`)
	f(`{"a":[1,2]}`, `[{"op":"incr","path":"/a/1","value":3}]`, `{"a":[1,5]}`)
	// move
	f(`{"a":1,"b":2}`, `[{"op":"move","from":"/a","path":"/c"}]`, `{"b":2,"c":1}`)
	f(`{"a":1,"b":2}`, `[{"op":"move","from":"/a","path":"/b"}]`, `{"b":1}`)
	f(`{"a":1,"b":2}`, `[{"op":"move","from":"/a","path":"/a"}]`, `{"a":1,"b":2}`)
	f(`{"a":{"b":{"c":1}}}`, `[{"op":"move","from":"/a/b","path":"/a"}]`, `{"a":{"c":1}}`)
	f(`{"foo":["all","grass","cows","eat"]}`, `[{"op":"move","from":"/foo/1","path":"/foo/3"}]`, `{"foo":["all","cows","eat","grass"]}`)
	// move writes with set semantics: an existing index is overwritten, not inserted before.
	f(`{"foo":["all","grass","cows","eat"]}`, `[{"op":"move","from":"/foo/1","path":"/foo/0"}]`, `{"foo":["grass","cows","eat"]}`)
	f(`{"foo":["all","grass","cows","eat"]}`, `[{"op":"move","from":"/foo/1","path":"/foo/-"}]`, `{"foo":["all","cows","eat","grass"]}`)
	f(`{"a":[1],"b":{}}`, `[{"op":"move","from":"/a/0","path":"/b/x"}]`, `{"a":[],"b":{"x":1}}`)

	// Untouched parts keep their exact text, whitespace included; new members go last.
	f("{\n  \"id\" : \"x\",\n  \"big\": 12345678901234567890,\n  \"s\": \"\\u00e9\",\n  \"o\": { \"k\" : [ 1 , 2 ] },\n  \"p\": {\"q\": 1}\n}",
		`[{"op":"set","path":"/p/r","value":2},{"op":"add","path":"/z","value":true}]`,
		`{"id":"x","big":12345678901234567890,"s":"\u00e9","o":{ "k" : [ 1 , 2 ] },"p":{"q":1,"r":2},"z":true}`)
}

func TestApplyPatchErrors(t *testing.T) {
	f := func(doc string, ops string, wantErr string) {
		t.Helper()
		var parsed []PatchOp
		if err := json.Unmarshal([]byte(ops), &parsed); err != nil {
			t.Fatalf("bad test ops %s: %v", ops, err)
		}
		orig := []byte(doc)
		got, err := ApplyPatch(orig, parsed)
		if err == nil {
			t.Fatalf("ApplyPatch(%s, %s) = %s, want error %q", doc, ops, got, wantErr)
		}
		if got != nil {
			t.Errorf("ApplyPatch returned a document with an error")
		}
		if !errors.Is(err, ErrInvalidPatch) || err.Error() != wantErr {
			t.Errorf("ApplyPatch(%s, %s)\n got %q\nwant %q", doc, ops, err, wantErr)
		}
		if string(orig) != doc {
			t.Errorf("input modified: %s", orig)
		}
	}
	// A failing operation leaves nothing applied, even after earlier successes.
	f(`{"a":{"b":1}}`, `[{"op":"set","path":"/x","value":1},{"op":"remove","path":"/a/b"},{"op":"replace","path":"/a/b","value":2}]`,
		`operation 2 (replace /a/b): path does not exist`)
	f(`{}`, `[{"op":"add","path":"/a/b","value":1}]`, `operation 0 (add /a/b): parent of path does not exist`)
	f(`{"a":1}`, `[{"op":"add","path":"/a/b","value":1}]`, `operation 0 (add /a/b): parent of path is not an object or an array`)
	f(`{"a":"s"}`, `[{"op":"set","path":"/a/0","value":1}]`, `operation 0 (set /a/0): parent of path is not an object or an array`)
	f(`{"a":[1]}`, `[{"op":"add","path":"/a/2","value":1}]`, `operation 0 (add /a/2): array index 2 is out of range (length 1)`)
	f(`{"a":[1]}`, `[{"op":"set","path":"/a/2","value":1}]`, `operation 0 (set /a/2): array index 2 is out of range (length 1)`)
	f(`{"a":[1]}`, `[{"op":"add","path":"/a/01","value":1}]`, `operation 0 (add /a/01): invalid array index "01"`)
	f(`{"a":[1]}`, `[{"op":"add","path":"/a/x","value":1}]`, `operation 0 (add /a/x): invalid array index "x"`)
	f(`{"a":[1]}`, `[{"op":"add","path":"/a/99999999999999999999","value":1}]`,
		`operation 0 (add /a/99999999999999999999): array index 99999999999999999999 is out of range (length 1)`)
	f(`{"a":[[1]]}`, `[{"op":"add","path":"/a/1/0","value":1}]`, `operation 0 (add /a/1/0): parent of path does not exist`)
	f(`{"a":1}`, `[{"op":"replace","path":"/b","value":1}]`, `operation 0 (replace /b): path does not exist`)
	f(`{"a":[1]}`, `[{"op":"replace","path":"/a/1","value":1}]`, `operation 0 (replace /a/1): path does not exist`)
	f(`{"a":[1]}`, `[{"op":"replace","path":"/a/-","value":1}]`, `operation 0 (replace /a/-): path does not exist`)
	f(`{"a":1}`, `[{"op":"replace","path":"/x/y","value":1}]`, `operation 0 (replace /x/y): path does not exist`)
	f(`{"a":1}`, `[{"op":"remove","path":"/b"}]`, `operation 0 (remove /b): path does not exist`)
	f(`{"a":[1]}`, `[{"op":"remove","path":"/a/1"}]`, `operation 0 (remove /a/1): path does not exist`)
	f(`{"a":[1]}`, `[{"op":"remove","path":"/a/-"}]`, `operation 0 (remove /a/-): path does not exist`)
	f(`{"a":"1"}`, `[{"op":"incr","path":"/a","value":1}]`, `operation 0 (incr /a): target of incr is not a number`)
	f(`{"a":[1]}`, `[{"op":"incr","path":"/a/1","value":1}]`, `operation 0 (incr /a/1): path does not exist`)
	f(`{"a":1e308}`, `[{"op":"incr","path":"/a","value":1e308}]`, `operation 0 (incr /a): incr result is out of range`)
	f(`{"a":1}`, `[{"op":"incr","path":"/a","value":"x"}]`, `operation 0 (incr /a): "value" of incr must be a number`)
	f(`{"a":1}`, `[{"op":"move","from":"/b","path":"/c"}]`, `operation 0 (move /c): "from" does not exist`)
	f(`{"a":1}`, `[{"op":"move","from":"/b","path":"/b"}]`, `operation 0 (move /b): "from" does not exist`)
	f(`{"a":{"b":1}}`, `[{"op":"move","from":"/a","path":"/a/b/c"}]`, `operation 0 (move /a/b/c): path cannot be a child of "from"`)
	f(`{"a":1}`, `[{"op":"move","from":"/a","path":"/x/y"}]`, `operation 0 (move /x/y): parent of path does not exist`)
	f(`{"_ts":1}`, `[{"op":"remove","path":"/_ts"}]`, `operation 0 (remove /_ts): cannot patch system property "_ts"`)
	f(`{}`, `[{"op":"test","path":"/a","value":1}]`, `operation 0 (test /a): unknown op "test" (want add, set, replace, remove, incr or move)`)

	_, err := ApplyPatch([]byte(`{}`), []PatchOp{{Op: "set", Path: "/a", Value: json.RawMessage(`{"x":}`)}})
	if !errors.Is(err, ErrSyntax) || err.Error() != `operation 0 (set /a): "value" is not valid JSON: invalid character '}' looking for beginning of value at offset 5` {
		t.Errorf("invalid value: %v", err)
	}

	// Bad documents are not patch errors.
	if _, err := ApplyPatch([]byte(`[1]`), nil); !errors.Is(err, ErrNotObject) {
		t.Errorf("array document: %v", err)
	}
	if _, err := ApplyPatch([]byte(`{"a":`), nil); !errors.Is(err, ErrSyntax) {
		t.Errorf("truncated document: %v", err)
	}
}

func TestApplyPatchNoOpsIsIdentityModuloWhitespace(t *testing.T) {
	doc := " {\"a\" : [1, 2], \"b\":{}} \n"
	got, err := ApplyPatch([]byte(doc), nil)
	if err != nil || string(got) != `{"a" : [1, 2], "b":{}}` {
		t.Fatalf("got %s, %v", got, err)
	}
}

func TestPatchOpTouches(t *testing.T) {
	f := func(op PatchOp, pointer string, want bool) {
		t.Helper()
		if got := op.Touches(pointer); got != want {
			t.Errorf("%+v.Touches(%q) = %v, want %v", op, pointer, got, want)
		}
	}
	f(PatchOp{Op: "set", Path: "/pk"}, "/pk", true)
	f(PatchOp{Op: "set", Path: "/pk/x"}, "/pk", true)
	f(PatchOp{Op: "set", Path: "/a"}, "/a/pk", true)
	f(PatchOp{Op: "set", Path: "/pkx"}, "/pk", false)
	f(PatchOp{Op: "set", Path: "/b"}, "/a/b", false)
	f(PatchOp{Op: "move", Path: "/b", From: "/id"}, "/id", true)
	f(PatchOp{Op: "set", Path: "/b", From: "/id"}, "/id", false)
	f(PatchOp{Op: "set", Path: "/a~1b"}, "/a~1b", true)
	f(PatchOp{Op: "set", Path: "/a/b"}, "/a~1b", false)
	f(PatchOp{Op: "set", Path: "/a"}, "bad", false)
}

func TestPatchErrorFormat(t *testing.T) {
	e := &PatchError{Index: 2, Op: "replace", Path: "/a/b", Msg: "path does not exist"}
	if e.Error() != "operation 2 (replace /a/b): path does not exist" {
		t.Fatal(e.Error())
	}
	se := &SyntaxError{Offset: 3, Msg: "x"}
	e = &PatchError{Index: -1, Msg: "m", Err: se}
	var got *SyntaxError
	if !errors.As(e, &got) || got != se || !errors.Is(e, ErrInvalidPatch) || !errors.Is(e, ErrSyntax) {
		t.Fatal("unwrap chain broken")
	}
}
