package bench

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/auth"
)

func TestRunWithRawClient(t *testing.T) {
	f, srv := newFakeCosmos(t, 700)
	for _, wl := range []string{"read", "write", "upsert"} {
		res, _ := runBench(t, Options{Endpoint: srv.URL, Workload: wl, Client: ClientRaw, Items: 200, ItemSize: 700})
		if res.Errors != 0 || res.Operations == 0 || res.Client != ClientRaw {
			t.Fatalf("%s: %+v", wl, res)
		}
		want := float64(res.Operations)
		if wl != "read" {
			want *= 5
		}
		if res.RequestCharge != want {
			t.Fatalf("%s: charge %v for %d operations", wl, res.RequestCharge, res.Operations)
		}
	}
	if f.bad.Load() != 0 {
		t.Fatalf("%d bad requests", f.bad.Load())
	}
	f.throttleEvery, f.failEvery = 5, 13
	res, _ := runBench(t, Options{Endpoint: srv.URL, Workload: "read", Client: ClientRaw, Items: 200, ItemSize: 700})
	if res.Throttled == 0 || res.ErrorsByStatus["500"] == 0 || !strings.Contains(res.ErrorSamples["500"], "injected failure") {
		t.Fatalf("%+v", res)
	}
}

// TestRawSenderResponses feeds the raw client the response shapes it must
// parse: Content-Length, chunked, no body, Connection: close, and an
// HTTP/1.0 answer without a length.
func TestRawSenderResponses(t *testing.T) {
	var conns atomic.Int64
	big := strings.Repeat("0123456789", 700)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("x-ms-request-charge", "2.50")
		switch r.URL.Query().Get("shape") {
		case "chunked":
			w.WriteHeader(200)
			fmt.Fprint(w, big[:3000])
			w.(http.Flusher).Flush()
			fmt.Fprint(w, big[3000:])
		case "nobody":
			w.WriteHeader(http.StatusNoContent)
		case "close":
			w.Header().Set("Connection", "close")
			fmt.Fprint(w, "bye")
		case "throttle":
			w.Header().Set("x-ms-retry-after-ms", "286")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"code":"TooManyRequests","message":"Request rate is large"}`)
		default:
			fmt.Fprint(w, "hello")
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()

	o := Options{Endpoint: srv.URL, Client: ClientRaw, Items: 1}
	o.SetDefaults()
	key, _ := auth.DecodeKey(o.Key)
	c, err := newClient(&o, key)
	if err != nil {
		t.Fatal(err)
	}
	s := newRawSender(context.Background(), c, 1024)
	defer s.close()
	f := func(shape string, wantStatus int, wantBody string, wantConns int64) {
		t.Helper()
		var r reply
		cl := &call{method: "GET", path: "/", rawPath: "/?shape=" + shape}
		if err := s.send(cl, &r); err != nil {
			t.Fatalf("%s: %v", shape, err)
		}
		if r.status != wantStatus || string(r.body) != wantBody || r.charge != 25000 || conns.Load() != wantConns {
			t.Fatalf("%s: status %d, %d body bytes, charge %d, %d connections", shape, r.status, len(r.body), r.charge, conns.Load())
		}
		if shape == "throttle" && r.retryAfter != 286*time.Millisecond {
			t.Fatalf("retry after %v", r.retryAfter)
		}
	}
	f("plain", 200, "hello", 1)
	f("chunked", 200, big, 1)
	f("nobody", 204, "", 1)
	f("plain", 200, "hello", 1)
	f("close", 200, "bye", 1)
	f("plain", 200, "hello", 2) // a new connection after Connection: close
	f("throttle", 429, `{"code":"TooManyRequests","message":"Request rate is large"}`, 2)

	// An HTTP/1.0 server that closes after a body without a length.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 4096)
			conn.Read(buf)
			conn.Write([]byte("HTTP/1.0 200 OK\r\nX-Ms-Request-Charge: 1\r\n\r\nuntil close"))
			conn.Close()
		}
	}()
	o.Endpoint = "http://" + ln.Addr().String()
	c2, _ := newClient(&o, key)
	s2 := newRawSender(context.Background(), c2, 1024)
	defer s2.close()
	for range 2 {
		var r reply
		if err := s2.send(&call{method: "GET", path: "/", rawPath: "/"}, &r); err != nil || r.status != 200 || string(r.body) != "until close" || r.charge != 10000 {
			t.Fatalf("HTTP/1.0: %v %d %q %d", err, r.status, r.body, r.charge)
		}
	}
}

func TestParseCharge(t *testing.T) {
	for s, want := range map[string]uint64{
		"1": 10000, "1.00": 10000, "4.95": 49500, "0.38": 3800, "12.3456789": 123456,
		"": 0, "abc": 0, "1.2.3": 0, "-1": 0, "625": 6250000,
	} {
		if got := parseCharge(s); got != want {
			t.Errorf("parseCharge(%q) = %d, want %d", s, got, want)
		}
		if got := parseCharge([]byte(s)); got != want {
			t.Errorf("parseCharge([]byte %q) = %d, want %d", s, got, want)
		}
	}
}
