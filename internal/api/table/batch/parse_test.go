package batch

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readResponse reads a batch response body independently of this
// package's writer: mime/multipart for both levels, net/http for each
// embedded response.
func readResponse(t *testing.T, boundary string, body []byte) []*http.Response {
	t.Helper()
	outer := multipart.NewReader(bytes.NewReader(body), boundary)
	p, err := outer.NextPart()
	if err != nil {
		t.Fatalf("outer part: %v", err)
	}
	_, params, _ := strings.Cut(p.Header.Get("Content-Type"), "boundary=")
	inner := multipart.NewReader(p, params)
	var out []*http.Response
	for {
		ip, err := inner.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("inner part: %v", err)
		}
		if ip.Header.Get("Content-Type") != "application/http" {
			t.Errorf("inner part content type %q", ip.Header.Get("Content-Type"))
		}
		raw, _ := io.ReadAll(ip)
		r, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
		if err != nil {
			t.Fatalf("embedded response %q: %v", raw, err)
		}
		out = append(out, r)
	}
	if _, err := outer.NextPart(); err != io.EOF {
		t.Errorf("after the changeset response: %v, want EOF", err)
	}
	return out
}

// boundaryOf returns the boundary a captured body opens with, which is the
// one its request's Content-Type named.
func boundaryOf(body []byte) string {
	line, _, _ := bytes.Cut(body, []byte("\n"))
	return strings.TrimSuffix(strings.TrimPrefix(string(line), "--"), "\r")
}

// TestParseCapturedSDKBodies parses the bodies the JavaScript SDK
// (@azure/data-tables 13.3.2) and the Python SDK (azure-data-tables
// 12.4.2) sent for the same transaction (see testdata/README.md), with
// their CRLF line endings and converted to LF.
func TestParseCapturedSDKBodies(t *testing.T) {
	files, err := filepath.Glob("testdata/*.multipart")
	if err != nil || len(files) != 4 {
		t.Fatalf("testdata: %v %v", files, err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, lf := range []bool{false, true} {
			name := filepath.Base(f)
			body := data
			if lf {
				name += "/LF"
				body = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
			}
			t.Run(name, func(t *testing.T) {
				b, err := Parse("multipart/mixed; boundary="+boundaryOf(body), bytes.NewReader(body), Limits{})
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				checkCapturedTransaction(t, b, strings.Contains(name, "cosmos"), strings.HasPrefix(name, "python"))
			})
		}
	}
}

// checkCapturedTransaction checks the transaction the capture scripts
// send: create r1, upsert-merge r2, update-replace r3 with an ETag, delete
// r4, upsert-replace r5.
func checkCapturedTransaction(t *testing.T, b *Batch, cosmos, python bool) {
	t.Helper()
	if len(b.Operations) != 5 {
		t.Fatalf("%d operations, want 5", len(b.Operations))
	}
	merge := "PATCH"
	if cosmos {
		merge = "POST"
	}
	wantMethod := []string{"POST", merge, "PUT", "DELETE", "PUT"}
	wantEffective := []string{"POST", "PATCH", "PUT", "DELETE", "PUT"}
	if cosmos {
		wantEffective[1] = "MERGE"
	}
	for i, op := range b.Operations {
		rk := fmt.Sprintf("r%d", i+1)
		if op.Method != wantMethod[i] || op.EffectiveMethod() != wantEffective[i] {
			t.Errorf("op %d: %s/%s, want %s/%s", i, op.Method, op.EffectiveMethod(), wantMethod[i], wantEffective[i])
		}
		if !strings.HasPrefix(op.RawURL, "http://") || op.URL == nil || !strings.Contains(op.URL.Path, "mytable") {
			t.Errorf("op %d: URL %q", i, op.RawURL)
		}
		if i > 0 && !strings.HasSuffix(op.URL.Path, "mytable(PartitionKey='p1',RowKey='"+rk+"')") {
			t.Errorf("op %d: path %q", i, op.URL.Path)
		}
		if python != (op.ContentID == fmt.Sprint(i)) {
			t.Errorf("op %d: Content-ID %q (python %v)", i, op.ContentID, python)
		}
		if op.Method == "DELETE" {
			if op.Body != nil || op.Header.Get("If-Match") != "*" {
				t.Errorf("delete: body %q If-Match %q", op.Body, op.Header.Get("If-Match"))
			}
			continue
		}
		var e map[string]any
		if err := json.Unmarshal(op.Body, &e); err != nil {
			t.Fatalf("op %d: body %q: %v", i, op.Body, err)
		}
		if e["PartitionKey"] != "p1" || e["RowKey"] != rk {
			t.Errorf("op %d: body %s", i, op.Body)
		}
	}
	if b.Operations[0].Header.Get("Prefer") != "return-no-content" {
		t.Errorf("create Prefer %q", b.Operations[0].Header.Get("Prefer"))
	}
	if got := b.Operations[2].Header.Get("If-Match"); got != `W/"datetime'2024-01-01T00%3A00%3A00Z'"` {
		t.Errorf("update If-Match %q", got)
	}
	if b.Operations[4].Header.Get("If-Match") != "" {
		t.Errorf("upsert has If-Match %q", b.Operations[4].Header.Get("If-Match"))
	}
	var e map[string]any
	if json.Unmarshal(b.Operations[1].Body, &e); e["s"] != "x'y" {
		t.Errorf("merge body %s", b.Operations[1].Body)
	}
}

// build writes a batch body by hand; each op is "METHOD URL" plus headers
// and a body. nl is the line ending.
func build(nl string, changesets int, ops []string) string {
	var sb strings.Builder
	for c := 0; c < changesets; c++ {
		fmt.Fprintf(&sb, "--batch_b%sContent-Type: multipart/mixed; boundary=changeset_c%s%s", nl, nl, nl)
		for _, op := range ops {
			fmt.Fprintf(&sb, "--changeset_c%sContent-Type: application/http%sContent-Transfer-Encoding: binary%s%s%s",
				nl, nl, nl, nl, strings.ReplaceAll(op, "\n", nl))
			sb.WriteString(nl)
		}
		fmt.Fprintf(&sb, "--changeset_c--%s", nl)
	}
	fmt.Fprintf(&sb, "--batch_b--%s", nl)
	return sb.String()
}

const ct = "multipart/mixed; boundary=batch_b"

func insertOp(rk string) string {
	return "POST http://h/acct/t HTTP/1.1\nContent-Type: application/json\n\n{\"PartitionKey\":\"p\",\"RowKey\":\"" + rk + "\"}"
}

func wantError(t *testing.T, err error, sentinel error, code string, status, index int, inChangeset bool) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v is not *Error", err)
	}
	if !errors.Is(err, sentinel) || e.Code != code || e.Status != status || e.Index != index || e.InChangeset() != inChangeset {
		t.Fatalf("error %+v (%v), want %v code %s status %d index %d inChangeset %v", e, err, sentinel, code, status, index, inChangeset)
	}
}

