package gosdk

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/auth"
	"github.com/parsecdb/parsec/internal/server"
)

// wireClient speaks HTTP/1.1 over a plain TCP connection and keeps
// response header names exactly as they came on the wire, so that every
// lookup is case-sensitive, as in clients that keep headers in a plain
// map (the failure mode: a client that looks up "x-ms-continuation"
// silently stops paging when the server sends "X-Ms-Continuation"). It is
// neither SDK, and it follows rid-based links (`_self`), signing them as
// the older SDKs do.
type wireClient struct {
	t    *testing.T
	addr string
	key  []byte
	conn net.Conn
	rd   *bufio.Reader
}

// wireResp is a response with its header names as sent.
type wireResp struct {
	status int
	header map[string]string // names exactly as on the wire
	body   []byte
}

func newWireClient(t *testing.T, s *server.Server) *wireClient {
	u, err := url.Parse(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	key, _ := base64.StdEncoding.DecodeString(auth.EmulatorKey)
	c := &wireClient{t: t, addr: u.Host, key: key}
	t.Cleanup(func() {
		if c.conn != nil {
			c.conn.Close()
		}
	})
	return c
}

// do sends one request on the client's keep-alive connection. A path whose
// database segment is a resource id is signed with its last resource id,
// lower-cased; a name-based one with its path.
func (c *wireClient) do(method, path string, body []byte, hdr map[string]string) wireResp {
	c.t.Helper()
	if c.conn == nil {
		conn, err := net.Dial("tcp", c.addr)
		if err != nil {
			c.t.Fatal(err)
		}
		c.conn, c.rd = conn, bufio.NewReader(conn)
	}
	date := time.Now().UTC().Format(http.TimeFormat)
	typ, link := auth.Resource(path)
	if segs := strings.Split(strings.Trim(path, "/"), "/"); len(segs) > 1 && len(segs[1]) == 8 && strings.HasSuffix(segs[1], "==") {
		typ, link = auth.RidLink(path)
	}
	var req bytes.Buffer
	fmt.Fprintf(&req, "%s %s HTTP/1.1\r\nhost: %s\r\nx-ms-date: %s\r\nx-ms-version: 2018-12-31\r\nauthorization: %s\r\ncontent-length: %d\r\n",
		method, path, c.addr, date, auth.Header(auth.Sign(c.key, method, typ, link, date)), len(body))
	for k, v := range hdr {
		fmt.Fprintf(&req, "%s: %s\r\n", k, v)
	}
	req.WriteString("\r\n")
	req.Write(body)
	if _, err := c.conn.Write(req.Bytes()); err != nil {
		c.t.Fatal(err)
	}
	return c.read()
}

// read parses one response, keeping header names as sent.
func (c *wireClient) read() wireResp {
	c.t.Helper()
	line, err := c.rd.ReadString('\n')
	if err != nil {
		c.t.Fatal(err)
	}
	f := strings.SplitN(strings.TrimSpace(line), " ", 3)
	if len(f) < 2 || f[0] != "HTTP/1.1" {
		c.t.Fatalf("bad status line %q", line)
	}
	r := wireResp{header: map[string]string{}}
	if r.status, err = strconv.Atoi(f[1]); err != nil {
		c.t.Fatalf("bad status line %q", line)
	}
	for {
		line, err := c.rd.ReadString('\n')
		if err != nil {
			c.t.Fatal(err)
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			c.t.Fatalf("bad header line %q", line)
		}
		r.header[name] = strings.TrimSpace(value)
	}
	var body io.Reader
	switch {
	case strings.EqualFold(r.header["Transfer-Encoding"], "chunked"):
		body = httputil.NewChunkedReader(c.rd)
	case r.header["Content-Length"] != "":
		n, _ := strconv.Atoi(r.header["Content-Length"])
		body = io.LimitReader(c.rd, int64(n))
	default:
		body = bytes.NewReader(nil)
	}
	if r.body, err = io.ReadAll(body); err != nil {
		c.t.Fatal(err)
	}
	if strings.EqualFold(r.header["Transfer-Encoding"], "chunked") {
		// The trailer section ends with an empty line.
		for {
			line, err := c.rd.ReadString('\n')
			if err != nil || strings.TrimSpace(line) == "" {
				break
			}
		}
	}
	for name := range r.header {
		if strings.HasPrefix(strings.ToLower(name), "x-ms-") && name != strings.ToLower(name) {
			c.t.Errorf("response header %q is not in lower case", name)
		}
	}
	return r
}

// send is do, waiting out throttling as a client must: a 429 names its
// wait in x-ms-retry-after-ms (and substatus 3200), and the request is
// sent again after it. waits counts the waits.
func (c *wireClient) send(method, path string, body []byte, hdr map[string]string, waits *int) wireResp {
	c.t.Helper()
	for {
		r := c.do(method, path, body, hdr)
		if r.status != 429 {
			return r
		}
		ms, err := strconv.Atoi(r.header["x-ms-retry-after-ms"])
		if err != nil || ms <= 0 {
			c.t.Fatalf("429 without a usable x-ms-retry-after-ms (headers %v)", r.header)
		}
		if r.header["x-ms-substatus"] != "3200" {
			c.t.Fatalf("429 with x-ms-substatus %q, want 3200", r.header["x-ms-substatus"])
		}
		*waits++
		time.Sleep(time.Duration(ms) * time.Millisecond)
	}
}

func (r wireResp) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("status %d, body %q: %v", r.status, r.body, err)
	}
	return m
}

