package jsondoc

import (
	"encoding/json"
	"errors"
	"testing"
)

var fuzzDocs = []string{
	`{}`,
	`{"id":"a","pk":"p","a":{"b":[1,2,{"c":null}]}}`,
	"{\n \"id\" : 1.5e10 , \"a\" : { \"b\" : true } }\n",
	`{"\u0069d":"\ud83d\ude00","a":"\\\"\/\b\f\n\r\t"}`,
	`{"a":{"b":1},"a":{"b":2},"id":1,"id":2}`,
	`{"_rid":"x","_ts":1,"_self":"s","_etag":"\"e\"","_attachments":"attachments/","v":-0.0e-0}`,
	`[{"id":1}]`, `"s"`, `-1`, `null`, ``, `{"a":`, `{"a":"\u12`, `{"a":01}`, `{} {}`,
}

// FuzzScan: Scan never panics and agrees with encoding/json about validity
// and objectness; on objects without duplicate names it finds the same id,
// /a and /a/b values; WithSystem/StripSystem of accepted input are valid.
func FuzzScan(f *testing.F) {
	for _, d := range fuzzDocs {
		f.Add([]byte(d))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkScanAgainstStdlib(t, data)
		if _, err := Scan(data, nil); err != nil {
			return
		}
		out := WithSystem(nil, data, testSys)
		if !json.Valid(out) {
			t.Fatalf("WithSystem(%q) = invalid %q", data, out)
		}
		if _, err := Scan(out, nil); err != nil {
			t.Fatalf("Scan(WithSystem(%q)): %v", data, err)
		}
		if s := StripSystem(nil, data); !json.Valid(s) {
			t.Fatalf("StripSystem(%q) = invalid %q", data, s)
		}
	})
}

// FuzzApplyPatch: ParsePatch and ApplyPatch never panic; an applied patch
// yields a valid JSON object and never modifies its input.
func FuzzApplyPatch(f *testing.F) {
	patches := []string{
		`[{"op":"add","path":"/a/b/-","value":1}]`,
		`{"condition":"FROM c","operations":[{"op":"set","path":"/a/0","value":{"x":[]}}]}`,
		`[{"op":"incr","path":"/id","value":1.5},{"op":"remove","path":"/a"}]`,
		`[{"op":"move","from":"/a/b","path":"/z"},{"op":"replace","path":"/pk","value":null}]`,
		`[{"op":"add","path":"/~01/~1","value":"\u00e9"}]`,
	}
	for i, d := range fuzzDocs {
		f.Add([]byte(d), []byte(patches[i%len(patches)]))
	}
	f.Fuzz(func(t *testing.T, doc, body []byte) {
		_, ops, err := ParsePatch(body)
		if err != nil {
			if !errors.Is(err, ErrInvalidPatch) {
				t.Fatalf("ParsePatch error %v is not ErrInvalidPatch", err)
			}
			// Still exercise ApplyPatch on raw ops from encoding/json.
			if json.Unmarshal(body, &ops) != nil {
				return
			}
		}
		orig := string(doc)
		out, err := ApplyPatch(doc, ops)
		if string(doc) != orig {
			t.Fatalf("ApplyPatch modified its input")
		}
		if err != nil {
			if out != nil {
				t.Fatalf("document returned with error %v", err)
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("ApplyPatch(%q, %q) = invalid %q", doc, body, out)
		}
		if _, err := Scan(out, nil); err != nil {
			t.Fatalf("ApplyPatch(%q, %q) = %q, which Scan rejects: %v", doc, body, out, err)
		}
	})
}
