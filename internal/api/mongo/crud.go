package mongo

import (
	"container/heap"
	"errors"
	"fmt"
	"sort"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/mongo/mql"
)

// maxBufferedBytes bounds what a sort, findAndModify with sort, distinct
// or aggregate holds in memory, and what one cursor keeps between
// getMores: the documents' BSON size, 100 MB as mongod's blocking-stage
// limit (internalQueryMaxBlockingSortMemoryUsageBytes, see
// https://www.mongodb.com/docs/v7.0/reference/limits/#operations).
const maxBufferedBytes = 100 << 20

// overMemoryLimit is the error of an operation that would hold more than
// maxBufferedBytes (what names the part that would): mongod's for a
// blocking stage over its limit without allowDiskUse (Parsec has no disk
// to spill to).
func overMemoryLimit(what string) *cmdError {
	return newErr(292, "QueryExceededMemoryLimitNoDiskUseAllowed", "%s would hold more than %d bytes of documents in memory; add a filter or a limit", what, maxBufferedBytes)
}

// maxWriteBatch is the most statements one insert, update or delete may
// carry (the hello reply's maxWriteBatchSize).
const maxWriteBatch = 100_000

// maxRetries bounds how often a read-modify-write retries after a
// concurrent change to the same document.
const maxRetries = 20

func writeError(i int, err error) bson.D {
	ce := toCmdError(err)
	return bson.D{{Key: "index", Value: int32(i)}, {Key: "code", Value: ce.Code}, {Key: "codeName", Value: ce.CodeName}, {Key: "errmsg", Value: ce.Msg}}
}

// fatalWriteErr reports errors that end a write command instead of
// being one statement's write error.
func fatalWriteErr(err error) bool {
	ce := toCmdError(err)
	return ce.Code == codeThrottled
}

func cmdInsert(r *request) (bson.D, error) {
	name, err := r.collName()
	if err != nil {
		return nil, err
	}
	ordered := true
	if v, ok := r.get("ordered"); ok {
		ordered = truthy(v)
	}
	docsVal, lerr := r.raw.LookupErr("documents")
	if lerr != nil {
		return nil, missingField("insert", "documents")
	}
	arr, ok := docsVal.ArrayOK()
	if !ok {
		v, _ := r.get("documents")
		return nil, wrongType("insert", "documents", v, "array")
	}
	vals, err := arr.Values()
	if err != nil {
		return nil, badValue("invalid documents: %v", err)
	}
	if err := checkBatchSize(len(vals)); err != nil {
		return nil, err
	}
	// mongod parses every document before it inserts any (write_ops.idl).
	for i, v := range vals {
		if _, ok := v.DocumentOK(); !ok {
			return nil, typeMismatch("BSON field 'insert.documents.%d' is the wrong type '%s', expected type 'object'", i, typeName(rawValueOf(v)))
		}
	}
	col, err := r.bindTxn(r.s.ensureColl(r.db, name))
	if err != nil {
		return nil, err
	}
	ins := &inserter{col: col, ordered: ordered, batching: len(col.uniques()) == 0 && col.tx == nil}
	for i, v := range vals {
		raw, _ := v.DocumentOK()
		if !ins.add(i, raw) {
			break
		}
	}
	ins.flushAll()
	if len(ins.errs) > 0 && ins.n == 0 && ins.errs[0].i == 0 && fatalWriteErr(ins.errs[0].err) {
		return nil, ins.errs[0].err
	}
	sort.SliceStable(ins.errs, func(a, b int) bool { return ins.errs[a].i < ins.errs[b].i })
	out := bson.D{{Key: "n", Value: ins.n}}
	if len(ins.errs) > 0 {
		werrs := bson.A{}
		for _, e := range ins.errs {
			werrs = append(werrs, writeError(e.i, e.err))
		}
		out = append(out, bson.E{Key: "writeErrors", Value: werrs})
	}
	return out, nil
}

