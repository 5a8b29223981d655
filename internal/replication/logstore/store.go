package logstore

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/cockroachdb/pebble/v2/vfs"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// Options configure a Store. Zero fields take the defaults.
type Options struct {
	// FS and Dir hold the segment files. FS defaults to vfs.Default.
	FS  vfs.FS
	Dir string
	// SegmentBytes is the size past which the active segment is sealed and
	// a new one begins (default 64 MiB). A round bigger than that still
	// goes into one segment.
	SegmentBytes int64
	// CacheBytes bounds the entry cache (default 64 MiB).
	CacheBytes int64
	// MaxRecordBytes bounds one record, and so one entry (default 16 MiB).
	// Recovery treats a longer length as corruption.
	MaxRecordBytes int
	// KeepSegments is how many sealed segments may hold live entries
	// before Purge rewrites the live entries of the older ones (default 4).
	KeepSegments int
	// RewriteBytes bounds the live log of one group that Purge rewrites to
	// free an old segment (default 4 MiB); a longer log keeps its segments.
	RewriteBytes int64
}

func (o *Options) fill() {
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.SegmentBytes <= 0 {
		o.SegmentBytes = 64 << 20
	}
	if o.CacheBytes <= 0 {
		o.CacheBytes = 64 << 20
	}
	if o.MaxRecordBytes <= 0 {
		o.MaxRecordBytes = 16 << 20
	}
	o.MaxRecordBytes = min(o.MaxRecordBytes, 1<<30)
	if o.KeepSegments <= 0 {
		o.KeepSegments = 4
	}
	if o.RewriteBytes <= 0 {
		o.RewriteBytes = 4 << 20
	}
}

// loc is where one entry's marshaled bytes lie.
type loc struct {
	seg  uint64
	off  int64
	n    int
	term uint64
}

// glog is one group's log: entries trunc+1 .. trunc+len(locs).
type glog struct {
	trunc uint64
	locs  []loc
	// cache holds the last len(cache) entries of the log.
	cache      []*raftpb.Entry
	cacheBytes int64
	// hard is the last hard state recorded (marshaled), nil if none.
	hard []byte
	// prev is the log (and hard state) as it was before the last reset
	// record replayed at recovery, for UndoReset; resetSeq is that
	// record's commit sequence.
	prev     *glog
	resetSeq uint64
}

func (g *glog) last() uint64 { return g.trunc + uint64(len(g.locs)) }

type segment struct {
	num  uint64
	f    vfs.File
	size int64
	live int // entries of live logs stored here
	pin  int // entries of logs kept for UndoReset
	// synced is the size the file had at its last sync.
	synced int64
}

// Stats counts the store's work since Open.
type Stats struct {
	Commits, Syncs         uint64
	BytesWritten           uint64
	Segments               int
	SegmentsDeleted        uint64
	RewrittenEntries       uint64
	CacheHits, CacheMisses uint64
	CacheBytes             int64
}

// Store is the log store of one node: the raft logs of all its groups in
// one sequence of segment files. It is safe for concurrent use.
type Store struct {
	opts Options
	mu   sync.Mutex
	// failed is set by a write or sync error: the files and the index may
	// disagree, so every later call fails.
	failed   error
	groups   map[uint64]*glog
	segs     []*segment // ascending; the last is the active one
	seq      uint64     // last commit sequence used
	cacheTot int64
	stats    Stats
	buf      []byte
	dir      vfs.File
	lock     interface{ Close() error }
	closed   bool
	// purgedAt is how many segments there were after the last Purge.
	purgedAt int
}

func (s *Store) segName(num uint64) string {
	return s.opts.FS.PathJoin(s.opts.Dir, fmt.Sprintf("%016d.seg", num))
}

func (s *Store) active() *segment { return s.segs[len(s.segs)-1] }

func (s *Store) group(id uint64) *glog {
	g, ok := s.groups[id]
	if !ok {
		g = &glog{}
		s.groups[id] = g
	}
	return g
}

// Range returns the group's log: entries first..last, with last =
// first-1 when it is empty. A group the store has never seen has first 1
// and last 0.
func (s *Store) Range(group uint64) (first, last uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.groups[group]
	if !ok {
		return 1, 0
	}
	return g.trunc + 1, g.last()
}

