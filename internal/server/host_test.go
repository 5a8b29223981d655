package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/auth"
	"github.com/parsecdb/parsec/internal/explorer"
)

// TestEmulatorKeyAnswersLoopbackHostsOnly sends requests with chosen Host
// headers, as a browser sends the name it resolved: with the emulator key a
// name that is not loopback (a DNS name rebound to 127.0.0.1) is refused
// for the API and the explorer alike, and loopback names and --advertise's
// host are served; with a key of one's own every name is served.
func TestEmulatorKeyAnswersLoopbackHostsOnly(t *testing.T) {
	const ownKey = "b3duIGtleSBvZiB0aGlzIHNlcnZlciwgYXQgbGVhc3QgMzIgYnl0ZXMgbG9uZw=="
	start := func(o Options) *Server {
		t.Helper()
		o.InMemory, o.Listen = true, "127.0.0.1:0"
		s, err := Start(o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Shutdown(context.Background()) })
		return s
	}
	client := &http.Client{Timeout: time.Minute} // guards against a hang only
	call := func(s *Server, key, host, path string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", s.URL()+path, nil)
		req.Host = host
		k, _ := auth.DecodeKey(key)
		auth.SignRequest(req, k, time.Now())
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	want := func(s *Server, key, host, path string, status int, says string) {
		t.Helper()
		if st, body := call(s, key, host, path); st != status || !strings.Contains(body, says) {
			t.Errorf("GET %s with Host %q: %d %s; want %d saying %q", path, host, st, body, status, says)
		}
	}
	port := func(s *Server) string { return s.URL()[strings.LastIndex(s.URL(), ":"):] }

	emu := start(Options{})
	p := port(emu)
	for _, host := range []string{"evil.example.com", "evil.example.com" + p, "localhost.evil.example.com" + p, "10.0.0.5" + p, "127.0.0.1.nip.io" + p} {
		want(emu, auth.EmulatorKey, host, "/", 403, "with the well-known emulator key this server answers only requests addressed to a loopback name")
		want(emu, auth.EmulatorKey, host, explorer.Path, 403, "--key")
	}
	st, body := call(emu, auth.EmulatorKey, "evil.example.com", "/dbs")
	var e struct{ Code, Message string }
	if err := json.Unmarshal([]byte(body), &e); st != 403 || err != nil || e.Code != "Forbidden" || !strings.Contains(e.Message, `"evil.example.com"`) {
		t.Errorf("refusal: %d %s; want a Cosmos error body naming the host", st, body)
	}
	for _, host := range []string{"localhost" + p, "LocalHost.", "127.0.0.1" + p, "[::1]" + p, "app.localhost" + p} {
		want(emu, auth.EmulatorKey, host, "/", 200, `"writableLocations"`)
		want(emu, auth.EmulatorKey, host, explorer.Path, 200, `data-emulator-key="true"`)
	}

	adv := start(Options{Advertise: "http://parsec.example.com:8081"})
	want(adv, auth.EmulatorKey, "parsec.example.com:8081", "/", 200, `"writableLocations"`)
	want(adv, auth.EmulatorKey, "localhost"+port(adv), "/", 200, `"writableLocations"`)
	want(adv, auth.EmulatorKey, "evil.example.com", "/", 403, "or parsec.example.com (--advertise)")

	own := start(Options{Key: ownKey})
	want(own, ownKey, "evil.example.com", "/", 200, `"writableLocations"`)
	want(own, ownKey, "db.example.com"+port(own), explorer.Path, 200, `data-emulator-key="false"`)
	// The emulator key given explicitly is the emulator key.
	explicit := start(Options{Key: auth.EmulatorKey})
	want(explicit, auth.EmulatorKey, "evil.example.com", "/", 403, "emulator key")
}