// inserter runs an insert command's documents. Documents with the same
// partition key go to the engine together, up to engine.MaxBatchOps in one
// atomic batch (one commit instead of one each); a batch that fails is
// run again one document at a time, so that each failure is reported at
// its own index and an ordered insert stops exactly there. Unordered
// inserts group documents by key; ordered ones batch runs of consecutive
// documents with the same key. Collections with unique indexes insert one
// document at a time (each write carries its guards).
type inserter struct {
	col      *coll
	ordered  bool
	batching bool
	n        int32
	errs     []indexedErr
	stopped  bool
	runs     map[string][]pendingDoc // unordered: by EPK
	order    []string                // unordered: keys in first-seen order
	run      []pendingDoc            // ordered: the current run
}

type indexedErr struct {
	i   int
	err error
}

type pendingDoc struct {
	i  int
	d  bson.D
	op engine.Op
}

// add takes document i; false when an ordered insert must stop.
func (ins *inserter) add(i int, raw bson.Raw) bool {
	if ins.stopped {
		return false
	}
	p, err := ins.col.prepareInsert(i, raw)
	if err != nil {
		if ins.ordered {
			ins.flushRun()
			if ins.stopped {
				return false
			}
			ins.fail(i, err)
			return false
		}
		ins.fail(i, err)
		return true
	}
	if !ins.batching {
		if err := ins.col.insertPrepared(p); err != nil {
			ins.fail(i, err)
			return !ins.ordered
		}
		ins.n++
		return true
	}
	if ins.ordered {
		if len(ins.run) > 0 && (ins.run[0].op.EPK != p.op.EPK || len(ins.run) == engine.MaxBatchOps) {
			ins.flushRun()
			if ins.stopped {
				return false
			}
		}
		ins.run = append(ins.run, p)
		return true
	}
	if ins.runs == nil {
		ins.runs = map[string][]pendingDoc{}
	}
	k := p.op.EPK
	if _, ok := ins.runs[k]; !ok {
		ins.order = append(ins.order, k)
	}
	ins.runs[k] = append(ins.runs[k], p)
	if len(ins.runs[k]) == engine.MaxBatchOps {
		ins.insertBatch(ins.runs[k])
		ins.runs[k] = ins.runs[k][:0:0]
	}
	return true
}

func (ins *inserter) fail(i int, err error) {
	ins.errs = append(ins.errs, indexedErr{i, err})
	if ins.ordered {
		ins.stopped = true
	}
}

func (ins *inserter) flushRun() {
	run := ins.run
	ins.run = nil
	ins.insertBatch(run)
}

func (ins *inserter) flushAll() {
	if ins.ordered {
		if !ins.stopped {
			ins.flushRun()
		}
		return
	}
	for _, k := range ins.order {
		ins.insertBatch(ins.runs[k])
	}
}

// insertBatch inserts documents of one partition key: atomically when
// there are several, one by one when that fails.
func (ins *inserter) insertBatch(docs []pendingDoc) {
	if len(docs) == 0 {
		return
	}
	if len(docs) > 1 {
		ops := make([]engine.Op, len(docs))
		for j, p := range docs {
			ops[j] = p.op
		}
		res, _, err := ins.col.execute(&engine.Command{Ops: ops, Atomic: true})
		ok := err == nil
		for _, r := range res {
			if r.Err != nil {
				ok = false
			}
		}
		if ok {
			ins.n += int32(len(docs))
			return
		}
	}
	for _, p := range docs {
		if err := ins.col.insertPrepared(p); err != nil {
			ins.fail(p.i, err)
			if ins.ordered {
				return
			}
			continue
		}
		ins.n++
	}
}