// Groups lists the groups with a non-empty log, in increasing order.
func (s *Store) Groups() []uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []uint64
	for id, g := range s.groups {
		if len(g.locs) > 0 {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// Stats returns the store's counters.
func (s *Store) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Segments = len(s.segs)
	st.CacheBytes = s.cacheTot
	return st
}

// Term returns the term of entry i of the group: raft.ErrCompacted at or
// below the truncation point (whose term the caller keeps), and
// raft.ErrUnavailable past the end.
func (s *Store) Term(group, i uint64) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.groups[group]
	if !ok || i > g.last() {
		return 0, raft.ErrUnavailable
	}
	if i <= g.trunc {
		return 0, raft.ErrCompacted
	}
	return g.locs[i-g.trunc-1].term, nil
}

// Entries returns the group's entries in [lo, hi): at least one if lo < hi,
// and no more than maxSize bytes of them beyond the first (raft.Storage's
// rule). Recent entries come from the cache; the rest are read from the
// segments.
func (s *Store) Entries(group, lo, hi, maxSize uint64) ([]*raftpb.Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed != nil {
		return nil, s.failed
	}
	g, ok := s.groups[group]
	if !ok {
		g = &glog{}
	}
	if lo <= g.trunc {
		return nil, raft.ErrCompacted
	}
	if hi > g.last()+1 {
		return nil, fmt.Errorf("logstore: group %d: entries up to %d requested beyond the last index %d: %w", group, hi, g.last(), raft.ErrUnavailable)
	}
	if lo >= hi {
		return []*raftpb.Entry{}, nil
	}
	cacheFrom := g.last() + 1 - uint64(len(g.cache))
	ents := make([]*raftpb.Entry, 0, min(hi-lo, 64))
	var size uint64
	var scratch []byte
	for i := lo; i < hi; i++ {
		l := g.locs[i-g.trunc-1]
		size += uint64(l.n)
		if len(ents) > 0 && size > maxSize {
			break
		}
		if i >= cacheFrom {
			s.stats.CacheHits++
			ents = append(ents, cloneEntry(g.cache[i-cacheFrom]))
			continue
		}
		s.stats.CacheMisses++
		e, err := s.readEntry(l, &scratch)
		if err != nil {
			return nil, fmt.Errorf("logstore: group %d entry %d: %w", group, i, err)
		}
		if e.GetIndex() != i || e.GetTerm() != l.term {
			return nil, fmt.Errorf("logstore: group %d: entry %d read back as %d/%d", group, i, e.GetIndex(), e.GetTerm())
		}
		ents = append(ents, e)
	}
	return ents, nil
}

// cloneEntry copies a cached entry for a reader: readers (a state machine
// applying it, a transport encoding it) may hold on to its data or lend
// it out, and the cache must not change under the next reader.
func cloneEntry(e *raftpb.Entry) *raftpb.Entry {
	c := &raftpb.Entry{Term: proto.Uint64(e.GetTerm()), Index: proto.Uint64(e.GetIndex()), Data: slices.Clone(e.GetData())}
	if e.Type != nil {
		c.Type = e.GetType().Enum()
	}
	return c
}

func (s *Store) segment(num uint64) *segment {
	i := sort.Search(len(s.segs), func(i int) bool { return s.segs[i].num >= num })
	if i < len(s.segs) && s.segs[i].num == num {
		return s.segs[i]
	}
	return nil
}

func (s *Store) readRaw(l loc, scratch *[]byte) ([]byte, error) {
	sg := s.segment(l.seg)
	if sg == nil {
		return nil, fmt.Errorf("segment %d is gone", l.seg)
	}
	if cap(*scratch) < l.n {
		*scratch = make([]byte, l.n)
	}
	b := (*scratch)[:l.n]
	if _, err := sg.f.ReadAt(b, l.off); err != nil {
		return nil, fmt.Errorf("reading segment %d at %d: %w", l.seg, l.off, err)
	}
	return b, nil
}

func (s *Store) readEntry(l loc, scratch *[]byte) (*raftpb.Entry, error) {
	b, err := s.readRaw(l, scratch)
	if err != nil {
		return nil, err
	}
	e := &raftpb.Entry{}
	if err := proto.Unmarshal(b, e); err != nil {
		return nil, fmt.Errorf("bad entry: %w", err)
	}
	return e, nil
}

// Batch gathers one round's log writes for any number of groups. They are
// applied in order by Commit.
type Batch struct {
	ops []op
}

type op struct {
	kind  byte // kindAppend, kindReset, or opTruncate
	group uint64
	index uint64
	ents  []*raftpb.Entry
}

const opTruncate = 100

// NewBatch returns an empty batch.
func (s *Store) NewBatch() *Batch { return &Batch{} }

// Empty reports whether the batch holds nothing.
func (b *Batch) Empty() bool { return len(b.ops) == 0 }

