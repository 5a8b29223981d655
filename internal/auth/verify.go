package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Errors returned by Verify, ParseHeader and CheckDate; each error wraps
// exactly one of them. The server answers each with 401 Unauthorized.
var (
	// ErrMissing: no Authorization header.
	ErrMissing = errors.New("required header authorization is missing; ensure a valid authorization token is passed")
	// ErrMalformed: the header is not a well-formed token
	// (type=..&ver=..&sig=.., a 1.0 version, a base64 SHA-256 signature).
	ErrMalformed = errors.New("malformed authorization token")
	// ErrUnsupported: a well-formed token of a type other than master
	// (aad, resource, sas).
	ErrUnsupported = errors.New("unsupported authorization token type")
	// ErrBadSignature: the signature matches neither key.
	ErrBadSignature = errors.New("the input authorization token can't serve the request; the wrong key is being used or the expected payload is not built as per the protocol")
	// ErrBadDate: the x-ms-date value is missing or not an RFC 1123 date.
	ErrBadDate = errors.New("the input date header is invalid; pass an RFC 1123 date such as \"Sat, 21 Nov 2026 07:52:06 GMT\"")
	// ErrDateSkew: the date is further from the server clock than allowed.
	ErrDateSkew = errors.New("the authorization token is not valid at the current time")
)

// Access is what a verified request may do.
type Access uint8

const (
	NoAccess  Access = iota // verification failed
	ReadOnly                // signed with the read-only key
	ReadWrite               // signed with the primary key
	// ResourceToken is a resource token: the request may do what its Grant
	// allows, which the caller checks (see Authenticate).
	ResourceToken
)

func (a Access) String() string {
	switch a {
	case NoAccess:
		return "none"
	case ReadOnly:
		return "read-only"
	case ReadWrite:
		return "read-write"
	case ResourceToken:
		return "resource token"
	}
	return fmt.Sprintf("Access(%d)", uint8(a))
}

// CanWrite reports whether a allows writes.
func (a Access) CanWrite() bool { return a == ReadWrite }

// Verifier checks master-key signatures against a primary and an optional
// read-only key. It is safe for concurrent use. Each goroutine's check
// reuses a pooled HMAC state keyed once, so a Verify call does not allocate
// on success.
type Verifier struct {
	primary, readOnly []byte
	tokenKey          []byte    // signs resource tokens (see tokenKey)
	pool              sync.Pool // *verifyState
}

// verifyState is the per-call scratch space, pooled.
type verifyState struct {
	primary, readOnly hash.Hash // keyed HMAC-SHA256; readOnly is nil without a read-only key
	token             hash.Hash // keyed with the resource token key
	grant             []byte    // a resource token's decoded grant
	tok               []byte    // the decoded header
	payload           []byte    // the string to sign
	sig               [64]byte  // the decoded signature
	mac               [sha256.Size]byte
}

// NewVerifier returns a Verifier for the decoded keys (see DecodeKey). The
// keys are copied. readOnly may be nil for a server without a read-only key.
// An empty primary key is a configuration bug and panics.
func NewVerifier(primary, readOnly []byte) *Verifier {
	if len(primary) == 0 {
		panic("BUG: auth.NewVerifier called with an empty primary key")
	}
	v := &Verifier{primary: append([]byte(nil), primary...), tokenKey: tokenKey(primary)}
	if len(readOnly) > 0 {
		v.readOnly = append([]byte(nil), readOnly...)
	}
	v.pool.New = func() any {
		st := &verifyState{
			primary: hmac.New(sha256.New, v.primary),
			token:   hmac.New(sha256.New, v.tokenKey),
			tok:     make([]byte, 0, 128),
			payload: make([]byte, 0, 256),
		}
		if v.readOnly != nil {
			st.readOnly = hmac.New(sha256.New, v.readOnly)
		}
		return st
	}
	return v
}

