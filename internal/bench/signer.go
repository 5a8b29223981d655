package bench

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"hash"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/parsecdb/parsec/internal/auth"
)

// Resource is one signable request target: a verb and the resource type and
// link the signature covers (see auth.Resource). It caches its last
// signature: x-ms-date has a resolution of one second, so every request to
// the same resource within the same second carries the same date and
// Authorization header, and only the first one pays for the HMAC.
//
// A Resource is safe for concurrent use: the cache is one atomic pointer,
// replaced (never mutated) on a miss. Two goroutines that miss at once both
// sign and one of the equal results wins.
type Resource struct {
	Verb, Type, Link string
	cache            atomic.Pointer[signature]
}

// signature is a Resource's cached date and Authorization header for one
// second (Unix time).
type signature struct {
	sec        int64
	date, auth string
}

// NewResource returns the Resource for verb on the request path (for example
// "/dbs/d/colls/c/docs"), with the type and link the server will derive from
// that path.
func NewResource(verb, path string) *Resource {
	typ, link := auth.Resource(path)
	return &Resource{Verb: verb, Type: typ, Link: link}
}

// Signer computes master-key signatures with a decoded key. It keeps a keyed
// HMAC state and scratch buffers, so it is not safe for concurrent use: give
// each worker its own (the Resources they sign may be shared).
type Signer struct {
	mac     hash.Hash
	payload []byte
	sum     []byte
	b64     []byte
	// The date strings of the second last signed.
	sec             int64
	date, dateLower string
	// signs counts cache misses (HMAC computations), for tests.
	signs int
}

// NewSigner returns a Signer for the decoded master key (see auth.DecodeKey).
func NewSigner(key []byte) *Signer {
	return &Signer{
		mac:     hmac.New(sha256.New, key),
		payload: make([]byte, 0, 256),
		sum:     make([]byte, 0, sha256.Size),
		b64:     make([]byte, base64.StdEncoding.EncodedLen(sha256.Size)),
		sec:     -1 << 63,
	}
}

// Sign returns the x-ms-date and Authorization header values for a request
// to r at time now. Within one second of now's Unix time, the same Resource
// gets the same strings back without an HMAC or an allocation.
func (s *Signer) Sign(r *Resource, now time.Time) (date, authorization string) {
	sec := now.Unix()
	if c := r.cache.Load(); c != nil && c.sec == sec {
		return c.date, c.auth
	}
	if sec != s.sec {
		s.sec = sec
		s.date = time.Unix(sec, 0).UTC().Format(http.TimeFormat)
		s.dateLower = strings.ToLower(s.date)
	}
	// The string to sign, as auth.StringToSign builds it: lower(verb),
	// lower(type), the link as is, lower(date).
	p := append(s.payload[:0], strings.ToLower(r.Verb)...)
	p = append(p, '\n')
	p = append(p, strings.ToLower(r.Type)...)
	p = append(p, '\n')
	p = append(p, r.Link...)
	p = append(p, '\n')
	p = append(p, s.dateLower...)
	p = append(p, '\n', '\n')
	s.payload = p
	s.mac.Reset()
	s.mac.Write(p)
	s.sum = s.mac.Sum(s.sum[:0])
	base64.StdEncoding.Encode(s.b64, s.sum)
	c := &signature{sec: sec, date: s.date, auth: auth.Header(string(s.b64))}
	r.cache.Store(c)
	s.signs++
	return c.date, c.auth
}