// Append adds entries to the group's log with raft's semantics: entries at
// or below the truncation point are skipped, and an existing entry at or
// after the first new index is replaced along with everything after it.
// The entries must be consecutive and start no later than last+1. The
// store keeps the entries in its cache: they must not be modified after
// (Entries hands out copies).
func (b *Batch) Append(group uint64, ents []*raftpb.Entry) {
	if len(ents) > 0 {
		b.ops = append(b.ops, op{kind: kindAppend, group: group, index: ents[0].GetIndex(), ents: ents})
	}
}

// Reset empties the group's log, which restarts after index (a snapshot
// applied at index; index 0 for a destroyed group). It is logged, so that
// entries appended afterwards never mix with the old log on recovery.
func (b *Batch) Reset(group, index uint64) {
	b.ops = append(b.ops, op{kind: kindReset, group: group, index: index})
}

// SetHardState records the group's hard state (marshaled raftpb.HardState),
// durable with the batch's entries; HardState returns the last one.
func (b *Batch) SetHardState(group uint64, hs []byte) {
	b.ops = append(b.ops, op{kind: kindHard, group: group, ents: []*raftpb.Entry{{Data: slices.Clone(hs)}}})
}

// HardState returns the group's last recorded hard state, nil if none.
func (s *Store) HardState(group uint64) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if g, ok := s.groups[group]; ok {
		return slices.Clone(g.hard)
	}
	return nil
}

// Truncate drops the group's entries up to and including upTo (all of
// them if upTo is past the end; then the log restarts after upTo). It is
// not logged: the caller's own durable record of the truncation is the
// authority, recovery brings the dropped entries back, and the caller
// truncates again (see the package documentation). A point at or below
// the current one is ignored.
func (b *Batch) Truncate(group, upTo uint64) {
	b.ops = append(b.ops, op{kind: opTruncate, group: group, index: upTo})
}

// span is a group's range while a batch is checked.
type span struct{ trunc, last uint64 }

// Commit writes the batch's records to the active segment with one write,
// syncs it if sync is set, then applies the batch to the index and the
// cache. Without sync the records are durable only once a later Commit
// with sync returns. On a validation error nothing is written; on a write
// or sync error the store fails for good.
func (s *Store) Commit(b *Batch, sync bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed != nil {
		return s.failed
	}
	// Check every op against the ranges as of the batch's earlier ops, and
	// marshal the entries.
	spans := make(map[uint64]span)
	raws := make([][]rawEntry, len(b.ops))
	logged := false
	for i := range b.ops {
		o := &b.ops[i]
		sp, ok := spans[o.group]
		if !ok {
			if g, ok := s.groups[o.group]; ok {
				sp = span{g.trunc, g.last()}
			}
		}
		switch o.kind {
		case kindAppend:
			for j, e := range o.ents {
				if e.GetIndex() != o.index+uint64(j) {
					return fmt.Errorf("logstore: group %d: entries not consecutive: %d at position %d after %d", o.group, e.GetIndex(), j, o.index)
				}
			}
			last := o.index + uint64(len(o.ents)) - 1
			if last <= sp.trunc {
				o.ents = nil
				continue
			}
			if o.index <= sp.trunc {
				o.ents = o.ents[sp.trunc+1-o.index:]
				o.index = sp.trunc + 1
			}
			if o.index > sp.last+1 {
				return fmt.Errorf("logstore: group %d: append at %d leaves a gap after the last index %d", o.group, o.index, sp.last)
			}
			raw := make([]rawEntry, len(o.ents))
			for j, e := range o.ents {
				d, err := proto.Marshal(e)
				if err != nil {
					return fmt.Errorf("logstore: group %d: marshaling entry %d: %w", o.group, e.GetIndex(), err)
				}
				if len(d)+recHeadLen+6*maxVarint > s.opts.MaxRecordBytes {
					return fmt.Errorf("logstore: group %d: entry %d of %d bytes exceeds the record limit of %d bytes", o.group, e.GetIndex(), len(d), s.opts.MaxRecordBytes)
				}
				raw[j] = rawEntry{term: e.GetTerm(), data: d}
			}
			raws[i] = raw
			sp.last = last
			logged = true
		case kindReset:
			sp = span{o.index, o.index}
			logged = true
		case kindHard:
			raws[i] = []rawEntry{{data: o.ents[0].GetData()}}
			logged = true
		case opTruncate:
			if o.index > sp.trunc {
				sp.trunc = o.index
				sp.last = max(sp.last, o.index)
			}
		}
		spans[o.group] = sp
	}
	var locs [][]loc
	if !logged && sync {
		// Nothing to write, but earlier unsynced records must be durable
		// when this returns.
		if err := s.syncActive(); err != nil {
			return err
		}
	}
	if logged {
		seq := s.seq + 1
		buf := s.buf[:0]
		locs = make([][]loc, len(b.ops))
		type pending struct{ op, at int }
		var offsets []pending // entry data offsets within buf
		var offs []int
		for i, o := range b.ops {
			switch {
			case o.kind == kindAppend && len(raws[i]) > 0:
				buf, offs = s.encodeChunks(buf, offs[:0], kindAppend, seq, o.group, o.index, raws[i])
			case o.kind == kindReset:
				buf, offs = appendRecord(buf, kindReset, seq, o.group, o.index, nil, offs[:0])
			case o.kind == kindHard:
				buf, _ = appendRecord(buf, kindHard, seq, o.group, 0, raws[i], offs[:0])
				continue
			default:
				continue
			}
			for _, at := range offs {
				offsets = append(offsets, pending{i, at})
			}
		}
		base, err := s.write(buf, sync)
		s.buf = buf[:0]
		if err != nil {
			return err
		}
		s.seq = seq
		seg := s.active().num
		for _, p := range offsets {
			j := len(locs[p.op])
			locs[p.op] = append(locs[p.op], loc{seg: seg, off: base + int64(p.at), n: len(raws[p.op][j].data), term: raws[p.op][j].term})
		}
	}
	for i, o := range b.ops {
		g := s.group(o.group)
		s.clearPrev(g)
		switch o.kind {
		case kindAppend:
			if len(o.ents) > 0 {
				s.appendLocs(g, o.index, locs[i], o.ents)
			}
		case kindReset:
			s.truncateTo(g, g.last())
			g.trunc, g.locs = o.index, nil
		case kindHard:
			g.hard = raws[i][0].data
		case opTruncate:
			s.truncateTo(g, o.index)
		}
	}
	s.evict()
	return nil
}

