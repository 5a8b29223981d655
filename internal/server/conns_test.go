package server_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/auth"
	"github.com/parsecdb/parsec/internal/server"
)

var key, _ = auth.DecodeKey(auth.EmulatorKey)

func start(t *testing.T, o server.Options) *server.Server {
	t.Helper()
	o.InMemory = true
	o.NoThrottle = true
	o.Listen = "127.0.0.1:0"
	s, err := server.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.Shutdown(ctx)
	})
	return s
}

// signed returns the head of a signed HTTP/1.1 request, up to and including
// the blank line.
func signed(method, path, host string, length int, extra ...string) string {
	date := time.Now().UTC().Format(http.TimeFormat)
	typ, link := auth.Resource(path)
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\nx-ms-date: %s\r\nAuthorization: %s\r\nContent-Length: %d\r\n",
		method, path, host, date, auth.Header(auth.Sign(key, method, typ, link, date)), length)
	for _, h := range extra {
		b.WriteString(h + "\r\n")
	}
	b.WriteString("\r\n")
	return b.String()
}

// call sends one signed request on a new connection and returns the status.
func call(t *testing.T, s *server.Server, method, path, body string, extra ...string) int {
	t.Helper()
	c := dial(t, s)
	defer c.Close()
	if _, err := io.WriteString(c, signed(method, path, host(s), len(body), extra...)+body); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

func host(s *server.Server) string {
	return strings.TrimPrefix(strings.TrimPrefix(s.URL(), "http://"), "https://")
}

func dial(t *testing.T, s *server.Server) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", host(s))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// setup creates database db, container c (partition key /pk) and item big
// of about 1.9 MB in partition "p".
func setup(t *testing.T, s *server.Server) {
	t.Helper()
	if st := call(t, s, "POST", "/dbs", `{"id":"db"}`); st != 201 {
		t.Fatalf("create database: %d", st)
	}
	if st := call(t, s, "POST", "/dbs/db/colls", `{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2}}`); st != 201 {
		t.Fatalf("create container: %d", st)
	}
	big := fmt.Sprintf(`{"id":"big","pk":"p","pad":"%s"}`, strings.Repeat("x", 1900<<10))
	if st := call(t, s, "POST", "/dbs/db/colls/c/docs", big, `x-ms-documentdb-partitionkey: ["p"]`); st != 201 {
		t.Fatalf("create item: %d", st)
	}
}

// connGoroutines counts the goroutines serving an HTTP connection.
func connGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return bytes.Count(buf[:n], []byte("net/http.(*conn).serve("))
		}
		buf = make([]byte, 2*len(buf))
	}
}

// waitNoConnGoroutines waits, at most 10s, until no goroutine serves a
// connection.
func waitNoConnGoroutines(t *testing.T, what string) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		n := connGoroutines()
		if n == 0 {
			return
		}
		if time.Now().After(end) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%s: %d goroutines still serve connections:\n%s", what, n, buf[:runtime.Stack(buf, true)])
		}
	}
}

// readToEnd reads c until the server closes it, at most 10s, and returns
// what it read.
func readToEnd(t *testing.T, c net.Conn, what string) []byte {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	b, err := io.ReadAll(c)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("%s: the server kept the connection open (read %d bytes)", what, len(b))
	}
	return b
}

func TestSlowUploaderIsCutOff(t *testing.T) {
	s := start(t, server.Options{ReadTimeout: 300 * time.Millisecond})
	setup(t, s)
	waitNoConnGoroutines(t, "after setup")

	c := dial(t, s)
	defer c.Close()
	body := `{"id":"slow","pk":"p","pad":"` + strings.Repeat("y", 200) + `"}`
	if _, err := io.WriteString(c, signed("POST", "/dbs/db/colls/c/docs", host(s), len(body), `x-ms-documentdb-partitionkey: ["p"]`)); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() { // one byte every 50ms: the body would take 12s
		for i := 0; i < len(body); i++ {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			if _, err := c.Write([]byte{body[i]}); err != nil {
				return
			}
		}
	}()
	got := readToEnd(t, c, "slow upload")
	if bytes.Contains(got, []byte("201 Created")) {
		t.Fatalf("the slow upload was accepted: %.200s", got)
	}
	waitNoConnGoroutines(t, "after the slow upload was cut off")

	// A request sent at once still goes through.
	if st := call(t, s, "POST", "/dbs/db/colls/c/docs", body, `x-ms-documentdb-partitionkey: ["p"]`); st != 201 {
		t.Fatalf("create item: %d", st)
	}
}

