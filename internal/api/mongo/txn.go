package mongo

import (
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/epk"
)

// Multi-document transactions within one logical partition (DESIGN.md,
// "Transactions"). A transaction's writes do not reach the engine until
// commitTransaction: each is computed against the transaction's view and
// buffered per document, with the etag of the committed version it
// replaced; the commit is one atomic engine command whose operations carry
// those etags as preconditions, so a document someone else wrote meanwhile
// fails the commit (WriteConflict) and nothing is written.

// Limits of the session table and of one transaction.
const (
	// DefaultTransactionLifetime aborts a transaction idle that long
	// (mongod's transactionLifetimeLimitSeconds).
	DefaultTransactionLifetime = 60 * time.Second
	// maxEndSessions is the most session ids one endSessions takes
	// (mongod's limit).
	maxEndSessions = 10_000
	// maxTxnOps is the most engine operations one commit may hold
	// (documents and their unique-index guards): one atomic engine batch.
	maxTxnOps = engine.MaxBatchOps
	// maxTxnBytes bounds the BSON of the documents a transaction buffers.
	maxTxnBytes = MaxDocumentBytes
	// maxTxnDocs bounds the documents a transaction keeps track of,
	// counting those it created and deleted again.
	maxTxnDocs = 10 * maxTxnOps
)

// Error labels drivers act on.
const (
	labelTransient = "TransientTransactionError"
)

func noSuchTxn(format string, args ...any) *cmdError {
	e := newErr(251, "NoSuchTransaction", format, args...)
	e.Labels = []string{labelTransient}
	return e
}

func writeConflict(format string, args ...any) *cmdError {
	e := newErr(112, "WriteConflict", format, args...)
	e.Labels = []string{labelTransient}
	return e
}

func notInTxn(format string, args ...any) *cmdError {
	return newErr(263, "OperationNotSupportedInTransaction", format, args...)
}

type txnState int

const (
	txnActive txnState = iota
	txnCommitted
	txnAborted
)

// session is a logical session that ran a transaction. Its mutex is held
// while one of its commands runs.
type session struct {
	mu        sync.Mutex
	owner     principal // whose session it is
	gone      bool      // removed from the table
	txnNumber int64
	state     txnState
	why       string // why the transaction was aborted
	tx        *transaction
	lastUsed  time.Time
}

func (s *session) abort(why string) {
	if s.state == txnActive {
		s.state, s.why, s.tx = txnAborted, why, nil
	}
}

// sessionTable holds the sessions by user and lsid (a session id names a
// session of the user who sends it, as mongod's are each user's), within
// a quota of sessions per user.
type sessionTable struct {
	mu    sync.Mutex
	m     map[string]*session
	count quota
	life  time.Duration
	now   func() time.Time
}

func newSessionTable(max int, life time.Duration, now func() time.Time) *sessionTable {
	return &sessionTable{m: map[string]*session{}, count: quota{max: int64(max)}, life: life, now: now}
}

// sessionKey is the table's key of who's session lsid.
func sessionKey(who principal, lsid string) string {
	return string(rune('0'+who)) + lsid
}

// removeLocked drops session key from the table, its lock held.
func (t *sessionTable) removeLocked(key string, s *session) {
	s.gone = true
	delete(t.m, key)
	t.count.add(s.owner, -1)
}

// expire drops sessions idle past the lifetime (a transaction still
// active then is aborted with them). Busy sessions are left alone.
func (t *sessionTable) expire() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.expireLocked()
}

func (t *sessionTable) expireLocked() {
	now := t.now()
	for id, s := range t.m {
		if !s.mu.TryLock() {
			continue
		}
		if now.Sub(s.lastUsed) > t.life {
			t.removeLocked(id, s)
		}
		s.mu.Unlock()
	}
}

// end drops who's sessions of endSessions (a busy one is left to expire).
func (t *sessionTable) end(ids []string, who principal) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, id := range ids {
		key := sessionKey(who, id)
		s := t.m[key]
		if s == nil || !s.mu.TryLock() {
			continue
		}
		t.removeLocked(key, s)
		s.mu.Unlock()
	}
}

