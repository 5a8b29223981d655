package transport

import (
	"bufio"
	"container/list"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log"
	mrand "math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/parsecdb/parsec/internal/accept"
)

// The TCP protocol. A node dials each peer it sends to; the connection
// carries frames one way, dialer to acceptor. Every connection is TLS 1.3
// between certificates issued by the cluster's authority (tls.go), which
// each side verifies, so what crosses the network is encrypted and a peer
// without the cluster key fails the TLS handshake; inside it:
//
//	acceptor → dialer  challenge: magic "PRSCRFT1", acceptor node id (8), nonce A (32)
//	dialer → acceptor  hello:     dialer node id (8), nonce B (32), HMAC(key, "hello" A B acceptor dialer)
//	acceptor → dialer  welcome:   HMAC(key, "welcome" A B acceptor dialer)
//	dialer → acceptor  frames:    length (4, big-endian), payload, HMAC(key, "frame" A B seq length payload)
//
// A call (Call) is a connection of one request and one response between
// any two holders of the key, for what is not a raft message (a node
// asking to join): its hello is authenticated as "call" instead of
// "hello", then one frame each way, MAC'd as "request" and "response".
//
// Both sides prove they hold the cluster key before any frame flows, so a
// node without it cannot join. Each frame's MAC covers the two nonces and
// its sequence number on the connection, so a frame cannot be forged,
// altered, replayed or moved to another connection. A frame that fails its
// check closes the connection with a logged reason. The payload is a batch
// (AppendBatch) of the messages of all groups queued for the peer.
const (
	magic     = "PRSCRFT1"
	nonceLen  = 32
	macLen    = sha256.Size
	headerLen = 4
)

// DefaultMaxFrame is the default bound on a frame's payload.
const DefaultMaxFrame = 16 << 20

// Defaults of the bounds on accepted connections. A cluster's peers hold
// one connection each, and a call one while it runs, so these leave a wide
// margin; what they bound is the file descriptors and goroutines of
// connections from anyone who can reach the port.
const (
	DefaultMaxConns      = 512
	DefaultMaxHandshakes = 128
)

// TCPConfig configures a TCP transport.
type TCPConfig struct {
	// NodeID is this node's id (not 0).
	NodeID uint64
	// ClusterKey authenticates every connection and frame; at least 32
	// bytes, the same on every node.
	ClusterKey []byte
	// Listen is the address to accept peers on ("127.0.0.1:0" picks a
	// port).
	Listen string
	// MaxFrame bounds a frame's payload, sent and received; 0 means
	// DefaultMaxFrame. A message that alone exceeds it is dropped.
	MaxFrame int
	// QueueLen bounds the batches queued per peer, separately for bulk
	// messages (appends, snapshots) and the others; 0 means 1024. A Send
	// beyond it drops its batch. The others are sent first.
	QueueLen int
	// HandshakeTimeout bounds the handshake; 0 means 5 s. A connection that
	// has not proved it holds the key by then is closed.
	HandshakeTimeout time.Duration
	// MaxConns bounds the connections accepted and open at once; 0 means
	// DefaultMaxConns. One more is closed at once.
	MaxConns int
	// MaxHandshakes bounds the accepted connections still in their
	// handshake; 0 means DefaultMaxHandshakes. One more closes the oldest
	// of them, so that connections that never speak cannot keep a peer out
	// nor take every file descriptor.
	MaxHandshakes int
	// MinBackoff and MaxBackoff bound the wait between reconnection
	// attempts; 0 means 50 ms and 5 s.
	MinBackoff, MaxBackoff time.Duration
	// Logf logs rejected connections and frames. Default log.Printf.
	Logf func(format string, args ...any)

	// wrapListener, when set, wraps the listener (for tests).
	wrapListener func(net.Listener) net.Listener
}

// TCPStats counts what a TCP transport did.
type TCPStats struct {
	// SentBatches and SentFrames count batches taken and frames written.
	SentBatches, SentFrames uint64
	// Dropped counts messages dropped: full queue, unknown peer, too
	// large, or lost with a failed connection. DroppedPriority counts the
	// non-bulk messages among them dropped for a full queue.
	Dropped, DroppedPriority uint64
	// Received counts messages received.
	Received uint64
	// Rejected counts connections closed for a failed handshake or frame.
	Rejected uint64
}