func TestNonReadingClientIsCutOff(t *testing.T) {
	s := start(t, server.Options{WriteTimeout: 300 * time.Millisecond})
	setup(t, s)
	waitNoConnGoroutines(t, "after setup")

	// 30 pipelined reads of the 1.9 MB item, 57 MB of responses, more than
	// the socket buffers hold; the client reads none.
	c := dial(t, s)
	defer c.Close()
	var reqs strings.Builder
	for range 30 {
		reqs.WriteString(signed("GET", "/dbs/db/colls/c/docs/big", host(s), 0, `x-ms-documentdb-partitionkey: ["p"]`))
	}
	if _, err := io.WriteString(c, reqs.String()); err != nil {
		t.Fatal(err)
	}
	waitNoConnGoroutines(t, "a client that reads no response")

	// A client that reads gets the item.
	if st := call(t, s, "GET", "/dbs/db/colls/c/docs/big", "", `x-ms-documentdb-partitionkey: ["p"]`); st != 200 {
		t.Fatalf("read item: %d", st)
	}
}

// ready sends GET /_ready on c and returns the response, or an error if the
// connection closed first.
func ready(c net.Conn, r *bufio.Reader, deadline time.Duration) (int, error) {
	if _, err := io.WriteString(c, "GET /_ready HTTP/1.1\r\nHost: localhost\r\n\r\n"); err != nil {
		return 0, err
	}
	c.SetReadDeadline(time.Now().Add(deadline))
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		return 0, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, err
}

func TestConnectionsBeyondMaxAreRefused(t *testing.T) {
	s := start(t, server.Options{MaxConnections: 2, ConnectionWait: 100 * time.Millisecond})
	var held []net.Conn
	var readers []*bufio.Reader
	for i := range 2 {
		c := dial(t, s)
		defer c.Close()
		r := bufio.NewReader(c)
		if st, err := ready(c, r, 10*time.Second); err != nil || st != 200 {
			t.Fatalf("connection %d: %d %v", i, st, err)
		}
		held, readers = append(held, c), append(readers, r)
	}

	// Both slots are held by keep-alive connections: a third is closed
	// unanswered once its wait is over.
	c := dial(t, s)
	defer c.Close()
	if st, err := ready(c, bufio.NewReader(c), 10*time.Second); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a connection beyond the limit: status %d, err %v; want it closed unanswered", st, err)
	}
	// The connections holding slots are served meanwhile.
	for i, c := range held {
		if st, err := ready(c, readers[i], 10*time.Second); err != nil || st != 200 {
			t.Fatalf("connection %d after the refusal: %d %v", i, st, err)
		}
	}

	// Once a slot frees, a new connection is served. (The server notices the
	// close asynchronously: a connection that comes before may be refused.)
	held[0].Close()
	for end := time.Now().Add(10 * time.Second); ; {
		c := dial(t, s)
		st, err := ready(c, bufio.NewReader(c), 10*time.Second)
		c.Close()
		if err == nil && st == 200 {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("no connection served after a slot freed: %d %v", st, err)
		}
	}
}

func TestWaitingConnectionIsServedWhenSlotFrees(t *testing.T) {
	s := start(t, server.Options{MaxConnections: 1, ConnectionWait: time.Minute})
	c1 := dial(t, s)
	defer c1.Close()
	if st, err := ready(c1, bufio.NewReader(c1), 10*time.Second); err != nil || st != 200 {
		t.Fatalf("first connection: %d %v", st, err)
	}
	c2 := dial(t, s)
	defer c2.Close()
	r2 := bufio.NewReader(c2)
	if st, err := ready(c2, r2, 200*time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("second connection while the first holds the only slot: %d %v; want no answer yet", st, err)
	}
	c1.Close()
	c2.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(r2, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("second connection after the first closed: %v %v", resp, err)
	}
}

