package main

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/parsecdb/parsec/internal/auth"
)

// lineWatch is an io.Writer that closes seen once the text written to it
// contains want. It is safe for concurrent use.
type lineWatch struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
}

func (w *lineWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	had := strings.Contains(w.buf.String(), w.want)
	w.buf.Write(p)
	if !had && strings.Contains(w.buf.String(), w.want) {
		close(w.seen)
	}
	return len(p), nil
}

func (w *lineWatch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestServeRefusesWeakKeysOffLoopback runs `parsec serve` on 0.0.0.0 with
// the emulator key given explicitly and with a 1-byte key: both must exit 1
// with a message that says how to make a key, without serving.
func TestServeRefusesWeakKeysOffLoopback(t *testing.T) {
	for _, args := range [][]string{
		{"--key", auth.EmulatorKey},
		{"--key", "eA=="},
		{"--key", "a2tra2tra2tra2tra2tra2tra2tra2tra2tra2tra2tra2tra2tra2tra2tra2tra2tra2tra2tra2tra2traw==", "--read-only-key", auth.EmulatorKey},
	} {
		stdout := &lineWatch{want: "serving", seen: make(chan struct{})}
		var stderr lineWatch
		done := make(chan int, 1)
		go func() {
			done <- run(append([]string{"serve", "--in-memory", "--listen", "0.0.0.0:0"}, args...), stdout, &stderr)
		}()
		select {
		case <-stdout.seen:
			// The server runs until a signal; the test process ends it.
			t.Fatalf("parsec serve %v started on 0.0.0.0: %s", args, stdout.String())
		case code := <-done:
			msg := stderr.String()
			if code != 1 || !strings.Contains(msg, "refusing to listen") || !strings.Contains(msg, "openssl rand -base64 64") {
				t.Errorf("parsec serve %v: exit %d, stderr %q; want exit 1 and a refusal that says how to make a key", args, code, msg)
			}
		}
	}
}
