package mongo

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sort"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/epk"
	"github.com/parsecdb/parsec/internal/gateway"
	"github.com/parsecdb/parsec/internal/mongo/mql"
)

// coll is a collection: an engine container and its shard key.
type coll struct {
	eng *engine.Engine
	gw  *gateway.Gateway // runs the writes where the partition's leader is
	// onWrite, when set, is told the session of each write (the client's
	// causal session's token: consistency.go).
	onWrite  func(rid string, s engine.Session)
	db, name string
	c        *engine.Container
	// shard is the shard key's dotted path; empty for an unsharded
	// collection (a container without a partition key).
	shard string
	// ownMember: the shard key value is stored in the shardMember member
	// (collections sharded through this API); otherwise the partition key
	// path is the shard key's field.
	ownMember bool
	// tx, when set, is the transaction the collection is used in: its
	// scans see the transaction's writes, and its writes are buffered
	// in it (txn.go).
	tx *transaction
	// limit is the maxTimeMS of the command that reads it: each page a
	// scan reads checks it.
	limit *timeLimit
}

func (c *coll) ns() string { return c.db + "." + c.name }

// openColl returns the collection, or a NamespaceNotFound error.
func (s *Server) openColl(db, name string) (*coll, error) {
	c, err := s.eng.Container(db, name)
	if err != nil {
		if errors.Is(err, engine.ErrNotFound) {
			return nil, newErr(26, "NamespaceNotFound", "ns not found: %s.%s", db, name)
		}
		return nil, toCmdError(err)
	}
	return collOf(s, db, name, c), nil
}

func collOf(s *Server, db, name string, c *engine.Container) *coll {
	col := &coll{eng: s.eng, gw: s.gw, db: db, name: name, c: c}
	if info := c.Info(); !info.Fixed && len(info.PartitionKey.Paths) > 0 {
		col.shard = pathToField(info.PartitionKey.Paths[0])
		var field string
		if info.PartitionKey.Paths[0] == shardKeyPath && json.Unmarshal(info.Extra[shardKeyProperty], &field) == nil && field != "" {
			col.shard, col.ownMember = field, true
		}
	}
	return col
}

// execute runs a command through the gateway: on the partition's leader,
// whichever node that is.
func (c *coll) execute(cmd *engine.Command) ([]engine.OpResult, engine.Session, error) {
	res, s, err := c.gw.Write(context.Background(), c.c, cmd, "")
	if err == nil && c.onWrite != nil {
		c.onWrite(c.c.Info().Rid, s)
	}
	return res, s, err
}

// pathToField turns a partition key path (/a/b) into a dotted field path.
func pathToField(p string) string {
	parts := epk.SplitPath(p)
	return strings.Join(parts, ".")
}

// isNotFound reports a missing collection.
func isNotFound(err error) bool {
	var ce *cmdError
	return errors.As(err, &ce) && ce.Code == 26
}

// ensureColl returns the collection, creating its database and an
// unsharded container when missing (MongoDB creates collections on first
// write).
func (s *Server) ensureColl(db, name string) (*coll, error) {
	col, err := s.openColl(db, name)
	if err == nil || !isNotFound(err) {
		return col, err
	}
	if err := s.createColl(db, name, "", engine.Throughput{}); err != nil {
		var ce *cmdError
		if !errors.As(err, &ce) || ce.Code != 48 {
			return nil, err
		}
	}
	return s.openColl(db, name)
}

// createColl creates a collection: sharded on shard (a dotted field) when
// given. An existing collection is code 48.
func (s *Server) createColl(db, name, shard string, t engine.Throughput) error {
	if err := checkNames(db, name); err != nil {
		return err
	}
	if _, err := s.eng.Database(db); err != nil {
		if _, err := s.eng.CreateDatabase(db, engine.Throughput{}); err != nil && !errors.Is(err, engine.ErrConflict) {
			return toCmdError(err)
		}
	}
	spec := engine.ContainerSpec{ID: name}
	if shard != "" {
		field, _ := json.Marshal(shard)
		spec.PartitionKey = epk.Definition{Kind: epk.Hash, Version: 2, Paths: []string{shardKeyPath}}
		spec.Extra = map[string]json.RawMessage{shardKeyProperty: field}
	}
	if _, err := s.eng.CreateContainer(db, spec, t); err != nil {
		if errors.Is(err, engine.ErrConflict) {
			return newErr(48, "NamespaceExists", "Collection %s.%s already exists.", db, name)
		}
		return toCmdError(err)
	}
	return nil
}

