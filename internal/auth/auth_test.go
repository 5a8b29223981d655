package auth

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

const refDate = "Thu, 27 Apr 2017 00:51:12 GMT"

func emulatorKey(t testing.TB) []byte {
	t.Helper()
	k, err := DecodeKey(EmulatorKey)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// Reference §1 vectors: the emulator key and the date of the Go SDK's
// shared_key_credential_test.go.
func TestSignReferenceVectors(t *testing.T) {
	key := emulatorKey(t)
	if len(key) != 64 {
		t.Fatalf("emulator key is %d bytes, want 64", len(key))
	}
	f := func(verb, rt, rl, want string) {
		t.Helper()
		if got := Sign(key, verb, rt, rl, refDate); got != want {
			t.Fatalf("Sign(%s, %q, %q) = %s, want %s", verb, rt, rl, got, want)
		}
	}
	f("GET", "dbs", "dbs/testdb", "7AMHA4cc5jwSUmI/2jieU+QBY0EdhgZAyXiOAu+MEzs=")
	f("GET", "", "", "gFB1bRB/PLJTG3bCgMuoVgNzOyFvZAamzEtLuSITjRc=")
	f("POST", "docs", "dbs/db1/colls/c1", "pTGQzKdYvdxaLYLD3NjExGL/mezZdIeS3Mak7aIS7VA=")
	f("GET", "docs", "dbs/db1/colls/c1/docs/item 1", "Pk/EjXWanrHt3/Sfj60XOZkH9FLWTA6rsczWV75MQmw=")
	// Verb, type and date are lower-cased, the link is not.
	f("get", "DBS", "dbs/testdb", "7AMHA4cc5jwSUmI/2jieU+QBY0EdhgZAyXiOAu+MEzs=")
	if Sign(key, "GET", "dbs", "dbs/TestDB", refDate) == "7AMHA4cc5jwSUmI/2jieU+QBY0EdhgZAyXiOAu+MEzs=" {
		t.Fatal("the resource link must keep its case")
	}
	if got := StringToSign("GET", "Docs", "dbs/D/colls/C", refDate); got != "get\ndocs\ndbs/D/colls/C\nthu, 27 apr 2017 00:51:12 gmt\n\n" {
		t.Fatalf("StringToSign = %q", got)
	}
}

func TestHeader(t *testing.T) {
	want := "type%3Dmaster%26ver%3D1.0%26sig%3D7AMHA4cc5jwSUmI%2F2jieU%2BQBY0EdhgZAyXiOAu%2BMEzs%3D"
	if got := Header("7AMHA4cc5jwSUmI/2jieU+QBY0EdhgZAyXiOAu+MEzs="); got != want {
		t.Fatalf("Header = %s, want %s", got, want)
	}
}

func TestParseHeader(t *testing.T) {
	f := func(h, wantType, wantVer, wantSig string) {
		t.Helper()
		typ, ver, sig, err := ParseHeader(h)
		if err != nil {
			t.Fatalf("ParseHeader(%q): %v", h, err)
		}
		if typ != wantType || ver != wantVer || sig != wantSig {
			t.Fatalf("ParseHeader(%q) = %q %q %q", h, typ, ver, sig)
		}
	}
	sig := "7AMHA4cc5jwSUmI/2jieU+QBY0EdhgZAyXiOAu+MEzs="
	f(Header(sig), "master", "1.0", sig)
	f("type=master&ver=1.0&sig="+sig, "master", "1.0", sig) // not encoded: '+' kept
	f("sig="+sig+"&ver=1.0&type=master", "master", "1.0", sig)
	f("type=aad&ver=1.0&sig=eyJhbGciOiJIUzI1NiJ9.e30.abc-_", "aad", "1.0", "eyJhbGciOiJIUzI1NiJ9.e30.abc-_")
	f("type%3dmaster%26ver%3d1.0%26sig%3dabc", "master", "1.0", "abc") // lower-case hex
	f("type=master&ver=1.0&extra=1&sig=x", "master", "1.0", "x")

	e := func(h string, want error, wantSub string) {
		t.Helper()
		_, _, _, err := ParseHeader(h)
		if !errors.Is(err, want) || !strings.Contains(err.Error(), wantSub) {
			t.Fatalf("ParseHeader(%q) error = %v, want %v containing %q", h, err, want, wantSub)
		}
	}
	e("", ErrMissing, "missing")
	e("ver=1.0&sig=abc", ErrMalformed, "no type field")
	e("type=master&sig=abc", ErrMalformed, "no ver field")
	e("type=master&ver=1.0", ErrMalformed, "no sig field")
	e("type=master&ver=1.0&sig=", ErrMalformed, "no sig field")
	e("garbage", ErrMalformed, "no type field")
	e("type%3Dmaster%2", ErrMalformed, "bad percent escape")
	e("type%3Dmaster%zz", ErrMalformed, `bad percent escape "%zz"`)
}

func TestResource(t *testing.T) {
	f := func(path, wantType, wantLink string) {
		t.Helper()
		rt, rl := Resource(path)
		if rt != wantType || rl != wantLink {
			t.Fatalf("Resource(%q) = (%q, %q), want (%q, %q)", path, rt, rl, wantType, wantLink)
		}
	}
	f("/dbs", "dbs", "")
	f("/dbs/testdb", "dbs", "dbs/testdb")
	f("/dbs/db1/colls/c1/docs", "docs", "dbs/db1/colls/c1")
	f("/dbs/db1/colls/c1/docs/item 1", "docs", "dbs/db1/colls/c1/docs/item 1")
	f("/offers", "offers", "")
	f("/offers/AbC", "offers", "abc") // rid-addressed: the rid alone, lowercased, as both SDKs sign it
	f("/", "", "")
	f("", "", "")
	f("/dbs/d/colls/c/pkranges", "pkranges", "dbs/d/colls/c")
	f("/dbs/d/colls/c/pkranges/0", "pkranges", "dbs/d/colls/c/pkranges/0")
	f("dbs/MyDb/colls/MyColl/", "colls", "dbs/MyDb/colls/MyColl") // case kept, slashes trimmed
	f("/dbs/d/colls", "colls", "dbs/d")
	f("/dbs/d/colls/c/sprocs/Sp1", "sprocs", "dbs/d/colls/c/sprocs/Sp1")

	// The derived values reproduce the reference signatures.
	key := emulatorKey(t)
	rt, rl := Resource("/dbs/db1/colls/c1/docs/item 1")
	if got := Sign(key, "GET", rt, rl, refDate); got != "Pk/EjXWanrHt3/Sfj60XOZkH9FLWTA6rsczWV75MQmw=" {
		t.Fatalf("sig = %s", got)
	}
	rt, rl = Resource("/")
	if got := Sign(key, "GET", rt, rl, refDate); got != "gFB1bRB/PLJTG3bCgMuoVgNzOyFvZAamzEtLuSITjRc=" {
		t.Fatalf("account sig = %s", got)
	}
}

func TestDecodeKey(t *testing.T) {
	if k, err := DecodeKey("  " + EmulatorKey + "\n"); err != nil || len(k) != 64 {
		t.Fatalf("DecodeKey with whitespace: %d bytes, %v", len(k), err)
	}
	for _, bad := range []string{"", "   ", "not base64!", "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw="} {
		if _, err := DecodeKey(bad); err == nil {
			t.Errorf("DecodeKey(%q) succeeded", bad)
		}
	}
}

func TestVerify(t *testing.T) {
	primary := emulatorKey(t)
	readOnly, err := DecodeKey("Zm9vYmFyYmF6cXV4cmVhZG9ubHlrZXlrZXlrZXlrZXlrZXlrZXlrZXlrZXlrZXlrZXk=")
	if err != nil {
		t.Fatal(err)
	}
	other, _ := DecodeKey("b3RoZXJrZXk=")
	v := NewVerifier(primary, readOnly)

	req := func(key []byte, verb, rt, rl string) string {
		return Header(Sign(key, verb, rt, rl, refDate))
	}
	ok := func(h, verb, rt, rl string, want Access) {
		t.Helper()
		got, err := v.Verify(verb, rt, rl, refDate, h)
		if err != nil || got != want {
			t.Fatalf("Verify(%s %s %s) = %v, %v; want %v", verb, rt, rl, got, err, want)
		}
	}
	ok(req(primary, "GET", "dbs", "dbs/testdb"), "GET", "dbs", "dbs/testdb", ReadWrite)
	ok(req(readOnly, "GET", "dbs", "dbs/testdb"), "GET", "dbs", "dbs/testdb", ReadOnly)
	ok(req(primary, "POST", "docs", "dbs/db1/colls/c1"), "post", "DOCS", "dbs/db1/colls/c1", ReadWrite)
	// The reference header, byte for byte.
	ok("type%3Dmaster%26ver%3D1.0%26sig%3D7AMHA4cc5jwSUmI%2F2jieU%2BQBY0EdhgZAyXiOAu%2BMEzs%3D", "GET", "dbs", "dbs/testdb", ReadWrite)
	// Not URL-encoded (no '%'): accepted as is.
	ok("type=master&ver=1.0&sig=7AMHA4cc5jwSUmI/2jieU+QBY0EdhgZAyXiOAu+MEzs=", "GET", "dbs", "dbs/testdb", ReadWrite)
	if !ReadWrite.CanWrite() || ReadOnly.CanWrite() || NoAccess.CanWrite() {
		t.Fatal("CanWrite")
	}

	bad := func(h, verb, rt, rl, date string, want error, wantSub string) {
		t.Helper()
		got, err := v.Verify(verb, rt, rl, date, h)
		if got != NoAccess || !errors.Is(err, want) || !strings.Contains(err.Error(), wantSub) {
			t.Fatalf("Verify(%q, %s %s %s) = %v, %v; want %v containing %q", h, verb, rt, rl, got, err, want, wantSub)
		}
	}
	good := req(primary, "GET", "dbs", "dbs/testdb")
	// Tampered request fields.
	bad(good, "DELETE", "dbs", "dbs/testdb", refDate, ErrBadSignature, "server used the following payload to sign: 'delete\ndbs\ndbs/testdb\nthu, 27 apr 2017 00:51:12 gmt\n\n'")
	bad(good, "GET", "colls", "dbs/testdb", refDate, ErrBadSignature, "payload")
	bad(good, "GET", "dbs", "dbs/otherdb", refDate, ErrBadSignature, "payload")
	bad(good, "GET", "dbs", "dbs/TestDB", refDate, ErrBadSignature, "payload")
	bad(good, "GET", "dbs", "dbs/testdb", "Thu, 27 Apr 2017 00:51:13 GMT", ErrBadSignature, "payload")
	// Wrong key.
	bad(req(other, "GET", "dbs", "dbs/testdb"), "GET", "dbs", "dbs/testdb", refDate, ErrBadSignature, "wrong key")
	// Tampered signatures.
	sig := Sign(primary, "GET", "dbs", "dbs/testdb", refDate)
	flipped := []byte(sig)
	flipped[5] ^= 1
	bad(Header(string(flipped)), "GET", "dbs", "dbs/testdb", refDate, ErrBadSignature, "")
	bad(Header(sig[:43]+"A"), "GET", "dbs", "dbs/testdb", refDate, ErrMalformed, "")
	bad(Header(sig[:40]), "GET", "dbs", "dbs/testdb", refDate, ErrMalformed, "not a base64 SHA-256 HMAC")
	bad(Header("!!!!"+sig[4:]), "GET", "dbs", "dbs/testdb", refDate, ErrMalformed, "not a base64")
	bad(Header(sig+sig+sig), "GET", "dbs", "dbs/testdb", refDate, ErrMalformed, "characters long")
	bad(Header("c2lnbmF0dXJl"), "GET", "dbs", "dbs/testdb", refDate, ErrMalformed, "")
	// Header shape.
	bad("", "GET", "dbs", "dbs/testdb", refDate, ErrMissing, "missing")
	bad("type%3Dmaster%26ver%3D2.0%26sig%3D"+sig, "GET", "dbs", "dbs/testdb", refDate, ErrMalformed, `version "2.0"`)
	bad("type=aad&ver=1.0&sig=eyJ0eXAiOiJKV1QifQ.e30.sig", "GET", "dbs", "dbs/testdb", refDate, ErrUnsupported, `type "aad"`)
	bad(strings.Replace(Header(sig), "master", "resource", 1), "GET", "dbs", "dbs/testdb", refDate, ErrUnsupported, "only master-key tokens")
	bad("type%3Dmaster%26ver", "GET", "dbs", "dbs/testdb", refDate, ErrMalformed, "no ver field")
	bad("%%%", "GET", "dbs", "dbs/testdb", refDate, ErrMalformed, "percent escape")
	bad(strings.Repeat("a", maxTokenLen+1), "GET", "dbs", "dbs/testdb", refDate, ErrMalformed, "bytes long")

	// Without a read-only key, a read-only signature fails.
	v2 := NewVerifier(primary, nil)
	if a, err := v2.Verify("GET", "dbs", "dbs/testdb", refDate, req(readOnly, "GET", "dbs", "dbs/testdb")); a != NoAccess || !errors.Is(err, ErrBadSignature) {
		t.Fatalf("read-only key accepted without one configured: %v %v", a, err)
	}
}

func TestVerifyConcurrent(t *testing.T) {
	primary := emulatorKey(t)
	v := NewVerifier(primary, []byte("ro"))
	h := Header(Sign(primary, "GET", "docs", "dbs/d/colls/c/docs/x", refDate))
	hro := Header(Sign([]byte("ro"), "GET", "docs", "dbs/d/colls/c/docs/x", refDate))
	done := make(chan error)
	for g := 0; g < 8; g++ {
		go func() {
			var err error
			for i := 0; i < 500 && err == nil; i++ {
				if a, e := v.Verify("GET", "docs", "dbs/d/colls/c/docs/x", refDate, h); a != ReadWrite {
					err = e
				}
				if a, e := v.Verify("GET", "docs", "dbs/d/colls/c/docs/x", refDate, hro); a != ReadOnly {
					err = e
				}
				if a, _ := v.Verify("GET", "docs", "dbs/d/colls/c/docs/y", refDate, h); a != NoAccess {
					err = errors.New("accepted a wrong link")
				}
			}
			done <- err
		}()
	}
	for g := 0; g < 8; g++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

func TestVerifyAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	primary := emulatorKey(t)
	v := NewVerifier(primary, []byte("readonly"))
	h := Header(Sign(primary, "GET", "docs", "dbs/db1/colls/c1/docs/item 1", refDate))
	hro := Header(Sign([]byte("readonly"), "GET", "docs", "dbs/db1/colls/c1/docs/item 1", refDate))
	for _, hdr := range []string{h, hro} {
		allocs := testing.AllocsPerRun(200, func() {
			if _, err := v.Verify("GET", "docs", "dbs/db1/colls/c1/docs/item 1", refDate, hdr); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("Verify allocates %v times per call", allocs)
		}
	}
}

func TestNewVerifierEmptyKeyPanics(t *testing.T) {
	defer func() {
		if r := recover(); r == nil {
			t.Fatal("no panic")
		}
	}()
	NewVerifier(nil, nil)
}

func TestCheckDate(t *testing.T) {
	now := time.Date(2017, 4, 27, 0, 51, 12, 0, time.UTC)
	const skew = 15 * time.Minute
	ok := func(date string, now time.Time) {
		t.Helper()
		if err := CheckDate(date, now, skew); err != nil {
			t.Fatalf("CheckDate(%q, %v): %v", date, now, err)
		}
	}
	bad := func(date string, now time.Time, want error, wantSub string) {
		t.Helper()
		err := CheckDate(date, now, skew)
		if !errors.Is(err, want) || !strings.Contains(err.Error(), wantSub) {
			t.Fatalf("CheckDate(%q, %v) = %v, want %v containing %q", date, now, err, want, wantSub)
		}
	}
	ok(refDate, now)
	ok("Thu, 27 Apr 2017 00:51:12 UTC", now)
	// Boundaries: exactly the skew either way is accepted, a second more is not.
	ok(refDate, now.Add(skew))
	ok(refDate, now.Add(-skew))
	bad(refDate, now.Add(skew+time.Second), ErrDateSkew, "is 15m1s away from the server time Thu, 27 Apr 2017 01:06:13 GMT; the allowed skew is 15m0s")
	bad(refDate, now.Add(-skew-time.Second), ErrDateSkew, "15m1s away")
	bad(refDate, now.Add(skew+time.Nanosecond), ErrDateSkew, "")
	// A non-UTC clock is fine.
	ok(refDate, now.In(time.FixedZone("X", 5*3600)))
	ok("Thu, 27 Apr 2017 01:06:12 GMT", now)
	bad("Thu, 27 Apr 2017 01:06:13 GMT", now, ErrDateSkew, "")

	bad("", now, ErrBadDate, "missing")
	bad("2017-04-27T00:51:12Z", now, ErrBadDate, `got "2017-04-27T00:51:12Z"`)
	bad("Thu, 27 Apr 2017 00:51:12 PST", now, ErrBadDate, "")
	bad("thu, 27 apr 2017 00:51:12 gmt", now, ErrBadDate, "")
	bad("Thu, 27 Apr 2017 00:51:60 GMT", now, ErrBadDate, "")
	if tm, err := ParseDate(refDate); err != nil || !tm.Equal(now) {
		t.Fatalf("ParseDate = %v, %v", tm, err)
	}
}

// TestCheckDateFarFromNow: dates centuries away are outside any window. A
// distance computed as a Duration saturates there (now.Sub of the year 2400
// is the minimum Duration, whose negation overflows back to itself), so the
// check must compare times.
func TestCheckDateFarFromNow(t *testing.T) {
	now := time.Date(2026, 11, 23, 22, 30, 0, 0, time.UTC)
	const skew = 15 * time.Minute
	for _, date := range []string{
		"Sat, 01 Jan 2400 00:00:00 GMT",
		"Fri, 31 Dec 9999 23:59:59 GMT",
		"Mon, 01 Jan 0001 00:00:00 GMT",
		"Mon, 01 Jan 0001 00:00:00 UTC",
		"Thu, 01 Jan 1970 00:00:00 GMT",
		"Sun, 23 Nov 2126 22:30:00 GMT",
	} {
		if err := CheckDate(date, now, skew); !errors.Is(err, ErrDateSkew) {
			t.Errorf("CheckDate(%q) = %v, want ErrDateSkew", date, err)
		}
	}
	// The window's edges, seen from the far end of the calendar too.
	for _, now := range []time.Time{now, time.Date(9999, 12, 31, 23, 0, 0, 0, time.UTC), time.Date(1, 1, 1, 1, 0, 0, 0, time.UTC)} {
		for _, c := range []struct {
			off  time.Duration
			want error
		}{{0, nil}, {skew, nil}, {-skew, nil}, {skew + time.Second, ErrDateSkew}, {-skew - time.Second, ErrDateSkew}} {
			date := now.Add(c.off).Format(http.TimeFormat)
			if err := CheckDate(date, now, skew); !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
				t.Errorf("CheckDate(%q) at %v = %v, want %v", date, now, err, c.want)
			}
		}
	}
}

func TestVerifyKey(t *testing.T) {
	primary := emulatorKey(t)
	readOnly := []byte(strings.Repeat("r", 64))
	b64 := base64.StdEncoding.EncodeToString
	f := func(v *Verifier, token string, want Access) {
		t.Helper()
		if got := v.VerifyKey(token); got != want {
			t.Errorf("VerifyKey(%q) = %v, want %v", token, got, want)
		}
	}
	v := NewVerifier(primary, readOnly)
	f(v, EmulatorKey, ReadWrite)
	f(v, " "+b64(readOnly)+"\n", ReadOnly)
	f(v, "", NoAccess)
	f(v, "not base64!", NoAccess)
	f(v, b64(primary[:len(primary)-1]), NoAccess)
	f(v, b64(append(append([]byte(nil), primary...), 0)), NoAccess)
	f(v, b64([]byte(strings.Repeat("r", 63)+"s")), NoAccess)
	// Without a read-only key, nothing is read-only, not even an empty key.
	v = NewVerifier(primary, nil)
	f(v, b64(readOnly), NoAccess)
	f(v, "=", NoAccess)
	f(v, EmulatorKey, ReadWrite)
}

// TestSignRequest checks that a request signed by SignRequest verifies with
// the key that signed it, for the path and method it carries.
func TestSignRequest(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	v := NewVerifier(key, nil)
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct{ method, url string }{
		{http.MethodGet, "http://h/dbs/db/colls/c/docs/i%201"},
		{http.MethodPost, "http://h/dbs/db/colls"},
		{http.MethodPut, "http://h/offers/AbC"},
	} {
		req, err := http.NewRequest(c.method, c.url, nil)
		if err != nil {
			t.Fatal(err)
		}
		SignRequest(req, key, now)
		if got := req.Header.Get("x-ms-date"); got != "Mon, 23 Nov 2026 10:00:00 GMT" {
			t.Fatalf("x-ms-date %q", got)
		}
		typ, link := Resource(req.URL.Path)
		if a, err := v.Verify(c.method, typ, link, req.Header.Get("x-ms-date"), req.Header.Get("Authorization")); a != ReadWrite || err != nil {
			t.Errorf("%s %s: %v, %v; want read-write", c.method, c.url, a, err)
		}
	}
}

func TestResourceOfPartitionKeyDelete(t *testing.T) {
	typ, link := Resource("/dbs/d/colls/c/operations/partitionkeydelete")
	if typ != "colls" || link != "dbs/d/colls/c" {
		t.Errorf("partition key delete signs as (%q, %q), want (colls, dbs/d/colls/c)", typ, link)
	}
	if typ, link = Resource("/dbs/d/colls/c/operations/other"); typ != "operations" || link != "dbs/d/colls/c/operations/other" {
		t.Errorf("another operation: (%q, %q)", typ, link)
	}
}
