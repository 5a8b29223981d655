package mongo

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/wiremessage"
)

func mustMarshal(t testing.TB, d bson.D) []byte {
	t.Helper()
	b, err := bson.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// opMsg builds an OP_MSG with a command and optional document sequences.
func opMsg(reqID int32, flags wiremessage.MsgFlag, cmd []byte, seqID string, seq ...[]byte) []byte {
	idx, b := wiremessage.AppendHeaderStart(nil, reqID, 0, wiremessage.OpMsg)
	b = wiremessage.AppendMsgFlags(b, flags)
	b = wiremessage.AppendMsgSectionType(b, wiremessage.SingleDocument)
	b = append(b, cmd...)
	if seqID != "" {
		b = wiremessage.AppendMsgSectionType(b, wiremessage.DocumentSequence)
		sidx := len(b)
		b = append(b, 0, 0, 0, 0)
		b = append(b, seqID...)
		b = append(b, 0)
		for _, d := range seq {
			b = append(b, d...)
		}
		binary.LittleEndian.PutUint32(b[sidx:], uint32(len(b)-sidx))
	}
	if flags&wiremessage.ChecksumPresent != 0 {
		b = append(b, 0, 0, 0, 0)
		binary.LittleEndian.PutUint32(b[idx:], uint32(len(b)))
		sum := crc32.Checksum(b[:len(b)-4], crc32.MakeTable(crc32.Castagnoli))
		binary.LittleEndian.PutUint32(b[len(b)-4:], sum)
		return b
	}
	return bsoncore.UpdateLength(b, idx, int32(len(b)))
}

func opQueryMsg(reqID int32, ns string, q []byte) []byte {
	idx, b := wiremessage.AppendHeaderStart(nil, reqID, 0, opQuery)
	b = wiremessage.AppendQueryFlags(b, 0)
	b = wiremessage.AppendQueryFullCollectionName(b, ns)
	b = wiremessage.AppendQueryNumberToSkip(b, 0)
	b = wiremessage.AppendQueryNumberToReturn(b, -1)
	b = append(b, q...)
	return bsoncore.UpdateLength(b, idx, int32(len(b)))
}

type rawConn struct {
	t  testing.TB
	nc net.Conn
	r  *bufio.Reader
}

func dialRaw(t testing.TB, env *testEnv) *rawConn {
	nc, err := net.Dial("tcp", env.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(30 * time.Second))
	return &rawConn{t: t, nc: nc, r: bufio.NewReader(nc)}
}

// roundTrip sends a message and returns the reply's opcode and document.
func (c *rawConn) roundTrip(msg []byte) (wiremessage.OpCode, bson.D) {
	c.t.Helper()
	if _, err := c.nc.Write(msg); err != nil {
		c.t.Fatal(err)
	}
	return c.read()
}

func (c *rawConn) read() (wiremessage.OpCode, bson.D) {
	c.t.Helper()
	var hdr [16]byte
	if _, err := io.ReadFull(c.r, hdr[:]); err != nil {
		c.t.Fatal(err)
	}
	n := binary.LittleEndian.Uint32(hdr[:])
	buf := make([]byte, n)
	copy(buf, hdr[:])
	if _, err := io.ReadFull(c.r, buf[16:]); err != nil {
		c.t.Fatal(err)
	}
	_, _, _, op, rem, _ := wiremessage.ReadHeader(buf)
	var doc bsoncore.Document
	switch op {
	case wiremessage.OpMsg:
		_, rem, _ = wiremessage.ReadMsgFlags(rem)
		_, rem, _ = wiremessage.ReadMsgSectionType(rem)
		doc, _, _ = wiremessage.ReadMsgSectionSingleDocument(rem)
	case wiremessage.OpReply:
		_, rem, _ = wiremessage.ReadReplyFlags(rem)
		_, rem, _ = wiremessage.ReadReplyCursorID(rem)
		_, rem, _ = wiremessage.ReadReplyStartingFrom(rem)
		_, rem, _ = wiremessage.ReadReplyNumberReturned(rem)
		doc, _, _ = wiremessage.ReadReplyDocument(rem)
	default:
		c.t.Fatalf("reply opcode %v", op)
	}
	var d bson.D
	if err := bson.Unmarshal(doc, &d); err != nil {
		c.t.Fatal(err)
	}
	return op, d
}

// closed reports whether the server closed the connection (a reset when
// it closed with bytes left unread).
func (c *rawConn) closed() bool {
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err := c.r.ReadByte()
	return err == io.EOF || errors.Is(err, syscall.ECONNRESET)
}

func TestWireHandshakeAndSections(t *testing.T) {
	env := newEnv(t, envOptions{})
	c := dialRaw(t, env)
	// The legacy handshake over OP_QUERY gets an OP_REPLY.
	op, d := c.roundTrip(opQueryMsg(1, "admin.$cmd", mustMarshal(t, bson.D{{Key: "isMaster", Value: 1}, {Key: "helloOk", Value: true}})))
	m := toMap(d)
	if op != wiremessage.OpReply || m["ismaster"] != true || m["helloOk"] != true || m["ok"] != 1.0 {
		t.Fatalf("OP_QUERY isMaster: %v %v", op, d)
	}
	// Other commands over OP_QUERY are refused.
	_, d = c.roundTrip(opQueryMsg(2, "admin.$cmd", mustMarshal(t, bson.D{{Key: "ping", Value: 1}})))
	if toMap(d)["ok"] != 0.0 {
		t.Fatalf("OP_QUERY ping: %v", d)
	}
	// A kind-1 sequence is folded into the command; the checksum is verified.
	cmd := mustMarshal(t, bson.D{{Key: "insert", Value: "w"}, {Key: "$db", Value: "wire"}})
	docs := [][]byte{mustMarshal(t, bson.D{{Key: "_id", Value: 1}}), mustMarshal(t, bson.D{{Key: "_id", Value: 2}})}
	op, d = c.roundTrip(opMsg(3, wiremessage.ChecksumPresent, cmd, "documents", docs...))
	if op != wiremessage.OpMsg || toMap(d)["n"] != int32(2) {
		t.Fatalf("insert with a document sequence: %v", d)
	}
	// moreToCome gets no reply: the next reply answers the next request.
	cmd = mustMarshal(t, bson.D{{Key: "insert", Value: "w"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 3}}}}, {Key: "$db", Value: "wire"}})
	if _, err := c.nc.Write(opMsg(4, wiremessage.MoreToCome, cmd, "")); err != nil {
		t.Fatal(err)
	}
	_, d = c.roundTrip(opMsg(5, 0, mustMarshal(t, bson.D{{Key: "count", Value: "w"}, {Key: "$db", Value: "wire"}}), ""))
	if toMap(d)["n"] != int32(3) {
		t.Fatalf("count after a moreToCome insert: %v", d)
	}
	// A command without $db is an error, not a disconnect.
	_, d = c.roundTrip(opMsg(6, 0, mustMarshal(t, bson.D{{Key: "ping", Value: 1}}), ""))
	if toMap(d)["ok"] != 0.0 {
		t.Fatalf("ping without $db: %v", d)
	}
	// A bad checksum closes the connection.
	msg := opMsg(7, wiremessage.ChecksumPresent, mustMarshal(t, bson.D{{Key: "ping", Value: 1}, {Key: "$db", Value: "a"}}), "")
	msg[len(msg)-1] ^= 0xff
	if _, err := c.nc.Write(msg); err != nil {
		t.Fatal(err)
	}
	if !c.closed() {
		t.Fatal("a bad checksum did not close the connection")
	}
}

