package mongo

import (
	"errors"
	"sort"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/mongo/mql"
)

// modifier is an update: operators, or a replacement document.
type modifier struct {
	ops  *mql.Update
	repl bson.D
}

func parseModifier(u any, arrayFilters []bson.D) (*modifier, error) {
	switch x := u.(type) {
	case bson.D:
		if mql.IsReplacement(x) {
			if len(arrayFilters) > 0 {
				return nil, newErr(72, "InvalidOptions", "arrayFilters may only be given with update operators")
			}
			for _, e := range x {
				if strings.HasPrefix(e.Key, "$") {
					// MongoDB refuses top-level '$' names in a replacement
					// (they read as update operators), not in an insert.
					return nil, newErr(52, "DollarPrefixedFieldName", "The dollar ($) prefixed field '%s' in '%s' is not allowed in the context of an update's replacement document. Consider using an aggregation pipeline with $replaceWith.", e.Key, e.Key)
				}
			}
			return &modifier{repl: x}, nil
		}
		ops, err := mql.ParseUpdate(x, arrayFilters)
		if err != nil {
			return nil, err
		}
		return &modifier{ops: ops}, nil
	case bson.A:
		return nil, newErr(9, "FailedToParse", "pipeline-style updates are not supported; use update operators or a replacement document")
	}
	return nil, typeMismatch("the update must be a document, not %s", typeName(u))
}

func (s *Server) modify(m *modifier, old bson.D, insert bool) (bson.D, bool, error) {
	if m.repl != nil {
		out := bson.D{}
		if idv, ok := lookupField(old, "_id"); ok {
			out = append(out, bson.E{Key: "_id", Value: idv})
		}
		for _, e := range m.repl {
			if e.Key == "_id" {
				if len(out) > 0 && mql.Compare(out[0].Value, e.Value) != 0 {
					return nil, false, newErr(66, "ImmutableField", "After applying the update, the (immutable) field '_id' was found to have been altered to _id: %s", showValue(e.Value))
				}
				if len(out) == 0 {
					out = append(out, e)
				}
				continue
			}
			out = append(out, e)
		}
		return out, !equalDocs(old, out), nil
	}
	out, modified, err := m.ops.Apply(old, insert, s.cfg.Now())
	if err != nil {
		return nil, false, err
	}
	return out, modified, nil
}

func equalDocs(a, b bson.D) bool {
	ra, err1 := bson.Marshal(a)
	rb, err2 := bson.Marshal(b)
	return err1 == nil && err2 == nil && string(ra) == string(rb)
}

// checkImmutable refuses a new version whose _id or shard key differs.
func (col *coll) checkImmutable(old, upd bson.D) error {
	ov, _ := lookupField(old, "_id")
	nv, ok := lookupField(upd, "_id")
	if !ok || mql.Compare(ov, nv) != 0 || typeName(ov) != typeName(nv) {
		return newErr(66, "ImmutableField", "Performing an update on the path '_id' would modify the immutable field '_id'")
	}
	if col.shard != "" {
		ok1, err1 := col.keyOf(old)
		nk, err2 := col.keyOf(upd)
		if err1 != nil || err2 != nil || !ok1.Equal(nk) {
			return newErr(66, "ImmutableField", "Performing an update on the path '%s' would modify the immutable field '%s' (the collection's shard key)", col.shard, col.shard)
		}
	}
	return nil
}

