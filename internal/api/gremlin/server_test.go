package gremlin

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/parsecdb/parsec/internal/api/gremlin/graph"
	"github.com/parsecdb/parsec/internal/api/gremlin/lang"
	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/epk"
	"github.com/parsecdb/parsec/internal/storage"
)

// These tests check the protocol layer: authentication, batching, status
// codes and attributes, limits. A JSON codec and a scripted evaluator
// stand in for the real serializers and the traversal machine (which have
// their own tests, and which the end-to-end tests under test/gremlin drive
// through real drivers); the engine, the keys and the sockets are real.

// jsonCodec reads and writes plain JSON text frames.
type jsonCodec struct{}

type jsonRequest struct {
	RequestID string `json:"requestId"`
	Op        string `json:"op"`
	Processor string `json:"processor"`
	Args      struct {
		Gremlin   string         `json:"gremlin"`
		Bindings  map[string]any `json:"bindings"`
		Language  string         `json:"language"`
		BatchSize int            `json:"batchSize"`
		SASL      string         `json:"sasl"`
		Timeout   int64          `json:"evaluationTimeout"`
	} `json:"args"`
}

type jsonResponse struct {
	RequestID string `json:"requestId"`
	Status    struct {
		Code       int            `json:"code"`
		Message    string         `json:"message"`
		Attributes map[string]any `json:"attributes"`
	} `json:"status"`
	Result struct {
		Data []any `json:"data"`
	} `json:"result"`
}

func (jsonCodec) Decode(frame []byte, text bool) (string, *Request, error) {
	const mime = "application/json"
	if !text {
		return mime, nil, errors.New("binary frames are not JSON")
	}
	if string(frame) == "panic" {
		panic("a bug in the decoder")
	}
	var r jsonRequest
	if err := json.Unmarshal(frame, &r); err != nil {
		return mime, nil, err
	}
	return mime, &Request{ID: r.RequestID, Op: r.Op, Processor: r.Processor, Script: r.Args.Gremlin, Bindings: r.Args.Bindings,
		Language: r.Args.Language, BatchSize: r.Args.BatchSize, SASL: r.Args.SASL, Timeout: r.Args.Timeout}, nil
}

func (jsonCodec) Encode(mime string, r *Response) ([]byte, error) {
	for _, v := range r.Data {
		if _, ok := v.(chan int); ok {
			return nil, errors.New("a channel is not a graph value")
		}
	}
	var out jsonResponse
	out.RequestID = r.RequestID
	out.Status.Code, out.Status.Message, out.Status.Attributes = r.Code, r.Message, r.Attributes
	out.Result.Data = r.Data
	return json.Marshal(out)
}

// scripted evaluates the test scripts: "range N" returns 0..N-1; "write"
// applies one mutation; "panic", "sleep" (until the deadline), "block"
// (until unblocked), "throttle", "conflict", "bad" (an evaluation error)
// and "chan" (a value no codec encodes).
type scripted struct {
	unblock chan struct{}
}

func (scripted) Parse(script string, _ map[string]any) (*lang.Traversal, error) {
	f := strings.Fields(script)
	t := &lang.Traversal{Steps: []lang.Step{{Name: f[0]}}}
	for _, a := range f[1:] {
		t.Steps[0].Args = append(t.Steps[0].Args, a)
	}
	return t, nil
}

func (e scripted) Run(ctx context.Context, t *lang.Traversal, s graph.Store, _ string) ([]graph.Value, error) {
	st := t.Steps[0]
	if _, op, err := s.Vertices(ctx, graph.VertexQuery{}); err != nil || op.Charge == 0 {
		return nil, fmt.Errorf("store read: %v, charge %v", err, op.Charge)
	}
	switch st.Name {
	case "range":
		n, _ := strconv.Atoi(st.Args[0].(string))
		out := make([]graph.Value, n)
		for i := range out {
			out[i] = int64(i)
		}
		return out, nil
	case "write":
		if _, err := s.Apply(ctx, []graph.Mutation{{Kind: graph.AddVertex, Vertex: &graph.Vertex{ID: "a"}}}); err != nil {
			return nil, err
		}
		return []graph.Value{"written"}, nil
	case "panic":
		panic("a bug in the evaluator")
	case "sleep":
		<-ctx.Done()
		return nil, ctx.Err()
	case "block":
		select {
		case <-e.unblock:
		case <-ctx.Done():
		}
		return []graph.Value{"unblocked"}, nil
	case "throttle":
		return nil, fmt.Errorf("cannot read vertices: %w", &engine.ThrottledError{RetryAfter: 250 * time.Millisecond, RUs: 400})
	case "conflict":
		return nil, fmt.Errorf("cannot add vertex: %w: id a", engine.ErrConflict)
	case "bad":
		return nil, errors.New("the step foo() is not supported")
	case "chan":
		return []graph.Value{make(chan int)}, nil
	}
	return nil, fmt.Errorf("unknown test script %q", st.Name)
}

