package mongo

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/wiremessage"

	"github.com/parsecdb/parsec/internal/accept"
	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/gateway"
)

// Defaults of Config.
const (
	DefaultMaxConnections = 1000
	DefaultIdleTimeout    = 30 * time.Minute
	DefaultCursorTimeout  = 10 * time.Minute
	DefaultMaxCursors     = 10_000
	DefaultMaxSessions    = 10_000
	// DefaultMaxCursorBytes is ten cursors of mongod's 100 MB
	// blocking-sort limit (maxBufferedBytes).
	DefaultMaxCursorBytes = 10 * maxBufferedBytes

	// Defaults of the limits before authentication (see Config).
	// DefaultAuthIdleTimeout is three of the drivers' heartbeats
	// (heartbeatFrequencyMS, 10 s by default in the server discovery and
	// monitoring specification), which their monitoring connections send
	// without authenticating.
	DefaultAuthIdleTimeout                = 30 * time.Second
	DefaultMessageTimeout                 = 10 * time.Second
	DefaultMaxUnauthenticatedMessageBytes = 64 << 10
	DefaultAuthFailureDelay               = time.Second
)

// Config configures a Mongo API server. Zero values take the defaults.
type Config struct {
	Engine *engine.Engine
	// Gateway runs the writes on the partitions' leaders and prepares the
	// reads (internal/gateway); nil: a single node's, over Engine.
	Gateway *gateway.Gateway
	// Consistency is the account's consistency level (Strong,
	// BoundedStaleness, Session, ConsistentPrefix, Eventual; empty:
	// Session): the level of reads whose readConcern is local, available
	// or absent (consistency.go).
	Consistency string
	// MaxConnections is how many connections are served at once; one more
	// is closed at once.
	MaxConnections int
	// IdleTimeout closes a connection that sends nothing for that long.
	IdleTimeout time.Duration
	// CursorTimeout drops a cursor not used for that long; MaxCursors caps
	// the open cursors (a find that would open one more fails), and
	// MaxCursorBytes the documents they keep in memory between getMores
	// (their BSON size; one cursor keeps at most 100 MB, as mongod's
	// blocking sort). Users share both caps: see quota.go.
	CursorTimeout  time.Duration
	MaxCursors     int
	MaxCursorBytes int64
	// Logger receives why connections were closed. Default: stderr.
	Logger *log.Logger
	// Now is the clock ($currentDate, localTime). Default time.Now.
	Now func() time.Time
	// PrimaryKey and ReadOnlyKey (base64, as the server was given them),
	// when PrimaryKey is set, make every connection authenticate with
	// SCRAM-SHA-256 as AccountName (default DefaultAccountName) with the
	// primary key, or as AccountName + "-readonly" with the read-only key,
	// which runs no command that writes (see auth.go).
	AccountName             string
	PrimaryKey, ReadOnlyKey string
	// RequireAuth refuses every command but the handshake to a connection
	// that has not authenticated. Without it (the emulator key on
	// loopback), such connections run everything, and those that did
	// authenticate are held to their user's rights.
	RequireAuth bool
	// TransactionLifetime aborts a transaction idle for that long.
	// Default DefaultTransactionLifetime.
	TransactionLifetime time.Duration
	// MaxSessions caps the sessions with a transaction the server keeps
	// (a transaction that would start one more fails with code 261
	// TooManyLogicalSessions); users share it as the cursor caps.
	MaxSessions int

	// Limits on connections that have not authenticated, with RequireAuth
	// and a key. AuthIdleTimeout closes one that sends nothing for that
	// long, in place of IdleTimeout. MessageTimeout closes one whose
	// message does not arrive whole within that long of its first bytes.
	// MaxUnauthenticatedMessageBytes caps one message (a handshake needs
	// far less; a longer message closes the connection).
	// MaxUnauthenticatedConnections caps how many are held at once, as
	// does MaxConnections all of them: one more closes the oldest
	// connection that has not authenticated, so that those who have keep
	// their slots and newcomers can still authenticate. Defaults
	// DefaultAuthIdleTimeout, DefaultMessageTimeout,
	// DefaultMaxUnauthenticatedMessageBytes and half of MaxConnections.
	AuthIdleTimeout                time.Duration
	MessageTimeout                 time.Duration
	MaxUnauthenticatedMessageBytes int
	MaxUnauthenticatedConnections  int
	// AuthFailureDelay delays the reply to a failed authentication by
	// that much times the connection's failures so far (at most 10 s).
	// Default DefaultAuthFailureDelay.
	AuthFailureDelay time.Duration
	// sleep waits out that delay. Default time.Sleep (tests record it).
	sleep func(time.Duration)
}