func TestParseHandBuilt(t *testing.T) {
	for _, nl := range []string{"\r\n", "\n"} {
		body := build(nl, 1, []string{insertOp("a"), "DELETE http://h/acct/t(PartitionKey='p',RowKey='b') HTTP/1.1\nIf-Match: *\nContent-ID: 7\n\n"})
		b, err := Parse(ct, strings.NewReader(body), Limits{})
		if err != nil {
			t.Fatalf("%q: %v", nl, err)
		}
		if len(b.Operations) != 2 || string(b.Operations[0].Body) != `{"PartitionKey":"p","RowKey":"a"}` ||
			b.Operations[1].ContentID != "7" || b.Operations[1].Body != nil || b.Operations[1].Header.Get("If-Match") != "*" {
			t.Errorf("%q: %+v", nl, b.Operations)
		}
	}
}

func TestParseLimitsAndFaults(t *testing.T) {
	ops := func(n int) []string {
		var s []string
		for i := 0; i < n; i++ {
			s = append(s, insertOp(fmt.Sprint(i)))
		}
		return s
	}
	t.Run("100 operations", func(t *testing.T) {
		b, err := Parse(ct, strings.NewReader(build("\r\n", 1, ops(100))), Limits{})
		if err != nil || len(b.Operations) != 100 {
			t.Fatalf("%v", err)
		}
	})
	t.Run("101 operations", func(t *testing.T) {
		// Azurite BatchErrorConstants.TOO_MANY_OPERATIONS: "0:The batch request
		// operation exceeds the maximum 100 changes per change set." as
		// InvalidInput inside the batch response.
		_, err := Parse(ct, strings.NewReader(build("\r\n", 1, ops(101))), Limits{})
		wantError(t, err, ErrTooManyOperations, CodeInvalidInput, 400, 0, true)
		if !strings.Contains(err.Error(), "maximum 100 changes per change set") {
			t.Errorf("message %q", err)
		}
	})
	t.Run("body too large", func(t *testing.T) {
		// Azurite StorageErrorFactory.getRequestBodyTooLarge: 413 RequestBodyTooLarge.
		body := build("\r\n", 1, ops(3))
		_, err := Parse(ct, strings.NewReader(body), Limits{MaxBodyBytes: int64(len(body) - 1)})
		wantError(t, err, ErrBodyTooLarge, CodeRequestBodyTooLarge, 413, 0, false)
		if _, err := Parse(ct, strings.NewReader(body), Limits{MaxBodyBytes: int64(len(body))}); err != nil {
			t.Errorf("at the limit: %v", err)
		}
	})
	t.Run("default 4 MiB", func(t *testing.T) {
		big := strings.Repeat("x", 4<<20)
		_, err := Parse(ct, strings.NewReader(build("\r\n", 1, []string{insertOp(big)})), Limits{})
		wantError(t, err, ErrBodyTooLarge, CodeRequestBodyTooLarge, 413, 0, false)
	})
	t.Run("two changesets", func(t *testing.T) {
		_, err := Parse(ct, strings.NewReader(build("\r\n", 2, ops(1))), Limits{})
		wantError(t, err, ErrChangesets, CodeInvalidInput, 400, 0, true)
	})
	t.Run("no changeset", func(t *testing.T) {
		_, err := Parse(ct, strings.NewReader("--batch_b--\r\n"), Limits{})
		wantError(t, err, ErrChangesets, CodeInvalidInput, 400, 0, true)
	})
	t.Run("empty changeset", func(t *testing.T) {
		_, err := Parse(ct, strings.NewReader(build("\r\n", 1, nil)), Limits{})
		wantError(t, err, ErrEmptyChangeset, CodeInvalidInput, 400, 0, true)
	})
	t.Run("bare request instead of changeset", func(t *testing.T) {
		body := "--batch_b\r\nContent-Type: application/http\r\n\r\nGET http://h/acct/t() HTTP/1.1\r\n\r\n\r\n--batch_b--\r\n"
		_, err := Parse(ct, strings.NewReader(body), Limits{})
		wantError(t, err, ErrChangesets, CodeInvalidInput, 400, 0, true)
	})
	t.Run("content type", func(t *testing.T) {
		for _, c := range []string{"application/json", "multipart/mixed", "multipart/mixed; boundary=", "multipart/mixed; boundary=\"" + strings.Repeat("b", 71) + "\""} {
			_, err := Parse(c, strings.NewReader(build("\r\n", 1, ops(1))), Limits{})
			wantError(t, err, ErrContentType, CodeInvalidHeaderValue, 400, 0, false)
		}
	})
	t.Run("GET in changeset", func(t *testing.T) {
		_, err := Parse(ct, strings.NewReader(build("\n", 1, []string{insertOp("a"), "GET http://h/acct/t() HTTP/1.1\n\n"})), Limits{})
		wantError(t, err, ErrMalformed, CodeInvalidInput, 400, 1, true)
	})
	t.Run("too many headers", func(t *testing.T) {
		op := "PUT http://h/acct/t(PartitionKey='p',RowKey='a') HTTP/1.1\n" + strings.Repeat("X-A: b\n", 5) + "\n{}"
		_, err := Parse(ct, strings.NewReader(build("\n", 1, []string{insertOp("a"), insertOp("b"), op})), Limits{MaxHeaders: 4})
		wantError(t, err, ErrHeaders, CodeInvalidInput, 400, 2, true)
		if _, err := Parse(ct, strings.NewReader(build("\n", 1, []string{op})), Limits{MaxHeaders: 5}); err != nil {
			t.Errorf("5 headers with limit 5: %v", err)
		}
	})
	t.Run("long header line", func(t *testing.T) {
		op := "PUT http://h/acct/t HTTP/1.1\nX-A: " + strings.Repeat("b", 300) + "\n\n{}"
		_, err := Parse(ct, strings.NewReader(build("\n", 1, []string{op})), Limits{MaxLineBytes: 256})
		wantError(t, err, ErrHeaders, CodeInvalidInput, 400, 0, true)
	})
	t.Run("long request line", func(t *testing.T) {
		op := "PUT http://h/acct/t" + strings.Repeat("b", 300) + " HTTP/1.1\n\n{}"
		_, err := Parse(ct, strings.NewReader(build("\n", 1, []string{op})), Limits{MaxLineBytes: 256})
		wantError(t, err, ErrHeaders, CodeInvalidInput, 400, 0, true)
	})
	t.Run("too many MIME part headers", func(t *testing.T) {
		body := "--batch_b\r\nContent-Type: multipart/mixed; boundary=changeset_c\r\n" + strings.Repeat("X-A: b\r\n", 10) + "\r\n" +
			"--changeset_c\r\nContent-Type: application/http\r\n\r\n" + insertOp("a") + "\r\n--changeset_c--\r\n--batch_b--\r\n"
		_, err := Parse(ct, strings.NewReader(body), Limits{MaxHeaders: 8})
		wantError(t, err, ErrHeaders, CodeInvalidInput, 400, 0, true)
	})
	t.Run("malformed", func(t *testing.T) {
		for name, op := range map[string]string{
			"no request line end": "POST http://h/acct/t HTTP/1.1",
			"no blank line":       "POST http://h/acct/t HTTP/1.1\nA: b",
			"bad protocol":        "POST http://h/acct/t HTTP/2\n\n",
			"bad header":          "POST http://h/acct/t HTTP/1.1\nno colon\n\n",
			"bad header name":     "POST http://h/acct/t HTTP/1.1\nA B: c\n\n",
			"bad url":             "POST http://h/%zz HTTP/1.1\n\n",
			"one word":            "POST\n\n",
		} {
			_, err := Parse(ct, strings.NewReader(build("\n", 1, []string{op})), Limits{})
			var e *Error
			if !errors.As(err, &e) || e.Code != CodeInvalidInput || e.Status != 400 {
				t.Errorf("%s: %v", name, err)
			}
		}
	})
	t.Run("truncated", func(t *testing.T) {
		body := build("\r\n", 1, ops(2))
		for _, cut := range []int{40, len(body) / 2, len(body) - 16} {
			_, err := Parse(ct, strings.NewReader(body[:cut]), Limits{})
			wantError(t, err, ErrMalformed, CodeInvalidInput, 400, 0, true)
		}
	})
	t.Run("quoted-printable refused", func(t *testing.T) {
		body := strings.Replace(build("\r\n", 1, ops(1)), "binary", "quoted-printable", 1)
		_, err := Parse(ct, strings.NewReader(body), Limits{})
		wantError(t, err, ErrMalformed, CodeInvalidInput, 400, 0, true)
	})
}

