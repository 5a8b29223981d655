package tableauth

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// devKey is Azurite's public development key; roKey stands for a second,
// read-only key.
const (
	devKey = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
	roKey  = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="
)

func testKeys(t *testing.T) []Key {
	t.Helper()
	full, err := DecodeKey("primary", devKey, false)
	if err != nil {
		t.Fatal(err)
	}
	ro, err := DecodeKey("readonly", roKey, true)
	if err != nil {
		t.Fatal(err)
	}
	return []Key{full, ro}
}

// accountOf resolves the account as the server does: the first path
// segment when it names a known account, else the first Host label.
func accountOf(r *http.Request, known ...string) string {
	seg, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	for _, k := range known {
		if seg == k {
			return k
		}
	}
	host, _, _ := strings.Cut(r.Host, ":")
	label, _, _ := strings.Cut(host, ".")
	return label
}

func wantErr(t *testing.T, err, sentinel error, code string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, sentinel) || e.Code != code || e.Status != http.StatusForbidden {
		t.Fatalf("error %v, want %v with code %s and status 403", err, sentinel, code)
	}
}

type captured struct {
	SDK      string `json:"sdk"`
	Account  string `json:"account"`
	Key      string `json:"key"`
	Requests []struct {
		Method  string      `json:"method"`
		Target  string      `json:"target"`
		Headers [][2]string `json:"headers"`
		Body    string      `json:"body"`
	} `json:"requests"`
}

// TestCapturedSDKRequests replays requests that the Python SDK (SharedKey)
// and the JavaScript SDK (SharedKeyLite) signed, path-style and
// host-style, through http.ReadRequest as a server reads them (see
// testdata/README.md). Each verifies; each with its date moved by a
// second, its path changed, or its Content-Type changed (which only
// SharedKey signs) fails.
func TestCapturedSDKRequests(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.json")
	if len(files) != 4 {
		t.Fatalf("testdata: %v", files)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c captured
		if err := json.Unmarshal(data, &c); err != nil {
			t.Fatal(err)
		}
		key, err := DecodeKey("primary", c.Key, false)
		if err != nil {
			t.Fatal(err)
		}
		wantScheme := SharedKeyLite
		if strings.HasPrefix(c.SDK, "azure-data-tables") {
			wantScheme = SharedKey
		}
		if len(c.Requests) != 4 {
			t.Fatalf("%s: %d requests", f, len(c.Requests))
		}
		for i, cr := range c.Requests {
			t.Run(fmt.Sprintf("%s/%d", filepath.Base(f), i), func(t *testing.T) {
				read := func(mutate func(h [][2]string, target string) ([][2]string, string)) *http.Request {
					h := append([][2]string(nil), cr.Headers...)
					target := cr.Target
					if mutate != nil {
						h, target = mutate(h, target)
					}
					var sb strings.Builder
					fmt.Fprintf(&sb, "%s %s HTTP/1.1\r\n", cr.Method, target)
					for _, kv := range h {
						fmt.Fprintf(&sb, "%s: %s\r\n", kv[0], kv[1])
					}
					sb.WriteString("\r\n" + cr.Body)
					r, err := http.ReadRequest(bufio.NewReader(strings.NewReader(sb.String())))
					if err != nil {
						t.Fatal(err)
					}
					return r
				}
				r := read(nil)
				date, err := http.ParseTime(r.Header.Get("X-Ms-Date"))
				if err != nil {
					t.Fatal(err)
				}
				v := Verifier{Now: func() time.Time { return date.Add(time.Minute) }}
				if acct := accountOf(r, "devstoreaccount1"); acct != c.Account {
					t.Fatalf("resolved account %q, want %q", acct, c.Account)
				}
				g, err := v.Verify(r, c.Account, []Key{key})
				if err != nil {
					t.Fatalf("%s %s: %v", cr.Method, cr.Target, err)
				}
				if g.Scheme != wantScheme || g.Key != "primary" || g.ReadOnly {
					t.Errorf("grant %+v", g)
				}
				setHeader := func(name, value string) func([][2]string, string) ([][2]string, string) {
					return func(h [][2]string, target string) ([][2]string, string) {
						for i := range h {
							if strings.EqualFold(h[i][0], name) {
								h[i][1] = value
							}
						}
						return h, target
					}
				}
				later := date.Add(time.Second).Format(http.TimeFormat)
				tampered := read(func(h [][2]string, target string) ([][2]string, string) {
					h, _ = setHeader("x-ms-date", later)(h, target)
					h, _ = setHeader("Date", later)(h, target)
					return h, target
				})
				_, err = v.Verify(tampered, c.Account, []Key{key})
				wantErr(t, err, ErrSignatureMismatch, CodeAuthenticationFailed)
				otherPath := read(func(h [][2]string, target string) ([][2]string, string) {
					return h, strings.Replace(target, "able", "ablx", 1) // a path both resources contain
				})
				_, err = v.Verify(otherPath, c.Account, []Key{key})
				wantErr(t, err, ErrSignatureMismatch, CodeAuthenticationFailed)
				if r.Header.Get("Content-Type") != "" {
					_, err = v.Verify(read(setHeader("Content-Type", "text/plain")), c.Account, []Key{key})
					if wantScheme == SharedKey {
						wantErr(t, err, ErrSignatureMismatch, CodeAuthenticationFailed)
					} else if err != nil {
						t.Errorf("SharedKeyLite does not sign Content-Type, yet: %v", err)
					}
				}
				// Another account's name, and the right one with the wrong key.
				_, err = v.Verify(r, "other", []Key{key})
				wantErr(t, err, ErrAccountMismatch, CodeAuthenticationFailed)
				_, err = v.Verify(r, c.Account, testKeys(t)[1:])
				wantErr(t, err, ErrSignatureMismatch, CodeAuthenticationFailed)
				// Too old for the clock.
				old := Verifier{Now: func() time.Time { return date.Add(16 * time.Minute) }}
				_, err = old.Verify(r, c.Account, []Key{key})
				wantErr(t, err, ErrDateSkew, CodeAuthenticationFailed)
			})
		}
	}
}

