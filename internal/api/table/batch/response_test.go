package batch

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// TestWriteResponseLayout checks the bytes against the service's sample
// response (learn.microsoft.com/rest/api/storageservices/performing-entity-group-transactions,
// "Sample response"): the changeset response starts on the line right
// after the batch part's headers, the headers keep the service's spelling,
// and lines end in CRLF.
func TestWriteResponseLayout(t *testing.T) {
	h := http.Header{}
	h.Set("ETag", `W/"datetime'2026-11-28T19%3A00%3A00Z'"`)
	h.Set("DataServiceVersion", "3.0;")
	h.Set("Location", "http://h/acct/t(PartitionKey='p',RowKey='r')")
	h.Set("DataServiceId", "http://h/acct/t(PartitionKey='p',RowKey='r')")
	h.Set("Preference-Applied", "return-no-content")
	var buf bytes.Buffer
	if err := WriteResponse(&buf, "batchresponse_1", []Part{
		{Status: 204, ContentID: "1", Header: h},
		{Status: 201, Header: http.Header{"Content-Type": {"application/json;odata=minimalmetadata"}}, Body: []byte(`{"a":1}`)},
	}); err != nil {
		t.Fatal(err)
	}
	want := "--batchresponse_1\r\n" +
		"Content-Type: multipart/mixed; boundary=changesetresponse_1\r\n" +
		"\r\n" +
		"--changesetresponse_1\r\n" +
		"Content-Type: application/http\r\n" +
		"Content-Transfer-Encoding: binary\r\n" +
		"\r\n" +
		"HTTP/1.1 204 No Content\r\n" +
		"Content-ID: 1\r\n" +
		"X-Content-Type-Options: nosniff\r\n" +
		"Cache-Control: no-cache\r\n" +
		"DataServiceId: http://h/acct/t(PartitionKey='p',RowKey='r')\r\n" +
		"DataServiceVersion: 3.0;\r\n" +
		"ETag: W/\"datetime'2026-11-28T19%3A00%3A00Z'\"\r\n" +
		"Location: http://h/acct/t(PartitionKey='p',RowKey='r')\r\n" +
		"Preference-Applied: return-no-content\r\n" +
		"\r\n" +
		"\r\n" +
		"--changesetresponse_1\r\n" +
		"Content-Type: application/http\r\n" +
		"Content-Transfer-Encoding: binary\r\n" +
		"\r\n" +
		"HTTP/1.1 201 Created\r\n" +
		"X-Content-Type-Options: nosniff\r\n" +
		"Cache-Control: no-cache\r\n" +
		"Content-Type: application/json;odata=minimalmetadata\r\n" +
		"\r\n" +
		"{\"a\":1}\r\n" +
		"--changesetresponse_1--\r\n" +
		"--batchresponse_1--\r\n"
	if got := buf.String(); got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	// The JavaScript SDK's patterns (TableTransaction.js) find what they need.
	sub := strings.Split(buf.String(), "--changesetresponse_")
	if len(sub) != 4 {
		t.Fatalf("%d pieces", len(sub))
	}
	if m := regexp.MustCompile(`ETag: (.*)`).FindStringSubmatch(sub[1]); m == nil {
		t.Error("no ETag for the JavaScript SDK")
	}
	if m := regexp.MustCompile(`RowKey='(.*)'`).FindStringSubmatch(sub[1]); m == nil || m[1] != "r" {
		t.Errorf("RowKey match %q", m)
	}
}

func TestFailurePart(t *testing.T) {
	p := FailurePart(Failure{Index: 3, Status: 404, Code: "ResourceNotFound", Message: "The specified resource does not exist.\nRequestId:1", ContentID: "4"})
	var buf bytes.Buffer
	if err := WriteResponse(&buf, "batchresponse_z", []Part{p}); err != nil {
		t.Fatal(err)
	}
	got := readResponse(t, "batchresponse_z", buf.Bytes())
	if len(got) != 1 || got[0].StatusCode != 404 || got[0].Header.Get("Content-ID") != "4" {
		t.Fatalf("%+v", got)
	}
	var e struct {
		Err struct {
			Code    string `json:"code"`
			Message struct {
				Lang, Value string
			} `json:"message"`
		} `json:"odata.error"`
	}
	if err := json.NewDecoder(got[0].Body).Decode(&e); err != nil {
		t.Fatal(err)
	}
	if e.Err.Code != "ResourceNotFound" || e.Err.Message.Value != "3:The specified resource does not exist.\nRequestId:1" || e.Err.Message.Lang != "en-US" {
		t.Errorf("%+v", e)
	}
	// The body stays on one line for the JavaScript SDK's /\{(.*)\}/.
	if bytes.Contains(p.Body, []byte("\n")) {
		t.Errorf("body spans lines: %s", p.Body)
	}

	_, err := Parse(ct, strings.NewReader(build("\r\n", 1, nil)), Limits{})
	var pe *Error
	if !errors.As(err, &pe) {
		t.Fatal(err)
	}
	f := FailureFromError(pe)
	if f.Status != 400 || f.Code != CodeInvalidInput || f.Index != 0 {
		t.Errorf("%+v", f)
	}
}

func TestWriteResponseRefuses(t *testing.T) {
	for name, c := range map[string]struct {
		boundary string
		part     Part
	}{
		"empty boundary":      {"", Part{Status: 204}},
		"long boundary":       {"batchresponse_" + strings.Repeat("a", 60), Part{Status: 204}},
		"boundary with space": {"batch response", Part{Status: 204}},
		"status":              {"batchresponse_1", Part{Status: 42}},
		"header injection":    {"batchresponse_1", Part{Status: 204, Header: http.Header{"ETag": {"x\r\nEvil: 1"}}}},
		"header name":         {"batchresponse_1", Part{Status: 204, Header: http.Header{"Bad Name": {"x"}}}},
		"content id":          {"batchresponse_1", Part{Status: 204, ContentID: "1\n2"}},
	} {
		var buf bytes.Buffer
		if err := WriteResponse(&buf, c.boundary, []Part{c.part}); err == nil {
			t.Errorf("%s: accepted", name)
		}
		if buf.Len() != 0 {
			t.Errorf("%s: wrote %d bytes before refusing", name, buf.Len())
		}
	}
}

func TestNewBoundary(t *testing.T) {
	b, err := NewBoundary(bytes.NewReader(bytes.Repeat([]byte{0xff}, 16)))
	if err != nil || b != "batchresponse_ffffffff-ffff-4fff-bfff-ffffffffffff" {
		t.Errorf("%q %v", b, err)
	}
	if _, err := NewBoundary(bytes.NewReader(nil)); err == nil {
		t.Error("no randomness, yet a boundary")
	}
	if ContentType(b) != "multipart/mixed; boundary="+b {
		t.Error(ContentType(b))
	}
}