// encodeChunks encodes entries starting at index as one or more records of
// at most MaxRecordBytes; the first is of kind kind, the rest appends.
func (s *Store) encodeChunks(buf []byte, offs []int, kind byte, seq, group, index uint64, raw []rawEntry) ([]byte, []int) {
	limit := s.opts.MaxRecordBytes - recHeadLen - 5*maxVarint
	for first := true; first || len(raw) > 0; first = false {
		n, size := 0, 0
		for n < len(raw) && (n == 0 || size+len(raw[n].data)+entryOverhd <= limit) {
			size += len(raw[n].data) + entryOverhd
			n++
		}
		k := byte(kindAppend)
		if first {
			k = kind
		}
		idx := index
		if k != kindAppend {
			idx = index - 1
		}
		buf, offs = appendRecord(buf, k, seq, group, idx, raw[:n], offs)
		index += uint64(n)
		raw = raw[n:]
	}
	return buf, offs
}

// write puts buf at the end of the active segment, first sealing it if buf
// would take it past the segment size, and syncs if asked. It returns the
// offset buf was written at.
func (s *Store) write(buf []byte, sync bool) (int64, error) {
	a := s.active()
	if a.size > headerLen && a.size+int64(len(buf)) > s.opts.SegmentBytes {
		if err := s.rotate(); err != nil {
			return 0, s.fail(err)
		}
		a = s.active()
	}
	base := a.size
	if _, err := a.f.Write(buf); err != nil {
		return 0, s.fail(fmt.Errorf("logstore: writing segment %d: %w", a.num, err))
	}
	a.size += int64(len(buf))
	s.stats.Commits++
	s.stats.BytesWritten += uint64(len(buf))
	if sync {
		if err := s.syncActive(); err != nil {
			return 0, err
		}
	}
	return base, nil
}

// syncActive syncs the active segment if it has unsynced records.
func (s *Store) syncActive() error {
	a := s.active()
	if a.synced == a.size {
		return nil
	}
	if err := a.f.SyncData(); err != nil {
		return s.fail(fmt.Errorf("logstore: syncing segment %d: %w", a.num, err))
	}
	a.synced = a.size
	s.stats.Syncs++
	return nil
}

func (s *Store) fail(err error) error {
	s.failed = fmt.Errorf("logstore: failed, reopen to recover: %w", err)
	return err
}

// rotate seals the active segment (syncing it, so that only the last
// segment can ever have a torn tail) and starts the next.
func (s *Store) rotate() error {
	a := s.active()
	if err := a.f.Sync(); err != nil {
		return fmt.Errorf("logstore: syncing segment %d: %w", a.num, err)
	}
	return s.newSegment(a.num + 1)
}

