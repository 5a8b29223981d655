package gio

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/parsecdb/parsec/internal/api/gremlin/graph"
	"github.com/parsecdb/parsec/internal/api/gremlin/lang"
)

// The mime types a client names in the frame header.
const (
	MimeGraphSONv1  = "application/vnd.gremlin-v1.0+json"
	MimeGraphSONv2  = "application/vnd.gremlin-v2.0+json"
	MimeGraphSONv3  = "application/vnd.gremlin-v3.0+json"
	MimeJSON        = "application/json"
	MimeGraphBinary = "application/vnd.graphbinary-v1.0"
)

// Format is a serializer family, chosen from a mime type.
type Format int

const (
	FormatUnknown Format = iota
	// FormatGraphSONv2 reads typed GraphSON 2.0 and writes the untyped
	// JSON that Azure Cosmos DB returns.
	FormatGraphSONv2
	// FormatGraphSONv3 reads and writes typed GraphSON 3.0.
	FormatGraphSONv3
	// FormatGraphBinary reads and writes GraphBinary 1.0.
	FormatGraphBinary
)

// FormatOf maps a mime type (case-insensitive; of the parameters only
// ";types=false" counts, selecting untyped answers) to its format. application/json is GraphSON as Gremlin
// Server's default JSON serializer reads it; the GraphSON reader accepts
// both typed and untyped values, and responses to it are written as Cosmos
// does (the same as GraphSON 2.0). GraphSON 1.0 is answered likewise: it is
// untyped JSON too.
func FormatOf(mime string) Format {
	m := strings.ToLower(strings.TrimSpace(mime))
	params := ""
	if i := strings.IndexByte(m, ';'); i >= 0 {
		m, params = strings.TrimSpace(m[:i]), m[i+1:]
	}
	if m == MimeGraphSONv3 && strings.ReplaceAll(params, " ", "") == "types=false" {
		// Gremlin Server's untyped GraphSON 3.0 serializer: answered
		// untyped, like GraphSON 2.0.
		return FormatGraphSONv2
	}
	switch m {
	case MimeGraphSONv2, MimeJSON, MimeGraphSONv1:
		return FormatGraphSONv2
	case MimeGraphSONv3:
		return FormatGraphSONv3
	case MimeGraphBinary:
		return FormatGraphBinary
	}
	return FormatUnknown
}

// A Request is a Gremlin Server request message.
//
// Args keys as clients send them: "gremlin" (a string script for op eval, a
// *lang.Traversal for op bytecode), "bindings" (map[string]any of
// lang.Value), "language", "aliases" (map[string]any), "batchSize",
// "evaluationTimeout" (also "scriptEvaluationTimeout"), "session", "sasl",
// "saslMechanism", "userAgent", "materializeProperties". Values other than
// those are decoded as lang.Value (int32, int64, string, []any, *lang.Map,
// ...).
type Request struct {
	ID        string // canonical lower-case UUID text
	Op        string
	Processor string
	Args      map[string]any
}

// Script returns the script of an eval request.
func (r *Request) Script() (string, bool) {
	s, ok := r.Args["gremlin"].(string)
	return s, ok
}

// Traversal returns the traversal of a bytecode request.
func (r *Request) Traversal() (*lang.Traversal, bool) {
	t, ok := r.Args["gremlin"].(*lang.Traversal)
	return t, ok && t != nil
}

// Bindings returns the request's bindings (nil when none).
func (r *Request) Bindings() map[string]any {
	b, _ := r.Args["bindings"].(map[string]any)
	return b
}

