package raftlog

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/parsecdb/parsec/internal/replication/logstore"
	"github.com/parsecdb/parsec/internal/storage"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// Store holds the raft logs and raft state of many groups in one storage.DB.
// It is safe for concurrent use; see Log for what one group allows.
type Store struct {
	db     *storage.DB
	ls     *logstore.Store
	mu     sync.Mutex
	groups map[uint64]*Log
	// failed is set when a batch reached the log store but not the DB:
	// the two disagree until the node restarts and recovery reconciles
	// them.
	failed error
}

// Open returns the raft store over db with the entries in the node's log
// store, in the directory LogDir beside db's files, which opens with the
// first Store over db, is shared by every Store over db, and closes when
// db does (storage.DB.OnClose). If it cannot be opened, every call of the
// Store fails with the reason. Groups are loaded lazily by Group.
func Open(db *storage.DB) *Store {
	ls, err := sharedLog(db)
	s := &Store{db: db, ls: ls, groups: make(map[uint64]*Log)}
	if err != nil {
		s.failed = err
	}
	return s
}

// OpenInDB returns the raft store kept in db, entries included: the layout
// before the log store, kept for comparison. Groups are loaded lazily by
// Group.
func OpenInDB(db *storage.DB) *Store {
	return &Store{db: db, groups: make(map[uint64]*Log)}
}

// testHookBeforeDBCommit, if set, runs between a batch's log store commit
// and its DB commit (crash tests take their crash there).
var testHookBeforeDBCommit func()

// logOptions are the options of the log stores Open opens (tests make
// the segments small).
var logOptions logstore.Options

// LogDir is the directory of the node's log store, beside the DB's files.
const LogDir = "raftlog"

var shared struct {
	sync.Mutex
	logs map[*storage.DB]*logstore.Store
}

func sharedLog(db *storage.DB) (*logstore.Store, error) {
	shared.Lock()
	defer shared.Unlock()
	if ls, ok := shared.logs[db]; ok {
		return ls, nil
	}
	fs, dir := db.Files()
	opts := logOptions
	opts.FS, opts.Dir = fs, fs.PathJoin(dir, LogDir)
	ls, err := logstore.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("raftlog: opening the log store: %w", err)
	}
	if shared.logs == nil {
		shared.logs = make(map[*storage.DB]*logstore.Store)
	}
	shared.logs[db] = ls
	db.OnClose(func() error {
		shared.Lock()
		delete(shared.logs, db)
		shared.Unlock()
		return ls.Close()
	})
	return ls, nil
}

// Options choose where a Store keeps the entries.
type Options struct {
	// Log, when set, holds the groups' entries; the hard state, the
	// configuration, the snapshot and the truncated state stay in the DB,
	// with the state machines' applied state (see the package
	// documentation for the contract between the two). The log store
	// belongs to this Store alone; the caller closes it after the Store's
	// last use.
	Log *logstore.Store
}

// OpenWith is Open with options.
func OpenWith(db *storage.DB, opts Options) *Store {
	return &Store{db: db, ls: opts.Log, groups: make(map[uint64]*Log)}
}

// Log returns the log store that holds the entries, or nil if the DB does.
func (s *Store) Log() *logstore.Store { return s.ls }

func (s *Store) err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed
}

// DB returns the store's database.
func (s *Store) DB() *storage.DB { return s.db }

// Log is one group's raft log and state. It implements raft.Storage over the
// committed state of the store. Reads take the group's lock, and so does a
// Batch commit that changes the group, so a read sees either all of a batch
// or none of it.
type Log struct {
	s     *Store
	group uint64
	mu    sync.Mutex
	st    state
}

var _ raft.Storage = (*Log)(nil)