// maxTokenLen bounds the decoded header; master tokens are about 80 bytes,
// AAD tokens a few KB.
const maxTokenLen = 16 << 10

// Verify checks the Authorization header authHeader of a request with the
// given verb, resource type and link (see Resource) and x-ms-date value. It
// returns ReadWrite when the primary key signed it and ReadOnly when the
// read-only key did. The comparison is constant-time (hmac.Equal). Only
// type=master ver=1.0 tokens are accepted. On failure the Access is NoAccess
// and the error wraps ErrMissing, ErrMalformed, ErrUnsupported or
// ErrBadSignature; the last quotes the payload the server signed, as the
// service does, so that clients can find their mistake. Verify does not
// check the date against the clock; see CheckDate.
func (v *Verifier) Verify(verb, resourceType, resourceLink, date, authHeader string) (Access, error) {
	a, _, err := v.verify(verb, resourceType, resourceLink, date, authHeader, false, time.Time{})
	return a, err
}

// Authenticate is Verify that also accepts resource tokens
// (type=resource, minted by MintResourceToken): for one it returns
// ResourceToken and the token's Grant, after checking its MAC in constant time
// and its expiry against now (ErrExpired). A resource token is not a
// signature of the request: the caller must check that the grant covers
// what the request does, and that its permission still exists.
func (v *Verifier) Authenticate(verb, resourceType, resourceLink, date, authHeader string, now time.Time) (Access, Grant, error) {
	return v.verify(verb, resourceType, resourceLink, date, authHeader, true, now)
}

func (v *Verifier) verify(verb, resourceType, resourceLink, date, authHeader string, resource bool, now time.Time) (Access, Grant, error) {
	if authHeader == "" {
		return NoAccess, Grant{}, ErrMissing
	}
	if len(authHeader) > maxTokenLen {
		return NoAccess, Grant{}, fmt.Errorf("%w: the header is %d bytes long", ErrMalformed, len(authHeader))
	}
	st := v.pool.Get().(*verifyState)
	defer v.pool.Put(st)

	tok, err := appendUnescaped(st.tok[:0], authHeader)
	st.tok = tok[:0]
	if err != nil {
		return NoAccess, Grant{}, err
	}
	typ, ver, sig, err := splitToken(tok)
	if err != nil {
		return NoAccess, Grant{}, err
	}
	if resource && string(typ) == "resource" {
		if string(ver) != "1.0" {
			return NoAccess, Grant{}, fmt.Errorf("%w: version %q; want 1.0", ErrMalformed, ver)
		}
		g, err := v.verifyResource(st, sig, now)
		if err != nil {
			return NoAccess, Grant{}, err
		}
		return ResourceToken, g, nil
	}
	a, err := v.verifyMaster(st, typ, ver, sig, verb, resourceType, resourceLink, date, resource)
	return a, Grant{}, err
}

// verifyMaster checks a master-key token's fields.
func (v *Verifier) verifyMaster(st *verifyState, typ, ver, sig []byte, verb, resourceType, resourceLink, date string, resource bool) (Access, error) {
	if string(typ) != "master" {
		if resource {
			return NoAccess, fmt.Errorf("%w: type %q; this server accepts master-key tokens (type=master) and its own resource tokens (type=resource)", ErrUnsupported, typ)
		}
		return NoAccess, fmt.Errorf("%w: type %q; this server accepts only master-key tokens (type=master)", ErrUnsupported, typ)
	}
	if string(ver) != "1.0" {
		return NoAccess, fmt.Errorf("%w: version %q; want 1.0", ErrMalformed, ver)
	}
	if base64.StdEncoding.DecodedLen(len(sig)) > len(st.sig) {
		return NoAccess, fmt.Errorf("%w: the signature is %d characters long; want a base64 SHA-256 HMAC (44 characters)", ErrMalformed, len(sig))
	}
	n, err := base64.StdEncoding.Decode(st.sig[:], sig)
	if err != nil || n != sha256.Size {
		return NoAccess, fmt.Errorf("%w: the signature is not a base64 SHA-256 HMAC (44 characters)", ErrMalformed)
	}
	got := st.sig[:n]

	st.payload = appendStringToSign(st.payload[:0], verb, resourceType, resourceLink, date)
	if hmac.Equal(sum(st.primary, st.payload, &st.mac), got) {
		return ReadWrite, nil
	}
	if st.readOnly != nil && hmac.Equal(sum(st.readOnly, st.payload, &st.mac), got) {
		return ReadOnly, nil
	}
	return NoAccess, fmt.Errorf("%w; server used the following payload to sign: '%s'", ErrBadSignature, st.payload)
}

