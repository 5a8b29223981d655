package engine

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/parsecdb/parsec/internal/storage"
)

// The catalog's log. commitCatalog does not write the store: it proposes
// the change as one entry of the catalog's log and waits until this node
// has applied it. The log is a cluster's meta group (Options.Catalog) or,
// on a single node, the local one (localCatalog, local.go), which commits
// each entry with a WAL sync as it applies it. Every node, the proposer's
// included, applies the log's committed entries through the catalog's
// state machine (Engine.CatalogReplica: ApplyCatalog, into the batch of
// the log's round, with the index reached, storage.CatalogAppliedKey),
// and PublishCatalog follows once that batch has committed. What follows
// is written for the meta group; with the local log there is one proposer
// and no foreign entry, so no entry is refused and the reconciler has
// nothing to do.
//
// An entry is
//
//	token:8 position:uvarint fence:uvarint origin:8 batch
//
// where token is random, position is the proposer's id allocator position
// (the next number it would hand out), batch is the catalogBatch's
// encoding, and fence and origin are explained below. Applying an entry
// advances this node's allocator past its position, so a node that later
// leads the meta group never hands out a number an entry it applied
// already used.
//
// That is not enough on its own: a node that has just become the leader
// may not have applied the last entries of its predecessor yet (they are
// in its log, but it learns that they are committed only once an entry of
// its own term commits), and an op may take a number from its allocator
// before it has. So an entry that took a number says which catalog entries
// the proposer's allocator reflected when it took it (fence+1, the index;
// 0 for a change that took none), and which engine proposed it (origin, a
// random id of the engine instance). Applying it, every node decides the
// same, from the log alone, whether the number may repeat one taken by
// another engine: it may if an entry of another origin that took a number
// lies between the fence and the entry. Such an entry is refused: it
// writes nothing, and its proposer's op fails with ErrUnavailable, to be
// retried (its allocator has moved on by then). The state of that
// decision (the origin of the last entry that took a number, its index,
// and the index of the last one of another origin before it) is stored
// with the applied index.
//
// Memory. The op that proposed an entry updates the engine's memory itself,
// as it does without replication, after commitCatalog returns: the
// proposer registers the entry's token, and ApplyCatalog recognises it.
// Every other entry is foreign: ApplyCatalog notes the databases whose
// records it touched (storage.CatalogDatabase), and once published a
// background reconciler reloads those databases from the store (their
// record, containers, users and permissions) under the locks the ops take,
// and makes memory match: it opens the partitions of a new container and
// has the Replicator create their groups, stops a deleted container's,
// replaces changed records. Client encryption keys and scripts are read
// from the store on every use, and the compiled-script cache checks
// versions, so they need nothing. The raft loop never waits for an engine
// lock: ApplyCatalog and PublishCatalog take only the catalog's own mutex
// (and the allocator's), which no one holds while waiting.
//
// Races considered:
//
//   - Reconciling is idempotent (it makes memory equal to the store for the
//     databases it looks at) and ordered (one goroutine, entries in index
//     order; it reads a store snapshot that holds at least every entry
//     published before it began). Reading a later state than the entries'
//     is harmless: the later entries are reconciled again.
//   - A foreign entry reconciled while an op of this node is in flight: the
//     ops whose memory the reconciler rebuilds (databases, containers,
//     offers, users, permissions) hold e.mu, or its read side, from before
//     they propose until their memory is updated, and the reconciler takes
//     e.mu before it takes its store snapshot, so it sees the store and
//     memory both before or both after.
//     That is why a deletion proposes first and then changes memory
//     (commitDeletion): the reconciler would otherwise bring back, from
//     the store, what a deletion in flight has taken out of memory, and a
//     refused deletion (this node does not lead) would leave memory
//     without a container the store still has.
//   - An op waits for the replication loop while it proposes, and the loop
//     takes c.mu to publish a split: a change of a container's record holds
//     c.recordMu across its commit instead (lockRecord) and takes c.mu only
//     to put the record in memory, keeping the partition map memory has
//     (setRecord); Container.stop does not hold c.mu while the partitions'
//     loops, which may be waiting for the replication loop, end.
//   - A proposal whose outcome is unknown to the proposer (a timeout, a
//     lost leadership) may still commit: its token is unregistered when
//     ProposeCatalog returns, so if it is applied later it counts as
//     foreign and is reconciled from the store like any other. If it was
//     applied before ProposeCatalog returned, the op goes on as committed.
//   - A deleted container's partition groups may still commit and apply
//     entries after the deletion (proposed before it, or by a leader that
//     has not reconciled it yet): a replica applies none once the store
//     says the partition is gone (Partition.goneIn), so whether it applied
//     such an entry before or after the deletion, it ends with no key of
//     the container.

