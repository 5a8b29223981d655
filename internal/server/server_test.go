package server

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/auth"
	"github.com/parsecdb/parsec/internal/storage"
)

func TestValidateRefusesWeakKeysOffLoopback(t *testing.T) {
	strong := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", 64)))
	strong2 := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("r", 32)))
	short := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("s", MinKeyBytes-1)))
	oneByte := base64.StdEncoding.EncodeToString([]byte("x"))
	// The emulator key with different padding whitespace is still it.
	emulator := " " + auth.EmulatorKey + "\n"
	f := func(o Options, wantSub ...string) {
		t.Helper()
		o.InMemory = true
		err := o.Validate()
		if len(wantSub) == 0 {
			if err != nil {
				t.Errorf("Validate(listen %q): %v, want nil", o.Listen, err)
			}
			return
		}
		if err == nil {
			t.Errorf("Validate(listen %q, key %q, read-only key %q) = nil, want an error", o.Listen, o.Key, o.ReadOnlyKey)
			return
		}
		for _, s := range wantSub {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("Validate(listen %q): %q does not say %q", o.Listen, err, s)
			}
		}
	}
	for _, listen := range []string{"0.0.0.0:8081", ":8081", "192.168.1.5:8081", "[::]:8081", "db.example.com:8081"} {
		f(Options{Listen: listen}, "emulator key", "--key")
		f(Options{Listen: listen, Key: auth.EmulatorKey}, "--key", "emulator key", "openssl rand -base64 64")
		f(Options{Listen: listen, Key: emulator}, "--key", "emulator key")
		f(Options{Listen: listen, Key: strong, ReadOnlyKey: auth.EmulatorKey}, "--read-only-key", "emulator key")
		f(Options{Listen: listen, Key: oneByte}, "1-byte --key", "at least 32 bytes", "openssl rand -base64 64")
		f(Options{Listen: listen, Key: short}, "31-byte --key")
		f(Options{Listen: listen, Key: strong, ReadOnlyKey: short}, "31-byte --read-only-key")
		f(Options{Listen: listen, Key: strong, ReadOnlyKey: strong2})
		f(Options{Listen: listen, Key: strong2})
		f(Options{Listen: listen, Key: strong, ReadOnlyKey: " " + strong}, "must differ")
	}
	// On loopback, development keys stay allowed.
	for _, listen := range []string{"127.0.0.1:8081", "localhost:8081", "[::1]:8081"} {
		f(Options{Listen: listen})
		f(Options{Listen: listen, Key: auth.EmulatorKey})
		f(Options{Listen: listen, Key: oneByte, ReadOnlyKey: short})
		f(Options{Listen: listen, ReadOnlyKey: auth.EmulatorKey}, "must differ")
	}
}

// TestDiskNearlyFull starts a server whose disk reports less free space
// than the reserve: writes must fail with 503 naming the cause, /_ready
// must answer 503, and both must recover once space returns.
func TestDiskNearlyFull(t *testing.T) {
	var free atomic.Uint64
	free.Store(100 << 30)
	s, err := Start(Options{DataDir: t.TempDir(), Listen: "127.0.0.1:0", Storage: func(o *storage.Options) {
		o.FreeSpace = func() (uint64, error) { return free.Load(), nil }
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	key, _ := auth.DecodeKey(auth.EmulatorKey)
	client := &http.Client{Timeout: time.Minute} // guards against a hang only
	call := func(method, path, pk, body string, hdr ...string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, s.URL()+path, strings.NewReader(body))
		auth.SignRequest(req, key, time.Now())
		if pk != "" {
			req.Header.Set("x-ms-documentdb-partitionkey", pk)
		}
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	want := func(gotStatus int, body string, status int, says string) {
		t.Helper()
		if gotStatus != status || !strings.Contains(body, says) {
			t.Errorf("status %d body %s; want %d saying %q", gotStatus, body, status, says)
		}
	}
	st, body := call("GET", "/_ready", "", "")
	want(st, body, 200, "ready")
	st, body = call("POST", "/dbs", "", `{"id":"db"}`)
	want(st, body, 201, "db")
	st, body = call("POST", "/dbs/db/colls", "", `{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2}}`)
	want(st, body, 201, "c")

	free.Store(10 << 20)
	st, body = call("POST", "/dbs/db/colls/c/docs", `["k"]`, `{"id":"1","pk":"k"}`)
	want(st, body, 503, "not enough free disk space")
	t.Logf("write: %d %s", st, body)
	st, body = call("GET", "/_ready", "", "")
	want(st, body, 503, "not enough free disk space")
	t.Logf("/_ready: %d %s", st, body)
	st, body = call("GET", "/dbs/db/colls/c/docs/1", `["k"]`, "")
	want(st, body, 404, "")

	free.Store(100 << 30)
	st, body = call("GET", "/_ready", "", "")
	want(st, body, 200, "ready")
	st, body = call("POST", "/dbs/db/colls/c/docs", `["k"]`, `{"id":"1","pk":"k"}`)
	want(st, body, 201, `"id":"1"`)
}

// TestClusterOptionsRefused checks the cluster options a server refuses
// before it opens anything, each with a message that says what to do.
func TestClusterOptionsRefused(t *testing.T) {
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{ClusterListen: "127.0.0.1:0"}, "--node-id must be given"},
		{Options{NodeID: 1}, "--cluster-listen HOST:PORT must be given"},
		{Options{NodeID: 1, ClusterListen: "127.0.0.1:0", InMemory: true}, "--in-memory cannot be used in a cluster"},
		{Options{NodeID: 1, ClusterListen: "10.1.2.3:7000", Key: "dGhpcyBpcyBhIGxvbmcgZW5vdWdoIGtleSBmb3IgYSB0ZXN0IHNlcnZlcg==", Listen: "10.1.2.3:8081"}, "--cluster-key is required"},
		{Options{NodeID: 1, ClusterListen: "127.0.0.1:0", ClusterKey: "short"}, "at least 32 bytes"},
		{Options{NodeID: 1, ClusterListen: "127.0.0.1:0", ReplicationFactor: 9}, "--replication-factor must be from 1 to 7"},
		{Options{NodeID: 1, ClusterListen: "127.0.0.1:0", Join: []string{"nowhere"}}, `--join "nowhere" is not HOST:PORT`},
		{Options{ClusterKey: "0123456789012345678901234567890123456789"}, "need --node-id and --cluster-listen"},
	} {
		err := c.o.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error saying %q", c.o, err, c.want)
		}
	}
	// Every interface, with no address to give the others.
	_, err := Start(Options{InMemory: false, DataDir: t.TempDir(), Listen: "127.0.0.1:0", NodeID: 1, ClusterListen: "0.0.0.0:0", ClusterKey: "0123456789012345678901234567890123456789"})
	if err == nil || !strings.Contains(err.Error(), "--cluster-advertise") {
		t.Fatalf("a cluster address on every interface: %v", err)
	}
}

// TestLimitOptionsRefused checks that limits a server cannot work with are
// refused with a message that names the flag.
func TestLimitOptionsRefused(t *testing.T) {
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{MaxThroughput: 500}, "--max-throughput must be at least 1000"},
		{Options{MaxThroughput: -1}, "cannot be negative"},
		{Options{MaxPartitions: -1}, "cannot be negative"},
	} {
		err := c.o.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error saying %q", c.o, err, c.want)
		}
	}
}