// recordingServer runs Verify on every request and answers 204.
type recordingServer struct {
	mu     sync.Mutex
	v      Verifier
	keys   []Key
	grants []Grant
	errs   []error
	paths  []string
}

func (s *recordingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g, err := s.v.Verify(r, accountOf(r, "devstoreaccount1"), s.keys)
	s.mu.Lock()
	s.grants, s.errs, s.paths = append(s.grants, g), append(s.errs, err), append(s.paths, r.RequestURI)
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func noRetry() policy.ClientOptions {
	return policy.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}
}

// TestGoSDKSharedKeyLite signs requests with aztables v1.4.1's
// NewSharedKeyCredential (which signs SharedKeyLite,
// shared_policy_shared_key_credential.go) through a real HTTP server, with
// the service URL path-style and host-style, with the full key and with
// the read-only key.
func TestGoSDKSharedKeyLite(t *testing.T) {
	keys := testKeys(t)
	for _, style := range []string{"path", "host"} {
		for _, key := range []struct {
			name, b64 string
			ro        bool
		}{{"primary", devKey, false}, {"readonly", roKey, true}} {
			t.Run(style+"/"+key.name, func(t *testing.T) {
				rs := &recordingServer{keys: keys}
				srv := httptest.NewServer(rs)
				defer srv.Close()
				serviceURL, account := srv.URL+"/devstoreaccount1", "devstoreaccount1"
				if style == "host" {
					serviceURL, account = strings.Replace(srv.URL, "127.0.0.1", "localhost", 1), "localhost"
				}
				cred, err := aztables.NewSharedKeyCredential(account, key.b64)
				if err != nil {
					t.Fatal(err)
				}
				svc, err := aztables.NewServiceClientWithSharedKey(serviceURL, cred, &aztables.ClientOptions{ClientOptions: noRetry()})
				if err != nil {
					t.Fatal(err)
				}
				ctx := context.Background()
				svc.CreateTable(ctx, "mytable", nil)
				c := svc.NewClient("mytable")
				c.GetEntity(ctx, "p 1", "r'1/é", nil)
				c.GetAccessPolicy(ctx, nil)
				pager := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: toPtr("PartitionKey eq 'p'")})
				pager.NextPage(ctx)
				if len(rs.grants) != 4 {
					t.Fatalf("server saw %d requests", len(rs.grants))
				}
				for i, err := range rs.errs {
					if err != nil {
						t.Fatalf("%s: %v", rs.paths[i], err)
					}
					g := rs.grants[i]
					if g.Scheme != SharedKeyLite || g.Key != key.name || g.ReadOnly != key.ro {
						t.Errorf("%s: grant %+v", rs.paths[i], g)
					}
				}
				if !strings.Contains(rs.paths[2], "comp=acl") || !strings.Contains(rs.paths[1], "RowKey=") {
					t.Errorf("paths %q", rs.paths)
				}
				// The read-only key may read but not create a table.
				wantRO := error(nil)
				if key.ro {
					wantRO = ErrPermission
				}
				if err := rs.grants[0].Allow(CreateTable, ""); !errors.Is(err, wantRO) && (err != nil || wantRO != nil) {
					t.Errorf("CreateTable with %s key: %v", key.name, err)
				}
				if err := rs.grants[3].Allow(QueryEntities, "mytable"); err != nil {
					t.Errorf("QueryEntities: %v", err)
				}
			})
		}
	}
}