// prepareInsert decodes document i, gives it an _id first, and prepares
// its engine create.
func (col *coll) prepareInsert(i int, raw bson.Raw) (pendingDoc, error) {
	if len(raw) > MaxDocumentBytes {
		return pendingDoc{}, newErr(10334, "BSONObjectTooLarge", "the document is %d bytes; the limit is %d bytes", len(raw), MaxDocumentBytes)
	}
	var d bson.D
	if err := bson.Unmarshal(raw, &d); err != nil {
		return pendingDoc{}, badValue("invalid document: %v", err)
	}
	d = idFirst(d)
	op, err := col.prepare(engine.OpCreate, d)
	if err != nil {
		return pendingDoc{}, err
	}
	return pendingDoc{i: i, d: d, op: op}, nil
}

// idFirst returns d with _id as its first field, adding a new ObjectId when
// it has none.
func idFirst(d bson.D) bson.D {
	for i, e := range d {
		if e.Key == "_id" {
			if i == 0 {
				return d
			}
			out := make(bson.D, 0, len(d))
			out = append(out, e)
			out = append(out, d[:i]...)
			return append(out, d[i+1:]...)
		}
	}
	return append(bson.D{{Key: "_id", Value: bson.NewObjectID()}}, d...)
}

func (col *coll) insertDoc(d bson.D) error {
	op, err := col.prepare(engine.OpCreate, d)
	if err != nil {
		return err
	}
	return col.insertPrepared(pendingDoc{d: d, op: op})
}

// insertPrepared runs one prepared create with its unique-index guards.
func (col *coll) insertPrepared(p pendingDoc) error {
	d, op := p.d, p.op
	if col.tx != nil {
		return col.tx.insert(col, d, op.ID)
	}
	guards, names, err := col.guardChanges(nil, d, op.ID)
	if err != nil {
		return err
	}
	if err := col.execGuarded(op, guards, names, d); err != nil {
		var ce *cmdError
		if errors.As(err, &ce) {
			return ce
		}
		if errors.Is(err, engine.ErrConflict) {
			idv, _ := lookupField(d, "_id")
			return newErr(codeDuplicateKey, "DuplicateKey", "E11000 duplicate key error collection: %s index: _id_ dup key: { _id: %s }", col.ns(), showValue(idv))
		}
		return toCmdError(err)
	}
	return nil
}

func showValue(v any) string {
	raw, err := bson.MarshalExtJSON(bson.D{{Key: "v", Value: v}}, false, false)
	if err != nil || len(raw) < 7 {
		return fmt.Sprint(v)
	}
	return string(raw[5 : len(raw)-1])
}

// parseFilter parses a filter field (absent: match everything).
// filterDoc reads the command's filter document field (absent: match
// everything) and parses it; filterField when only the filter is wanted.
func (r *request) filterDoc(field string) (bson.D, *mql.Filter, error) {
	d, err := r.doc(field)
	if err != nil {
		return nil, nil, err
	}
	f, err := parseFilter(d)
	return d, f, err
}

func (r *request) filterField(field string) (*mql.Filter, error) {
	_, f, err := r.filterDoc(field)
	return f, err
}

func parseFilter(f bson.D) (*mql.Filter, error) {
	if f == nil {
		f = bson.D{}
	}
	return mql.ParseFilter(f)
}

// findSpec is what find, count and aggregate's pushdown read.
type findSpec struct {
	filter    *mql.Filter
	sort      *mql.Sort
	proj      *mql.Projection
	skip      int64
	limit     int64 // 0: none
	batchSize int64
	single    bool
}

