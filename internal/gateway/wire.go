package gateway

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/parsecdb/parsec/internal/binfmt"
	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/replication"
)

// The wire format of a forwarded command and its answer (CallCommand).
// Errors travel as the engine sentinel they wrap (its index in sentinels)
// with their message, so that the API of the node that received the
// client's request answers as if the command had run there.
//
//	request = version:1 hops:uvarint db:str coll:str rid:str range:str command:bytes
//	reply   = version:1 error session:(range:str lsn:uvarint) results
//	results = engine.AppendResults's encoding
//	error   = kind:uvarint (0: none) [msg:str leader:uvarint group:uvarint throttle:bytes]
const wireVersion = 1

// maxResults bounds the results a reply may carry (a batch's operations).
const maxResults = 10_000

var errBadWire = errors.New("malformed forwarded command")

type request struct {
	hops                   int
	db, coll, rid, rangeID string
	cmd                    []byte
}

func encodeRequest(r request) []byte {
	b := []byte{wireVersion}
	b = binary.AppendUvarint(b, uint64(r.hops))
	b = binfmt.AppendString(b, r.db)
	b = binfmt.AppendString(b, r.coll)
	b = binfmt.AppendString(b, r.rid)
	b = binfmt.AppendString(b, r.rangeID)
	return binfmt.AppendString(b, string(r.cmd))
}

func decodeRequest(b []byte) (request, error) {
	d := binfmt.NewReader(b, errBadWire)
	if v := d.Byte(); d.Err() == nil && v != wireVersion {
		return request{}, fmt.Errorf("%w: unknown version %d", errBadWire, v)
	}
	hops := d.Uvarint()
	r := request{db: string(d.Bytes()), coll: string(d.Bytes()), rid: string(d.Bytes()), rangeID: string(d.Bytes()), cmd: d.Bytes()}
	if err := d.Err(); err != nil {
		return request{}, err
	}
	if hops > maxHops {
		return request{}, fmt.Errorf("%w: %d hops", errBadWire, hops)
	}
	r.hops = int(hops)
	return r, nil
}

type reply struct {
	res     []engine.OpResult
	session engine.Session
	err     error
}

// sentinels are the engine errors that travel, narrowest first (an error
// wrapping ErrNotLeader also matches ErrUnavailable).
var sentinels = []error{
	engine.ErrThrottled, engine.ErrNotLeader, engine.ErrOutcomeUnknown, engine.ErrPartitionKeyMismatch,
	engine.ErrBadRequest, engine.ErrNotFound, engine.ErrConflict, engine.ErrPreconditionFailed, engine.ErrTooLarge,
	engine.ErrPartitionGone, engine.ErrUnavailable, engine.ErrFailedDependency, engine.ErrLogicalPartitionFull,
	engine.ErrQuotaExceeded, engine.ErrRetryWith, engine.ErrTimeout, engine.ErrCorrupt, engine.ErrInternal,
}

func appendError(b []byte, err error) []byte {
	if err == nil {
		return append(b, 0)
	}
	kind := len(sentinels) // the last one, ErrInternal, for an error of no kind
	for i, s := range sentinels {
		if errors.Is(err, s) {
			kind = i + 1
			break
		}
	}
	b = binary.AppendUvarint(b, uint64(kind))
	b = binfmt.AppendString(b, err.Error())
	var nl *replication.NotLeaderError
	var leader, group uint64
	if errors.As(err, &nl) {
		leader, group = nl.Leader, nl.Group
	}
	b = binary.AppendUvarint(b, leader)
	b = binary.AppendUvarint(b, group)
	var te *engine.ThrottledError
	var th []byte
	if errors.As(err, &te) {
		th, _ = json.Marshal(te)
	}
	return binfmt.AppendString(b, string(th))
}

// remoteError is an error another node's engine returned: its message, and
// what it wraps (a sentinel, and the not-leader refusal or the throttling
// it carried).
type remoteError struct {
	msg  string
	wrap []error
}

func (e *remoteError) Error() string   { return e.msg }
func (e *remoteError) Unwrap() []error { return e.wrap }

func readError(d *binfmt.Reader) error {
	kind := d.Uvarint()
	if kind == 0 || d.Err() != nil {
		return nil
	}
	if kind > uint64(len(sentinels)) {
		d.Fail("unknown error kind %d", kind)
		return nil
	}
	e := &remoteError{msg: string(d.Bytes()), wrap: []error{sentinels[kind-1]}}
	leader, group := d.Uvarint(), d.Uvarint()
	if group != 0 {
		e.wrap = append(e.wrap, &replication.NotLeaderError{Group: group, Leader: leader})
	}
	if th := d.Bytes(); len(th) > 0 {
		te := &engine.ThrottledError{}
		if json.Unmarshal(th, te) == nil {
			e.wrap = append(e.wrap, te)
		}
	}
	return e
}

func encodeReply(r reply) []byte {
	b := []byte{wireVersion}
	b = appendError(b, r.err)
	b = binfmt.AppendString(b, r.session.RangeID)
	b = binary.AppendUvarint(b, r.session.LSN)
	return engine.AppendResults(b, r.res)
}

func decodeReply(b []byte) (reply, error) {
	d := binfmt.NewReader(b, errBadWire)
	if v := d.Byte(); d.Err() == nil && v != wireVersion {
		return reply{}, fmt.Errorf("%w: unknown version %d", errBadWire, v)
	}
	var r reply
	r.err = readError(&d)
	r.session = engine.Session{RangeID: string(d.Bytes()), LSN: d.Uvarint()}
	r.res = engine.ReadResults(&d, maxResults)
	if err := d.Err(); err != nil {
		return reply{}, err
	}
	if d.Len() != 0 {
		return reply{}, fmt.Errorf("%w: %d bytes after the reply", errBadWire, d.Len())
	}
	return r, nil
}
