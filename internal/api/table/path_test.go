package table

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestParseEntityPath(t *testing.T) {
	for _, c := range []struct {
		in, table string
		keys      []string
	}{
		{"t", "t", nil},
		{"t()", "t", nil},
		{"t(PartitionKey='p''1',RowKey='r 1')", "t", []string{"p'1", "r 1"}},
		{"t(RowKey='b',PartitionKey='a')", "t", []string{"a", "b"}},
		{"t(PartitionKey='',RowKey='x,y)')", "t", []string{"", "x,y)"}},
	} {
		table, keys, err := parseEntityPath(c.in)
		if err != nil || table != c.table || !slices.Equal(keys, c.keys) {
			t.Errorf("parseEntityPath(%q) = %q, %q, %v; want %q, %q", c.in, table, keys, err, c.table, c.keys)
		}
	}
	for _, bad := range []string{"t(PartitionKey='a')", "t(PartitionKey='a',RowKey='b',X='c')", "t(PartitionKey=a,RowKey='b')", "t(PartitionKey='a,RowKey='b')", "t(PartitionKey='a',PartitionKey='b')"} {
		if _, _, err := parseEntityPath(bad); err == nil {
			t.Errorf("parseEntityPath(%q) succeeded", bad)
		}
	}
}

// scanMembers, the fast path of reading a stored item, splits every valid
// JSON object as encoding/json does.
func TestScanMembersMatchesDecoder(t *testing.T) {
	for _, doc := range scanMemberSeeds {
		checkScanMembers(t, []byte(doc))
	}
}

var scanMemberSeeds = []string{
	`{}`, ` { } `, `{"a":1}`, `{"id":"r","PartitionKey":"p","x@odata.type":"Edm.Int64","x":"12"}`,
	`{ "a" : [1, {"b":"]}\""}] , "c\"d":{"e":[[]]},"f":null,"g":true,"h":-1.5e3 }`,
	`{"\u0041":"\ud83d\ude00","b":"\\"}`, `{"a":{}}`, `[1]`, `"s"`, `{"a":1,}`, `{"a"}`, `{"a":1}x`,
}

func FuzzScanMembers(f *testing.F) {
	for _, s := range scanMemberSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) { checkScanMembers(t, doc) })
}

func checkScanMembers(t *testing.T, doc []byte) {
	t.Helper()
	got, ok := scanMembers(doc)
	if !json.Valid(doc) {
		return // stored items are valid JSON; anything else may go either way
	}
	want, err := objectMembers(doc)
	if err != nil {
		if ok {
			t.Fatalf("%s: scanMembers accepted what encoding/json refuses: %v", doc, err)
		}
		return
	}
	if !ok {
		t.Fatalf("%s: scanMembers refused a valid object", doc)
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d members, want %d", doc, len(got), len(want))
	}
	for i := range got {
		if got[i].name != want[i].name || string(got[i].raw) != string(want[i].raw) {
			t.Fatalf("%s: member %d is %q:%s, want %q:%s", doc, i, got[i].name, got[i].raw, want[i].name, want[i].raw)
		}
	}
}
