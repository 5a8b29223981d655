package engine

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sort"
	"unicode"
	"unicode/utf8"

	"github.com/parsecdb/parsec/internal/epk"
	"github.com/parsecdb/parsec/internal/index"
	"github.com/parsecdb/parsec/internal/partition"
	"github.com/parsecdb/parsec/internal/storage"
)

type database struct {
	info  DatabaseInfo
	colls map[string]*Container
	users map[string]*userEntry // nil until the first user
}

// Throughput is the provisioned throughput given at creation: a fixed RU/s,
// or an autoscale maximum.
type Throughput struct {
	RUs          int
	AutoscaleMax int
}

// NewPartitionRUs is the throughput per physical partition that the service
// gives a new container: T RU/s (manual, or the autoscale maximum) start on
// ceil(T / 6,000) partitions, so that each can grow before it must split.
const NewPartitionRUs = 6000

// partitionCount returns the number of partitions of a new container
// provisioned with t: N = ceil(T / min(NewPartitionRUs, PartitionMaxRUs)).
// Splits on later throughput changes follow PartitionMaxRUs alone.
func (e *Engine) partitionCount(t Throughput) int {
	rus := t.RUs
	if t.AutoscaleMax > 0 {
		rus = t.AutoscaleMax
	}
	if rus <= 0 {
		rus = DefaultThroughput
	}
	per := min(NewPartitionRUs, e.opts.PartitionMaxRUs)
	return (rus + per - 1) / per
}

