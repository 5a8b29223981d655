package batch

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
)

// Limits bound what Parse accepts. A zero field takes its default.
type Limits struct {
	// MaxOperations is the most operations one changeset may hold: 100 on
	// Azure Table storage and Cosmos DB.
	MaxOperations int
	// MaxBodyBytes is the largest batch body: 4 MiB on the service.
	MaxBodyBytes int64
	// MaxHeaders is the most header lines in one MIME part and in one
	// sub-request.
	MaxHeaders int
	// MaxLineBytes is the longest header line or request line (a
	// sub-request's URL carries both keys, each up to 1 KiB before
	// escaping).
	MaxLineBytes int
}

// The defaults; MaxOperations and MaxBodyBytes are the service's.
const (
	DefaultMaxOperations = 100
	DefaultMaxBodyBytes  = 4 << 20
	DefaultMaxHeaders    = 64
	DefaultMaxLineBytes  = 16 << 10
)

func (l Limits) withDefaults() Limits {
	if l.MaxOperations <= 0 {
		l.MaxOperations = DefaultMaxOperations
	}
	if l.MaxBodyBytes <= 0 {
		l.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if l.MaxHeaders <= 0 {
		l.MaxHeaders = DefaultMaxHeaders
	}
	if l.MaxLineBytes <= 0 {
		l.MaxLineBytes = DefaultMaxLineBytes
	}
	return l
}

// Batch is a parsed entity group transaction: the operations of its one
// changeset, in the order the client wrote them.
type Batch struct {
	Boundary          string // the batch boundary, from the request's Content-Type
	ChangesetBoundary string // the changeset boundary, from the changeset part's Content-Type
	Operations        []Operation
}

// Operation is one sub-request of the changeset, as written. Nothing in it
// has been checked against the table or the entity: the server routes
// Method and URL as it would a top-level request.
type Operation struct {
	Index     int    // 0-based position in the changeset
	ContentID string // the part's Content-ID (MIME header, else sub-request header), "" if none
	Method    string // as written, e.g. POST, PUT, PATCH, DELETE, MERGE
	RawURL    string // the request target as written, usually absolute
	URL       *url.URL
	Proto     string // HTTP/1.1 or HTTP/1.0
	Header    http.Header
	// Body is the sub-request body with surrounding CR, LF, space and tab
	// removed: the JavaScript SDK puts an extra empty line before every
	// body, and JSON does not care. Empty for a request without a body.
	Body []byte
}

// EffectiveMethod is the operation's verb after the X-HTTP-Method
// override that Cosmos-flavoured clients send (POST + X-HTTP-Method: MERGE
// for a merge), upper-cased.
func (o *Operation) EffectiveMethod() string {
	if strings.EqualFold(o.Method, http.MethodPost) {
		if m := strings.TrimSpace(o.Header.Get("X-HTTP-Method")); m != "" {
			return strings.ToUpper(m)
		}
	}
	return strings.ToUpper(o.Method)
}

// changeMethods are the verbs a changeset may carry: insert (POST), update
// and insert-or-replace (PUT), merge (PATCH, MERGE, or POST with
// X-HTTP-Method), delete.
var changeMethods = map[string]bool{
	"POST": true, "PUT": true, "PATCH": true, "MERGE": true, "DELETE": true,
}

// Parse reads a batch request: contentType is the request's Content-Type
// header and body its body. It reads at most limits.MaxBodyBytes+1 bytes.
// Every error it returns is an *Error carrying the service's error code.
func Parse(contentType string, body io.Reader, limits Limits) (*Batch, error) {
	limits = limits.withDefaults()
	boundary, err := multipartBoundary(contentType)
	if err != nil {
		return nil, &Error{Code: CodeInvalidHeaderValue, Status: http.StatusBadRequest,
			Message: "The value for one of the HTTP headers is not in the correct format.",
			Err:     fmt.Errorf("%w: %w", ErrContentType, err)}
	}
	data, err := io.ReadAll(io.LimitReader(body, limits.MaxBodyBytes+1))
	if err != nil {
		return nil, invalid(0, ErrMalformed, "cannot read the batch body: %v", err)
	}
	if int64(len(data)) > limits.MaxBodyBytes {
		return nil, &Error{Code: CodeRequestBodyTooLarge, Status: http.StatusRequestEntityTooLarge,
			Message: "The request body is too large and exceeds the maximum permissible limit.",
			Err:     fmt.Errorf("%w: more than %d bytes", ErrBodyTooLarge, limits.MaxBodyBytes)}
	}

	// The multipart reader answers a body cut off inside part headers with
	// a bare io.EOF, as if the body had ended properly; requiring the close
	// delimiter tells the two apart.
	if !bytes.Contains(data, []byte("--"+boundary+"--")) {
		return nil, invalid(0, ErrMalformed, "the batch body does not end with its close delimiter")
	}
	b := &Batch{Boundary: boundary}
	outer := multipart.NewReader(bytes.NewReader(data), boundary)
	part, err := outer.NextRawPart()
	// Only a bare io.EOF means the closing delimiter was read; a wrapped one
	// is a truncated body.
	if err == io.EOF {
		return nil, invalid(0, ErrChangesets, "the batch holds no changeset")
	}
	if err != nil {
		return nil, invalid(0, ErrMalformed, "cannot read the batch: %v", err)
	}
	if err := checkPartHeader(part.Header, limits); err != nil {
		return nil, err
	}
	csBoundary, err := multipartBoundary(part.Header.Get("Content-Type"))
	if err != nil {
		return nil, invalid(0, ErrChangesets, "the batch part is not a multipart/mixed changeset: %v", err)
	}
	b.ChangesetBoundary = csBoundary
	csData, err := io.ReadAll(part)
	if err != nil {
		return nil, invalid(0, ErrMalformed, "cannot read the changeset: %v", err)
	}
	if b.Operations, err = parseChangeset(csData, csBoundary, limits); err != nil {
		return nil, err
	}
	switch _, err := outer.NextRawPart(); {
	case err == io.EOF:
	case err != nil:
		return nil, invalid(0, ErrMalformed, "cannot read past the changeset: %v", err)
	default:
		return nil, invalid(0, ErrChangesets, "the batch holds more than one part; only one changeset is allowed")
	}
	return b, nil
}

func parseChangeset(data []byte, boundary string, limits Limits) ([]Operation, error) {
	if !bytes.Contains(data, []byte("--"+boundary+"--")) {
		return nil, invalid(0, ErrMalformed, "the changeset does not end with its close delimiter")
	}
	r := multipart.NewReader(bytes.NewReader(data), boundary)
	var ops []Operation
	for {
		part, err := r.NextRawPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, invalid(len(ops), ErrMalformed, "cannot read the changeset: %v", err)
		}
		if len(ops) == limits.MaxOperations {
			return nil, invalid(0, ErrTooManyOperations,
				"The batch request operation exceeds the maximum %d changes per change set.", limits.MaxOperations)
		}
		if err := checkPartHeader(part.Header, limits); err != nil {
			err.Index = len(ops)
			return nil, err
		}
		mt, _, err := mime.ParseMediaType(part.Header.Get("Content-Type"))
		if err != nil || mt != "application/http" {
			return nil, invalid(len(ops), ErrMalformed, "changeset part %d is not application/http", len(ops))
		}
		switch cte := strings.ToLower(strings.TrimSpace(part.Header.Get("Content-Transfer-Encoding"))); cte {
		case "", "binary", "8bit", "7bit":
		default:
			return nil, invalid(len(ops), ErrMalformed, "changeset part %d has Content-Transfer-Encoding %q; only binary is supported", len(ops), cte)
		}
		raw, err := io.ReadAll(part)
		if err != nil {
			return nil, invalid(len(ops), ErrMalformed, "cannot read changeset part %d: %v", len(ops), err)
		}
		op, perr := parseOperation(raw, len(ops), limits)
		if perr != nil {
			return nil, perr
		}
		if id := strings.TrimSpace(part.Header.Get("Content-ID")); id != "" {
			op.ContentID = id
		}
		ops = append(ops, op)
	}
	if len(ops) == 0 {
		return nil, invalid(0, ErrEmptyChangeset, "the changeset holds no operation")
	}
	return ops, nil
}

