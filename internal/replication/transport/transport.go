package transport

import (
	"encoding/binary"
	"errors"
	"fmt"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// Envelope is one raft message of one group.
type Envelope struct {
	Group uint64
	Msg   *raftpb.Message
}

// Handler receives a batch of messages sent by node from. It is called from
// the transport's goroutines, possibly concurrently for different senders,
// and must not block for long: the host only queues the batch.
type Handler func(from uint64, batch []Envelope)

// Transport carries raft messages between the nodes of a cluster. Send never
// blocks: a message the transport cannot take now is dropped and counted,
// and raft retransmits. Bulk messages (appends, snapshots) and the others
// are queued and bounded separately, and the others go first. Delivery is unordered and at most once per Send
// (a test network may duplicate).
type Transport interface {
	// SetHandler sets the receiver of incoming batches. It must be called
	// before any message can arrive, once.
	SetHandler(h Handler)
	// Send queues batch for node to. The transport owns the messages from
	// then on; the caller must not change them.
	Send(to uint64, batch []Envelope)
	// Close stops the transport.
	Close() error
}

// Bulk reports whether m carries log data (appends and snapshots), which
// can be large and numerous under load and which raft retransmits when
// lost. Everything else (heartbeats, votes, responses, read confirmations)
// is small and keeps a group's leadership alive: transports queue the two
// kinds separately, so that appends filling a queue never cause a
// heartbeat or a vote to be dropped.
func Bulk(m *raftpb.Message) bool {
	t := m.GetType()
	return t == raftpb.MsgApp || t == raftpb.MsgSnap
}

// Split returns batch's messages in two batches: the ones that are not
// Bulk (priority), and the Bulk ones. Either may be nil.
func Split(batch []Envelope) (priority, bulk []Envelope) {
	for _, e := range batch {
		if Bulk(e.Msg) {
			bulk = append(bulk, e)
		} else {
			priority = append(priority, e)
		}
	}
	return priority, bulk
}

// Limits of the batch encoding, applied on decode to anything a peer sends.
const (
	// MaxBatchMessages bounds the number of messages in one batch.
	MaxBatchMessages = 1 << 16
)

// ErrBadBatch means a batch's encoding is malformed.
var ErrBadBatch = errors.New("transport: malformed message batch")

// AppendBatch appends the encoding of batch to dst: the message count, then
// for each message its group id and its length-prefixed raftpb encoding, all
// as unsigned varints.
func AppendBatch(dst []byte, batch []Envelope) ([]byte, error) {
	dst = binary.AppendUvarint(dst, uint64(len(batch)))
	for _, e := range batch {
		dst = binary.AppendUvarint(dst, e.Group)
		n := proto.Size(e.Msg)
		dst = binary.AppendUvarint(dst, uint64(n))
		var err error
		dst, err = proto.MarshalOptions{}.MarshalAppend(dst, e.Msg)
		if err != nil {
			return nil, err
		}
	}
	return dst, nil
}

// DecodeBatch decodes a batch encoded by AppendBatch. It fails with
// ErrBadBatch on any malformed or trailing input.
func DecodeBatch(b []byte) ([]Envelope, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > MaxBatchMessages {
		return nil, fmt.Errorf("%w: bad message count", ErrBadBatch)
	}
	b = b[k:]
	if n > uint64(len(b))/2 { // every message takes at least two bytes
		return nil, fmt.Errorf("%w: message count %d exceeds the frame", ErrBadBatch, n)
	}
	batch := make([]Envelope, 0, n)
	for i := uint64(0); i < n; i++ {
		group, k := binary.Uvarint(b)
		if k <= 0 {
			return nil, fmt.Errorf("%w: bad group id", ErrBadBatch)
		}
		b = b[k:]
		size, k := binary.Uvarint(b)
		if k <= 0 || size > uint64(len(b)-k) {
			return nil, fmt.Errorf("%w: bad message length", ErrBadBatch)
		}
		b = b[k:]
		m := &raftpb.Message{}
		if err := proto.Unmarshal(b[:size], m); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadBatch, err)
		}
		b = b[size:]
		batch = append(batch, Envelope{Group: group, Msg: m})
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes", ErrBadBatch, len(b))
	}
	return batch, nil
}
