package tables

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/server"
)

// TestSigning signs requests by hand with both schemes in both URL
// styles (aztables itself only signs SharedKeyLite,
// shared_policy_shared_key_credential.go), and checks what a wrong key,
// an old date and the read-only key get.
func TestSigning(t *testing.T) {
	s := startServer(t, server.Options{})
	for _, scheme := range []string{"SharedKey", "SharedKeyLite"} {
		for _, host := range []string{"", "localhost:8902"} {
			c := rawClient{s: s, key: emulatorKey, scheme: scheme, host: host}
			if host != "" {
				c.account = "localhost"
			}
			name := "sig" + strings.ToLower(scheme)
			if host != "" {
				name += "host"
			}
			if st, _, b := c.do(t, "POST", "/Tables", []byte(`{"TableName":"`+name+`"}`), nil); st != http.StatusCreated {
				t.Fatalf("%s host=%q: create: %d %s", scheme, host, st, b)
			}
			if st, _, b := c.do(t, "PUT", "/"+name+"(PartitionKey='a',RowKey='b')", []byte(`{"X":1}`), nil); st != http.StatusNoContent {
				t.Fatalf("%s host=%q: upsert: %d %s", scheme, host, st, b)
			}
			if st, _, b := c.do(t, "GET", "/"+name+"(PartitionKey='a',RowKey='b')", nil, nil); st != http.StatusOK || !strings.Contains(string(b), `"X":1`) {
				t.Fatalf("%s host=%q: get: %d %s", scheme, host, st, b)
			}
		}
	}
	errCode := func(b []byte) string {
		var e struct {
			E struct {
				Code string `json:"code"`
			} `json:"odata.error"`
		}
		_ = json.Unmarshal(b, &e)
		return e.E.Code
	}
	// A key that is not the server's.
	wrong := rawClient{s: s, key: readOnlyKey[:len(readOnlyKey)-4] + "AAA=", scheme: "SharedKey"}
	if st, h, b := wrong.do(t, "GET", "/Tables", nil, nil); st != http.StatusForbidden || errCode(b) != "AuthenticationFailed" || h.Get("x-ms-error-code") != "AuthenticationFailed" {
		t.Errorf("wrong key: %d %s", st, b)
	}
	// A request dated an hour ago.
	ok := rawClient{s: s, key: emulatorKey}
	old := time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)
	if st, _, b := ok.do(t, "GET", "/Tables", nil, map[string]string{"x-ms-date": old}); st != http.StatusForbidden || errCode(b) != "AuthenticationFailed" {
		t.Errorf("old date: %d %s", st, b)
	}
	// No Authorization at all.
	resp, err := http.Get("http://" + s.TableAddr() + "/devstoreaccount1/Tables")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("unsigned request: %d", resp.StatusCode)
	}
	// With the published emulator key only requests addressed to a
	// loopback name are served, as on the NoSQL listener: a web page
	// could otherwise reach the server through a DNS name of its own
	// that points at 127.0.0.1, and sign with the known key.
	rebound := rawClient{s: s, key: emulatorKey, host: "attacker.example:8902", account: "attacker"}
	if st, _, b := rebound.do(t, "GET", "/Tables", nil, nil); st != http.StatusForbidden {
		t.Errorf("a request addressed to another host name: %d %s", st, b)
	}
	// The read-only key reads, and cannot write.
	ro := rawClient{s: s, key: readOnlyKey}
	if st, _, b := ro.do(t, "GET", "/sigsharedkey(PartitionKey='a',RowKey='b')", nil, nil); st != http.StatusOK {
		t.Errorf("read-only read: %d %s", st, b)
	}
	if st, _, b := ro.do(t, "GET", "/sigsharedkey()", nil, nil); st != http.StatusOK {
		t.Errorf("read-only query: %d %s", st, b)
	}
	for _, w := range []struct{ method, path, body string }{
		{"POST", "/Tables", `{"TableName":"rotable"}`},
		{"POST", "/sigsharedkey", `{"PartitionKey":"a","RowKey":"c"}`},
		{"PUT", "/sigsharedkey(PartitionKey='a',RowKey='b')", `{}`},
		{"DELETE", "/sigsharedkey(PartitionKey='a',RowKey='b')", ``},
		{"DELETE", "/Tables('sigsharedkey')", ``},
	} {
		st, _, b := ro.do(t, w.method, w.path, []byte(w.body), map[string]string{"If-Match": "*"})
		if st != http.StatusForbidden || errCode(b) != "AuthorizationPermissionMismatch" {
			t.Errorf("read-only %s %s: %d %s", w.method, w.path, st, b)
		}
	}
	// Through the SDK too.
	svc := service(t, s, pathStyle, readOnlyKey)
	if _, err := svc.CreateTable(context.Background(), "rotable2", nil); status(err) != http.StatusForbidden {
		t.Errorf("read-only create through the SDK: %v", err)
	}
	if _, err := svc.NewClient("sigsharedkey").GetEntity(context.Background(), "a", "b", nil); err != nil {
		t.Errorf("read-only get through the SDK: %v", err)
	}
}

// TestOwnKey serves with a key of its own: requests signed with it pass,
// and the emulator's published key is refused.
func TestOwnKey(t *testing.T) {
	const own = "b3duLWtleS1vd24ta2V5LW93bi1rZXktb3duLWtleS1vd24ta2V5LW93bi1rZXktb3duLWtleQ=="
	s := startServer(t, server.Options{Key: own})
	ctx := context.Background()
	if _, err := service(t, s, pathStyle, own).CreateTable(ctx, "ownkey", nil); err != nil {
		t.Fatalf("create with the server's key: %v", err)
	}
	if _, err := service(t, s, pathStyle, emulatorKey).CreateTable(ctx, "emukey", nil); status(err) != http.StatusForbidden || code(err) != "AuthenticationFailed" {
		t.Errorf("create with the emulator key on a server with its own: %v", err)
	}
}
