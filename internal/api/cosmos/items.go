package cosmos

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/epk"
	"github.com/parsecdb/parsec/internal/jsondoc"
)

const (
	hdrPartitionKey = "x-ms-documentdb-partitionkey"
	hdrRangeID      = "x-ms-documentdb-partitionkeyrangeid"
	// hdrBatchContinueOnError is "false" when a bulk request stops at
	// its first failed operation.
	hdrBatchContinueOnError = "x-ms-cosmos-batch-continue-on-error"
	// hdrIntendedContainerRid names the container rid a client's caches
	// hold (client-side encryption sends it on item requests).
	hdrIntendedContainerRid = "x-ms-cosmos-intended-collection-rid"
)

// openContainer resolves the container of a request and sets the headers
// that name it.
func (s *Server) openContainer(req *request, dbID, collID string) (*engine.Container, error) {
	c, err := s.engine.Container(dbID, collID)
	if err != nil {
		return nil, err
	}
	h := req.w.Header()
	h["X-Ms-Content-Path"] = []string{c.Info().Rid}
	return c, nil
}

// partitionKeyHeader parses the partition-key header; ok is false if absent.
func partitionKeyHeader(r *http.Request) (epk.Key, bool, error) {
	v, present := r.Header[http.CanonicalHeaderKey(hdrPartitionKey)]
	if !present || len(v) == 0 {
		return nil, false, nil
	}
	k, err := epk.ParseHeader(v[0])
	if err != nil {
		return nil, true, errBadRequest("the %s header %q is not a valid partition key: %v", hdrPartitionKey, v[0], err)
	}
	return k, true, nil
}

// items runs an operation on an items feed or an item (see classify).
func (s *Server) items(req *request, op operation) error {
	c, err := s.openContainer(req, op.db, op.coll)
	if err != nil {
		return err
	}
	if rid := req.r.Header.Get(hdrIntendedContainerRid); rid != "" && rid != c.Info().Rid {
		// The container was deleted and created again: the client's
		// caches (and encryption settings) are of the old one.
		return &apiError{status: http.StatusBadRequest, sub: subIncorrectContainerRid, code: "BadRequest",
			msg: fmt.Sprintf("the intended collection rid %q is not the rid of container %q (%s): the container was recreated", rid, op.coll, c.Info().Rid)}
	}
	switch op.kind {
	case opReadFeed:
		return s.readFeed(req, c)
	case opChangeFeed:
		return s.changeFeed(req, c)
	case opQueryPlan:
		return s.queryPlan(req, c)
	case opBatch:
		return s.batch(req, c)
	case opQuery:
		return s.query(req, c)
	case opUpsertItem:
		return s.write(req, c, engine.OpUpsert, "")
	case opCreateItem:
		return s.write(req, c, engine.OpCreate, "")
	case opReadItem:
		return s.readItem(req, c, op.id)
	case opReplaceItem:
		return s.write(req, c, engine.OpReplace, op.id)
	case opDeleteItem:
		return s.keyed(req, c, engine.OpDelete, op.id, nil, "")
	case opPatchItem:
		return s.patch(req, c, op.id)
	default:
		panic("BUG: items called for " + op.kind.String())
	}
}

func (s *Server) patch(req *request, c *engine.Container, id string) error {
	body, err := readBody(req)
	if err != nil {
		return err
	}
	cond, ops, err := jsondoc.ParsePatch(body)
	if err != nil {
		return errBadRequest("the patch request is invalid: %v", err)
	}
	if cond != "" {
		if _, err = engine.CompilePatchCondition(cond); err != nil {
			return err
		}
	}
	return s.keyed(req, c, engine.OpPatch, id, ops, cond)
}

// write handles create, upsert and replace.
func (s *Server) write(req *request, c *engine.Container, kind engine.OpKind, urlID string) error {
	body, err := readBody(req)
	if err != nil {
		return err
	}
	key, has, err := partitionKeyHeader(req.r)
	if err != nil {
		return err
	}
	op, err := prepareWrite(c, kind, body, key, has)
	if err != nil {
		return err
	}
	if kind == engine.OpReplace && op.ID != urlID {
		return errBadRequest("the item's id, %q, does not match the id in the request path, %q", op.ID, urlID)
	}
	op.IfMatch = req.r.Header.Get("If-Match")
	return s.executeOne(req, c, op)
}

// prepareWrite is engine.Container.PrepareWrite, with the header to send a
// missing partition key in named.
func prepareWrite(c *engine.Container, kind engine.OpKind, body []byte, key epk.Key, has bool) (engine.Op, error) {
	op, err := c.PrepareWrite(kind, body, key, has)
	return op, withKeyHeader(err)
}

