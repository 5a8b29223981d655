package gremlin

import (
	"errors"
	"fmt"

	"github.com/parsecdb/parsec/internal/api/gremlin/gio"
)

// WireCodec is the Codec of the server: package gio's serializers
// (GraphSON 2.0 answered as Cosmos answers it, GraphSON 3.0, GraphBinary
// 1.0).
type WireCodec struct {
	// Limits bound the request decoder (zero: gio.DefaultLimits).
	Limits gio.Limits
}

// Decode splits the frame's mime header (a text frame, or a binary one
// starting with '{', is JSON) and decodes the request.
func (w WireCodec) Decode(frame []byte, text bool) (string, *Request, error) {
	mime, body, err := gio.SplitMime(frame)
	if text {
		mime, body, err = gio.MimeJSON, frame, nil
	}
	if err != nil {
		return gio.MimeJSON, nil, err
	}
	if gio.FormatOf(mime) == gio.FormatUnknown {
		// The answer must be readable: a client that sent an unknown
		// mime type most likely reads JSON.
		return gio.MimeJSON, nil, fmt.Errorf("the mime type %q is not supported: use %s, %s or %s", mime, gio.MimeGraphSONv2, gio.MimeGraphSONv3, gio.MimeGraphBinary)
	}
	gr, err := gio.DecodeRequestLimits(mime, body, w.Limits)
	if err != nil {
		var de *gio.DecodeError
		if errors.As(err, &de) && de.RequestID != "" {
			return mime, &Request{ID: de.RequestID}, err
		}
		return mime, nil, err
	}
	r := &Request{ID: gr.ID, Op: gr.Op, Processor: gr.Processor, Language: gr.String("language"), Bindings: gr.Bindings(), SASL: gr.String("sasl")}
	switch gr.Op {
	case "eval":
		s, ok := gr.Script()
		if !ok && gr.Args["gremlin"] != nil {
			return mime, &Request{ID: gr.ID}, fmt.Errorf("the gremlin argument of an eval request must be a string, not %T", gr.Args["gremlin"])
		}
		r.Script = s
	case "bytecode":
		t, ok := gr.Traversal()
		if !ok {
			return mime, &Request{ID: gr.ID}, errors.New("the gremlin argument of a bytecode request must be a traversal's bytecode")
		}
		r.Traversal = t
	}
	n, ok, err := gr.Int("batchSize")
	if err != nil {
		return mime, &Request{ID: gr.ID}, err
	}
	if ok {
		if n <= 0 {
			return mime, &Request{ID: gr.ID}, fmt.Errorf("batchSize must be positive, not %d", n)
		}
		r.BatchSize = int(min(n, MaxBatchSize))
	}
	for _, key := range []string{"evaluationTimeout", "scriptEvaluationTimeout"} {
		n, ok, err := gr.Int(key)
		if err != nil {
			return mime, &Request{ID: gr.ID}, err
		}
		if ok && n > 0 {
			r.Timeout = n
			break
		}
	}
	return mime, r, nil
}

// Encode writes a response with gio.
func (WireCodec) Encode(mime string, r *Response) ([]byte, error) {
	return gio.EncodeResponse(mime, &gio.Response{RequestID: r.RequestID,
		Status: gio.Status{Code: r.Code, Message: r.Message, Attributes: r.Attributes},
		Result: gio.Result{Data: r.Data, Meta: map[string]any{}, Traversers: r.Traversers}})
}
