package mongo

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/wiremessage"
)

// Wire limits.
const (
	// MaxMessageBytes is the largest message accepted or sent.
	MaxMessageBytes = 48_000_000
	// MaxDocumentBytes is the largest stored document.
	MaxDocumentBytes = 16 << 20
	// maxCommandBytes is the largest command document (a document plus
	// the command's own fields).
	maxCommandBytes = MaxDocumentBytes + 16<<10
	// maxSections bounds the sections of one OP_MSG.
	maxSections = 64
	// MaxCommandDepth bounds the nesting of a command's documents and
	// arrays, the command itself counting as one level: mongod's default
	// maxBSONDepth (BSONDepth::kDefaultMaxAllowableDepth, 200), twice
	// the 100 levels of a stored document (maxDepth), so that any stored
	// document fits in the command that writes it. A deeper command is
	// answered code 15 (Overflow) without being decoded.
	MaxCommandDepth = 200
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errMalformed is wrapped by every error about a message that breaks the
// protocol; the connection is then closed.
var errMalformed = errors.New("malformed message")

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errMalformed, fmt.Sprintf(format, args...))
}

// Message is one request, decoded.
type Message struct {
	RequestID int32
	OpCode    wiremessage.OpCode
	// MoreToCome is OP_MSG's flag: the client expects no reply.
	MoreToCome bool
	// Command is the command document: OP_MSG's kind-0 section with every
	// kind-1 sequence folded in as an array field, or OP_QUERY's query.
	Command bsoncore.Document
	// Namespace is OP_QUERY's full collection name.
	Namespace string
	// refused, when set, is the reply: the message was whole, but its
	// command is not decoded (too deep, or not allowed yet).
	refused *cmdError
}

// ReadMessage reads and decodes one message of at most maxBytes (at most
// MaxMessageBytes). With handshakeOnly, only the handshake commands
// (anonymousCommands) are decoded: any other is refused with code 13
// from its name alone. An error wrapping errMalformed means the stream
// broke the protocol; other errors are the reader's.
func ReadMessage(r io.Reader, maxBytes int32, handshakeOnly bool) (*Message, error) {
	var hdr [16]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	maxBytes = min(maxBytes, MaxMessageBytes)
	length := int32(binary.LittleEndian.Uint32(hdr[:4]))
	if length < 16 || length > maxBytes {
		if handshakeOnly {
			return nil, malformed("message length %d is outside [16, %d] (the limit before authentication)", length, maxBytes)
		}
		return nil, malformed("message length %d is outside [16, %d]", length, maxBytes)
	}
	// The buffer grows as the bytes arrive, so that a header claiming 48 MB
	// costs nothing until the client sends them.
	var buf bytes.Buffer
	buf.Grow(int(min(length, 64<<10)))
	buf.Write(hdr[:])
	if _, err := io.CopyN(&buf, r, int64(length)-16); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return DecodeMessage(buf.Bytes(), handshakeOnly)
}

// DecodeMessage decodes one whole message (header included); handshakeOnly
// is ReadMessage's.
func DecodeMessage(buf []byte, handshakeOnly bool) (*Message, error) {
	length, reqID, _, op, rem, ok := wiremessage.ReadHeader(buf)
	if !ok || int(length) != len(buf) {
		return nil, malformed("bad header")
	}
	m := &Message{RequestID: reqID, OpCode: op}
	switch op {
	case wiremessage.OpMsg:
		return m, decodeMsg(m, buf, rem, handshakeOnly)
	case opQuery:
		return m, decodeQuery(m, rem)
	default:
		return nil, malformed("opcode %d is not supported (only OP_MSG and the OP_QUERY handshake)", int32(op))
	}
}