// TestWireClient pages, waits out throttling and carries session tokens
// with case-sensitive header lookups and rid-based links only.
func TestWireClient(t *testing.T) {
	s := startServer(t, server.Options{PartitionMaxRUs: 1000})
	c := newWireClient(t, s)

	r := c.do("POST", "/dbs", []byte(`{"id":"wire"}`), nil)
	if r.status != 201 {
		t.Fatalf("create database: %d %s", r.status, r.body)
	}
	dbSelf := r.json(t)["_self"].(string)
	r = c.do("POST", "/"+dbSelf+"colls", []byte(`{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2}}`),
		map[string]string{"x-ms-offer-throughput": "400"})
	if r.status != 201 {
		t.Fatalf("create container by its database's rid link: %d %s", r.status, r.body)
	}
	collSelf := r.json(t)["_self"].(string)
	if !strings.HasPrefix(collSelf, dbSelf+"colls/") {
		t.Fatalf("container _self %q is not under %q", collSelf, dbSelf)
	}

	// Writes, with throttling waits read from x-ms-retry-after-ms: the
	// container has 400 RU/s, and 200 writes of over 10 RU go beyond it.
	var selfs []string
	waits := 0
	const n = 200
	for i := 0; i < n; i++ {
		body := []byte(fmt.Sprintf(`{"id":"w%03d","pk":"k%d","pad":%q}`, i, i%3, strings.Repeat("x", 1500)))
		r = c.send("POST", "/"+collSelf+"docs", body, map[string]string{"x-ms-documentdb-partitionkey": fmt.Sprintf(`["k%d"]`, i%3)}, &waits)
		if r.status != 201 {
			t.Fatalf("create w%03d: %d %s", i, r.status, r.body)
		}
		if r.header["x-ms-session-token"] == "" || r.header["x-ms-request-charge"] == "" || r.header["etag"] == "" {
			t.Fatalf("create w%03d: missing session token, charge or etag in %v", i, r.header)
		}
		selfs = append(selfs, r.json(t)["_self"].(string))
	}
	if waits == 0 {
		t.Fatal("200 writes to a 400 RU/s container were never throttled")
	}
	t.Logf("%d throttling waits", waits)

	// Paging with x-ms-continuation: every item once, in creation order.
	var ids []string
	cont, pages := "", 0
	for {
		h := map[string]string{"x-ms-max-item-count": "7"}
		if cont != "" {
			h["x-ms-continuation"] = cont
		}
		r = c.send("GET", "/"+collSelf+"docs", nil, h, &waits)
		if r.status != 200 {
			t.Fatalf("read feed: %d %s", r.status, r.body)
		}
		pages++
		for _, d := range r.json(t)["Documents"].([]any) {
			ids = append(ids, d.(map[string]any)["id"].(string))
		}
		if cont = r.header["x-ms-continuation"]; cont == "" {
			break
		}
	}
	if len(ids) != n || pages < n/7 {
		t.Fatalf("read feed: %d items in %d pages, want %d in at least %d", len(ids), pages, n, n/7)
	}
	for i, id := range ids {
		if id != fmt.Sprintf("w%03d", i) {
			t.Fatalf("read feed item %d is %s: not in creation order (%v)", i, id, ids)
		}
	}

	// Session tokens: a read by rid link with the token of the write; a
	// read that misses returns the token of the range that owns the key.
	r = c.send("PUT", "/"+selfs[5], []byte(`{"id":"w005","pk":"k2","v":2}`), map[string]string{"x-ms-documentdb-partitionkey": `["k2"]`}, &waits)
	if r.status != 200 {
		t.Fatalf("replace by rid link: %d %s", r.status, r.body)
	}
	token := r.header["x-ms-session-token"]
	rangeID, lsn, ok := strings.Cut(token, ":")
	if !ok || rangeID == "" || lsn == "" {
		t.Fatalf("session token %q is not <range>:<lsn>", token)
	}
	r = c.send("GET", "/"+selfs[5], nil, map[string]string{"x-ms-documentdb-partitionkey": `["k2"]`, "x-ms-session-token": token, "x-ms-consistency-level": "Session"}, &waits)
	if r.status != 200 || r.json(t)["v"] != float64(2) {
		t.Fatalf("read by rid link with the session token: %d %s", r.status, r.body)
	}
	r = c.send("GET", "/dbs/wire/colls/c/docs/missing", nil, map[string]string{"x-ms-documentdb-partitionkey": `["k2"]`}, &waits)
	if r.status != 404 {
		t.Fatalf("read of a missing item: %d %s", r.status, r.body)
	}
	if got := r.header["x-ms-session-token"]; !strings.HasPrefix(got, rangeID+":") {
		t.Fatalf("a 404 carries session token %q, want one of range %s (the key's)", got, rangeID)
	}
}
