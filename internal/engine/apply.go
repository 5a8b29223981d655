package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"log"
	"runtime/debug"

	"github.com/parsecdb/parsec/internal/epk"
	"github.com/parsecdb/parsec/internal/jsondoc"
	"github.com/parsecdb/parsec/internal/query/eval"
	"github.com/parsecdb/parsec/internal/query/exec"
	"github.com/parsecdb/parsec/internal/storage"
	"github.com/parsecdb/parsec/synthkey"
)

// OpKind is the kind of one item operation.
type OpKind uint8

// The item operations a Command carries.
const (
	OpCreate OpKind = iota + 1
	OpUpsert
	OpReplace
	OpDelete
	OpPatch
	OpRead
)

var opNames = [...]string{"", "Create", "Upsert", "Replace", "Delete", "Patch", "Read"}

func (k OpKind) String() string { return opNames[k] }

// Op is one prepared item operation: validated, with its EPK computed.
type Op struct {
	Kind OpKind
	ID   string
	Key  epk.Key
	EPK  string
	// Body is the new document without system properties (create, upsert, replace).
	Body []byte
	// Patch is the list of patch operations (patch).
	Patch []jsondoc.PatchOp
	// IfMatch, when set, is the etag the current version must have.
	IfMatch string
	// Condition, when set, is a patch's condition ("FROM c WHERE ..."): the
	// current version must satisfy it. It travels as text and is compiled
	// when applied (CompilePatchCondition checks it before).
	Condition string
	// terms, when set, are the index terms of Body, computed before the
	// operation is queued: a cache beside the command, not part of it (its
	// encoding leaves it out), which txn.index uses only when they were
	// computed under the index the partition applies the operation with.
	terms *docTerms
}

// Command is the unit the apply loop executes: item operations (one, or a
// batch), a split, or a chunk of an index build. It is a plain value with a
// stable encoding (EncodeCommand): everything non-deterministic is decided
// before it is queued and travels in it, and its results travel beside it.
type Command struct {
	Ops []Op
	// Atomic makes the operations all-or-nothing (a transactional batch).
	Atomic bool
	// IfVersion, when set, makes the command apply only if the logical
	// partition of its operations (all of one key) is at this version
	// (logicalState.Version); otherwise every operation fails with
	// ErrRetryWith and nothing is written. A script's writes carry the
	// version of the snapshot it ran against.
	IfVersion *uint64
	// IfSeq, when set, makes the command apply only if its first sequence
	// number is this one, i.e. nothing else took one since the script's
	// snapshot: a procedure whose response shows the _rid or _etag it
	// predicted for a document it wrote carries it, so that what it
	// returned is what was stored. Otherwise as IfVersion.
	IfSeq *uint64
	// Versions keeps every version the command writes, and every delete,
	// for the all-versions-and-deletes change feed (versions.go).
	Versions bool
	// Expired marks the deletes of a command as the time to live's: the
	// server deleting expired items (ttl.go).
	Expired bool
	// StopOnError makes a non-atomic command stop at its first failed
	// operation: the operations after it are not applied and fail with
	// ErrFailedDependency (a bulk request that does not continue on error).
	StopOnError bool
	// Ts is the timestamp (epoch seconds) written into changed items.
	Ts int64
	// Limits are the storage limits the operations are applied under.
	Limits Limits
	// Split, when set, makes this command a split of the partition (and it
	// carries no operations); see split.go.
	Split *SplitCommand
	// Reindex, when set, makes this command a chunk of an index build (and
	// it carries no operations); see index_build.go.
	Reindex *ReindexCommand
	// ID, when set, names the command (the gateway of the node that
	// received it chooses it, at most MaxCommandIDBytes): the partition
	// records the outcome of the command in its outcome table when it
	// applies it, and a command of the same id applied later gets that
	// outcome instead of being applied again (outcome.go).
	ID string
}