// Server serves the MongoDB wire protocol on Parsec's engine.
type Server struct {
	cfg     Config
	eng     *engine.Engine
	gw      *gateway.Gateway
	level   gateway.Level // Config.Consistency
	tokens  sessionTokens // the causal sessions' tokens (consistency.go)
	opTimes opTimes       // operationTime of the replies
	cursors *cursorSet
	txns    *sessionTable
	connID  atomic.Int32
	started time.Time
	auth    *authenticator // nil: no authentication
	initErr error          // why New could not set the server up; Serve returns it

	mu     sync.Mutex
	lns    map[net.Listener]bool
	conns  map[net.Conn]*slot
	open   int // connections holding a slot
	unauth int // of which not authenticated yet
	seq    uint64
	closed bool
	wg     sync.WaitGroup
	stop   chan struct{}
}

// slot is a connection's place among the open ones.
type slot struct {
	seq     uint64 // order of acceptance
	unauth  bool   // counted in Server.unauth
	evicted bool   // closed for a newcomer; its slot is already free
}

// New returns a server on cfg.Engine; call Serve to accept connections.
func New(cfg Config) *Server {
	if cfg.MaxConnections <= 0 {
		cfg.MaxConnections = DefaultMaxConnections
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.CursorTimeout <= 0 {
		cfg.CursorTimeout = DefaultCursorTimeout
	}
	if cfg.MaxCursors <= 0 {
		cfg.MaxCursors = DefaultMaxCursors
	}
	if cfg.MaxCursorBytes <= 0 {
		cfg.MaxCursorBytes = DefaultMaxCursorBytes
	}
	if cfg.Logger == nil {
		cfg.Logger = log.New(os.Stderr, "parsec mongo: ", log.LstdFlags)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.TransactionLifetime <= 0 {
		cfg.TransactionLifetime = DefaultTransactionLifetime
	}
	if cfg.MaxSessions <= 0 {
		cfg.MaxSessions = DefaultMaxSessions
	}
	if cfg.AuthIdleTimeout <= 0 {
		cfg.AuthIdleTimeout = DefaultAuthIdleTimeout
	}
	if cfg.MessageTimeout <= 0 {
		cfg.MessageTimeout = DefaultMessageTimeout
	}
	if cfg.MaxUnauthenticatedMessageBytes <= 0 {
		cfg.MaxUnauthenticatedMessageBytes = DefaultMaxUnauthenticatedMessageBytes
	}
	if cfg.MaxUnauthenticatedConnections <= 0 {
		cfg.MaxUnauthenticatedConnections = max(cfg.MaxConnections/2, 1)
	}
	if cfg.AuthFailureDelay <= 0 {
		cfg.AuthFailureDelay = DefaultAuthFailureDelay
	}
	if cfg.sleep == nil {
		cfg.sleep = time.Sleep
	}
	s := &Server{cfg: cfg, eng: cfg.Engine, gw: cfg.Gateway,
		lns: map[net.Listener]bool{}, conns: map[net.Conn]*slot{}, stop: make(chan struct{})}
	s.started = cfg.Now()
	if s.gw == nil {
		s.gw = gateway.New(cfg.Engine, nil)
	}
	s.level = gateway.Session
	if l, ok := gateway.ParseLevel(cfg.Consistency); ok {
		s.level = l
	} else if cfg.Consistency != "" && s.initErr == nil {
		s.initErr = fmt.Errorf("unknown consistency level %q", cfg.Consistency)
	}
	if cfg.AccountName == "" {
		cfg.AccountName = DefaultAccountName
		s.cfg.AccountName = cfg.AccountName
	}
	s.auth, s.initErr = newAuthenticator(cfg.AccountName, cfg.PrimaryKey, cfg.ReadOnlyKey)
	s.cursors = newCursorSet(cfg.MaxCursors, cfg.MaxCursorBytes, cfg.CursorTimeout, cfg.Now)
	s.txns = newSessionTable(cfg.MaxSessions, cfg.TransactionLifetime, cfg.Now)
	s.wg.Add(1)
	go s.reapCursors()
	return s
}

func (s *Server) reapCursors() {
	defer s.wg.Done()
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.cursors.expire()
			s.txns.expire()
		}
	}
}

