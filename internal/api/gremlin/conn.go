package gremlin

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/parsecdb/parsec/internal/activityid"
	"github.com/parsecdb/parsec/internal/api/gremlin/graph"
	"github.com/parsecdb/parsec/internal/engine"
)

// conn is one WebSocket connection: its authentication state, the graph
// container its user name selected, and the requests in flight.
type conn struct {
	s      *Server
	ws     *websocket.Conn
	ctx    context.Context
	cancel context.CancelFunc

	wmu sync.Mutex // orders frame writes

	mu       sync.Mutex
	authed   bool
	readOnly bool
	db, coll string
	// pending holds the requests answered with the authentication
	// challenge, oldest first; a successful authentication runs one.
	pending  []pendingRequest
	inFlight int
	handlers sync.WaitGroup
}

type pendingRequest struct {
	mime string
	req  *Request
}

func newConn(s *Server, ws *websocket.Conn) *conn {
	ctx, cancel := context.WithCancel(context.Background())
	return &conn{s: s, ws: ws, ctx: ctx, cancel: cancel}
}

// close closes the socket, which ends serve's read loop, and cancels the
// requests in flight.
func (c *conn) close() {
	c.cancel()
	c.ws.Close()
}

// serve reads frames until the client leaves, sends nothing for
// IdleTimeout, sends a frame over MaxMessageBytes (closed with 1009,
// message too big) or the server closes; then it waits for the requests
// in flight.
func (c *conn) serve() {
	defer func() {
		c.cancel()
		c.handlers.Wait()
		c.ws.Close()
	}()
	c.ws.SetReadLimit(c.s.cfg.MaxMessageBytes)
	for {
		if c.s.cfg.IdleTimeout > 0 {
			c.ws.SetReadDeadline(c.s.cfg.Now().Add(c.s.cfg.IdleTimeout))
		}
		typ, frame, err := c.ws.ReadMessage()
		if err != nil {
			var ne interface{ Timeout() bool }
			if errors.As(err, &ne) && ne.Timeout() {
				c.closeWith(websocket.CloseGoingAway, fmt.Sprintf("idle for %v: the connection is closed", c.s.cfg.IdleTimeout))
			}
			return
		}
		c.handle(frame, typ == websocket.TextMessage)
	}
}

// closeWith sends a close frame (best effort).
func (c *conn) closeWith(code int, reason string) {
	if len(reason) > 120 {
		reason = reason[:120]
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(time.Second))
}

// handle decodes one frame and routes it by op. A panic (a bug in the
// decoder or in authentication) is answered 500 and the connection goes
// on.
func (c *conn) handle(frame []byte, text bool) {
	var mime, id string
	defer func() {
		if r := recover(); r != nil {
			activity := activityid.New()
			c.s.cfg.Logf("gremlin: BUG: panic reading a request (activity id %s): %v\n%s", activity, r, debug.Stack())
			if mime == "" {
				mime = "application/json"
			}
			c.replyActivity(mime, &Response{RequestID: id}, fail(StatusServerError, statusCosmosInternal, "internal error reading the request (activity id %s)", activity), 0, 0, activity, nil)
		}
	}()
	mime, req, err := c.s.cfg.Codec.Decode(frame, text)
	if req != nil {
		id = req.ID
	}
	if err != nil {
		id := ""
		if req != nil {
			id = req.ID
		}
		c.reply(mime, &Response{RequestID: id}, fail(StatusMalformedRequest, statusCosmosBadRequest, "cannot read the request: %v", err), 0, 0)
		return
	}
	switch req.Op {
	case "authentication":
		c.authenticate(mime, req)
	case "eval", "bytecode":
		if err := checkProcessor(req); err != nil {
			c.reply(mime, &Response{RequestID: req.ID}, err, 0, 0)
			return
		}
		c.mu.Lock()
		authed := c.authed
		var dropped *pendingRequest
		if !authed {
			if len(c.pending) >= c.s.cfg.MaxInFlight {
				dropped = &c.pending[0]
				c.pending = c.pending[1:]
			}
			c.pending = append(c.pending, pendingRequest{mime, req})
		}
		c.mu.Unlock()
		if dropped != nil {
			c.reply(dropped.mime, &Response{RequestID: dropped.req.ID}, fail(StatusUnauthorized, statusCosmosUnauthorized,
				"too many requests waiting for authentication on this connection (at most %d): authenticate before sending more", c.s.cfg.MaxInFlight), 0, 0)
		}
		if !authed {
			// The SASL challenge: the client answers with an
			// authentication request, after which the server runs this
			// one (TinkerPop's SaslAuthenticationHandler).
			c.send(mime, &Response{RequestID: req.ID, Code: StatusAuthenticate, Attributes: map[string]any{}})
			return
		}
		c.dispatch(mime, req)
	default:
		c.reply(mime, &Response{RequestID: req.ID}, fail(StatusMalformedRequest, statusCosmosBadRequest,
			"the op %q is not supported: send eval (a script) or bytecode (processor traversal)", req.Op), 0, 0)
	}
}