func cmdFind(r *request) (bson.D, error) {
	name, err := r.collName()
	if err != nil {
		return nil, err
	}
	var fs findSpec
	fd, filter, err := r.filterDoc("filter")
	if err != nil {
		return nil, err
	}
	fs.filter = filter
	if sd, err := r.doc("sort"); err != nil {
		return nil, err
	} else if len(sd) > 0 {
		if fs.sort, err = mql.ParseSort(sd); err != nil {
			return nil, err
		}
	}
	if pd, err := r.doc("projection"); err != nil {
		return nil, err
	} else if len(pd) > 0 {
		if fs.proj, err = mql.ParseProjection(pd); err != nil {
			return nil, err
		}
		if err := fs.proj.CheckQuery(fd); err != nil {
			return nil, err
		}
	}
	if fs.skip, err = r.integer("skip", 0); err != nil {
		return nil, err
	}
	if fs.limit, err = r.integer("limit", 0); err != nil {
		return nil, err
	}
	if fs.skip < 0 {
		return nil, negativeField("skip", fs.skip)
	}
	if fs.limit < 0 {
		return nil, negativeField("limit", fs.limit)
	}
	fs.single = r.boolean("singleBatch")
	if fs.batchSize, err = r.integer("batchSize", 101); err != nil {
		return nil, err
	}
	sd, _ := r.doc("sort")
	if err := r.checkTailable(sd); err != nil {
		return nil, err
	}
	ns := r.db + "." + name
	col, err := r.bindTxn(r.s.openColl(r.db, name))
	if err != nil {
		if isNotFound(err) {
			return cursorReply(0, ns, "firstBatch", bson.A{}), nil
		}
		return nil, err
	}
	if r.boolean("tailable") {
		// Parsec has no capped collections (get_executor.cpp's refusal).
		return nil, badValue("error processing query: ns=%s tailable cursor requested on non capped collection", ns)
	}
	sc, err := r.scanFor(col, fs.filter, fd)
	if err != nil {
		return nil, err
	}
	src, err := query(sc, fs.sort, fs.skip, fs.limit, r.hold)
	if err != nil {
		return nil, err
	}
	cur := &cursor{ns: ns, src: src, proj: fs.proj, query: fs.filter, left: -1}
	if fs.limit > 0 {
		cur.left = fs.limit
		if fs.batchSize > fs.limit {
			fs.batchSize = fs.limit
		}
	}
	return r.firstBatch(cur, fs.batchSize, fs.single)
}

// query returns the documents sc finds, sorted, with skip applied (limit
// only bounds what a sort keeps); a sort counts what it keeps with hold.
func query(sc *scanner, s *mql.Sort, skip, limit int64, hold func(n int64) error) (source, error) {
	if s == nil {
		for ; skip > 0; skip-- {
			if _, ok, err := sc.next(); err != nil || !ok {
				return &sliceSource{}, err
			}
		}
		return sc, nil
	}
	var all []bson.D
	var err error
	if limit > 0 && skip+limit <= maxTopK {
		all, err = topK(sc, s, int(skip+limit), hold)
	} else {
		all, err = collect(sc, hold)
	}
	if err != nil {
		return nil, err
	}
	sort.SliceStable(all, func(i, j int) bool { return s.Compare(all[i], all[j]) < 0 })
	if skip >= int64(len(all)) {
		return &sliceSource{}, nil
	}
	all = all[skip:]
	if limit > 0 && limit < int64(len(all)) {
		all = all[:limit]
	}
	return newSliceSource(all)
}

// maxTopK is the largest skip+limit a sorted find keeps in a bounded heap
// instead of sorting everything.
const maxTopK = 10_000

// topK reads a source to the end and keeps the k first documents in the
// order of s (ties: the earlier read first, as a stable sort would),
// counting what it keeps with hold.
func topK(src source, s *mql.Sort, k int, hold func(n int64) error) ([]bson.D, error) {
	h := &docHeap{s: s}
	size := 0
	for seq := 0; ; seq++ {
		d, ok, err := src.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if h.Len() == k {
			if h.less(seqDoc{d, seq}, h.items[0]) {
				continue // not before the worst kept one
			}
			n := approxSize(h.items[0].d)
			size -= n
			hold(-int64(n))
			heap.Pop(h)
		}
		if err := buffer(&size, d, "the sort", hold); err != nil {
			return nil, err
		}
		heap.Push(h, seqDoc{d, seq})
	}
	sort.Slice(h.items, func(i, j int) bool { return h.less(h.items[j], h.items[i]) })
	out := make([]bson.D, len(h.items))
	for i, x := range h.items {
		out[i] = x.d
	}
	return out, nil
}