// updateDoc applies m to one stored document, retrying on a concurrent
// change. It returns the new version (nil when the document vanished or
// no longer matches), and whether it changed.
func (s *Server) updateDoc(col *coll, f *mql.Filter, m *modifier, st stored) (bson.D, bool, error) {
	for range maxRetries {
		upd, modified, err := s.modify(m, st.doc, false)
		if err != nil {
			return nil, false, err
		}
		upd = idFirst(upd)
		if err := col.checkImmutable(st.doc, upd); err != nil {
			return nil, false, err
		}
		if col.tx != nil {
			// Even a write that changes nothing: it was computed from
			// what the transaction read.
			if err := col.tx.checkRead(col, st); err != nil {
				return nil, false, err
			}
		}
		if !modified {
			return upd, false, nil
		}
		if col.tx != nil {
			if err := col.tx.write(col, st, upd); err != nil {
				return nil, false, err
			}
			return upd, true, nil
		}
		op, err := col.prepare(engine.OpReplace, upd)
		if err != nil {
			return nil, false, err
		}
		op.IfMatch = st.etag
		guards, names, err := col.guardChanges(st.doc, upd, op.ID)
		if err != nil {
			return nil, false, err
		}
		err = col.execGuarded(op, guards, names, upd)
		var ce *cmdError
		switch {
		case errors.As(err, &ce):
			return nil, false, ce
		case err == nil:
			return upd, true, nil
		case errors.Is(err, engine.ErrPreconditionFailed):
		case errors.Is(err, engine.ErrNotFound):
			return nil, false, nil
		default:
			return nil, false, toCmdError(err)
		}
		cur, ok, err := col.reread(st.doc)
		if err != nil {
			return nil, false, err
		}
		if !ok || (f != nil && !f.Match(cur.doc)) {
			return nil, false, nil
		}
		st = cur
	}
	return nil, false, newErr(112, "WriteConflict", "the document kept changing while it was being updated; retry")
}

// upsert inserts the document an update without a match creates.
func (s *Server) upsert(col *coll, f *mql.Filter, m *modifier) (bson.D, error) {
	var seed bson.D
	if m.repl == nil {
		seed = mql.UpsertSeed(f)
	} else if idv, ok := f.Equality("_id"); ok {
		seed = bson.D{{Key: "_id", Value: idv}}
	}
	var doc bson.D
	var err error
	if m.repl != nil {
		doc, _, err = s.modify(m, seed, true)
	} else {
		doc, _, err = m.ops.Apply(seed, true, s.cfg.Now())
	}
	if err != nil {
		return nil, err
	}
	doc = idFirst(doc)
	if err := col.insertDoc(doc); err != nil {
		return nil, err
	}
	return doc, nil
}

type updateStmt struct {
	q            bson.D
	u            any
	upsert       bool
	multi        bool
	arrayFilters []bson.D
}

func parseUpdateStmt(d bson.D) (updateStmt, error) {
	var st updateStmt
	hasU := false
	for _, e := range d {
		switch e.Key {
		case "q":
			q, ok := e.Value.(bson.D)
			if !ok {
				return st, typeMismatch("update's q must be a document")
			}
			st.q = q
		case "u":
			st.u, hasU = e.Value, true
		case "upsert":
			st.upsert = truthy(e.Value)
		case "multi":
			st.multi = truthy(e.Value)
		case "arrayFilters":
			af, ok := docs(e.Value)
			if !ok {
				return st, typeMismatch("arrayFilters must be an array of documents")
			}
			st.arrayFilters = af
		}
	}
	if !hasU {
		return st, newErr(40414, "Location40414", "BSON field 'update.updates.u' is missing but a required field")
	}
	return st, nil
}

// writeBatch reads what update and delete share: the collection, ordered
// (default true) and the array field of statements, at most maxWriteBatch.
func (r *request) writeBatch(field string) (name string, ordered bool, stmts []bson.D, err error) {
	if name, err = r.collName(); err != nil {
		return "", false, nil, err
	}
	ordered = true
	if v, ok := r.get("ordered"); ok {
		ordered = truthy(v)
	}
	v, present := r.get(field)
	if !present {
		return "", false, nil, missingField(r.name, field)
	}
	if _, isArr := v.(bson.A); !isArr {
		return "", false, nil, wrongType(r.name, field, v, "array")
	}
	stmts, ok := docs(v)
	if !ok {
		return "", false, nil, elementNotObject(r.name+"."+field, v.(bson.A))
	}
	if err := checkBatchSize(len(stmts)); err != nil {
		return "", false, nil, err
	}
	for _, st := range stmts {
		if err := r.checkStatement(field, st); err != nil {
			return "", false, nil, err
		}
	}
	return name, ordered, stmts, nil
}