// state is what a Log caches in memory: everything except the entries
// themselves, so Term of the last entry, LastIndex, FirstIndex and
// InitialState never read the disk. Its pointers are never mutated, only
// replaced, so a shallow copy is a snapshot.
type state struct {
	hs         *raftpb.HardState
	cs         *raftpb.ConfState
	snap       *raftpb.Snapshot
	truncIndex uint64
	truncTerm  uint64
	lastIndex  uint64
	lastTerm   uint64
	// tail holds, within a batch, the entries the batch appends that are
	// still in the log (they end at lastIndex), for Term before they
	// reach the log store. It is nil in a published state.
	tail []*raftpb.Entry
}

// Group returns group id's log, loading its state from disk the first time.
// A group that has never been written has an empty log at index 0.
func (s *Store) Group(id uint64) (*Log, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed != nil {
		return nil, s.failed
	}
	if l, ok := s.groups[id]; ok {
		return l, nil
	}
	l := &Log{s: s, group: id}
	if err := l.load(); err != nil {
		return nil, err
	}
	s.groups[id] = l
	return l, nil
}

// Groups lists the ids of the groups that have any raft state on disk, in
// increasing order.
func (s *Store) Groups() ([]uint64, error) {
	ids, err := s.dbGroups()
	if err != nil || s.ls == nil {
		return ids, err
	}
	ids = append(ids, s.ls.Groups()...)
	slices.Sort(ids)
	return slices.Compact(ids), nil
}

func (s *Store) dbGroups() ([]uint64, error) {
	lo, hi := storage.RaftSpan()
	it, err := s.db.NewIter(lo, hi)
	if err != nil {
		return nil, err
	}
	var ids []uint64
	for ok := it.First(); ok; {
		id, valid := storage.RaftGroupOf(it.Key())
		if valid && id == 0 {
			// Group 0's prefix holds the node's cluster records.
			valid = false
			_, next := storage.RaftGroupSpan(0)
			ok = it.SeekGE(next)
			continue
		}
		if !valid {
			ok = it.Next()
			continue
		}
		ids = append(ids, id)
		_, next := storage.RaftGroupSpan(id)
		if next == nil {
			break
		}
		ok = it.SeekGE(next)
	}
	return ids, it.Close()
}

// ID returns the log's group id.
func (l *Log) ID() uint64 { return l.group }

func (l *Log) load() error {
	db := l.s.db
	st := state{hs: &raftpb.HardState{}, cs: &raftpb.ConfState{}, snap: &raftpb.Snapshot{}}
	if err := getProto(db, storage.RaftHardStateKey(l.group), st.hs); err != nil {
		return err
	}
	if err := getProto(db, storage.RaftConfStateKey(l.group), st.cs); err != nil {
		return err
	}
	if err := getProto(db, storage.RaftSnapshotKey(l.group), st.snap); err != nil {
		return err
	}
	var tr raftpb.Entry
	if err := getProto(db, storage.RaftTruncatedKey(l.group), &tr); err != nil {
		return err
	}
	st.truncIndex, st.truncTerm = tr.GetIndex(), tr.GetTerm()
	st.lastIndex, st.lastTerm = st.truncIndex, st.truncTerm
	if l.s.ls != nil {
		if err := l.reconcile(&st); err != nil {
			return err
		}
		l.st = st
		return nil
	}
	lo, hi := storage.RaftEntriesSpan(l.group, 0, math.MaxUint64)
	it, err := db.NewIter(lo, hi)
	if err != nil {
		return err
	}
	if it.Last() {
		v, err := it.Value()
		if err != nil {
			_ = it.Close()
			return err
		}
		var e raftpb.Entry
		if err := proto.Unmarshal(v, &e); err != nil {
			_ = it.Close()
			return fmt.Errorf("raftlog: group %d: bad log entry: %w", l.group, err)
		}
		st.lastIndex, st.lastTerm = e.GetIndex(), e.GetTerm()
	}
	if err := it.Close(); err != nil {
		return err
	}
	if st.lastIndex < st.truncIndex {
		return fmt.Errorf("raftlog: group %d: last entry %d is below the truncated index %d", l.group, st.lastIndex, st.truncIndex)
	}
	l.st = st
	return nil
}