// TCP is a Transport over TLS with HMAC-SHA256 authentication.
type TCP struct {
	cfg TCPConfig
	ln  net.Listener
	// serverTLS and clientTLS configure the accepting and the dialing side
	// of a connection.
	serverTLS, clientTLS *tls.Config
	handler              atomic.Pointer[Handler]
	calls                atomic.Pointer[CallHandler]

	mu    sync.Mutex
	peers map[uint64]*peer
	conns map[net.Conn]struct{}
	// idleCalls are the connections kept for calls, by address (CallReused).
	idleCalls map[string][]*callConn
	// accepted counts the accepted connections open; shaking lists those
	// still in their handshake, oldest first.
	accepted int
	shaking  list.List

	closed chan struct{}
	wg     sync.WaitGroup

	sentBatches, sentFrames, dropped, droppedPrio, received, rejected atomic.Uint64
}

var _ Transport = (*TCP)(nil)

type peer struct {
	id    uint64
	mu    sync.Mutex
	addr  string
	queue chan []Envelope // bulk messages
	prio  chan []Envelope // the others, sent first
}

// NewTCP starts a transport listening on cfg.Listen.
func NewTCP(cfg TCPConfig) (*TCP, error) {
	if cfg.NodeID == 0 {
		return nil, errors.New("transport: node id 0 is reserved")
	}
	if len(cfg.ClusterKey) < 32 {
		return nil, errors.New("transport: the cluster key must be at least 32 bytes")
	}
	if cfg.MaxFrame <= 0 {
		cfg.MaxFrame = DefaultMaxFrame
	}
	if cfg.QueueLen <= 0 {
		cfg.QueueLen = 1024
	}
	if cfg.HandshakeTimeout <= 0 {
		cfg.HandshakeTimeout = 5 * time.Second
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	if cfg.MaxHandshakes <= 0 {
		cfg.MaxHandshakes = DefaultMaxHandshakes
	}
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = 50 * time.Millisecond
	}
	if cfg.MaxBackoff < cfg.MinBackoff {
		cfg.MaxBackoff = max(5*time.Second, cfg.MinBackoff)
	}
	if cfg.Logf == nil {
		cfg.Logf = log.Printf
	}
	cfg.ClusterKey = append([]byte(nil), cfg.ClusterKey...)
	auth, err := newAuthority(cfg.ClusterKey)
	if err != nil {
		return nil, err
	}
	serverTLS, clientTLS, err := auth.peerTLS()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("transport: %w", err)
	}
	if cfg.wrapListener != nil {
		ln = cfg.wrapListener(ln)
	}
	t := &TCP{cfg: cfg, ln: ln, serverTLS: serverTLS, clientTLS: clientTLS,
		peers: make(map[uint64]*peer), conns: make(map[net.Conn]struct{}), closed: make(chan struct{})}
	t.wg.Add(1)
	go t.accept()
	return t, nil
}

// Addr returns the address the transport listens on.
func (t *TCP) Addr() net.Addr { return t.ln.Addr() }

// Stats returns the transport's counters.
func (t *TCP) Stats() TCPStats {
	return TCPStats{SentBatches: t.sentBatches.Load(), SentFrames: t.sentFrames.Load(), Dropped: t.dropped.Load(), DroppedPriority: t.droppedPrio.Load(),
		Received: t.received.Load(), Rejected: t.rejected.Load()}
}

// SetHandler implements Transport.
func (t *TCP) SetHandler(h Handler) { t.handler.Store(&h) }

// AddPeer sets the address of node id (changing it if known) and starts
// its sender.
func (t *TCP) AddPeer(id uint64, addr string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if p, ok := t.peers[id]; ok {
		p.mu.Lock()
		p.addr = addr
		p.mu.Unlock()
		return
	}
	select {
	case <-t.closed:
		return
	default:
	}
	p := &peer{id: id, addr: addr, queue: make(chan []Envelope, t.cfg.QueueLen), prio: make(chan []Envelope, t.cfg.QueueLen)}
	t.peers[id] = p
	t.wg.Add(1)
	go t.send(p)
}