func checkNames(db, name string) error {
	if db == "" || strings.ContainsAny(db, "/\\. \"$#?") {
		return newErr(73, "InvalidNamespace", "invalid database name %q", db)
	}
	if name == "" || strings.ContainsAny(name, "/\\#?$") {
		return newErr(73, "InvalidNamespace", "invalid collection name %q (Parsec collection names cannot hold '/', '\\', '#', '?' or '$')", name)
	}
	return nil
}

// lookupField returns the value at a dotted path through nested documents
// (not arrays) and whether it is present.
func lookupField(d bson.D, path string) (any, bool) {
	for {
		head, rest, more := strings.Cut(path, ".")
		var v any
		found := false
		for _, e := range d {
			if e.Key == head {
				v, found = e.Value, true
				break
			}
		}
		if !found {
			return nil, false
		}
		if !more {
			return v, true
		}
		sub, ok := v.(bson.D)
		if !ok {
			return nil, false
		}
		d, path = sub, rest
	}
}

// keyOf returns the partition key of a document.
func (c *coll) keyOf(d bson.D) (epk.Key, error) {
	if c.shard == "" {
		return nil, nil
	}
	v, ok := lookupField(d, c.shard)
	if ok {
		if _, isArr := v.(bson.A); isArr {
			return nil, newErr(2, "BadValue", "the shard key %q cannot be an array", c.shard)
		}
	}
	comp, err := c.component(v, ok)
	if err != nil {
		return nil, err
	}
	return epk.Key{comp}, nil
}

// component is the partition key component of a shard key value.
func (c *coll) component(v any, present bool) (epk.Component, error) {
	if c.ownMember {
		return shardComponent(v, present)
	}
	return keyComponent(v, present)
}

// encode returns the stored item of d (its BSON raw) with the item id id,
// and its partition key.
func (c *coll) encode(d bson.D, raw bson.Raw, id string) ([]byte, epk.Key, error) {
	key, err := c.keyOf(d)
	if err != nil {
		return nil, nil, err
	}
	var sk []byte
	if c.ownMember && key[0].Kind != epk.KindUndefined {
		sk = key[0].AppendJSON(nil)
	}
	body, err := encodeItem(raw, id, sk)
	return body, key, err
}

// stored is a document read from the engine.
type stored struct {
	doc  bson.D
	etag string
	size int    // the stored item's size, while a scanner buffers it
	rid  string // the item's _rid, while a scanner buffers it
}

// scanScope is where a filter's matches can be: one item, some logical
// partitions, or every partition.
type scanScope struct {
	// keys, when keyed, are the logical partitions that hold every match
	// (one empty key for an unsharded collection).
	keys   []epk.Key
	keyed  bool
	id     string
	hasID  bool
	filter *mql.Filter
	// index, when set, is how a read of every partition uses the index
	// (indexuse.go).
	index *indexUse
}

// maxInKeys is the most shard key values of an $in that are read as
// separate logical partitions; more read every partition.
const maxInKeys = 100

func (c *coll) scope(f *mql.Filter, raw bson.D) scanScope {
	sc := scanScope{filter: f}
	if f == nil {
		return sc
	}
	if c.shard == "" {
		sc.keys, sc.keyed = []epk.Key{nil}, true
	} else if v, ok := f.Equality(c.shard); ok && v != nil {
		// {key: null} also matches documents without the key, which live
		// under the undefined key: that one reads everything.
		if comp, err := c.component(v, true); err == nil {
			sc.keys, sc.keyed = []epk.Key{{comp}}, true
		}
	} else if keys, ok := c.inKeys(raw); ok {
		sc.keys, sc.keyed = keys, true
	}
	if sc.keyed && len(sc.keys) == 1 {
		if v, ok := f.Equality("_id"); ok {
			if id, err := idString(v); err == nil {
				sc.id, sc.hasID = id, true
			}
		}
	}
	// A read of every partition (an unsharded collection's one included)
	// may go through the index; a point read needs none.
	if !sc.hasID && (!sc.keyed || c.shard == "") && raw != nil {
		sc.index = indexPlan(raw)
	}
	return sc
}

