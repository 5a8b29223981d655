package transport

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

var key = bytes.Repeat([]byte("k"), 32)

func msg(typ raftpb.MessageType, from, to, term uint64, data string) *raftpb.Message {
	return &raftpb.Message{Type: typ.Enum(), From: &from, To: &to, Term: &term,
		Entries: []*raftpb.Entry{{Index: proto.Uint64(term), Term: &term, Data: []byte(data)}}}
}

// collector gathers received batches.
type collector struct {
	mu   sync.Mutex
	got  map[uint64][]Envelope
	cond chan struct{}
}

func newCollector() *collector {
	return &collector{got: make(map[uint64][]Envelope), cond: make(chan struct{}, 1)}
}

func (c *collector) handle(from uint64, batch []Envelope) {
	c.mu.Lock()
	c.got[from] = append(c.got[from], batch...)
	c.mu.Unlock()
	select {
	case c.cond <- struct{}{}:
	default:
	}
}

func (c *collector) count(from uint64) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.got[from])
}

// waitFor waits until fn holds, failing the test after a generous time.
func waitFor(t *testing.T, what string, fn func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !fn() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func TestBatchEncoding(t *testing.T) {
	batch := []Envelope{{Group: 1, Msg: msg(raftpb.MsgApp, 1, 2, 3, "x")}, {Group: 1 << 40, Msg: msg(raftpb.MsgHeartbeat, 2, 1, 9, "")}}
	b, err := AppendBatch(nil, batch)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeBatch(b)
	if err != nil || len(got) != 2 {
		t.Fatalf("decode: %v, %v", got, err)
	}
	for i := range batch {
		if got[i].Group != batch[i].Group || !proto.Equal(got[i].Msg, batch[i].Msg) {
			t.Fatalf("message %d: %v, want %v", i, got[i], batch[i])
		}
	}
	for cut := range len(b) {
		if _, err := DecodeBatch(b[:cut]); err == nil {
			t.Fatalf("a batch cut at %d of %d bytes decoded", cut, len(b))
		}
	}
	if _, err := DecodeBatch(append(b, 0)); err == nil {
		t.Fatal("a batch with trailing bytes decoded")
	}
}

func FuzzDecodeBatch(f *testing.F) {
	b, _ := AppendBatch(nil, []Envelope{{Group: 7, Msg: msg(raftpb.MsgApp, 1, 2, 3, "x")}})
	f.Add(b)
	f.Add([]byte{0})
	f.Fuzz(func(t *testing.T, data []byte) {
		batch, err := DecodeBatch(data)
		if err != nil {
			return
		}
		again, err := AppendBatch(nil, batch)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := DecodeBatch(again); err != nil {
			t.Fatalf("re-encoded batch does not decode: %v", err)
		}
	})
}

type logs struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logs) logf(format string, args ...any) {
	l.mu.Lock()
	fmt.Fprintf(&l.b, format+"\n", args...)
	l.mu.Unlock()
}