// prepareKeyed is engine.Container.PrepareKeyed, with the header to send a
// missing partition key in named.
func prepareKeyed(c *engine.Container, kind engine.OpKind, id string, key epk.Key, has bool) (engine.Op, error) {
	op, err := c.PrepareKeyed(kind, id, key, has)
	return op, withKeyHeader(err)
}

// withKeyHeader adds to engine.ErrNoPartitionKey where the key goes.
func withKeyHeader(err error) error {
	if errors.Is(err, engine.ErrNoPartitionKey) {
		return fmt.Errorf("%w: send it in the %s header", err, hdrPartitionKey)
	}
	return err
}

// keyed handles delete and patch, which address an item by key and id.
func (s *Server) keyed(req *request, c *engine.Container, kind engine.OpKind, id string, patch []jsondoc.PatchOp, cond string) error {
	key, has, err := partitionKeyHeader(req.r)
	if err != nil {
		return err
	}
	op, err := prepareKeyed(c, kind, id, key, has)
	if err != nil {
		return err
	}
	op.Patch, op.Condition = patch, cond
	op.IfMatch = req.r.Header.Get("If-Match")
	return s.executeOne(req, c, op)
}

func (s *Server) executeOne(req *request, c *engine.Container, op engine.Op) error {
	if hasTriggers(req.r) {
		// Triggers run in the engine of the partition's leader, which the
		// request is sent on to (forward.go).
		if err := s.routeWrite(c, op.EPK); err != nil {
			return err
		}
		_, err := s.executeWithTriggers(req, c, op)
		return err
	}
	res, session, err := s.gw.Write(req.r.Context(), c, &engine.Command{Ops: []engine.Op{op}}, req.r.Header.Get(hdrRangeID))
	req.itemSession(session)
	if err != nil {
		return err
	}
	req.charge = res[0].Charge
	return s.writeOpResult(req, op, res[0])
}

// writeOpResult answers a single item operation with its outcome.
func (s *Server) writeOpResult(req *request, op engine.Op, r engine.OpResult) error {
	if r.Err != nil {
		return r.Err
	}
	status := successStatus(op.Kind, r.Created)
	if status != http.StatusNoContent {
		req.w.Header().Set("etag", r.Etag)
	}
	if status == http.StatusNoContent || preferMinimal(req.r) {
		s.writeJSON(req, status, nil)
		return nil
	}
	s.writeJSON(req, status, r.Doc)
	return nil
}

func preferMinimal(r *http.Request) bool {
	return strings.Contains(strings.ToLower(r.Header.Get("Prefer")), "return=minimal")
}

func (s *Server) readItem(req *request, c *engine.Container, id string) error {
	key, has, err := partitionKeyHeader(req.r)
	if err != nil {
		return err
	}
	op, err := prepareKeyed(c, engine.OpRead, id, key, has)
	if err != nil {
		return err
	}
	if err := s.awaitReplicas(req, []*engine.Partition{c.PartitionFor(op.EPK)}); err != nil {
		return err
	}
	r, session, err := c.ReadItem(op)
	req.itemSession(session)
	req.charge = r.Charge
	if err != nil {
		return err
	}
	req.w.Header()["Etag"] = []string{r.Etag}
	if s.notModified(req, r.Etag) {
		return nil
	}
	s.writeJSON(req, successStatus(engine.OpRead, false), r.Doc)
	return nil
}

func (s *Server) readFeed(req *request, c *engine.Container) error {
	if err := s.awaitReplicas(req, c.Partitions()); err != nil {
		return err
	}
	max, err := maxItemCount(req.r)
	if err != nil {
		return err
	}
	rangeID := req.r.Header.Get(hdrRangeID)
	var after []byte
	if token := req.r.Header.Get("x-ms-continuation"); token != "" {
		if after, err = decodeFeedToken(token, c.Info().Rid, rangeID); err != nil {
			return err
		}
	}
	k, hasKey, err := partitionKeyHeader(req.r)
	if err != nil {
		return err
	}
	var f engine.Feed
	if hasKey {
		// One logical partition, as the service scopes a read feed that
		// names a partition key.
		f, err = c.ReadKeyFeed(k, after, max)
	} else {
		f, err = c.ReadFeed(rangeID, after, max)
	}
	if err != nil {
		return err
	}
	var continuation string
	if f.Next != nil {
		continuation = encodeFeedToken(c.Info().Rid, rangeID, f.Next)
	}
	s.writeDocuments(req, c, f.Docs, continuation, f.Sessions, f.Charge)
	return nil
}