// OpResult is the outcome of one operation. The engine speaks no protocol:
// the API layer derives a status from Err, or on success from the
// operation's kind and Created.
type OpResult struct {
	// Err explains a failure; nil on success. It wraps one sentinel of
	// errors.go: ErrNotFound, ErrConflict, ErrPreconditionFailed,
	// ErrBadRequest, ErrTooLarge or ErrLogicalPartitionFull for the
	// operation's own failure, and ErrFailedDependency for every other
	// operation of an atomic batch that one operation failed.
	Err error
	// Created is set when the operation succeeded and added the item (a
	// create, or an upsert of an absent item). A successful operation
	// without it read, replaced, patched or deleted an existing item.
	Created bool
	// Doc is the stored document with system properties after the operation
	// (before it, for a delete; nil when the operation failed).
	Doc []byte
	// Etag is the quoted etag of Doc.
	Etag string
	// Charge is the operation's request charge in RU.
	Charge float64
	// idx is what the charge needs of the operation's index work.
	idx termCounts
	// oldSize is the size of the version a replace or patch replaced.
	oldSize int
}

// partSM is what a partition's commands read and advance besides the store:
// its state record and its index (the partition's index record).
type partSM struct {
	st partState
	ix *indexState
}

// applied is what applying one command gives beside its writes.
type applied struct {
	res   []OpResult   // an item command's outcomes
	next  []byte       // a reindex command: where its chunk stopped; nil at the end
	split *splitResult // a split command
	// recorded: res is the outcome table's record of the command, which
	// was applied before; nothing was written (outcome.go).
	recorded bool
}

// splitResult is what a split made: the container record with the new
// partition map, and the children with their states.
type splitResult struct {
	info     ContainerInfo
	children []RangeInfo
	states   []partState
}

// applyEntry applies one command of partition rangeID at the partition's
// next LSN into b and advances sm: it is the one way a partition's state
// changes, in the partition's loop and in ApplyLog alike. A split and a
// reindex chunk read the committed store through rd, so they run alone in
// their batch (runsAlone); item commands read through b.
//
// Its error is the command's own: b and sm are untouched and the group
// goes on, unless broken is set, when the command failed while writing
// into b and the whole batch must be discarded. A panic in apply is a bug
// of this command alone: it becomes the command's ErrInternal (HTTP 500),
// not the server's death nor the group's failure.
func applyEntry(rd stateReader, b *storage.Batch, ac *applyCtx, rangeID string, sm *partSM, cmd *Command) (out applied, err error, broken bool) {
	t := &txn{b: b}
	ac.rangeID = rangeID
	next := *sm
	next.st.LSN++
	defer func() {
		if x := recover(); x != nil {
			log.Printf("parsec: BUG: partition %s: a command panicked in apply: %v\n%s", rangeID, x, debug.Stack())
			// A split or a chunk may have written into b before it panicked.
			out, err, broken = applied{}, internalError("partition %s: a command panicked in apply: %v", rangeID, x), t.flushing || len(cmd.Ops) == 0
		}
	}()
	switch {
	case cmd.Split != nil:
		// A split writes into b only once it cannot fail.
		sr := &splitResult{}
		sr.info, sr.children, sr.states, err = applySplit(rd, b, ac, rangeID, next.st, cmd.Split)
		out.split = sr
	case cmd.Reindex != nil:
		next.ix, out.next, err = applyReindex(rd, b, ac.rid, rangeID, sm.ix, cmd.Reindex)
		broken = err != nil && !errors.Is(err, errIndexSuperseded)
	default:
		if cmd.ID != "" {
			// A command applied before: its recorded outcome, and nothing
			// written (outcome.go).
			res, ok, rerr := recordedOutcome(rd, ac.rid, rangeID, cmd.ID)
			if rerr != nil {
				return applied{}, rerr, false
			}
			if ok {
				return applied{res: res, recorded: true}, nil, false
			}
		}
		ac.index = sm.ix
		var seq uint64
		if seq, err = next.st.takeSeqs(rangeID, len(cmd.Ops)); err == nil {
			out.res, err = apply(ac, t, cmd, seq, next.st.LSN, &next.st)
			broken = err != nil && t.flushing
		}
		if err == nil && cmd.ID != "" {
			if err = recordOutcome(rd, b, ac.rid, rangeID, &next.st, cmd, out.res); err != nil {
				broken = true
			}
		}
	}
	if err != nil {
		return applied{}, err, broken
	}
	*sm = next
	return out, nil, false
}