func cmdEndSessions(r *request) (bson.D, error) {
	v := r.cmd[0].Value
	list, ok := v.(bson.A)
	if !ok {
		return nil, typeMismatch("endSessions needs an array of session ids")
	}
	if len(list) > maxEndSessions {
		return nil, badValue("endSessions takes at most %d sessions", maxEndSessions)
	}
	var ids []string
	for _, x := range list {
		d, ok := x.(bson.D)
		if !ok {
			continue
		}
		if id, ok := lookupField(d, "id"); ok {
			if bin, ok := id.(bson.Binary); ok {
				ids = append(ids, string(bin.Data))
			}
		}
	}
	r.s.txns.end(ids, r.c.principal())
	return nil, nil
}

func (t *sessionTable) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}

// txnArgs are a command's transaction fields.
type txnArgs struct {
	lsid   string
	num    int64
	start  bool
	active bool // the command is part of a transaction (autocommit: false)
}

// txnFields reads lsid, txnNumber, startTransaction and autocommit.
func (r *request) txnFields() (txnArgs, error) {
	var a txnArgs
	ac, hasAC := r.get("autocommit")
	_, hasNum := r.get("txnNumber")
	_, hasStart := r.get("startTransaction")
	if !hasAC {
		if hasNum || hasStart {
			// A retryable write: the server is a standalone without them.
			return a, newErr(20, "IllegalOperation", "Transaction numbers are only allowed in a transaction (autocommit: false) on Parsec's MongoDB API: it is a standalone, without retryable writes")
		}
		return a, nil
	}
	if b, ok := ac.(bool); !ok || b {
		return a, badValue("autocommit must be false when given; only multi-document transactions are supported")
	}
	n, ok := r.get("txnNumber")
	num, isLong := n.(int64)
	if !ok || !isLong || num < 0 {
		return a, badValue("a command with autocommit: false needs a txnNumber of type long, not negative")
	}
	if hasStart && !r.boolean("startTransaction") {
		return a, badValue("startTransaction must be true when given")
	}
	ls, err := r.doc("lsid")
	if err != nil {
		return a, err
	}
	id, _ := lookupField(ls, "id")
	bin, ok := id.(bson.Binary)
	if !ok || len(bin.Data) == 0 || len(bin.Data) > 64 {
		return a, badValue("a transaction needs a session: lsid {id: <binary>}")
	}
	return txnArgs{lsid: string(bin.Data), num: num, start: hasStart, active: true}, nil
}

// enter finds or starts who's session's transaction for a command and
// returns the session locked; the caller unlocks it.
func (t *sessionTable) enter(a txnArgs, cmd string, who principal) (*session, error) {
	key := sessionKey(who, a.lsid)
	for {
		t.mu.Lock()
		s := t.m[key]
		if s == nil {
			if !a.start {
				t.mu.Unlock()
				return nil, noSuchTxn("Given transaction number %d does not match any in-progress transactions. The active transaction number is -1", a.num)
			}
			if !t.count.fits(who, 1) {
				t.expireLocked()
			}
			if !t.count.fits(who, 1) {
				t.mu.Unlock()
				return nil, newErr(261, "TooManyLogicalSessions", "cannot start a transaction: %s hold %d sessions with one, all users %d, of the server's %d (at most %d for %s)",
					who, t.count.used[who], t.count.total(), t.count.max, t.count.share(who), who)
			}
			s = &session{owner: who, txnNumber: -1, state: txnAborted}
			t.m[key] = s
			t.count.add(who, 1)
		}
		t.mu.Unlock()
		s.mu.Lock()
		if s.gone {
			s.mu.Unlock()
			continue
		}
		if err := s.enterLocked(a, cmd, t.now(), t.life); err != nil {
			s.mu.Unlock()
			return nil, err
		}
		return s, nil
	}
}