// inKeys reads a top-level {shardKey: {$in: [...]}} of a filter: the
// logical partitions its values name, when every value is one the engine
// keys by (not null, which also matches a missing key, nor a regex or an
// array, which match otherwise than by equality).
func (c *coll) inKeys(raw bson.D) ([]epk.Key, bool) {
	for _, e := range raw {
		if e.Key != c.shard {
			continue
		}
		op, ok := e.Value.(bson.D)
		if !ok || len(op) != 1 || op[0].Key != "$in" {
			return nil, false
		}
		vals, ok := op[0].Value.(bson.A)
		if !ok || len(vals) == 0 || len(vals) > maxInKeys {
			return nil, false
		}
		var keys []epk.Key
		seen := map[string]bool{}
		for _, v := range vals {
			if v == nil {
				return nil, false
			}
			comp, err := c.component(v, true)
			if err != nil {
				return nil, false
			}
			k := epk.Key{comp}
			if s := k.String(); !seen[s] {
				seen[s] = true
				keys = append(keys, k)
			}
		}
		return keys, true
	}
	return nil, false
}

// pageSize is how many items one engine page reads.
const pageSize = 100

// scanner streams the documents a filter matches.
type scanner struct {
	c     *coll
	sc    scanScope
	after []byte
	buf   []stored
	// bufBytes is the stored size of the documents in buf.
	bufBytes int64
	done     bool
	// ranges are the partitions a full scan still has to read, in EPK
	// order, each with where to resume in it (nil: at its start); nil
	// until the scan starts.
	ranges []rangePos
	begun  bool
	// guards includes unique-index guard items (unique.go), which scans
	// otherwise skip.
	guards bool
	// ov is the transaction's writes, laid over what is read; keys0 the
	// logical partitions the scan started with.
	ov    *overlay
	keys0 []epk.Key
	stats scanStats
	// page is where the page buf holds was read from, taken the _rids of
	// its documents next returned, and skip the _rids a page read again
	// leaves out (refresh).
	page  scanPos
	taken map[string]bool
	skip  map[string]bool
}

// scanPos is a scanner's position between pages.
type scanPos struct {
	keys   []epk.Key
	after  []byte
	ranges []rangePos
	begun  bool
	done   bool
}

func (s *scanner) pos() scanPos {
	return scanPos{keys: s.sc.keys, after: s.after, ranges: slices.Clone(s.ranges), begun: s.begun, done: s.done}
}

// refresh reads the page the scanner holds part of again, leaving out
// the documents it already returned, so that a later batch of a cursor
// has what is stored when it is read: a document deleted (or changed so
// that it no longer matches) since the page was read is not returned, and
// one changed is returned as it is now. Inside a transaction the page is
// kept as read.
func (s *scanner) refresh() error {
	if len(s.buf) == 0 || s.ov != nil {
		return nil
	}
	p := s.page
	s.sc.keys, s.after, s.ranges, s.begun, s.done = p.keys, p.after, slices.Clone(p.ranges), p.begun, p.done
	s.buf, s.bufBytes = nil, 0
	s.skip = s.taken
	return s.read()
}

// scanStats count what a scan read, for explain.
type scanStats struct {
	docsExamined, keysExamined int
}

// rangePos is a partition a scan reads, where it resumes, and whether it
// is read in full (scan) or through the index (see indexuse.go); a range's
// children inherit both.
type rangePos struct {
	id, min, max string
	after        []byte
	scan         bool
}

// rangesIn returns the current partitions overlapping [lo, hi), in EPK
// order (hi "FF" or "" is the end).
func rangesIn(c *engine.Container, lo, hi string) []rangePos {
	var out []rangePos
	for _, p := range c.Partitions() {
		r := p.Range()
		if (hi == "" || hi == "FF" || r.Min < hi) && (r.Max == "FF" || r.Max > lo) {
			out = append(out, rangePos{id: r.ID, min: r.Min, max: r.Max})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].min < out[j].min })
	return out
}

func (c *coll) scan(f *mql.Filter) *scanner {
	return c.scanRaw(f, nil)
}

