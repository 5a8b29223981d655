package mongo

import (
	"crypto/rand"
	"encoding/binary"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/parsecdb/parsec/internal/mongo/mql"
)

// source yields a result's documents one at a time.
type source interface {
	next() (bson.D, bool, error)
	// held is how many bytes of documents the source keeps in memory
	// between calls: what an open cursor is charged for.
	held() int64
	// refresh is called before a getMore's batch: a source that holds
	// documents read by an earlier command reads them again.
	refresh() error
}

// sliceSource yields documents already in memory, kept as BSON (a decoded
// document takes several times its BSON size).
type sliceSource struct {
	docs  []bson.Raw
	bytes int64
}

// newSliceSource keeps docs for a cursor. More than maxBufferedBytes of
// them are refused, as mongod refuses a blocking stage over its memory
// limit.
func newSliceSource(docs []bson.D) (*sliceSource, error) {
	s := &sliceSource{docs: make([]bson.Raw, 0, len(docs))}
	for i, d := range docs {
		raw, err := bson.Marshal(d)
		if err != nil {
			return nil, newErr(1, "InternalError", "cannot encode a document: %v", err)
		}
		s.bytes += int64(len(raw))
		if s.bytes > maxBufferedBytes {
			return nil, overMemoryLimit("the result")
		}
		s.docs = append(s.docs, raw)
		docs[i] = nil // the decoded copy can go
	}
	return s, nil
}

// docsCursor returns a cursor over docs.
func docsCursor(ns string, docs []bson.D) (*cursor, error) {
	src, err := newSliceSource(docs)
	if err != nil {
		return nil, err
	}
	return &cursor{ns: ns, src: src, left: -1}, nil
}

func (s *sliceSource) next() (bson.D, bool, error) {
	if len(s.docs) == 0 {
		return nil, false, nil
	}
	raw := s.docs[0]
	s.docs[0] = nil
	s.docs = s.docs[1:]
	s.bytes -= int64(len(raw))
	var d bson.D
	if err := bson.Unmarshal(raw, &d); err != nil {
		return nil, false, newErr(1, "InternalError", "cannot decode a kept document: %v", err)
	}
	return d, true, nil
}

func (s *sliceSource) held() int64 { return s.bytes }

// refresh keeps the documents: they are a sort's or a pipeline's result,
// which mongod also computes once, when the cursor opens.
func (s *sliceSource) refresh() error { return nil }

// cursor is a server-side result being read in batches.
type cursor struct {
	id       int64
	ns       string
	src      source
	proj     *mql.Projection
	query    *mql.Filter // the filter a positional projection ("a.$") uses
	left     int64       // documents still allowed by the limit; < 0: no limit
	mu       sync.Mutex
	owner    principal // who opened it, the only one who may read it
	charged  int64     // the bytes of the cursor set's quota it uses
	lastUsed time.Time
	// limit is the maxTimeMS of the command that opened the cursor (nil:
	// none), and leftover the time it has left between getMores.
	limit    *timeLimit
	leftover time.Duration
}

// maxBatchBytes keeps a batch and its reply's envelope under the 16 MiB
// document limit.
const maxBatchBytes = MaxDocumentBytes - 64<<10

// batch reads up to n documents (n <= 0: as many as fit). done is set when
// the cursor is exhausted.
func (c *cursor) batch(n int) (docs bson.A, done bool, err error) {
	docs = bson.A{}
	size := 0
	if err := c.limit.check(); err != nil {
		return nil, false, err
	}
	for n <= 0 || len(docs) < n {
		if c.left == 0 {
			return docs, true, nil
		}
		d, ok, err := c.src.next()
		if err != nil {
			return nil, false, err
		}
		if !ok {
			return docs, true, nil
		}
		if c.proj != nil {
			d, _ = c.proj.ApplyWithQuery(d, c.query)
		}
		raw, err := bson.Marshal(d)
		if err != nil {
			return nil, false, newErr(1, "InternalError", "cannot encode a document: %v", err)
		}
		if size+len(raw) > maxBatchBytes && len(docs) > 0 {
			c.src = &pushback{d: raw, rest: c.src}
			return docs, false, nil
		}
		size += len(raw)
		docs = append(docs, bson.Raw(raw))
		if c.left > 0 {
			c.left--
		}
	}
	if c.left == 0 {
		return docs, true, nil
	}
	return docs, false, nil
}

// pushback yields a document that did not fit in the previous batch (already
// projected), then the rest.
type pushback struct {
	d    bson.Raw
	rest source
}