func decodeMsg(m *Message, whole, body []byte, handshakeOnly bool) error {
	flags, rem, ok := wiremessage.ReadMsgFlags(body)
	if !ok {
		return malformed("OP_MSG without flags")
	}
	const known = wiremessage.ChecksumPresent | wiremessage.MoreToCome | wiremessage.ExhaustAllowed
	if flags&^known&0xffff != 0 {
		return malformed("OP_MSG has unknown required flag bits %#x", uint32(flags))
	}
	if flags&wiremessage.ChecksumPresent != 0 {
		if len(rem) < 4 {
			return malformed("OP_MSG checksum missing")
		}
		want := binary.LittleEndian.Uint32(rem[len(rem)-4:])
		rem = rem[:len(rem)-4]
		// The checksum covers the whole message but itself.
		if got := crc32.Checksum(whole[:len(whole)-4], castagnoli); got != want {
			return malformed("OP_MSG checksum mismatch")
		}
	}
	m.MoreToCome = flags&wiremessage.MoreToCome != 0
	var cmd bsoncore.Document
	type seq struct {
		id   string
		docs []bsoncore.Document
	}
	var seqs []seq
	for n := 0; len(rem) > 0; n++ {
		if n >= maxSections {
			return malformed("OP_MSG has more than %d sections", maxSections)
		}
		var st wiremessage.SectionType
		st, rem, ok = wiremessage.ReadMsgSectionType(rem)
		if !ok {
			return malformed("truncated section")
		}
		switch st {
		case wiremessage.SingleDocument:
			if cmd != nil {
				return malformed("OP_MSG has two kind-0 sections")
			}
			var doc bsoncore.Document
			doc, rem, ok = wiremessage.ReadMsgSectionSingleDocument(rem)
			if !ok {
				return malformed("truncated kind-0 section")
			}
			if handshakeOnly {
				if name := commandName(doc); !anonymousCommands[name] {
					m.refused = unauthenticated(name)
					return nil
				}
			}
			if err := checkDepth(doc, MaxCommandDepth); err != nil {
				return depthRefusal(m, err)
			}
			if err := doc.Validate(); err != nil {
				return malformed("invalid command document: %v", err)
			}
			if len(doc) > maxCommandBytes {
				return malformed("command document of %d bytes is over %d", len(doc), maxCommandBytes)
			}
			cmd = doc
		case wiremessage.DocumentSequence:
			if handshakeOnly {
				// No handshake command has a document sequence.
				m.refused = unauthenticated("with a document sequence")
				return nil
			}
			if len(rem) < 4 {
				return malformed("truncated kind-1 section")
			}
			size := int32(binary.LittleEndian.Uint32(rem))
			if size < 5 || int(size) > len(rem) {
				return malformed("kind-1 section size %d is invalid", size)
			}
			id, docs, _, ok2 := wiremessage.ReadMsgSectionDocumentSequence(rem[:size])
			if !ok2 || id == "" {
				return malformed("invalid kind-1 section")
			}
			for _, d := range docs {
				// The documents become an array's members in the command.
				if err := checkDepth(d, MaxCommandDepth-2); err != nil {
					return depthRefusal(m, err)
				}
				if err := d.Validate(); err != nil {
					return malformed("invalid document in sequence %q: %v", id, err)
				}
				if len(d) > maxCommandBytes {
					return malformed("document of %d bytes in sequence %q is over %d", len(d), id, maxCommandBytes)
				}
			}
			seqs = append(seqs, seq{id, docs})
			rem = rem[size:]
		default:
			return malformed("unknown section kind %d", st)
		}
	}
	if cmd == nil {
		return malformed("OP_MSG has no kind-0 section")
	}
	if len(seqs) == 0 {
		m.Command = cmd
		return nil
	}
	// Fold each sequence into the command as an array field.
	idx, out := bsoncore.AppendDocumentStart(nil)
	elems, err := cmd.Elements()
	if err != nil {
		return malformed("invalid command document: %v", err)
	}
	for _, e := range elems {
		for _, s := range seqs {
			if e.Key() == s.id {
				return malformed("the command has both a field and a document sequence named %q", s.id)
			}
		}
		out = append(out, e...)
	}
	for _, s := range seqs {
		var aidx int32
		aidx, out = bsoncore.AppendArrayElementStart(out, s.id)
		for i, d := range s.docs {
			out = bsoncore.AppendDocumentElement(out, itoa(i), d)
		}
		out, _ = bsoncore.AppendArrayEnd(out, aidx)
	}
	out, _ = bsoncore.AppendDocumentEnd(out, idx)
	m.Command = out
	return nil
}

// opQuery is the legacy OP_QUERY opcode (the driver's constant is
// deprecated: drivers only send it for the first handshake).
const opQuery wiremessage.OpCode = 2004

// decodeQuery reads an OP_QUERY: int32 flags, cstring full collection
// name, int32 numberToSkip, int32 numberToReturn, the query document (an
// optional field selector may follow and is ignored).
func decodeQuery(m *Message, body []byte) error {
	if len(body) < 4 {
		return malformed("truncated OP_QUERY")
	}
	rem := body[4:]
	nul := bytes.IndexByte(rem, 0)
	if nul < 0 {
		return malformed("truncated OP_QUERY namespace")
	}
	m.Namespace, rem = string(rem[:nul]), rem[nul+1:]
	if len(rem) < 8 {
		return malformed("truncated OP_QUERY")
	}
	q, _, ok := bsoncore.ReadDocument(rem[8:])
	if !ok {
		return malformed("truncated OP_QUERY query")
	}
	if err := checkDepth(q, MaxCommandDepth); err != nil {
		return depthRefusal(m, err)
	}
	if err := q.Validate(); err != nil {
		return malformed("invalid OP_QUERY query: %v", err)
	}
	if len(q) > maxCommandBytes {
		return malformed("OP_QUERY query of %d bytes is over %d", len(q), maxCommandBytes)
	}
	m.Command = q
	return nil
}

