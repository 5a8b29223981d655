package tableauth

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// FuzzVerify feeds raw requests to Verify: it never panics, every refusal
// is a coded 403 *Error, and whatever it grants stays within the scheme's
// bounds.
func FuzzVerify(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.json")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		var c captured
		if err := json.Unmarshal(data, &c); err != nil {
			f.Fatal(err)
		}
		for _, r := range c.Requests {
			var sb strings.Builder
			fmt.Fprintf(&sb, "%s %s HTTP/1.1\r\n", r.Method, r.Target)
			for _, kv := range r.Headers {
				fmt.Fprintf(&sb, "%s: %s\r\n", kv[0], kv[1])
			}
			sb.WriteString("\r\n")
			f.Add([]byte(sb.String()), c.Account)
		}
	}
	f.Add([]byte("GET /devstoreaccount1/mytable()?sv=2019-02-02&se=2026-11-28T20%3A00%3A00Z&sp=r&tn=mytable&spk=a&srk=b&sig=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA%3D HTTP/1.1\r\nHost: h\r\n\r\n"), "devstoreaccount1")
	f.Add([]byte("GET /?sv=2021-01-01&ss=t&srt=sco&sp=rwdlacup&se=2026-11-28&sip=10.0.0.1-10.0.0.9&spr=https&sig=x HTTP/1.1\r\nHost: h\r\n\r\n"), "acct")
	keys := []Key{{Name: "k", Secret: []byte("secret")}, {Name: "ro", Secret: []byte("other"), ReadOnly: true}}
	now := time.Date(2026, 11, 28, 19, 0, 0, 0, time.UTC)
	v := Verifier{Now: func() time.Time { return now }}
	f.Fuzz(func(t *testing.T, raw []byte, account string) {
		r, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
		if err != nil {
			return
		}
		g, err := v.Verify(r, account, keys)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Status != http.StatusForbidden || e.Code == "" || e.Err == nil {
				t.Fatalf("refusal %v is not a coded 403 *Error", err)
			}
			return
		}
		if g.Scheme < SharedKey || g.Scheme > AccountSAS || (g.Key != "k" && g.Key != "ro") || g.ReadOnly != (g.Key == "ro") {
			t.Fatalf("grant %+v", g)
		}
		for a := QueryTables; a <= GetServiceStats; a++ {
			if err := g.Allow(a, "t"); err == nil && g.ReadOnly && !a.readOnly() {
				t.Fatalf("read-only grant allows %s", a)
			}
		}
	})
}