func (s *session) enterLocked(a txnArgs, cmd string, now time.Time, life time.Duration) error {
	if s.state == txnActive && now.Sub(s.lastUsed) > life {
		s.abort(fmt.Sprintf("it was idle for more than %v (the transaction lifetime limit)", life))
	}
	s.lastUsed = now
	if a.num < s.txnNumber {
		return newErr(225, "TransactionTooOld", "Cannot run command on transaction %d: transaction %d has already started on this session", a.num, s.txnNumber)
	}
	if a.start {
		if a.num == s.txnNumber {
			return newErr(117, "ConflictingOperationInProgress", "transaction %d has already been started on this session", a.num)
		}
		if cmd == "commitTransaction" || cmd == "abortTransaction" {
			return badValue("%s cannot start a transaction", cmd)
		}
		s.txnNumber, s.state, s.why, s.tx = a.num, txnActive, "", &transaction{}
		return nil
	}
	if a.num > s.txnNumber {
		return noSuchTxn("Given transaction number %d does not match any in-progress transactions. The active transaction number is %d", a.num, s.txnNumber)
	}
	switch s.state {
	case txnAborted:
		return noSuchTxn("Transaction with txnNumber %d has been aborted: %s", a.num, s.why)
	case txnCommitted:
		if cmd == "commitTransaction" {
			return nil // a retried commit: answered again
		}
		return newErr(256, "TransactionCommitted", "Transaction with txnNumber %d has been committed", a.num)
	}
	return nil
}

// allowedInTxn are the commands a transaction may run.
var allowedInTxn = map[string]bool{
	"insert": true, "update": true, "delete": true, "findAndModify": true, "findandmodify": true,
	"find": true, "getMore": true, "killCursors": true, "aggregate": true, "count": true, "distinct": true,
	"commitTransaction": true, "abortTransaction": true,
}

// runInTxn runs a command of a transaction.
func (r *request) runInTxn(a txnArgs, h handler) (bson.D, error) {
	if !allowedInTxn[r.name] {
		// Refused before the session is touched: the transaction goes on.
		return nil, notInTxn("Cannot run '%s' in a multi-document transaction", r.name)
	}
	s, err := r.s.txns.enter(a, r.name, r.c.principal())
	if err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	r.sess = s
	out, err := h(r)
	if r.name == "commitTransaction" || r.name == "abortTransaction" {
		return out, err
	}
	if err != nil {
		s.abort(fmt.Sprintf("a statement failed: %v", toCmdError(err).Msg))
		return nil, err
	}
	for _, e := range out {
		if e.Key != "writeErrors" {
			continue
		}
		// The statement may have buffered part of its writes, so the
		// transaction cannot go on. The reply keeps its write errors, as
		// mongod's does, except a write conflict, which fails the
		// command with its label so that drivers retry the transaction.
		s.abort("a statement had a write error")
		werrs, _ := e.Value.(bson.A)
		for _, w := range werrs {
			wd, _ := w.(bson.D)
			if code, _ := lookupField(wd, "code"); code == int32(112) {
				msg, _ := lookupField(wd, "errmsg")
				m, _ := msg.(string)
				return nil, writeConflict("%s", m)
			}
		}
	}
	return out, nil
}

// transaction is the buffered writes of one transaction: every document
// it wrote, in the one container and logical partition they all belong
// to (bound by the first write).
type transaction struct {
	c     *engine.Container // nil until the first write
	db    string
	name  string
	key   epk.Key
	docs  map[string]txnDoc // by item id
	order []string
	bytes int

	// reads are the etags of the committed documents the transaction
	// read, as first read (at most maxTxnReads): a later write of one
	// that changed meanwhile is a write conflict, as it would be under
	// mongod's snapshot isolation. Its own lock: a cursor of the
	// transaction may be read after it ended.
	readMu sync.Mutex
	reads  map[readKey]string
}

type readKey struct {
	c       *engine.Container
	key, id string
}

// maxTxnReads bounds the read set of a transaction.
const maxTxnReads = 100_000

