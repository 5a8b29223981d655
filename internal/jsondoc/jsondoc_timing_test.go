package jsondoc

import (
	"encoding/json"
	"testing"
)

// benchDoc is a realistic ~1 KB document: nested objects, an array of
// objects, numbers, escapes and non-ASCII text.
var benchDoc = []byte(`{
  "id": "order-7f3c2a9e-51d4-4c1b-9a55-0d2f6e8b1c47",
  "customerId": "cust-001942",
  "status": "shipped",
  "createdAt": "2024-03-18T09:41:27.512Z",
  "total": 1249.95,
  "currency": "EUR",
  "shipping": {"name": "Zoë Müller", "street": "Hauptstraße 12", "city": "Berlin", "zip": "10115", "country": "DE"},
  "lines": [
    {"sku": "SKU-00123", "name": "Road bike \"R-410\"", "qty": 1, "price": 999.95, "tags": ["bike", "road"]},
    {"sku": "SKU-04711", "name": "Helmet", "qty": 2, "price": 100.00, "tags": ["safety"]},
    {"sku": "SKU-09999", "name": "Lights\u2122 set", "qty": 1, "price": 50.00, "tags": []}
  ],
  "payment": {"method": "card", "last4": "4242", "authorized": true, "captured": true, "fraudScore": 0.013},
  "notes": null,
  "history": [
    {"at": 1710754887, "event": "created"},
    {"at": 1710755012, "event": "paid"},
    {"at": 1710841287, "event": "shipped", "carrier": "DHL", "tracking": "JD014600003828461234"}
  ],
  "loyalty": {"tier": "gold", "points": 12500, "multiplier": 1.5e0},
  "_rid": "DJB7AI1lZHoBAAAAAAAAAA==",
  "_ts": 1710841287
}`)

var benchPaths = [][]string{{"customerId"}}

func BenchmarkScan(b *testing.B) {
	var s Scanned
	b.SetBytes(int64(len(benchDoc)))
	b.ReportAllocs()
	for b.Loop() {
		if err := ScanInto(&s, benchDoc, benchPaths); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkScanNewResult(b *testing.B) {
	b.SetBytes(int64(len(benchDoc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Scan(benchDoc, benchPaths); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScanWithSystem is the write hot path: validate, extract id and
// partition key, splice in the system properties into a reused buffer.
func BenchmarkScanWithSystem(b *testing.B) {
	var s Scanned
	buf := make([]byte, 0, 2048)
	b.SetBytes(int64(len(benchDoc)))
	b.ReportAllocs()
	for b.Loop() {
		if err := ScanInto(&s, benchDoc, benchPaths); err != nil {
			b.Fatal(err)
		}
		buf = WithSystem(buf[:0], benchDoc, testSys)
	}
}

func BenchmarkWithSystem(b *testing.B) {
	buf := make([]byte, 0, 2048)
	b.SetBytes(int64(len(benchDoc)))
	b.ReportAllocs()
	for b.Loop() {
		buf = WithSystem(buf[:0], benchDoc, testSys)
	}
}

// BenchmarkStdlibValid and BenchmarkStdlibUnmarshalMap are the baselines the
// raw-bytes design avoids.
func BenchmarkStdlibValid(b *testing.B) {
	b.SetBytes(int64(len(benchDoc)))
	b.ReportAllocs()
	for b.Loop() {
		if !json.Valid(benchDoc) {
			b.Fatal("invalid")
		}
	}
}

func BenchmarkStdlibUnmarshalMap(b *testing.B) {
	b.SetBytes(int64(len(benchDoc)))
	b.ReportAllocs()
	for b.Loop() {
		var m map[string]any
		if err := json.Unmarshal(benchDoc, &m); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkApplyPatch(b *testing.B) {
	_, ops, err := ParsePatch([]byte(`[{"op":"set","path":"/status","value":"delivered"},
		{"op":"incr","path":"/loyalty/points","value":250},
		{"op":"add","path":"/history/-","value":{"at":1710927687,"event":"delivered"}}]`))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(benchDoc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ApplyPatch(benchDoc, ops); err != nil {
			b.Fatal(err)
		}
	}
}

func TestBenchDocSize(t *testing.T) {
	if n := len(benchDoc); n < 900 || n > 1300 {
		t.Fatalf("benchDoc is %d bytes, want about 1 KB", n)
	}
	if err := Validate(benchDoc); err != nil {
		t.Fatal(err)
	}
}
