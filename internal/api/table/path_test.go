package table

import (
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