// noteRead records the etag a committed document was first read with.
func (tx *transaction) noteRead(col *coll, d bson.D, etag string) {
	k, ok := readKeyOf(col, d)
	if !ok {
		return
	}
	tx.readMu.Lock()
	defer tx.readMu.Unlock()
	if tx.reads == nil {
		tx.reads = map[readKey]string{}
	}
	if _, seen := tx.reads[k]; !seen && len(tx.reads) < maxTxnReads {
		tx.reads[k] = etag
	}
}

// firstRead returns the etag d was first read with ("" if it was not).
func (tx *transaction) firstRead(col *coll, d bson.D) string {
	k, ok := readKeyOf(col, d)
	if !ok {
		return ""
	}
	tx.readMu.Lock()
	defer tx.readMu.Unlock()
	return tx.reads[k]
}

func readKeyOf(col *coll, d bson.D) (readKey, bool) {
	idv, ok := lookupField(d, "_id")
	if !ok {
		return readKey{}, false
	}
	id, err := idString(idv)
	if err != nil {
		return readKey{}, false
	}
	key, err := col.keyOf(d)
	if err != nil {
		return readKey{}, false
	}
	return readKey{c: col.c, key: key.String(), id: id}, true
}

// txnDoc is a document the transaction wrote: the committed version it
// started from (existed, orig, etag) and its version now (cur; nil when
// deleted).
type txnDoc struct {
	existed bool
	orig    bson.D
	etag    string
	cur     bson.D
}

// bindTxn returns col carrying r's transaction, if any, and its
// maxTimeMS.
func (r *request) bindTxn(col *coll, err error) (*coll, error) {
	if err != nil {
		return col, err
	}
	col.limit = r.limit
	col.onWrite = r.recordWrite
	if err := r.prepareRead(col); err != nil {
		return nil, err
	}
	if r.sess == nil || r.sess.tx == nil {
		return col, nil
	}
	col.tx = r.sess.tx
	return col, nil
}

// check binds the transaction to col and d's partition on its first write
// and refuses a write outside them.
func (tx *transaction) check(col *coll, d bson.D) (epk.Key, error) {
	key, err := col.keyOf(d)
	if err != nil {
		return nil, err
	}
	if tx.c == nil {
		tx.c, tx.db, tx.name, tx.key = col.c, col.db, col.name, key
		tx.docs = map[string]txnDoc{}
		return key, nil
	}
	if tx.c != col.c {
		return nil, notInTxn("a transaction writes to one collection and one logical partition: it wrote to %s.%s, so it cannot write to %s; the transaction is aborted", tx.db, tx.name, col.ns())
	}
	if !tx.key.Equal(key) {
		return nil, notInTxn("a transaction writes to one logical partition: it wrote to shard key value %s of %s, so it cannot write to shard key value %s; the transaction is aborted", showKeyValue(tx.key), col.ns(), showKeyValue(key))
	}
	return key, nil
}

func showKeyValue(k epk.Key) string {
	if len(k) == 0 {
		return "(none)"
	}
	return k.String()
}

// put records d's new version cur (nil: deleted), starting from before
// when the transaction has not written it yet.
func (tx *transaction) put(id string, before stored, existed bool, cur bson.D, col *coll) error {
	e, ok := tx.docs[id]
	if !ok {
		if len(tx.docs) >= maxTxnDocs {
			return newErr(257, "TransactionTooLarge", "the transaction has written %d documents; the limit is %d", len(tx.docs), maxTxnDocs)
		}
		e = txnDoc{existed: existed, orig: before.doc, etag: before.etag}
		tx.order = append(tx.order, id)
	}
	old := 0
	if e.cur != nil {
		old = approxSize(e.cur)
	}
	size := 0
	if cur != nil {
		size = approxSize(cur)
	}
	if tx.bytes-old+size > maxTxnBytes {
		return newErr(257, "TransactionTooLarge", "the transaction's documents are over %d bytes", maxTxnBytes)
	}
	e.cur = cur
	tx.docs[id] = e
	tx.bytes += size - old
	if n := tx.opCount(col); n > maxTxnOps {
		return newErr(257, "TransactionTooLarge", "the transaction writes %d items (documents and unique-index entries); one transaction writes at most %d", n, maxTxnOps)
	}
	return nil
}

