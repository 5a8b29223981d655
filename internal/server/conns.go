package server

import (
	"container/list"
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parsecdb/parsec/internal/accept"
)

// Connection limits: how long a client may take to send a request and to
// take a response, how long an idle connection is kept, and how many
// connections are served at once. A client that sends or reads slowly, or
// not at all, holds a goroutine, buffers and possibly a whole request or
// response in memory: these bound how long it can.
const (
	// DefaultReadTimeout bounds reading one request, headers and body, from
	// its first byte. A 2 MB item on a 35 KB/s link gets through.
	DefaultReadTimeout = 60 * time.Second
	// DefaultWriteTimeout bounds writing one response, from its first byte.
	// The time a handler takes before it writes (a query evaluating a page)
	// does not count.
	DefaultWriteTimeout = 60 * time.Second
	// DefaultIdleTimeout is how long a keep-alive connection may wait for its
	// next request. It is above the idle timeouts of the SDKs' connection
	// pools (90 s in Go, 60 s in .NET), so a pool closes its side first.
	DefaultIdleTimeout = 2 * time.Minute
	// DefaultMaxConnections is how many connections are served at once.
	DefaultMaxConnections = 4096
	// DefaultConnectionWait is how long a connection beyond MaxConnections
	// waits for a slot before it is closed unanswered.
	DefaultConnectionWait = time.Second
	// DefaultFirstRequestTimeout is how long a new connection may take to
	// send its first request's headers, TLS handshake included, before it
	// is closed. Clients send their request as soon as they connect; a
	// connection that stays silent only holds a slot.
	DefaultFirstRequestTimeout = 5 * time.Second
	// readHeaderTimeout bounds reading a request's headers.
	readHeaderTimeout = 30 * time.Second
)

// newHTTPServer returns the http.Server for handler with o's timeouts. A
// negative timeout means none.
func newHTTPServer(handler http.Handler, o Options) *http.Server {
	pos := func(d time.Duration) time.Duration { return max(d, 0) }
	hs := &http.Server{Handler: handler, ReadTimeout: pos(o.ReadTimeout), IdleTimeout: pos(o.IdleTimeout),
		ReadHeaderTimeout: readHeaderTimeout, ConnContext: withLimitConn}
	if o.ReadTimeout > 0 && o.ReadTimeout < readHeaderTimeout {
		hs.ReadHeaderTimeout = o.ReadTimeout
	}
	if o.IdleTimeout < 0 {
		// net/http takes a zero IdleTimeout to mean ReadTimeout.
		hs.IdleTimeout = 1 << 62 // 146 years
	}
	if o.WriteTimeout > 0 {
		// Not http.Server.WriteTimeout: that one runs from the end of the
		// request's headers, so it would also bound the handler's work.
		hs.Handler = writeDeadline{handler, o.WriteTimeout}
	}
	hs.Handler = markSpoken{hs.Handler}
	return hs
}

// limitConnKey is the context key of a request's *limitConn.
type limitConnKey struct{}

// withLimitConn puts c in its connection's context when it holds a slot of
// a limitListener (under TLS or not), for markSpoken.
func withLimitConn(ctx context.Context, c net.Conn) context.Context {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	if lc, ok := c.(*limitConn); ok {
		return context.WithValue(ctx, limitConnKey{}, lc)
	}
	return ctx
}

// markSpoken records that a connection has sent a request's headers (see
// limitListener): net/http calls the handler once they are read.
type markSpoken struct{ h http.Handler }

func (m markSpoken) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if lc, ok := r.Context().Value(limitConnKey{}).(*limitConn); ok {
		lc.spoke()
	}
	m.h.ServeHTTP(w, r)
}

// writeDeadline sets each response's write deadline when the handler starts
// writing it, d from then. net/http's ReadTimeout already leaves a handler
// alone once the request body is read (the deadline is cleared when the
// server starts watching the connection for a client hang-up).
type writeDeadline struct {
	h http.Handler
	d time.Duration
}

func (wd writeDeadline) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	dw := &deadlineWriter{ResponseWriter: w, d: wd.d}
	if r.Header.Get("Expect") != "" {
		// net/http answers "100 Continue" when the body is first read, under
		// the deadline the connection's previous response left.
		_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
	}
	wd.h.ServeHTTP(dw, r)
	dw.arm() // a handler that wrote nothing: net/http writes the response now
}

// deadlineWriter arms the write deadline on the first WriteHeader or Write.
type deadlineWriter struct {
	http.ResponseWriter
	d     time.Duration
	armed bool
}

func (w *deadlineWriter) arm() {
	if !w.armed {
		w.armed = true
		_ = http.NewResponseController(w.ResponseWriter).SetWriteDeadline(time.Now().Add(w.d))
	}
}

func (w *deadlineWriter) WriteHeader(code int) {
	w.arm()
	w.ResponseWriter.WriteHeader(code)
}