// parseOperation reads one embedded HTTP request: a request line, header
// lines, an empty line, and the body. Lines may end in CRLF or LF.
func parseOperation(raw []byte, index int, limits Limits) (Operation, *Error) {
	op := Operation{Index: index, Header: http.Header{}}
	rest := raw
	// Skip empty lines before the request line, as HTTP servers do; bounded
	// by the part's length.
	for len(rest) > 0 && (rest[0] == '\r' || rest[0] == '\n') {
		rest = rest[1:]
	}
	line, rest, ok := cutLine(rest)
	if !ok {
		return op, invalid(index, ErrMalformed, "operation %d has no request line ending", index)
	}
	if len(line) > limits.MaxLineBytes {
		return op, invalid(index, ErrHeaders, "operation %d has a request line of more than %d bytes", index, limits.MaxLineBytes)
	}
	method, target, proto, err := parseRequestLine(string(line))
	if err != nil {
		return op, invalid(index, ErrMalformed, "operation %d: %v", index, err)
	}
	op.Method, op.RawURL, op.Proto = method, target, proto
	if !changeMethods[strings.ToUpper(method)] {
		return op, invalid(index, ErrMalformed, "operation %d: method %s is not allowed in a changeset", index, method)
	}
	if op.URL, err = url.Parse(target); err != nil {
		return op, invalid(index, ErrMalformed, "operation %d: cannot parse the URL: %v", index, err)
	}
	for n := 0; ; n++ {
		line, rest, ok = cutLine(rest)
		if !ok {
			return op, invalid(index, ErrMalformed, "operation %d: headers do not end with an empty line", index)
		}
		if len(line) == 0 {
			break
		}
		if n == limits.MaxHeaders {
			return op, invalid(index, ErrHeaders, "operation %d has more than %d headers", index, limits.MaxHeaders)
		}
		if len(line) > limits.MaxLineBytes {
			return op, invalid(index, ErrHeaders, "operation %d has a header line of more than %d bytes", index, limits.MaxLineBytes)
		}
		name, value, found := strings.Cut(string(line), ":")
		if !found || !validHeaderName(name) {
			return op, invalid(index, ErrHeaders, "operation %d: malformed header line %q", index, truncate(string(line), 64))
		}
		op.Header.Add(textproto.CanonicalMIMEHeaderKey(name), strings.TrimSpace(value))
	}
	if id := op.Header.Get("Content-ID"); id != "" {
		op.ContentID = strings.TrimSpace(id)
	}
	if body := bytes.Trim(rest, " \t\r\n"); len(body) > 0 {
		op.Body = body
	}
	return op, nil
}

