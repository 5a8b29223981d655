package auth

import (
	"net/url"
	"testing"
	"time"
)

func BenchmarkVerify(b *testing.B) {
	primary, _ := DecodeKey(EmulatorKey)
	ro := []byte("read-only-key")
	v := NewVerifier(primary, ro)
	const link = "dbs/db1/colls/c1/docs/item 1"
	h := Header(Sign(primary, "GET", "docs", link, refDate))
	hro := Header(Sign(ro, "GET", "docs", link, refDate))
	b.Run("primary", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := v.Verify("GET", "docs", link, refDate, h); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("read-only", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := v.Verify("GET", "docs", link, refDate, hro); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := v.Verify("GET", "docs", link, refDate, h); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

func BenchmarkSign(b *testing.B) {
	primary, _ := DecodeKey(EmulatorKey)
	b.ReportAllocs()
	for b.Loop() {
		Sign(primary, "GET", "docs", "dbs/db1/colls/c1/docs/item 1", refDate)
	}
}

func BenchmarkResource(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Resource("/dbs/db1/colls/c1/docs/item 1")
	}
}

func BenchmarkAuthenticateResourceToken(b *testing.B) {
	primary, _ := DecodeKey(EmulatorKey)
	v := NewVerifier(primary, nil)
	now := time.Unix(1_800_000_000, 0)
	tok := url.QueryEscape(v.MintResourceToken(sampleGrant(now.Unix() + 3600)))
	b.ReportAllocs()
	for b.Loop() {
		if a, _, err := v.Authenticate("GET", "docs", "dbs/shop/colls/orders/docs/1", "", tok, now); a != ResourceToken || err != nil {
			b.Fatal(a, err)
		}
	}
}
