package logstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Open opens (creating if needed) the log store in opts.Dir and recovers
// its index by scanning every segment in order. A torn tail of the last
// segment (a record cut short, or whose checksum fails, as a crash during
// an unsynced write leaves it) is cut off: the valid prefix is copied to a
// new file that replaces the segment. Damage anywhere else is an error:
// every segment but the last was synced before the next was created. New
// records go to a new segment.
func Open(opts Options) (*Store, error) {
	opts.fill()
	fs := opts.FS
	if err := fs.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("logstore: creating %s: %w", opts.Dir, err)
	}
	// The directory's own entry must be durable too.
	if parent, err := fs.OpenDir(fs.PathDir(opts.Dir)); err == nil {
		err = parent.Sync()
		_ = parent.Close()
		if err != nil {
			return nil, fmt.Errorf("logstore: syncing the parent of %s: %w", opts.Dir, err)
		}
	}
	lock, err := fs.Lock(fs.PathJoin(opts.Dir, "LOCK"))
	if err != nil {
		return nil, fmt.Errorf("logstore: locking %s: %w", opts.Dir, err)
	}
	s := &Store{opts: opts, groups: make(map[uint64]*glog), lock: lock}
	if s.dir, err = fs.OpenDir(opts.Dir); err != nil {
		_ = lock.Close()
		return nil, fmt.Errorf("logstore: opening %s: %w", opts.Dir, err)
	}
	if err := s.recover(); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Store) recover() error {
	fs := s.opts.FS
	names, err := fs.List(s.opts.Dir)
	if err != nil {
		return fmt.Errorf("logstore: listing %s: %w", s.opts.Dir, err)
	}
	var nums []uint64
	for _, n := range names {
		if strings.HasSuffix(n, ".tmp") {
			if err := fs.Remove(fs.PathJoin(s.opts.Dir, n)); err != nil {
				return fmt.Errorf("logstore: removing %s: %w", n, err)
			}
			continue
		}
		base, ok := strings.CutSuffix(n, ".seg")
		if !ok || len(base) != 16 {
			continue
		}
		num, err := strconv.ParseUint(base, 10, 64)
		if err != nil || num == 0 {
			continue
		}
		nums = append(nums, num)
	}
	slices.Sort(nums)
	for _, num := range nums {
		s.segs = append(s.segs, &segment{num: num})
	}
	for i := 0; i < len(s.segs); i++ {
		sg := s.segs[i]
		last := i == len(s.segs)-1
		keep, err := s.replaySegment(sg, last)
		if err != nil {
			return err
		}
		if !keep {
			s.segs = slices.Delete(s.segs, i, i+1)
			i--
		}
	}
	next := uint64(1)
	if len(s.segs) > 0 {
		next = s.segs[len(s.segs)-1].num + 1
	}
	return s.newSegment(next)
}

// replaySegment reads one segment into the index. It reports false if the
// segment was dropped (a torn header on the last segment).
func (s *Store) replaySegment(sg *segment, last bool) (bool, error) {
	fs := s.opts.FS
	name := s.segName(sg.num)
	f, err := fs.Open(name)
	if err != nil {
		return false, fmt.Errorf("logstore: opening segment %d: %w", sg.num, err)
	}
	data, err := readAll(f)
	if err != nil {
		_ = f.Close()
		return false, fmt.Errorf("logstore: reading segment %d: %w", sg.num, err)
	}
	if len(data) < headerLen || string(data[:8]) != segMagic || binary.BigEndian.Uint64(data[8:]) != sg.num {
		_ = f.Close()
		if !last {
			return false, fmt.Errorf("logstore: segment %d has a bad header", sg.num)
		}
		// A crash while the segment was being created.
		if err := fs.Remove(name); err != nil {
			return false, fmt.Errorf("logstore: removing torn segment %d: %w", sg.num, err)
		}
		return false, s.dir.Sync()
	}
	off := headerLen
	for off < len(data) {
		rec, n, err := readRecord(data[off:], s.opts.MaxRecordBytes)
		if errors.Is(err, errTorn) {
			if !last {
				_ = f.Close()
				return false, fmt.Errorf("logstore: segment %d is corrupt at offset %d", sg.num, off)
			}
			break
		}
		if err != nil {
			_ = f.Close()
			return false, fmt.Errorf("logstore: segment %d at offset %d: %w", sg.num, off, err)
		}
		if rec.seq < s.seq {
			_ = f.Close()
			return false, fmt.Errorf("logstore: segment %d at offset %d: sequence %d after %d", sg.num, off, rec.seq, s.seq)
		}
		s.seq = rec.seq
		s.replay(&rec, sg.num, int64(off+recHeadLen))
		off += n
	}
	if off < len(data) {
		// The torn tail: keep the valid prefix only.
		_ = f.Close()
		if f, err = s.cut(name, data[:off]); err != nil {
			return false, err
		}
	}
	sg.f, sg.size = f, int64(off)
	return true, nil
}