// Serve accepts connections on ln until Close; it returns nil after Close.
func (s *Server) Serve(ln net.Listener) error {
	if s.initErr != nil {
		return s.initErr
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errors.New("mongo server closed")
	}
	s.lns[ln] = true
	s.mu.Unlock()
	var retry accept.Backoff
	for {
		c, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed {
				return nil
			}
			if retry.Retry(err) {
				continue
			}
			return err
		}
		sl, ok, closed := s.admit(c)
		if closed {
			c.Close()
			return nil
		}
		if !ok {
			s.cfg.Logger.Printf("closing connection from %s: %d connections are open (the limit)", c.RemoteAddr(), s.cfg.MaxConnections)
			c.Close()
			continue
		}
		go s.serveConn(c, sl)
	}
}

// admit gives a new connection a slot, when one is free or when the
// oldest connection that has not authenticated can give up its own, which
// is then closed; ok is false when none can.
func (s *Server) admit(c net.Conn) (sl *slot, ok, closed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, false, true
	}
	gated := s.auth != nil && s.cfg.RequireAuth
	if gated && (s.open >= s.cfg.MaxConnections || s.unauth >= s.cfg.MaxUnauthenticatedConnections) {
		var oldest net.Conn
		for nc, o := range s.conns {
			if o.unauth && !o.evicted && (oldest == nil || o.seq < s.conns[oldest].seq) {
				oldest = nc
			}
		}
		if oldest != nil {
			o := s.conns[oldest]
			o.evicted, o.unauth = true, false
			s.open--
			s.unauth--
			s.cfg.Logger.Printf("closing connection from %s: not authenticated, and its slot is given to a new connection (%d connections have not authenticated)", oldest.RemoteAddr(), s.unauth+1)
			oldest.Close()
		}
	}
	if s.open >= s.cfg.MaxConnections {
		return nil, false, false
	}
	s.seq++
	sl = &slot{seq: s.seq, unauth: gated}
	s.conns[c] = sl
	s.open++
	if gated {
		s.unauth++
	}
	s.wg.Add(1)
	return sl, true, false
}

// authenticated frees the connection's place among those that have not
// authenticated.
func (s *Server) authenticated(c *conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.slot.unauth {
		c.slot.unauth = false
		s.unauth--
	}
}

// release frees a closed connection's slot.
func (s *Server) release(nc net.Conn, sl *slot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, nc)
	if sl.evicted {
		return
	}
	s.open--
	if sl.unauth {
		s.unauth--
	}
}

// Close stops accepting, closes every connection and waits for their
// goroutines.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	for ln := range s.lns {
		ln.Close()
	}
	for c := range s.conns {
		c.Close()
	}
	close(s.stop)
	s.mu.Unlock()
	s.wg.Wait()
	return nil
}

// conn is one client connection's state.
type conn struct {
	s      *Server
	nc     net.Conn
	slot   *slot
	id     int32
	remote string
	auth   connAuth
}

func (s *Server) serveConn(nc net.Conn, sl *slot) {
	defer func() {
		nc.Close()
		s.release(nc, sl)
		s.wg.Done()
	}()
	c := &conn{s: s, nc: nc, slot: sl, id: s.connID.Add(1), remote: nc.RemoteAddr().String()}
	r := bufio.NewReaderSize(nc, 64<<10)
	w := bufio.NewWriterSize(nc, 64<<10)
	var out []byte
	for {
		m, err := c.read(r)
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				s.cfg.Logger.Printf("closing connection %d from %s: %v", c.id, c.remote, err)
			}
			return
		}
		nc.SetReadDeadline(time.Time{})
		out = c.handle(m, out[:0])
		if len(out) == 0 {
			continue
		}
		nc.SetWriteDeadline(time.Now().Add(5 * time.Minute))
		_, werr := w.Write(out)
		if werr == nil {
			werr = w.Flush()
		}
		if werr != nil {
			s.cfg.Logger.Printf("closing connection %d from %s: cannot write the reply: %v", c.id, c.remote, werr)
			return
		}
		if cap(out) > 1<<20 {
			out = nil
		}
	}
}