type getter interface {
	Get(dst, key []byte) ([]byte, error)
}

// getProto reads key into m; an absent key leaves m as it is.
func getProto(g getter, key []byte, m proto.Message) error {
	v, err := g.Get(nil, key)
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := proto.Unmarshal(v, m); err != nil {
		return fmt.Errorf("raftlog: bad record at %q: %w", key, err)
	}
	return nil
}

// InitialState implements raft.Storage.
func (l *Log) InitialState() (*raftpb.HardState, *raftpb.ConfState, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return proto.Clone(l.st.hs).(*raftpb.HardState), proto.Clone(l.st.cs).(*raftpb.ConfState), nil
}

// HardState returns the group's durable hard state.
func (l *Log) HardState() *raftpb.HardState {
	l.mu.Lock()
	defer l.mu.Unlock()
	return proto.Clone(l.st.hs).(*raftpb.HardState)
}

// Entries implements raft.Storage: the entries in [lo, hi), at least one if
// any, and no more than maxSize bytes of them beyond the first.
func (l *Log) Entries(lo, hi, maxSize uint64) ([]*raftpb.Entry, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := &l.st
	if lo <= st.truncIndex {
		return nil, raft.ErrCompacted
	}
	if hi > st.lastIndex+1 {
		return nil, fmt.Errorf("raftlog: group %d: entries up to %d requested beyond the last index %d: %w", l.group, hi, st.lastIndex, raft.ErrUnavailable)
	}
	if st.lastIndex == st.truncIndex {
		return nil, raft.ErrUnavailable
	}
	if lo >= hi {
		return []*raftpb.Entry{}, nil
	}
	if l.s.ls != nil {
		return l.s.ls.Entries(l.group, lo, hi, maxSize)
	}
	from, to := storage.RaftEntriesSpan(l.group, lo, hi)
	it, err := l.s.db.NewIter(from, to)
	if err != nil {
		return nil, err
	}
	ents := make([]*raftpb.Entry, 0, min(hi-lo, 64))
	var size uint64
	next := lo
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.Value()
		if err != nil {
			_ = it.Close()
			return nil, err
		}
		size += uint64(len(v))
		if len(ents) > 0 && size > maxSize {
			break
		}
		e := &raftpb.Entry{}
		if err := proto.Unmarshal(v, e); err != nil {
			_ = it.Close()
			return nil, fmt.Errorf("raftlog: group %d: bad log entry: %w", l.group, err)
		}
		if e.GetIndex() != next {
			_ = it.Close()
			return nil, fmt.Errorf("raftlog: group %d: entry %d missing: %w", l.group, next, raft.ErrUnavailable)
		}
		ents = append(ents, e)
		next++
	}
	if err := it.Close(); err != nil {
		return nil, err
	}
	if len(ents) == 0 || (next < hi && size <= maxSize) {
		return nil, fmt.Errorf("raftlog: group %d: entry %d missing: %w", l.group, next, raft.ErrUnavailable)
	}
	return ents, nil
}

// Term implements raft.Storage.
func (l *Log) Term(i uint64) (uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.s.termOf(l.s.db, l.group, &l.st, i)
}

func (s *Store) termOf(g getter, group uint64, st *state, i uint64) (uint64, error) {
	switch {
	case i < st.truncIndex:
		return 0, raft.ErrCompacted
	case i == st.truncIndex:
		return st.truncTerm, nil
	case i > st.lastIndex:
		return 0, raft.ErrUnavailable
	case i == st.lastIndex:
		return st.lastTerm, nil
	}
	if s.ls != nil {
		if from := st.lastIndex + 1 - uint64(len(st.tail)); i >= from {
			return st.tail[i-from].GetTerm(), nil
		}
		return s.ls.Term(group, i)
	}
	var e raftpb.Entry
	v, err := g.Get(nil, storage.RaftEntryKey(nil, group, i))
	if errors.Is(err, storage.ErrNotFound) {
		return 0, raft.ErrUnavailable
	}
	if err != nil {
		return 0, err
	}
	if err := proto.Unmarshal(v, &e); err != nil {
		return 0, fmt.Errorf("raftlog: group %d: bad log entry: %w", group, err)
	}
	return e.GetTerm(), nil
}