// maxItemCount reads x-ms-max-item-count: a positive page size, -1 for the
// server's choice (returned as 0), or DefaultPageSize when absent.
func maxItemCount(r *http.Request) (int, error) {
	v := r.Header.Get("x-ms-max-item-count")
	if v == "" {
		return engine.DefaultPageSize, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n == 0 || n < -1 {
		return 0, errBadRequest("x-ms-max-item-count must be a positive integer or -1, not %q", v)
	}
	if n == -1 {
		return 0, nil
	}
	return n, nil
}

// writeDocuments sends one page of a documents feed (a read feed or a
// query): the {"_rid","Documents","_count"} envelope and the paging headers.
func (s *Server) writeDocuments(req *request, c *engine.Container, docs [][]byte, continuation string, sessions []engine.Session, charge float64) {
	var b bytes.Buffer
	b.WriteString(`{"_rid":"`)
	b.WriteString(c.Info().Rid)
	b.WriteString(`","Documents":[`)
	for i, d := range docs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(d)
	}
	b.WriteString(`],"_count":`)
	b.WriteString(strconv.Itoa(len(docs)))
	b.WriteByte('}')
	req.charge = charge
	req.session = sessionTokens(sessions)
	h := req.w.Header()
	h.Set("x-ms-item-count", strconv.Itoa(len(docs)))
	if continuation != "" {
		h.Set("x-ms-continuation", continuation)
	}
	if rid := req.r.Header.Get(hdrRangeID); rid != "" {
		h.Set(hdrRangeID, rid)
	}
	s.writeJSON(req, http.StatusOK, b.Bytes())
}

// batchOp is one operation of a batch request body.
type batchOp struct {
	OperationType string          `json:"operationType"`
	ID            *string         `json:"id"`
	PartitionKey  *string         `json:"partitionKey"`
	IfMatch       string          `json:"ifMatch"`
	ResourceBody  json.RawMessage `json:"resourceBody"`
}

// batchResult is one operation's outcome in a batch response.
type batchResult struct {
	StatusCode    int             `json:"statusCode"`
	SubStatusCode int             `json:"subStatusCode,omitempty"`
	RequestCharge float64         `json:"requestCharge"`
	ETag          string          `json:"eTag,omitempty"`
	ResourceBody  json.RawMessage `json:"resourceBody,omitempty"`
	Message       string          `json:"message,omitempty"`
}