func (s *Store) newSegment(num uint64) error {
	f, err := s.opts.FS.Create(s.segName(num), vfs.WriteCategoryUnspecified)
	if err != nil {
		return fmt.Errorf("logstore: creating segment %d: %w", num, err)
	}
	if err := f.Preallocate(0, s.opts.SegmentBytes); err != nil {
		_ = f.Close()
		return fmt.Errorf("logstore: preallocating segment %d: %w", num, err)
	}
	if _, err := f.Write(segHeader(num)); err != nil {
		_ = f.Close()
		return fmt.Errorf("logstore: writing segment %d: %w", num, err)
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return fmt.Errorf("logstore: syncing segment %d: %w", num, err)
	}
	if err := s.dir.Sync(); err != nil {
		_ = f.Close()
		return fmt.Errorf("logstore: syncing %s: %w", s.opts.Dir, err)
	}
	s.segs = append(s.segs, &segment{num: num, f: f, size: headerLen, synced: headerLen})
	return nil
}

// appendLocs puts entries at index.. into g, replacing any suffix there.
func (s *Store) appendLocs(g *glog, index uint64, locs []loc, ents []*raftpb.Entry) {
	s.dropSuffix(g, index)
	g.locs = append(g.locs, locs...)
	for _, l := range locs {
		s.segment(l.seg).live++
	}
	// The cache stays a suffix of the log: after dropSuffix it ends at
	// index-1, so the new entries extend it; locations without entries
	// (recovery, rewrites) end it.
	if ents == nil {
		s.dropCache(g, len(g.cache))
		return
	}
	for _, e := range ents {
		g.cache = append(g.cache, e)
		n := int64(proto.Size(e)) + 64
		g.cacheBytes += n
		s.cacheTot += n
	}
}

// dropSuffix removes g's entries from index on.
func (s *Store) dropSuffix(g *glog, index uint64) {
	if index > g.last() {
		return
	}
	keep := index - g.trunc - 1
	for _, l := range g.locs[keep:] {
		s.segment(l.seg).live--
	}
	n := g.last() - index + 1
	g.locs = g.locs[:keep]
	// The cache holds the last entries: drop as many from its end.
	c := min(int(n), len(g.cache))
	for _, e := range g.cache[len(g.cache)-c:] {
		sz := int64(proto.Size(e)) + 64
		g.cacheBytes -= sz
		s.cacheTot -= sz
	}
	clear(g.cache[len(g.cache)-c:])
	g.cache = g.cache[:len(g.cache)-c]
}

// truncateTo drops g's entries up to upTo.
func (s *Store) truncateTo(g *glog, upTo uint64) {
	if upTo <= g.trunc {
		return
	}
	n := min(upTo-g.trunc, uint64(len(g.locs)))
	for _, l := range g.locs[:n] {
		s.segment(l.seg).live--
	}
	g.locs = g.locs[n:]
	if cap(g.locs) > 64 && cap(g.locs) > 4*len(g.locs) {
		g.locs = slices.Clone(g.locs)
	}
	g.trunc = upTo
	if c := len(g.cache) - len(g.locs); c > 0 {
		s.dropCache(g, c)
	}
}

// dropCache drops the first n entries of g's cache.
func (s *Store) dropCache(g *glog, n int) {
	for _, e := range g.cache[:n] {
		sz := int64(proto.Size(e)) + 64
		g.cacheBytes -= sz
		s.cacheTot -= sz
	}
	clear(g.cache[:n])
	g.cache = g.cache[n:]
	if len(g.cache) == 0 {
		g.cache = nil
	}
}

// evict trims the caches, oldest entries first within each group, until
// the total is within the budget.
func (s *Store) evict() {
	if s.cacheTot <= s.opts.CacheBytes {
		return
	}
	for _, g := range s.groups {
		if len(g.cache) > 0 {
			s.dropCache(g, (len(g.cache)+1)/2)
		}
		if s.cacheTot <= s.opts.CacheBytes*3/4 {
			return
		}
	}
	for _, g := range s.groups {
		s.dropCache(g, len(g.cache))
	}
}

// Close closes the files. The store must not be used after.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	var errs []error
	for _, sg := range s.segs {
		if sg.f != nil {
			errs = append(errs, sg.f.Close())
		}
	}
	s.segs = nil
	if s.dir != nil {
		errs = append(errs, s.dir.Close())
	}
	if s.lock != nil {
		errs = append(errs, s.lock.Close())
	}
	if s.failed == nil {
		s.failed = errors.New("logstore: closed")
	}
	return errors.Join(errs...)
}
