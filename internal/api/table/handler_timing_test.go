package table

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// BenchmarkGetEntityHandler is the server's own work for a point read of a
// ~1 KB entity, without the network: the handler called directly.
func BenchmarkGetEntityHandler(b *testing.B) {
	ts := newTestServer(b)
	ts.mustDo(b, http.StatusCreated, http.MethodPost, "/Tables", []byte(`{"TableName":"bench"}`))
	ts.mustDo(b, http.StatusCreated, http.MethodPost, "/bench",
		[]byte(`{"PartitionKey":"p0001","RowKey":"r000001","n":42,"big@odata.type":"Edm.Int64","big":"9007199254740993","pad":"`+strings.Repeat("x", 900)+`"}`))
	req := httptest.NewRequest(http.MethodGet, "/acct/bench(PartitionKey='p0001',RowKey='r000001')", nil)
	date := time.Now().UTC().Format(http.TimeFormat)
	req.Header.Set("x-ms-date", date)
	req.Header.Set("Accept", "application/json;odata=minimalmetadata")
	m := hmac.New(sha256.New, ts.key)
	m.Write([]byte("GET\n\n\n" + date + "\n/acct" + req.URL.EscapedPath()))
	req.Header.Set("Authorization", "SharedKey acct:"+base64.StdEncoding.EncodeToString(m.Sum(nil)))
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		ts.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
}