// scanRaw is scan with the filter's document too, which routes an $in
// on the shard key.
func (c *coll) scanRaw(f *mql.Filter, raw bson.D) *scanner {
	s := &scanner{c: c, sc: c.scope(f, raw)}
	if c.tx != nil {
		s.ov = c.tx.overlayFor(c)
		s.keys0 = s.sc.keys
	}
	return s
}

// nextStored returns the next matching document.
func (s *scanner) nextStored() (stored, bool, error) {
	for {
		if len(s.buf) > 0 {
			d := s.buf[0]
			s.buf[0] = stored{}
			s.buf = s.buf[1:]
			s.bufBytes -= int64(d.size)
			if d.rid != "" {
				if s.taken == nil {
					s.taken = map[string]bool{}
				}
				s.taken[d.rid] = true
			}
			d.size, d.rid = 0, ""
			return d, true, nil
		}
		if s.done {
			if s.ov != nil && !s.ov.flushed {
				for _, d := range s.ov.rest(s.sc, s.keys0) {
					if s.sc.filter == nil || s.sc.filter.Match(d) {
						s.buf = append(s.buf, stored{doc: d})
					}
				}
				continue
			}
			return stored{}, false, nil
		}
		if err := s.fill(); err != nil {
			return stored{}, false, err
		}
	}
}

// held is what the scanner keeps of the page it read last.
func (s *scanner) held() int64 { return s.bufBytes }

func (s *scanner) next() (bson.D, bool, error) {
	d, ok, err := s.nextStored()
	return d.doc, ok, err
}

// count reads the scan to its end and returns how many documents match.
func (s *scanner) count() (int64, error) {
	var n int64
	for {
		_, ok, err := s.nextStored()
		if err != nil || !ok {
			return n, err
		}
		n++
	}
}

// fill reads the next page into buf.
func (s *scanner) fill() error {
	// A page read after a refresh that found its partition split still
	// leaves out what the refreshed page returned.
	s.page, s.taken = s.pos(), s.skip
	return s.read()
}

// read reads a page at the scanner's position.
func (s *scanner) read() error {
	if err := s.c.limit.check(); err != nil {
		return err
	}
	c := s.c.c
	if s.begun || s.after != nil {
		// A cursor's later pages: the collection must still be the one
		// it started on.
		if cur, err := s.c.eng.Container(s.c.db, s.c.name); err != nil || cur != c {
			return newErr(175, "QueryPlanKilled", "collection %s was dropped while a cursor read it", s.c.ns())
		}
	}
	if s.sc.hasID {
		s.done = true
		op, err := c.PrepareKeyed(engine.OpRead, s.sc.id, s.sc.keys[0], s.c.shard != "")
		if err != nil {
			return toCmdError(err)
		}
		r, _, err := c.ReadItem(op)
		if err != nil {
			if errors.Is(err, engine.ErrNotFound) {
				return nil
			}
			return toCmdError(err)
		}
		return s.add(r.Doc)
	}
	var f engine.Feed
	var err error
	if s.sc.keyed && s.c.shard != "" {
		f, err = c.ReadKeyFeed(s.sc.keys[0], s.after, pageSize)
		if err != nil {
			return toCmdError(err)
		}
		s.after = f.Next
		if f.Next == nil {
			// This logical partition is read: on to the next key.
			s.sc.keys = s.sc.keys[1:]
			s.done = len(s.sc.keys) == 0
		}
	} else {
		// A full scan reads each partition in turn, so that each is
		// charged for what it serves.
		if !s.begun {
			s.begun = true
			s.ranges = rangesIn(c, "", "FF")
		}
		if len(s.ranges) == 0 {
			s.done = true
			return nil
		}
		r := &s.ranges[0]
		if s.sc.index != nil && !r.scan {
			var fi engine.IndexedFeed
			fi, err = c.ReadIndexed(r.id, s.sc.index.terms, r.after, pageSize)
			f, s.stats.keysExamined = fi.Feed, s.stats.keysExamined+fi.Entries
			if errors.Is(err, engine.ErrIndexUnusable) {
				if r.after != nil {
					return newErr(175, "QueryPlanKilled", "the index of collection %s changed while a cursor read it through the index (%v); run the query again", s.c.ns(), err)
				}
				r.scan = true
			}
		}
		if s.sc.index == nil || r.scan {
			f, err = c.ReadFeed(r.id, r.after, pageSize)
		}
		if errors.Is(err, engine.ErrPartitionGone) {
			// The partition split meanwhile: read its children from the
			// same position instead.
			kids := rangesIn(c, r.min, r.max)
			for i := range kids {
				kids[i].after, kids[i].scan = r.after, r.scan
			}
			s.ranges = append(kids, s.ranges[1:]...)
			return nil
		}
		if err != nil {
			return toCmdError(err)
		}
		r.after = f.Next
		if f.Next == nil {
			s.ranges = s.ranges[1:]
		}
	}
	s.stats.docsExamined += len(f.Docs)
	for _, raw := range f.Docs {
		if err := s.add(raw); err != nil {
			return err
		}
	}
	s.skip = nil
	return nil
}

