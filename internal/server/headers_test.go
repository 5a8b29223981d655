package server_test

import (
	"bufio"
	"io"
	"net/textproto"
	"strings"
	"testing"

	"github.com/parsecdb/parsec/internal/server"
)

// rawHeaders sends one signed request and returns the response's status
// line and its header lines as they came over the wire, with their case.
func rawHeaders(t *testing.T, s *server.Server, method, path, body string, extra ...string) (string, []string) {
	t.Helper()
	c := dial(t, s)
	defer c.Close()
	if _, err := io.WriteString(c, signed(method, path, host(s), len(body), extra...)+body); err != nil {
		t.Fatal(err)
	}
	r := textproto.NewReader(bufio.NewReader(c))
	status, err := r.ReadLine()
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for {
		l, err := r.ReadLine()
		if err != nil {
			t.Fatal(err)
		}
		if l == "" {
			return status, lines
		}
		lines = append(lines, l)
	}
}

// TestCosmosHeaderNamesAreLowerCase reads responses byte for byte, as a
// client that looks headers up case-sensitively does: every Cosmos header
// name (x-ms-*, etag, lsn) comes in lower case, on successes and errors,
// with the paging and session headers where they belong.
func TestCosmosHeaderNamesAreLowerCase(t *testing.T) {
	s := start(t, server.Options{})
	setup(t, s)
	if st := call(t, s, "POST", "/dbs/db/colls/c/docs", `{"id":"small","pk":"p"}`, `x-ms-documentdb-partitionkey: ["p"]`); st != 201 {
		t.Fatalf("create: %d", st)
	}
	for _, tc := range []struct {
		method, path, body string
		extra              []string
		status             string
		must               []string // header names that must be there, as sent
	}{
		{"GET", "/", "", nil, "200", []string{"x-ms-request-charge", "x-ms-activity-id"}},
		{"GET", "/dbs/db/colls/c/docs/small", "", []string{`x-ms-documentdb-partitionkey: ["p"]`}, "200", []string{"etag", "x-ms-session-token"}},
		{"GET", "/dbs/db/colls/c/docs/nope", "", []string{`x-ms-documentdb-partitionkey: ["p"]`}, "404", []string{"x-ms-session-token"}},
		{"POST", "/dbs/db/colls/c/docs", `{"query":"SELECT c.id FROM c"}`, []string{"Content-Type: application/query+json",
			"x-ms-documentdb-isquery: True", "x-ms-documentdb-query-enablecrosspartition: True", "x-ms-max-item-count: 1"}, "200",
			[]string{"x-ms-continuation", "x-ms-item-count", "x-ms-session-token"}},
		{"GET", "/dbs/db/colls/c/docs", "", []string{"A-IM: Incremental feed", "x-ms-documentdb-partitionkeyrangeid: 0"}, "200", []string{"etag"}},
		{"GET", "/dbs/db/colls/nope", "", nil, "404", []string{"x-ms-activity-id"}},
	} {
		status, lines := rawHeaders(t, s, tc.method, tc.path, tc.body, tc.extra...)
		if !strings.Contains(status, " "+tc.status+" ") {
			t.Errorf("%s %s: %s, want %s", tc.method, tc.path, status, tc.status)
		}
		seen := map[string]bool{}
		for _, l := range lines {
			name, _, _ := strings.Cut(l, ":")
			seen[name] = true
			low := strings.ToLower(name)
			if (strings.HasPrefix(low, "x-ms-") || low == "etag" || low == "lsn") && name != low {
				t.Errorf("%s %s: header %q is not in lower case", tc.method, tc.path, name)
			}
		}
		for _, m := range tc.must {
			if !seen[m] {
				t.Errorf("%s %s: no %q header among %q", tc.method, tc.path, m, lines)
			}
		}
	}
}