// opCount is how many engine operations the commit would hold now,
// counted without encoding the documents (ops does that).
func (tx *transaction) opCount(col *coll) int {
	uniques := col.uniques()
	n := 0
	for _, id := range tx.order {
		e := tx.docs[id]
		if !e.existed && e.cur == nil {
			continue
		}
		n++
		for _, u := range uniques {
			var before, after string
			if e.existed {
				before, _ = guardID(u, e.orig)
			}
			if e.cur != nil {
				after, _ = guardID(u, e.cur)
			}
			if before == after {
				continue
			}
			if before != "" {
				n++
			}
			if after != "" {
				n++
			}
		}
	}
	return n
}

// insert buffers the creation of d.
func (tx *transaction) insert(col *coll, d bson.D, id string) error {
	if _, err := tx.check(col, d); err != nil {
		return err
	}
	dup := func() error {
		idv, _ := lookupField(d, "_id")
		return newErr(codeDuplicateKey, "DuplicateKey", "E11000 duplicate key error collection: %s index: _id_ dup key: { _id: %s }", col.ns(), showValue(idv))
	}
	if e, ok := tx.docs[id]; ok {
		if e.cur != nil {
			return dup()
		}
		return tx.put(id, stored{}, e.existed, d, col)
	}
	if _, found, err := col.reread(d); err != nil {
		return err
	} else if found {
		return dup()
	}
	if tx.firstRead(col, d) != "" {
		return writeConflict("document %s was deleted by another operation after the transaction read it", id)
	}
	if err := tx.checkUnique(col, id, d); err != nil {
		return err
	}
	return tx.put(id, stored{}, false, d, col)
}

// checkUnique refuses d (the new version of item id) when another
// document of the transaction's view has its key in a unique index: one
// the transaction wrote, or a committed one it has not changed. (The
// commit's guard items check it again against concurrent writers.)
func (tx *transaction) checkUnique(col *coll, id string, d bson.D) error {
	for _, u := range col.uniques() {
		gid, err := guardID(u, d)
		if err != nil {
			return err
		}
		dup := func() error {
			return newErr(codeDuplicateKey, "DuplicateKey", "E11000 duplicate key error collection: %s index: %s dup key: %s", col.ns(), u.name, showKey(col, u.name, d))
		}
		for oid, e := range tx.docs {
			if oid == id || e.cur == nil {
				continue
			}
			if g, err := guardID(u, e.cur); err == nil && g == gid {
				return dup()
			}
		}
		key, err := col.keyOf(d)
		if err != nil {
			return err
		}
		op, err := col.c.PrepareKeyed(engine.OpRead, gid, key, col.shard != "")
		if err != nil {
			return toCmdError(err)
		}
		r, _, err := col.c.ReadItem(op)
		if errors.Is(err, engine.ErrNotFound) {
			continue
		}
		if err != nil {
			return toCmdError(err)
		}
		g, _, err := decodeItem(r.Doc)
		if err != nil {
			return toCmdError(err)
		}
		ofv, _ := lookupField(g, guardOf)
		of, _ := ofv.(string)
		if of == id {
			continue
		}
		if e, ok := tx.docs[of]; ok && e.cur == nil {
			continue // the transaction deleted its holder
		} else if ok {
			if g2, err := guardID(u, e.cur); err == nil && g2 != gid {
				continue // the transaction moved its holder to another key
			}
		}
		return dup()
	}
	return nil
}

// write buffers the replacement (upd) or deletion (upd nil) of st.
func (tx *transaction) write(col *coll, st stored, upd bson.D) error {
	if _, err := tx.check(col, st.doc); err != nil {
		return err
	}
	idv, _ := lookupField(st.doc, "_id")
	id, err := idString(idv)
	if err != nil {
		return err
	}
	if err := tx.checkRead(col, st); err != nil {
		return err
	}
	if upd != nil {
		if _, err := col.prepare(engine.OpReplace, upd); err != nil {
			return err
		}
		if err := tx.checkUnique(col, id, upd); err != nil {
			return err
		}
	}
	return tx.put(id, st, true, upd, col)
}