// LastIndex implements raft.Storage.
func (l *Log) LastIndex() (uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.st.lastIndex, nil
}

// FirstIndex implements raft.Storage.
func (l *Log) FirstIndex() (uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.st.truncIndex + 1, nil
}

// Snapshot implements raft.Storage: the latest snapshot recorded by
// CreateSnapshot or ApplySnapshot.
func (l *Log) Snapshot() (*raftpb.Snapshot, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return raftpb.EnsureSnapshot(proto.Clone(l.st.snap).(*raftpb.Snapshot)), nil
}

// Batch collects raft writes of any number of groups, and any other writes
// the caller adds to Storage(), into one atomic commit with one log sync.
// The groups' cached state changes only when Commit succeeds. A Batch is
// used by one goroutine.
type Batch struct {
	s       *Store
	b       *storage.Batch
	pending map[*Log]*state
	// lb gathers the log store's share of the batch; logged is set when
	// it holds an append or a reset (which must be synced).
	lb     *logstore.Batch
	logged bool
	// syncDB is set, with a log store, when the DB batch holds more than
	// hard states (which the log store makes durable) and truncations
	// (which may wait): what Storage() was given, a snapshot, a
	// destruction.
	syncDB bool
}

// NewBatch returns an empty batch.
func (s *Store) NewBatch() *Batch {
	b := &Batch{s: s, b: s.db.NewBatch(), pending: make(map[*Log]*state)}
	if s.ls != nil {
		b.lb = s.ls.NewBatch()
	}
	return b
}

// Storage returns the underlying storage batch, for writes that must commit
// together with the raft writes (a state machine's applied state).
func (b *Batch) Storage() *storage.Batch {
	b.syncDB = true
	return b.b
}

// Groups returns how many groups the batch changes.
func (b *Batch) Groups() int { return len(b.pending) }

// Empty reports whether the batch holds no writes.
func (b *Batch) Empty() bool { return len(b.pending) == 0 && b.b.Empty() }

// Commit makes the batch durable, then publishes the new state of every
// group it changed. On error nothing is published.
func (b *Batch) Commit() error { return b.commit(true) }

// CommitNoSync is Commit without waiting for the write-ahead log to reach
// the disk (storage.Batch.CommitNoSync): for writes a crash may undo
// without harm, such as applied state, snapshots and log truncation, which
// only ever follow what is already durable. Never for hard state or
// entries: raft must not send a message that depends on a write that is
// not durable.
func (b *Batch) CommitNoSync() error { return b.commit(false) }

func (b *Batch) commit(sync bool) error {
	if b.pending == nil {
		return errors.New("raftlog: the batch was committed or discarded")
	}
	logs := make([]*Log, 0, len(b.pending))
	for l := range b.pending {
		logs = append(logs, l)
	}
	slices.SortFunc(logs, func(x, y *Log) int {
		switch {
		case x.group < y.group:
			return -1
		case x.group > y.group:
			return 1
		}
		return 0
	})
	for _, l := range logs {
		l.mu.Lock()
	}
	// With a log store, the entries are durable there before the DB
	// commit that may refer to them (a hard state's commit index), and
	// before raft hears they are persisted. Appends and resets are synced
	// even by CommitNoSync.
	ls := b.s.ls
	err := b.s.err()
	logDone := false
	if err == nil && ls != nil && !b.lb.Empty() {
		err = ls.Commit(b.lb, sync || b.logged)
		logDone = err == nil
	}
	if err == nil && testHookBeforeDBCommit != nil {
		testHookBeforeDBCommit()
	}
	if err == nil {
		if sync && (ls == nil || b.syncDB) {
			err = b.b.Commit()
		} else {
			err = b.b.CommitNoSync()
		}
	} else {
		b.b.Discard()
	}
	if err != nil && logDone {
		b.s.mu.Lock()
		b.s.failed = fmt.Errorf("raftlog: a batch reached the log store but not the database: %w", err)
		b.s.mu.Unlock()
	}
	for _, l := range logs {
		if err == nil {
			st := b.pending[l]
			st.tail = nil
			l.st = *st
		}
		l.mu.Unlock()
	}
	b.pending, b.lb = nil, nil
	if err == nil && ls != nil && ls.PurgeDue() {
		// Deleting segments makes the truncations so far permanent: make
		// the DB's record of them durable first (its log is sequential).
		// The batch is committed and published by now, so a failure here
		// only postpones the purge; a log store failure is sticky and
		// fails the next batch.
		if b.s.db.SyncLog() == nil {
			_ = ls.Purge()
		}
	}
	return err
}