// countingStore charges 2.5 RU per read and counts the writes that reach it.
type countingStore struct{ writes *atomic.Int64 }

func (countingStore) PartitionKey() string { return "pk" }
func (countingStore) Vertices(context.Context, graph.VertexQuery) ([]*graph.Vertex, graph.StoreOp, error) {
	return nil, graph.StoreOp{Partitions: 1, Charge: 2.5}, nil
}
func (countingStore) Edges(context.Context, graph.EdgeQuery) ([]*graph.Edge, graph.StoreOp, error) {
	return nil, graph.StoreOp{Partitions: 1, Charge: 2.5}, nil
}
func (c countingStore) Apply(_ context.Context, ms []graph.Mutation) (graph.StoreOp, error) {
	c.writes.Add(int64(len(ms)))
	return graph.StoreOp{Partitions: 1, Charge: 10}, nil
}

var (
	testPrimary  = []byte("primary key of the gremlin protocol tests.")
	testReadOnly = []byte("read-only key of the gremlin protocol tests")
)

type fixture struct {
	srv     *Server
	addr    string
	writes  *atomic.Int64
	unblock chan struct{}
}

func start(t *testing.T, mod func(*Config)) *fixture {
	t.Helper()
	st, err := storage.Open(storage.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.Open(st, engine.Options{NoThrottle: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.CreateDatabase("db", engine.Throughput{}); err != nil {
		t.Fatal(err)
	}
	for id, path := range map[string]string{"g": "/pk", "byid": "/id"} {
		if _, err := eng.CreateContainer("db", engine.ContainerSpec{ID: id, PartitionKey: epk.Definition{Kind: "Hash", Version: 2, Paths: []string{path}}}, engine.Throughput{RUs: 400}); err != nil {
			t.Fatal(err)
		}
	}
	f := &fixture{writes: new(atomic.Int64), unblock: make(chan struct{})}
	cfg := Config{Engine: eng, PrimaryKey: testPrimary, ReadOnlyKey: testReadOnly, Codec: jsonCodec{}, Evaluator: scripted{f.unblock},
		OpenStore: func(_ context.Context, e *engine.Engine, db, coll string) (graph.Store, error) {
			if _, err := e.Container(db, coll); err != nil {
				return nil, err
			}
			return countingStore{f.writes}, nil
		},
		Logf: log.New(io.Discard, "", 0).Printf}
	if mod != nil {
		mod(&cfg)
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		close(f.unblock)
		srv.Close()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		eng.Close()
		st.Close()
	})
	f.srv, f.addr = srv, ln.Addr().String()
	return f
}

type client struct {
	t  *testing.T
	ws *websocket.Conn
	n  int
}

func (f *fixture) dial(t *testing.T, path string) *client {
	t.Helper()
	ws, _, err := websocket.DefaultDialer.Dial("ws://"+f.addr+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return &client{t: t, ws: ws}
}

func (c *client) send(req map[string]any) string {
	c.t.Helper()
	c.n++
	id := fmt.Sprintf("00000000-0000-4000-8000-%012d", c.n)
	if _, ok := req["requestId"]; !ok {
		req["requestId"] = id
	}
	b, _ := json.Marshal(req)
	if err := c.ws.WriteMessage(websocket.TextMessage, b); err != nil {
		c.t.Fatal(err)
	}
	return req["requestId"].(string)
}

func (c *client) eval(script string, args map[string]any) string {
	if args == nil {
		args = map[string]any{}
	}
	args["gremlin"] = script
	return c.send(map[string]any{"op": "eval", "processor": "", "args": args})
}

func (c *client) auth(user string, key []byte, id string) string {
	sasl := base64.StdEncoding.EncodeToString([]byte("\x00" + user + "\x00" + base64.StdEncoding.EncodeToString(key)))
	req := map[string]any{"op": "authentication", "processor": "", "args": map[string]any{"sasl": sasl, "saslMechanism": "PLAIN"}}
	if id != "" {
		req["requestId"] = id
	}
	return c.send(req)
}

func (c *client) read() jsonResponse {
	c.t.Helper()
	c.ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, b, err := c.ws.ReadMessage()
	if err != nil {
		c.t.Fatalf("reading a response: %v", err)
	}
	var r jsonResponse
	if err := json.Unmarshal(b, &r); err != nil {
		c.t.Fatalf("response %s: %v", b, err)
	}
	return r
}

func (c *client) expect(id string, code, cosmos int) jsonResponse {
	c.t.Helper()
	r := c.read()
	if r.RequestID != id || r.Status.Code != code || r.Status.Attributes[AttrStatusCode] != float64(cosmos) {
		c.t.Fatalf("got request %s status %d x-ms-status-code %v (%q), want request %s status %d x-ms-status-code %d",
			r.RequestID, r.Status.Code, r.Status.Attributes[AttrStatusCode], r.Status.Message, id, code, cosmos)
	}
	for _, a := range []string{AttrRequestCharge, AttrTotalRequestCharge, AttrActivityID, AttrServerTime, AttrTotalServerTime} {
		if _, ok := r.Status.Attributes[a]; !ok {
			c.t.Fatalf("response %d has no %s: %v", code, a, r.Status.Attributes)
		}
	}
	return r
}

// login authenticates through the challenge of a first request.
func (c *client) login(key []byte) {
	c.t.Helper()
	id := c.eval("range 1", nil)
	if r := c.read(); r.Status.Code != StatusAuthenticate || r.RequestID != id {
		c.t.Fatalf("first request: got %d for %s, want the 407 challenge for %s", r.Status.Code, r.RequestID, id)
	}
	c.auth("/dbs/db/colls/g", key, id)
	c.expect(id, StatusSuccess, 200)
}

// TestAuthentication: the first request of a connection is challenged
// (407); a wrong key is 401 under the challenged request's id, and the
// connection may try again; the right key runs the challenged request.
// The challenge and the replay follow TinkerPop's SaslAuthenticationHandler;
// the user name selecting the graph is Cosmos's
// (azure-databases-docs gremlin/quickstart-nodejs.md).
func TestAuthentication(t *testing.T) {
	f := start(t, nil)
	c := f.dial(t, "/gremlin")
	id := c.eval("range 3", nil)
	if r := c.read(); r.Status.Code != StatusAuthenticate || r.RequestID != id {
		t.Fatalf("got %d for %s, want 407 for %s", r.Status.Code, r.RequestID, id)
	}
	c.auth("/dbs/db/colls/g", []byte("not the key"), id)
	c.expect(id, StatusUnauthorized, 401)
	c.auth("dbs/db/g", testPrimary, id)
	c.expect(id, StatusUnauthorized, 401) // not a graph's name
	c.auth("/dbs/db/colls/nope", testPrimary, id)
	c.expect(id, StatusServerError, 404)
	c.auth("/dbs/db/colls/byid", testPrimary, id)
	c.expect(id, StatusServerError, 400) // partitioned on /id
	// The challenged request was answered by each failure; a new one is
	// challenged again and run by the authentication that succeeds, which
	// has an id of its own as gremlin-go sends it.
	id = c.eval("range 3", nil)
	if r := c.read(); r.Status.Code != StatusAuthenticate {
		t.Fatalf("got %d, want 407", r.Status.Code)
	}
	c.auth("/dbs/db/colls/g", testPrimary, "")
	r := c.expect(id, StatusSuccess, 200)
	if len(r.Result.Data) != 3 || r.Status.Attributes[AttrRequestCharge] != 2.5 {
		t.Fatalf("got %v with attributes %v, want 3 results charged 2.5", r.Result.Data, r.Status.Attributes)
	}
	// Once authenticated, requests run at once, on any path.
	id = c.eval("range 1", nil)
	c.expect(id, StatusSuccess, 200)
	other := f.dial(t, "/")
	other.login(testPrimary)
}

// TestReadOnlyKey: the read-only key reads but a traversal that writes is
// refused (401 UNAUTHORIZED, x-ms-status-code 403 as Cosmos answers a
// write with the read-only key) before anything reaches the store.
func TestReadOnlyKey(t *testing.T) {
	f := start(t, nil)
	c := f.dial(t, "/")
	c.login(testReadOnly)
	id := c.eval("write", nil)
	r := c.expect(id, StatusUnauthorized, 403)
	if !strings.Contains(r.Status.Message, "read-only") || f.writes.Load() != 0 {
		t.Fatalf("message %q, %d writes reached the store", r.Status.Message, f.writes.Load())
	}
	w := f.dial(t, "/")
	w.login(testPrimary)
	id = w.eval("write", nil)
	r = w.expect(id, StatusSuccess, 200)
	if f.writes.Load() != 1 || r.Status.Attributes[AttrTotalRequestCharge] != 12.5 {
		t.Fatalf("%d writes, charge %v; want 1 write charged 2.5 + 10", f.writes.Load(), r.Status.Attributes[AttrTotalRequestCharge])
	}
}

// TestBatches: results come batchSize at a time (Gremlin Server's
// resultIterationBatchSize, 64, by default), 206 then 200; no result is
// 204. The charge is counted once, in the first batch.
func TestBatches(t *testing.T) {
	f := start(t, nil)
	c := f.dial(t, "/")
	c.login(testPrimary)
	check := func(script string, args map[string]any, sizes ...int) {
		t.Helper()
		id := c.eval(script, args)
		for i, n := range sizes {
			code := StatusPartialContent
			if i == len(sizes)-1 {
				code = StatusSuccess
			}
			r := c.expect(id, code, 200)
			if len(r.Result.Data) != n {
				t.Fatalf("%s: batch %d has %d results, want %d", script, i, len(r.Result.Data), n)
			}
			wantCharge := 0.0
			if i == 0 {
				wantCharge = 2.5
			}
			if r.Status.Attributes[AttrRequestCharge] != wantCharge || r.Status.Attributes[AttrTotalRequestCharge] != 2.5 {
				t.Fatalf("%s: batch %d attributes %v", script, i, r.Status.Attributes)
			}
			if i == 0 && r.Result.Data[0] != float64(0) || i == len(sizes)-1 && r.Result.Data[n-1] != float64(sum(sizes)-1) {
				t.Fatalf("%s: batch %d is %v", script, i, r.Result.Data)
			}
		}
	}
	check("range 150", nil, 64, 64, 22)
	check("range 25", map[string]any{"batchSize": 10}, 10, 10, 5)
	check("range 64", nil, 64)
	id := c.eval("range 0", nil)
	if r := c.expect(id, StatusNoContent, 200); r.Result.Data != nil {
		t.Fatalf("204 with data %v", r.Result.Data)
	}
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

// TestErrors: each failure is answered with its status, the connection
// goes on serving.
func TestErrors(t *testing.T) {
	f := start(t, func(c *Config) { c.MaxScriptBytes = 100 })
	c := f.dial(t, "/")
	c.login(testPrimary)

	id := c.eval("throttle", nil)
	r := c.expect(id, StatusServerError, 429)
	if r.Status.Attributes[AttrRetryAfter] != "00:00:00.2500000" || r.Status.Attributes[AttrSubstatusCode] != float64(3200) {
		t.Fatalf("429 attributes %v", r.Status.Attributes)
	}
	c.expect(c.eval("conflict", nil), StatusServerError, 409)
	c.expect(c.eval("bad", nil), StatusEvaluationError, 400)
	c.expect(c.eval("sleep", map[string]any{"evaluationTimeout": 30}), StatusServerTimeout, 408)
	r = c.expect(c.eval("panic", nil), StatusServerError, 500)
	if !strings.Contains(r.Status.Message, "internal error") {
		t.Fatalf("panic answered %q", r.Status.Message)
	}
	c.expect(c.eval("chan", nil), StatusSerializationError, 500)
	c.expect(c.eval("range 1 "+strings.Repeat("x", 100), nil), StatusInvalidArguments, 413)
	c.expect(c.eval("range 1", map[string]any{"language": "gremlin-python"}), StatusInvalidArguments, 400)
	c.expect(c.send(map[string]any{"op": "eval", "processor": "session", "args": map[string]any{"gremlin": "range 1"}}), StatusInvalidArguments, 400)
	c.expect(c.send(map[string]any{"op": "close", "processor": "session"}), StatusMalformedRequest, 400)
	if err := c.ws.WriteMessage(websocket.TextMessage, []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	c.expect("", StatusMalformedRequest, 400)
	if err := c.ws.WriteMessage(websocket.TextMessage, []byte("panic")); err != nil {
		t.Fatal(err)
	}
	c.expect("", StatusServerError, 500)
	c.expect(c.eval("range 2", nil), StatusSuccess, 200)
}

// TestInFlightLimit: a connection runs at most MaxInFlight requests at
// once; one more is answered 429 with a retry-after.
func TestInFlightLimit(t *testing.T) {
	f := start(t, func(c *Config) { c.MaxInFlight = 1 })
	c := f.dial(t, "/")
	c.login(testPrimary)
	blocked := c.eval("block", nil)
	// The server counts a request in flight as it reads it, before its
	// goroutine starts, so the second is refused whatever the schedule.
	r := c.expect(c.eval("range 1", nil), StatusServerError, 429)
	if r.Status.Attributes[AttrRetryAfter] == nil {
		t.Fatalf("no retry-after: %v", r.Status.Attributes)
	}
	f.unblock <- struct{}{}
	c.expect(blocked, StatusSuccess, 200)
}

// TestPendingLimit: a connection keeps at most MaxInFlight requests
// waiting for authentication; the oldest beyond is answered 401, the
// others run once it authenticates.
func TestPendingLimit(t *testing.T) {
	f := start(t, func(c *Config) { c.MaxInFlight = 2 })
	c := f.dial(t, "/")
	first, second, third := c.eval("range 1", nil), c.eval("range 2", nil), c.eval("range 3", nil)
	for _, id := range []string{first, second} {
		if r := c.read(); r.Status.Code != StatusAuthenticate || r.RequestID != id {
			t.Fatalf("got %d for %s, want 407 for %s", r.Status.Code, r.RequestID, id)
		}
	}
	c.expect(first, StatusUnauthorized, 401)
	if r := c.read(); r.Status.Code != StatusAuthenticate || r.RequestID != third {
		t.Fatalf("got %d for %s, want 407 for %s", r.Status.Code, r.RequestID, third)
	}
	c.auth("/dbs/db/colls/g", testPrimary, third)
	if r := c.expect(third, StatusSuccess, 200); len(r.Result.Data) != 3 {
		t.Fatalf("third: %v", r.Result.Data)
	}
	c.auth("/dbs/db/colls/g", testPrimary, "")
	if r := c.expect(second, StatusSuccess, 200); len(r.Result.Data) != 2 {
		t.Fatalf("second: %v", r.Result.Data)
	}
}

// TestConnectionLimits: the connection cap refuses the upgrade with 503;
// an idle connection is closed; a frame over MaxMessageBytes closes the
// connection with 1009 (message too big).
func TestConnectionLimits(t *testing.T) {
	f := start(t, func(c *Config) {
		c.MaxConnections = 1
		c.IdleTimeout = 300 * time.Millisecond
		c.MaxMessageBytes = 1000
	})
	c := f.dial(t, "/")
	_, resp, err := websocket.DefaultDialer.Dial("ws://"+f.addr+"/", nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("second connection: %v, %v; want 503", err, resp)
	}
	c.ws.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, _, err = c.ws.ReadMessage()
	if !websocket.IsCloseError(err, websocket.CloseGoingAway) {
		t.Fatalf("idle connection: %v, want closed as going away", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for f.srv.Connections() != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	c = f.dial(t, "/")
	c.eval(strings.Repeat("x", 2000), nil)
	c.ws.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, _, err = c.ws.ReadMessage()
	if !websocket.IsCloseError(err, websocket.CloseMessageTooBig) {
		t.Fatalf("oversized frame: %v, want closed with 1009", err)
	}
}

func TestTimeSpan(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                       "00:00:00.0000000",
		250 * time.Millisecond:  "00:00:00.2500000",
		3950 * time.Millisecond: "00:00:03.9500000",
		61*time.Minute + time.Second + 1234567*time.Microsecond/1000: "01:01:01.0012345",
	} {
		if got := timeSpan(d); got != want {
			t.Errorf("timeSpan(%v) = %s, want %s", d, got, want)
		}
	}
}