// batch runs a transactional batch (atomic, one partition key, from the
// header) or a bulk request (non-atomic, each operation with its own key,
// scoped to one range).
func (s *Server) batch(req *request, c *engine.Container) error {
	r := req.r
	atomic := !strings.EqualFold(r.Header.Get("x-ms-cosmos-batch-atomic"), "false")
	body, err := readBody(req)
	if err != nil {
		return err
	}
	var in []batchOp
	if err := decodeStrict(body, &in); err != nil {
		return errBadRequest("the batch body must be a JSON array of operations: %v", err)
	}
	if len(in) == 0 {
		return errBadRequest("the batch has no operations")
	}
	if len(in) > engine.MaxBatchOps {
		return errBadRequest("Batch request has more operations than what is supported: %d operations, the limit is %d", len(in), engine.MaxBatchOps)
	}
	hdrKey, hasHdr, err := partitionKeyHeader(r)
	if err != nil {
		return err
	}
	if atomic && !hasHdr {
		return errBadRequest("a transactional batch needs the %s header", hdrPartitionKey)
	}
	// A bulk request's invalid operation fails alone, with its own status;
	// unless the client continues on error, the operations after it are
	// not run (424), as on the service.
	continueOnError := !strings.EqualFold(r.Header.Get(hdrBatchContinueOnError), "false")
	cmd := &engine.Command{Atomic: atomic, StopOnError: !atomic && !continueOnError, Ops: make([]engine.Op, 0, len(in))}
	at := make([]int, 0, len(in)) // the position in the request of each operation of cmd
	ops := make([]engine.Op, len(in))
	invalid := make([]error, len(in))
	stopped := -1
	for i, bo := range in {
		if stopped >= 0 {
			invalid[i] = fmt.Errorf("%w: operation %d of the batch failed", engine.ErrFailedDependency, stopped)
			continue
		}
		op, err := prepareBatchOp(c, bo, hdrKey, hasHdr)
		if err != nil {
			e := &apiError{status: http.StatusBadRequest, code: "BadRequest", msg: fmt.Sprintf("operation %d (%s) of the batch is invalid: %s", i, bo.OperationType, messageOf(err))}
			if errors.Is(err, engine.ErrPartitionKeyMismatch) {
				e.sub = subPartitionKeyMismatch
				if atomic {
					e.msg = fmt.Sprintf("%s (operation %d (%s): %s)", engine.MsgBatchKeyMismatch, i, bo.OperationType, messageOf(err))
				}
			}
			if atomic {
				return e
			}
			invalid[i] = e
			if !continueOnError {
				stopped = i
			}
			continue
		}
		if err := checkScopeKey(req, i, op.Key); err != nil {
			return err
		}
		if atomic && bo.PartitionKey != nil {
			if hk, err := c.ResolveKey(hdrKey); err == nil && !hk.Equal(op.Key) {
				return &apiError{status: http.StatusBadRequest, sub: subPartitionKeyMismatch, code: "BadRequest",
					msg: fmt.Sprintf("%s (operation %d has %s, the request %s)", engine.MsgBatchKeyMismatch, i, op.Key, hk)}
			}
		}
		ops[i] = op
		cmd.Ops = append(cmd.Ops, op)
		at = append(at, i)
	}
	res := make([]engine.OpResult, len(in))
	if len(cmd.Ops) > 0 {
		done, session, err := s.gw.Write(req.r.Context(), c, cmd, r.Header.Get(hdrRangeID))
		req.itemSession(session)
		if err != nil {
			return err
		}
		for j, x := range done {
			res[at[j]] = x
		}
	}
	out := make([]batchResult, len(res))
	status := http.StatusOK
	minimal := preferMinimal(r)
	for i, x := range res {
		if invalid[i] != nil {
			x.Err = invalid[i]
		}
		req.charge += x.Charge
		br := batchResult{RequestCharge: x.Charge, ETag: x.Etag}
		if x.Err != nil {
			status = http.StatusMultiStatus
			br.StatusCode, br.SubStatusCode, _ = statusOf(x.Err)
			br.Message = messageOf(x.Err)
		} else {
			br.StatusCode = successStatus(ops[i].Kind, x.Created)
			if br.StatusCode != http.StatusNoContent && (ops[i].Kind == engine.OpRead || !minimal) {
				br.ResourceBody = x.Doc
			}
		}
		out[i] = br
	}
	b, _ := json.Marshal(out)
	s.writeJSON(req, status, b)
	return nil
}

func prepareBatchOp(c *engine.Container, bo batchOp, hdrKey epk.Key, hasHdr bool) (engine.Op, error) {
	key, has := hdrKey, hasHdr
	if bo.PartitionKey != nil {
		k, err := epk.ParseHeader(*bo.PartitionKey)
		if err != nil {
			return engine.Op{}, errBadRequest("partitionKey %q is not valid: %v", *bo.PartitionKey, err)
		}
		key, has = k, true
	}
	var kind engine.OpKind
	switch strings.ToLower(bo.OperationType) {
	case "create":
		kind = engine.OpCreate
	case "upsert":
		kind = engine.OpUpsert
	case "replace":
		kind = engine.OpReplace
	case "delete":
		kind = engine.OpDelete
	case "read":
		kind = engine.OpRead
	case "patch":
		kind = engine.OpPatch
	default:
		return engine.Op{}, errBadRequest("unknown operationType %q", bo.OperationType)
	}
	var op engine.Op
	var err error
	switch kind {
	case engine.OpCreate, engine.OpUpsert, engine.OpReplace:
		if len(bo.ResourceBody) == 0 {
			return op, errBadRequest("resourceBody is required")
		}
		op, err = prepareWrite(c, kind, bo.ResourceBody, key, has)
		if err == nil && kind == engine.OpReplace && bo.ID != nil && *bo.ID != op.ID {
			err = errBadRequest("the id %q does not match the resourceBody's id %q", *bo.ID, op.ID)
		}
	default:
		if bo.ID == nil {
			return op, errBadRequest("id is required")
		}
		op, err = prepareKeyed(c, kind, *bo.ID, key, has)
		if err == nil && kind == engine.OpPatch {
			var cond string
			cond, op.Patch, err = jsondoc.ParsePatch(bo.ResourceBody)
			if err == nil && cond != "" {
				_, err = engine.CompilePatchCondition(cond)
				op.Condition = cond
			}
		}
	}
	op.IfMatch = bo.IfMatch
	return op, err
}
