package tableauth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Key is an account key: its name (for the Grant), the decoded secret, and
// whether it only permits reads.
type Key struct {
	Name     string
	Secret   []byte
	ReadOnly bool
}

// DecodeKey decodes a base64 account key, as the SDKs' connection strings
// and credentials carry it.
func DecodeKey(name, b64 string, readOnly bool) (Key, error) {
	secret, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return Key{}, fmt.Errorf("cannot decode key %s: %w", name, err)
	}
	if len(secret) == 0 {
		return Key{}, fmt.Errorf("key %s is empty", name)
	}
	return Key{Name: name, Secret: secret, ReadOnly: readOnly}, nil
}

// Scheme is how a request was authorized.
type Scheme uint8

// The schemes Verify recognizes.
const (
	SharedKey     Scheme = iota + 1 // Authorization: SharedKey <account>:<signature>
	SharedKeyLite                   // Authorization: SharedKeyLite <account>:<signature>
	ServiceSAS                      // a table SAS in the query string (tn, sp, ...)
	AccountSAS                      // an account SAS in the query string (ss, srt, sp, ...)
)

func (s Scheme) String() string {
	switch s {
	case SharedKey:
		return "SharedKey"
	case SharedKeyLite:
		return "SharedKeyLite"
	case ServiceSAS:
		return "ServiceSAS"
	case AccountSAS:
		return "AccountSAS"
	}
	return fmt.Sprintf("Scheme(%d)", uint8(s))
}

// DefaultMaxDateSkew is how far a SharedKey request's date may be from the
// server's clock, the service's 15 minutes.
const DefaultMaxDateSkew = 15 * time.Minute

// Verifier checks a request's credentials. The zero value is usable.
type Verifier struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// MaxDateSkew bounds the distance between a SharedKey request's
	// x-ms-date (or Date) and Now: zero means DefaultMaxDateSkew, a
	// negative value disables the check.
	MaxDateSkew time.Duration
}

func (v Verifier) now() time.Time {
	if v.Now != nil {
		return v.Now()
	}
	return time.Now()
}

// Verify authenticates r as a request to account, signed with one of keys,
// and returns what it may do. A request with an Authorization header is
// checked as SharedKey or SharedKeyLite; otherwise a "sig" query parameter
// makes it a shared access signature (an account SAS when "ss" is present,
// else a table SAS); otherwise it fails with ErrNoCredentials.
//
// account is the account the server resolved from the URL: the first Host
// label for host-style URLs, the first path segment for path-style ones.
// The canonicalized resource is "/" + account + the request's escaped path
// as sent, so a path-style request signs "/acct/acct/Tables" and a
// host-style one "/acct/Tables" with no further help.
//
// Every error is an *Error. Verify checks that the request is genuine and
// in time; what it may touch is Grant.Allow's business.
func (v Verifier) Verify(r *http.Request, account string, keys []Key) (Grant, error) {
	if auth := r.Header.Get("Authorization"); auth != "" {
		return v.verifySharedKey(r, auth, account, keys)
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return Grant{}, fail(ErrMalformed, "cannot parse the query string: %v", err)
	}
	if q.Get("sig") != "" {
		if q.Has("ss") || q.Has("srt") {
			return v.verifyAccountSAS(r, q, account, keys)
		}
		return v.verifyServiceSAS(r, q, account, keys)
	}
	return Grant{}, fail(ErrNoCredentials, "")
}