func (l *logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newTCP(t *testing.T, id uint64, k []byte, lg *logs, mod func(*TCPConfig)) (*TCP, *collector) {
	t.Helper()
	cfg := TCPConfig{NodeID: id, ClusterKey: k, Listen: "127.0.0.1:0", Logf: lg.logf, MinBackoff: 5 * time.Millisecond, MaxBackoff: 50 * time.Millisecond}
	if mod != nil {
		mod(&cfg)
	}
	tr, err := NewTCP(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := newCollector()
	tr.SetHandler(c.handle)
	t.Cleanup(func() { _ = tr.Close() })
	return tr, c
}

// TestTCPRoundTrip sends messages of many groups both ways over loopback
// and checks each arrives intact, from the right node.
func TestTCPRoundTrip(t *testing.T) {
	lg := &logs{}
	a, ca := newTCP(t, 1, key, lg, nil)
	b, cb := newTCP(t, 2, key, lg, nil)
	a.AddPeer(2, b.Addr().String())
	b.AddPeer(1, a.Addr().String())
	const n = 500
	var sent []Envelope
	for i := range n {
		e := Envelope{Group: uint64(i % 37), Msg: msg(raftpb.MsgApp, 1, 2, uint64(i), fmt.Sprintf("payload %d", i))}
		sent = append(sent, e)
		a.Send(2, []Envelope{e})
		b.Send(1, []Envelope{{Group: uint64(i), Msg: msg(raftpb.MsgAppResp, 2, 1, uint64(i), "")}})
	}
	waitFor(t, "all messages", func() bool { return cb.count(1) == n && ca.count(2) == n })
	cb.mu.Lock()
	defer cb.mu.Unlock()
	for i, e := range cb.got[1] {
		if e.Group != sent[i].Group || !proto.Equal(e.Msg, sent[i].Msg) {
			t.Fatalf("message %d: got %v, want %v", i, e, sent[i])
		}
	}
	st := a.Stats()
	if st.Dropped != 0 || st.Rejected != 0 || st.SentFrames == 0 || st.SentFrames > n {
		t.Fatalf("stats %+v; log:\n%s", st, lg)
	}
}

// peerClientTLS returns the dialing side's TLS configuration of a node of
// the cluster of key k.
func peerClientTLS(t *testing.T, k []byte) *tls.Config {
	t.Helper()
	a, err := newAuthority(k)
	if err != nil {
		t.Fatal(err)
	}
	_, client, err := a.peerTLS()
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// rawDial performs the dialer's handshake by hand, over TLS as a node of
// the cluster of key key, with the MAC key k, and returns the connection
// and the nonces.
func rawDial(t *testing.T, addr string, k []byte, me uint64) (net.Conn, []byte, []byte) {
	t.Helper()
	c, err := tls.Dial("tcp", addr, peerClientTLS(t, key))
	if err != nil {
		t.Fatal(err)
	}
	ch := make([]byte, len(magic)+8+nonceLen)
	if _, err := io.ReadFull(c, ch); err != nil {
		t.Fatal(err)
	}
	peerID := ch[len(magic) : len(magic)+8]
	nonceA := ch[len(magic)+8:]
	nonceB := bytes.Repeat([]byte{7}, nonceLen)
	mac := func(parts ...[]byte) []byte {
		h := hmac.New(sha256.New, k)
		for _, p := range parts {
			h.Write(p)
		}
		return h.Sum(nil)
	}
	meb := binary.BigEndian.AppendUint64(nil, me)
	hello := append(append(append([]byte(nil), meb...), nonceB...), mac([]byte("hello"), nonceA, nonceB, peerID, meb)...)
	if _, err := c.Write(hello); err != nil {
		t.Fatal(err)
	}
	return c, nonceA, nonceB
}

func expectClosed(t *testing.T, c net.Conn) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	_, err := io.ReadAll(bufio.NewReader(c))
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("the connection was not closed")
	}
}

// TestTCPForgedFrame checks that after a valid handshake, a frame with a
// bad MAC or a replayed frame closes the connection, with a logged reason,
// and delivers nothing.
func TestTCPForgedFrame(t *testing.T) {
	for _, tc := range []string{"forged", "replayed", "oversized"} {
		t.Run(tc, func(t *testing.T) {
			lg := &logs{}
			b, cb := newTCP(t, 2, key, lg, func(c *TCPConfig) { c.MaxFrame = 1 << 10 })
			c, nonceA, nonceB := rawDial(t, b.Addr().String(), key, 1)
			defer c.Close()
			welcome := make([]byte, macLen)
			if _, err := io.ReadFull(c, welcome); err != nil {
				t.Fatal(err)
			}
			tr := &TCP{cfg: TCPConfig{ClusterKey: key}}
			w := bufio.NewWriter(c)
			payload, _ := AppendBatch(nil, []Envelope{{Group: 1, Msg: msg(raftpb.MsgApp, 1, 2, 1, "hi")}})
			// A valid frame is delivered.
			if err := tr.writeFrame(w, nonceA, nonceB, 0, payload); err != nil {
				t.Fatal(err)
			}
			_ = w.Flush()
			waitFor(t, "the valid frame", func() bool { return cb.count(1) == 1 })
			switch tc {
			case "forged":
				evil, _ := AppendBatch(nil, []Envelope{{Group: 1, Msg: msg(raftpb.MsgApp, 1, 2, 99, "evil")}})
				var hdr [4]byte
				binary.BigEndian.PutUint32(hdr[:], uint32(len(evil)))
				_, _ = w.Write(hdr[:])
				_, _ = w.Write(evil)
				_, _ = w.Write(make([]byte, macLen))
			case "replayed":
				_ = tr.writeFrame(w, nonceA, nonceB, 0, payload) // sequence 0 again
			case "oversized":
				_ = tr.writeFrame(w, nonceA, nonceB, 1, make([]byte, 2<<10))
			}
			_ = w.Flush()
			expectClosed(t, c)
			waitFor(t, "the rejection", func() bool { return b.Stats().Rejected == 1 })
			if cb.count(1) != 1 {
				t.Fatalf("%d messages delivered, want only the valid one", cb.count(1))
			}
			if !strings.Contains(lg.String(), "closing connection") {
				t.Fatalf("no reason logged: %q", lg)
			}
		})
	}
}

// TestTCPWrongKey checks that a node with another key can neither send to
// nor be sent to by the cluster.
func TestTCPWrongKey(t *testing.T) {
	lg := &logs{}
	good, cg := newTCP(t, 1, key, lg, nil)
	bad, cbad := newTCP(t, 2, bytes.Repeat([]byte("x"), 32), lg, nil)
	bad.AddPeer(1, good.Addr().String())
	good.AddPeer(2, bad.Addr().String())
	for range 20 {
		bad.Send(1, []Envelope{{Group: 1, Msg: msg(raftpb.MsgVote, 2, 1, 50, "")}})
		good.Send(2, []Envelope{{Group: 1, Msg: msg(raftpb.MsgApp, 1, 2, 1, "secret")}})
	}
	waitFor(t, "rejections on both sides", func() bool { return good.Stats().Rejected > 0 && bad.Stats().Rejected > 0 })
	waitFor(t, "both sides to give up their messages", func() bool {
		return good.Stats().Dropped == 20 && bad.Stats().Dropped == 20
	})
	if cg.count(2) != 0 || cbad.count(1) != 0 {
		t.Fatalf("messages crossed the key boundary: %d, %d", cg.count(2), cbad.count(1))
	}
	// A raw hello under a wrong key is closed too.
	c, _, _ := rawDial(t, good.Addr().String(), bytes.Repeat([]byte("y"), 32), 3)
	defer c.Close()
	expectClosed(t, c)
	if !strings.Contains(lg.String(), "cluster key") {
		t.Fatalf("no reason logged: %q", lg)
	}
}

// recorder is a TCP proxy in front of addr that keeps every byte it passes,
// both ways.
type recorder struct {
	ln  net.Listener
	mu  sync.Mutex
	buf bytes.Buffer
}

func newRecorder(t *testing.T, addr string) *recorder {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", addr)
			if err != nil {
				in.Close()
				continue
			}
			t.Cleanup(func() { in.Close(); out.Close() })
			go r.copy(out, in)
			go r.copy(in, out)
		}
	}()
	return r
}