func toPtr[T any](v T) *T { return &v }

// TestSharedKeyDocumented checks both string-to-sign forms against strings
// built in the test from the documentation
// (learn.microsoft.com/rest/api/storageservices/authorize-with-shared-key:
// Table SharedKey is VERB, Content-MD5, Content-Type, Date, then the
// canonicalized resource; SharedKeyLite is Date then the resource; the
// resource keeps only ?comp=).
func TestSharedKeyDocumented(t *testing.T) {
	secret, _ := base64.StdEncoding.DecodeString(devKey)
	sign := func(s string) string {
		h := hmac.New(sha256.New, secret)
		h.Write([]byte(s))
		return base64.StdEncoding.EncodeToString(h.Sum(nil))
	}
	date := "Sat, 28 Nov 2026 19:00:00 GMT"
	now, _ := http.ParseTime(date)
	v := Verifier{Now: func() time.Time { return now }}
	keys := testKeys(t)

	r := httptest.NewRequest("PUT", "http://myacct.table.core.windows.net/mytable(PartitionKey='a',RowKey='b')?comp=acl&timeout=30", strings.NewReader("{}"))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Content-MD5", "Q2hlY2sgSW50ZWdyaXR5IQ==")
	r.Header.Set("x-ms-date", date)
	resource := "/myacct/mytable(PartitionKey='a',RowKey='b')?comp=acl"
	r.Header.Set("Authorization", "SharedKey myacct:"+sign("PUT\nQ2hlY2sgSW50ZWdyaXR5IQ==\napplication/json\n"+date+"\n"+resource))
	if g, err := v.Verify(r, accountOf(r), keys); err != nil || g.Scheme != SharedKey {
		t.Fatalf("SharedKey host-style: %+v %v", g, err)
	}
	r.Header.Set("Authorization", "SharedKeyLite myacct:"+sign(date+"\n"+resource))
	if g, err := v.Verify(r, "myacct", keys); err != nil || g.Scheme != SharedKeyLite {
		t.Fatalf("SharedKeyLite: %+v %v", g, err)
	}
	// Date without x-ms-date.
	r = httptest.NewRequest("GET", "http://127.0.0.1:10002/devstoreaccount1/Tables", nil)
	r.Header.Set("Date", date)
	r.Header.Set("Authorization", "SharedKey devstoreaccount1:"+sign("GET\n\n\n"+date+"\n/devstoreaccount1/devstoreaccount1/Tables"))
	if _, err := v.Verify(r, accountOf(r, "devstoreaccount1"), keys); err != nil {
		t.Fatalf("SharedKey with Date, path-style: %v", err)
	}
	// The host-style resource does not verify a path-style request.
	r.Header.Set("Authorization", "SharedKey devstoreaccount1:"+sign("GET\n\n\n"+date+"\n/devstoreaccount1/Tables"))
	_, err := v.Verify(r, "devstoreaccount1", keys)
	wantErr(t, err, ErrSignatureMismatch, CodeAuthenticationFailed)

	for name, auth := range map[string]string{
		"bearer":     "Bearer abc",
		"no colon":   "SharedKey devstoreaccount1",
		"not base64": "SharedKey devstoreaccount1:@@@",
		"short mac":  "SharedKey devstoreaccount1:" + base64.StdEncoding.EncodeToString([]byte("short")),
		"blank":      " ",
	} {
		t.Run(name, func(t *testing.T) {
			r.Header.Set("Authorization", auth)
			_, err := v.Verify(r, "devstoreaccount1", keys)
			wantErr(t, err, ErrMalformed, CodeAuthenticationFailed)
		})
	}
	r.Header.Del("Date")
	r.Header.Set("Authorization", "SharedKey devstoreaccount1:"+sign("x"))
	_, err = v.Verify(r, "devstoreaccount1", keys)
	wantErr(t, err, ErrNoDate, CodeAuthenticationFailed)
	r.Header.Del("Authorization")
	_, err = v.Verify(r, "devstoreaccount1", keys)
	wantErr(t, err, ErrNoCredentials, CodeAuthenticationFailed)
}