// Send implements Transport. It never blocks.
func (t *TCP) Send(to uint64, batch []Envelope) {
	t.mu.Lock()
	p := t.peers[to]
	t.mu.Unlock()
	if p == nil {
		t.dropped.Add(uint64(len(batch)))
		return
	}
	prio, bulk := Split(batch)
	if len(prio) > 0 {
		select {
		case p.prio <- prio:
		default:
			t.dropped.Add(uint64(len(prio)))
			t.droppedPrio.Add(uint64(len(prio)))
		}
	}
	if len(bulk) > 0 {
		select {
		case p.queue <- bulk:
		default:
			t.dropped.Add(uint64(len(bulk)))
		}
	}
}

// Close implements Transport.
func (t *TCP) Close() error {
	t.mu.Lock()
	select {
	case <-t.closed:
		t.mu.Unlock()
		return nil
	default:
	}
	close(t.closed)
	err := t.ln.Close()
	for c := range t.conns {
		_ = c.Close()
	}
	for _, l := range t.idleCalls {
		for _, cc := range l {
			_ = cc.c.Close()
		}
	}
	t.idleCalls = nil
	t.mu.Unlock()
	t.wg.Wait()
	return err
}

func (t *TCP) track(c net.Conn) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	select {
	case <-t.closed:
		return false
	default:
	}
	t.conns[c] = struct{}{}
	return true
}

func (t *TCP) untrack(c net.Conn) {
	_ = c.Close()
	t.mu.Lock()
	delete(t.conns, c)
	t.mu.Unlock()
}

func (t *TCP) mac(parts ...[]byte) []byte {
	h := hmac.New(sha256.New, t.cfg.ClusterKey)
	for _, p := range parts {
		h.Write(p)
	}
	return h.Sum(nil)
}

func u64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

func (t *TCP) accept() {
	defer t.wg.Done()
	var retry accept.Backoff
	for {
		raw, err := t.ln.Accept()
		if err != nil {
			if retry.Retry(err) {
				continue
			}
			return
		}
		c := tls.Server(raw, t.serverTLS)
		shake, ok := t.admit(c)
		if !ok {
			_ = c.Close()
			select {
			case <-t.closed:
				return
			default:
				continue
			}
		}
		t.wg.Add(1)
		go func() {
			defer t.wg.Done()
			defer t.release(c, shake)
			if err := t.serve(c, shake); err != nil {
				t.rejected.Add(1)
				t.cfg.Logf("transport: closing connection from %s: %v", c.RemoteAddr(), err)
			}
		}()
	}
}

// admit tracks an accepted connection as in its handshake, and returns its
// entry in t.shaking. It refuses the connection when the transport is
// closed or MaxConns are open; past MaxHandshakes it closes the oldest
// connection still in its handshake.
func (t *TCP) admit(c net.Conn) (*list.Element, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	select {
	case <-t.closed:
		return nil, false
	default:
	}
	if t.accepted >= t.cfg.MaxConns {
		t.rejected.Add(1)
		t.cfg.Logf("transport: closing connection from %s: %d connections are open (the limit)", c.RemoteAddr(), t.accepted)
		return nil, false
	}
	t.accepted++
	t.conns[c] = struct{}{}
	shake := t.shaking.PushBack(c)
	if t.shaking.Len() > t.cfg.MaxHandshakes {
		// Its serve logs it as an incomplete handshake.
		_ = t.shaking.Remove(t.shaking.Front()).(net.Conn).Close()
	}
	return shake, true
}

// shook records that an accepted connection completed its handshake.
func (t *TCP) shook(shake *list.Element) {
	t.mu.Lock()
	t.shaking.Remove(shake) // a no-op once removed
	t.mu.Unlock()
}

// release closes an accepted connection and forgets it.
func (t *TCP) release(c net.Conn, shake *list.Element) {
	t.shook(shake)
	t.untrack(c)
	t.mu.Lock()
	t.accepted--
	t.mu.Unlock()
}