type seqDoc struct {
	d   bson.D
	seq int
}

// docHeap is a max-heap in sort order: its root is the worst kept document.
type docHeap struct {
	s     *mql.Sort
	items []seqDoc
}

// less reports whether a comes after b (so the root is the last).
func (h *docHeap) less(a, b seqDoc) bool {
	if c := h.s.Compare(a.d, b.d); c != 0 {
		return c > 0
	}
	return a.seq > b.seq
}

func (h *docHeap) Len() int           { return len(h.items) }
func (h *docHeap) Less(i, j int) bool { return h.less(h.items[i], h.items[j]) }
func (h *docHeap) Swap(i, j int)      { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *docHeap) Push(x any)         { h.items = append(h.items, x.(seqDoc)) }
func (h *docHeap) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}

// collect reads a source to the end, within maxBufferedBytes, counting
// what it keeps with hold.
func collect(src source, hold func(n int64) error) ([]bson.D, error) {
	var all []bson.D
	size := 0
	for {
		d, ok, err := src.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			return all, nil
		}
		if err := buffer(&size, d, "the operation", hold); err != nil {
			return nil, err
		}
		all = append(all, d)
	}
}

// buffer adds d to the *size bytes an operation (what) keeps, within
// maxBufferedBytes, and counts it with hold.
func buffer(size *int, d bson.D, what string, hold func(n int64) error) error {
	n := approxSize(d)
	if *size+n > maxBufferedBytes {
		return overMemoryLimit(what)
	}
	if err := hold(int64(n)); err != nil {
		return err
	}
	*size += n
	return nil
}

func approxSize(d bson.D) int {
	raw, err := bson.Marshal(d)
	if err != nil {
		return 1 << 10
	}
	return len(raw)
}

func cmdCount(r *request) (bson.D, error) {
	name, err := r.collName()
	if err != nil {
		return nil, err
	}
	q, f, err := r.filterDoc("query")
	if err != nil {
		return nil, err
	}
	skip, err := r.integer("skip", 0)
	if err != nil {
		return nil, err
	}
	limit, err := r.integer("limit", 0)
	if err != nil {
		return nil, err
	}
	if skip < 0 {
		return nil, negativeField("skip", skip)
	}
	if limit < 0 {
		limit = -limit
	}
	col, err := r.bindTxn(r.s.openColl(r.db, name))
	if err != nil {
		if isNotFound(err) {
			return bson.D{{Key: "n", Value: int32(0)}}, nil
		}
		return nil, err
	}
	sc, err := r.scanFor(col, f, q)
	if err != nil {
		return nil, err
	}
	n, known := int64(0), false
	if len(q) == 0 && len(col.uniques()) == 0 && col.tx == nil {
		n, known = col.c.CountKnown()
	}
	if !known {
		if n, err = sc.count(); err != nil {
			return nil, err
		}
	}
	n = max(n-skip, 0)
	if limit > 0 {
		n = min(n, limit)
	}
	return bson.D{{Key: "n", Value: int32(n)}}, nil
}

func cmdDistinct(r *request) (bson.D, error) {
	name, err := r.collName()
	if err != nil {
		return nil, err
	}
	key, err := r.str("key")
	if err != nil {
		return nil, err
	}
	if _, ok := r.get("key"); !ok {
		return nil, missingField("distinct", "key")
	}
	if key == "" {
		return nil, newErr(40352, "Location40352", "FieldPath cannot be constructed with empty string")
	}
	q, f, err := r.filterDoc("query")
	if err != nil {
		return nil, err
	}
	col, err := r.bindTxn(r.s.openColl(r.db, name))
	if err != nil {
		if isNotFound(err) {
			return bson.D{{Key: "values", Value: bson.A{}}}, nil
		}
		return nil, err
	}
	var vals []any
	sc := col.scanRaw(f, q)
	size := 0
	for {
		d, ok, err := sc.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		for _, v := range mql.Lookup(d, key) {
			add := []any{v}
			if a, isArr := v.(bson.A); isArr {
				add = a
			}
			for _, x := range add {
				dup := false
				for _, y := range vals {
					if mql.Compare(x, y) == 0 {
						dup = true
						break
					}
				}
				if !dup {
					vals = append(vals, x)
					size += approxSize(bson.D{{Key: "v", Value: x}})
					if size > maxDocumentBytesForDistinct {
						return nil, newErr(17217, "Location17217", "distinct too big, 16mb cap")
					}
				}
			}
		}
	}
	sort.SliceStable(vals, func(i, j int) bool { return mql.Compare(vals[i], vals[j]) < 0 })
	return bson.D{{Key: "values", Value: bson.A(vals)}}, nil
}

