package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/parsecdb/parsec/internal/binfmt"
)

// Errors of resource tokens, besides ErrMalformed.
var (
	// ErrExpired: a resource token whose expiry time has passed.
	ErrExpired = errors.New("the resource token has expired")
	// ErrForged: a resource token whose MAC does not match its grant.
	ErrForged = errors.New("the resource token was not issued by this server, or was altered")
)

// Grant is what a resource token allows: one permission's mode and
// resource, until an expiry time. The server mints it from a stored
// permission (MintResourceToken) and reads it back from each request's
// Authorization header (Authenticate), so no lookup is needed to know what
// a token covers; whether the permission still exists is the caller's to
// check, by Permission and Seq.
type Grant struct {
	// Permission is the rid of the permission the token was minted from,
	// and Seq the permission's version (its etag's sequence number): a
	// replaced or deleted permission no longer has this pair.
	Permission string
	Seq        uint64
	// All is the mode All (read and write); false is the mode Read.
	All bool
	// DB and Coll name the container the permission covers, and CollRid
	// is its rid when the permission was written, so that a container
	// deleted and created again under the same name is not covered.
	DB, Coll, CollRid string
	// Doc, when set, narrows the grant to that one item.
	Doc string
	// PartitionKey, when set, narrows the grant to one logical partition:
	// the canonical JSON array text of the key (epk.Key.String).
	PartitionKey string
	// Expires is the end of the token's validity, in Unix seconds
	// (exclusive).
	Expires int64
}

// Resource tokens:
//
//	type=resource&ver=1.0&sig=<base64url(grant)>.<base64url(mac)>
//
// grant (stable, version 1):
//
//	version:1 mode:1 expires:8 (big-endian Unix seconds) seq:uvarint
//	permission:str db:str coll:str collRid:str doc:str partitionKey:str
//
// where str is a uvarint length and the bytes, and mode is 1 (Read) or 2
// (All). mac is HMAC-SHA256 of the grant bytes under a key derived from the
// primary master key (tokenKeyLabel), so a token is never a master-key
// signature and rotating the primary key revokes every token. base64url
// without padding holds no '&' or '=', so the token survives the header's
// field split whether or not the client percent-encodes it.
const (
	grantVersion  = 1
	modeRead      = 1
	modeAll       = 2
	tokenPrefix   = "type=resource&ver=1.0&sig="
	tokenKeyLabel = "parsec resource token key v1"
)

// Bounds of a grant's fields, which the server checks before minting and
// the parser checks before allocating (maxTokenLen bounds the whole).
const (
	maxGrantName = 1024 // ids: 255 bytes for databases and containers, 1,023 for items
	maxGrantKey  = 4096 // a partition key's JSON text
)

// tokenEncoding decodes a token's parts strictly: padding bits must be
// zero, so each token has exactly one spelling.
var tokenEncoding = base64.RawURLEncoding.Strict()

// errBadGrant is wrapped by every grant decoding failure.
var errBadGrant = fmt.Errorf("%w: the resource token is not valid", ErrMalformed)

// EncodeGrant returns the stable binary encoding of g.
func EncodeGrant(g Grant) []byte {
	b := make([]byte, 0, 32+len(g.Permission)+len(g.DB)+len(g.Coll)+len(g.CollRid)+len(g.Doc)+len(g.PartitionKey))
	b = append(b, grantVersion)
	if g.All {
		b = append(b, modeAll)
	} else {
		b = append(b, modeRead)
	}
	b = binary.BigEndian.AppendUint64(b, uint64(g.Expires))
	b = binary.AppendUvarint(b, g.Seq)
	for _, s := range [...]string{g.Permission, g.DB, g.Coll, g.CollRid, g.Doc, g.PartitionKey} {
		b = binfmt.AppendString(b, s)
	}
	return b
}

