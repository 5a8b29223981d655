package server

import (
	"net"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/accept/accepttest"
)

// TestLimitListenerOutlastsEMFILE checks that the connection limiter keeps
// accepting after its listener ran out of file descriptors for a while.
func TestLimitListenerOutlastsEMFILE(t *testing.T) {
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	flaky := accepttest.New(tcp, 5)
	ln := newLimitListener(flaky, 4, time.Second, 0)
	defer ln.Close()
	c, err := net.Dial("tcp", tcp.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got, err := ln.Accept()
	if err != nil {
		t.Fatalf("Accept after failed accepts: %v", err)
	}
	defer got.Close()
	if got.RemoteAddr().String() != c.LocalAddr().String() {
		t.Errorf("accepted %v, want %v", got.RemoteAddr(), c.LocalAddr())
	}
	if n := flaky.Failed.Load(); n != 5 {
		t.Errorf("%d accepts failed, want 5", n)
	}
}