// checkProcessor refuses sessions, which Cosmos DB does not offer, and
// processors that do not go with the op.
func checkProcessor(req *Request) *failure {
	switch {
	case req.Op == "eval" && req.Processor == "session":
		return fail(StatusInvalidArguments, statusCosmosBadRequest, "sessions are not supported: send requests without a session (processor \"\")")
	case req.Op == "eval" && req.Processor != "":
		return fail(StatusInvalidArguments, statusCosmosBadRequest, "the processor %q does not evaluate scripts: send eval requests with processor \"\"", req.Processor)
	case req.Op == "bytecode" && req.Processor != "traversal":
		return fail(StatusInvalidArguments, statusCosmosBadRequest, "bytecode requests need processor \"traversal\", not %q", req.Processor)
	case req.Op == "eval" && req.Language != "" && req.Language != "gremlin-groovy" && req.Language != "gremlin-lang":
		return fail(StatusInvalidArguments, statusCosmosBadRequest, "the language %q is not supported: use gremlin-groovy or gremlin-lang (both parse the same grammar, without lambdas)", req.Language)
	}
	return nil
}

// authenticate checks a SASL PLAIN response: the user name
// /dbs/<database>/colls/<graph> selects the graph container, the password
// is the primary or read-only key. On success it runs the request the
// challenge answered; on failure it answers that request 401.
func (c *conn) authenticate(mime string, req *Request) {
	c.mu.Lock()
	target, found := (*Request)(nil), false
	tmime := mime
	for i, p := range c.pending {
		if p.req.ID == req.ID {
			target, tmime, found = p.req, p.mime, true
			c.pending = append(c.pending[:i], c.pending[i+1:]...)
			break
		}
	}
	if !found && len(c.pending) > 0 {
		// gremlin-go answers the challenge with a request of a new id
		// (driver/request.go makeBasicAuthRequest), so the oldest
		// challenged request is the one to run.
		target, tmime = c.pending[0].req, c.pending[0].mime
		c.pending = c.pending[1:]
	}
	c.mu.Unlock()
	answer := req.ID
	if target != nil {
		answer = target.ID
	}
	db, coll, readOnly, f := c.s.checkCredentials(req.SASL)
	if f == nil {
		f = c.s.checkGraph(db, coll)
	}
	if f != nil {
		c.reply(tmime, &Response{RequestID: answer}, f, 0, 0)
		return
	}
	c.mu.Lock()
	c.authed, c.db, c.coll, c.readOnly = true, db, coll, readOnly
	c.mu.Unlock()
	if target == nil {
		c.send(mime, &Response{RequestID: req.ID, Code: StatusNoContent, Attributes: c.attributes(activityid.New(), 0, 0, 0, 0, StatusNoContent)})
		return
	}
	c.dispatch(tmime, target)
}

