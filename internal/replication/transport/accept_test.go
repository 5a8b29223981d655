package transport

import (
	"crypto/tls"
	"io"
	"net"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/parsecdb/parsec/internal/accept/accepttest"
)

// TestTCPAcceptOutlastsEMFILE checks that the accept loop keeps serving
// after its listener ran out of file descriptors for a while: a peer that
// connects afterwards gets its messages through.
func TestTCPAcceptOutlastsEMFILE(t *testing.T) {
	lg := &logs{}
	var flaky *accepttest.Listener
	a, _ := newTCP(t, 1, key, lg, nil)
	b, cb := newTCP(t, 2, key, lg, func(c *TCPConfig) {
		c.wrapListener = func(ln net.Listener) net.Listener {
			flaky = accepttest.New(ln, 5)
			return flaky
		}
	})
	a.AddPeer(2, b.Addr().String())
	a.Send(2, []Envelope{{Group: 1, Msg: msg(raftpb.MsgApp, 1, 2, 1, "after EMFILE")}})
	waitFor(t, "a message after failed accepts", func() bool { return cb.count(1) == 1 })
	if n := flaky.Failed.Load(); n != 5 {
		t.Errorf("%d accepts failed, want 5", n)
	}
}

// silent dials tr as a peer would, completes the TLS handshake and reads
// the acceptor's challenge, then says nothing: a connection in its
// handshake, as one that stalls in TLS is too (both are admitted before
// TLS starts).
func silent(t *testing.T, tr *TCP) net.Conn {
	t.Helper()
	raw, err := net.Dial("tcp", tr.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c := tls.Client(raw, tr.clientTLS)
	t.Cleanup(func() { c.Close() })
	if _, err := io.ReadFull(c, make([]byte, len(magic)+8+nonceLen)); err != nil {
		t.Fatalf("no challenge: %v", err)
	}
	return c
}

// TestTCPSilentConnectionsAreBounded opens more silent connections than
// the transport lets be in their handshake: each one past the bound closes
// the oldest, long before the handshake timeout, and a peer still gets
// through, its handshake closing the oldest silent one in turn.
func TestTCPSilentConnectionsAreBounded(t *testing.T) {
	const maxShakes, n = 8, 30
	lg := &logs{}
	a, _ := newTCP(t, 1, key, lg, nil)
	b, cb := newTCP(t, 2, key, lg, func(c *TCPConfig) {
		c.MaxHandshakes = maxShakes
		c.HandshakeTimeout = time.Hour
	})
	var conns []net.Conn
	for range n {
		conns = append(conns, silent(t, b))
	}
	for _, c := range conns[:n-maxShakes] {
		expectClosed(t, c)
	}
	a.AddPeer(2, b.Addr().String())
	a.Send(2, []Envelope{{Group: 1, Msg: msg(raftpb.MsgApp, 1, 2, 1, "past silent connections")}})
	waitFor(t, "a peer's message past silent connections", func() bool { return cb.count(1) == 1 })
}

// TestTCPMaxConns checks that a connection past MaxConns is closed at once,
// before its challenge.
func TestTCPMaxConns(t *testing.T) {
	const maxConns = 4
	lg := &logs{}
	b, _ := newTCP(t, 2, key, lg, func(c *TCPConfig) {
		c.MaxConns = maxConns
		c.HandshakeTimeout = time.Hour
	})
	for range maxConns {
		silent(t, b)
	}
	raw, err := net.Dial("tcp", b.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c := tls.Client(raw, b.clientTLS)
	defer c.Close()
	// A connection closed at once fails its TLS handshake; one admitted
	// would get its challenge.
	if n, err := io.ReadFull(c, make([]byte, len(magic))); err == nil {
		t.Fatalf("connection %d got %d bytes of challenge, want it closed", maxConns+1, n)
	}
}