// Aliases returns the string aliases (alias -> traversal source name).
func (r *Request) Aliases() map[string]string {
	a, _ := r.Args["aliases"].(map[string]any)
	if len(a) == 0 {
		return nil
	}
	out := make(map[string]string, len(a))
	for k, v := range a {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

// String returns a string argument ("" when absent or not a string).
func (r *Request) String(key string) string {
	s, _ := r.Args[key].(string)
	return s
}

// Int returns an integer argument (batchSize, evaluationTimeout). ok is
// false when it is absent; err says when it is present but not an integer.
func (r *Request) Int(key string) (n int64, ok bool, err error) {
	v, present := r.Args[key]
	if !present || v == nil {
		return 0, false, nil
	}
	switch x := v.(type) {
	case int32:
		return int64(x), true, nil
	case int64:
		return x, true, nil
	case float64:
		if x == float64(int64(x)) {
			return int64(x), true, nil
		}
	case float32:
		if x == float32(int64(x)) {
			return int64(x), true, nil
		}
	}
	return 0, false, fmt.Errorf("argument %q must be an integer, got %T", key, v)
}

// Status is a response status. Codes are HTTP-like: 200 success, 204 no
// content, 206 partial content (more batches follow), 401 unauthorized,
// 407 authenticate, 498 malformed request, 499 invalid request arguments,
// 500 server error, 597 script evaluation error, 598 server timeout, 599
// serialization error.
type Status struct {
	Code       int
	Message    string
	Attributes map[string]any
}

// Result is a response's data and meta.
type Result struct {
	Data []graph.Value
	Meta map[string]any
	// Traversers marks the answer to a bytecode request: TinkerPop wraps
	// each result in a Traverser (bulk 1), which GraphBinary and GraphSON
	// 3.0 drivers unwrap. Script (eval) answers leave it false.
	Traversers bool
}

// A Response is a Gremlin Server response message.
type Response struct {
	RequestID string
	Status    Status
	Result    Result
}

// Status codes.
const (
	StatusSuccess               = 200
	StatusNoContent             = 204
	StatusPartialContent        = 206
	StatusUnauthorized          = 401
	StatusAuthenticate          = 407
	StatusMalformedRequest      = 498
	StatusInvalidArguments      = 499
	StatusServerError           = 500
	StatusScriptEvaluationError = 597
	StatusServerTimeout         = 598
	StatusSerializationError    = 599
)

// Limits bound what a request decoder accepts.
type Limits struct {
	// MaxBytes caps the serialized request body.
	MaxBytes int
	// MaxDepth caps the nesting of values (collections, predicates,
	// nested traversals).
	MaxDepth int
	// MaxItems caps the length of any one collection, string list or
	// bytecode instruction list.
	MaxItems int
}

// DefaultLimits: a body of 4 MiB (Cosmos caps a script at 64 KB, bindings
// add to it), nesting 400 deep (Cosmos's operator depth), 1<<20 items.
var DefaultLimits = Limits{MaxBytes: 4 << 20, MaxDepth: 400, MaxItems: 1 << 20}

// ErrUnsupportedMime is returned for a mime type no serializer handles.
var ErrUnsupportedMime = errors.New("unsupported mime type")

// A DecodeError is a request that could not be decoded. RequestID holds
// the request id when it was read before the failure, so that the server
// can address its 498/499 answer.
type DecodeError struct {
	RequestID string
	Err       error
}

func (e *DecodeError) Error() string {
	if e.RequestID != "" {
		return fmt.Sprintf("malformed request %s: %v", e.RequestID, e.Err)
	}
	return "malformed request: " + e.Err.Error()
}

func (e *DecodeError) Unwrap() error { return e.Err }

// SplitMime splits a binary WebSocket frame into its mime type and body:
// one byte n, then n bytes of mime type, then the serialized request, as
// every TinkerPop driver sends it. A frame that starts with '{' instead is
// JSON without the header (as some drivers send in text frames); it is
// returned with mime application/json.
func SplitMime(frame []byte) (mime string, body []byte, err error) {
	if len(frame) == 0 {
		return "", nil, errors.New("empty frame")
	}
	if looksLikeJSON(frame) {
		return MimeJSON, frame, nil
	}
	n := int(frame[0])
	if n == 0 || len(frame) < 1+n {
		return "", nil, fmt.Errorf("frame of %d bytes is too short for its %d-byte mime type header", len(frame), n)
	}
	mime = string(frame[1 : 1+n])
	for i := 0; i < len(mime); i++ {
		if c := mime[i]; c < 0x20 || c > 0x7e {
			return "", nil, fmt.Errorf("mime type header has a non-printable byte 0x%02x", c)
		}
	}
	return mime, frame[1+n:], nil
}

// looksLikeJSON: a header byte of '{' (123) would announce a 123-byte mime
// type, which no serializer has; JSON that starts with '{' follows it with
// a quote, a space or '}', none of which a mime type contains.
func looksLikeJSON(frame []byte) bool {
	if frame[0] != '{' {
		return false
	}
	if len(frame) == 1 {
		return true
	}
	switch frame[1] {
	case '"', ' ', '\t', '\r', '\n', '}':
		return true
	}
	return false
}

// DecodeRequest decodes a request body serialized as mime names, with
// DefaultLimits.
func DecodeRequest(mime string, body []byte) (*Request, error) {
	return DecodeRequestLimits(mime, body, DefaultLimits)
}

// DecodeRequestLimits decodes a request body within lim. Errors are
// *DecodeError (wrapping ErrUnsupportedMime for an unknown mime type).
func DecodeRequestLimits(mime string, body []byte, lim Limits) (*Request, error) {
	lim = lim.withDefaults()
	if len(body) > lim.MaxBytes {
		return nil, &DecodeError{Err: fmt.Errorf("request of %d bytes exceeds the limit of %d", len(body), lim.MaxBytes)}
	}
	switch FormatOf(mime) {
	case FormatGraphBinary:
		return decodeBinaryRequest(body, lim)
	case FormatGraphSONv2, FormatGraphSONv3:
		return decodeJSONRequest(body, lim)
	}
	return nil, &DecodeError{Err: fmt.Errorf("%w %q", ErrUnsupportedMime, mime)}
}

// DecodeFrame splits a binary frame and decodes its request.
func DecodeFrame(frame []byte) (mime string, req *Request, err error) {
	mime, body, err := SplitMime(frame)
	if err != nil {
		return "", nil, &DecodeError{Err: err}
	}
	req, err = DecodeRequest(mime, body)
	return mime, req, err
}

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultLimits.MaxBytes
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultLimits.MaxDepth
	}
	if l.MaxItems <= 0 {
		l.MaxItems = DefaultLimits.MaxItems
	}
	return l
}

