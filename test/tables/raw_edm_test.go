package tables

import (
	"strings"
	"testing"

	"github.com/parsecdb/parsec/internal/server"
)

// TestWireForms reads the server's JSON as it is sent, without the SDK's
// re-encoding.
func TestWireForms(t *testing.T) {
	s := startServer(t, server.Options{})
	c := rawClient{s: s, key: emulatorKey}
	if st, _, b := c.do(t, "POST", "/Tables", []byte(`{"TableName":"wire"}`), nil); st != 201 {
		t.Fatalf("create: %d %s", st, b)
	}
	st, h, b := c.do(t, "POST", "/wire", []byte(`{"PartitionKey":"p","RowKey":"r","W":2,"W@odata.type":"Edm.Double","V":5.0,"I":5,"F":0.5}`), nil)
	if st != 201 {
		t.Fatalf("insert: %d %s", st, b)
	}
	body := string(b)
	for _, want := range []string{`"W@odata.type":"Edm.Double","W":2.0`, `"V@odata.type":"Edm.Double","V":5.0`, `"I":5`, `"F":0.5`, `"PartitionKey":"p","RowKey":"r"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the inserted entity %s lacks %s", body, want)
		}
	}
	if strings.Contains(body, `"I@odata.type"`) || strings.Contains(body, `"F@odata.type"`) {
		t.Errorf("minimal metadata annotates an Int32 or a fractional Double: %s", body)
	}
	if h.Get("ETag") == "" || !strings.HasPrefix(h.Get("ETag"), `W/"datetime'`) || h.Get("x-ms-request-charge") == "" || h.Get("x-ms-request-id") == "" || h.Get("DataServiceVersion") == "" {
		t.Errorf("headers: %v", h)
	}
}
