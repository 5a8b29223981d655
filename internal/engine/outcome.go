package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/parsecdb/parsec/internal/binfmt"
	"github.com/parsecdb/parsec/internal/storage"
)

// The outcome table. A command that carries an id (Command.ID, chosen by
// the gateway of the node that received it) is remembered by the
// partition that applies it: in the same batch as the command's writes,
// apply records the command's results under its id. The record is part of
// the partition's replicated state (an evaluated entry carries it among
// its writes, a command entry writes it on every replica, and a range
// snapshot holds it: rangeSections), so every replica and every later
// leader knows it. A command whose id is in the table is not applied
// again: its results are the recorded ones, and nothing is written.
//
// That is what makes a write safe to retry when its outcome is unknown
// (its leader died, or lost the leadership, with the entry in flight, or
// its reply was lost): the gateway sends the same command, with the same
// id, to the partition's leader, and
//
//   - if the first attempt committed, the record is in the leader's state
//     (the leader evaluates on its published state, and an entry of an
//     earlier term that commits after the evaluation changes the
//     partition's LSN, so the evaluation is rejected and done again: see
//     replicated.go), and the client gets the first attempt's results:
//     a create is acknowledged once, never answered 409 by its own first
//     attempt;
//   - if it did not commit, it never will once the retry commits (the
//     retry's entry is of the new leader's term, after which no entry of
//     an earlier term can commit), and the retry applies the command: the
//     retry is the fence.
//
// The table is bounded by count and age: every record also has an entry
// in an age index (by the command's timestamp, Command.Ts), and the
// partition state counts the records (partState.Outcomes). Recording a
// command first evicts, oldest first, up to evictPerRecord records that
// are older than MaxOutcomeAge or in excess of MaxOutcomes-1: so the
// table never holds more than MaxOutcomes records, and a record lives at
// least MaxOutcomeAge unless more than MaxOutcomes commands were recorded
// since (about MaxOutcomes/MaxOutcomeAge commands a second per
// partition). A retry comes within seconds (gateway.LeaderWait), well
// inside both. The clock is the commands' own timestamps, so every
// replica evicts the same records.
const (
	MaxOutcomes    = 4096
	MaxOutcomeAge  = 120 // seconds
	evictPerRecord = 4
	// maxRecordedResults bounds the results a record holds (a batch's
	// operations); a command with more is applied without a record.
	maxRecordedResults = 1000
)

// errBadOutcome is the error of an outcome record that does not decode.
var errBadOutcome = errors.New("malformed outcome record")

// resultSentinels are the errors a recorded result may wrap, by index+1.
var resultSentinels = []error{
	ErrPartitionKeyMismatch, ErrBadRequest, ErrNotFound, ErrConflict, ErrPreconditionFailed, ErrTooLarge,
	ErrFailedDependency, ErrLogicalPartitionFull, ErrQuotaExceeded, ErrRetryWith, ErrTimeout, ErrInternal,
}