// serve runs the acceptor's side of a connection, whose entry in t.shaking
// is shake. It returns nil when the connection ends normally and an error
// when it is rejected.
func (t *TCP) serve(c *tls.Conn, shake *list.Element) error {
	_ = c.SetDeadline(time.Now().Add(t.cfg.HandshakeTimeout))
	if err := c.Handshake(); err != nil {
		return fmt.Errorf("TLS handshake: %v", err)
	}
	nonceA := make([]byte, nonceLen)
	_, _ = rand.Read(nonceA)
	me := u64(t.cfg.NodeID)
	ch := append(append([]byte(magic), me...), nonceA...)
	if _, err := c.Write(ch); err != nil {
		return nil
	}
	r := bufio.NewReaderSize(c, 64<<10)
	hello := make([]byte, 8+nonceLen+macLen)
	if _, err := io.ReadFull(r, hello); err != nil {
		return fmt.Errorf("incomplete handshake: %v", err)
	}
	from := hello[:8]
	nonceB := hello[8 : 8+nonceLen]
	call := false
	if !hmac.Equal(hello[8+nonceLen:], t.mac([]byte("hello"), nonceA, nonceB, me, from)) {
		if !hmac.Equal(hello[8+nonceLen:], t.mac([]byte("call"), nonceA, nonceB, me, from)) {
			return errors.New("handshake not authenticated: the peer does not hold the cluster key")
		}
		call = true
	}
	if _, err := c.Write(t.mac([]byte("welcome"), nonceA, nonceB, me, from)); err != nil {
		return nil
	}
	t.shook(shake)
	if call {
		return t.answer(c, r, nonceA, nonceB)
	}
	_ = c.SetDeadline(time.Time{})
	fromID := binary.BigEndian.Uint64(from)
	var hdr [headerLen]byte
	buf := make([]byte, 0, 64<<10)
	tag := make([]byte, macLen)
	for seq := uint64(0); ; seq++ {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return nil // the peer closed or the transport stops
		}
		n := binary.BigEndian.Uint32(hdr[:])
		if int64(n) > int64(t.cfg.MaxFrame) {
			return fmt.Errorf("node %d: frame of %d bytes exceeds the limit of %d", fromID, n, t.cfg.MaxFrame)
		}
		if cap(buf) < int(n) {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil
		}
		if _, err := io.ReadFull(r, tag); err != nil {
			return nil
		}
		if !hmac.Equal(tag, t.mac([]byte("frame"), nonceA, nonceB, u64(seq), hdr[:], buf)) {
			return fmt.Errorf("node %d: frame %d failed authentication", fromID, seq)
		}
		batch, err := DecodeBatch(buf)
		if err != nil {
			return fmt.Errorf("node %d: frame %d: %v", fromID, seq, err)
		}
		t.received.Add(uint64(len(batch)))
		if h := t.handler.Load(); h != nil {
			(*h)(fromID, batch)
		}
	}
}