// Discard drops the batch.
func (b *Batch) Discard() {
	b.b.Discard()
	b.pending, b.lb = nil, nil
}

// state returns the group's state as of the batch's writes so far.
func (b *Batch) state(l *Log) (*state, error) {
	if l.s != b.s {
		return nil, errors.New("raftlog: the log and the batch belong to different stores")
	}
	if b.pending == nil {
		return nil, errors.New("raftlog: the batch was committed or discarded")
	}
	if st, ok := b.pending[l]; ok {
		return st, nil
	}
	l.mu.Lock()
	st := l.st
	l.mu.Unlock()
	b.pending[l] = &st
	return &st, nil
}

func (b *Batch) setProto(key []byte, m proto.Message) error {
	v, err := proto.Marshal(m)
	if err != nil {
		return err
	}
	return b.b.Set(key, v)
}

// Append writes entries to the group's log, replacing any existing entries
// from the first new index on (a conflicting suffix). Entries already
// compacted are skipped. The entries must be consecutive and must not leave
// a gap after the last index.
func (l *Log) Append(b *Batch, ents []*raftpb.Entry) error {
	if len(ents) == 0 {
		return nil
	}
	st, err := b.state(l)
	if err != nil {
		return err
	}
	for i, e := range ents {
		if e.GetIndex() != ents[0].GetIndex()+uint64(i) {
			return fmt.Errorf("raftlog: group %d: entries not consecutive: %d at position %d after %d", l.group, e.GetIndex(), i, ents[0].GetIndex())
		}
	}
	first := st.truncIndex + 1
	last := ents[0].GetIndex() + uint64(len(ents)) - 1
	if last < first {
		return nil
	}
	if ents[0].GetIndex() < first {
		ents = ents[first-ents[0].GetIndex():]
	}
	if ents[0].GetIndex() > st.lastIndex+1 {
		return fmt.Errorf("raftlog: group %d: append at %d leaves a gap after the last index %d", l.group, ents[0].GetIndex(), st.lastIndex)
	}
	if b.lb != nil {
		b.lb.Append(l.group, ents)
		b.logged = true
		if from := st.lastIndex + 1 - uint64(len(st.tail)); ents[0].GetIndex() > from {
			st.tail = append(slices.Clip(st.tail[:ents[0].GetIndex()-from]), ents...)
		} else {
			st.tail = slices.Clone(ents)
		}
		st.lastIndex, st.lastTerm = last, ents[len(ents)-1].GetTerm()
		return nil
	}
	key := make([]byte, 0, storage.RaftGroupLen+9)
	for _, e := range ents {
		key = storage.RaftEntryKey(key[:0], l.group, e.GetIndex())
		if err := b.setProto(key, e); err != nil {
			return err
		}
	}
	if st.lastIndex > last {
		lo, hi := storage.RaftEntriesSpan(l.group, last+1, st.lastIndex+1)
		if err := b.b.DeleteRange(lo, hi); err != nil {
			return err
		}
	}
	st.lastIndex, st.lastTerm = last, ents[len(ents)-1].GetTerm()
	return nil
}