// AppendResults appends the encoding of a command's results: what an API
// answers from (each one's error, as its sentinel and message, creation,
// document, etag and charge). Gateways use it to carry results between
// nodes.
//
//	results = count:uvarint result*
//	result  = errKind:uvarint [errMsg:str] created:1 doc:str etag:str charge:8
func AppendResults(b []byte, res []OpResult) []byte {
	b = binary.AppendUvarint(b, uint64(len(res)))
	for i := range res {
		x := &res[i]
		if x.Err == nil {
			b = append(b, 0)
		} else {
			kind := len(resultSentinels) // ErrInternal for an error of no kind
			for j, s := range resultSentinels {
				if errors.Is(x.Err, s) {
					kind = j + 1
					break
				}
			}
			b = binary.AppendUvarint(b, uint64(kind))
			b = binfmt.AppendString(b, x.Err.Error())
		}
		if x.Created {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
		b = binfmt.AppendString(b, string(x.Doc))
		b = binfmt.AppendString(b, x.Etag)
		b = binary.BigEndian.AppendUint64(b, math.Float64bits(x.Charge))
	}
	return b
}

// recordedError is a result's error read back from its encoding: its
// message, wrapping its sentinel.
type recordedError struct {
	msg  string
	kind error
}

func (e *recordedError) Error() string { return e.msg }
func (e *recordedError) Unwrap() error { return e.kind }

// ReadResults reads results AppendResults wrote, at most max of them.
func ReadResults(d *binfmt.Reader, max int) []OpResult {
	n := d.Uvarint()
	if n > uint64(max) || n > uint64(d.Len()) {
		d.Fail("%d results", n)
		return nil
	}
	out := make([]OpResult, 0, n)
	for range n {
		var x OpResult
		if kind := d.Uvarint(); kind > uint64(len(resultSentinels)) {
			d.Fail("unknown error kind %d", kind)
		} else if kind > 0 {
			x.Err = &recordedError{msg: string(d.Bytes()), kind: resultSentinels[kind-1]}
		}
		x.Created = d.Byte() == 1
		if doc := d.Bytes(); len(doc) > 0 {
			x.Doc = append([]byte(nil), doc...)
		}
		x.Etag = string(d.Bytes())
		if c := d.Take(8); len(c) == 8 {
			x.Charge = math.Float64frombits(binary.BigEndian.Uint64(c))
		}
		if d.Err() != nil {
			return nil
		}
		out = append(out, x)
	}
	return out
}

// recordedOutcome returns the results recorded for command id in the
// partition's table, if any.
func recordedOutcome(rd stateReader, rid [storage.RidLen]byte, rangeID, id string) ([]OpResult, bool, error) {
	v, err := rd.Get(nil, storage.PartitionOutcomeKey(rid, rangeID, id))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("%w: cannot read the outcome of command %q: %v", ErrUnavailable, id, err)
	}
	d := binfmt.NewReader(v, errBadOutcome)
	d.Take(8) // its timestamp
	res := ReadResults(&d, maxRecordedResults)
	if d.Err() != nil || d.Len() != 0 {
		return nil, false, corrupt("the outcome record of command %q in partition key range %s does not decode: %v", id, rangeID, d.Err())
	}
	return res, true, nil
}

// recordOutcome records res as the outcome of cmd (which has an id) in
// the partition's table, writing into b, after evicting what the rule
// above evicts; st is the partition's state after cmd, whose count of
// records it keeps.
func recordOutcome(rd stateReader, b *storage.Batch, rid [storage.RidLen]byte, rangeID string, st *partState, cmd *Command, res []OpResult) error {
	if len(res) > maxRecordedResults {
		return nil
	}
	_, _, ageLo, ageHi := storage.PartitionOutcomeSpans(rid, rangeID)
	// The oldest records, which the rule evicts, are found first and
	// deleted after the iteration.
	var old [][]byte
	outcomes := st.Outcomes
	err := rd.Iterate(ageLo, ageHi, func(k, _ []byte) (bool, error) {
		if len(old) >= evictPerRecord || len(k) < len(ageLo)+8 {
			return false, nil
		}
		ts := int64(binary.BigEndian.Uint64(k[len(ageLo):]))
		if outcomes < MaxOutcomes && cmd.Ts-ts <= MaxOutcomeAge {
			return false, nil // the oldest is young enough, and there is room
		}
		old = append(old, bytesClone(k))
		if outcomes > 0 {
			outcomes--
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("%w: cannot read the outcome table: %v", ErrUnavailable, err)
	}
	for _, k := range old {
		id := string(k[len(ageLo)+8:])
		if err := errors.Join(b.Delete(storage.PartitionOutcomeKey(rid, rangeID, id)), b.Delete(k)); err != nil {
			return fmt.Errorf("%w: cannot evict from the outcome table: %v", ErrUnavailable, err)
		}
	}
	st.Outcomes = outcomes
	if st.Outcomes >= MaxOutcomes {
		return nil // older records than evictPerRecord can take: no room for this one
	}
	v := binary.BigEndian.AppendUint64(nil, uint64(cmd.Ts))
	v = AppendResults(v, res)
	if err := b.Set(storage.PartitionOutcomeKey(rid, rangeID, cmd.ID), v); err != nil {
		return fmt.Errorf("%w: cannot record the outcome of command %q: %v", ErrUnavailable, cmd.ID, err)
	}
	if err := b.Set(storage.PartitionOutcomeAgeKey(rid, rangeID, cmd.Ts, cmd.ID), nil); err != nil {
		return fmt.Errorf("%w: cannot record the outcome of command %q: %v", ErrUnavailable, cmd.ID, err)
	}
	st.Outcomes++
	return nil
}

func bytesClone(b []byte) []byte { return append([]byte(nil), b...) }