func (s *scanner) add(raw []byte) error {
	d, etag, rid, err := decodeStored(raw)
	if err != nil {
		return toCmdError(err)
	}
	if s.skip[rid] {
		return nil
	}
	if !s.guards && isGuard(d) {
		return nil
	}
	if s.ov != nil {
		var mine bool
		if d, mine = s.ov.apply(s.c, d); d == nil {
			return nil // deleted by the transaction
		}
		if mine {
			etag = ""
		}
	}
	if etag != "" && s.c.tx != nil {
		s.c.tx.noteRead(s.c, d, etag)
	}
	if s.sc.filter == nil || s.sc.filter.Match(d) {
		s.buf = append(s.buf, stored{doc: d, etag: etag, size: len(raw), rid: rid})
		s.bufBytes += int64(len(raw))
	}
	return nil
}

// write runs one item operation and returns its result's error.
func (c *coll) exec(op engine.Op) (engine.OpResult, error) {
	res, _, err := c.execute(&engine.Command{Ops: []engine.Op{op}})
	if err != nil {
		return engine.OpResult{}, err
	}
	return res[0], res[0].Err
}

// prepare encodes a document for a create or replace.
func (c *coll) prepare(kind engine.OpKind, d bson.D) (engine.Op, error) {
	raw, err := bson.Marshal(d)
	if err != nil {
		return engine.Op{}, badValue("cannot encode the document: %v", err)
	}
	if len(raw) > MaxDocumentBytes {
		return engine.Op{}, newErr(10334, "BSONObjectTooLarge", "the document is %d bytes; the limit is %d bytes", len(raw), MaxDocumentBytes)
	}
	idv, ok := lookupField(d, "_id")
	if !ok {
		return engine.Op{}, badValue("the document has no _id")
	}
	id, err := idString(idv)
	if err != nil {
		return engine.Op{}, err
	}
	body, key, err := c.encode(d, raw, id)
	if err != nil {
		return engine.Op{}, err
	}
	if len(body) > engine.MaxItemBytes {
		return engine.Op{}, newErr(10334, "BSONObjectTooLarge", "the document is %d bytes as a stored item; the storage limit is %d bytes (Cosmos's 2 MB item limit)", len(body), engine.MaxItemBytes)
	}
	op, err := c.c.PrepareWrite(kind, body, key, c.shard != "")
	if err != nil {
		return engine.Op{}, toCmdError(err)
	}
	return op, nil
}

// keyed prepares a delete or read of a stored document.
func (c *coll) keyed(kind engine.OpKind, d bson.D) (engine.Op, error) {
	idv, _ := lookupField(d, "_id")
	id, err := idString(idv)
	if err != nil {
		return engine.Op{}, err
	}
	key, err := c.keyOf(d)
	if err != nil {
		return engine.Op{}, err
	}
	op, err := c.c.PrepareKeyed(kind, id, key, c.shard != "")
	if err != nil {
		return engine.Op{}, toCmdError(err)
	}
	return op, nil
}

// reread reads a stored document again (after a concurrent change).
func (c *coll) reread(d bson.D) (stored, bool, error) {
	op, err := c.keyed(engine.OpRead, d)
	if err != nil {
		return stored{}, false, err
	}
	r, _, err := c.c.ReadItem(op)
	if err != nil {
		if errors.Is(err, engine.ErrNotFound) {
			return stored{}, false, nil
		}
		return stored{}, false, toCmdError(err)
	}
	doc, etag, err := decodeItem(r.Doc)
	if err != nil {
		return stored{}, false, toCmdError(err)
	}
	return stored{doc: doc, etag: etag}, true, nil
}
