package gremlin

import (
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/parsecdb/parsec/internal/engine"
)

// Defaults of Config.
const (
	// DefaultMaxConnections caps the WebSocket connections served at once.
	DefaultMaxConnections = 1000
	// DefaultMaxInFlight caps the requests one connection runs at once.
	DefaultMaxInFlight = 16
	// DefaultMaxMessageBytes caps one request frame: a 64 KB script with
	// its bindings, or a bytecode traversal adding a vertex of Cosmos's
	// largest item (2 MB).
	DefaultMaxMessageBytes = 4 << 20
	// DefaultMaxScriptBytes is Cosmos's script size limit (64 KB,
	// gremlin/limits.md).
	DefaultMaxScriptBytes = 64 << 10
	// DefaultTimeout is Cosmos's traversal timeout (30 s, limits.md).
	DefaultTimeout = 30 * time.Second
	// DefaultIdleTimeout is Cosmos's idle WebSocket connection limit (1
	// hour, limits.md).
	DefaultIdleTimeout = time.Hour
	// DefaultBatchSize is Gremlin Server's resultIterationBatchSize: a
	// request without batchSize gets its results 64 at a time.
	DefaultBatchSize = 64
	// MaxBatchSize bounds a request's batchSize, so that one frame stays
	// bounded whatever the client asks.
	MaxBatchSize = 10_000
	// DefaultWriteTimeout bounds writing one response frame to a client
	// that does not read.
	DefaultWriteTimeout = 30 * time.Second
	// DefaultHandshakeTimeout bounds reading the WebSocket upgrade request.
	DefaultHandshakeTimeout = 10 * time.Second
)

// Config configures a Gremlin server. Zero values take the defaults
// (Codec: WireCodec, Evaluator: Machine, OpenStore: OpenEngineStore);
// Engine and PrimaryKey are required.
type Config struct {
	Engine *engine.Engine
	// PrimaryKey and ReadOnlyKey are the account keys (decoded). A client
	// authenticates with SASL PLAIN and one of them, base64, as password;
	// the read-only key runs traversals that do not write.
	PrimaryKey, ReadOnlyKey []byte
	Codec                   Codec
	Evaluator               Evaluator
	OpenStore               OpenStore

	MaxConnections  int
	MaxInFlight     int
	MaxMessageBytes int64
	MaxScriptBytes  int
	// Timeout bounds one traversal; a request's evaluationTimeout may
	// shorten it, never lengthen it.
	Timeout time.Duration
	// IdleTimeout closes a connection that sends nothing for that long.
	IdleTimeout  time.Duration
	BatchSize    int
	WriteTimeout time.Duration
	// Now is the clock (default time.Now); it stamps the deadlines and
	// the server times.
	Now func() time.Time
	// Logf logs what the server cannot tell a client (default log.Printf).
	Logf func(format string, args ...any)
}

func (c *Config) setDefaults() {
	if c.MaxConnections == 0 {
		c.MaxConnections = DefaultMaxConnections
	}
	if c.MaxInFlight == 0 {
		c.MaxInFlight = DefaultMaxInFlight
	}
	if c.MaxMessageBytes == 0 {
		c.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if c.MaxScriptBytes == 0 {
		c.MaxScriptBytes = DefaultMaxScriptBytes
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.BatchSize == 0 {
		c.BatchSize = DefaultBatchSize
	}
	if c.WriteTimeout == 0 {
		c.WriteTimeout = DefaultWriteTimeout
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Codec == nil {
		c.Codec = WireCodec{}
	}
	if c.Evaluator == nil {
		c.Evaluator = Machine{}
	}
	if c.OpenStore == nil {
		c.OpenStore = OpenEngineStore
	}
	if c.Logf == nil {
		c.Logf = log.Printf
	}
}

// Server serves the Gremlin Server protocol over WebSocket. It is safe for
// concurrent use.
type Server struct {
	cfg      Config
	http     *http.Server
	upgrader websocket.Upgrader
	slots    chan struct{}

	mu     sync.Mutex
	conns  map[*conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// New returns a server; Serve starts it.
func New(cfg Config) (*Server, error) {
	cfg.setDefaults()
	switch {
	case cfg.Engine == nil:
		return nil, errors.New("gremlin: Config.Engine is required")
	case len(cfg.PrimaryKey) == 0:
		return nil, errors.New("gremlin: Config.PrimaryKey is required")
	case cfg.MaxConnections < 0 || cfg.MaxInFlight < 0 || cfg.MaxMessageBytes < 0 || cfg.MaxScriptBytes < 0 || cfg.BatchSize < 0:
		return nil, errors.New("gremlin: limits cannot be negative")
	case cfg.BatchSize > MaxBatchSize:
		return nil, fmt.Errorf("gremlin: the batch size cannot exceed %d", MaxBatchSize)
	}
	s := &Server{cfg: cfg, slots: make(chan struct{}, cfg.MaxConnections), conns: map[*conn]struct{}{}}
	s.upgrader = websocket.Upgrader{
		HandshakeTimeout: DefaultHandshakeTimeout,
		// Gremlin Server does not check the Origin header and drivers
		// outside browsers do not send one; every request must still
		// authenticate with an account key.
		CheckOrigin: func(*http.Request) bool { return true },
		Error: func(w http.ResponseWriter, r *http.Request, status int, reason error) {
			http.Error(w, "this is a Gremlin (WebSocket) endpoint: "+reason.Error(), status)
		},
	}
	s.http = &http.Server{Handler: s, ReadHeaderTimeout: DefaultHandshakeTimeout, ErrorLog: log.New(logWriter{s.cfg.Logf}, "", 0)}
	return s, nil
}

type logWriter struct{ logf func(string, ...any) }

func (w logWriter) Write(p []byte) (int, error) {
	w.logf("gremlin: %s", p)
	return len(p), nil
}

// Serve accepts connections on ln until Close. It returns nil after Close.
func (s *Server) Serve(ln net.Listener) error {
	err := s.http.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// ServeHTTP upgrades a request on any path to a Gremlin WebSocket
// connection (Cosmos serves "/", TinkerPop "/gremlin").
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	select {
	case s.slots <- struct{}{}:
	default:
		// Refused before the upgrade, so the client sees an HTTP status
		// rather than a connection closed without a word.
		http.Error(w, fmt.Sprintf("too many Gremlin connections: the server serves at most %d at once; retry later", s.cfg.MaxConnections), http.StatusServiceUnavailable)
		return
	}
	defer func() { <-s.slots }()
	ws, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader answered
	}
	c := newConn(s, ws)
	if !s.track(c, true) {
		ws.Close()
		return
	}
	defer s.track(c, false)
	c.serve()
}

// track adds or removes a live connection; it refuses to add one after
// Close.
func (s *Server) track(c *conn, add bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if add {
		if s.closed {
			return false
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		return true
	}
	delete(s.conns, c)
	s.wg.Done()
	return true
}

// Close stops accepting connections, closes the open ones (cancelling
// their requests) and waits for their handlers to return.
func (s *Server) Close() error {
	err := s.http.Close()
	s.mu.Lock()
	s.closed = true
	for c := range s.conns {
		c.close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return err
}

// Connections returns how many WebSocket connections are open.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}
