package bench

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/auth"
)

func testKey(t testing.TB) []byte {
	t.Helper()
	k, err := auth.DecodeKey(auth.EmulatorKey)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestSignerMatchesAuth(t *testing.T) {
	key := testKey(t)
	v := auth.NewVerifier(key, nil)
	s := NewSigner(key)
	now := time.Date(2026, 11, 21, 7, 52, 6, 123456789, time.UTC)
	for _, c := range []struct{ verb, path string }{
		{"GET", "/"},
		{"POST", "/dbs"},
		{"POST", "/dbs/bench/colls"},
		{"GET", "/dbs/bench/colls/items"},
		{"POST", "/dbs/bench/colls/items/docs"},
		{"GET", "/dbs/bench/colls/items/docs/i42"},
		{"GET", "/dbs/My DB/colls/Items/docs/i 1"},
	} {
		r := NewResource(c.verb, c.path)
		date, authz := s.Sign(r, now)
		if date != "Sat, 21 Nov 2026 07:52:06 GMT" {
			t.Fatalf("date %q", date)
		}
		typ, link := auth.Resource(c.path)
		if want := auth.Header(auth.Sign(key, c.verb, typ, link, date)); authz != want {
			t.Fatalf("%s %s: Authorization %q, want %q", c.verb, c.path, authz, want)
		}
		if acc, err := v.Verify(c.verb, typ, link, date, authz); err != nil || acc != auth.ReadWrite {
			t.Fatalf("%s %s: server verification: %v %v", c.verb, c.path, acc, err)
		}
	}
}

func TestSignerCachesPerSecond(t *testing.T) {
	key := testKey(t)
	s := NewSigner(key)
	r := NewResource("GET", "/dbs/d/colls/c/docs/i1")
	other := NewResource("GET", "/dbs/d/colls/c/docs/i2")
	t0 := time.Date(2026, 11, 21, 7, 52, 6, 0, time.UTC)

	d1, a1 := s.Sign(r, t0)
	if s.signs != 1 {
		t.Fatalf("signs = %d after the first call", s.signs)
	}
	// The same second: served from the cache, however late in the second.
	for _, dt := range []time.Duration{0, time.Millisecond, 999 * time.Millisecond} {
		d, a := s.Sign(r, t0.Add(dt))
		if d != d1 || a != a1 || s.signs != 1 {
			t.Fatalf("+%v: got a new signature (signs = %d)", dt, s.signs)
		}
	}
	// Another resource in the same second has its own signature.
	_, a2 := s.Sign(other, t0)
	if a2 == a1 || s.signs != 2 {
		t.Fatalf("another resource: same signature or no new signing (signs = %d)", s.signs)
	}
	// The next second: a new date and a new signature, then cached again.
	d3, a3 := s.Sign(r, t0.Add(time.Second))
	if d3 != "Sat, 21 Nov 2026 07:52:07 GMT" || a3 == a1 || s.signs != 3 {
		t.Fatalf("next second: %q %q (signs = %d)", d3, a3, s.signs)
	}
	typ, link := auth.Resource("/dbs/d/colls/c/docs/i1")
	if want := auth.Header(auth.Sign(key, "GET", typ, link, d3)); a3 != want {
		t.Fatal("the re-signed header is wrong")
	}
	s.Sign(r, t0.Add(1500*time.Millisecond))
	if s.signs != 3 {
		t.Fatal("the second signature was not cached")
	}
	// Going back a second (another worker's clock read earlier) re-signs
	// correctly rather than serving the newer date.
	d4, _ := s.Sign(r, t0)
	if d4 != d1 {
		t.Fatalf("back in time: date %q, want %q", d4, d1)
	}

	// A cache hit does not allocate.
	s.Sign(r, t0)
	if n := testing.AllocsPerRun(100, func() { s.Sign(r, t0) }); n != 0 {
		t.Fatalf("a cache hit allocates %v times", n)
	}
}

func TestSignerSharedResource(t *testing.T) {
	// Workers with their own Signers share Resources (run under -race).
	key := testKey(t)
	r := NewResource("POST", "/dbs/d/colls/c/docs")
	t0 := time.Now()
	var wg sync.WaitGroup
	results := make([]string, 8)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := NewSigner(key)
			var a string
			for range 1000 {
				_, a = s.Sign(r, t0)
			}
			results[i] = a
		}()
	}
	wg.Wait()
	date := t0.UTC().Format(http.TimeFormat)
	want := auth.Header(auth.Sign(key, "POST", "docs", "dbs/d/colls/c", date))
	for i, a := range results {
		if a != want {
			t.Fatalf("worker %d: %q, want %q", i, a, want)
		}
	}
}

func BenchmarkSign(b *testing.B) {
	key := testKey(b)
	s := NewSigner(key)
	r := NewResource("GET", "/dbs/bench/colls/items/docs/i42")
	t0 := time.Now()
	b.Run("hit", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s.Sign(r, t0)
		}
	})
	b.Run("miss", func(b *testing.B) {
		b.ReportAllocs()
		sec := t0
		for b.Loop() {
			sec = sec.Add(time.Second)
			s.Sign(r, sec)
		}
	})
}