func FuzzParseBatch(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.multipart")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(boundaryOf(data), data)
	}
	f.Add("batch_b", []byte(build("\n", 1, []string{insertOp("a"), insertOp("b")})))
	f.Add("batch_b", []byte(build("\r\n", 2, []string{insertOp("a")})))
	limits := Limits{MaxOperations: 3, MaxBodyBytes: 8 << 10, MaxHeaders: 12, MaxLineBytes: 512}
	f.Fuzz(func(t *testing.T, boundary string, body []byte) {
		b, err := Parse("multipart/mixed; boundary=\""+boundary+"\"", bytes.NewReader(body), limits)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Code == "" || e.Status < 400 {
				t.Fatalf("error %v is not a coded *Error", err)
			}
			return
		}
		if len(body) > int(limits.MaxBodyBytes) {
			t.Fatalf("accepted %d bytes", len(body))
		}
		if n := len(b.Operations); n < 1 || n > limits.MaxOperations {
			t.Fatalf("%d operations", n)
		}
		for i, op := range b.Operations {
			n := 0
			for _, vs := range op.Header {
				n += len(vs)
			}
			if op.Index != i || n > limits.MaxHeaders || op.URL == nil || !changeMethods[strings.ToUpper(op.Method)] {
				t.Fatalf("op %d: %+v", i, op)
			}
		}
	})
}
