package table

import (
	"bytes"
	"crypto/rand"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/parsecdb/parsec/internal/api/table/batch"
	"github.com/parsecdb/parsec/internal/api/table/tableauth"
	"github.com/parsecdb/parsec/internal/engine"
)

// batch answers POST /$batch: one changeset of up to 100 operations on
// entities of one table and one PartitionKey, applied all or nothing as
// one atomic engine command (the transactional batch of the NoSQL API).
// A failed changeset is answered 202 with one part holding the failing
// operation's status and an odata.error whose message starts with its
// index, as Cosmos DB answers
// (aztables recordings TestBatchError_cosmos.json).
func (s *Server) batch(req *request) error {
	b, err := batch.Parse(req.r.Header.Get("Content-Type"), req.r.Body, batch.Limits{})
	if err != nil {
		var be *batch.Error
		if errors.As(err, &be) {
			if be.InChangeset() {
				return s.writeBatch(req, []batch.Part{batch.FailurePart(batch.FailureFromError(be))})
			}
			return newErr(be.Status, be.Code, "%s", be.Message)
		}
		return errInput("The batch cannot be read: %v", err)
	}
	for try := 0; ; try++ {
		parts, retry, err := s.runBatch(req, b)
		if err != nil {
			return err
		}
		if !retry || try == maxRetries {
			return s.writeBatch(req, parts)
		}
	}
}

// batchOp is one operation of a changeset, prepared.
type batchOp struct {
	op      *batch.Operation
	kind    string // insert, replace, upsert, merge, delete
	e       *entity
	ifMatch string
	// engineMatch: the If-Match given to the engine was read here (a
	// merge, or an ETag compared here), so that a concurrent change
	// fails it and the batch is retried; own is set when it is the
	// client's ETag that failed.
	engineMatch bool
}

// runBatch prepares and runs the changeset once. retry reports a failure
// caused by a concurrent change to what it read, which running it again
// may not meet.
func (s *Server) runBatch(req *request, b *batch.Batch) ([]batch.Part, bool, error) {
	fail := func(i int, err error) []batch.Part {
		te := toTableError(err)
		f := batch.Failure{Index: i, Status: te.status, Code: te.code, Message: te.msg, ContentID: b.Operations[i].ContentID}
		return []batch.Part{batch.FailurePart(f)}
	}
	var c *engine.Container
	table, pk := "", ""
	seen := map[string]bool{}
	ops := make([]engine.Op, 0, len(b.Operations))
	prepared := make([]batchOp, 0, len(b.Operations))
	for i := range b.Operations {
		o := &b.Operations[i]
		bo := batchOp{op: o, ifMatch: o.Header.Get("If-Match")}
		t, keys, err := batchTarget(o)
		if err != nil {
			return fail(i, err), false, nil
		}
		if c == nil {
			if c, err = s.openTable(t); err != nil {
				return fail(i, err), false, nil
			}
			table = t
		} else if t != table {
			return fail(i, errInput("All operations of a batch must be on one table: operation %d is on %s, the first on %s.", i, t, table)), false, nil
		}
		method := o.EffectiveMethod()
		var e *entity
		switch {
		case method == http.MethodPost && keys == nil:
			bo.kind = "insert"
			e, err = parseEntity(o.Body, nil, nil)
		case keys == nil:
			err = newErr(http.StatusMethodNotAllowed, codeUnsupportedHTTPVerb, "Operation %d: %s needs an entity address t(PartitionKey='…',RowKey='…').", i, method)
		case method == http.MethodPut:
			bo.kind = "replace"
			if bo.ifMatch == "" {
				bo.kind = "upsert"
			}
			e, err = parseEntity(o.Body, &keys[0], &keys[1])
		case method == http.MethodPatch || method == "MERGE":
			bo.kind = "merge"
			e, err = parseEntity(o.Body, &keys[0], &keys[1])
		case method == http.MethodDelete:
			bo.kind = "delete"
			if bo.ifMatch == "" {
				err = newErr(http.StatusBadRequest, codeMissingRequiredHeader, "Operation %d: a delete needs If-Match.", i)
			}
			e = &entity{pk: keys[0], rk: keys[1]}
		default:
			err = newErr(http.StatusMethodNotAllowed, codeUnsupportedHTTPVerb, "Operation %d: %s is not an operation a batch can hold.", i, method)
		}
		if err == nil {
			action := tableauth.InsertEntity
			switch bo.kind {
			case "replace", "upsert", "merge":
				action = updateAction(bo.ifMatch)
			case "delete":
				action = tableauth.DeleteEntity
			}
			err = req.allowEntity(action, t, e.pk, e.rk)
		}
		if err != nil {
			return fail(i, err), false, nil
		}
		if i == 0 {
			pk = e.pk
		} else if e.pk != pk {
			return fail(i, newErr(http.StatusBadRequest, "CommandsInBatchActOnDifferentPartitions", "All commands in a batch must operate on the same entity group: operation %d has PartitionKey %q, the first %q.", i, e.pk, pk)), false, nil
		}
		if seen[e.rk] {
			return fail(i, newErr(http.StatusBadRequest, codeInvalidDuplicateRow, "The batch request contains multiple changes with the same row key %q. An entity can appear only once in a batch request.", e.rk)), false, nil
		}
		seen[e.rk] = true
		bo.e = e
		op, err := s.batchEngineOp(req, c, &bo)
		if err != nil {
			return fail(i, err), false, nil
		}
		ops = append(ops, op)
		prepared = append(prepared, bo)
	}
	res, _, err := c.Execute(&engine.Command{Ops: ops, Atomic: true}, "")
	if err != nil {
		return nil, false, err
	}
	for i := range res {
		req.charge += res[i].Charge
	}
	for i := range res {
		if err := res[i].Err; err != nil && !errors.Is(err, engine.ErrFailedDependency) {
			bo := prepared[i]
			concurrent := errors.Is(err, engine.ErrPreconditionFailed) || errors.Is(err, engine.ErrConflict) || errors.Is(err, engine.ErrNotFound)
			if concurrent && bo.engineMatch {
				if errors.Is(err, engine.ErrPreconditionFailed) && bo.ifMatch != "" && bo.ifMatch != "*" {
					return fail(i, errCondition()), false, nil
				}
				return fail(i, err), true, nil
			}
			return fail(i, batchOpError(bo, err)), false, nil
		}
	}
	parts := make([]batch.Part, len(prepared))
	for i, bo := range prepared {
		h := http.Header{}
		h.Set("DataServiceVersion", "3.0;")
		p := batch.Part{Status: http.StatusNoContent, ContentID: bo.op.ContentID, Header: h}
		if bo.kind != "delete" {
			h.Set("ETag", tableETag(bo.e.ts))
		}
		if bo.kind == "insert" {
			h.Set("Location", req.base+"/"+entityPath(table, bo.e.pk, bo.e.rk))
			content, applied := preference(&http.Request{Header: bo.op.Header}, true)
			if applied != "" {
				h.Set("Preference-Applied", applied)
			}
			if content {
				sub := *req
				sub.meta = metadataOf(&http.Request{Header: bo.op.Header, URL: bo.op.URL})
				p.Status = http.StatusCreated
				p.Body = s.entityJSON(&sub, table, bo.e, nil, true)
				h.Set("Content-Type", contentType(sub.meta))
			}
		}
		parts[i] = p
	}
	return parts, false, nil
}