// DecodeGrant decodes EncodeGrant's output. Errors wrap ErrMalformed.
func DecodeGrant(b []byte) (Grant, error) {
	var g Grant
	r := binfmt.NewReader(b, errBadGrant)
	if v := r.Byte(); v != grantVersion && r.Err() == nil {
		r.Fail("unknown grant version %d", v)
	}
	switch m := r.Byte(); m {
	case modeRead:
	case modeAll:
		g.All = true
	default:
		r.Fail("unknown permission mode %d", m)
	}
	g.Expires = int64(binary.BigEndian.Uint64(fixed8(&r)))
	g.Seq = r.Uvarint()
	// The fields are substrings of one copy of the input: one allocation.
	var all string
	str := func(max int) string {
		n := r.Uvarint()
		if n > uint64(max) {
			r.Fail("a field of %d bytes; the limit is %d", n, max)
			return ""
		}
		pos := len(b) - r.Len()
		if len(r.Take(n)) == 0 || r.Err() != nil {
			return ""
		}
		if all == "" {
			all = string(b)
		}
		return all[pos : pos+int(n)]
	}
	g.Permission = str(maxGrantName)
	g.DB = str(maxGrantName)
	g.Coll = str(maxGrantName)
	g.CollRid = str(maxGrantName)
	g.Doc = str(maxGrantName)
	g.PartitionKey = str(maxGrantKey)
	if r.Err() == nil && r.Len() != 0 {
		r.Fail("%d bytes after the grant", r.Len())
	}
	if r.Err() != nil {
		return Grant{}, r.Err()
	}
	return g, nil
}

// fixed8 reads 8 bytes, or returns 8 zero bytes once r has failed.
func fixed8(r *binfmt.Reader) []byte {
	if b := r.Take(8); len(b) == 8 {
		return b
	}
	return make([]byte, 8)
}

// tokenKey derives the key that signs resource tokens from the primary key.
func tokenKey(primary []byte) []byte {
	m := hmac.New(sha256.New, primary)
	m.Write([]byte(tokenKeyLabel))
	return m.Sum(nil)
}

// MintResourceToken returns the resource token of g, as a permission's
// _token shows it (not percent-encoded; clients encode it when they send it).
func (v *Verifier) MintResourceToken(g Grant) string {
	grant := EncodeGrant(g)
	m := hmac.New(sha256.New, v.tokenKey)
	m.Write(grant)
	mac := m.Sum(nil)
	var sb strings.Builder
	sb.Grow(len(tokenPrefix) + base64.RawURLEncoding.EncodedLen(len(grant)) + 1 + base64.RawURLEncoding.EncodedLen(len(mac)))
	sb.WriteString(tokenPrefix)
	sb.WriteString(base64.RawURLEncoding.EncodeToString(grant))
	sb.WriteByte('.')
	sb.WriteString(base64.RawURLEncoding.EncodeToString(mac))
	return sb.String()
}

// verifyResource checks the sig field of a resource token and returns its
// grant: the MAC is compared in constant time before the grant is decoded,
// and a grant whose expiry is not after now is ErrExpired.
func (v *Verifier) verifyResource(st *verifyState, sig []byte, now time.Time) (Grant, error) {
	dot := indexByte(sig, '.')
	if dot < 0 {
		return Grant{}, fmt.Errorf("%w: the resource token has no signature part", ErrMalformed)
	}
	enc, encMac := sig[:dot], sig[dot+1:]
	// The decoder skips line breaks: a token is refused unless it is
	// exactly the text that was minted.
	if !isBase64URL(enc) || !isBase64URL(encMac) {
		return Grant{}, fmt.Errorf("%w: the resource token is not base64url: it holds other characters", ErrMalformed)
	}
	grant := slices.Grow(st.grant[:0], base64.RawURLEncoding.DecodedLen(len(enc)))[:base64.RawURLEncoding.DecodedLen(len(enc))]
	st.grant = grant[:0]
	n, err := tokenEncoding.Decode(grant, enc)
	if err != nil {
		return Grant{}, fmt.Errorf("%w: the resource token's grant is not base64url", ErrMalformed)
	}
	grant = grant[:n]
	if base64.RawURLEncoding.DecodedLen(len(encMac)) > len(st.sig) {
		return Grant{}, fmt.Errorf("%w: the resource token's signature is %d characters long; want 43", ErrMalformed, len(encMac))
	}
	n, err = tokenEncoding.Decode(st.sig[:], encMac)
	if err != nil || n != sha256.Size {
		return Grant{}, fmt.Errorf("%w: the resource token's signature is not a base64url SHA-256 HMAC", ErrMalformed)
	}
	if !hmac.Equal(sum(st.token, grant, &st.mac), st.sig[:n]) {
		return Grant{}, ErrForged
	}
	g, err := DecodeGrant(grant)
	if err != nil {
		return Grant{}, err
	}
	if now.Unix() >= g.Expires {
		return Grant{}, fmt.Errorf("%w: it was valid until %s; read the permission again for a new token",
			ErrExpired, time.Unix(g.Expires, 0).UTC().Format(time.RFC3339))
	}
	return g, nil
}

// isBase64URL reports whether b holds only characters of the base64url
// alphabet (no padding, no line breaks).
func isBase64URL(b []byte) bool {
	for _, c := range b {
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