// errTooDeep is checkDepth's error for a document nested too deep.
var errTooDeep = errors.New("nested too deep")

// checkDepth returns errTooDeep when doc nests documents and arrays (code
// with scope included) more than max levels deep, doc itself counting as
// one. It keeps a stack of the documents it is in instead of recursing,
// and steps over each element by its length (bsoncore.ReadElement does
// not look inside), so that no depth of input can exhaust the goroutine's
// stack; it must run before anything that recurses into the document
// (bson.Unmarshal). Bytes it cannot walk are malformed.
func checkDepth(doc bsoncore.Document, max int) error {
	body, ok := docBody(doc)
	if !ok {
		return malformed("invalid document length")
	}
	stack := [][]byte{body}
	for len(stack) > 0 {
		top := len(stack) - 1
		if len(stack[top]) == 0 {
			stack = stack[:top]
			continue
		}
		e, rest, ok := bsoncore.ReadElement(stack[top])
		if !ok {
			return malformed("invalid element in a document")
		}
		stack[top] = rest
		var sub bsoncore.Document
		switch v := e.Value(); v.Type {
		case bsoncore.TypeEmbeddedDocument, bsoncore.TypeArray:
			sub = v.Data
		case bsoncore.TypeCodeWithScope:
			if _, sub, ok = v.CodeWithScopeOK(); !ok {
				return malformed("invalid code with scope")
			}
		default:
			continue
		}
		if len(stack) >= max {
			return errTooDeep
		}
		b, ok := docBody(sub)
		if !ok {
			return malformed("invalid length of an embedded document")
		}
		stack = append(stack, b)
	}
	return nil
}

// docBody returns the elements of a document whose length prefix matches
// its bytes and which ends with its terminating zero.
func docBody(doc []byte) ([]byte, bool) {
	n, _, ok := bsoncore.ReadLength(doc)
	if !ok || n < 5 || int(n) != len(doc) || doc[n-1] != 0 {
		return nil, false
	}
	return doc[4 : n-1], true
}

// depthRefusal answers a command that checkDepth refused; other errors
// break the protocol.
func depthRefusal(m *Message, err error) error {
	if !errors.Is(err, errTooDeep) {
		return err
	}
	m.refused = newErr(15, "Overflow", "the command nests documents and arrays deeper than %d levels", MaxCommandDepth)
	return nil
}

// commandName is the first key of a command ("" when it has none),
// read without looking into any value.
func commandName(doc bsoncore.Document) string {
	body, ok := docBody(doc)
	if !ok {
		return ""
	}
	e, _, ok := bsoncore.ReadElement(body)
	if !ok {
		return ""
	}
	return e.Key()
}

func itoa(i int) string { return strconv.Itoa(i) }

// appendOpMsg appends an OP_MSG reply holding doc.
func appendOpMsg(dst []byte, reqID, responseTo int32, doc bsoncore.Document) []byte {
	idx, dst := wiremessage.AppendHeaderStart(dst, reqID, responseTo, wiremessage.OpMsg)
	dst = wiremessage.AppendMsgFlags(dst, 0)
	dst = wiremessage.AppendMsgSectionType(dst, wiremessage.SingleDocument)
	dst = append(dst, doc...)
	return bsoncore.UpdateLength(dst, idx, int32(len(dst)-int(idx)))
}

// appendOpReply appends an OP_REPLY holding doc.
func appendOpReply(dst []byte, reqID, responseTo int32, doc bsoncore.Document) []byte {
	idx, dst := wiremessage.AppendHeaderStart(dst, reqID, responseTo, wiremessage.OpReply)
	dst = wiremessage.AppendReplyFlags(dst, 0)
	dst = wiremessage.AppendReplyCursorID(dst, 0)
	dst = wiremessage.AppendReplyStartingFrom(dst, 0)
	dst = wiremessage.AppendReplyNumberReturned(dst, 1)
	dst = append(dst, doc...)
	return bsoncore.UpdateLength(dst, idx, int32(len(dst)-int(idx)))
}