// partState is a physical partition's durable state, written atomically with
// every batch the partition commits.
type partState struct {
	LSN   uint64
	Items int64
	Bytes int64
	// Seqs is how many sequence numbers the partition has handed out.
	Seqs uint64
	// Outcomes is how many records its outcome table holds (outcome.go).
	Outcomes uint64
}

// Sequence numbers name the versions the partition writes: an item it
// creates gets its resource id from one, and every version its etag. Each
// partition hands out its own, in apply, so that they follow from the
// partition's log alone (a replica, or a new leader, hands out the same
// ones): bit 63 set (numbers from the store-wide allocator of earlier
// versions never have it), then the range id's number in 23 bits (range ids
// are decimal and never reused in a container), then a 40-bit count.
const (
	seqPartitionBit = 1 << 63
	seqCountBits    = 40
	seqRangeLimit   = 1 << 23
)

// takeSeqs hands out n sequence numbers of partition rangeID and returns
// the first.
func (s *partState) takeSeqs(rangeID string, n int) (uint64, error) {
	num, err := rangeNumber(rangeID)
	if err != nil {
		return 0, err
	}
	if s.Seqs+uint64(n) > 1<<seqCountBits {
		return 0, fmt.Errorf("%w: partition key range %s has written %d versions, all its sequence numbers", ErrUnavailable, rangeID, s.Seqs)
	}
	first := seqPartitionBit | num<<seqCountBits | s.Seqs
	s.Seqs += uint64(n)
	return first, nil
}

func (s partState) encode() []byte {
	b := binary.AppendUvarint(nil, s.LSN)
	b = binary.AppendVarint(b, s.Items)
	b = binary.AppendVarint(b, s.Bytes)
	b = binary.AppendUvarint(b, s.Seqs)
	if s.Outcomes > 0 {
		// Records of partitions without an outcome table end before it.
		b = binary.AppendUvarint(b, s.Outcomes)
	}
	return b
}

// decodePartState decodes the state record of partition key range rangeID;
// a record that does not decode is an ErrCorrupt.
func decodePartState(rangeID string, v []byte) (partState, error) {
	var s partState
	var n int
	if s.LSN, n = binary.Uvarint(v); n <= 0 {
		return s, corrupt("the state record of partition key range %s (%x) has no valid LSN", rangeID, v)
	}
	rest := v[n:]
	if s.Items, n = binary.Varint(rest); n <= 0 {
		return s, corrupt("the state record of partition key range %s (%x) has no valid item count", rangeID, v)
	}
	rest = rest[n:]
	if s.Bytes, n = binary.Varint(rest); n <= 0 {
		return s, corrupt("the state record of partition key range %s (%x) has no valid byte count", rangeID, v)
	}
	// Records written before partitions numbered their versions end here.
	if rest = rest[n:]; len(rest) > 0 {
		if s.Seqs, n = binary.Uvarint(rest); n <= 0 {
			return s, corrupt("the state record of partition key range %s (%x) has no valid sequence count", rangeID, v)
		}
		if rest = rest[n:]; len(rest) > 0 {
			if s.Outcomes, n = binary.Uvarint(rest); n <= 0 || n != len(rest) {
				return s, corrupt("the state record of partition key range %s (%x) has no valid outcome count", rangeID, v)
			}
		}
	}
	return s, nil
}

// Stored item values:
//
//	+------+-----------+--------------+------+----------------------------+
//	| 0x01 | LSN       | etag length  | etag | document with system props |
//	|      | (uvarint) | (uvarint)    |      | (JSON, streamed on reads)  |
//	+------+-----------+--------------+------+----------------------------+
const itemFormat = 1

func encodeItem(dst []byte, lsn uint64, etag string, doc []byte) []byte {
	dst = append(dst, itemFormat)
	dst = binary.AppendUvarint(dst, lsn)
	dst = binary.AppendUvarint(dst, uint64(len(etag)))
	dst = append(dst, etag...)
	return append(dst, doc...)
}