// cutLine splits off one line ending in LF (a preceding CR is dropped).
func cutLine(b []byte) (line, rest []byte, ok bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return nil, b, false
	}
	line = b[:i]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	return line, b[i+1:], true
}

func parseRequestLine(line string) (method, target, proto string, err error) {
	method, rest, ok1 := strings.Cut(line, " ")
	target, proto, ok2 := strings.Cut(rest, " ")
	if !ok1 || !ok2 || method == "" || target == "" {
		return "", "", "", fmt.Errorf("malformed request line %q", truncate(line, 64))
	}
	if !validHeaderName(method) {
		return "", "", "", fmt.Errorf("malformed method %q", truncate(method, 16))
	}
	if proto != "HTTP/1.1" && proto != "HTTP/1.0" {
		return "", "", "", fmt.Errorf("unsupported protocol %q", truncate(proto, 16))
	}
	return method, target, proto, nil
}

// validHeaderName reports whether s is a non-empty HTTP token.
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			continue
		}
		if !strings.ContainsRune("!#$%&'*+-.^_`|~", rune(c)) {
			return false
		}
	}
	return true
}

func checkPartHeader(h textproto.MIMEHeader, limits Limits) *Error {
	n := 0
	for name, values := range h {
		for _, v := range values {
			n++
			if len(name)+len(v)+2 > limits.MaxLineBytes {
				return invalid(0, ErrHeaders, "a MIME part header line is longer than %d bytes", limits.MaxLineBytes)
			}
		}
	}
	if n > limits.MaxHeaders {
		return invalid(0, ErrHeaders, "a MIME part has more than %d headers", limits.MaxHeaders)
	}
	return nil
}

func multipartBoundary(contentType string) (string, error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return "", fmt.Errorf("cannot parse content type %q: %w", truncate(contentType, 128), err)
	}
	if mt != "multipart/mixed" {
		return "", fmt.Errorf("content type is %q, not multipart/mixed", truncate(mt, 64))
	}
	b := params["boundary"]
	if b == "" || len(b) > 70 {
		return "", fmt.Errorf("content type %q has no valid boundary", truncate(contentType, 128))
	}
	return b, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