func TestWireMalformedCloses(t *testing.T) {
	env := newEnv(t, envOptions{})
	for name, msg := range map[string][]byte{
		"huge length":     {0xff, 0xff, 0xff, 0x7f, 1, 0, 0, 0, 0, 0, 0, 0, 0xdd, 7, 0, 0},
		"unknown opcode":  {16, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 99, 0, 0, 0},
		"no sections":     {20, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0xdd, 7, 0, 0, 0, 0, 0, 0},
		"bad bson length": append([]byte{26, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0xdd, 7, 0, 0, 0, 0, 0, 0, 0}, 0xff, 0, 0, 0, 0),
	} {
		c := dialRaw(t, env)
		if _, err := c.nc.Write(msg); err != nil {
			t.Fatal(err)
		}
		if !c.closed() {
			t.Errorf("%s: connection not closed", name)
		}
	}
	// The server still serves.
	if err := env.client.Ping(ctxT(t), nil); err != nil {
		t.Fatal(err)
	}
}

func FuzzReadMessage(f *testing.F) {
	f.Add(opMsg(1, 0, mustMarshal(f, bson.D{{Key: "ping", Value: 1}, {Key: "$db", Value: "a"}}), ""))
	f.Add(opMsg(1, wiremessage.ChecksumPresent, mustMarshal(f, bson.D{{Key: "insert", Value: "c"}, {Key: "$db", Value: "a"}}), "documents", mustMarshal(f, bson.D{{Key: "x", Value: 1}})))
	f.Add(opQueryMsg(1, "admin.$cmd", mustMarshal(f, bson.D{{Key: "isMaster", Value: 1}})))
	f.Fuzz(func(t *testing.T, b []byte) {
		// The bytes as a stream of messages: read until an error.
		r := bytes.NewReader(b)
		for range 8 {
			m, err := ReadMessage(r, MaxMessageBytes, false)
			if err != nil {
				return
			}
			if m.refused != nil {
				continue
			}
			if err := m.Command.Validate(); err != nil {
				t.Fatalf("decoded an invalid command: %v", err)
			}
		}
	})
}