// send runs peer p's sender: it connects (again after failures, with
// backoff), then writes the queued batches, merging what is queued into
// frames of up to MaxFrame bytes.
func (t *TCP) send(p *peer) {
	defer t.wg.Done()
	backoff := t.cfg.MinBackoff
	var c net.Conn
	var w *bufio.Writer
	var nonceA, nonceB []byte
	var seq uint64
	var pending []Envelope
	frame := make([]byte, 0, 64<<10)
	for {
		if len(pending) == 0 {
			select {
			case <-t.closed:
				if c != nil {
					t.untrack(c)
				}
				return
			case b := <-p.prio:
				pending = append(pending[:0], b...)
				t.sentBatches.Add(1)
			case b := <-p.queue:
				pending = append(pending[:0], b...)
				t.sentBatches.Add(1)
			}
		}
		if c == nil {
			var err error
			c, nonceA, nonceB, err = t.dial(p)
			if err != nil {
				t.cfg.Logf("transport: node %d: %v", p.id, err)
				t.dropped.Add(uint64(len(pending)))
				pending = pending[:0]
				wait := backoff/2 + time.Duration(mrand.Int64N(int64(backoff/2)+1))
				backoff = min(2*backoff, t.cfg.MaxBackoff)
				select {
				case <-t.closed:
					return
				case <-time.After(wait):
				}
				continue
			}
			backoff = t.cfg.MinBackoff
			w = bufio.NewWriterSize(c, 64<<10)
			seq = 0
		}
		// Merge everything queued now into as few frames as fit, the
		// priority queue first.
	gather:
		for len(pending) < 4096 {
			select {
			case b := <-p.prio:
				t.sentBatches.Add(1)
				pending = append(pending, b...)
				continue
			default:
			}
			select {
			case b := <-p.prio:
				t.sentBatches.Add(1)
				pending = append(pending, b...)
			case b := <-p.queue:
				t.sentBatches.Add(1)
				pending = append(pending, b...)
			default:
				break gather
			}
		}
		frames := 0
		var err error
		for len(pending) > 0 && err == nil {
			frame, pending = t.fill(frame[:0], pending, p)
			if len(frame) > 0 {
				err = t.writeFrame(w, nonceA, nonceB, seq, frame)
				seq++
				frames++
			}
		}
		if err == nil {
			err = w.Flush()
		}
		if err != nil {
			t.cfg.Logf("transport: node %d: write failed, reconnecting: %v", p.id, err)
			t.untrack(c)
			c = nil
			t.dropped.Add(uint64(len(pending)))
			pending = pending[:0]
			continue
		}
		t.sentFrames.Add(uint64(frames))
	}
}

// fill encodes as many of batch's messages as fit a frame into frame and
// returns the rest (nil when all fit). A message that alone exceeds the
// frame limit is dropped.
func (t *TCP) fill(frame []byte, batch []Envelope, p *peer) ([]byte, []Envelope) {
	size := 10
	n := 0
	for n < len(batch) {
		ms := proto.Size(batch[n].Msg) + 20
		if ms+10 > t.cfg.MaxFrame {
			t.dropped.Add(1)
			t.cfg.Logf("transport: node %d: dropped a message of %d bytes, over the frame limit", p.id, ms)
			batch = append(batch[:n:n], batch[n+1:]...)
			continue
		}
		if size+ms > t.cfg.MaxFrame {
			break
		}
		size += ms
		n++
	}
	if n == 0 {
		return frame, nil
	}
	out, err := AppendBatch(frame, batch[:n])
	if err != nil {
		t.dropped.Add(uint64(n))
		t.cfg.Logf("transport: node %d: cannot encode messages: %v", p.id, err)
		out = frame
	}
	if n == len(batch) {
		return out, nil
	}
	return out, batch[n:]
}

func (t *TCP) writeFrame(w *bufio.Writer, nonceA, nonceB []byte, seq uint64, payload []byte) error {
	var hdr [headerLen]byte
	binary.BigEndian.PutUint32(hdr[:], uint32(len(payload)))
	if _, err := w.Write(hdr[:]); err != nil {
		return err
	}
	if _, err := w.Write(payload); err != nil {
		return err
	}
	_, err := w.Write(t.mac([]byte("frame"), nonceA, nonceB, u64(seq), hdr[:], payload))
	return err
}

