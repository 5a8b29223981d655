package bench

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"
)

// rawSender is a minimal HTTP/1.1 client on one keep-alive connection of
// its own: it writes each request with one Write from a reused buffer and
// parses the response itself (status line, the few headers the bench needs,
// a Content-Length, chunked or read-to-close body). It costs a fraction of
// net/http's CPU per request (no goroutines per connection, no header maps),
// which matters when the load generator shares the machine with the server.
// A broken connection is dropped and the next send dials again; nothing is
// retried.
type rawSender struct {
	ctx         context.Context
	consistency string // x-ms-consistency-level of signed requests, or ""
	addr, host  string // dial address (with port) and Host header
	tlsName     string // server name for TLS; "" for plain HTTP
	conn        net.Conn
	stop        func() bool // unregisters the close-on-cancel hook
	br          *bufio.Reader
	wbuf        []byte
	buf         []byte // the body buffer handed out by buffer()
	rd          []byte // the response body
	etag, cont  []byte // the response's etag and x-ms-continuation
}

func newRawSender(ctx context.Context, c *client, itemSize int) *rawSender {
	s := &rawSender{
		ctx:         ctx,
		consistency: c.consistency,
		host:        c.base.Host,
		wbuf:        make([]byte, 0, itemSize+1024),
		buf:         make([]byte, 0, itemSize),
		rd:          make([]byte, 0, itemSize+4096),
	}
	port := c.base.Port()
	if port == "" {
		port = "80"
		if c.base.Scheme == "https" {
			port = "443"
		}
	}
	s.addr = net.JoinHostPort(c.base.Hostname(), port)
	if c.base.Scheme == "https" {
		s.tlsName = c.base.Hostname()
	}
	return s
}

func (s *rawSender) buffer() []byte { return s.buf[:0] }

func (s *rawSender) close() {
	if s.conn != nil {
		s.stop()
		s.conn.Close()
		s.conn = nil
	}
}

func (s *rawSender) dial() error {
	d := net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	conn, err := d.DialContext(s.ctx, "tcp", s.addr)
	if err != nil {
		return err
	}
	if s.tlsName != "" {
		tc := tls.Client(conn, &tls.Config{ServerName: s.tlsName, NextProtos: []string{"http/1.1"}})
		if err := tc.HandshakeContext(s.ctx); err != nil {
			conn.Close()
			return err
		}
		conn = tc
	}
	s.conn = conn
	s.stop = context.AfterFunc(s.ctx, func() { conn.Close() })
	if s.br == nil {
		s.br = bufio.NewReaderSize(conn, 16<<10)
	} else {
		s.br.Reset(conn)
	}
	return nil
}

func (s *rawSender) send(c *call, r *reply) error {
	if s.conn == nil {
		if err := s.dial(); err != nil {
			return err
		}
	}
	b := append(s.wbuf[:0], c.method...)
	b = append(b, ' ')
	b = append(b, c.rawPath...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, s.host...)
	b = append(b, "\r\nUser-Agent: "+userAgent+"\r\n"...)
	if c.signed {
		b = appendHeader(b, "X-Ms-Date", c.date)
		b = appendHeader(b, "Authorization", c.authorization)
		b = appendHeader(b, "X-Ms-Activity-Id", c.activity)
		b = appendHeader(b, "X-Ms-Version", APIVersion)
		if s.consistency != "" {
			b = appendHeader(b, "X-Ms-Consistency-Level", s.consistency)
		}
	}
	if c.pk != nil {
		b = appendHeader(b, "X-Ms-Documentdb-Partitionkey", c.pk[0])
	}
	if c.upsert {
		b = appendHeader(b, "X-Ms-Documentdb-Is-Upsert", "True")
	}
	if len(c.ifMatch) > 0 {
		b = appendHeader(b, "If-Match", c.ifMatch)
	}
	if c.query {
		b = appendHeader(b, "X-Ms-Documentdb-Isquery", "True")
		if c.crossPartition {
			b = appendHeader(b, "X-Ms-Documentdb-Query-Enablecrosspartition", "True")
		}
		if len(c.continuation) > 0 {
			b = appendHeader(b, "X-Ms-Continuation", c.continuation)
		}
		if c.pageSize != "" {
			b = appendHeader(b, "X-Ms-Max-Item-Count", c.pageSize)
		}
	}
	if c.body != nil {
		s.buf = c.body // keep the capacity it grew to
		if c.query {
			b = append(b, "Content-Type: application/query+json\r\nContent-Length: "...)
		} else {
			b = append(b, "Content-Type: application/json\r\nContent-Length: "...)
		}
		b = strconv.AppendInt(b, int64(len(c.body)), 10)
		b = append(b, "\r\n"...)
	}
	b = append(b, "\r\n"...)
	b = append(b, c.body...)
	s.wbuf = b
	if _, err := s.conn.Write(b); err != nil {
		s.close()
		return err
	}
	keep, err := s.read(c.method, r)
	if err != nil || !keep {
		s.close()
	}
	return err
}

func appendHeader[T string | []byte](b []byte, name string, value T) []byte {
	b = append(b, name...)
	b = append(b, ": "...)
	b = append(b, value...)
	return append(b, "\r\n"...)
}

var errMalformed = errors.New("malformed HTTP response")

