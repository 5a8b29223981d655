package tables

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/server"
)

// rawClient sends hand-signed requests, path style, account
// devstoreaccount1.
type rawClient struct {
	s      *server.Server
	key    string
	scheme string // SharedKey or SharedKeyLite
	// account overrides the signing account; host, when set, makes the
	// request host style (account in the host name).
	account, host string
}

// do sends a request to path (after the account) and returns the
// status, headers and body.
func (c rawClient) do(t *testing.T, method, path string, body []byte, hdr map[string]string) (int, http.Header, []byte) {
	t.Helper()
	account := c.account
	if account == "" {
		account = "devstoreaccount1"
	}
	urlPath := "/" + account + path
	if c.host != "" {
		urlPath = path
	}
	req, err := http.NewRequest(method, "http://"+c.s.TableAddr()+urlPath, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if c.host != "" {
		req.Host = c.host
	}
	req.Header.Set("x-ms-version", "2019-02-02")
	req.Header.Set("DataServiceVersion", "3.0")
	req.Header.Set("Accept", "application/json;odata=minimalmetadata")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	date := time.Now().UTC().Format(http.TimeFormat)
	if d, ok := hdr["x-ms-date"]; ok {
		date = d
	}
	req.Header.Set("x-ms-date", date)
	resource := "/" + account + req.URL.EscapedPath()
	var toSign string
	if c.scheme == "SharedKey" {
		toSign = method + "\n" + req.Header.Get("Content-MD5") + "\n" + req.Header.Get("Content-Type") + "\n" + date + "\n" + resource
	} else {
		toSign = date + "\n" + resource
	}
	key, err := base64.StdEncoding.DecodeString(c.key)
	if err != nil {
		t.Fatal(err)
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(toSign))
	scheme := c.scheme
	if scheme == "" {
		scheme = "SharedKeyLite"
	}
	req.Header.Set("Authorization", scheme+" "+account+":"+base64.StdEncoding.EncodeToString(m.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}