const maxDocumentBytesForDistinct = MaxDocumentBytes - 64<<10

func cmdAggregate(r *request) (bson.D, error) {
	name, isStr := r.cmd[0].Value.(string)
	if !isStr {
		return nil, newErr(115, "CommandNotSupported", "aggregate without a collection (aggregate: 1) is not supported")
	}
	v, present := r.get("pipeline")
	if !present {
		return nil, missingField("aggregate", "pipeline")
	}
	if _, isArr := v.(bson.A); !isArr {
		return nil, wrongType("aggregate", "pipeline", v, "array")
	}
	stages, ok := docs(v)
	if !ok {
		return nil, typeMismatch("Each element of the 'pipeline' array must be an object")
	}
	var statsDoc bson.D
	var err error
	for i, st := range stages {
		if len(st) == 1 && (st[0].Key == "$out" || st[0].Key == "$merge") {
			return nil, newErr(115, "CommandNotSupported", "%s is not supported", st[0].Key)
		}
		if len(st) > 0 && st[0].Key == "$collStats" {
			if i > 0 {
				return nil, newErr(40602, "Location40602", "$collStats is only valid as the first stage in a pipeline")
			}
			if statsDoc, err = r.collStatsStage(name, st[0].Value); err != nil {
				return nil, err
			}
		}
	}
	if statsDoc != nil {
		stages = stages[1:]
	}
	cv, _ := r.get("cursor")
	cd, isDoc := cv.(bson.D)
	if cv != nil && !isDoc {
		return nil, typeMismatch("cursor field must be missing or an object")
	}
	if _, ok := r.get("cursor"); !ok && !r.boolean("explain") {
		return nil, newErr(9, "FailedToParse", "The 'cursor' option is required, except for aggregate with the explain argument")
	}
	batchSize, err := firstBatchSize(cd)
	if err != nil {
		return nil, err
	}
	lookup := func(other string) ([]bson.D, error) {
		oc, err := r.bindTxn(r.s.openColl(r.db, other))
		if err != nil {
			if isNotFound(err) {
				return nil, nil
			}
			return nil, err
		}
		return collect(oc.scan(nil), r.hold)
	}
	p, err := mql.ParsePipeline(stages, lookup)
	if err != nil {
		return nil, err
	}
	ns := r.db + "." + name
	var input []bson.D
	col, err := r.bindTxn(r.s.openColl(r.db, name))
	switch {
	case statsDoc != nil:
		input, err = []bson.D{statsDoc}, nil
	case err == nil:
		var raw bson.D
		if len(stages) > 0 && len(stages[0]) == 1 && stages[0][0].Key == "$match" {
			raw, _ = stages[0][0].Value.(bson.D)
		}
		if input, err = collect(col.scanRaw(p.LeadingMatch(), raw), r.hold); err != nil {
			return nil, err
		}
	case !isNotFound(err):
		return nil, err
	}
	out, err := p.RunHeld(input, r.hold)
	if err != nil {
		return nil, err
	}
	cur, err := docsCursor(ns, out)
	if err != nil {
		return nil, err
	}
	return r.firstBatch(cur, batchSize, false)
}