// decodeItem splits the stored value v of the item at storage key key. The
// returned slices alias v. A value that does not decode is an ErrCorrupt.
func decodeItem(key, v []byte) (lsn uint64, etag, doc []byte, err error) {
	if len(v) == 0 {
		return 0, nil, nil, corrupt("%s has an empty value", itemName(key))
	}
	if v[0] != itemFormat {
		return 0, nil, nil, corrupt("%s has a value of unknown format %#x", itemName(key), v[0])
	}
	v = v[1:]
	lsn, n := binary.Uvarint(v)
	if n <= 0 {
		return 0, nil, nil, corrupt("%s has a value with no valid LSN", itemName(key))
	}
	v = v[n:]
	l, n := binary.Uvarint(v)
	if n <= 0 || uint64(len(v)-n) < l {
		return 0, nil, nil, corrupt("%s has a value with no valid etag", itemName(key))
	}
	return lsn, v[n : n+int(l)], v[n+int(l):], nil
}

// applyCtx is what apply needs to know of the container and partition. The
// container's part is fixed for its life and derives from its record; the
// index is the partition's index record (set by reindex commands), fixed
// for the group of commands being applied. So apply stays deterministic.
type applyCtx struct {
	index *indexState
	rid   [storage.RidLen]byte
	self  string // "dbs/<dbRid>/colls/<collRid>/docs/"
	// record is the key of the container record (a split rewrites it).
	record []byte
	paths  [][]string
	// synth is the declared synthetic partition key, or nil.
	synth *synthkey.Expr
	// text is the container's full-text indexes, nil if none; rangeID is
	// the partition applying (its statistics records).
	text    *textConfig
	rangeID string
}

// txn is one command's view of the partition: its writes sit in an overlay
// until the command succeeds, so a failed batch leaves no trace.
type txn struct {
	b *storage.Batch
	// flushing is set once the overlay is being written into b: a failure
	// from then on leaves b half written.
	flushing bool
	keys     []string
	vals     map[string][]byte // nil value: deleted
	items    int64
	bytes    int64
	// undo records what each put replaced, so that a failed operation of a
	// non-atomic batch can be rolled back to a savepoint.
	undo []undoRec
}

type undoRec struct {
	key string
	val []byte
	had bool
}

// savepoint is a position in a txn that rollback returns to.
type savepoint struct {
	undo         int
	items, bytes int64
}

func (t *txn) savepoint() savepoint {
	return savepoint{undo: len(t.undo), items: t.items, bytes: t.bytes}
}

// rollback undoes every put since sp.
func (t *txn) rollback(sp savepoint) {
	for i := len(t.undo) - 1; i >= sp.undo; i-- {
		u := t.undo[i]
		if u.had {
			t.vals[u.key] = u.val
			continue
		}
		// The put added the key, as the last of keys (puts are undone in
		// reverse order).
		delete(t.vals, u.key)
		t.keys = t.keys[:len(t.keys)-1]
	}
	t.undo = t.undo[:sp.undo]
	t.items, t.bytes = sp.items, sp.bytes
}

func (t *txn) get(key []byte) ([]byte, bool, error) {
	if v, ok := t.vals[string(key)]; ok {
		return v, v != nil, nil
	}
	v, err := t.b.Get(nil, key)
	if err == storage.ErrNotFound {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("%w: cannot read item: %v", ErrUnavailable, err)
	}
	return v, true, nil
}

func (t *txn) put(key, v []byte) {
	if t.vals == nil {
		t.vals = map[string][]byte{}
	}
	prev, had := t.vals[string(key)]
	if !had {
		t.keys = append(t.keys, string(key))
	}
	t.undo = append(t.undo, undoRec{key: string(key), val: prev, had: had})
	t.vals[string(key)] = v
}