// CreateDatabase creates a database. It fails with ErrConflict if id exists.
func (e *Engine) CreateDatabase(id string, t Throughput) (DatabaseInfo, error) {
	if err := validateResourceID("database", id); err != nil {
		return DatabaseInfo{}, err
	}
	if err := e.validateThroughput(t); err != nil {
		return DatabaseInfo{}, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.dbs[id]; ok {
		return DatabaseInfo{}, conflict("database %q already exists", id)
	}
	s, err := e.seq.take(1)
	if err != nil {
		return DatabaseInfo{}, err
	}
	info := DatabaseInfo{
		ID: id, Rid: encodeRid(binary.BigEndian.AppendUint32(nil, uint32(s))), Ts: e.now(), Seq: s,
		Throughput: t.RUs, AutoscaleMax: t.AutoscaleMax,
	}
	if err := e.storeDatabase(info); err != nil {
		return DatabaseInfo{}, err
	}
	e.dbs[id] = &database{info: info, colls: map[string]*Container{}}
	return info, nil
}

// Database returns a database's record.
func (e *Engine) Database(id string) (DatabaseInfo, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	db, ok := e.dbs[id]
	if !ok {
		return DatabaseInfo{}, notFound("database %q does not exist", id)
	}
	return db.info, nil
}

// Databases lists every database, ordered by id.
func (e *Engine) Databases() []DatabaseInfo {
	e.mu.RLock()
	defer e.mu.RUnlock()
	out := make([]DatabaseInfo, 0, len(e.dbs))
	for _, db := range e.dbs {
		out = append(out, db.info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// DeleteDatabase deletes a database with all its containers and items.
func (e *Engine) DeleteDatabase(id string) error {
	e.mu.Lock()
	db, ok := e.dbs[id]
	if !ok {
		e.mu.Unlock()
		return notFound("database %q does not exist", id)
	}
	m := &catalogBatch{}
	cs := make([]*Container, 0, len(db.colls))
	for _, c := range db.colls {
		c.deleteInto(m)
		cs = append(cs, c)
	}
	deleteDatabaseInto(m, id)
	if err := e.commitDeletion(m, "delete database", cs); err != nil {
		e.mu.Unlock()
		return err
	}
	delete(e.dbs, id)
	e.forgetUsersLocked(db)
	e.mu.Unlock()
	e.deleted(cs)
	return nil
}

// commitDeletion commits m, the deletion of containers cs (and maybe of
// their database), through the catalog's log; the caller holds e.mu and
// changes memory once it has returned nil. The deletion is committed
// first and memory changed after, as every catalog change is: a refused
// deletion (this node does not lead the catalog, or the store failed)
// leaves memory as it was, and with a replicated catalog the reconciler,
// which takes e.mu, never sees memory without a container the store
// still has. The record of acknowledged LSNs forgets the containers
// before the deletion commits, so that a crash right after never reads as
// data loss; if the deletion fails, the next record has them again.
func (e *Engine) commitDeletion(m *catalogBatch, what string, cs []*Container) error {
	for _, c := range cs {
		c.deleting = true
	}
	err := e.writeAckedLocked()
	if err != nil {
		err = fmt.Errorf("%w: cannot %s: %v", ErrUnavailable, what, err)
	} else {
		err = e.commitCatalog(m, what)
	}
	if err != nil {
		for _, c := range cs {
			c.deleting = false
		}
	}
	return err
}

// deleted stops the loops of deleted containers, once memory no longer
// holds them (the caller holds no engine lock: a partition's loop may be
// waiting for its proposal).
func (e *Engine) deleted(cs []*Container) {
	for _, c := range cs {
		c.stop()
	}
	if err := e.writeAcked(); err != nil {
		e.opts.Logf("parsec: %v", err)
	}
	e.refreshRates()
}

// deleteDatabaseInto records the deletion of a database's own records (not
// its containers' data) in m.
func deleteDatabaseInto(m *catalogBatch, id string) {
	m.delete(storage.DatabaseKey(id))
	lo := storage.ContainerPrefix(id)
	m.deleteRange(lo, storage.PrefixEnd(lo))
	deleteUsersInto(m, id)
	m.deleteRange(storage.EncryptionKeyPrefix(id), storage.PrefixEnd(storage.EncryptionKeyPrefix(id)))
}

// ContainerSpec is what a client gives to create or replace a container.
type ContainerSpec struct {
	ID             string
	PartitionKey   epk.Definition
	IndexingPolicy json.RawMessage
	DefaultTTL     *int64
	// SyntheticKey, when set, is the partition key as a key expression
	// (package synthkey); writes compute it (see synthetic.go).
	SyntheticKey string
	// Extra holds the other properties of the container body, echoed verbatim
	// (uniqueKeyPolicy, conflictResolutionPolicy, computedProperties, ...).
	Extra map[string]json.RawMessage
}

// DefaultIndexingPolicy is the policy of a container created without one.
var DefaultIndexingPolicy = json.RawMessage(`{"indexingMode":"consistent","automatic":true,"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/\"_etag\"/?"}]}`)

// CreateContainer creates a container with ceil(T/t) partitions of equal EPK width.
func (e *Engine) CreateContainer(dbID string, spec ContainerSpec, t Throughput) (ContainerInfo, error) {
	info, c, err := e.createContainer(dbID, spec, t)
	if err != nil {
		return ContainerInfo{}, err
	}
	// The partitions' groups, once the container is committed and its
	// partitions are in memory (with Options.Catalog only).
	e.createGroups(c)
	return info, nil
}

func (e *Engine) createContainer(dbID string, spec ContainerSpec, t Throughput) (ContainerInfo, *Container, error) {
	if err := validateResourceID("container", spec.ID); err != nil {
		return ContainerInfo{}, nil, err
	}
	if err := e.validateThroughput(t); err != nil {
		return ContainerInfo{}, nil, err
	}
	fixed := len(spec.PartitionKey.Paths) == 0
	if fixed {
		if rus := max(t.RUs, t.AutoscaleMax); rus > e.opts.FixedMaxRUs {
			return ContainerInfo{}, nil, badRequest("a container without a partition key is a fixed container: one partition of at most %d RU/s and %d bytes that never splits, so %d RU/s cannot be provisioned. Give a partition key to scale beyond that", e.opts.FixedMaxRUs, e.opts.FixedMaxBytes, rus)
		}
		spec.PartitionKey = epk.Definition{Kind: epk.Hash, Version: 2}
	} else if err := spec.PartitionKey.Validate(); err != nil {
		return ContainerInfo{}, nil, badRequest("%v", err) // the error says it is the partition key definition
	}
	if err := validateSpec(spec); err != nil {
		return ContainerInfo{}, nil, err
	}
	if _, err := specSearch(spec, spec.IndexingPolicy); err != nil {
		return ContainerInfo{}, nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	db, ok := e.dbs[dbID]
	if !ok {
		return ContainerInfo{}, nil, notFound("database %q does not exist", dbID)
	}
	if _, ok := db.colls[spec.ID]; ok {
		return ContainerInfo{}, nil, conflict("container %q already exists in database %q", spec.ID, dbID)
	}
	s, err := e.seq.take(1)
	if err != nil {
		return ContainerInfo{}, nil, err
	}
	dbRid, _ := decodeRid(db.info.Rid)
	info := ContainerInfo{
		ID: spec.ID, DB: dbID, Rid: encodeRid(binary.BigEndian.AppendUint32(dbRid, uint32(s))),
		Ts: e.now(), Seq: s, PartitionKey: spec.PartitionKey, IndexingPolicy: spec.IndexingPolicy,
		DefaultTTL: spec.DefaultTTL, SyntheticKey: spec.SyntheticKey, Extra: spec.Extra, Throughput: t.RUs, AutoscaleMax: t.AutoscaleMax,
		MaxThroughputEver: max(t.RUs, t.AutoscaleMax), Fixed: fixed, RangesSeq: s,
		IndexGen: 1, IndexFormat: index.Format, // a new container's index is complete: there are no items
	}
	if len(info.IndexingPolicy) == 0 {
		info.IndexingPolicy = DefaultIndexingPolicy
	}
	if info.Throughput == 0 && info.AutoscaleMax == 0 && db.info.Throughput == 0 && db.info.AutoscaleMax == 0 {
		info.Throughput = DefaultThroughput
	}
	info.Replicas = e.catLog.Placement()
	n := e.partitionCount(t)
	if fixed {
		n = 1
	}
	if err := e.checkNewPartitionsLocked(n); err != nil {
		return ContainerInfo{}, nil, err
	}
	info.Ranges = partition.Initial(spec.PartitionKey, n).Ranges()
	info.NextRangeID = n
	c, err := e.openContainer(info)
	if err != nil {
		return ContainerInfo{}, nil, err
	}
	// The record, and each partition's index record (the generation and
	// policy its writes maintain).
	m := &catalogBatch{seq: s}
	err = setContainer(m, info)
	for _, r := range info.Ranges {
		m.set(storage.PartitionIndexKey(c.rid, r.ID), encodeIndexRecord(info.IndexGen, info.IndexingPolicy))
	}
	if err == nil {
		err = e.commitCatalog(m, "store container")
	}
	if err != nil {
		c.stop()
		return ContainerInfo{}, nil, err
	}
	db.colls[spec.ID] = c
	go e.refreshRates()
	return info, c, nil
}

// checkNewPartitionsLocked fails with ErrBadRequest when n more physical
// partitions would take the server past Options.MaxPartitions. The caller
// holds e.mu.
func (e *Engine) checkNewPartitionsLocked(n int) error {
	total := 0
	for _, db := range e.dbs {
		for _, c := range db.colls {
			total += c.numPartitions()
		}
	}
	if total+n > e.opts.MaxPartitions {
		return badRequest("the server has %d physical partitions and allows at most %d, so the %d more that this throughput needs (one per %d RU/s) cannot be created", total, e.opts.MaxPartitions, n, e.opts.PartitionMaxRUs)
	}
	return nil
}

// Container returns an open container.
func (e *Engine) Container(dbID, id string) (*Container, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	_, c, err := e.containerLocked(dbID, id)
	return c, err
}

// containerLocked finds a container and its database; the caller holds e.mu.
func (e *Engine) containerLocked(dbID, id string) (*database, *Container, error) {
	db, ok := e.dbs[dbID]
	if !ok {
		return nil, nil, notFound("database %q does not exist", dbID)
	}
	c, ok := db.colls[id]
	if !ok {
		return nil, nil, notFound("container %q does not exist in database %q", id, dbID)
	}
	return db, c, nil
}

// Containers lists a database's containers, ordered by id.
func (e *Engine) Containers(dbID string) ([]ContainerInfo, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	db, ok := e.dbs[dbID]
	if !ok {
		return nil, notFound("database %q does not exist", dbID)
	}
	out := make([]ContainerInfo, 0, len(db.colls))
	for _, c := range db.colls {
		out = append(out, c.Info())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// ReplaceContainer replaces a container's mutable properties (indexing policy,
// default TTL and the echoed extras). The partition key cannot change.
func (e *Engine) ReplaceContainer(dbID string, spec ContainerSpec, ifMatch string) (ContainerInfo, error) {
	if err := validateSpec(spec); err != nil {
		return ContainerInfo{}, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	_, c, err := e.containerLocked(dbID, spec.ID)
	if err != nil {
		return ContainerInfo{}, err
	}
	defer c.lockRecord()()
	info := c.Info()
	if ifMatch != "" && ifMatch != "*" && ifMatch != info.Etag() {
		return ContainerInfo{}, fmt.Errorf("%w: the container's etag is %s, not %s", ErrPreconditionFailed, info.Etag(), ifMatch)
	}
	if info.Fixed && len(spec.PartitionKey.Paths) == 0 {
		spec.PartitionKey = info.PartitionKey
	}
	if !sameDefinition(spec.PartitionKey, info.PartitionKey) {
		return ContainerInfo{}, badRequest("the partition key of a container cannot be changed (it is %v %s)", info.PartitionKey.Paths, info.PartitionKey.Kind)
	}
	if spec.SyntheticKey != "" && spec.SyntheticKey != info.SyntheticKey {
		return ContainerInfo{}, badRequest("the synthetic partition key of a container cannot be changed (it is %q)", info.SyntheticKey)
	}
	if err := replaceSearch(&spec, info); err != nil {
		return ContainerInfo{}, err
	}
	reindex := len(spec.IndexingPolicy) > 0 && !sameJSON(spec.IndexingPolicy, info.IndexingPolicy)
	if reindex && e.logKeepsEntries() {
		return ContainerInfo{}, badRequest("the indexing policy of container %q cannot change: its partitions are replicated, and rebuilding their index is not replicated yet", info.ID)
	}
	s, err := e.seq.take(1)
	if err != nil {
		return ContainerInfo{}, err
	}
	info.Seq, info.Ts = s, e.now()
	if reindex {
		info.IndexingPolicy = spec.IndexingPolicy
		info.IndexGen++
		info.IndexBuilding = true
		info.IndexFormat = index.Format
	}
	info.DefaultTTL = spec.DefaultTTL
	info.Extra = spec.Extra
	if err := e.storeContainer(info); err != nil {
		return ContainerInfo{}, err
	}
	c.setRecord(info)
	if reindex {
		c.startIndexBuild(info)
	}
	return info, nil
}

// DeleteContainer deletes a container and all its items.
func (e *Engine) DeleteContainer(dbID, id string) error {
	e.mu.Lock()
	db, c, err := e.containerLocked(dbID, id)
	if err != nil {
		e.mu.Unlock()
		return err
	}
	m := &catalogBatch{}
	c.deleteInto(m)
	if err := e.commitDeletion(m, "delete container", []*Container{c}); err != nil {
		e.mu.Unlock()
		return err
	}
	delete(db.colls, id)
	e.mu.Unlock()
	e.deleted([]*Container{c})
	return nil
}

func sameDefinition(a, b epk.Definition) bool {
	if a.Kind != b.Kind || a.Version != b.Version || len(a.Paths) != len(b.Paths) {
		return false
	}
	for i := range a.Paths {
		if a.Paths[i] != b.Paths[i] {
			return false
		}
	}
	return true
}

// sameJSON reports whether two JSON texts are the same value.
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return string(a) == string(b)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

// validateThroughput checks a throughput given for a database, a container
// or an offer against Cosmos DB's minimums and the maximum of
// Options.MaxThroughput.
func (e *Engine) validateThroughput(t Throughput) error {
	if t.RUs < 0 || t.AutoscaleMax < 0 {
		return badRequest("throughput cannot be negative")
	}
	if t.RUs > 0 && t.AutoscaleMax > 0 {
		return badRequest("give either a fixed throughput or an autoscale maximum, not both")
	}
	if t.RUs > 0 && t.RUs < 400 {
		return badRequest("throughput %d RU/s is below the minimum of 400 RU/s", t.RUs)
	}
	if t.AutoscaleMax > 0 && t.AutoscaleMax < 1000 {
		return badRequest("autoscale maximum throughput %d RU/s is below the minimum of 1000 RU/s", t.AutoscaleMax)
	}
	if rus := max(t.RUs, t.AutoscaleMax); rus > e.opts.MaxThroughput {
		return badRequest("throughput %d RU/s is above the maximum of %d RU/s per container or database on this server", rus, e.opts.MaxThroughput)
	}
	return nil
}

func validateSpec(spec ContainerSpec) error {
	if spec.DefaultTTL != nil && (*spec.DefaultTTL == 0 || *spec.DefaultTTL < -1) {
		return badRequest("defaultTtl must be -1 (no default expiry) or a positive number of seconds, not %d", *spec.DefaultTTL)
	}
	if len(spec.IndexingPolicy) > 0 {
		if _, err := index.Compile(spec.IndexingPolicy); err != nil {
			return badRequest("%v", err)
		}
	}
	if spec.SyntheticKey != "" {
		if _, err := compileSynthetic(spec.SyntheticKey, spec.PartitionKey); err != nil {
			return err
		}
	}
	return nil
}

// validateResourceID checks the id of a new database or container.
func validateResourceID(what, id string) error {
	if len(id) > 255 {
		return badRequest("the %s id is %d characters long; the limit is 255", what, len(id))
	}
	return validateNewIDChars(what, id)
}

// validateNewIDChars checks the id of a resource being created: the rules
// of validateIDChars, and no control characters.
func validateNewIDChars(what, id string) error {
	if err := validateIDChars(what, id); err != nil {
		return err
	}
	for _, r := range id {
		if unicode.IsControl(r) {
			return badRequest("the %s id %q contains the control character %U; ids cannot contain control characters", what, id, r)
		}
	}
	return nil
}

// validateIDChars checks that id is not empty, is UTF-8 and has none of the
// characters ids cannot hold. It allows control characters, which item ids
// may hold.
func validateIDChars(what, id string) error {
	if id == "" {
		return badRequest("the %s id is missing or empty", what)
	}
	if !utf8.ValidString(id) {
		return badRequest("the %s id %q is not valid UTF-8", what, id)
	}
	for _, r := range id {
		switch r {
		case '/', '\\', '#':
			return badRequest("the %s id %q contains %q; ids cannot contain '/', '\\' or '#'%s", what, id, r, noQuestionMark(what))
		case '?':
			// The service creates an item whose id holds '?' (201) and
			// reads, replaces and deletes it, whether the client
			// percent-encodes the '?' in the item's link or not, although
			// its documentation lists '?' among the characters an id
			// cannot hold; other resources' ids cannot hold one.
			if what != "item" {
				return badRequest("the %s id %q contains '?'; %s ids cannot contain '/', '\\', '?' or '#'", what, id, what)
			}
		}
	}
	return nil
}

// noQuestionMark completes the message about the characters ids cannot
// hold: '?' too, except in item ids.
func noQuestionMark(what string) string {
	if what == "item" {
		return ""
	}
	return " (nor '?', except in item ids)"
}

// EachContainer calls fn for every open container, ordered by database and id.
func (e *Engine) EachContainer(fn func(db string, c *Container)) {
	for _, d := range e.Databases() {
		cs, err := e.Containers(d.ID)
		if err != nil {
			continue
		}
		for _, ci := range cs {
			if c, err := e.Container(d.ID, ci.ID); err == nil {
				fn(d.ID, c)
			}
		}
	}
}