// CatalogReplicator replicates catalog changes through the catalog's log:
// a cluster's meta group (replication/host.Host and the group the
// deployment chose for it), or a single node's local log (localCatalog).
type CatalogReplicator interface {
	// ProposeCatalog replicates data in the meta group and returns the
	// entry's index once it is committed, applied and published on this
	// node.
	ProposeCatalog(ctx context.Context, data []byte) (uint64, error)
	// Placement returns the nodes a new container's partition groups get
	// as members.
	Placement() []uint64
}

// catalogRepl is the catalog's apply state.
type catalogRepl struct {
	mu      sync.Mutex
	loaded  bool
	applied uint64 // the raft index applied (the round's batch may not have committed)
	// published is the index whose batch has committed.
	published uint64
	// waiting holds, by token, this node's proposals in flight; apply
	// marks those it finds.
	waiting map[uint64]*catalogSlot
	// origin names this engine instance in its entries.
	origin uint64
	fence  catalogFence
	// unpublished are the databases foreign entries applied since the last
	// publish touched.
	unpublished map[string]bool
	// queue is what the reconciler has to reload, up to target.
	queue  map[string]bool
	target uint64
	// reflected is the index up to which memory reflects every entry;
	// changed is closed (and replaced) whenever it moves.
	reflected uint64
	changed   chan struct{}
	wake      chan struct{}
	stop      chan struct{}
	done      chan struct{}
	running   bool // the reconciler was started (Open got that far)
}

type catalogSlot struct{ applied, refused bool }

func newCatalogRepl() *catalogRepl {
	var o [8]byte
	_, _ = rand.Read(o[:])
	return &catalogRepl{origin: binary.BigEndian.Uint64(o[:]), waiting: map[uint64]*catalogSlot{}, unpublished: map[string]bool{}, queue: map[string]bool{},
		changed: make(chan struct{}), wake: make(chan struct{}, 1),
		stop: make(chan struct{}), done: make(chan struct{})}
}

// catalogProposeTimeout bounds how long a catalog change waits for its entry.
const catalogProposeTimeout = 30 * time.Second

// proposeCatalog proposes the catalog change m to the catalog's log and
// waits until this node has applied it (commitCatalog).
func (e *Engine) proposeCatalog(m *catalogBatch, what string) error {
	r := e.cat
	var tok [8]byte
	_, _ = rand.Read(tok[:])
	token := binary.BigEndian.Uint64(tok[:])
	data := binary.AppendUvarint(tok[:], e.seq.position())
	var fence uint64
	if m.seq != 0 {
		fence = e.seq.fenceOf(m.seq) + 1
	}
	data = binary.AppendUvarint(data, fence)
	data = binary.BigEndian.AppendUint64(data, r.origin)
	data = append(data, m.encode()...)
	slot := &catalogSlot{}
	r.mu.Lock()
	r.waiting[token] = slot
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), catalogProposeTimeout)
	defer cancel()
	_, err := e.catLog.ProposeCatalog(ctx, data)
	r.mu.Lock()
	delete(r.waiting, token)
	applied, refused := slot.applied, slot.refused
	r.mu.Unlock()
	if refused {
		return fmt.Errorf("%w: cannot %s: the change raced a change of the catalog's leader and was not applied; retry it", ErrUnavailable, what)
	}
	if err != nil && !applied {
		return proposalError("the catalog change to "+what, err)
	}
	// The local log hands its entries to the optional command log (a
	// single node's); the meta group's log is the catalog's own.
	return nil
}