// EncodeResponse serializes r for mime. GraphBinary answers carry no mime
// header (Gremlin Server sends none); the server sends GraphBinary in a
// binary frame and JSON in a text or binary frame as the client used.
func EncodeResponse(mime string, r *Response) ([]byte, error) {
	if r == nil {
		return nil, errors.New("nil response")
	}
	switch FormatOf(mime) {
	case FormatGraphBinary:
		return encodeBinaryResponse(r)
	case FormatGraphSONv2:
		return encodeCosmosResponse(r)
	case FormatGraphSONv3:
		return encodeGraphSON3Response(r)
	}
	return nil, fmt.Errorf("%w %q", ErrUnsupportedMime, mime)
}

// normalizeUUID checks a UUID's text form and returns it lower-case.
func normalizeUUID(s string) (string, error) {
	if len(s) != 36 {
		return "", fmt.Errorf("invalid UUID %q", truncate(s))
	}
	b := []byte(strings.ToLower(s))
	for i, c := range b {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return "", fmt.Errorf("invalid UUID %q", truncate(s))
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				return "", fmt.Errorf("invalid UUID %q", truncate(s))
			}
		}
	}
	return string(b), nil
}

func uuidBytes(s string) ([16]byte, error) {
	var out [16]byte
	n, err := normalizeUUID(s)
	if err != nil {
		return out, err
	}
	if _, err := hex.Decode(out[:], []byte(strings.ReplaceAll(n, "-", ""))); err != nil {
		return out, fmt.Errorf("invalid UUID %q: %w", truncate(s), err)
	}
	return out, nil
}

func uuidString(b []byte) string {
	const hexd = "0123456789abcdef"
	out := make([]byte, 0, 36)
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out = append(out, '-')
		}
		out = append(out, hexd[c>>4], hexd[c&15])
	}
	return string(out)
}

func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
