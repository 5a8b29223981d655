package epk

import "testing"

func BenchmarkEPK(b *testing.B) {
	short := Key{String("tenant-42")}
	b.Run("V2/short-string", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := hashV2.EPK(short); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("V2/short-string/append", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 64)
		for b.Loop() {
			buf, _ = hashV2.AppendEPK(buf[:0], short)
		}
	})
	b.Run("V1/short-string", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := hashV1.EPK(short); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("MultiHash/3", func(b *testing.B) {
		b.ReportAllocs()
		k := Key{String("contoso"), String("alice"), Number(17)}
		for b.Loop() {
			if _, err := multiHash.EPK(k); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkParseHeader(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseHeader(`["tenant-42",17]`); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkComponentFromJSON(b *testing.B) {
	b.ReportAllocs()
	raw := []byte(`"tenant-42"`)
	for b.Loop() {
		if _, err := ComponentFromJSON(raw); err != nil {
			b.Fatal(err)
		}
	}
}