// batchOpError is the error of an operation the engine refused.
func batchOpError(bo batchOp, err error) error {
	switch {
	case errors.Is(err, engine.ErrNotFound):
		return errEntityNotFound()
	case errors.Is(err, engine.ErrConflict):
		return newErr(http.StatusConflict, codeEntityAlreadyExists, "The specified entity already exists.")
	case errors.Is(err, engine.ErrPreconditionFailed):
		return errCondition()
	}
	return err
}

// batchEngineOp prepares the engine operation of one batch operation,
// reading the entity first where the operation needs its current version
// (a merge, or an If-Match with an ETag).
func (s *Server) batchEngineOp(req *request, c *engine.Container, bo *batchOp) (engine.Op, error) {
	e := bo.e
	var cur *entity
	if bo.kind == "merge" || (bo.ifMatch != "" && bo.ifMatch != "*") {
		var err error
		if cur, err = s.read(req, c, e.pk, e.rk); err != nil {
			return engine.Op{}, err
		}
		if cur == nil && (bo.ifMatch != "" || bo.kind == "delete") {
			return engine.Op{}, errEntityNotFound()
		}
		if cur != nil && bo.ifMatch != "" && bo.ifMatch != "*" && bo.ifMatch != tableETag(cur.ts) {
			return engine.Op{}, errCondition()
		}
		bo.engineMatch = true
	}
	switch bo.kind {
	case "insert":
		return s.prepare(c, engine.OpCreate, e, "")
	case "upsert":
		return s.prepare(c, engine.OpUpsert, e, "")
	case "replace":
		m := ""
		if cur != nil {
			m = cur.etag
		}
		return s.prepare(c, engine.OpReplace, e, m)
	case "merge":
		if cur == nil {
			return s.prepare(c, engine.OpCreate, e, "")
		}
		w := mergeInto(cur, e)
		op, err := s.prepare(c, engine.OpReplace, w, cur.etag)
		e.ts = w.ts
		return op, err
	}
	// delete
	if e.rk == "" || checkKeys(e.pk, e.rk) != nil {
		return engine.Op{}, errEntityNotFound()
	}
	op, err := c.PrepareKeyed(engine.OpDelete, e.rk, keyOf(e.pk), true)
	if err != nil {
		return engine.Op{}, err
	}
	if cur != nil {
		op.IfMatch = cur.etag
	}
	return op, nil
}

// batchTarget reads an operation's table and keys from its URL, whose
// path holds the account first in the path style.
func batchTarget(o *batch.Operation) (string, []string, error) {
	segs := strings.Split(strings.TrimPrefix(o.URL.Path, "/"), "/")
	switch len(segs) {
	case 1:
	case 2:
		segs = segs[1:]
	default:
		return "", nil, errInput("The operation's URL %q names no table.", o.RawURL)
	}
	return parseEntityPath(segs[0])
}

// writeBatch answers 202 with the changeset response parts.
func (s *Server) writeBatch(req *request, parts []batch.Part) error {
	boundary, err := batch.NewBoundary(rand.Reader)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := batch.WriteResponse(&buf, boundary, parts); err != nil {
		return newErr(http.StatusInternalServerError, codeInternalError, "cannot write the batch response: %v", err)
	}
	s.headers(req)
	h := req.w.Header()
	h.Set("Content-Type", batch.ContentType(boundary))
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	req.w.WriteHeader(http.StatusAccepted)
	_, _ = req.w.Write(buf.Bytes())
	return nil
}