// dial connects to p and runs the dialer's side of the handshake.
func (t *TCP) dial(p *peer) (net.Conn, []byte, []byte, error) {
	p.mu.Lock()
	addr := p.addr
	p.mu.Unlock()
	d := net.Dialer{Timeout: t.cfg.HandshakeTimeout}
	raw, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, nil, nil, err
	}
	c := tls.Client(raw, t.clientTLS)
	if !t.track(c) {
		_ = c.Close()
		return nil, nil, nil, errors.New("transport closed")
	}
	fail := func(err error) (net.Conn, []byte, []byte, error) {
		t.untrack(c)
		return nil, nil, nil, err
	}
	_ = c.SetDeadline(time.Now().Add(t.cfg.HandshakeTimeout))
	if err := c.Handshake(); err != nil {
		return fail(fmt.Errorf("TLS handshake with %s (does it hold the same cluster key?): %v", addr, err))
	}
	ch := make([]byte, len(magic)+8+nonceLen)
	if _, err := io.ReadFull(c, ch); err != nil {
		return fail(fmt.Errorf("handshake: %v", err))
	}
	if string(ch[:len(magic)]) != magic {
		return fail(errors.New("handshake: not a parsec raft transport"))
	}
	peerID := ch[len(magic) : len(magic)+8]
	if got := binary.BigEndian.Uint64(peerID); got != p.id {
		return fail(fmt.Errorf("handshake: %s is node %d, not %d", addr, got, p.id))
	}
	nonceA := append([]byte(nil), ch[len(magic)+8:]...)
	nonceB := make([]byte, nonceLen)
	_, _ = rand.Read(nonceB)
	me := u64(t.cfg.NodeID)
	hello := append(append(append([]byte(nil), me...), nonceB...), t.mac([]byte("hello"), nonceA, nonceB, peerID, me)...)
	if _, err := c.Write(hello); err != nil {
		return fail(fmt.Errorf("handshake: %v", err))
	}
	welcome := make([]byte, macLen)
	if _, err := io.ReadFull(c, welcome); err != nil {
		return fail(fmt.Errorf("handshake rejected by the peer (does it hold the same cluster key?): %v", err))
	}
	if !hmac.Equal(welcome, t.mac([]byte("welcome"), nonceA, nonceB, peerID, me)) {
		t.rejected.Add(1)
		return fail(errors.New("handshake: the peer does not hold the cluster key"))
	}
	_ = c.SetDeadline(time.Time{})
	return c, nonceA, nonceB, nil
}

// CallHandler answers a call's request; an error is sent back as the
// call's error.
type CallHandler func(req []byte) ([]byte, error)

// SetCallHandler sets the handler of calls; without one a call fails.
func (t *TCP) SetCallHandler(h CallHandler) { t.calls.Store(&h) }

// callTimeout bounds a call on the acceptor's side, its handler included.
const callTimeout = 30 * time.Second

// MaxCallBytes bounds a call's request and response: a snapshot chunk
// (about 1 MiB) with the largest item (2 MiB) that may overflow it fits.
const MaxCallBytes = 4 << 20

// Call sends req to the node listening at addr, which must hold the same
// cluster key, and returns its handler's answer. The node's id need not be
// known: this is how a node that is not yet a member reaches one.
func (t *TCP) Call(ctx context.Context, addr string, req []byte) ([]byte, error) {
	if len(req) > MaxCallBytes {
		return nil, fmt.Errorf("transport: call of %d bytes exceeds the limit of %d", len(req), MaxCallBytes)
	}
	cc, err := t.dialCall(ctx, addr)
	if err != nil {
		return nil, err
	}
	defer cc.c.Close()
	return t.roundTrip(ctx, cc, addr, req)
}

// CallReused is Call over a connection kept from an earlier call to addr
// when there is one idle (at most maxIdleCalls per address, each idle at
// most callReuseIdle), which saves the TLS and cluster handshakes. A call
// that fails on a kept connection (the peer closed it, or restarted) does
// not wrap ErrNotDelivered: the request may have reached the peer.
func (t *TCP) CallReused(ctx context.Context, addr string, req []byte) ([]byte, error) {
	if len(req) > MaxCallBytes {
		return nil, fmt.Errorf("transport: call of %d bytes exceeds the limit of %d", len(req), MaxCallBytes)
	}
	cc := t.takeIdleCall(addr)
	if cc == nil {
		var err error
		if cc, err = t.dialCall(ctx, addr); err != nil {
			return nil, err
		}
	}
	resp, err := t.roundTrip(ctx, cc, addr, req)
	var ce *CallError
	if err != nil && !errors.As(err, &ce) {
		cc.c.Close()
		return nil, err
	}
	t.putIdleCall(addr, cc)
	return resp, err
}

// callConn is a connection for calls, past its handshakes.
type callConn struct {
	c              *tls.Conn
	r              *bufio.Reader
	nonceA, nonceB []byte
	idle           time.Time // when it was put back
}