// sum returns HMAC(payload) in mac, using the keyed h.
func sum(h hash.Hash, payload []byte, mac *[sha256.Size]byte) []byte {
	h.Reset()
	h.Write(payload)
	return h.Sum(mac[:0])
}

// dateLayoutUTC is RFC 1123 with a "UTC" zone name, which some clients send.
const dateLayoutUTC = "Mon, 02 Jan 2006 15:04:05 UTC"

// ParseDate parses an x-ms-date (or Date) value in the form both SDKs send,
// http.TimeFormat ("Sat, 21 Nov 2026 07:52:06 GMT"), or with "UTC" in place
// of "GMT". Errors wrap ErrBadDate.
func ParseDate(date string) (time.Time, error) {
	if date == "" {
		return time.Time{}, fmt.Errorf("%w: the x-ms-date header is missing", ErrBadDate)
	}
	t, err := time.Parse(http.TimeFormat, date)
	if err != nil {
		var err2 error
		if t, err2 = time.Parse(dateLayoutUTC, date); err2 != nil {
			return time.Time{}, fmt.Errorf("%w: got %q", ErrBadDate, date)
		}
	}
	return t, nil
}

// CheckDate returns nil if date parses (see ParseDate) and lies within skew
// of now, boundaries included. now is the server's clock, passed in.
// Errors wrap ErrBadDate or ErrDateSkew.
func CheckDate(date string, now time.Time, skew time.Duration) error {
	t, err := ParseDate(date)
	if err != nil {
		return err
	}
	return CheckTime(t, now, skew)
}

// CheckTime returns nil if t lies within skew of now, boundaries included,
// and an error wrapping ErrDateSkew otherwise. It compares instants, never
// a difference of them: a Duration holds about 292 years, so now.Sub(t)
// saturates for dates such as the year 2400 or 9999 and its negation
// overflows.
func CheckTime(t, now time.Time, skew time.Duration) error {
	if !t.Before(now.Add(-skew)) && !t.After(now.Add(skew)) {
		return nil
	}
	var d time.Duration // for the message only; saturates far away
	if t.After(now) {
		d = t.Sub(now)
	} else {
		d = now.Sub(t)
	}
	return fmt.Errorf("%w: the request date %s is %s away from the server time %s; the allowed skew is %s",
		ErrDateSkew, t.UTC().Format(http.TimeFormat), d, now.UTC().Format(http.TimeFormat), skew)
}

// VerifyKey returns the Access of a bearer credential: the base64 primary
// or read-only key itself (surrounding whitespace ignored), as a scraper
// that cannot sign requests sends it. It returns ReadWrite for the primary
// key, ReadOnly for the read-only key and NoAccess otherwise. The decoded
// bytes are compared with both keys in constant time.
func (v *Verifier) VerifyKey(b64 string) Access {
	key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(b64))
	if err != nil || len(key) == 0 {
		return NoAccess
	}
	isPrimary := subtle.ConstantTimeCompare(key, v.primary) == 1
	isReadOnly := v.readOnly != nil && subtle.ConstantTimeCompare(key, v.readOnly) == 1
	switch {
	case isPrimary:
		return ReadWrite
	case isReadOnly:
		return ReadOnly
	}
	return NoAccess
}
