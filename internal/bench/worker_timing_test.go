package bench

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/parsecdb/parsec/internal/auth"
)

// BenchmarkWorker measures one worker's request cycle against an in-process
// server that answers with a fixed 1 KB item (the server's own cost is in
// the numbers too; see the memory profile for the split).
func BenchmarkWorker(b *testing.B) {
	doc := []byte(`{"id":"i1","pk":"p1","pad":"` + strings.Repeat("x", 1000) + `"}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("x-ms-request-charge", "1.00")
		w.Write(doc)
	}))
	defer srv.Close()
	for _, client := range []string{ClientNetHTTP, ClientRaw} {
		o := Options{Endpoint: srv.URL, Items: 1000, Concurrency: 1, Client: client}
		o.SetDefaults()
		key, _ := auth.DecodeKey(o.Key)
		c, err := newClient(&o, key)
		if err != nil {
			b.Fatal(err)
		}
		defer c.close()
		ks := newKeyspace(&o, 1)
		for _, op := range []OpKind{OpRead, OpCreate, OpTrivial} {
			benchOp(b, client, op, c, &o, ks)
		}
	}
}

func benchOp(b *testing.B, client string, op OpKind, c *client, o *Options, ks *keyspace) {
	{
		b.Run(client+"/"+op.String(), func(b *testing.B) {
			w := newWorker(context.Background(), 0, c, o, ks, 1)
			defer w.s.close()
			w.run = "x"
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				n = (n + 7) % o.Items
				if st, err := w.do(op, n); err != nil || st != 200 {
					b.Fatal(st, err)
				}
			}
		})
	}
}