const (
	// maxIdleCalls bounds the connections kept idle per address.
	maxIdleCalls = 16
	// callReuseIdle is how long a caller keeps an idle connection; the
	// acceptor waits callIdle, longer, for its next request.
	callReuseIdle = 20 * time.Second
	callIdle      = 60 * time.Second
)

func (t *TCP) takeIdleCall(addr string) *callConn {
	t.mu.Lock()
	defer t.mu.Unlock()
	for l := t.idleCalls[addr]; len(l) > 0; l = t.idleCalls[addr] {
		cc := l[len(l)-1]
		t.idleCalls[addr] = l[:len(l)-1]
		if time.Since(cc.idle) < callReuseIdle {
			return cc
		}
		cc.c.Close()
	}
	return nil
}

func (t *TCP) putIdleCall(addr string, cc *callConn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	select {
	case <-t.closed:
		cc.c.Close()
		return
	default:
	}
	if t.idleCalls == nil {
		t.idleCalls = map[string][]*callConn{}
	}
	if len(t.idleCalls[addr]) >= maxIdleCalls {
		cc.c.Close()
		return
	}
	cc.idle = time.Now()
	t.idleCalls[addr] = append(t.idleCalls[addr], cc)
}

// dialCall connects to addr for calls and completes both handshakes.
func (t *TCP) dialCall(ctx context.Context, addr string) (*callConn, error) {
	var d net.Dialer
	raw, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("transport: cannot reach %s: %w (%w)", addr, err, ErrNotDelivered)
	}
	c := tls.Client(raw, t.clientTLS)
	ok := false
	defer func() {
		if !ok {
			c.Close()
		}
	}()
	deadline := time.Now().Add(t.cfg.HandshakeTimeout)
	if d, ok := ctx.Deadline(); ok {
		deadline = d
	}
	_ = c.SetDeadline(deadline)
	ch := make([]byte, len(magic)+8+nonceLen)
	if err := c.Handshake(); err != nil {
		return nil, fmt.Errorf("%w (%w)", tlsError(addr, err), ErrNotDelivered)
	}
	r := bufio.NewReader(c)
	if _, err := io.ReadFull(r, ch); err != nil {
		return nil, fmt.Errorf("%w (%w)", tlsError(addr, err), ErrNotDelivered)
	}
	if string(ch[:len(magic)]) != magic {
		return nil, fmt.Errorf("transport: %s is not a parsec cluster address (%w)", addr, ErrNotDelivered)
	}
	peerID := ch[len(magic) : len(magic)+8]
	nonceA := ch[len(magic)+8:]
	nonceB := make([]byte, nonceLen)
	_, _ = rand.Read(nonceB)
	me := u64(t.cfg.NodeID)
	hello := append(append(append([]byte(nil), me...), nonceB...), t.mac([]byte("call"), nonceA, nonceB, peerID, me)...)
	if _, err := c.Write(hello); err != nil {
		return nil, fmt.Errorf("transport: %s: handshake: %v (%w)", addr, err, ErrNotDelivered)
	}
	welcome := make([]byte, macLen)
	if _, err := io.ReadFull(r, welcome); err != nil || !hmac.Equal(welcome, t.mac([]byte("welcome"), nonceA, nonceB, peerID, me)) {
		return nil, fmt.Errorf("transport: %s refused the handshake: %w (%w)", addr, ErrKeyMismatch, ErrNotDelivered)
	}
	ok = true
	return &callConn{c: c, r: r, nonceA: nonceA, nonceB: nonceB}, nil
}

// roundTrip sends a request over cc and reads its response.
func (t *TCP) roundTrip(ctx context.Context, cc *callConn, addr string, req []byte) ([]byte, error) {
	deadline := time.Now().Add(callTimeout)
	if d, ok := ctx.Deadline(); ok {
		deadline = d
	}
	_ = cc.c.SetDeadline(deadline)
	if err := t.writeCall(cc.c, "request", cc.nonceA, cc.nonceB, req); err != nil {
		return nil, fmt.Errorf("transport: %s: %v", addr, err)
	}
	resp, err := t.readCall(cc.r, "response", cc.nonceA, cc.nonceB)
	if err != nil {
		return nil, fmt.Errorf("transport: %s: %v", addr, err)
	}
	if len(resp) == 0 {
		return nil, fmt.Errorf("transport: %s: empty response", addr)
	}
	if resp[0] != 0 {
		return nil, &CallError{Msg: string(resp[1:])}
	}
	return resp[1:], nil
}