// checkStatement checks an update or delete statement's required fields
// before any runs, as mongod parses the whole command first: q (and u, or
// limit 0 or 1) are 40414 when missing, 14 of the wrong type, and a limit
// other than 0 or 1 is 9.
func (r *request) checkStatement(field string, st bson.D) error {
	prefix := r.name + "." + field
	if err := checkStatementFields(prefix, field, st); err != nil {
		return err
	}
	required := []string{"q", "u"}
	if field == "deletes" {
		required = []string{"q", "limit"}
	}
	for _, k := range required {
		if _, ok := lookupField(st, k); !ok {
			return missingField(prefix, k)
		}
	}
	if q, _ := lookupField(st, "q"); q != nil {
		if _, ok := q.(bson.D); !ok {
			return wrongType(prefix, "q", q, "object")
		}
	}
	if field == "deletes" {
		l, _ := lookupField(st, "limit")
		if n, ok := asInt(l); !ok || (n != 0 && n != 1) {
			return newErr(9, "FailedToParse", "The limit field in delete objects must be 0 or 1. Got %s", showValue(l))
		}
	}
	return nil
}

// checkBatchSize refuses a write of no statements or of more than
// maxWriteBatch, as mongod does (write_ops_parsers.cpp, 16 InvalidLength).
func checkBatchSize(n int) error {
	if n == 0 || n > maxWriteBatch {
		return newErr(16, "InvalidLength", "Write batch sizes must be between 1 and %d. Got %d operations.", maxWriteBatch, n)
	}
	return nil
}

func cmdUpdate(r *request) (bson.D, error) {
	name, ordered, stmts, err := r.writeBatch("updates")
	if err != nil {
		return nil, err
	}
	col, err := r.bindTxn(r.s.ensureColl(r.db, name))
	if err != nil {
		return nil, err
	}
	var n, nModified int32
	var upserted, werrs bson.A
	for i, d := range stmts {
		matched, modified, upID, err := r.s.runUpdate(col, d)
		if err == nil {
			n += matched
			nModified += modified
			if upID != nil {
				upserted = append(upserted, bson.D{{Key: "index", Value: int32(i)}, {Key: "_id", Value: upID}})
				n++
			}
			continue
		}
		if fatalWriteErr(err) && i == 0 {
			return nil, err
		}
		werrs = append(werrs, writeError(i, err))
		if ordered {
			break
		}
	}
	out := bson.D{{Key: "n", Value: n}, {Key: "nModified", Value: nModified}}
	if len(upserted) > 0 {
		out = append(out, bson.E{Key: "upserted", Value: upserted})
	}
	if len(werrs) > 0 {
		out = append(out, bson.E{Key: "writeErrors", Value: werrs})
	}
	return out, nil
}

// runUpdate runs one update statement.
func (s *Server) runUpdate(col *coll, d bson.D) (matched, modified int32, upsertedID any, err error) {
	st, err := parseUpdateStmt(d)
	if err != nil {
		return 0, 0, nil, err
	}
	f, err := parseFilter(st.q)
	if err != nil {
		return 0, 0, nil, err
	}
	m, err := parseModifier(st.u, st.arrayFilters)
	if err != nil {
		return 0, 0, nil, err
	}
	if m.repl != nil && st.multi {
		return 0, 0, nil, newErr(9, "FailedToParse", "multi update is not supported for replacement-style update")
	}
	sc := col.scanRaw(f, st.q)
	for {
		doc, ok, err := sc.nextStored()
		if err != nil {
			return matched, modified, nil, err
		}
		if !ok {
			break
		}
		upd, changed, err := s.updateDoc(col, f, m, doc)
		if err != nil {
			return matched, modified, nil, err
		}
		if upd == nil {
			continue
		}
		matched++
		if changed {
			modified++
		}
		if !st.multi {
			break
		}
	}
	if matched == 0 && st.upsert {
		doc, err := s.upsert(col, f, m)
		if err != nil {
			return 0, 0, nil, err
		}
		idv, _ := lookupField(doc, "_id")
		return 0, 0, idv, nil
	}
	return matched, modified, nil, nil
}

