package gremlin

import (
	"context"

	"github.com/parsecdb/parsec/internal/api/gremlin/graph"
	"github.com/parsecdb/parsec/internal/api/gremlin/lang"
	"github.com/parsecdb/parsec/internal/engine"
)

// A Request is one request message as the codec decoded it.
type Request struct {
	// ID is the request id (a UUID in text form); responses repeat it.
	ID string
	// Op is "eval", "bytecode", "authentication" (or another op, which
	// is refused); Processor is "", "session" or "traversal".
	Op, Processor string
	// Script, Language and Bindings are an eval request's arguments.
	Script   string
	Language string
	Bindings map[string]any
	// Traversal is a bytecode request's traversal.
	Traversal *lang.Traversal
	// SASL is an authentication request's sasl argument, base64 as sent.
	SASL string
	// BatchSize is the batchSize argument (0: not given).
	BatchSize int
	// Timeout is the evaluationTimeout argument in milliseconds (0: not
	// given).
	Timeout int64
}

// A Response is one response message.
type Response struct {
	RequestID  string
	Code       int
	Message    string
	Attributes map[string]any
	// Data is the batch of results, nil when the response carries none.
	Data []graph.Value
	// Traversers says the results answer a bytecode request: the codecs
	// that distinguish them send each as a traverser with its bulk.
	Traversers bool
}

// A Codec reads request frames and writes response frames. A binary
// frame starts with its mime type (one length byte, then the name); a
// text frame is JSON. Decode returns the mime type whenever it could read
// it, even with an error, so that the error can be answered in it.
// Implementations must be safe for concurrent use.
type Codec interface {
	Decode(frame []byte, text bool) (mime string, req *Request, err error)
	Encode(mime string, r *Response) ([]byte, error)
}

// An Evaluator parses scripts and runs traversals over a graph store.
type Evaluator interface {
	// Parse parses a script with its bindings.
	Parse(script string, bindings map[string]any) (*lang.Traversal, error)
	// Run runs a traversal and returns its results in order; script is
	// the request's script ("" for bytecode), for executionProfile().
	Run(ctx context.Context, t *lang.Traversal, s graph.Store, script string) ([]graph.Value, error)
}

// OpenStore opens the graph store of container coll of database db for
// one request.
type OpenStore func(ctx context.Context, e *engine.Engine, db, coll string) (graph.Store, error)
