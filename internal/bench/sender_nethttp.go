package bench

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
)

// netHTTPSender sends through the client's shared http.Transport. It reuses
// one *http.Request, its header map and its value slices for every request:
// the RoundTripper contract allows reusing a request once the response body
// has been closed, which send always does before it returns.
type netHTTPSender struct {
	tr   *http.Transport
	req  *http.Request
	body *bodyReader
	buf  []byte // the body buffer handed out by buffer()
	rd   []byte // the response body

	dateV, authV, actV []string
	jsonCT, trueV, uaV []string
	// consV is the x-ms-consistency-level of signed requests, or nil.
	consV             []string
	versionV, queryCT []string
	ifMatchV, contV   []string
	pageSizeV         []string

	// The etag and continuation of the last response, as net/http parsed
	// them: sending one of them back (an RMW's If-Match, a query's next
	// page) reuses the string instead of converting the bytes again.
	lastEtag, lastCont string
	etag, cont         []byte // their bytes, handed out in reply
}

// bodyReader is a reusable request body.
type bodyReader struct{ bytes.Reader }

func (*bodyReader) Close() error { return nil }

func newNetHTTPSender(ctx context.Context, c *client, itemSize int) *netHTTPSender {
	s := &netHTTPSender{
		tr:       c.tr,
		body:     &bodyReader{},
		buf:      make([]byte, 0, itemSize),
		rd:       make([]byte, 0, itemSize+4096),
		dateV:    []string{""},
		authV:    []string{""},
		actV:     []string{""},
		jsonCT:   []string{"application/json"},
		trueV:    []string{"True"},
		uaV:      []string{userAgent},
		versionV: []string{APIVersion},
		consV:    c.consistencyHeader(),
		queryCT:  []string{"application/query+json"},
	}
	s.newValues()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base.String()+"/", nil)
	if err != nil {
		panic("BUG: cannot build the request template: " + err.Error())
	}
	req.Header = http.Header{"User-Agent": s.uaV}
	s.req = req
	return s
}

func (s *netHTTPSender) buffer() []byte { return s.buf[:0] }

func (s *netHTTPSender) close() {}

func (s *netHTTPSender) send(c *call, r *reply) error {
	req, h := s.req, s.req.Header
	req.Method = c.method
	req.URL.Path = c.path
	if c.signed {
		s.dateV[0], s.authV[0], s.actV[0] = c.date, c.authorization, c.activity
		h["X-Ms-Date"], h["Authorization"], h["X-Ms-Activity-Id"], h["X-Ms-Version"] = s.dateV, s.authV, s.actV, s.versionV
	} else {
		delete(h, "X-Ms-Date")
		delete(h, "Authorization")
		delete(h, "X-Ms-Activity-Id")
		delete(h, "X-Ms-Version")
	}
	toggle(h, "X-Ms-Consistency-Level", s.consV, s.consV != nil && c.signed)
	toggle(h, "X-Ms-Documentdb-Partitionkey", c.pk, c.pk != nil)
	toggle(h, "X-Ms-Documentdb-Is-Upsert", s.trueV, c.upsert)
	toggle(h, "X-Ms-Documentdb-Isquery", s.trueV, c.query)
	toggle(h, "X-Ms-Documentdb-Query-Enablecrosspartition", s.trueV, c.crossPartition)
	if len(c.ifMatch) > 0 {
		s.ifMatchV[0] = s.lastEtag
		if string(c.ifMatch) != s.lastEtag {
			s.ifMatchV[0] = string(c.ifMatch)
		}
		h["If-Match"] = s.ifMatchV
	} else {
		delete(h, "If-Match")
	}
	if len(c.continuation) > 0 {
		s.contV[0] = s.lastCont
		if string(c.continuation) != s.lastCont {
			s.contV[0] = string(c.continuation)
		}
		h["X-Ms-Continuation"] = s.contV
	} else {
		delete(h, "X-Ms-Continuation")
	}
	s.pageSizeV[0] = c.pageSize
	toggle(h, "X-Ms-Max-Item-Count", s.pageSizeV, c.pageSize != "")
	if c.body != nil {
		s.buf = c.body // keep the capacity it grew to
		h["Content-Type"] = s.jsonCT
		if c.query {
			h["Content-Type"] = s.queryCT
		}
		s.body.Reset(c.body)
		req.Body, req.ContentLength = s.body, int64(len(c.body))
	} else {
		delete(h, "Content-Type")
		req.Body, req.ContentLength = nil, 0
	}

	resp, err := s.tr.RoundTrip(req)
	if err != nil {
		return err
	}
	buf := s.rd[:0]
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		k, rerr := resp.Body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+k]
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			resp.Body.Close()
			s.rd = buf
			return rerr
		}
	}
	resp.Body.Close()
	s.rd = buf
	if resp.StatusCode >= 300 && c.body != nil {
		// The server may have answered before it read the whole body, and
		// the transport may then still be writing it: leave this request,
		// its body and its buffer to the transport and start afresh.
		s.renew()
	}

	r.status, r.body, r.charge, r.retryAfter = resp.StatusCode, buf, 0, -1
	if v := resp.Header["X-Ms-Request-Charge"]; len(v) > 0 {
		r.charge = parseCharge(v[0])
	}
	if v := resp.Header["X-Ms-Retry-After-Ms"]; len(v) > 0 {
		r.retryAfter = parseRetryAfter(v[0])
	}
	s.lastEtag, s.lastCont, r.itemCount = "", "", 0
	s.etag, s.cont = s.etag[:0], s.cont[:0]
	if v := resp.Header["Etag"]; len(v) > 0 {
		s.lastEtag = v[0]
		s.etag = append(s.etag, v[0]...)
	}
	if v := resp.Header["X-Ms-Continuation"]; len(v) > 0 {
		s.lastCont = v[0]
		s.cont = append(s.cont, v[0]...)
	}
	if v := resp.Header["X-Ms-Item-Count"]; len(v) > 0 {
		r.itemCount, _ = strconv.Atoi(v[0])
	}
	r.etag, r.continuation = s.etag, s.cont
	return nil
}

// renew replaces the request template, body reader and buffers.
func (s *netHTTPSender) renew() {
	s.req = s.req.Clone(s.req.Context())
	s.req.Header = http.Header{"User-Agent": s.uaV}
	s.req.Body, s.req.ContentLength = nil, 0
	s.body = &bodyReader{}
	s.buf = make([]byte, 0, cap(s.buf))
	s.dateV, s.authV, s.actV = []string{""}, []string{""}, []string{""}
	s.newValues()
}

// newValues allocates the header value slices that change per request.
func (s *netHTTPSender) newValues() {
	s.ifMatchV, s.contV, s.pageSizeV = []string{""}, []string{""}, []string{""}
}

// toggle sets the header name to v when on, and removes it otherwise.
func toggle(h http.Header, name string, v []string, on bool) {
	if on {
		h[name] = v
	} else {
		delete(h, name)
	}
}