// checkCredentials decodes a SASL PLAIN response ("\0user\0password",
// base64) and checks the password against the keys.
func (s *Server) checkCredentials(sasl string) (db, coll string, readOnly bool, f *failure) {
	raw, err := base64.StdEncoding.DecodeString(sasl)
	if err != nil {
		return "", "", false, fail(StatusUnauthorized, statusCosmosUnauthorized, "the sasl argument is not base64: %v", err)
	}
	parts := bytes.SplitN(raw, []byte{0}, 3)
	if len(parts) != 3 {
		return "", "", false, fail(StatusUnauthorized, statusCosmosUnauthorized, "the sasl argument is not a SASL PLAIN response (authorization id, user name and password separated by NUL bytes)")
	}
	user, password := string(parts[1]), string(parts[2])
	db, coll, ok := parseUser(user)
	if !ok {
		return "", "", false, fail(StatusUnauthorized, statusCosmosUnauthorized, "the user name %q does not name a graph: use /dbs/<database>/colls/<graph>", truncate(user, 200))
	}
	key, err := base64.StdEncoding.DecodeString(password)
	switch {
	case err == nil && subtle.ConstantTimeCompare(key, s.cfg.PrimaryKey) == 1:
		return db, coll, false, nil
	case err == nil && len(s.cfg.ReadOnlyKey) > 0 && subtle.ConstantTimeCompare(key, s.cfg.ReadOnlyKey) == 1:
		return db, coll, true, nil
	}
	// Gremlin Server answers bad credentials 401 UNAUTHORIZED.
	return "", "", false, fail(StatusUnauthorized, statusCosmosUnauthorized, "Username and/or password are incorrect: the password must be the account's primary or read-only key")
}

// parseUser reads /dbs/<database>/colls/<graph> (the leading slash is
// optional).
func parseUser(user string) (db, coll string, ok bool) {
	p := strings.Split(strings.TrimPrefix(user, "/"), "/")
	if len(p) != 4 || p[0] != "dbs" || p[2] != "colls" || p[1] == "" || p[3] == "" {
		return "", "", false
	}
	return p[1], p[3], true
}