func (r *recorder) copy(dst, src net.Conn) {
	b := make([]byte, 32<<10)
	for {
		n, err := src.Read(b)
		if n > 0 {
			r.mu.Lock()
			r.buf.Write(b[:n])
			r.mu.Unlock()
			if _, err := dst.Write(b[:n]); err != nil {
				return
			}
		}
		if err != nil {
			dst.Close()
			return
		}
	}
}

func (r *recorder) bytes() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return bytes.Clone(r.buf.Bytes())
}

// TestTCPEncrypted checks that an item's bytes sent to a peer, and the
// handshake, do not cross the network in the clear.
func TestTCPEncrypted(t *testing.T) {
	lg := &logs{}
	a, _ := newTCP(t, 1, key, lg, nil)
	b, cb := newTCP(t, 2, key, lg, nil)
	rec := newRecorder(t, b.Addr().String())
	a.AddPeer(2, rec.ln.Addr().String())
	const item = `{"id":"card-1","number":"4111 1111 1111 1111"}`
	a.Send(2, []Envelope{{Group: 1, Msg: msg(raftpb.MsgApp, 1, 2, 1, item)}})
	waitFor(t, "the message", func() bool { return cb.count(1) == 1 })
	if got := string(cb.got[1][0].Msg.Entries[0].Data); got != item {
		t.Fatalf("received %q, want %q", got, item)
	}
	seen := rec.bytes()
	for _, clear := range []string{"4111 1111", "card-1", magic} {
		if bytes.Contains(seen, []byte(clear)) {
			t.Fatalf("%q crossed the network in the clear", clear)
		}
	}
}

