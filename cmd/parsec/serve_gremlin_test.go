package main

import (
	"bytes"
	"encoding/base64"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	gremlingo "github.com/apache/tinkerpop/gremlin-go/v3/driver"

	"github.com/parsecdb/parsec/internal/auth"
)

// TestServeGremlinListen runs `parsec serve --gremlin-listen 127.0.0.1:0`,
// reads the WebSocket URL it prints, and connects gremlin-go to it: the
// graph does not exist, which the server says after authenticating the
// key, so the flag reaches a server that checks credentials.
func TestServeGremlinListen(t *testing.T) {
	stdout := &lineWatch{want: "Gremlin API on", seen: make(chan struct{})}
	var stderr lineWatch
	done := make(chan int, 1)
	go func() {
		done <- run([]string{"serve", "--in-memory", "--listen", "127.0.0.1:0", "--gremlin-listen", "127.0.0.1:0", "--gremlin-idle-timeout", "1m"}, stdout, &stderr)
	}()
	select {
	case <-stdout.seen:
	case code := <-done:
		t.Fatalf("parsec serve exited %d: %s %s", code, stdout.String(), stderr.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("parsec serve did not start: %s %s", stdout.String(), stderr.String())
	}
	m := regexp.MustCompile(`Gremlin API on (ws://[0-9.]+:[0-9]+/)`).FindStringSubmatch(stdout.String())
	if m == nil {
		t.Fatalf("no Gremlin URL in %q", stdout.String())
	}
	c, err := gremlingo.NewClient(m[1], func(s *gremlingo.ClientSettings) {
		s.AuthInfo = gremlingo.BasicAuthInfo("/dbs/none/colls/none", auth.EmulatorKey)
		s.LogVerbosity = gremlingo.Off
	})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := c.Submit("g.V().count()")
	if err == nil {
		_, err = rs.All()
	}
	c.Close()
	if err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("a graph that does not exist: %v", err)
	}
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("parsec serve did not stop on SIGINT")
	}
}

// TestServeGremlinEmulatorKeyOffLoopback: the Gremlin API is not served
// off loopback with the published emulator key.
func TestServeGremlinEmulatorKeyOffLoopback(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"serve", "--in-memory", "--listen", "127.0.0.1:0", "--gremlin-listen", "0.0.0.0:0"}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "Gremlin API") {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	key := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("k"), 48))
	stderr.Reset()
	if code := run([]string{"serve", "--in-memory", "--listen", "127.0.0.1:0", "--key", key, "--gremlin-listen", "127.0.0.1:0", "--gremlin-idle-timeout", "-1s"}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "negative") {
		t.Fatalf("a negative idle timeout: exit %d: %s", code, stderr.String())
	}
}
