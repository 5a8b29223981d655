package table

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/parsecdb/parsec/internal/api/table/edm"
	"github.com/parsecdb/parsec/internal/api/table/tableauth"
	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/epk"
)

// maxRetries bounds the read-modify-write retries of a merge that meets
// concurrent writes.
const maxRetries = 8

func keyOf(pk string) epk.Key { return epk.Key{epk.String(pk)} }

// exec runs one operation and adds its charge to the request's.
func (s *Server) exec(req *request, c *engine.Container, op engine.Op) (engine.OpResult, error) {
	res, _, err := c.Execute(&engine.Command{Ops: []engine.Op{op}}, "")
	if err != nil {
		return engine.OpResult{}, err
	}
	req.charge += res[0].Charge
	return res[0], res[0].Err
}

// read reads an entity; nil when it does not exist.
func (s *Server) read(req *request, c *engine.Container, pk, rk string) (*entity, error) {
	if rk == "" || checkKeys(pk, rk) != nil {
		return nil, nil // no stored entity has such keys
	}
	op, err := c.PrepareKeyed(engine.OpRead, rk, keyOf(pk), true)
	if err != nil {
		return nil, err
	}
	r, _, err := c.ReadItem(op)
	req.charge += r.Charge
	if err != nil {
		if errors.Is(err, engine.ErrNotFound) {
			return nil, nil
		}
		return nil, err
	}
	e, err := decodeEntity(r.Doc)
	if err != nil {
		return nil, err
	}
	e.etag = r.Etag
	return e, nil
}

// prepare stamps e with a new Timestamp and prepares its write.
func (s *Server) prepare(c *engine.Container, kind engine.OpKind, e *entity, ifMatch string) (engine.Op, error) {
	e.ts = s.timestamp()
	body := encodeEntity(e)
	if len(body) > MaxEntityBytes {
		return engine.Op{}, newErr(http.StatusBadRequest, codeEntityTooLarge, "The entity is %d bytes as stored; the limit is %d bytes.", len(body), MaxEntityBytes)
	}
	op, err := c.PrepareWrite(kind, body, keyOf(e.pk), true)
	if err != nil {
		return engine.Op{}, err
	}
	op.IfMatch = ifMatch
	return op, nil
}

func (s *Server) insertEntity(req *request, table string) error {
	c, err := s.openTable(table)
	if err != nil {
		return err
	}
	body, err := readBody(req)
	if err != nil {
		return err
	}
	e, err := parseEntity(body, nil, nil)
	if err != nil {
		return err
	}
	if err := req.allowEntity(tableauth.InsertEntity, table, e.pk, e.rk); err != nil {
		return err
	}
	op, err := s.prepare(c, engine.OpCreate, e, "")
	if err != nil {
		return err
	}
	if _, err := s.exec(req, c, op); err != nil {
		return err
	}
	h := req.w.Header()
	h.Set("ETag", tableETag(e.ts))
	h.Set("Location", req.base+"/"+entityPath(table, e.pk, e.rk))
	content, applied := preference(req.r, true)
	if applied != "" {
		h.Set("Preference-Applied", applied)
	}
	if !content {
		s.writeNoContent(req)
		return nil
	}
	s.writeJSON(req, http.StatusCreated, s.entityJSON(req, table, e, nil, true))
	return nil
}

func (s *Server) getEntity(req *request, table, pk, rk string) error {
	c, err := s.openTable(table)
	if err != nil {
		return err
	}
	sel, err := selectOf(req)
	if err != nil {
		return err
	}
	e, err := s.read(req, c, pk, rk)
	if err != nil {
		return err
	}
	if e == nil {
		return errEntityNotFound()
	}
	req.w.Header().Set("ETag", tableETag(e.ts))
	s.writeJSON(req, http.StatusOK, s.entityJSON(req, table, e, sel, true))
	return nil
}

// updateEntity is PUT (replace; insert-or-replace without If-Match) and
// MERGE/PATCH (merge; insert-or-merge without If-Match).
func (s *Server) updateEntity(req *request, table, pk, rk string, merge bool) error {
	c, err := s.openTable(table)
	if err != nil {
		return err
	}
	body, err := readBody(req)
	if err != nil {
		return err
	}
	e, err := parseEntity(body, &pk, &rk)
	if err != nil {
		return err
	}
	ts, err := s.update(req, c, e, req.r.Header.Get("If-Match"), merge)
	if err != nil {
		return err
	}
	req.w.Header().Set("ETag", tableETag(ts))
	s.writeNoContent(req)
	return nil
}

// update writes e as a replace or a merge under the If-Match ifMatch
// ("" for an upsert) and returns its new Timestamp.
func (s *Server) update(req *request, c *engine.Container, e *entity, ifMatch string, merge bool) (time.Time, error) {
	if !merge && (ifMatch == "" || ifMatch == "*") {
		kind := engine.OpUpsert
		if ifMatch == "*" {
			kind = engine.OpReplace
		}
		op, err := s.prepare(c, kind, e, "")
		if err != nil {
			return time.Time{}, err
		}
		if _, err := s.exec(req, c, op); err != nil {
			if errors.Is(err, engine.ErrNotFound) {
				return time.Time{}, errEntityNotFound()
			}
			return time.Time{}, err
		}
		return e.ts, nil
	}
	for try := 0; ; try++ {
		cur, err := s.read(req, c, e.pk, e.rk)
		if err != nil {
			return time.Time{}, err
		}
		w := e
		var op engine.Op
		switch {
		case cur == nil && ifMatch != "":
			return time.Time{}, errEntityNotFound()
		case cur == nil:
			op, err = s.prepare(c, engine.OpCreate, w, "")
		default:
			if ifMatch != "" && ifMatch != "*" && ifMatch != tableETag(cur.ts) {
				return time.Time{}, errCondition()
			}
			if merge {
				w = mergeInto(cur, e)
			}
			op, err = s.prepare(c, engine.OpReplace, w, cur.etag)
		}
		if err != nil {
			return time.Time{}, err
		}
		_, err = s.exec(req, c, op)
		if err == nil {
			return w.ts, nil
		}
		concurrent := errors.Is(err, engine.ErrPreconditionFailed) || errors.Is(err, engine.ErrConflict) || errors.Is(err, engine.ErrNotFound)
		if !concurrent {
			return time.Time{}, err
		}
		if ifMatch != "" && ifMatch != "*" {
			return time.Time{}, errCondition()
		}
		if try == maxRetries {
			return time.Time{}, newErr(http.StatusServiceUnavailable, codeServerBusy, "The entity kept changing while it was written; retry the request.")
		}
	}
}