// TestTCPRefusesPlainPeers checks that a connection that does not speak
// TLS, or does with a certificate the cluster's authority did not issue,
// is refused before the transport's handshake starts.
func TestTCPRefusesPlainPeers(t *testing.T) {
	lg := &logs{}
	b, cb := newTCP(t, 2, key, lg, nil)
	// A plain TCP peer reads no challenge and is closed.
	c, err := net.Dial("tcp", b.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _ = c.Write(bytes.Repeat([]byte{1}, 8+nonceLen+macLen))
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	got, err := io.ReadAll(c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("the plain connection was not closed")
	}
	if bytes.Contains(got, []byte(magic)) {
		t.Fatalf("a plain connection was answered with the challenge: %q", got)
	}
	waitFor(t, "the rejection", func() bool { return b.Stats().Rejected == 1 })
	// TLS with a certificate of its own making, or none, is refused.
	other := peerClientTLS(t, bytes.Repeat([]byte("o"), 32))
	other.RootCAs = peerClientTLS(t, key).RootCAs // it trusts the cluster
	for i, cfg := range []*tls.Config{other, {RootCAs: other.RootCAs, ServerName: peerName}} {
		tc, err := tls.Dial("tcp", b.Addr().String(), cfg)
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		_ = tc.SetReadDeadline(time.Now().Add(20 * time.Second))
		got, err := io.ReadAll(tc)
		tc.Close()
		var oe *net.OpError
		if len(got) != 0 || !errors.As(err, &oe) || oe.Op != "remote error" {
			t.Fatalf("dial %d: read %q, %v; want a TLS alert", i, got, err)
		}
	}
	waitFor(t, "the rejections", func() bool { return b.Stats().Rejected == 3 })
	if cb.count(1) != 0 || !strings.Contains(lg.String(), "TLS handshake") {
		t.Fatalf("received %d messages; log %q", cb.count(1), lg)
	}
}

// TestTCPQueueBound checks that Send to a peer that does not take messages
// never blocks and drops what exceeds the queue, counting it.
func TestTCPQueueBound(t *testing.T) {
	lg := &logs{}
	// A listener that accepts but never answers the handshake holds the
	// sender in its dial.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var held []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		for _, c := range held {
			c.Close()
		}
		mu.Unlock()
	}()
	a, _ := newTCP(t, 1, key, lg, func(c *TCPConfig) { c.QueueLen = 8; c.HandshakeTimeout = time.Minute })
	a.AddPeer(2, ln.Addr().String())
	a.Send(2, []Envelope{{Group: 1, Msg: msg(raftpb.MsgApp, 1, 2, 1, "first")}})
	waitFor(t, "the sender to take its first batch", func() bool { return a.Stats().SentBatches == 1 })
	const n = 100
	for i := range n {
		a.Send(2, []Envelope{{Group: 1, Msg: msg(raftpb.MsgApp, 1, 2, uint64(i), "")}})
	}
	if d := a.Stats().Dropped; d != n-8 {
		t.Fatalf("dropped %d of %d with a queue of 8", d, n)
	}
	// Heartbeats and votes have their own queue: the full queue of
	// appends does not drop them, only their own bound does.
	for i := range 10 {
		a.Send(2, []Envelope{{Group: 1, Msg: &raftpb.Message{Type: raftpb.MsgHeartbeat.Enum(), From: proto.Uint64(1), To: proto.Uint64(2), Term: proto.Uint64(uint64(i))}}})
	}
	if st := a.Stats(); st.Dropped != n-8+2 || st.DroppedPriority != 2 {
		t.Fatalf("after 10 heartbeats with a queue of 8: %+v", st)
	}
	a.Send(9, []Envelope{{Group: 1, Msg: msg(raftpb.MsgApp, 1, 9, 1, "")}})
	if d := a.Stats().Dropped; d != n-8+2+1 {
		t.Fatalf("a message to an unknown peer was not dropped: %d", d)
	}
}

// TestTCPReconnect checks that a sender reconnects after its peer restarts
// on the same address.
func TestTCPReconnect(t *testing.T) {
	lg := &logs{}
	a, _ := newTCP(t, 1, key, lg, nil)
	b, cb := newTCP(t, 2, key, lg, nil)
	addr := b.Addr().String()
	a.AddPeer(2, addr)
	a.Send(2, []Envelope{{Group: 1, Msg: msg(raftpb.MsgApp, 1, 2, 1, "before")}})
	waitFor(t, "the first message", func() bool { return cb.count(1) == 1 })
	_ = b.Close()
	b2, cb2 := newTCP(t, 2, key, lg, func(c *TCPConfig) { c.Listen = addr })
	defer b2.Close()
	waitFor(t, "a message after the restart", func() bool {
		a.Send(2, []Envelope{{Group: 1, Msg: msg(raftpb.MsgApp, 1, 2, 2, "after")}})
		time.Sleep(5 * time.Millisecond)
		return cb2.count(1) > 0
	})
}