// checkRead refuses to write st, a committed version the transaction's
// write statement matched, when the transaction first read the document
// in another version: someone else changed it since, and what the
// transaction computed from its first read may be stale.
func (tx *transaction) checkRead(col *coll, st stored) error {
	if st.etag == "" {
		return nil // the transaction's own version
	}
	k, ok := readKeyOf(col, st.doc)
	if !ok {
		return nil
	}
	if _, mine := tx.docs[k.id]; mine {
		return nil
	}
	if first := tx.firstRead(col, st.doc); first != "" && first != st.etag {
		return writeConflict("document %s was changed by another operation after the transaction read it", k.id)
	}
	return nil
}

// txnOp is an operation of the commit and what it is, to explain its
// failure.
type txnOp struct {
	doc   bool   // a document's operation (else a guard's)
	index string // a guard create's index
	d     bson.D // the document
}

// ops returns the commit's engine operations: the documents', then the
// guards' deletions, then their creations (so a key moving between two
// documents of the transaction frees its guard before taking it), leaving
// out the guards in skip.
func (tx *transaction) ops(col *coll, skip map[string]bool) ([]engine.Op, []txnOp, error) {
	var ops, dels, creates []engine.Op
	var what, delWhat, createWhat []txnOp
	for _, id := range tx.order {
		e := tx.docs[id]
		var op engine.Op
		var err error
		switch {
		case !e.existed && e.cur == nil:
			continue
		case !e.existed:
			op, err = col.prepare(engine.OpCreate, e.cur)
		case e.cur == nil:
			op, err = col.keyed(engine.OpDelete, e.orig)
			op.IfMatch = e.etag
		default:
			op, err = col.prepare(engine.OpReplace, e.cur)
			op.IfMatch = e.etag
		}
		if err != nil {
			return nil, nil, err
		}
		ops, what = append(ops, op), append(what, txnOp{doc: true, d: e.cur})
		var before bson.D
		if e.existed {
			before = e.orig
		}
		guards, names, err := col.guardChanges(before, e.cur, op.ID)
		if err != nil {
			return nil, nil, err
		}
		for i, g := range guards {
			if skip[g.ID] && g.Kind == engine.OpDelete {
				continue
			}
			if g.Kind == engine.OpDelete {
				dels, delWhat = append(dels, g), append(delWhat, txnOp{})
			} else {
				creates, createWhat = append(creates, g), append(createWhat, txnOp{index: names[i], d: e.cur})
			}
		}
	}
	ops = append(append(ops, dels...), creates...)
	what = append(append(what, delWhat...), createWhat...)
	return ops, what, nil
}

