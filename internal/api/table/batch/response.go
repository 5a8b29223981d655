package batch

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
)

// Part is one response inside the changeset response: the answer to one
// operation, or the single failure that answers a failed changeset.
type Part struct {
	Status    int    // HTTP status, e.g. 201, 204, 409
	ContentID string // echoed from the operation when it had one
	// Header holds the part's own headers: ETag, Preference-Applied,
	// Location and DataServiceId, DataServiceVersion, Content-Type when
	// there is a body. WriteResponse adds X-Content-Type-Options: nosniff
	// and Cache-Control: no-cache, as the service does, unless set here.
	Header http.Header
	// Body is written as is. Keep it on one line: the JavaScript SDK finds
	// a sub-response's JSON with a single-line pattern.
	Body []byte
}

const (
	responsePrefix          = "batchresponse_"
	changesetResponsePrefix = "changesetresponse_"
)

// NewBoundary returns a fresh response boundary, "batchresponse_" and a
// random (version 4) UUID read from rand.
func NewBoundary(rand io.Reader) (string, error) {
	var u [16]byte
	if _, err := io.ReadFull(rand, u[:]); err != nil {
		return "", fmt.Errorf("cannot make a batch response boundary: %w", err)
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("%s%x-%x-%x-%x-%x", responsePrefix, u[0:4], u[4:6], u[6:8], u[8:10], u[10:16]), nil
}

// ContentType is the Content-Type of a batch response written with
// boundary.
func ContentType(boundary string) string {
	return "multipart/mixed; boundary=" + boundary
}

// changesetBoundary derives the inner boundary from the outer one:
// batchresponse_<id> gives changesetresponse_<id>, as on the service.
func changesetBoundary(boundary string) string {
	if id, ok := strings.CutPrefix(boundary, responsePrefix); ok {
		return changesetResponsePrefix + id
	}
	return changesetResponsePrefix + boundary
}

// WriteResponse writes the body of a batch response (status 202, with
// ContentType(boundary)): one batch part holding one changeset response
// with parts in order.
//
//	--batchresponse_<id>
//	Content-Type: multipart/mixed; boundary=changesetresponse_<id>
//
//	--changesetresponse_<id>
//	Content-Type: application/http
//	Content-Transfer-Encoding: binary
//
//	HTTP/1.1 204 No Content
//	Content-ID: 1
//	...
//
//	--changesetresponse_<id>--
//	--batchresponse_<id>--
//
// The changeset response starts right after the batch part's headers: the
// Go SDK takes each boundary from the first line of its body. Lines end in
// CRLF. A failed changeset is written as parts holding only FailurePart.
func WriteResponse(w io.Writer, boundary string, parts []Part) error {
	if err := checkBoundary(boundary); err != nil {
		return err
	}
	inner := changesetBoundary(boundary)
	if err := checkBoundary(inner); err != nil {
		return err
	}
	for i := range parts {
		if err := checkPart(&parts[i]); err != nil {
			return fmt.Errorf("cannot write batch response part %d: %w", i, err)
		}
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "--%s\r\nContent-Type: multipart/mixed; boundary=%s\r\n\r\n", boundary, inner)
	for _, p := range parts {
		fmt.Fprintf(bw, "--%s\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n", inner)
		text := http.StatusText(p.Status)
		if text == "" {
			text = "Status " + strconv.Itoa(p.Status)
		}
		fmt.Fprintf(bw, "HTTP/1.1 %d %s\r\n", p.Status, text)
		if p.ContentID != "" {
			fmt.Fprintf(bw, "Content-ID: %s\r\n", p.ContentID)
		}
		writePartHeaders(bw, p.Header)
		bw.WriteString("\r\n")
		bw.Write(p.Body)
		bw.WriteString("\r\n")
	}
	fmt.Fprintf(bw, "--%s--\r\n--%s--\r\n", inner, boundary)
	return bw.Flush()
}

func writePartHeaders(w *bufio.Writer, h http.Header) {
	keys := make([]string, 0, len(h)+2)
	for k := range h {
		if http.CanonicalHeaderKey(k) == "Content-Id" {
			continue // written from Part.ContentID
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if h.Get("X-Content-Type-Options") == "" {
		w.WriteString("X-Content-Type-Options: nosniff\r\n")
	}
	if h.Get("Cache-Control") == "" {
		w.WriteString("Cache-Control: no-cache\r\n")
	}
	for _, k := range keys {
		name := k
		if sp, ok := spellings[http.CanonicalHeaderKey(k)]; ok {
			name = sp
		}
		for _, v := range h[k] {
			fmt.Fprintf(w, "%s: %s\r\n", name, v)
		}
	}
}

// spellings are the service's spellings of headers whose canonical Go form
// differs. They matter: the JavaScript SDK finds a sub-response's ETag
// with the case-sensitive pattern /ETag: (.*)/ (TableTransaction.js).
var spellings = map[string]string{
	"Etag":               "ETag",
	"Dataserviceversion": "DataServiceVersion",
	"Dataserviceid":      "DataServiceId",
	"X-Ms-Request-Id":    "x-ms-request-id",
	"X-Ms-Version":       "x-ms-version",
}

var errUnsafeHeader = errors.New("header name or value is not allowed")

func checkPart(p *Part) error {
	if p.Status < 100 || p.Status > 599 {
		return fmt.Errorf("status %d is not an HTTP status", p.Status)
	}
	if strings.ContainsAny(p.ContentID, "\r\n") {
		return fmt.Errorf("content ID: %w", errUnsafeHeader)
	}
	for k, vs := range p.Header {
		if !validHeaderName(k) {
			return fmt.Errorf("header %q: %w", truncate(k, 32), errUnsafeHeader)
		}
		for _, v := range vs {
			if strings.ContainsAny(v, "\r\n") {
				return fmt.Errorf("header %s: %w", k, errUnsafeHeader)
			}
		}
	}
	return nil
}

func checkBoundary(b string) error {
	if b == "" || len(b) > 70 {
		return fmt.Errorf("boundary %q must be 1 to 70 characters", truncate(b, 80))
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("'()+_,-./:=?", c) >= 0 {
			continue
		}
		return fmt.Errorf("boundary %q has a character not allowed in a MIME boundary", truncate(b, 80))
	}
	return nil
}

// Failure describes why a changeset failed: the operation at Index was
// answered with Status and the service error Code. Message is the
// service's text without the index.
type Failure struct {
	Index     int
	Status    int
	Code      string
	Message   string
	ContentID string // the failed operation's Content-ID, if it had one
}

// FailureFromError turns a Parse error into the failure that answers the
// changeset, when the service reports that error inside the batch
// response (see Error.InChangeset).
func FailureFromError(err *Error) Failure {
	return Failure{Index: err.Index, Status: err.Status, Code: err.Code, Message: err.Message}
}

type odataError struct {
	Error odataErrorBody `json:"odata.error"`
}

type odataErrorBody struct {
	Code    string       `json:"code"`
	Message odataMessage `json:"message"`
}

type odataMessage struct {
	Lang  string `json:"lang"`
	Value string `json:"value"`
}

// FailurePart is the single changeset response that answers a failed
// changeset, as Azure Table storage and Cosmos DB send it: the failing
// status, and an odata.error body whose message begins with the failing
// operation's 0-based index ("1:The specified entity already exists.").
// The SDKs read the index from there: Python's TableTransactionError.index
// splits the message at the first ':' (azure-data-tables _error.py), the
// JavaScript SDK surfaces the message and code as a RestError.
func FailurePart(f Failure) Part {
	body, _ := json.Marshal(odataError{Error: odataErrorBody{
		Code:    f.Code,
		Message: odataMessage{Lang: "en-US", Value: strconv.Itoa(f.Index) + ":" + f.Message},
	}})
	h := http.Header{}
	h.Set("DataServiceVersion", "3.0;")
	h.Set("Content-Type", "application/json;odata=minimalmetadata;streaming=true;charset=utf-8")
	return Part{Status: f.Status, ContentID: f.ContentID, Header: h, Body: body}
}