// TestMemFaults checks the in-memory network's partitions, drops and
// duplicates.
func TestMemFaults(t *testing.T) {
	net := NewNetwork(1, 0)
	nodes := map[uint64]*Mem{}
	cols := map[uint64]*collector{}
	for id := uint64(1); id <= 3; id++ {
		nodes[id] = net.Join(id)
		cols[id] = newCollector()
		nodes[id].SetHandler(cols[id].handle)
	}
	defer func() {
		for _, n := range nodes {
			n.Close()
		}
	}()
	send := func(from, to uint64, k int) {
		for i := range k {
			nodes[from].Send(to, []Envelope{{Group: 1, Msg: msg(raftpb.MsgApp, from, to, uint64(i), "")}})
		}
	}
	net.Isolate(3)
	send(1, 3, 10)
	send(3, 2, 10)
	send(1, 2, 10)
	waitFor(t, "delivery inside the majority", func() bool { return cols[2].count(1) == 10 })
	if cols[3].count(1) != 0 || cols[2].count(3) != 0 {
		t.Fatal("a message crossed the partition")
	}
	net.Heal()
	send(1, 3, 10)
	waitFor(t, "delivery after healing", func() bool { return cols[3].count(1) == 10 })

	net.SetFaults(Faults{Drop: 0.5})
	send(1, 2, 400)
	st := net.Stats()
	if st.Dropped < 100 || st.Dropped > 300 {
		t.Fatalf("dropped %d of 400 at probability 0.5", st.Dropped)
	}
	waitFor(t, "the rest", func() bool { return cols[2].count(1) == 10+400-int(st.Dropped) })

	net.SetFaults(Faults{Duplicate: 1, Reorder: true, MaxDelay: time.Millisecond})
	send(2, 1, 50)
	waitFor(t, "duplicates", func() bool { return cols[1].count(2) == 100 })
}

// TestMemPriority checks that the in-memory network queues bulk messages
// (appends) and the others separately: a receiver's inbox full of appends
// still takes heartbeats and votes, and delivers them first.
func TestMemPriority(t *testing.T) {
	net := NewNetwork(1, 4)
	a, b := net.Join(1), net.Join(2)
	defer a.Close()
	defer b.Close()
	release := make(chan struct{})
	var mu sync.Mutex
	var got []raftpb.MessageType
	first := make(chan struct{})
	var once sync.Once
	b.SetHandler(func(_ uint64, batch []Envelope) {
		once.Do(func() { close(first); <-release }) // hold the first delivery
		mu.Lock()
		for _, e := range batch {
			got = append(got, e.Msg.GetType())
		}
		mu.Unlock()
	})
	a.SetHandler(func(uint64, []Envelope) {})
	a.Send(2, []Envelope{{Group: 1, Msg: msg(raftpb.MsgApp, 1, 2, 1, "held")}})
	<-first
	for i := range 10 {
		a.Send(2, []Envelope{{Group: 1, Msg: msg(raftpb.MsgApp, 1, 2, uint64(i), "")}})
	}
	hb := &raftpb.Message{Type: raftpb.MsgHeartbeat.Enum(), From: proto.Uint64(1), To: proto.Uint64(2), Term: proto.Uint64(1)}
	vote := &raftpb.Message{Type: raftpb.MsgPreVote.Enum(), From: proto.Uint64(1), To: proto.Uint64(2), Term: proto.Uint64(2)}
	a.Send(2, []Envelope{{Group: 1, Msg: hb}, {Group: 2, Msg: vote}, {Group: 3, Msg: msg(raftpb.MsgApp, 1, 2, 1, "")}})
	st := net.Stats()
	if st.Overflowed != 7 || st.OverflowedPriority != 0 {
		t.Fatalf("with an inbox of 4 held: %+v, want 7 appends and no heartbeat or vote overflowed", st)
	}
	close(release)
	waitFor(t, "delivery", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) == 1+4+2
	})
	mu.Lock()
	defer mu.Unlock()
	if got[0] != raftpb.MsgApp || got[1] != raftpb.MsgHeartbeat || got[2] != raftpb.MsgPreVote {
		t.Fatalf("delivered %v: the heartbeat and the vote should follow the held append, before the queued ones", got)
	}
	if prio, bulk := Split([]Envelope{{Msg: hb}, {Msg: msg(raftpb.MsgApp, 1, 2, 1, "")}, {Msg: vote}}); len(bulk) != 1 || len(prio) != 2 {
		t.Fatalf("split: %d bulk, %d others", len(bulk), len(prio))
	}
}