// TestLongQueryOutlastsTimeouts: the timeouts bound the client's sending and
// reading, not the server's work. A query that evaluates for longer than both
// is answered.
func TestLongQueryOutlastsTimeouts(t *testing.T) {
	s := start(t, server.Options{ReadTimeout: 50 * time.Millisecond, WriteTimeout: 50 * time.Millisecond})
	setup(t, s)
	arr := make([]string, 100)
	for i := range arr {
		arr[i] = fmt.Sprint(i)
	}
	doc := `{"id":"arr","pk":"a","arr":[` + strings.Join(arr, ",") + `]}`
	if st := call(t, s, "POST", "/dbs/db/colls/c/docs", doc, `x-ms-documentdb-partitionkey: ["a"]`); st != 201 {
		t.Fatalf("create item: %d", st)
	}
	// A million joined rows: far longer to evaluate than the timeouts.
	q := `{"query":"SELECT VALUE COUNT(1) FROM c JOIN x IN c.arr JOIN y IN c.arr JOIN z IN c.arr"}`
	c := dial(t, s)
	defer c.Close()
	if _, err := io.WriteString(c, signed("POST", "/dbs/db/colls/c/docs", host(s), len(q), "Content-Type: application/query+json",
		"x-ms-documentdb-isquery: True", "x-ms-documentdb-query-enablecrosspartition: True", "x-ms-max-item-count: -1")+q); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(time.Minute))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("query: %v", err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 || !bytes.Contains(b, []byte("1000000")) {
		t.Fatalf("query: %d %.300s %v", resp.StatusCode, b, err)
	}
}

// TestSilentConnectionsDoNotKeepClientsOut fills every slot, and the queue
// behind them, with connections that never send a byte: a client that
// connects afterwards is still answered, since each connection that must
// wait closes the oldest silent one.
func TestSilentConnectionsDoNotKeepClientsOut(t *testing.T) {
	const max = 16
	s := start(t, server.Options{MaxConnections: max, ConnectionWait: 100 * time.Millisecond, FirstRequestTimeout: -1})
	var silent []net.Conn
	for range 2 * max {
		c := dial(t, s)
		defer c.Close()
		silent = append(silent, c)
	}
	for i := range 3 {
		c := dial(t, s)
		st, err := ready(c, bufio.NewReader(c), 10*time.Second)
		c.Close()
		if err != nil || st != 200 {
			t.Fatalf("client %d behind %d silent connections: %d %v", i, len(silent), st, err)
		}
	}
	// The oldest silent connections made room.
	readToEnd(t, silent[0], "the oldest silent connection")
}

// TestSilentConnectionIsClosed checks that a connection that sends no
// request within FirstRequestTimeout is closed, and that one which has
// sent a request is kept past it, over TLS or not.
func TestSilentConnectionIsClosed(t *testing.T) {
	for _, useTLS := range []bool{false, true} {
		s := start(t, server.Options{FirstRequestTimeout: 200 * time.Millisecond, TLS: useTLS})
		dialTLS := func() net.Conn {
			c := dial(t, s)
			if useTLS {
				c = tls.Client(c, &tls.Config{InsecureSkipVerify: true})
			}
			return c
		}
		spoke := dialTLS()
		defer spoke.Close()
		r := bufio.NewReader(spoke)
		if st, err := ready(spoke, r, 10*time.Second); err != nil || st != 200 {
			t.Fatalf("TLS %v: first request: %d %v", useTLS, st, err)
		}
		silent := dial(t, s)
		defer silent.Close()
		if b := readToEnd(t, silent, "a silent connection"); len(b) != 0 {
			t.Fatalf("TLS %v: a silent connection got %q", useTLS, b)
		}
		// The connection that spoke, older than the silent one, is still open.
		if st, err := ready(spoke, r, 10*time.Second); err != nil || st != 200 {
			t.Fatalf("TLS %v: second request on a connection past the first-request timeout: %d %v", useTLS, st, err)
		}
	}
}
