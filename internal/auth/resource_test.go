package auth

import (
	"bytes"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"
)

func sampleGrant(expires int64) Grant {
	return Grant{Permission: "AAAAAQAAAAIAAAAAAAAAAw==", Seq: 7, All: true, DB: "shop", Coll: "orders",
		CollRid: "AAAAAQAAAAI=", PartitionKey: `["alice"]`, Expires: expires}
}

func TestGrantEncoding(t *testing.T) {
	f := func(g Grant) {
		t.Helper()
		got, err := DecodeGrant(EncodeGrant(g))
		if err != nil || got != g {
			t.Fatalf("DecodeGrant(EncodeGrant(%+v)) = %+v, %v", g, got, err)
		}
	}
	f(sampleGrant(1_800_000_000))
	f(Grant{})
	f(Grant{Permission: "p", DB: "d", Coll: "c", Doc: "item 1", Expires: -5})
	f(Grant{Permission: "p", DB: "d", Coll: "c", PartitionKey: strings.Repeat("k", maxGrantKey), Seq: 1 << 62})

	bad := func(b []byte, wantSub string) {
		t.Helper()
		_, err := DecodeGrant(b)
		if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), wantSub) {
			t.Fatalf("DecodeGrant(%x) = %v, want ErrMalformed containing %q", b, err, wantSub)
		}
	}
	good := EncodeGrant(sampleGrant(1_800_000_000))
	bad(nil, "truncated")
	bad(good[:len(good)-1], "exceeds the remaining")
	bad(append(bytes.Clone(good), 0), "1 bytes after the grant")
	v2 := bytes.Clone(good)
	v2[0] = 2
	bad(v2, "unknown grant version 2")
	m := bytes.Clone(good)
	m[1] = 3
	bad(m, "unknown permission mode 3")
	// A field length beyond its bound fails before anything is allocated.
	long := EncodeGrant(Grant{PartitionKey: strings.Repeat("k", maxGrantKey+1)})
	bad(long, "the limit is 4096")
}

func TestResourceTokenVerify(t *testing.T) {
	primary := emulatorKey(t)
	v := NewVerifier(primary, nil)
	now := time.Unix(1_800_000_000, 0)
	g := sampleGrant(now.Unix() + 60)
	tok := v.MintResourceToken(g)
	if !strings.HasPrefix(tok, "type=resource&ver=1.0&sig=") {
		t.Fatalf("token %q", tok)
	}

	ok := func(header string, at time.Time) {
		t.Helper()
		a, got, err := v.Authenticate("GET", "docs", "dbs/shop/colls/orders/docs/1", refDate, header, at)
		if err != nil || a != ResourceToken || got != g {
			t.Fatalf("Authenticate(%q) = %v, %+v, %v", header, a, got, err)
		}
	}
	ok(tok, now)
	ok(url.QueryEscape(tok), now)                     // as the JS SDK sends it (encodeURIComponent)
	ok(url.QueryEscape(tok), now.Add(59*time.Second)) // the last valid second

	bad := func(header string, at time.Time, want error, wantSub string) {
		t.Helper()
		a, got, err := v.Authenticate("GET", "docs", "dbs/shop/colls/orders/docs/1", refDate, header, at)
		if a != NoAccess || got != (Grant{}) || !errors.Is(err, want) || !strings.Contains(err.Error(), wantSub) {
			t.Fatalf("Authenticate(%q) = %v, %+v, %v; want %v containing %q", header, a, got, err, want, wantSub)
		}
	}
	// Expiry is exclusive.
	bad(tok, now.Add(60*time.Second), ErrExpired, "valid until")
	bad(tok, now.Add(24*time.Hour), ErrExpired, "expired")
	// Verify, the master-key check, never takes a resource token.
	if a, err := v.Verify("GET", "docs", "dbs/shop/colls/orders", refDate, tok); a != NoAccess || !errors.Is(err, ErrUnsupported) {
		t.Fatalf("Verify(resource token) = %v, %v", a, err)
	}
	// Another server's token (another primary key) is refused.
	other := NewVerifier([]byte("another primary key, 32 bytes long!!"), nil)
	bad(other.MintResourceToken(g), now, ErrForged, "not issued by this server")
	// A master-key signature placed in a resource token is not a MAC of it.
	bad("type=resource&ver=1.0&sig="+Sign(primary, "GET", "docs", "dbs/shop/colls/orders", refDate), now, ErrMalformed, "no signature part")
	bad("type=resource&ver=2.0&sig=a.b", now, ErrMalformed, "version")
	bad("type=resource&ver=1.0&sig=%%%.abc", now, ErrMalformed, "percent escape")
	bad("type=resource&ver=1.0&sig=***.abc", now, ErrMalformed, "not base64url")
	bad("type=resource&ver=1.0&sig=abcd.abc", now, ErrMalformed, "SHA-256")

	// Every single-character change of the token is refused: the grant's
	// fields (mode, expiry, key, permission) cannot be edited.
	sig := tok[len("type=resource&ver=1.0&sig="):]
	alphabet := "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_."
	for i := 0; i < len(sig); i++ {
		for _, c := range []byte{alphabet[(strings.IndexByte(alphabet, sig[i])+1)%len(alphabet)], alphabet[(strings.IndexByte(alphabet, sig[i])+7)%len(alphabet)]} {
			mut := []byte(sig)
			mut[i] = c
			a, _, err := v.Authenticate("GET", "docs", "", refDate, "type=resource&ver=1.0&sig="+string(mut), now)
			if err == nil || a != NoAccess {
				t.Fatalf("a token changed at offset %d (%q→%q) was accepted", i, sig[i], c)
			}
		}
	}
	// A token with the mode changed to All and a re-encoded grant, but the
	// old MAC, is refused.
	ro := g
	ro.All = false
	roTok := v.MintResourceToken(ro)
	dot := strings.LastIndexByte(roTok, '.')
	allGrant := v.MintResourceToken(g)
	forged := roTok[:len("type=resource&ver=1.0&sig=")] + allGrant[len("type=resource&ver=1.0&sig="):strings.LastIndexByte(allGrant, '.')] + roTok[dot:]
	bad(forged, now, ErrForged, "altered")
}