func cmdDelete(r *request) (bson.D, error) {
	name, ordered, stmts, err := r.writeBatch("deletes")
	if err != nil {
		return nil, err
	}
	col, err := r.bindTxn(r.s.openColl(r.db, name))
	if err != nil {
		if isNotFound(err) {
			return bson.D{{Key: "n", Value: int32(0)}}, nil
		}
		return nil, err
	}
	var n int32
	var werrs bson.A
	for i, d := range stmts {
		k, err := col.runDelete(d)
		n += k
		if err == nil {
			continue
		}
		if fatalWriteErr(err) && i == 0 && n == 0 {
			return nil, err
		}
		werrs = append(werrs, writeError(i, err))
		if ordered {
			break
		}
	}
	out := bson.D{{Key: "n", Value: n}}
	if len(werrs) > 0 {
		out = append(out, bson.E{Key: "writeErrors", Value: werrs})
	}
	return out, nil
}

func (col *coll) runDelete(d bson.D) (int32, error) {
	var q bson.D
	limit := int64(0)
	for _, e := range d {
		switch e.Key {
		case "q":
			x, ok := e.Value.(bson.D)
			if !ok {
				return 0, typeMismatch("delete's q must be a document")
			}
			q = x
		case "limit":
			l, ok := asInt(e.Value)
			if !ok || (l != 0 && l != 1) {
				return 0, newErr(9, "FailedToParse", "The limit field in delete objects must be 0 or 1. Got %v", e.Value)
			}
			limit = l
		}
	}
	f, err := parseFilter(q)
	if err != nil {
		return 0, err
	}
	sc := col.scanRaw(f, q)
	var n int32
	for {
		doc, ok, err := sc.nextStored()
		if err != nil {
			return n, err
		}
		if !ok {
			return n, nil
		}
		deleted, err := col.deleteDoc(doc)
		if err != nil {
			return n, err
		}
		if deleted {
			n++
			if limit == 1 {
				return n, nil
			}
		}
	}
}

func (col *coll) deleteDoc(st stored) (bool, error) {
	doc := st.doc
	if col.tx != nil {
		if err := col.tx.write(col, st, nil); err != nil {
			return false, err
		}
		return true, nil
	}
	op, err := col.keyed(engine.OpDelete, doc)
	if err != nil {
		return false, err
	}
	guards, names, err := col.guardChanges(doc, nil, op.ID)
	if err != nil {
		return false, err
	}
	if err := col.execGuarded(op, guards, names, doc); err != nil {
		if errors.Is(err, engine.ErrNotFound) {
			return false, nil
		}
		return false, toCmdError(err)
	}
	return true, nil
}