// read reads one response into r; keep reports whether the connection can
// carry another request.
func (s *rawSender) read(method string, r *reply) (keep bool, err error) {
	line, err := s.br.ReadSlice('\n')
	if err != nil {
		return false, err
	}
	// "HTTP/1.1 200 OK\r\n"
	if len(line) < 12 || string(line[:7]) != "HTTP/1." || line[8] != ' ' {
		return false, fmt.Errorf("%w: status line %q", errMalformed, line)
	}
	status := 0
	for _, ch := range line[9:12] {
		if ch < '0' || ch > '9' {
			return false, fmt.Errorf("%w: status line %q", errMalformed, line)
		}
		status = status*10 + int(ch-'0')
	}
	keep = line[7] == '1' // HTTP/1.0 closes by default
	r.status, r.charge, r.retryAfter, r.itemCount = status, 0, -1, 0
	r.etag, r.continuation = s.etag[:0], s.cont[:0]
	length, chunked := -1, false
	for {
		line, err = s.br.ReadSlice('\n')
		if err != nil {
			return false, err
		}
		line = trimSpace(line)
		if len(line) == 0 {
			break
		}
		colon := indexColon(line)
		if colon <= 0 {
			return false, fmt.Errorf("%w: header line %q", errMalformed, line)
		}
		name, val := line[:colon], trimSpace(line[colon+1:])
		switch {
		case equalFold(name, "content-length"):
			n, ok := parseUint(val)
			if !ok {
				return false, fmt.Errorf("%w: Content-Length %q", errMalformed, val)
			}
			length = n
		case equalFold(name, "transfer-encoding"):
			chunked = equalFold(val, "chunked")
		case equalFold(name, "connection"):
			if equalFold(val, "close") {
				keep = false
			} else if equalFold(val, "keep-alive") {
				keep = true
			}
		case equalFold(name, "x-ms-request-charge"):
			r.charge = parseCharge(val)
		case equalFold(name, "x-ms-retry-after-ms"):
			if n, ok := parseUint(val); ok {
				r.retryAfter = time.Duration(n) * time.Millisecond
			}
		case equalFold(name, "etag"):
			r.etag = append(r.etag[:0], val...)
			s.etag = r.etag
		case equalFold(name, "x-ms-continuation"):
			r.continuation = append(r.continuation[:0], val...)
			s.cont = r.continuation
		case equalFold(name, "x-ms-item-count"):
			r.itemCount, _ = parseUint(val)
		}
	}
	body := s.rd[:0]
	switch {
	case method == http.MethodHead || status < 200 || status == http.StatusNoContent || status == http.StatusNotModified:
	case chunked:
		for {
			line, err = s.br.ReadSlice('\n')
			if err != nil {
				return false, err
			}
			n, ok := parseHex(trimSpace(line))
			if !ok {
				return false, fmt.Errorf("%w: chunk size %q", errMalformed, line)
			}
			if n == 0 {
				break
			}
			if body, err = readN(s.br, body, n); err != nil {
				return false, err
			}
			if line, err = s.br.ReadSlice('\n'); err != nil || len(trimSpace(line)) != 0 {
				return false, fmt.Errorf("%w: no CRLF after a chunk", errMalformed)
			}
		}
		for { // trailers
			if line, err = s.br.ReadSlice('\n'); err != nil {
				return false, err
			}
			if len(trimSpace(line)) == 0 {
				break
			}
		}
	case length >= 0:
		if body, err = readN(s.br, body, length); err != nil {
			return false, err
		}
	default: // the body runs to the end of the connection
		keep = false
		for {
			if len(body) == cap(body) {
				body = append(body, 0)[:len(body)]
			}
			k, rerr := s.br.Read(body[len(body):cap(body)])
			body = body[:len(body)+k]
			if rerr == io.EOF {
				break
			}
			if rerr != nil {
				return false, rerr
			}
		}
	}
	s.rd = body
	r.body = body
	return keep, nil
}

// readN appends exactly n bytes from br to dst.
func readN(br *bufio.Reader, dst []byte, n int) ([]byte, error) {
	if n > MaxItemSize*4 {
		return dst, fmt.Errorf("%w: a body of %d bytes", errMalformed, n)
	}
	l := len(dst)
	if cap(dst)-l < n {
		dst = append(dst[:cap(dst)], make([]byte, n-(cap(dst)-l))...)
	}
	dst = dst[:l+n]
	_, err := io.ReadFull(br, dst[l:])
	return dst, err
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r' || b[len(b)-1] == '\n') {
		b = b[:len(b)-1]
	}
	return b
}

func indexColon(b []byte) int {
	for i, c := range b {
		if c == ':' {
			return i
		}
	}
	return -1
}

// equalFold compares b with the lower-case ASCII string s, ignoring case.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

func parseUint(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 12 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// parseHex parses a chunk size, ignoring chunk extensions after ';'.
func parseHex(b []byte) (int, bool) {
	n, digits := 0, 0
	for _, c := range b {
		var d int
		switch {
		case '0' <= c && c <= '9':
			d = int(c - '0')
		case 'a' <= c && c <= 'f':
			d = int(c-'a') + 10
		case 'A' <= c && c <= 'F':
			d = int(c-'A') + 10
		case c == ';' || c == ' ' || c == '\t':
			return n, digits > 0
		default:
			return 0, false
		}
		if digits++; digits > 8 {
			return 0, false
		}
		n = n<<4 | d
	}
	return n, digits > 0
}