// TestTCPCall checks calls: the handler's answer and its error come back,
// a node without a handler refuses, and a caller without the cluster key
// is refused before its request reaches the handler.
func TestTCPCall(t *testing.T) {
	a, _ := newTCP(t, 1, key, &logs{}, nil)
	b, _ := newTCP(t, 2, key, &logs{}, nil)
	bad, _ := newTCP(t, 3, bytes.Repeat([]byte("x"), 32), &logs{}, nil)
	ctx := context.Background()
	if _, err := b.Call(ctx, a.Addr().String(), []byte("ping")); err == nil || !strings.Contains(err.Error(), "takes no calls") {
		t.Fatalf("call without a handler: %v", err)
	}
	var seen atomic.Int32
	a.SetCallHandler(func(req []byte) ([]byte, error) {
		seen.Add(1)
		if string(req) == "fail" {
			return nil, errors.New("refused: " + string(req))
		}
		return append([]byte("echo:"), req...), nil
	})
	got, err := b.Call(ctx, a.Addr().String(), []byte("ping"))
	if err != nil || string(got) != "echo:ping" {
		t.Fatalf("call: %q, %v", got, err)
	}
	_, err = b.Call(ctx, a.Addr().String(), []byte("fail"))
	var ce *CallError
	if !errors.As(err, &ce) || ce.Msg != "refused: fail" {
		t.Fatalf("a handler's error: %v", err)
	}
	before := seen.Load()
	if _, err := bad.Call(ctx, a.Addr().String(), []byte("ping")); err == nil || !strings.Contains(err.Error(), "cluster key") {
		t.Fatalf("call under a wrong key: %v", err)
	}
	if seen.Load() != before {
		t.Fatal("a request under a wrong key reached the handler")
	}
	if _, err := b.Call(ctx, a.Addr().String(), make([]byte, MaxCallBytes+1)); err == nil {
		t.Fatal("an oversized call was sent")
	}
}

// TestTCPCallReused checks that calls over a kept connection get their
// answers and errors, that the connection is kept for the next call, and
// that a caller whose kept connection the peer closed (it stopped) gets an
// error that does not claim the request was not delivered, and a fresh
// connection to a peer that is down gets one that does.
func TestTCPCallReused(t *testing.T) {
	a, _ := newTCP(t, 1, key, &logs{}, nil)
	b, _ := newTCP(t, 2, key, &logs{}, nil)
	ctx := context.Background()
	a.SetCallHandler(func(req []byte) ([]byte, error) {
		if string(req) == "fail" {
			return nil, errors.New("refused")
		}
		return append([]byte("echo:"), req...), nil
	})
	addr := a.Addr().String()
	for i := range 3 {
		got, err := b.CallReused(ctx, addr, []byte(fmt.Sprint("ping", i)))
		if err != nil || string(got) != fmt.Sprint("echo:ping", i) {
			t.Fatalf("call %d: %q, %v", i, got, err)
		}
		b.mu.Lock()
		idle := len(b.idleCalls[addr])
		b.mu.Unlock()
		if idle != 1 {
			t.Fatalf("after call %d: %d idle connections, want 1", i, idle)
		}
	}
	var ce *CallError
	if _, err := b.CallReused(ctx, addr, []byte("fail")); !errors.As(err, &ce) {
		t.Fatalf("a handler's error: %v", err)
	}
	a.Close()
	_, err := b.CallReused(ctx, addr, []byte("ping"))
	if err == nil || errors.Is(err, ErrNotDelivered) {
		t.Fatalf("a call on a connection the stopped peer closed: %v; want an error of unknown delivery", err)
	}
	if _, err := b.CallReused(ctx, addr, []byte("ping")); !errors.Is(err, ErrNotDelivered) {
		t.Fatalf("a call to a stopped peer: %v; want ErrNotDelivered", err)
	}
}