// read reads the next message. Before authentication (handshakeOnly) the
// connection may wait AuthIdleTimeout for it instead of IdleTimeout, and
// the message must be at most MaxUnauthenticatedMessageBytes and arrive
// whole within MessageTimeout of its first bytes.
func (c *conn) read(r *bufio.Reader) (*Message, error) {
	cfg := &c.s.cfg
	gated := c.handshakeOnly()
	idle, maxBytes := cfg.IdleTimeout, int32(MaxMessageBytes)
	if gated {
		idle, maxBytes = cfg.AuthIdleTimeout, int32(min(cfg.MaxUnauthenticatedMessageBytes, MaxMessageBytes))
	}
	c.nc.SetReadDeadline(time.Now().Add(idle))
	if _, err := r.Peek(1); err != nil {
		if isTimeout(err) {
			if gated {
				return nil, fmt.Errorf("sent nothing for %v without authenticating", idle)
			}
			return nil, fmt.Errorf("idle for %v", idle)
		}
		return nil, err
	}
	if gated {
		c.nc.SetReadDeadline(time.Now().Add(cfg.MessageTimeout))
	}
	m, err := ReadMessage(r, maxBytes, gated)
	if isTimeout(err) {
		if gated {
			return nil, fmt.Errorf("a message did not arrive whole within %v", cfg.MessageTimeout)
		}
		return nil, fmt.Errorf("idle for %v", idle)
	}
	c.nc.SetReadDeadline(time.Time{})
	return m, err
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// handle answers one message; it returns the reply's bytes (none for
// moreToCome).
func (c *conn) handle(m *Message, out []byte) []byte {
	doc := c.run(m)
	raw, merr := bson.Marshal(doc)
	if merr != nil {
		raw, _ = bson.Marshal(errorReply(newErr(1, "InternalError", "cannot encode the reply: %v", merr)))
	}
	if len(raw) > MaxDocumentBytes+16<<10 {
		raw, _ = bson.Marshal(errorReply(newErr(10334, "BSONObjectTooLarge", "the reply would be %d bytes, over the %d-byte limit", len(raw), MaxDocumentBytes)))
	}
	if m.MoreToCome {
		return out
	}
	if m.OpCode == opQuery {
		return appendOpReply(out, wiremessage.NextRequestID(), m.RequestID, raw)
	}
	return appendOpMsg(out, wiremessage.NextRequestID(), m.RequestID, raw)
}

// run runs a command and returns its reply; a panic in a handler is
// caught and answered as an internal error (the connection survives).
func (c *conn) run(m *Message) (reply bson.D) {
	defer func() {
		if p := recover(); p != nil {
			c.s.cfg.Logger.Printf("command from %s panicked: %v\n%s", c.remote, p, debug.Stack())
			reply = errorReply(newErr(1, "InternalError", "internal error"))
		}
	}()
	if m.refused != nil {
		return errorReply(m.refused)
	}
	cmd := bson.Raw(m.Command)
	if m.OpCode == opQuery {
		return c.runQuery(m.Namespace, cmd)
	}
	return c.dispatch(cmd)
}

func errorReply(e *cmdError) bson.D {
	out := bson.D{{Key: "ok", Value: 0.0}, {Key: "errmsg", Value: e.Msg}, {Key: "code", Value: e.Code}, {Key: "codeName", Value: e.CodeName}}
	if len(e.Labels) > 0 {
		labels := make(bson.A, len(e.Labels))
		for i, l := range e.Labels {
			labels[i] = l
		}
		out = append(out, bson.E{Key: "errorLabels", Value: labels})
	}
	return out
}
