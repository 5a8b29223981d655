package tables

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/parsecdb/parsec/internal/server"
)

// TestEDMTypes round-trips every EDM type through the SDK's EDMEntity,
// and reads each metadata level.
func TestEDMTypes(t *testing.T) {
	s := startServer(t, server.Options{})
	ctx := context.Background()
	svc := service(t, s, pathStyle, emulatorKey)
	tc := newTable(t, svc, "edm")
	when := time.Date(2020, 1, 2, 3, 4, 5, 123456700, time.UTC)
	in := aztables.EDMEntity{Entity: aztables.Entity{PartitionKey: "p", RowKey: "r"}, Properties: map[string]any{
		"Str":     "héllo \"quoted\"",
		"I32":     int32(-7),
		"I64":     aztables.EDMInt64(1<<53 + 1), // not exact as a float64
		"Dbl":     3.25,
		"Bool":    true,
		"When":    aztables.EDMDateTime(when),
		"Id":      aztables.EDMGUID("0e9c5a3c-2b1f-4c7e-9a47-4f8c2e6d9b10"),
		"Bytes":   aztables.EDMBinary([]byte{0, 1, 2, 250, 255}),
		"Neg64":   aztables.EDMInt64(math.MinInt64),
		"OldDate": aztables.EDMDateTime(time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC)),
	}}
	body, _ := json.Marshal(in)
	if _, err := tc.AddEntity(ctx, body, nil); err != nil {
		t.Fatal(err)
	}
	got, err := tc.GetEntity(ctx, "p", "r", nil)
	if err != nil {
		t.Fatal(err)
	}
	var out aztables.EDMEntity
	if err := json.Unmarshal(got.Value, &out); err != nil {
		t.Fatal(err)
	}
	p := out.Properties
	check := func(name string, ok bool) {
		t.Helper()
		if !ok {
			t.Errorf("%s came back as %#v (%T); sent %#v; body %s", name, p[name], p[name], in.Properties[name], got.Value)
		}
	}
	check("Str", p["Str"] == "héllo \"quoted\"")
	check("I32", p["I32"] == int32(-7))
	check("I64", p["I64"] == aztables.EDMInt64(1<<53+1))
	check("Neg64", p["Neg64"] == aztables.EDMInt64(math.MinInt64))
	check("Dbl", p["Dbl"] == 3.25)
	check("Bool", p["Bool"] == true)
	dt, _ := p["When"].(aztables.EDMDateTime)
	check("When", time.Time(dt).Equal(when))
	od, _ := p["OldDate"].(aztables.EDMDateTime)
	check("OldDate", time.Time(od).Equal(time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC)))
	check("Id", p["Id"] == aztables.EDMGUID("0e9c5a3c-2b1f-4c7e-9a47-4f8c2e6d9b10"))
	bin, _ := p["Bytes"].(aztables.EDMBinary)
	check("Bytes", bytes.Equal(bin, []byte{0, 1, 2, 250, 255}))
	var raw map[string]any
	_ = json.Unmarshal(got.Value, &raw)
	if raw["When"] != "2020-01-02T03:04:05.1234567Z" || raw["I64"] != "9007199254740993" || raw["I64@odata.type"] != "Edm.Int64" {
		t.Errorf("wire forms: %s", got.Value)
	}
	if raw["odata.etag"] != string(got.ETag) || raw["odata.metadata"] == nil {
		t.Errorf("minimal metadata lacks odata.etag/odata.metadata: %s", got.Value)
	}
	if _, ok := raw["Str@odata.type"]; ok {
		t.Errorf("minimal metadata annotates a string: %s", got.Value)
	}
	// Whole Doubles are checked on the wire in TestWireForms: aztables'
	// EDMEntity writes a float64 2.0 as 2 without annotation (an Int32 to
	// any service) and reads an Edm.Double annotation as nil
	// (entity.go UnmarshalJSON has no Edm.Double case).
	// NaN and the infinities, which JSON numbers cannot hold.
	special := []byte(`{"PartitionKey":"p","RowKey":"nan","N":"NaN","N@odata.type":"Edm.Double","P":"Infinity","P@odata.type":"Edm.Double","M":"-Infinity","M@odata.type":"Edm.Double"}`)
	if _, err := tc.AddEntity(ctx, special, nil); err != nil {
		t.Fatal(err)
	}
	sp := getProps(t, tc, "p", "nan")
	if sp["N"] != "NaN" || sp["P"] != "Infinity" || sp["M"] != "-Infinity" || sp["N@odata.type"] != "Edm.Double" {
		t.Errorf("special doubles: %v", sp)
	}

	// Full metadata: odata.type, odata.id, odata.editLink, and every
	// non-string type annotated, Timestamp included.
	full, err := tc.GetEntity(ctx, "p", "r", &aztables.GetEntityOptions{Format: to.Ptr(aztables.MetadataFormatFull)})
	if err != nil {
		t.Fatal(err)
	}
	var fm map[string]any
	_ = json.Unmarshal(full.Value, &fm)
	for _, k := range []string{"odata.type", "odata.id", "odata.editLink", "odata.etag", "odata.metadata", "Timestamp@odata.type", "Dbl@odata.type"} {
		if fm[k] == nil {
			t.Errorf("full metadata lacks %s: %s", k, full.Value)
		}
	}
	if fm["odata.type"] != "devstoreaccount1.edm" || fm["odata.editLink"] != "edm(PartitionKey='p',RowKey='r')" {
		t.Errorf("full metadata: %s", full.Value)
	}
	// No metadata: no odata.* at all, no annotations.
	none, err := tc.GetEntity(ctx, "p", "r", &aztables.GetEntityOptions{Format: to.Ptr(aztables.MetadataFormatNone)})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(none.Value, []byte("odata")) {
		t.Errorf("no metadata still has odata members: %s", none.Value)
	}

	// Bad values and property names are refused with the service's codes.
	for _, c := range []struct{ body, code string }{
		{`{"PartitionKey":"p","RowKey":"b1","X":"12x","X@odata.type":"Edm.Int64"}`, "InvalidInput"},
		{`{"PartitionKey":"p","RowKey":"b2","X":"2020-13-01T00:00:00Z","X@odata.type":"Edm.DateTime"}`, "InvalidInput"},
		{`{"PartitionKey":"p","RowKey":"b3","X":"not-a-guid","X@odata.type":"Edm.Guid"}`, "InvalidInput"},
		{`{"PartitionKey":"p","RowKey":"b4","X":"1","X@odata.type":"Edm.Decimal"}`, "InvalidInput"},
		{`{"PartitionKey":"p","RowKey":"b5","1X":"a"}`, "PropertyNameInvalid"},
		{`{"PartitionKey":"p","RowKey":"b6","X":{"a":1}}`, "InvalidValueType"},
		{`{"PartitionKey":"p","RowKey":"a/b"}`, "InvalidInput"},
		{`{"PartitionKey":"p\u0001","RowKey":"b"}`, "InvalidInput"},
		{`{"PartitionKey":"p","RowKey":"b7","X":"1601-01-01T00:00:00Z","X@odata.type":"Edm.DateTime","Y":"1600-12-31T23:59:59Z","Y@odata.type":"Edm.DateTime"}`, "InvalidInput"},
	} {
		if _, err := tc.AddEntity(ctx, []byte(c.body), nil); code(err) != c.code || status(err) != 400 {
			t.Errorf("insert %s: %v, want 400 %s", c.body, err, c.code)
		}
	}
}