func cmdFindAndModify(r *request) (bson.D, error) {
	name, err := r.collName()
	if err != nil {
		return nil, err
	}
	q, f, err := r.filterDoc("query")
	if err != nil {
		return nil, err
	}
	var srt *mql.Sort
	if sd, err := r.doc("sort"); err != nil {
		return nil, err
	} else if len(sd) > 0 {
		if srt, err = mql.ParseSort(sd); err != nil {
			return nil, err
		}
	}
	var proj *mql.Projection
	if fd, err := r.doc("fields"); err != nil {
		return nil, err
	} else if len(fd) > 0 {
		if proj, err = mql.ParseProjection(fd); err != nil {
			return nil, err
		}
		if err := proj.CheckQuery(q); err != nil {
			return nil, err
		}
	}
	remove, returnNew, upsert := r.boolean("remove"), r.boolean("new"), r.boolean("upsert")
	uv, hasUpdate := r.get("update")
	// mongod's checks, in its order (write_ops.cpp).
	switch {
	case remove && hasUpdate:
		return nil, newErr(9, "FailedToParse", "Cannot specify both an update and remove=true")
	case remove && upsert:
		return nil, newErr(9, "FailedToParse", "Cannot specify both upsert=true and remove=true ")
	case remove && returnNew:
		return nil, newErr(9, "FailedToParse", "Cannot specify both new=true and remove=true; 'remove' always returns the deleted document")
	case !remove && !hasUpdate:
		return nil, newErr(9, "FailedToParse", "Either an update or remove=true must be specified")
	}
	var m *modifier
	if hasUpdate {
		var af []bson.D
		if v, ok := r.get("arrayFilters"); ok {
			if af, ok = docs(v); !ok {
				return nil, typeMismatch("arrayFilters must be an array of documents")
			}
		}
		if m, err = parseModifier(uv, af); err != nil {
			return nil, err
		}
	}
	var col *coll
	if hasUpdate && upsert {
		col, err = r.bindTxn(r.s.ensureColl(r.db, name))
	} else {
		col, err = r.bindTxn(r.s.openColl(r.db, name))
	}
	noMatch := bson.D{{Key: "lastErrorObject", Value: bson.D{{Key: "n", Value: int32(0)}, {Key: "updatedExisting", Value: false}}}, {Key: "value", Value: nil}}
	if err != nil {
		if isNotFound(err) {
			return noMatch, nil
		}
		return nil, err
	}
	project := func(d bson.D) any {
		if d == nil {
			return nil
		}
		if proj != nil {
			out, _ := proj.ApplyWithQuery(d, f)
			return out
		}
		return d
	}
	for range maxRetries {
		st, found, err := col.first(f, q, srt, r.hold)
		if err != nil {
			return nil, err
		}
		if !found {
			if !upsert {
				return noMatch, nil
			}
			doc, err := r.s.upsert(col, f, m)
			if err != nil {
				return nil, err
			}
			idv, _ := lookupField(doc, "_id")
			var val any
			if returnNew {
				val = project(doc)
			}
			return bson.D{{Key: "lastErrorObject", Value: bson.D{{Key: "n", Value: int32(1)}, {Key: "updatedExisting", Value: false}, {Key: "upserted", Value: idv}}},
				{Key: "value", Value: val}}, nil
		}
		if remove {
			deleted, err := col.deleteDoc(st)
			if err != nil {
				return nil, err
			}
			if !deleted {
				continue // removed meanwhile: find the next
			}
			return bson.D{{Key: "lastErrorObject", Value: bson.D{{Key: "n", Value: int32(1)}}}, {Key: "value", Value: project(st.doc)}}, nil
		}
		upd, _, err := r.s.updateDoc(col, f, m, st)
		if err != nil {
			return nil, err
		}
		if upd == nil {
			continue
		}
		val := project(st.doc)
		if returnNew {
			val = project(upd)
		}
		return bson.D{{Key: "lastErrorObject", Value: bson.D{{Key: "n", Value: int32(1)}, {Key: "updatedExisting", Value: true}}}, {Key: "value", Value: val}}, nil
	}
	return nil, newErr(112, "WriteConflict", "the matching documents kept changing; retry")
}

// first returns the first document f matches in the order of s,
// counting what a sort holds with hold until it returns.
func (col *coll) first(f *mql.Filter, raw bson.D, s *mql.Sort, hold func(n int64) error) (stored, bool, error) {
	sc := col.scanRaw(f, raw)
	if s == nil {
		return sc.nextStored()
	}
	var all []stored
	size := 0
	defer func() { hold(-int64(size)) }()
	for {
		d, ok, err := sc.nextStored()
		if err != nil {
			return stored{}, false, err
		}
		if !ok {
			break
		}
		if err := buffer(&size, d.doc, "the sort", hold); err != nil {
			return stored{}, false, err
		}
		all = append(all, d)
	}
	if len(all) == 0 {
		return stored{}, false, nil
	}
	sort.SliceStable(all, func(i, j int) bool { return s.Compare(all[i].doc, all[j].doc) < 0 })
	return all[0], true, nil
}
