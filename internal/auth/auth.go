package auth

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
	"unicode/utf8"
)

// EmulatorKey is the well-known master key of the Cosmos DB emulator.
const EmulatorKey = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="

// DecodeKey decodes a base64 master key (standard alphabet, padded, as the
// portal and the emulator show it; surrounding whitespace is ignored). The
// key must not be empty.
func DecodeKey(b64 string) ([]byte, error) {
	s := strings.TrimSpace(b64)
	if s == "" {
		return nil, errors.New("cannot decode master key: it is empty")
	}
	key, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("cannot decode master key: it is not valid base64: %w", err)
	}
	if len(key) == 0 {
		return nil, errors.New("cannot decode master key: it decodes to no bytes")
	}
	return key, nil
}

// StringToSign returns the text that a master-key signature covers:
//
//	lower(verb) \n lower(resourceType) \n resourceLink \n lower(date) \n \n
//
// resourceLink keeps its case. The Cosmos service quotes this payload in its
// 401 message so that clients can compare.
func StringToSign(verb, resourceType, resourceLink, date string) string {
	return string(appendStringToSign(nil, verb, resourceType, resourceLink, date))
}

func appendStringToSign(dst []byte, verb, resourceType, resourceLink, date string) []byte {
	dst = appendLower(dst, verb)
	dst = append(dst, '\n')
	dst = appendLower(dst, resourceType)
	dst = append(dst, '\n')
	dst = append(dst, resourceLink...)
	dst = append(dst, '\n')
	dst = appendLower(dst, date)
	return append(dst, '\n', '\n')
}