// SetHardState records the group's hard state.
func (l *Log) SetHardState(b *Batch, hs *raftpb.HardState) error {
	st, err := b.state(l)
	if err != nil {
		return err
	}
	hs = proto.Clone(hs).(*raftpb.HardState)
	if err := b.setProto(storage.RaftHardStateKey(l.group), hs); err != nil {
		return err
	}
	if b.lb != nil {
		// Durable with the round's entries by the log store's sync; the
		// DB's copy may be written without one.
		v, err := proto.Marshal(hs)
		if err != nil {
			return err
		}
		b.lb.SetHardState(l.group, v)
		b.logged = true
	}
	st.hs = hs
	return nil
}

// SetConfState records the group's configuration (after a configuration
// change is applied), returned by InitialState from then on.
func (l *Log) SetConfState(b *Batch, cs *raftpb.ConfState) error {
	st, err := b.state(l)
	if err != nil {
		return err
	}
	cs = proto.Clone(cs).(*raftpb.ConfState)
	if err := b.setProto(storage.RaftConfStateKey(l.group), cs); err != nil {
		return err
	}
	st.cs = cs
	return nil
}

// Truncate drops the log entries up to and including upTo, keeping the
// term of upTo for matching. It fails with raft.ErrCompacted if upTo is
// already truncated.
func (l *Log) Truncate(b *Batch, upTo uint64) error {
	st, err := b.state(l)
	if err != nil {
		return err
	}
	if upTo <= st.truncIndex {
		return raft.ErrCompacted
	}
	if upTo > st.lastIndex {
		return fmt.Errorf("raftlog: group %d: truncation to %d beyond the last index %d", l.group, upTo, st.lastIndex)
	}
	term, err := b.s.termOf(b.b, l.group, st, upTo)
	if err != nil {
		return err
	}
	if b.lb != nil {
		b.lb.Truncate(l.group, upTo)
		if from := st.lastIndex + 1 - uint64(len(st.tail)); upTo >= from {
			st.tail = st.tail[upTo-from+1:]
		}
	} else {
		lo, hi := storage.RaftEntriesSpan(l.group, st.truncIndex+1, upTo+1)
		if err := b.b.DeleteRange(lo, hi); err != nil {
			return err
		}
	}
	if err := b.setProto(storage.RaftTruncatedKey(l.group), truncated(upTo, term)); err != nil {
		return err
	}
	st.truncIndex, st.truncTerm = upTo, term
	return nil
}

func truncated(index, term uint64) *raftpb.Entry {
	return &raftpb.Entry{Index: &index, Term: &term}
}

// ApplySnapshot replaces the group's log with snap: every entry is dropped
// and the log restarts after the snapshot's index. It fails with
// raft.ErrSnapOutOfDate if the group already has a snapshot at least as
// recent.
func (l *Log) ApplySnapshot(b *Batch, snap *raftpb.Snapshot) error {
	st, err := b.state(l)
	if err != nil {
		return err
	}
	snap = raftpb.EnsureSnapshot(proto.Clone(snap).(*raftpb.Snapshot))
	idx, term := snap.GetMetadata().GetIndex(), snap.GetMetadata().GetTerm()
	if cur := st.snap.GetMetadata().GetIndex(); cur != 0 && cur >= idx {
		return raft.ErrSnapOutOfDate
	}
	if b.lb != nil {
		b.lb.Reset(l.group, idx)
		b.logged, b.syncDB = true, true
		st.tail = nil
	} else {
		lo, hi := storage.RaftEntriesSpan(l.group, 0, math.MaxUint64)
		if err := b.b.DeleteRange(lo, hi); err != nil {
			return err
		}
	}
	if err := b.setProto(storage.RaftSnapshotKey(l.group), snap); err != nil {
		return err
	}
	cs := snap.GetMetadata().GetConfState()
	if err := b.setProto(storage.RaftConfStateKey(l.group), cs); err != nil {
		return err
	}
	if err := b.setProto(storage.RaftTruncatedKey(l.group), truncated(idx, term)); err != nil {
		return err
	}
	st.snap, st.cs = snap, cs
	st.truncIndex, st.truncTerm = idx, term
	st.lastIndex, st.lastTerm = idx, term
	return nil
}

