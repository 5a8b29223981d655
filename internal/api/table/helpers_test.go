package table

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/auth"
	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/storage"
)

// testServer is a Server over an in-memory engine, behind httptest.
type testServer struct {
	*Server
	url string
	key []byte
}

func newTestServer(t *testing.T) *testServer { return newTestServerWith(t, 0) }

// newTestServerWith creates tables with throughput RU/s (0: the default).
func newTestServerWith(t *testing.T, throughput int) *testServer {
	t.Helper()
	st, err := storage.Open(storage.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.Open(st, engine.Options{NoThrottle: true})
	if err != nil {
		t.Fatal(err)
	}
	key, _ := auth.DecodeKey(auth.EmulatorKey)
	s := New(Config{Engine: eng, PrimaryKey: key, Throughput: throughput})
	hs := httptest.NewServer(s)
	t.Cleanup(func() {
		hs.Close()
		eng.Close()
		st.Close()
	})
	return &testServer{Server: s, url: hs.URL, key: key}
}

// do sends a request signed with SharedKeyLite, path style, to path
// (after the account).
func (ts *testServer) do(t *testing.T, method, path string, body []byte, hdr map[string]string) (int, http.Header, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, ts.url+"/acct"+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	date := time.Now().UTC().Format(http.TimeFormat)
	req.Header.Set("x-ms-date", date)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	m := hmac.New(sha256.New, ts.key)
	resource := "/acct" + req.URL.EscapedPath()
	if comp := req.URL.Query().Get("comp"); comp != "" {
		resource += "?comp=" + comp
	}
	m.Write([]byte(date + "\n" + resource))
	req.Header.Set("Authorization", "SharedKeyLite acct:"+base64.StdEncoding.EncodeToString(m.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

// mustDo is do that fails the test unless the status is want.
func (ts *testServer) mustDo(t *testing.T, want int, method, path string, body []byte) []byte {
	t.Helper()
	st, _, b := ts.do(t, method, path, body, nil)
	if st != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, st, b, want)
	}
	return b
}

func errorCode(b []byte) string {
	var e struct {
		E struct {
			Code string `json:"code"`
		} `json:"odata.error"`
	}
	_ = json.Unmarshal(b, &e)
	return e.E.Code
}