func (w *deadlineWriter) Write(b []byte) (int, error) {
	w.arm()
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// limitListener serves at most max connections at once. A connection
// accepted beyond that waits, unanswered, for one of them to close, at most
// wait; then it is closed. At most max connections wait; more are closed at
// once. A waiting connection costs a file descriptor and a queue entry, not a
// goroutine, and the listener keeps accepting, so the kernel's backlog does
// not fill and a refused client learns at once.
//
// Slots are kept for clients that send requests. A connection that has not
// yet sent its first request's headers (a silent one) is closed after
// firstRequest (when positive), and each connection that must wait for a
// slot closes the oldest silent one to make room: connections that never
// speak cannot keep a client out, however many there are. A connection
// that has sent a request keeps its slot until it closes or its idle
// timeout.
//
// One goroutine accepts from the wrapped listener; Accept hands out the
// connections that hold a slot. A slot is released when its connection is
// closed.
type limitListener struct {
	net.Listener
	wait         time.Duration
	firstRequest time.Duration
	ready        chan net.Conn // connections holding a slot, for Accept; never full
	done         chan struct{} // closed when accepting stopped, with err set
	err          error

	mu     sync.Mutex
	free   int         // slots not held
	queue  []waiter    // connections waiting for a slot, oldest first
	expiry *time.Timer // closes waiters whose wait is over
	silent list.List   // the silent *limitConns holding slots, oldest first
	closed bool
}

type waiter struct {
	c     net.Conn
	until time.Time
}

func newLimitListener(ln net.Listener, max int, wait, firstRequest time.Duration) *limitListener {
	l := &limitListener{Listener: ln, wait: wait, firstRequest: firstRequest, ready: make(chan net.Conn, max),
		done: make(chan struct{}), free: max}
	l.expiry = time.AfterFunc(time.Hour, l.expire)
	l.expiry.Stop()
	go l.acceptLoop()
	return l
}

func (l *limitListener) acceptLoop() {
	var retry accept.Backoff
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			if retry.Retry(err) {
				continue
			}
			l.err = err
			close(l.done)
			return
		}
		var evict *limitConn
		l.mu.Lock()
		switch {
		case l.closed:
			c.Close()
		case l.free > 0:
			l.free--
			l.grantLocked(c)
		case len(l.queue) < cap(l.ready):
			l.queue = append(l.queue, waiter{c, time.Now().Add(l.wait)})
			if len(l.queue) == 1 {
				l.expiry.Reset(l.wait)
			}
			for e := l.silent.Front(); e != nil && evict == nil; e = l.silent.Front() {
				if lc := l.silent.Remove(e).(*limitConn); !lc.spoken.Load() {
					evict = lc // else it is speaking now
				}
			}
		default:
			c.Close()
		}
		l.mu.Unlock()
		if evict != nil {
			evict.Close() // its slot goes to the oldest waiter
		}
	}
}

// grantLocked gives c a slot, as a silent connection. The caller holds l.mu.
func (l *limitListener) grantLocked(c net.Conn) {
	lc := &limitConn{Conn: c, l: l}
	lc.silent = l.silent.PushBack(lc)
	if l.firstRequest > 0 {
		lc.timer = time.AfterFunc(l.firstRequest, lc.closeIfSilent)
	}
	l.ready <- lc // at most max are out: never blocks
}

// Accept returns the next connection that holds a slot.
func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ready:
		return c, nil
	case <-l.done:
		return nil, l.err
	}
}

// Close stops accepting and closes the connections not yet handed out.
func (l *limitListener) Close() error {
	err := l.Listener.Close()
	l.mu.Lock()
	l.closed = true
	var out []net.Conn
	for _, w := range l.queue {
		out = append(out, w.c)
	}
	l.queue = nil
	for len(l.ready) > 0 {
		out = append(out, <-l.ready)
	}
	l.mu.Unlock()
	for _, c := range out {
		c.Close() // a *limitConn's Close releases its slot under l.mu
	}
	return err
}

// release gives a closed connection's slot to the oldest waiter, or frees it.
func (l *limitListener) release(c *limitConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.silent.Remove(c.silent) // a no-op if it spoke or was evicted
	if c.timer != nil {
		c.timer.Stop()
	}
	now := time.Now()
	for len(l.queue) > 0 && !l.closed {
		w := l.queue[0]
		l.queue[0] = waiter{}
		l.queue = l.queue[1:]
		if now.Before(w.until) {
			l.grantLocked(w.c)
			return
		}
		w.c.Close()
	}
	l.free++
}

// expire closes the waiters whose wait is over.
func (l *limitListener) expire() {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	for len(l.queue) > 0 && !now.Before(l.queue[0].until) {
		l.queue[0].c.Close()
		l.queue[0] = waiter{}
		l.queue = l.queue[1:]
	}
	if len(l.queue) > 0 {
		l.expiry.Reset(l.queue[0].until.Sub(now))
	}
}

// limitConn is a connection holding a slot of a limitListener.
type limitConn struct {
	net.Conn
	l    *limitListener
	once sync.Once

	spoken atomic.Bool
	// silent is the connection's entry in l.silent, and timer closes it
	// after l.firstRequest; both under l.mu.
	silent *list.Element
	timer  *time.Timer
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c) })
	return err
}

// spoke records that c has sent a request's headers: from now on it is
// never closed for being silent.
func (c *limitConn) spoke() {
	if c.spoken.Load() {
		return
	}
	c.spoken.Store(true)
	c.l.mu.Lock()
	c.l.silent.Remove(c.silent)
	if c.timer != nil {
		c.timer.Stop()
	}
	c.l.mu.Unlock()
}

// closeIfSilent closes c if it has not sent a request yet.
func (c *limitConn) closeIfSilent() {
	c.l.mu.Lock()
	silent := !c.spoken.Load()
	if silent {
		c.l.silent.Remove(c.silent)
	}
	c.l.mu.Unlock()
	if silent {
		c.Close()
	}
}

// CloseWrite lets net/http half-close before it closes, so that a client
// reads an error response before the connection goes.
func (c *limitConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (o *Options) setConnDefaults() {
	if o.ReadTimeout == 0 {
		o.ReadTimeout = DefaultReadTimeout
	}
	if o.WriteTimeout == 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.MaxConnections == 0 {
		o.MaxConnections = DefaultMaxConnections
	}
	if o.ConnectionWait <= 0 {
		o.ConnectionWait = DefaultConnectionWait
	}
	if o.FirstRequestTimeout == 0 {
		o.FirstRequestTimeout = DefaultFirstRequestTimeout
	}
}