// ErrNotDelivered is wrapped by the error of a call whose request was
// never sent (the node could not be reached, or the handshake failed): the
// node's handler did not run, so the call may be sent elsewhere. A call
// that fails without it may have run on the node.
var ErrNotDelivered = errors.New("the request was not delivered")

// ErrKeyMismatch is the error of a call to a node that does not hold the
// caller's cluster key.
var ErrKeyMismatch = errors.New("the nodes do not hold the same cluster key")

// tlsError is the error of a call whose TLS handshake with addr failed
// (in TLS 1.3 the acceptor's refusal of the caller's certificate comes with
// the first read, as an alert): ErrKeyMismatch when either side refused the
// other's certificate.
func tlsError(addr string, err error) error {
	var ve *tls.CertificateVerificationError
	var oe *net.OpError
	if errors.As(err, &ve) || (errors.As(err, &oe) && oe.Op == "remote error") {
		return fmt.Errorf("transport: %s refused the TLS handshake (%v): %w", addr, err, ErrKeyMismatch)
	}
	return fmt.Errorf("transport: %s: handshake: %v", addr, err)
}

// CallError is the error a call's handler returned.
type CallError struct{ Msg string }

func (e *CallError) Error() string { return e.Msg }

// answer serves the calls of a connection on the acceptor's side: the
// first, and more as long as the caller keeps it (CallReused), each within
// callIdle of the last.
func (t *TCP) answer(c net.Conn, r *bufio.Reader, nonceA, nonceB []byte) error {
	for first := true; ; first = false {
		if first {
			_ = c.SetDeadline(time.Now().Add(callTimeout))
		} else {
			_ = c.SetDeadline(time.Now().Add(callIdle))
		}
		req, err := t.readCall(r, "request", nonceA, nonceB)
		if err != nil {
			if first {
				return err
			}
			return nil // the caller closed it, or left it idle
		}
		_ = c.SetDeadline(time.Now().Add(callTimeout))
		resp := []byte{0}
		h := t.calls.Load()
		switch out, err := (func() ([]byte, error) {
			if h == nil {
				return nil, errors.New("this node takes no calls")
			}
			return (*h)(req)
		})(); {
		case err != nil:
			resp = append([]byte{1}, err.Error()...)
		default:
			resp = append(resp, out...)
		}
		if err := t.writeCall(c, "response", nonceA, nonceB, resp); err != nil {
			return nil // the caller went away
		}
	}
}

func (t *TCP) writeCall(c net.Conn, label string, nonceA, nonceB, payload []byte) error {
	if len(payload) > MaxCallBytes+1 {
		return fmt.Errorf("call %s of %d bytes exceeds the limit", label, len(payload))
	}
	hdr := binary.BigEndian.AppendUint32(nil, uint32(len(payload)))
	msg := append(append(hdr, payload...), t.mac([]byte(label), nonceA, nonceB, hdr, payload)...)
	_, err := c.Write(msg)
	return err
}

func (t *TCP) readCall(r *bufio.Reader, label string, nonceA, nonceB []byte) ([]byte, error) {
	var hdr [headerLen]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, fmt.Errorf("call %s: %v", label, err)
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > MaxCallBytes+1 {
		return nil, fmt.Errorf("call %s of %d bytes exceeds the limit of %d", label, n, MaxCallBytes)
	}
	buf := make([]byte, int(n)+macLen)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, fmt.Errorf("call %s: %v", label, err)
	}
	if !hmac.Equal(buf[n:], t.mac([]byte(label), nonceA, nonceB, hdr[:], buf[:n])) {
		return nil, fmt.Errorf("call %s failed authentication", label)
	}
	return buf[:n], nil
}