// loadCatalogApplied reads the applied index once; the caller holds r.mu.
func (e *Engine) loadCatalogApplied() error {
	r := e.cat
	if r.loaded {
		return nil
	}
	v, err := e.store.Get(nil, storage.CatalogAppliedKey())
	switch {
	case errors.Is(err, storage.ErrNotFound):
	case err != nil:
		return fmt.Errorf("%w: cannot read the catalog's applied index: %v", ErrUnavailable, err)
	case len(v) != 8 && len(v) != 32:
		return corrupt("the catalog's applied index has %d bytes", len(v))
	default:
		r.applied = binary.BigEndian.Uint64(v)
		r.published, r.reflected, r.target = r.applied, r.applied, r.applied
		if len(v) == 32 {
			r.fence = catalogFence{lastOrigin: binary.BigEndian.Uint64(v[8:]), lastTook: binary.BigEndian.Uint64(v[16:]), otherTook: binary.BigEndian.Uint64(v[24:])}
		}
		// The allocator reflects every entry the store has applied: it
		// persisted its advance before the entry's batch committed.
		if err := e.seq.advance(0, r.applied); err != nil {
			return err
		}
	}
	r.loaded = true
	return nil
}

// ApplyCatalog applies committed entries of the meta group, in order, into
// b, which the caller commits before it calls PublishCatalog. An entry with
// no data (raft's own) only advances the index. It takes no engine lock an
// op may hold while it waits for its proposal, so the replication loop may
// call it at any time. A failure (a malformed entry, the store's) is
// returned: the replica must stop.
func (e *Engine) ApplyCatalog(b *storage.Batch, entries []ReplicaEntry) error {
	r := e.cat
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := e.loadCatalogApplied(); err != nil {
		return err
	}
	for _, en := range entries {
		if en.Index != r.applied+1 {
			return fmt.Errorf("catalog: entry %d applied after %d", en.Index, r.applied)
		}
		if en.Data == nil {
			r.applied = en.Index
			if err := e.seq.advance(0, en.Index); err != nil {
				return err
			}
			continue
		}
		ce, err := decodeCatalogEntry(en.Data)
		if err != nil {
			return fmt.Errorf("catalog entry %d: %w", en.Index, err)
		}
		token, pos, m := ce.token, ce.pos, ce.m
		refused := r.fence.refuses(ce.origin, ce.fence, en.Index)
		if !refused {
			if m.deletesPartitions() {
				// Before the batch commits: an entry of a partition
				// applied after this one, in this round or later, reads
				// the store again (goneIn).
				e.deletions.Add(1)
			}
			if err := keepRanges(b, m); err != nil {
				return err
			}
			if err := m.into(b); err != nil {
				return err
			}
		}
		if err := e.seq.advance(pos, en.Index); err != nil {
			return err
		}
		r.applied = en.Index
		if slot := r.waiting[token]; slot != nil {
			slot.applied, slot.refused = true, refused
			continue
		}
		if refused {
			continue
		}
		for _, op := range m.ops {
			if db, ok := storage.CatalogDatabase(op.key); ok {
				r.unpublished[db] = true
			}
		}
	}
	return b.Set(storage.CatalogAppliedKey(), r.appliedRecord())
}

// appliedRecord is the value of storage.CatalogAppliedKey: the applied
// index, then the fence decision's state (8 bytes each).
func (r *catalogRepl) appliedRecord() []byte { return r.fence.record(r.applied) }

// catalogFence is the state of the fence decision (see above): the origin
// of the last entry that took a number, its index, and the index of the
// last entry of another origin that took one before it.
type catalogFence struct{ lastOrigin, lastTook, otherTook uint64 }

// refuses decides, and records, whether the catalog entry index of origin
// with fence (0: it took no number; else the index its proposer's
// allocator reflected, plus one) must be refused: its number may repeat
// one that an entry of another origin took.
func (f *catalogFence) refuses(origin, fence, index uint64) bool {
	if fence == 0 {
		return false
	}
	at := fence - 1
	if (origin == f.lastOrigin && at >= f.otherTook) || at >= f.lastTook {
		if origin != f.lastOrigin {
			f.lastOrigin, f.otherTook = origin, f.lastTook
		}
		f.lastTook = index
		return false
	}
	return true
}

// record is storage.CatalogAppliedKey's value at applied index applied.
func (f *catalogFence) record(applied uint64) []byte {
	v := binary.BigEndian.AppendUint64(nil, applied)
	v = binary.BigEndian.AppendUint64(v, f.lastOrigin)
	v = binary.BigEndian.AppendUint64(v, f.lastTook)
	return binary.BigEndian.AppendUint64(v, f.otherTook)
}

