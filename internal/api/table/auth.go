package table

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"strings"
	"time"
)

// maxClockSkew is how far the request's date may be from the server's
// clock, as the service allows.
const maxClockSkew = 15 * time.Minute

// access is what a request's credentials allow.
type access int

const (
	accessNone access = iota
	accessRead
	accessWrite
)

// authenticate checks a request's Authorization header (SharedKey or
// SharedKeyLite, signed with the primary or the read-only key) and
// returns the account it names and what it may do. Any account name is
// accepted: the key decides (DESIGN.md, "Accounts").
func (s *Server) authenticate(r *http.Request) (string, access, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return "", accessNone, newErr(http.StatusForbidden, codeAuthenticationFailed, "Server failed to authenticate the request: the Authorization header is missing.")
	}
	scheme, cred, ok := strings.Cut(h, " ")
	if !ok {
		return "", accessNone, errAuth("the Authorization header is not \"<scheme> <account>:<signature>\"")
	}
	account, sig, ok := strings.Cut(strings.TrimSpace(cred), ":")
	if !ok || account == "" {
		return "", accessNone, errAuth("the Authorization header is not \"<scheme> <account>:<signature>\"")
	}
	date := r.Header.Get("x-ms-date")
	if date == "" {
		date = r.Header.Get("Date")
	}
	if date == "" {
		return "", accessNone, errAuth("the request has neither x-ms-date nor Date")
	}
	t, err := http.ParseTime(date)
	if err != nil {
		return "", accessNone, errAuth("the request's date %q is not an HTTP date", date)
	}
	if d := s.now().Sub(t); d > maxClockSkew || d < -maxClockSkew {
		return "", accessNone, errAuth("the request's date %s is more than 15 minutes from the server's time", date)
	}
	var toSign string
	resource := canonicalResource(account, r)
	switch scheme {
	case "SharedKeyLite":
		toSign = date + "\n" + resource
	case "SharedKey":
		// Table service SharedKey: VERB, Content-MD5, Content-Type, date,
		// canonicalized resource.
		toSign = r.Method + "\n" + r.Header.Get("Content-MD5") + "\n" + r.Header.Get("Content-Type") + "\n" + date + "\n" + resource
	default:
		return "", accessNone, errAuth("the authorization scheme %q is not SharedKey or SharedKeyLite", scheme)
	}
	got, err := base64.StdEncoding.DecodeString(sig)
	if err != nil {
		return "", accessNone, errAuth("the signature is not base64")
	}
	if verify(s.cfg.PrimaryKey, toSign, got) {
		return account, accessWrite, nil
	}
	if len(s.cfg.ReadOnlyKey) > 0 && verify(s.cfg.ReadOnlyKey, toSign, got) {
		return account, accessRead, nil
	}
	return "", accessNone, errAuth("the MAC signature found in the HTTP request is not the same as any computed signature. The server used the following string to sign: '%s'", strings.ReplaceAll(toSign, "\n", `\n`))
}

func errAuth(format string, args ...any) *tableError {
	return newErr(http.StatusForbidden, codeAuthenticationFailed, "Server failed to authenticate the request. Make sure the value of the Authorization header is formed correctly including the signature: "+format, args...)
}

func verify(key []byte, toSign string, sig []byte) bool {
	if len(key) == 0 {
		return false
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(toSign))
	return subtle.ConstantTimeCompare(m.Sum(nil), sig) == 1
}

// canonicalResource is the CanonicalizedResource of the Table service:
// "/" + account + the escaped path as sent, plus "?comp=" and its value
// when the query has comp.
func canonicalResource(account string, r *http.Request) string {
	p := r.URL.EscapedPath()
	if p == "" {
		p = "/"
	}
	res := "/" + account + p
	if comp, ok := r.URL.Query()["comp"]; ok && len(comp) > 0 {
		res += "?comp=" + comp[0]
	}
	return res
}