// mergeInto returns cur with e's properties laid over it.
func mergeInto(cur, e *entity) *entity {
	out := &entity{pk: e.pk, rk: e.rk}
	idx := map[string]int{}
	for _, p := range cur.props {
		idx[p.name] = len(out.props)
		out.props = append(out.props, p)
	}
	for _, p := range e.props {
		if i, ok := idx[p.name]; ok {
			out.props[i] = p
			continue
		}
		idx[p.name] = len(out.props)
		out.props = append(out.props, p)
	}
	return out
}

func (s *Server) deleteEntity(req *request, table, pk, rk string) error {
	c, err := s.openTable(table)
	if err != nil {
		return err
	}
	ifMatch := req.r.Header.Get("If-Match")
	if ifMatch == "" {
		return newErr(http.StatusBadRequest, codeMissingRequiredHeader, "An HTTP header that's mandatory for this request is not specified: If-Match.")
	}
	if err := s.remove(req, c, pk, rk, ifMatch); err != nil {
		return err
	}
	s.writeNoContent(req)
	return nil
}

// remove deletes an entity under If-Match ifMatch ("*" or an ETag).
func (s *Server) remove(req *request, c *engine.Container, pk, rk, ifMatch string) error {
	engineMatch := ""
	if ifMatch != "*" {
		cur, err := s.read(req, c, pk, rk)
		if err != nil {
			return err
		}
		if cur == nil {
			return errEntityNotFound()
		}
		if tableETag(cur.ts) != ifMatch {
			return errCondition()
		}
		engineMatch = cur.etag
	}
	if rk == "" || checkKeys(pk, rk) != nil {
		return errEntityNotFound()
	}
	op, err := c.PrepareKeyed(engine.OpDelete, rk, keyOf(pk), true)
	if err != nil {
		return err
	}
	op.IfMatch = engineMatch
	if _, err := s.exec(req, c, op); err != nil {
		switch {
		case errors.Is(err, engine.ErrNotFound):
			return errEntityNotFound()
		case errors.Is(err, engine.ErrPreconditionFailed):
			return errCondition()
		}
		return err
	}
	return nil
}

// quoteKey writes a key as the entity address quotes it: ” for a quote,
// then percent-encoded.
func quoteKey(k string) string {
	return url.PathEscape(strings.ReplaceAll(k, "'", "''"))
}

// entityPath is t(PartitionKey='a',RowKey='b').
func entityPath(table, pk, rk string) string {
	return table + "(PartitionKey='" + quoteKey(pk) + "',RowKey='" + quoteKey(rk) + "')"
}

// entityJSON renders an entity at the request's metadata level, with
// only the properties of sel when sel is not nil; alone (a single
// entity, not a query's row) it carries its own odata.metadata.
func (s *Server) entityJSON(req *request, table string, e *entity, sel map[string]bool, alone bool) []byte {
	b := make([]byte, 0, 256)
	b = append(b, '{')
	sep := false
	str := func(k, v string) {
		if sep {
			b = append(b, ',')
		}
		sep = true
		b = appendJSONString(b, k)
		b = append(b, ':')
		b = appendJSONString(b, v)
	}
	if req.meta != noMetadata {
		if alone {
			str("odata.metadata", req.base+"/$metadata#"+table+"/@Element")
		}
		if req.meta == fullMetadata {
			str("odata.type", req.account+"."+table)
			str("odata.id", req.base+"/"+entityPath(table, e.pk, e.rk))
		}
		str("odata.etag", tableETag(e.ts))
		if req.meta == fullMetadata {
			str("odata.editLink", entityPath(table, e.pk, e.rk))
		}
	}
	want := func(n string) bool { return sel == nil || sel[n] }
	if want("PartitionKey") {
		str("PartitionKey", e.pk)
	}
	if want("RowKey") {
		str("RowKey", e.rk)
	}
	// After the first member every member is written with a leading ','.
	if !sep {
		b = append(b, `"~":0`...) // replaced below
	}
	if want("Timestamp") && !e.ts.IsZero() {
		b = appendProp(b, "Timestamp", edm.Value{Type: edm.DateTime, T: e.ts}, req.meta == fullMetadata)
	}
	for _, p := range e.props {
		if want(p.name) {
			b = appendProp(b, p.name, p.v, annotated(p.v, req.meta))
		}
	}
	b = append(b, '}')
	if !sep {
		// Drop the placeholder and the ',' that followed it.
		b = append(b[:1], strings.TrimPrefix(string(b[1+len(`"~":0`):]), ",")...)
	}
	return b
}