// FuzzResourceToken feeds arbitrary headers to Authenticate: it never
// panics, and what it accepts is exactly a token this verifier minted.
func FuzzResourceToken(f *testing.F) {
	key, _ := DecodeKey(EmulatorKey)
	v := NewVerifier(key, nil)
	now := time.Unix(1_800_000_000, 0)
	tok := v.MintResourceToken(sampleGrant(now.Unix() + 60))
	f.Add(tok)
	f.Add(url.QueryEscape(tok))
	f.Add("type=resource&ver=1.0&sig=a.b")
	f.Add("type=resource&ver=1.0&sig=" + strings.Repeat("A", 100) + "." + strings.Repeat("B", 43))
	f.Add(Header(Sign(key, "GET", "dbs", "dbs/testdb", refDate)))
	f.Fuzz(func(t *testing.T, h string) {
		a, g, err := v.Authenticate("GET", "dbs", "dbs/testdb", refDate, h, now)
		if err != nil {
			if a != NoAccess || g != (Grant{}) {
				t.Fatalf("failure with access %v and grant %+v", a, g)
			}
			return
		}
		if a != ResourceToken {
			return
		}
		_, _, sig, err := ParseHeader(h)
		if err != nil {
			t.Fatalf("accepted %q, which does not parse: %v", h, err)
		}
		if want := v.MintResourceToken(g)[len(tokenPrefix):]; sig != want {
			t.Fatalf("accepted %q, whose signature field is not the token of its grant %q", h, want)
		}
	})
}

// FuzzDecodeGrant checks that decoding never panics and that what decodes
// encodes to bytes that decode to the same grant.
func FuzzDecodeGrant(f *testing.F) {
	f.Add(EncodeGrant(sampleGrant(1_800_000_000)))
	f.Add(EncodeGrant(Grant{Doc: "x"}))
	f.Add([]byte{1, 2})
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := DecodeGrant(b)
		if err != nil {
			return
		}
		if got, err := DecodeGrant(EncodeGrant(g)); err != nil || got != g {
			t.Fatalf("DecodeGrant(%x) = %+v, which re-decodes as %+v, %v", b, g, got, err)
		}
	})
}
