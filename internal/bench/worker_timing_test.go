package bench

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

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
		w.Header().Set("etag", `"00000000-0000-0000-0000-000000000001"`)
		w.Header().Set("x-ms-item-count", "1")
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
		ks.run = "x"
		for _, op := range []OpKind{OpRead, OpCreate, OpTrivial, OpRMW, OpQueryPK} {
			benchOp(b, client, op, c, &o, ks)
		}
	}
}

func benchOp(b *testing.B, client string, op OpKind, c *client, o *Options, ks *keyspace) {
	{
		b.Run(client+"/"+op.String(), func(b *testing.B) {
			w := newWorker(context.Background(), 0, c, o, ks, 1)
			defer w.s.close()
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

// cannedServer answers every HTTP/1.1 request on its connections with one
// fixed 200 response, without allocating per request, so that the
// allocations of a test are the client's. A query without x-ms-continuation
// gets a continuation back, so each query reads two pages.
func cannedServer(t testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	doc := `{"id":"i1","pk":"p1","n":1,"v":7,"pad":"` + strings.Repeat("x", 900) + `"}`
	head := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Ms-Request-Charge: 1.00\r\n" +
		"Etag: \"00000000-0000-0000-0000-000000000001\"\r\nX-Ms-Item-Count: 1\r\nContent-Length: " + strconv.Itoa(len(doc)) + "\r\n"
	first := []byte(head + "X-Ms-Continuation: {\"token\":\"abc\",\"range\":{\"min\":\"\",\"max\":\"FF\"}}\r\n\r\n" + doc)
	last := []byte(head + "\r\n" + doc)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				br := bufio.NewReaderSize(conn, 64<<10)
				for {
					length, query, cont := 0, false, false
					for {
						line, err := br.ReadSlice('\n')
						if err != nil {
							return
						}
						switch {
						case len(line) <= 2:
						case bytes.HasPrefix(line, []byte("Content-Length: ")):
							length, _ = parseUint(trimSpace(line[16:]))
						case bytes.HasPrefix(line, []byte("X-Ms-Documentdb-Isquery: ")):
							query = true
						case bytes.HasPrefix(line, []byte("X-Ms-Continuation: ")):
							cont = true
						}
						if len(line) <= 2 {
							break
						}
					}
					if _, err := br.Discard(length); err != nil {
						return
					}
					resp := last
					if query && !cont {
						resp = first
					}
					if _, err := conn.Write(resp); err != nil {
						return
					}
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// TestRawWorkerDoesNotAllocate: with the raw client, a worker's operations
// (request building, signing, sending, reading, recording) allocate nothing
// once the item targets and signatures are cached.
func TestRawWorkerDoesNotAllocate(t *testing.T) {
	url := cannedServer(t)
	for _, op := range []OpKind{OpRead, OpUpsert, OpCreate, OpRMW, OpQueryPK, OpQueryCross, OpScan, OpTrivial} {
		o := Options{Endpoint: url, Items: 10, Concurrency: 1, Client: ClientRaw, Distribution: DistLatest, PageSize: 10}
		o.SetDefaults()
		key, _ := auth.DecodeKey(o.Key)
		c, err := newClient(&o, key)
		if err != nil {
			t.Fatal(err)
		}
		ks := newKeyspace(&o, 1)
		ks.run = "x"
		w := newWorker(context.Background(), 0, c, &o, ks, 1)
		w.setMix([]Weighted{{op, 1}})
		w.keys = newKeyDist(o.Distribution, o.ZipfTheta, o.Items, 1, ks.ins).chooser()
		w.stats.byStatus, w.stats.samples = map[int]uint64{}, map[int]string{}
		ctx := context.Background()
		for n := range o.Items {
			ks.item(n)
		}
		now := time.Now()
		for range 100 { // warm up: buffers grow, signatures are cached
			w.perform(ctx, now, now, time.Time{})
		}
		allocs := testing.AllocsPerRun(1000, func() { // and once more before
			now := time.Now()
			w.perform(ctx, now, now, time.Time{})
		})
		ps := w.perOp[0]
		if allocs != 0 || ps.failed != 0 || ps.hist.Count() != 1101 {
			t.Errorf("%s: %v allocations per operation; %d ok, %d failed %v", op, allocs, ps.hist.Count(), ps.failed, w.stats.samples)
		}
		if (op == OpQueryPK || op == OpQueryCross || op == OpScan) && (ps.requests != 2*1101 || ps.rows != 2*1101) {
			t.Errorf("%s: %d requests and %d rows for 1101 queries of two pages", op, ps.requests, ps.rows)
		}
		w.s.close()
		c.close()
	}
}