// CreateSnapshot records a snapshot of the state machine at index i (which
// must be in the log) with the given data, to be served by Snapshot. A nil
// cs keeps the previous snapshot's configuration. It does not truncate the
// log (Truncate does). It fails with raft.ErrSnapOutOfDate if the group
// has a snapshot at i or later.
func (l *Log) CreateSnapshot(b *Batch, i uint64, cs *raftpb.ConfState, data []byte) (*raftpb.Snapshot, error) {
	st, err := b.state(l)
	if err != nil {
		return nil, err
	}
	if i <= st.snap.GetMetadata().GetIndex() {
		return nil, raft.ErrSnapOutOfDate
	}
	if i > st.lastIndex {
		return nil, fmt.Errorf("raftlog: group %d: snapshot at %d beyond the last index %d", l.group, i, st.lastIndex)
	}
	term, err := b.s.termOf(b.b, l.group, st, i)
	if err != nil {
		return nil, err
	}
	if cs == nil {
		cs = st.snap.GetMetadata().GetConfState()
	}
	if cs != nil {
		cs = proto.Clone(cs).(*raftpb.ConfState)
	}
	snap := raftpb.EnsureSnapshot(&raftpb.Snapshot{
		Data:     slices.Clone(data),
		Metadata: &raftpb.SnapshotMetadata{Index: &i, Term: &term, ConfState: cs},
	})
	cs = snap.GetMetadata().GetConfState()
	if err := b.setProto(storage.RaftSnapshotKey(l.group), snap); err != nil {
		return nil, err
	}
	if err := b.setProto(storage.RaftConfStateKey(l.group), cs); err != nil {
		return nil, err
	}
	st.snap, st.cs = snap, cs
	return proto.Clone(snap).(*raftpb.Snapshot), nil
}

// Bootstrap writes the initial state of a new group on every replica: an
// empty log that starts after (index, term), the configuration cs, and a
// hard state that commits index. All replicas bootstrapped alike agree on
// the log's start without any message. It fails if the group has state.
func (l *Log) Bootstrap(b *Batch, index, term uint64, cs *raftpb.ConfState) error {
	st, err := b.state(l)
	if err != nil {
		return err
	}
	if st.lastIndex != 0 || !raft.IsEmptyHardState(st.hs) {
		return fmt.Errorf("raftlog: group %d already exists", l.group)
	}
	if index == 0 || term == 0 {
		return errors.New("raftlog: a bootstrap index and term must be positive")
	}
	snap := &raftpb.Snapshot{Metadata: &raftpb.SnapshotMetadata{Index: &index, Term: &term, ConfState: cs}}
	if err := l.ApplySnapshot(b, snap); err != nil {
		return err
	}
	return l.SetHardState(b, &raftpb.HardState{Term: &term, Commit: &index})
}

// Destroy deletes all of the group's raft state (the replica is removed).
func (l *Log) Destroy(b *Batch) error {
	st, err := b.state(l)
	if err != nil {
		return err
	}
	lo, hi := storage.RaftGroupSpan(l.group)
	if err := b.b.DeleteRange(lo, hi); err != nil {
		return err
	}
	if b.lb != nil {
		b.lb.Reset(l.group, 0)
		b.lb.SetHardState(l.group, nil)
		b.logged, b.syncDB = true, true
	}
	*st = state{hs: &raftpb.HardState{}, cs: &raftpb.ConfState{}, snap: &raftpb.Snapshot{}}
	return nil
}