func (t *txn) flush() error {
	t.flushing = true
	for _, k := range t.keys {
		v := t.vals[k]
		var err error
		if v == nil {
			err = t.b.Delete([]byte(k))
		} else {
			err = t.b.Set([]byte(k), v)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// apply executes cmd at lsn through the overlay t (over the group's batch)
// and the partition state st; operation i writes with sequence number
// seq+i. It is deterministic: its effects depend only on cmd, seq, lsn and
// what it reads. A command that fails (an atomic batch with
// any failed operation, a single failed operation, or a returned error)
// writes nothing, unless the error came while flushing t (t.flushing).
func apply(ac *applyCtx, t *txn, cmd *Command, seq, lsn uint64, st *partState) ([]OpResult, error) {
	res := make([]OpResult, len(cmd.Ops))
	if cmd.IfSeq != nil && seq != *cmd.IfSeq {
		for i := range res {
			res[i] = OpResult{Err: fmt.Errorf("%w: partition writes took sequence numbers while the script ran (next %#x, expected %#x)", ErrRetryWith, seq, *cmd.IfSeq)}
		}
		return res, nil
	}
	if cmd.IfVersion != nil {
		v, err := t.logicalVersion(ac, &cmd.Ops[0])
		if err != nil {
			return nil, err
		}
		if v != *cmd.IfVersion {
			for i := range res {
				res[i] = OpResult{Err: fmt.Errorf("%w: the logical partition %s changed (version %d, expected %d) while the script ran", ErrRetryWith, cmd.Ops[0].Key, v, *cmd.IfVersion)}
			}
			return res, nil
		}
	}
	failed := -1
	for i := range cmd.Ops {
		if failed >= 0 && cmd.StopOnError {
			res[i] = OpResult{Err: fmt.Errorf("%w: operation %d of the batch failed", ErrFailedDependency, failed)}
			continue
		}
		sp := t.savepoint()
		r, err := applyOp(ac, t, st, &cmd.Ops[i], cmd, seq+uint64(i), lsn)
		if err != nil {
			return nil, err
		}
		res[i] = r
		if r.Err != nil {
			t.rollback(sp)
		}
		if r.Err != nil && failed < 0 {
			failed = i
			if cmd.Atomic {
				break
			}
		}
	}
	if cmd.Atomic && failed >= 0 {
		for i := range res {
			if i != failed {
				res[i] = OpResult{Err: fmt.Errorf("%w: operation %d of the batch failed", ErrFailedDependency, failed)}
			}
		}
		return res, nil
	}
	// A non-atomic batch keeps each operation's own outcome: the overlay holds
	// only the writes of the operations that succeeded.
	if err := t.flush(); err != nil {
		return nil, fmt.Errorf("%w: cannot write batch: %v", ErrUnavailable, err)
	}
	st.Items += t.items
	st.Bytes += t.bytes
	return res, nil
}

// applyOp executes one operation into the overlay. A failure it reports in
// OpResult.Err is the operation's (apply rolls its writes back); a returned
// error fails the whole command (a storage failure, or a stored item that
// cannot be read), never the rest of the group.
func applyOp(ac *applyCtx, t *txn, st *partState, op *Op, cmd *Command, seq, lsn uint64) (OpResult, error) {
	key := storage.ItemKey(nil, ac.rid, op.EPK, op.ID)
	cur, exists, err := t.get(key)
	if err != nil {
		return OpResult{}, err
	}
	var curEtag, curDoc []byte
	var curLSN uint64
	if exists {
		if curLSN, curEtag, curDoc, err = decodeItem(key, cur); err != nil {
			return OpResult{}, err
		}
	}
	fail := func(err error) (OpResult, error) { return OpResult{Err: err}, nil }
	switch op.Kind {
	case OpCreate:
		if exists {
			return fail(conflict("an item with id %q already exists in partition %s", op.ID, op.Key))
		}
	case OpReplace, OpDelete, OpPatch, OpRead:
		if !exists {
			return fail(notFound("no item with id %q in partition %s", op.ID, op.Key))
		}
	case OpUpsert:
	default:
		panic(fmt.Sprintf("BUG: an operation of unknown kind %d", op.Kind))
	}
	if op.IfMatch != "" && op.IfMatch != "*" && exists && op.IfMatch != string(curEtag) {
		return fail(fmt.Errorf("%w: the item's etag is %s, not %s", ErrPreconditionFailed, curEtag, op.IfMatch))
	}
	if op.IfMatch != "" && op.IfMatch != "*" && !exists && op.Kind == OpUpsert {
		return fail(fmt.Errorf("%w: if-match %s given, but no item with id %q exists", ErrPreconditionFailed, op.IfMatch, op.ID))
	}

	switch op.Kind {
	case OpRead:
		return OpResult{Doc: curDoc, Etag: string(curEtag)}, nil
	case OpDelete:
		delta := -int64(len(key) + len(cur))
		if _, err := t.logical(ac, op, 0, -1, delta, lsn); err != nil {
			return OpResult{}, err
		}
		tc, err := t.index(ac, op, curDoc, nil, jsondoc.System{})
		if err != nil {
			return OpResult{}, err
		}
		tr, err := t.text(ac, op, curDoc, nil)
		if err != nil {
			return OpResult{}, err
		}
		tc.terms += tr.terms
		t.put(key, nil)
		t.unchange(ac, curEtag)
		if seq, ok := createdSeq(curDoc); ok {
			t.put(storage.RidKey(nil, ac.rid, seq), nil)
		}
		if cmd.Versions {
			op := byte(versionDelete)
			if cmd.Expired {
				op = versionExpire
			}
			t.put(storage.VersionKey(nil, ac.rid, seq), encodeVersion(op, cmd.Ts, lsn, curLSN, key, curDoc))
		}
		t.items--
		t.bytes += delta
		return OpResult{Doc: curDoc, Etag: string(curEtag), idx: tc}, nil
	}

	body := op.Body
	if op.Kind == OpPatch && op.Condition != "" {
		cond, err := CompilePatchCondition(op.Condition)
		if err != nil {
			return fail(err)
		}
		ok, err := conditionHolds(cond, key, curDoc)
		var qe *eval.Error
		if err != nil && !errors.As(err, &qe) {
			return OpResult{}, err // the stored item's fault, not the request's
		}
		if err != nil {
			return fail(badRequest("the patch condition cannot be evaluated: %v", err))
		}
		if !ok {
			return fail(fmt.Errorf("%w: the item does not satisfy the patch condition", ErrPreconditionFailed))
		}
	}
	if op.Kind == OpPatch {
		base := jsondoc.StripSystem(nil, curDoc)
		patched, err := jsondoc.ApplyPatch(base, op.Patch)
		if err != nil {
			return fail(badRequest("%v", err))
		}
		if err := checkPatchedIdentity(ac, patched, op); err != nil {
			return fail(err)
		}
		if err := checkDocTTL(patched); err != nil {
			return fail(err)
		}
		if len(patched) > MaxItemBytes {
			return fail(fmt.Errorf("%w: the patched item would be %d bytes; the limit is %d bytes", ErrTooLarge, len(patched), MaxItemBytes))
		}
		body = patched
	}

	rid := ridOf(curDoc)
	if !exists {
		rid = encodeRid(binary.BigEndian.AppendUint64(append([]byte(nil), ac.rid[:]...), seq))
	}
	etag := etagOf(seq)
	sys := jsondoc.System{Rid: rid, Self: ac.self + rid + "/", Etag: etag, Ts: cmd.Ts}
	doc := jsondoc.WithSystem(nil, body, sys)
	val := encodeItem(nil, lsn, etag, doc)
	delta := int64(len(key) + len(val))
	if exists {
		delta -= int64(len(key) + len(cur))
	}
	if max := cmd.Limits.PartitionBytes; max > 0 && delta > 0 && st.Bytes+t.bytes+delta > max {
		return fail(badRequest("the container is a fixed container (created without a partition key), which is limited to %d bytes and never splits; it holds %d bytes. Move the data to a container with a partition key", max, st.Bytes+t.bytes))
	}
	var newItems int64
	if !exists {
		newItems = 1
	}
	if r, err := t.logical(ac, op, cmd.Limits.LogicalBytes, newItems, delta, lsn); err != nil || r != nil {
		if r != nil {
			return *r, err
		}
		return OpResult{}, err
	}
	tc, err := t.index(ac, op, curDoc, doc, sys)
	if err == nil {
		var tr textRecords
		tr, err = t.text(ac, op, curDoc, doc)
		tc.terms += tr.terms
		tc.changed += tr.changed
	}
	if err != nil {
		if errors.Is(err, ErrBadRequest) {
			return fail(err)
		}
		return OpResult{}, err
	}
	t.put(key, val)
	if exists {
		t.unchange(ac, curEtag)
	}
	t.put(storage.ChangeKey(nil, ac.rid, seq), key)
	if !exists {
		t.put(storage.RidKey(nil, ac.rid, seq), key)
	}
	if cmd.Versions {
		op, prev := byte(versionCreate), uint64(0)
		if exists {
			op, prev = versionReplace, curLSN
		}
		t.put(storage.VersionKey(nil, ac.rid, seq), encodeVersion(op, cmd.Ts, lsn, prev, key, doc))
	}
	t.bytes += delta
	t.items += newItems
	return OpResult{Created: !exists, Doc: doc, Etag: etag, idx: tc, oldSize: len(curDoc)}, nil
}

// unchange removes the change-index entry of an item version that is being
// replaced or deleted, so that the index holds each item once, under its
// current version. Versions written before items had change entries have
// none to remove; deleting a key that is not there is harmless.
func (t *txn) unchange(ac *applyCtx, etag []byte) {
	if seq, ok := seqOfEtag(etag); ok {
		t.put(storage.ChangeKey(nil, ac.rid, seq), nil)
	}
}

// logical updates the size record of op's logical partition by the deltas,
// refusing growth past the logical partition limit, and sets its version
// to lsn. A non-nil result is the operation's failure.
func (t *txn) logical(ac *applyCtx, op *Op, maxBytes, items, bytes int64, lsn uint64) (*OpResult, error) {
	lk := storage.LogicalKey(nil, ac.rid, op.EPK, op.Key.String())
	v, ok, err := t.get(lk)
	if err != nil {
		return nil, err
	}
	var ls logicalState
	if ok {
		if ls, err = decodeLogicalState(lk, v); err != nil {
			return nil, err
		}
	}
	if bytes > 0 && maxBytes > 0 && ls.Bytes+bytes > maxBytes {
		return &OpResult{Err: fmt.Errorf("%w: the logical partition %s holds %d bytes; the limit is %d bytes per partition key value. Spread the data over more partition key values (for example a synthetic key with a suffix)",
			ErrLogicalPartitionFull, op.Key, ls.Bytes, maxBytes)}, nil
	}
	ls.Items += items
	ls.Bytes += bytes
	ls.Version = lsn
	if ls.Items <= 0 {
		t.put(lk, nil)
	} else {
		t.put(lk, ls.encode())
	}
	return nil, nil
}

// logicalVersion reads the version of op's logical partition.
func (t *txn) logicalVersion(ac *applyCtx, op *Op) (uint64, error) {
	lk := storage.LogicalKey(nil, ac.rid, op.EPK, op.Key.String())
	v, ok, err := t.get(lk)
	if err != nil || !ok {
		return 0, err
	}
	ls, err := decodeLogicalState(lk, v)
	return ls.Version, err
}

// logicalState is the size of one logical partition (one partition key
// value), kept beside the items so that limits, split points and the top
// keys by storage need no scan of the items.
//
// Version is the LSN of the last command that wrote the logical partition
// (0 for records written before versions were kept, and for a logical
// partition without items, which has no record): a command with
// IfVersion applies only if it is unchanged, so that a script's writes,
// computed from a snapshot, commit only over the state the script read.
type logicalState struct {
	Items   int64
	Bytes   int64
	Version uint64
}

func (s logicalState) encode() []byte {
	b := binary.AppendVarint(binary.AppendVarint(nil, s.Items), s.Bytes)
	if s.Version != 0 {
		b = binary.AppendUvarint(b, s.Version)
	}
	return b
}

// decodeLogicalState decodes the size record v stored at key; a record that
// does not decode is an ErrCorrupt.
func decodeLogicalState(key, v []byte) (logicalState, error) {
	var s logicalState
	var n int
	if s.Items, n = binary.Varint(v); n <= 0 {
		return s, corrupt("the size record of %s (%x) has no valid item count", logicalName(key), v)
	}
	rest := v[n:]
	if s.Bytes, n = binary.Varint(rest); n <= 0 {
		return s, corrupt("the size record of %s (%x) has no valid byte count", logicalName(key), v)
	}
	// Records written before logical partitions had versions end here.
	if rest = rest[n:]; len(rest) > 0 {
		if s.Version, n = binary.Uvarint(rest); n <= 0 || n != len(rest) {
			return s, corrupt("the size record of %s (%x) has no valid version", logicalName(key), v)
		}
	}
	return s, nil
}

// ridOf extracts the "_rid" of a stored document, or "" if it has none.
func ridOf(doc []byte) string {
	if doc == nil {
		return ""
	}
	sc, err := jsondoc.Scan(doc, [][]string{{"_rid"}})
	if err != nil || sc.Values[0] == nil {
		return ""
	}
	s, _ := jsondoc.UnquoteString(sc.Values[0])
	return s
}

// createdSeq is the sequence number of the version that created a stored
// document: the last 8 bytes of its "_rid", the key of its entry in the
// resource-id index (storage.RidKey).
func createdSeq(doc []byte) (uint64, bool) {
	b, err := decodeRid(ridOf(doc))
	if err != nil || len(b) != storage.RidLen+8 {
		return 0, false
	}
	return binary.BigEndian.Uint64(b[storage.RidLen:]), true
}

// checkPatchedIdentity verifies that a patch changed neither the id nor the
// partition key of the item.
func checkPatchedIdentity(ac *applyCtx, doc []byte, op *Op) error {
	sc, err := jsondoc.Scan(doc, ac.paths)
	if err != nil {
		return badRequest("the patched document is not valid: %v", err)
	}
	if id, ok := jsondoc.UnquoteString(sc.ID); !ok || id != op.ID {
		return badRequest("a patch cannot change or remove the id of an item")
	}
	key, err := keyOf(sc.Values)
	if err != nil {
		return badRequest("the patched document has an invalid partition key: %v", err)
	}
	if !key.Equal(op.Key) {
		return badRequest("a patch cannot change the partition key of an item (it would change from %s to %s)", op.Key, key)
	}
	if ac.synth != nil {
		return checkSyntheticPatch(ac.synth, doc, op.Key)
	}
	return nil
}

// keyOf turns the raw values at the partition-key paths into a key; a missing
// value, an object or an array is the undefined component.
func keyOf(values [][]byte) (epk.Key, error) {
	key := make(epk.Key, len(values))
	for i, v := range values {
		v = bytes.TrimSpace(v)
		if len(v) == 0 || v[0] == '{' || v[0] == '[' {
			// A path the document does not hold, or that holds an object
			// or an array, which are not key values: the service gives
			// the document the undefined key component there, as the
			// SDKs do when they extract a key ({} is their "none").
			key[i] = epk.Component{Kind: epk.KindUndefined}
			continue
		}
		c, err := epk.ComponentFromJSON(v)
		if err != nil {
			return nil, err
		}
		key[i] = c
	}
	return key, nil
}

// conditionLimits bound a patch condition, which runs inside the
// partition's write loop: every write to the partition waits for it. The
// bounds are counts, so a condition's fate depends only on it and the
// document, never on the machine's load: 100,000 steps are a few
// milliseconds of evaluation.
var conditionLimits = exec.Limits{
	MaxSteps: DefaultConditionSteps,
	MaxBytes: DefaultConditionBytes,
	What:     "the patch condition",
}

// Defaults of the patch condition's budget.
const (
	DefaultConditionSteps = 100_000
	DefaultConditionBytes = 4 << 20
)

// conditionHolds reports whether a stored document satisfies a compiled
// patch condition: whether the query gives it a row. A condition that
// passes its budget (conditionLimits) is an error wrapping eval.ErrBudget.
func conditionHolds(cond *exec.Plan, key, doc []byte) (bool, error) {
	v, err := eval.FromJSON(doc)
	if err != nil {
		return false, corrupt("%s holds a document that is not valid JSON: %v", itemName(key), err)
	}
	rows, _, err := exec.ExecLimits(cond, []exec.Source{&oneDoc{key: key, doc: v}}, nil, 1, &conditionLimits)
	return len(rows) > 0, err
}

// oneDoc is a Source of one document.
type oneDoc struct {
	key  []byte
	doc  eval.Value
	done bool
}

func (s *oneDoc) Next() ([]byte, eval.Value, bool, error) {
	if s.done {
		return nil, eval.Value{}, false, nil
	}
	s.done = true
	return s.key, s.doc, true, nil
}