func readAll(f vfs.File) ([]byte, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	data := make([]byte, st.Size())
	n, err := f.ReadAt(data, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return data[:n], nil
}

// cut replaces the file name by data, durably, and opens it for reading.
func (s *Store) cut(name string, data []byte) (vfs.File, error) {
	fs := s.opts.FS
	tmp := name + ".tmp"
	t, err := fs.Create(tmp, vfs.WriteCategoryUnspecified)
	if err != nil {
		return nil, fmt.Errorf("logstore: cutting a torn tail: %w", err)
	}
	_, err = t.Write(data)
	if err == nil {
		err = t.Sync()
	}
	if cerr := t.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fs.Rename(tmp, name)
	}
	if err == nil {
		err = s.dir.Sync()
	}
	if err != nil {
		return nil, fmt.Errorf("logstore: cutting a torn tail: %w", err)
	}
	f, err := fs.Open(name)
	if err != nil {
		return nil, fmt.Errorf("logstore: reopening %s: %w", name, err)
	}
	return f, nil
}

// replay applies one record read at recovery; bodyOff is the file offset
// of the record's body.
func (s *Store) replay(r *record, seg uint64, bodyOff int64) {
	g := s.group(r.group)
	if g.prev != nil && g.resetSeq != r.seq {
		s.clearPrev(g)
	}
	if r.kind == kindHard {
		g.hard = slices.Clone(r.ents[0].data)
		return
	}
	locs := make([]loc, len(r.ents))
	for i, e := range r.ents {
		locs[i] = loc{seg: seg, off: bodyOff + int64(r.offs[i]), n: len(e.data), term: e.term}
	}
	index := r.index
	if r.kind == kindRewrite {
		s.clearPrev(g)
	}
	if r.kind == kindReset && g.prev == nil {
		s.setPrev(g, r.seq)
	}
	if r.kind != kindAppend {
		s.truncateTo(g, g.last())
		g.trunc, g.locs = r.index, nil
		index = r.index + 1
	}
	if len(locs) == 0 {
		return
	}
	if index <= g.trunc || index > g.last()+1 {
		// Logged entries always start past the log's truncation point
		// and at most one past its end, as it was when they were
		// written. Here they do not: the entries before index were in
		// segments deleted since, so they were dead by then, and so is
		// everything before them (see the package documentation).
		s.truncateTo(g, g.last())
		g.trunc = index - 1
	}
	s.appendLocs(g, index, locs, nil)
}

// setPrev keeps g's log as it is before a reset, pinning its segments, so
// that UndoReset can bring it back. If any of its segments is gone the
// reset cannot be undone.
func (s *Store) setPrev(g *glog, seq uint64) {
	for _, l := range g.locs {
		if s.segment(l.seg) == nil {
			return
		}
	}
	g.prev = &glog{trunc: g.trunc, locs: slices.Clone(g.locs), hard: g.hard}
	g.resetSeq = seq
	for _, l := range g.prev.locs {
		s.segment(l.seg).pin++
	}
}

func (s *Store) clearPrev(g *glog) {
	if g.prev == nil {
		return
	}
	for _, l := range g.prev.locs {
		if sg := s.segment(l.seg); sg != nil {
			sg.pin--
		}
	}
	g.prev = nil
}

// CanUndoReset reports whether the group's log was last changed, before
// recovery, by a reset that UndoReset can take back, and the index and
// log range it would restore.
func (s *Store) CanUndoReset(group uint64) (ok bool, first, last uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, found := s.groups[group]
	if !found || g.prev == nil {
		return false, 0, 0
	}
	return true, g.prev.trunc + 1, g.prev.last()
}

// UndoReset takes back the last reset of the group's log found at
// recovery, with whatever was appended with it: the log becomes what it
// was before, durably (it is rewritten into the active segment and
// synced). The caller uses it when its own durable state shows that the
// round that reset the log never committed.
func (s *Store) UndoReset(group uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed != nil {
		return s.failed
	}
	g, ok := s.groups[group]
	if !ok || g.prev == nil {
		return fmt.Errorf("logstore: group %d has no reset to undo", group)
	}
	prev := g.prev
	s.clearPrev(g)
	s.truncateTo(g, g.last())
	g.trunc, g.locs = prev.trunc, nil
	for _, l := range prev.locs {
		s.segment(l.seg).live++
	}
	g.locs = prev.locs
	g.hard = prev.hard
	return s.rewrite([]uint64{group})
}