// commit writes the transaction in one atomic engine command.
func (tx *transaction) commit(s *Server, onWrite func(rid string, sess engine.Session)) error {
	eng := s.eng
	if tx.c == nil {
		return nil // wrote nothing
	}
	c, err := eng.Container(tx.db, tx.name)
	if err != nil || c != tx.c {
		return writeConflict("collection %s.%s was dropped or recreated during the transaction", tx.db, tx.name)
	}
	col := collOf(s, tx.db, tx.name, c)
	col.onWrite = onWrite
	skip := map[string]bool{}
	for {
		ops, what, err := tx.ops(col, skip)
		if err != nil {
			return err
		}
		if len(ops) == 0 {
			return nil
		}
		if len(ops) > maxTxnOps {
			return newErr(257, "TransactionTooLarge", "the transaction writes %d items; one transaction writes at most %d", len(ops), maxTxnOps)
		}
		res, _, err := col.execute(&engine.Command{Ops: ops, Atomic: true})
		if err != nil {
			ce := toCmdError(err)
			if ce.Code == codeThrottled {
				// Nothing was written: the transaction may be run again.
				ce.Labels = []string{labelTransient}
			}
			return ce
		}
		failed := -1
		for i, r := range res {
			if r.Err != nil && !errors.Is(r.Err, engine.ErrFailedDependency) {
				failed = i
				break
			}
		}
		if failed < 0 {
			return nil
		}
		op, w, ferr := ops[failed], what[failed], res[failed].Err
		switch {
		case w.doc && (errors.Is(ferr, engine.ErrPreconditionFailed) || errors.Is(ferr, engine.ErrNotFound) || errors.Is(ferr, engine.ErrConflict)):
			return writeConflict("a document the transaction wrote (item %q) was changed by another operation since the transaction read it; nothing was written", op.ID)
		case !w.doc && op.Kind == engine.OpCreate && errors.Is(ferr, engine.ErrConflict):
			return newErr(codeDuplicateKey, "DuplicateKey", "E11000 duplicate key error collection: %s index: %s dup key: %s", col.ns(), w.index, showKey(col, w.index, w.d))
		case !w.doc && op.Kind == engine.OpDelete && errors.Is(ferr, engine.ErrNotFound):
			skip[op.ID] = true // an item written around the MongoDB API has no guard
		default:
			return toCmdError(ferr)
		}
	}
}

func cmdCommitTransaction(r *request) (bson.D, error) {
	s := r.sess
	if s == nil {
		return nil, noSuchTxn("commitTransaction must be run within a transaction (lsid, txnNumber, autocommit: false)")
	}
	if s.state == txnCommitted {
		return nil, nil
	}
	tx := s.tx
	if err := tx.commit(r.s, r.recordWrite); err != nil {
		s.abort(fmt.Sprintf("its commit failed: %v", toCmdError(err).Msg))
		return nil, err
	}
	s.state, s.tx = txnCommitted, nil
	return nil, nil
}

func cmdAbortTransaction(r *request) (bson.D, error) {
	s := r.sess
	if s == nil {
		return nil, noSuchTxn("abortTransaction must be run within a transaction (lsid, txnNumber, autocommit: false)")
	}
	s.abort("abortTransaction")
	return nil, nil
}

// overlay is a transaction's writes to one container as a scan sees them:
// a snapshot taken when the scan starts.
type overlay struct {
	key     epk.Key
	docs    map[string]txnDoc
	order   []string
	seen    map[string]bool
	flushed bool
}

func (tx *transaction) overlayFor(col *coll) *overlay {
	if tx == nil || tx.c == nil || tx.c != col.c || len(tx.docs) == 0 {
		return nil
	}
	return &overlay{key: tx.key, docs: maps.Clone(tx.docs), order: append([]string(nil), tx.order...), seen: map[string]bool{}}
}

// apply returns the transaction's version of a committed document (nil:
// the transaction deleted it).
func (o *overlay) apply(col *coll, d bson.D) (bson.D, bool) {
	idv, ok := lookupField(d, "_id")
	if !ok {
		return d, false
	}
	id, err := idString(idv)
	if err != nil {
		return d, false
	}
	e, ok := o.docs[id]
	if !ok {
		return d, false
	}
	if k, err := col.keyOf(d); err != nil || !k.Equal(o.key) {
		return d, false
	}
	o.seen[id] = true
	return e.cur, true
}

// rest returns the transaction's documents a scan did not meet (those it
// created, or whose committed version changed meanwhile) that may be in
// its scope.
func (o *overlay) rest(sc scanScope, keys []epk.Key) []bson.D {
	if o.flushed {
		return nil
	}
	o.flushed = true
	if sc.keyed {
		in := false
		for _, k := range keys {
			if k.Equal(o.key) {
				in = true
			}
		}
		if !in {
			return nil
		}
	}
	var out []bson.D
	for _, id := range o.order {
		e := o.docs[id]
		if o.seen[id] || e.cur == nil || (sc.hasID && id != sc.id) {
			continue
		}
		out = append(out, e.cur)
	}
	return out
}