func (p *pushback) next() (bson.D, bool, error) {
	if p.d != nil {
		var d bson.D
		err := bson.Unmarshal(p.d, &d)
		p.d = nil
		return d, err == nil, err
	}
	return p.rest.next()
}

func (p *pushback) held() int64 { return int64(len(p.d)) + p.rest.held() }

// refresh refreshes the rest; the document that did not fit the previous
// batch is returned as it was read.
func (p *pushback) refresh() error { return p.rest.refresh() }

// cursorSet holds the open cursors of a server, within two quotas: how
// many cursors are open, and how many bytes of documents they keep between
// getMores (see quota.go).
type cursorSet struct {
	mu      sync.Mutex
	m       map[int64]*cursor
	count   quota
	bytes   quota
	timeout time.Duration
	now     func() time.Time
}

func newCursorSet(max int, maxBytes int64, timeout time.Duration, now func() time.Time) *cursorSet {
	return &cursorSet{m: map[int64]*cursor{}, count: quota{max: int64(max)}, bytes: quota{max: maxBytes},
		timeout: timeout, now: now}
}

// add registers c, opened by c.owner, and gives it an id.
func (cs *cursorSet) add(c *cursor) error {
	held := c.src.held()
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if !cs.count.fits(c.owner, 1) {
		return newErr(2, "BadValue", "too many open cursors: %s hold %d, all users %d, of the server's %d (at most %d for %s): close cursors or read them to the end",
			c.owner, cs.count.used[c.owner], cs.count.total(), cs.count.max, cs.count.share(c.owner), c.owner)
	}
	if err := cs.fitBytes(c, held); err != nil {
		return err
	}
	for {
		var b [8]byte
		rand.Read(b[:])
		id := int64(binary.LittleEndian.Uint64(b[:]) &^ (1 << 63))
		if id != 0 && cs.m[id] == nil {
			c.id = id
			break
		}
	}
	c.lastUsed = cs.now()
	c.charged = held
	cs.count.add(c.owner, 1)
	cs.bytes.add(c.owner, held)
	cs.m[c.id] = c
	return nil
}

// fitBytes checks that c, opened by c.owner, may keep n more bytes.
func (cs *cursorSet) fitBytes(c *cursor, n int64) error {
	if n <= 0 || cs.bytes.fits(c.owner, n) {
		return nil
	}
	return newErr(146, "ExceededMemoryLimit", "the cursor would keep %d more bytes of results in memory: the open cursors of %s keep %d, of all users %d, of the server's %d (at most %d for %s); close cursors, read them to the end, or ask for fewer documents",
		n, c.owner, cs.bytes.used[c.owner], cs.bytes.total(), cs.bytes.max, cs.bytes.share(c.owner), c.owner)
}

// get returns cursor id for a getMore by who.
func (cs *cursorSet) get(id int64, who principal) (*cursor, error) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	c := cs.m[id]
	if c == nil {
		return nil, newErr(43, "CursorNotFound", "cursor id %d not found", id)
	}
	if c.owner != who {
		return nil, newErr(13, "Unauthorized", "cursor id %d was not created by the authenticated user", id)
	}
	c.lastUsed = cs.now()
	return c, nil
}

// recharge charges c, still open after a getMore (its lock held), for
// what it keeps now; past its owner's quota it is closed with the error.
func (cs *cursorSet) recharge(c *cursor) error {
	held := c.src.held()
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.m[c.id] != c {
		return nil // expired meanwhile
	}
	if err := cs.fitBytes(c, held-c.charged); err != nil {
		cs.removeLocked(c)
		return err
	}
	cs.bytes.add(c.owner, held-c.charged)
	c.charged = held
	return nil
}

// remove closes cursor id if who opened it, and reports whether it did.
func (cs *cursorSet) remove(id int64, who principal) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	c := cs.m[id]
	if c == nil || c.owner != who {
		return false
	}
	cs.removeLocked(c)
	return true
}

func (cs *cursorSet) removeLocked(c *cursor) {
	delete(cs.m, c.id)
	cs.count.add(c.owner, -1)
	cs.bytes.add(c.owner, -c.charged)
}

// expire drops the cursors idle past the timeout.
func (cs *cursorSet) expire() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cut := cs.now().Add(-cs.timeout)
	for _, c := range cs.m {
		if c.lastUsed.Before(cut) {
			cs.removeLocked(c)
		}
	}
}

func (cs *cursorSet) len() int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return len(cs.m)
}