// rewrite writes the whole live log of each group as a reset record and
// appends that follow it, syncs, and moves the groups' locations there.
func (s *Store) rewrite(groups []uint64) error {
	buf := s.buf[:0]
	var offs []int
	var scratch []byte
	type span struct{ from, to int }
	spans := make([]span, len(groups))
	var raws []rawEntry
	seq := s.seq + 1
	for i, id := range groups {
		g := s.groups[id]
		raw := make([]rawEntry, len(g.locs))
		for j, l := range g.locs {
			b, err := s.readRaw(l, &scratch)
			if err != nil {
				return fmt.Errorf("logstore: rewriting group %d: %w", id, err)
			}
			raw[j] = rawEntry{term: l.term, data: slices.Clone(b)}
		}
		spans[i].from = len(offs)
		buf, offs = s.encodeChunks(buf, offs, kindRewrite, seq, id, g.trunc+1, raw)
		spans[i].to = len(offs)
		raws = append(raws, raw...)
		if g.hard != nil {
			buf, _ = appendRecord(buf, kindHard, seq, id, 0, []rawEntry{{data: g.hard}}, nil)
		}
	}
	base, err := s.write(buf, true)
	s.buf = buf[:0]
	if err != nil {
		return err
	}
	s.seq = seq
	seg := s.active()
	for i, id := range groups {
		g := s.groups[id]
		for j := range g.locs {
			k := spans[i].from + j
			s.segment(g.locs[j].seg).live--
			g.locs[j] = loc{seg: seg.num, off: base + int64(offs[k]), n: len(raws[k].data), term: raws[k].term}
			seg.live++
		}
		s.stats.RewrittenEntries += uint64(len(g.locs))
	}
	return nil
}

// PurgeDue reports whether Purge has work: a sealed segment with no live
// entry at the head of the log, or more sealed segments than KeepSegments.
func (s *Store) PurgeDue() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	sealed := len(s.segs) - 1
	// Past KeepSegments, only once per new segment: the old ones may be
	// pinned by logs too long to rewrite.
	return (sealed > s.opts.KeepSegments && len(s.segs) != s.purgedAt) || (sealed > 0 && s.segs[0].live == 0 && s.segs[0].pin == 0)
}

// Purge frees old segments. If more than KeepSegments sealed segments
// precede the active one, the live logs (up to RewriteBytes each) of the
// groups that still have entries in the older ones are rewritten into the
// active segment; then every leading segment with no live entry is
// deleted. The caller must call it only when its own record of every
// truncation so far is durable: truncations are not logged here, and
// deleting a segment makes them permanent.
func (s *Store) Purge() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed != nil {
		return s.failed
	}
	if sealed := len(s.segs) - 1; sealed > s.opts.KeepSegments {
		cutoff := s.segs[sealed-s.opts.KeepSegments-1].num
		var ids []uint64
		for id, g := range s.groups {
			if len(g.locs) == 0 || g.locs[0].seg > cutoff || g.prev != nil {
				continue
			}
			var bytes int64
			for _, l := range g.locs {
				bytes += int64(l.n)
			}
			if bytes <= s.opts.RewriteBytes {
				ids = append(ids, id)
			}
		}
		slices.Sort(ids)
		if len(ids) > 0 {
			if err := s.rewrite(ids); err != nil {
				return err
			}
		}
	}
	defer func() { s.purgedAt = len(s.segs) }()
	removed := false
	for len(s.segs) > 1 && s.segs[0].live == 0 && s.segs[0].pin == 0 {
		sg := s.segs[0]
		if err := sg.f.Close(); err != nil {
			return s.fail(fmt.Errorf("logstore: closing segment %d: %w", sg.num, err))
		}
		if err := s.opts.FS.Remove(s.segName(sg.num)); err != nil {
			return s.fail(fmt.Errorf("logstore: removing segment %d: %w", sg.num, err))
		}
		s.segs = s.segs[1:]
		s.stats.SegmentsDeleted++
		removed = true
	}
	if removed {
		if err := s.dir.Sync(); err != nil {
			return s.fail(fmt.Errorf("logstore: syncing %s: %w", s.opts.Dir, err))
		}
	}
	return nil
}
