package cosmos

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/auth"
	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/epk"
	"github.com/parsecdb/parsec/internal/storage"
)

// testReadOnlyKey is the read-only key of test servers (64 bytes, base64).
var testReadOnlyKey = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("readonly"), 8))

// testServer is a Server over an in-memory store, with the store kept so
// that tests can compare its whole content before and after requests.
type testServer struct {
	api   *Server
	store *storage.DB
	eng   *engine.Engine
	// primary and readOnly are the decoded keys.
	primary, readOnly []byte
}

// newTestServer opens an in-memory store and engine and returns a Server
// for cfg with the emulator key as primary key and testReadOnlyKey as the
// read-only key (unless cfg sets them).
func newTestServer(t testing.TB, cfg Config) *testServer {
	t.Helper()
	return newTestServerEngine(t, cfg, engine.Options{NoThrottle: true})
}

// newTestServerEngine is newTestServer with an engine opened with eo.
func newTestServerEngine(t testing.TB, cfg Config, eo engine.Options) *testServer {
	t.Helper()
	st, err := storage.Open(storage.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.Open(st, eo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		eng.Close()
		st.Close()
	})
	if cfg.PrimaryKey == nil {
		cfg.PrimaryKey, _ = auth.DecodeKey(auth.EmulatorKey)
	}
	if cfg.ReadOnlyKey == nil {
		cfg.ReadOnlyKey, _ = auth.DecodeKey(testReadOnlyKey)
	}
	cfg.Engine = eng
	return &testServer{api: NewServer(cfg), store: st, eng: eng, primary: cfg.PrimaryKey, readOnly: cfg.ReadOnlyKey}
}

// seed creates database db (with its own throughput, so that it has an
// offer), container c partitioned on /pk, items "1" and "2" in key "p",
// and user "u" with permission "p" (Read on c).
func (ts *testServer) seed(t testing.TB) {
	t.Helper()
	if _, err := ts.eng.CreateDatabase("db", engine.Throughput{RUs: 400}); err != nil {
		t.Fatal(err)
	}
	def := epk.Definition{Kind: "Hash", Version: 2, Paths: []string{"/pk"}}
	if _, err := ts.eng.CreateContainer("db", engine.ContainerSpec{ID: "c", PartitionKey: def}, engine.Throughput{RUs: 400}); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.eng.CreateUser("db", "u"); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.eng.CreatePermission("db", "u", engine.PermissionSpec{ID: "p", Mode: engine.PermissionRead, Resource: "dbs/db/colls/c"}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"1", "2"} {
		st, _ := ts.do(ts.primary, http.MethodPost, "/dbs/db/colls/c/docs", []byte(`{"id":"`+id+`","pk":"p","v":1}`),
			map[string]string{hdrPartitionKey: `["p"]`})
		if st != http.StatusCreated {
			t.Fatalf("cannot seed item %s: status %d", id, st)
		}
	}
}

// state returns a digest of every key and value in the store.
func (ts *testServer) state(t testing.TB) [sha256.Size]byte {
	t.Helper()
	return ts.stateExcept(t, func(_, _ []byte) bool { return false })
}

// stateExcept returns a digest of every key and value in the store but
// those skip reports.
func (ts *testServer) stateExcept(t testing.TB, skip func(k, v []byte) bool) [sha256.Size]byte {
	t.Helper()
	h := sha256.New()
	err := ts.store.Iterate(nil, nil, func(k, v []byte) (bool, error) {
		if skip(k, v) {
			return true, nil
		}
		h.Write(k)
		h.Write([]byte{0})
		h.Write(v)
		h.Write([]byte{0})
		return true, nil
	})
	if err != nil {
		t.Fatalf("cannot read the store: %v", err)
	}
	var out [sha256.Size]byte
	h.Sum(out[:0])
	return out
}

// fuzzRequest builds the request of a fuzz case: method, and the path
// paths[flags&0xff] if there is one, else the fuzzed path as the raw URL
// path. It returns nil for a path that is not a plain path.
func fuzzRequest(method, path string, flags uint16, paths []string, body []byte) *http.Request {
	target := path
	if i := int(flags & 0xff); i < len(paths) {
		target = paths[i]
	}
	if !strings.HasPrefix(target, "/") {
		target = "/" + target
	}
	r, err := http.NewRequest(method, "http://parsec.test"+target, bytes.NewReader(body))
	if err != nil || r.URL.Host != "parsec.test" || r.URL.RawQuery != "" || r.URL.Fragment != "" {
		return nil
	}
	return r
}

// request builds a request to path (unescaped segments, escaped here)
// signed with key, with the extra headers hdr (an empty value deletes).
func (ts *testServer) request(key []byte, method, path string, body []byte, hdr map[string]string) (*http.Request, error) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	r, err := http.NewRequest(method, "http://parsec.test/"+strings.Join(segs, "/"), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	r.Header.Set("x-ms-version", "2020-11-05")
	auth.SignRequest(r, key, time.Now())
	for k, v := range hdr {
		if v == "" {
			r.Header.Del(k)
			continue
		}
		r.Header.Set(k, v)
	}
	return r, nil
}

// do serves one signed request and returns its status and body.
func (ts *testServer) do(key []byte, method, path string, body []byte, hdr map[string]string) (int, []byte) {
	r, err := ts.request(key, method, path, body, hdr)
	if err != nil {
		panic("BUG: cannot build test request: " + err.Error())
	}
	return ts.serve(r)
}

func (ts *testServer) serve(r *http.Request) (int, []byte) {
	w := httptest.NewRecorder()
	ts.api.ServeHTTP(w, r)
	b, _ := io.ReadAll(w.Result().Body)
	return w.Code, b
}

// clientHeader is a response's header as an HTTP client reads it: the
// server sends Cosmos's header names in lower case, a Go client
// canonicalizes them.
func clientHeader(h http.Header) http.Header {
	out := make(http.Header, len(h))
	for k, v := range h {
		out[http.CanonicalHeaderKey(k)] = v
	}
	return out
}