// checkGraph checks that the graph container exists and can hold a graph:
// Cosmos forbids /id and /label as a graph's partition key
// (gremlin/partitioning.md).
func (s *Server) checkGraph(db, coll string) *failure {
	c, err := s.cfg.Engine.Container(db, coll)
	if err != nil {
		if errors.Is(err, engine.ErrNotFound) {
			return fail(StatusServerError, statusCosmosNotFound, "Resource Not Found: the graph dbs/%s/colls/%s does not exist; create the database and a container with a partition key (such as /pk) through the NoSQL API first", truncate(db, 255), truncate(coll, 255))
		}
		return classify(err)
	}
	for _, p := range c.Info().PartitionKey.Paths {
		if p == "/id" || p == "/label" {
			return fail(StatusServerError, statusCosmosBadRequest, "the container dbs/%s/colls/%s is partitioned on %s, which a graph cannot use: vertices' id and label are not properties; create the graph with another partition key path", db, coll, p)
		}
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// dispatch runs an authenticated request in its own goroutine, unless the
// connection already runs MaxInFlight.
func (c *conn) dispatch(mime string, req *Request) {
	c.mu.Lock()
	if c.inFlight >= c.s.cfg.MaxInFlight {
		c.mu.Unlock()
		f := fail(StatusServerError, statusCosmosThrottled, "too many requests in flight on this connection: at most %d run at once; wait for answers or open another connection", c.s.cfg.MaxInFlight)
		f.retryAfter = time.Second
		c.reply(mime, &Response{RequestID: req.ID}, f, 0, 0)
		return
	}
	c.inFlight++
	db, coll, readOnly := c.db, c.coll, c.readOnly
	c.handlers.Add(1)
	c.mu.Unlock()
	var once sync.Once
	// release ends the request's count in flight just before its last
	// frame is written, so that a client that waits for an answer before
	// sending its next request never finds the connection full.
	release := func() {
		once.Do(func() {
			c.mu.Lock()
			c.inFlight--
			c.mu.Unlock()
		})
	}
	go func() {
		defer c.handlers.Done()
		defer release()
		c.run(mime, req, db, coll, readOnly, release)
	}()
}

// run evaluates one request and sends its answers.
func (c *conn) run(mime string, req *Request, db, coll string, readOnly bool, release func()) {
	start := c.s.cfg.Now()
	activity := activityid.New()
	var ms *meteredStore
	defer func() {
		if r := recover(); r != nil {
			c.s.cfg.Logf("gremlin: BUG: panic serving request %s: %v\n%s", req.ID, r, debug.Stack())
			var charge float64
			if ms != nil {
				charge, _ = ms.totals()
			}
			f := fail(StatusServerError, statusCosmosInternal, "internal error serving the request (activity id %s): %v", activity, r)
			c.replyActivity(mime, &Response{RequestID: req.ID}, f, charge, c.s.cfg.Now().Sub(start), activity, release)
		}
	}()
	results, ms, err := c.evaluate(req, db, coll, readOnly)
	var charge float64
	if ms != nil {
		charge, _ = ms.totals()
	}
	if err != nil {
		c.replyActivity(mime, &Response{RequestID: req.ID}, err, charge, c.s.cfg.Now().Sub(start), activity, release)
		return
	}
	c.sendResults(mime, req, results, charge, start, activity, release)
}

// evaluate parses (or takes) the traversal, opens the graph store and runs
// the traversal under the timeout.
func (c *conn) evaluate(req *Request, db, coll string, readOnly bool) ([]graph.Value, *meteredStore, error) {
	cfg := &c.s.cfg
	t := req.Traversal
	if req.Op == "eval" {
		if len(req.Script) > cfg.MaxScriptBytes {
			return nil, nil, fail(StatusInvalidArguments, statusCosmosTooLarge, "the script is %d bytes, over the limit of %d", len(req.Script), cfg.MaxScriptBytes)
		}
		if strings.TrimSpace(req.Script) == "" {
			return nil, nil, fail(StatusInvalidArguments, statusCosmosBadRequest, "the request has no script (args.gremlin)")
		}
		var err error
		if t, err = cfg.Evaluator.Parse(req.Script, req.Bindings); err != nil {
			return nil, nil, err
		}
	}
	if t == nil {
		return nil, nil, fail(StatusInvalidArguments, statusCosmosBadRequest, "the request has no traversal (args.gremlin)")
	}
	if req.BatchSize < 0 {
		return nil, nil, fail(StatusInvalidArguments, statusCosmosBadRequest, "batchSize must be positive, not %d", req.BatchSize)
	}
	timeout := cfg.Timeout
	if req.Timeout > 0 && time.Duration(req.Timeout)*time.Millisecond < timeout {
		timeout = time.Duration(req.Timeout) * time.Millisecond
	}
	ctx, cancel := context.WithTimeout(c.ctx, timeout)
	defer cancel()
	st, err := cfg.OpenStore(ctx, cfg.Engine, db, coll)
	if err != nil {
		return nil, nil, err
	}
	ms := &meteredStore{Store: st, readOnly: readOnly}
	results, err := cfg.Evaluator.Run(ctx, t, ms, req.Script)
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	return results, ms, err
}

// sendResults sends the results in batches: 206 PARTIAL_CONTENT for all
// but the last, 200 SUCCESS for the last, or 204 NO_CONTENT for none. The
// request's charge is counted in the first batch's x-ms-request-charge
// (the traversal ran before it); x-ms-total-request-charge carries it on
// every batch.
func (c *conn) sendResults(mime string, req *Request, results []graph.Value, charge float64, start time.Time, activity string, release func()) {
	bs := c.s.cfg.BatchSize
	if req.BatchSize > 0 {
		bs = min(req.BatchSize, MaxBatchSize)
	}
	if len(results) == 0 {
		total := c.s.cfg.Now().Sub(start)
		release()
		c.send(mime, &Response{RequestID: req.ID, Code: StatusNoContent, Traversers: req.Op == "bytecode",
			Attributes: c.attributes(activity, charge, charge, total, total, StatusSuccess)})
		return
	}
	last := c.s.cfg.Now()
	for i := 0; i < len(results); i += bs {
		end := min(i+bs, len(results))
		code := StatusPartialContent
		if end == len(results) {
			code = StatusSuccess
		}
		batchCharge := 0.0
		if i == 0 {
			batchCharge = charge
		}
		now := c.s.cfg.Now()
		r := &Response{RequestID: req.ID, Code: code, Data: results[i:end], Traversers: req.Op == "bytecode",
			Attributes: c.attributes(activity, batchCharge, charge, now.Sub(last), now.Sub(start), StatusSuccess)}
		last = now
		if code == StatusSuccess {
			release()
		}
		if !c.send(mime, r) {
			return
		}
	}
}

// attributes are the status attributes Cosmos DB sends on every response
// (gremlin/headers.md): charges in request units, server times in
// milliseconds, the activity id and the storage status.
func (c *conn) attributes(activity string, charge, total float64, batch, elapsed time.Duration, status int) map[string]any {
	return map[string]any{
		AttrRequestCharge:      charge,
		AttrTotalRequestCharge: total,
		AttrServerTime:         ms(batch),
		AttrTotalServerTime:    ms(elapsed),
		AttrStatusCode:         int64(status),
		AttrActivityID:         activity,
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// reply answers a request with an error.
func (c *conn) reply(mime string, r *Response, err error, charge float64, elapsed time.Duration) {
	c.replyActivity(mime, r, err, charge, elapsed, activityid.New(), nil)
}

// replyActivity answers a request with an error under its activity id;
// release, if not nil, is called before the frame is written.
func (c *conn) replyActivity(mime string, r *Response, err error, charge float64, elapsed time.Duration, activity string, release func()) {
	f := classify(err)
	r.Code, r.Message, r.Data = f.code, f.message, nil
	r.Attributes = c.attributes(activity, charge, charge, elapsed, elapsed, f.cosmos)
	if f.substatus != 0 {
		r.Attributes[AttrSubstatusCode] = int64(f.substatus)
	}
	if f.retryAfter > 0 {
		r.Attributes[AttrRetryAfter] = timeSpan(f.retryAfter)
	}
	if release != nil {
		release()
	}
	c.send(mime, r)
}

// send encodes and writes one response; it reports whether it was
// written. A response the codec cannot encode is answered 599
// SERVER_ERROR_SERIALIZATION instead.
func (c *conn) send(mime string, r *Response) bool {
	frame, err := c.s.cfg.Codec.Encode(mime, r)
	if err != nil {
		e := &Response{RequestID: r.RequestID, Code: StatusSerializationError, Attributes: r.Attributes,
			Message: fmt.Sprintf("cannot encode the response as %s: %v", mime, err)}
		if r.Attributes != nil {
			r.Attributes[AttrStatusCode] = int64(statusCosmosInternal)
		}
		if frame, err = c.s.cfg.Codec.Encode(mime, e); err != nil {
			c.s.cfg.Logf("gremlin: cannot encode an error response as %s: %v", mime, err)
			c.close()
			return false
		}
	}
	typ := websocket.TextMessage
	if strings.Contains(mime, "graphbinary") {
		typ = websocket.BinaryMessage
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.ws.SetWriteDeadline(time.Now().Add(c.s.cfg.WriteTimeout))
	if err := c.ws.WriteMessage(typ, frame); err != nil {
		c.close()
		return false
	}
	return true
}
