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
}

// sliceSource yields documents already in memory.
type sliceSource struct {
	docs []bson.D
}

func (s *sliceSource) next() (bson.D, bool, error) {
	if len(s.docs) == 0 {
		return nil, false, nil
	}
	d := s.docs[0]
	s.docs[0] = nil
	s.docs = s.docs[1:]
	return d, true, nil
}

// cursor is a server-side result being read in batches.
type cursor struct {
	id       int64
	ns       string
	src      source
	proj     *mql.Projection
	left     int64 // documents still allowed by the limit; < 0: no limit
	mu       sync.Mutex
	lastUsed time.Time
}

// maxBatchBytes keeps a batch and its reply's envelope under the 16 MiB
// document limit.
const maxBatchBytes = MaxDocumentBytes - 64<<10

// batch reads up to n documents (n <= 0: as many as fit). done is set when
// the cursor is exhausted.
func (c *cursor) batch(n int) (docs bson.A, done bool, err error) {
	docs = bson.A{}
	size := 0
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
			d = c.proj.Apply(d)
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

// cursorSet holds the open cursors of a server.
type cursorSet struct {
	mu      sync.Mutex
	m       map[int64]*cursor
	max     int
	timeout time.Duration
	now     func() time.Time
}

func newCursorSet(max int, timeout time.Duration, now func() time.Time) *cursorSet {
	return &cursorSet{m: map[int64]*cursor{}, max: max, timeout: timeout, now: now}
}

func (cs *cursorSet) add(c *cursor) error {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if len(cs.m) >= cs.max {
		return newErr(2, "BadValue", "too many open cursors (%d): close cursors or read them to the end", cs.max)
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
	cs.m[c.id] = c
	return nil
}

func (cs *cursorSet) get(id int64) *cursor {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	c := cs.m[id]
	if c != nil {
		c.lastUsed = cs.now()
	}
	return c
}

func (cs *cursorSet) remove(id int64) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	_, ok := cs.m[id]
	delete(cs.m, id)
	return ok
}

// expire drops the cursors idle past the timeout.
func (cs *cursorSet) expire() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cut := cs.now().Add(-cs.timeout)
	for id, c := range cs.m {
		if c.lastUsed.Before(cut) {
			delete(cs.m, id)
		}
	}
}

func (cs *cursorSet) len() int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return len(cs.m)
}