func (v Verifier) verifySharedKey(r *http.Request, auth, account string, keys []Key) (Grant, error) {
	schemeName, cred, ok := strings.Cut(strings.TrimSpace(auth), " ")
	var scheme Scheme
	switch {
	case ok && schemeName == "SharedKey":
		scheme = SharedKey
	case ok && schemeName == "SharedKeyLite":
		scheme = SharedKeyLite
	default:
		return Grant{}, fail(ErrMalformed, "the Authorization scheme is not SharedKey or SharedKeyLite")
	}
	acct, sig, ok := strings.Cut(strings.TrimSpace(cred), ":")
	if !ok || acct == "" || sig == "" {
		return Grant{}, fail(ErrMalformed, "the Authorization header is not \"%s account:signature\"", schemeName)
	}
	if acct != account {
		return Grant{}, fail(ErrAccountMismatch, "the Authorization header names account %q, the URL %q", truncate(acct, 64), account)
	}
	mac, err := base64.StdEncoding.DecodeString(sig)
	if err != nil || len(mac) != sha256.Size {
		return Grant{}, fail(ErrMalformed, "the signature is not a base64 HMAC-SHA256")
	}

	// The SDKs sign x-ms-date (aztables shared_policy_shared_key_credential.go,
	// azure-data-tables _authentication.py, @azure/data-tables
	// tablesNamedCredentialPolicy.js); Azurite prefers Date when both are
	// present. Python sends both with the same value. Try x-ms-date, then a
	// different Date.
	dates := make([]string, 0, 2)
	if d := r.Header.Get("X-Ms-Date"); d != "" {
		dates = append(dates, d)
	}
	if d := r.Header.Get("Date"); d != "" && (len(dates) == 0 || d != dates[0]) {
		dates = append(dates, d)
	}
	if len(dates) == 0 {
		return Grant{}, fail(ErrNoDate, "")
	}
	if skew := v.maxSkew(); skew >= 0 {
		t, err := http.ParseTime(dates[0])
		if err != nil {
			return Grant{}, fail(ErrMalformed, "cannot parse the request date %q", truncate(dates[0], 64))
		}
		if d := v.now().Sub(t); d > skew || d < -skew {
			return Grant{}, fail(ErrDateSkew, "the request date %s is more than %v from the server's time", dates[0], skew)
		}
	}

	resource := canonicalizedResource(r, account)
	for _, date := range dates {
		var sts string
		if scheme == SharedKey {
			sts = strings.Join([]string{
				r.Method,
				r.Header.Get("Content-MD5"),
				r.Header.Get("Content-Type"),
				date,
				resource,
			}, "\n")
		} else {
			sts = date + "\n" + resource
		}
		if k, ok := matchKey(keys, sts, mac); ok {
			return Grant{Scheme: scheme, Key: k.Name, ReadOnly: k.ReadOnly}, nil
		}
	}
	return Grant{}, fail(ErrSignatureMismatch, "the %s signature does not match any key for resource %q", scheme, resource)
}

func (v Verifier) maxSkew() time.Duration {
	if v.MaxDateSkew == 0 {
		return DefaultMaxDateSkew
	}
	return v.MaxDateSkew
}

// canonicalizedResource is "/" + account + the escaped path exactly as the
// client sent it, plus "?comp=<value>" when the query has comp (Table
// SharedKey and SharedKeyLite sign no other query parameter).
func canonicalizedResource(r *http.Request, account string) string {
	path := r.URL.EscapedPath()
	// A server request keeps the request target as sent; prefer its path so
	// that an escaping the client chose (e.g. %27 for ') survives.
	if strings.HasPrefix(r.RequestURI, "/") {
		path, _, _ = strings.Cut(r.RequestURI, "?")
	}
	if path == "" {
		path = "/"
	}
	res := "/" + account + path
	if q, err := url.ParseQuery(r.URL.RawQuery); err == nil {
		if comp, ok := q["comp"]; ok && len(comp) > 0 {
			res += "?comp=" + comp[0]
		}
	}
	return res
}

// matchKey returns the key whose HMAC-SHA256 of sts equals mac. It computes
// and compares every key in constant time, so the time taken says nothing
// about which key (if any) matched.
func matchKey(keys []Key, sts string, mac []byte) (Key, bool) {
	found := -1
	for i, k := range keys {
		if len(k.Secret) == 0 {
			continue
		}
		h := hmac.New(sha256.New, k.Secret)
		h.Write([]byte(sts))
		if hmac.Equal(h.Sum(nil), mac) && found < 0 {
			found = i
		}
	}
	if found < 0 {
		return Key{}, false
	}
	return keys[found], true
}

// decodeSig decodes a SAS signature. A client that left a '+' of the
// base64 unescaped has it decoded to a space by the query parser; it is
// put back.
func decodeSig(sig string) ([]byte, error) {
	mac, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(sig, " ", "+"))
	if err != nil {
		return nil, err
	}
	if len(mac) != sha256.Size {
		return nil, errors.New("not an HMAC-SHA256")
	}
	return mac, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