// catalogEntry is a decoded entry of the catalog's log.
type catalogEntry struct {
	token, pos, fence, origin uint64
	m                         *catalogBatch
}

func decodeCatalogEntry(data []byte) (catalogEntry, error) {
	d := newDecoder(data)
	tok := d.Take(8)
	pos := d.Uvarint()
	fence := d.Uvarint()
	org := d.Take(8)
	if err := d.Err(); err != nil {
		return catalogEntry{}, err
	}
	m, err := decodeCatalogBatch(data[len(data)-d.Len():])
	if err != nil {
		return catalogEntry{}, err
	}
	return catalogEntry{token: binary.BigEndian.Uint64(tok), pos: pos, fence: fence, origin: binary.BigEndian.Uint64(org), m: m}, nil
}

// deletesPartitions reports whether m deletes containers' partition
// records (a container's or a database's deletion).
func (m *catalogBatch) deletesPartitions() bool {
	pre := storage.PartitionKey([storage.RidLen]byte{}, "")[:1] // the family of partition records
	for _, op := range m.ops {
		if op.kind == catalogDeleteRange && bytes.HasPrefix(op.key, pre) {
			return true
		}
	}
	return false
}

// keepRanges makes the container records m writes keep the partition map
// the store holds for the same container: once a container exists, its
// partitions' logs own its map (a split writes it, reading the record
// the store holds), and a catalog entry's copy of the map may be older
// than a split this node applied first. Either order of the two logs then
// ends with the same record.
func keepRanges(b *storage.Batch, m *catalogBatch) error {
	pre := storage.ContainersPrefix()
	for i, op := range m.ops {
		if op.kind != catalogSet || !bytes.HasPrefix(op.key, pre) {
			continue
		}
		old, err := b.Get(nil, op.key)
		if errors.Is(err, storage.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		var cur, rec ContainerInfo
		if err := json.Unmarshal(old, &cur); err != nil {
			return corrupt("the container record %q does not decode: %v", op.key, err)
		}
		if err := json.Unmarshal(op.val, &rec); err != nil {
			return corrupt("a catalog entry's container record %q does not decode: %v", op.key, err)
		}
		if cur.Rid != rec.Rid || (rec.RangesSeq == cur.RangesSeq && rec.NextRangeID == cur.NextRangeID) {
			continue
		}
		rec.Ranges, rec.RangesSeq, rec.NextRangeID = cur.Ranges, cur.RangesSeq, cur.NextRangeID
		v, err := encodeContainer(rec)
		if err != nil {
			return err
		}
		m.ops[i].val = v
	}
	return nil
}

// StartCatalogAt records that the meta group, of which this node has
// applied nothing, starts at raft index (its bootstrap snapshot, which
// holds no data), writing into b.
func (e *Engine) StartCatalogAt(b *storage.Batch, index uint64) error {
	r := e.cat
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := e.loadCatalogApplied(); err != nil {
		return err
	}
	if r.applied != 0 {
		return internalError("the catalog has applied raft index %d: it cannot start over at index %d", r.applied, index)
	}
	r.applied, r.published, r.reflected, r.target = index, index, index, index
	if err := e.seq.advance(0, index); err != nil {
		return err
	}
	return b.Set(storage.CatalogAppliedKey(), r.appliedRecord())
}

// PublishCatalog is called once the batch ApplyCatalog wrote into has
// committed: the entries count as applied, and the reconciler is told of
// the foreign ones. It does not wait.
func (e *Engine) PublishCatalog() {
	r := e.cat
	r.mu.Lock()
	r.published = r.applied
	r.target = r.applied
	for db := range r.unpublished {
		r.queue[db] = true
		delete(r.unpublished, db)
	}
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// CatalogApplied returns the meta group's index whose entries are applied
// and committed on this node (not necessarily reflected in memory yet: see
// WaitCatalog).
func (e *Engine) CatalogApplied() uint64 {
	r := e.cat
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := e.loadCatalogApplied(); err != nil {
		e.opts.Logf("parsec: %v", err)
	}
	return r.published
}

// WaitCatalog waits until every catalog entry up to index is reflected in
// this node's memory (its databases, containers, users ...), or ctx ends.
func (e *Engine) WaitCatalog(ctx context.Context, index uint64) error {
	r := e.cat
	for {
		r.mu.Lock()
		if r.reflected >= index {
			r.mu.Unlock()
			return nil
		}
		ch := r.changed
		r.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("%w: the catalog is not reflected up to index %d: %w", ErrUnavailable, index, ctx.Err())
		case <-r.done:
			return fmt.Errorf("%w: the engine is closed", ErrUnavailable)
		}
	}
}

// reconcileLoop reflects foreign entries in memory, in order, until the
// engine closes.
func (e *Engine) reconcileLoop() {
	r := e.cat
	defer close(r.done)
	for {
		select {
		case <-r.stop:
			return
		case <-r.wake:
		}
		for {
			r.mu.Lock()
			target, dbs := r.target, r.queue
			if target <= r.reflected && len(dbs) == 0 {
				r.mu.Unlock()
				break
			}
			r.queue = map[string]bool{}
			r.mu.Unlock()
			if err := e.reconcile(dbs); err != nil {
				e.opts.Logf("parsec: cannot reflect the replicated catalog in memory, retrying: %v", err)
				r.mu.Lock()
				for db := range dbs {
					r.queue[db] = true
				}
				r.mu.Unlock()
				select {
				case <-r.stop:
					return
				case <-time.After(100 * time.Millisecond):
				}
				continue
			}
			r.mu.Lock()
			if target > r.reflected {
				r.reflected = target
				close(r.changed)
				r.changed = make(chan struct{})
			}
			r.mu.Unlock()
		}
	}
}

// reconcile makes memory match the store for the given databases.
func (e *Engine) reconcile(dbs map[string]bool) error {
	if len(dbs) == 0 {
		return nil
	}
	var created, stopped []*Container
	e.mu.Lock()
	// The snapshot is taken under e.mu: an op of this node that holds it
	// has its entry committed before it lets go, so the snapshot never
	// predates a change memory already shows.
	snap := e.store.NewSnapshot()
	defer snap.Close()
	var err error
	for id := range dbs {
		if err = e.reloadDatabaseLocked(snap, id, &created, &stopped); err != nil {
			break
		}
	}
	e.mu.Unlock()
	// Outside e.mu, as DeleteContainer does: a partition's loop may be
	// waiting for its proposal.
	for _, c := range stopped {
		c.stop()
	}
	if len(stopped) > 0 {
		if werr := e.writeAcked(); werr != nil {
			e.opts.Logf("parsec: %v", werr)
		}
	}
	for _, c := range created {
		e.createGroups(c)
	}
	if len(created) > 0 || len(stopped) > 0 || len(dbs) > 0 {
		e.refreshRates()
	}
	return err
}

// reloadDatabaseLocked makes the memory of database id match the snapshot;
// the caller holds e.mu. Containers it opens and stops are added to
// created and stopped, for the caller to finish outside e.mu.
func (e *Engine) reloadDatabaseLocked(snap *storage.Snapshot, id string, created, stopped *[]*Container) error {
	db := e.dbs[id]
	drop := func() {
		if db == nil {
			return
		}
		delete(e.dbs, id)
		e.forgetUsersLocked(db)
		for _, c := range db.colls {
			*stopped = append(*stopped, c)
		}
	}
	v, err := snap.Get(nil, storage.DatabaseKey(id))
	if errors.Is(err, storage.ErrNotFound) {
		drop()
		return nil
	}
	if err != nil {
		return err
	}
	var info DatabaseInfo
	if err := json.Unmarshal(v, &info); err != nil {
		return corrupt("cannot decode the record of database %q: %v", id, err)
	}
	if db != nil && db.info.Rid != info.Rid {
		drop() // deleted and created again
		db = nil
	}
	if db == nil {
		db = &database{info: info, colls: map[string]*Container{}}
		e.dbs[id] = db
	}
	db.info = info
	// Containers.
	recs := map[string]ContainerInfo{}
	lo := storage.ContainerPrefix(id)
	err = snap.Iterate(lo, storage.PrefixEnd(lo), func(k, v []byte) (bool, error) {
		var ci ContainerInfo
		if err := json.Unmarshal(v, &ci); err != nil {
			return false, corrupt("cannot decode a container record of database %q: %v", id, err)
		}
		recs[ci.ID] = ci
		return true, nil
	})
	if err != nil {
		return err
	}
	for cid, c := range db.colls {
		if rec, ok := recs[cid]; !ok || rec.Rid != c.Info().Rid {
			delete(db.colls, cid)
			*stopped = append(*stopped, c)
		}
	}
	for cid, rec := range recs {
		c := db.colls[cid]
		if c == nil {
			if c, err = e.openContainer(rec); err != nil {
				return err
			}
			db.colls[cid] = c
			*created = append(*created, c)
			continue
		}
		if err := c.reloadInfo(rec); err != nil {
			return err
		}
	}
	// Users and permissions.
	users := map[string]*userEntry{}
	lo = storage.UserPrefix(id)
	err = snap.Iterate(lo, storage.PrefixEnd(lo), func(k, v []byte) (bool, error) {
		var u UserInfo
		if err := json.Unmarshal(v, &u); err != nil {
			return false, corrupt("cannot decode user record %q: %v", k, err)
		}
		users[u.ID] = &userEntry{info: u, perms: map[string]PermissionInfo{}}
		return true, nil
	})
	if err != nil {
		return err
	}
	lo = storage.DatabasePermissionsPrefix(id)
	err = snap.Iterate(lo, storage.PrefixEnd(lo), func(k, v []byte) (bool, error) {
		var p PermissionInfo
		if err := json.Unmarshal(v, &p); err != nil {
			return false, corrupt("cannot decode permission record %q: %v", k, err)
		}
		if u := users[p.User]; u != nil {
			u.perms[p.ID] = p
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	e.forgetUsersLocked(db)
	db.users = nil
	if len(users) > 0 {
		db.users = users
	}
	for _, u := range users {
		for _, p := range u.perms {
			e.livePerms[p.Rid] = p.Seq
		}
	}
	return nil
}

// reloadInfo replaces the container's record by rec, read from the store,
// as the op that wrote it would have: a new indexing policy starts its
// build, a finished build lets queries use the index. The partition map
// is the partitions' logs' (splits), not the catalog's: it is kept.
func (c *Container) reloadInfo(rec ContainerInfo) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	cur := c.Info()
	rec.Ranges, rec.RangesSeq, rec.NextRangeID = cur.Ranges, cur.RangesSeq, cur.NextRangeID
	a, err := encodeContainer(cur)
	if err != nil {
		return err
	}
	b, err := encodeContainer(rec)
	if err != nil {
		return err
	}
	if bytes.Equal(a, b) {
		return nil
	}
	c.setInfo(rec)
	switch {
	case rec.IndexGen != cur.IndexGen && rec.IndexBuilding:
		c.startIndexBuild(rec)
	case rec.IndexGen == cur.IndexGen && cur.IndexBuilding && !rec.IndexBuilding:
		if ix := c.index.Load(); ix != nil {
			c.index.Store(&indexState{gen: ix.gen, policy: ix.policy, ready: !ix.policy.None})
		}
	}
	return nil
}

// lockRecord locks c for a change of its record through commitCatalog and
// returns the unlock: c.recordMu, not c.mu. A split is an entry of its
// partition's log, applied and published apart from the catalog's (the
// publish takes c.mu to put the children in place, and with raft it runs
// in the replication loop, which the commit may wait for), so c.mu must
// not be held across the commit; the split and the catalog entry order
// their writes of the record in the store themselves (keepRanges), and
// setRecord merges them in memory.
func (c *Container) lockRecord() (unlock func()) {
	c.recordMu.Lock()
	return c.recordMu.Unlock
}

// setRecord makes info, just committed, the container's record in memory;
// the caller holds lockRecord. The partition map stays the one memory has
// now (a split may have been published while the change was committed).
func (c *Container) setRecord(info ContainerInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cur := c.Info()
	info.Ranges, info.RangesSeq, info.NextRangeID = cur.Ranges, cur.RangesSeq, cur.NextRangeID
	c.setInfo(info)
}

// createGroups has the Replicator create the raft groups of a new
// container's partitions, with the members its record names. The caller
// holds no engine lock.
func (e *Engine) createGroups(c *Container) {
	info := c.Info()
	if len(info.Replicas) == 0 {
		return
	}
	e.log.CreateGroups(c.groupIDs(), append([]uint64(nil), info.Replicas...))
}

// closeCatalog stops the reconciler.
func (e *Engine) closeCatalog() {
	if r := e.cat; r != nil && r.running {
		close(r.stop)
		<-r.done
	}
}