// appendLower appends strings.ToLower(s) without allocating for ASCII input
// (the SDKs lower-case with Go strings.ToLower and JS toLowerCase).
func appendLower(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return append(dst, strings.ToLower(s)...)
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// Sign returns the base64 HMAC-SHA256 master-key signature of the request,
// computed with the decoded key over StringToSign(verb, resourceType,
// resourceLink, date).
func Sign(key []byte, verb, resourceType, resourceLink, date string) string {
	m := hmac.New(sha256.New, key)
	m.Write(appendStringToSign(nil, verb, resourceType, resourceLink, date))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// Header returns the Authorization header value for a master-key signature:
// url.QueryEscape("type=master&ver=1.0&sig=" + sig), as the Go SDK sends it
// (the JS SDK's encodeURIComponent gives the same text for base64).
func Header(sig string) string {
	return url.QueryEscape("type=master&ver=1.0&sig=" + sig)
}

// ParseHeader splits an Authorization header value into its type, version
// and signature. The value is percent-decoded first if it contains '%'
// (master and resource tokens arrive URL-encoded, AAD tokens do not); '+' is
// kept as is, since it is a base64 character. The fields are separated by
// '&' and may come in any order; unknown fields are ignored. Errors wrap
// ErrMissing (empty header) or ErrMalformed.
func ParseHeader(h string) (typ, ver, sig string, err error) {
	if h == "" {
		return "", "", "", ErrMissing
	}
	b, err := appendUnescaped(nil, h)
	if err != nil {
		return "", "", "", err
	}
	t, v, s, err := splitToken(b)
	if err != nil {
		return "", "", "", err
	}
	return string(t), string(v), string(s), nil
}

// appendUnescaped appends h to dst, decoding %XX escapes if h contains '%'.
func appendUnescaped(dst []byte, h string) ([]byte, error) {
	if strings.IndexByte(h, '%') < 0 {
		return append(dst, h...), nil
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if c != '%' {
			dst = append(dst, c)
			continue
		}
		if i+2 >= len(h) {
			return dst, fmt.Errorf("%w: bad percent escape at offset %d", ErrMalformed, i)
		}
		hi, ok1 := unhex(h[i+1])
		lo, ok2 := unhex(h[i+2])
		if !ok1 || !ok2 {
			return dst, fmt.Errorf("%w: bad percent escape %q at offset %d", ErrMalformed, h[i:i+3], i)
		}
		dst = append(dst, hi<<4|lo)
		i += 2
	}
	return dst, nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// splitToken splits a decoded token "type=..&ver=..&sig=..". The results
// alias tok.
func splitToken(tok []byte) (typ, ver, sig []byte, err error) {
	var haveType, haveVer, haveSig bool
	for len(tok) > 0 {
		field := tok
		if i := indexByte(tok, '&'); i >= 0 {
			field, tok = tok[:i], tok[i+1:]
		} else {
			tok = nil
		}
		eq := indexByte(field, '=')
		if eq < 0 {
			continue
		}
		k, v := field[:eq], field[eq+1:]
		switch string(k) { // no allocation: the conversion is only compared
		case "type":
			typ, haveType = v, true
		case "ver":
			ver, haveVer = v, true
		case "sig":
			sig, haveSig = v, true
		}
	}
	switch {
	case !haveType:
		return nil, nil, nil, fmt.Errorf("%w: the authorization token has no type field", ErrMalformed)
	case !haveVer:
		return nil, nil, nil, fmt.Errorf("%w: the authorization token has no ver field", ErrMalformed)
	case !haveSig || len(sig) == 0:
		return nil, nil, nil, fmt.Errorf("%w: the authorization token has no sig field", ErrMalformed)
	}
	return typ, ver, sig, nil
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

// Resource derives the resourceType and resourceLink that a client signed
// from the request path (already percent-decoded, as Go's r.URL.Path is):
// leading and trailing '/' are stripped and the rest split into segments.
// No segments is the account: ("", ""). With an odd count the last segment
// is the type and the others form the link (a feed or create: /dbs/d/colls →
// "colls", "dbs/d"); with an even count the link is the whole path and the
// type the second-last segment (an item: /dbs/d → "dbs", "dbs/d").
//
// Links that do not start with "dbs/" are rid-based (offers) and are
// lower-cased, as both SDKs sign them; /offers alone gives ("offers", "").
// The results alias path unless lower-casing changed them.
func Resource(path string) (resourceType, resourceLink string) {
	p := strings.Trim(path, "/")
	if p == "" {
		return "", ""
	}
	n := strings.Count(p, "/") + 1
	last := strings.LastIndexByte(p, '/')
	if n%2 == 1 {
		resourceType = p[last+1:]
		if last >= 0 {
			resourceLink = p[:last]
		}
	} else {
		resourceLink = p
		prev := strings.LastIndexByte(p[:last], '/')
		resourceType = p[prev+1 : last]
	}
	if resourceType == "operations" && strings.HasSuffix(p, "/operations/partitionkeydelete") && strings.Count(p, "/") == 5 {
		// The partition-key delete is signed as an operation on its
		// container: POST /dbs/d/colls/c/operations/partitionkeydelete is
		// ("colls", "dbs/d/colls/c").
		return "colls", p[:len(p)-len("/operations/partitionkeydelete")]
	}
	if resourceLink != "" && !strings.HasPrefix(resourceLink, "dbs/") {
		// A rid-addressed resource is signed with its rid alone, lowercased:
		// both SDKs sign GET/PUT /offers/AbC with the link "abc".
		resourceLink = strings.ToLower(resourceLink[strings.LastIndexByte(resourceLink, '/')+1:])
	}
	return resourceType, resourceLink
}

// RidLink is Resource for a path that addresses resources by resource id
// (/dbs/{rid}/colls/{rid}/docs/{rid}, the `_self` links): the SDKs sign it
// with the last resource id of the link alone, lower-cased, as they sign
// offers (GET /dbs/AbCdAA==/colls/AbCdAIxyZ90= is ("colls", "abcdaixyz90=")).
func RidLink(path string) (resourceType, resourceLink string) {
	resourceType, resourceLink = Resource(path)
	return resourceType, strings.ToLower(resourceLink[strings.LastIndexByte(resourceLink, '/')+1:])
}

// SignRequest signs req with the master key as the SDKs do: it sets
// x-ms-date to now (RFC 1123, GMT) and the Authorization header over req's
// method and path (see Resource). Headers added afterwards are not signed,
// as none of them are in the Cosmos scheme.
func SignRequest(req *http.Request, key []byte, now time.Time) {
	date := now.UTC().Format(http.TimeFormat)
	typ, link := Resource(req.URL.Path)
	req.Header.Set("x-ms-date", date)
	req.Header.Set("Authorization", Header(Sign(key, req.Method, typ, link, date)))
}
