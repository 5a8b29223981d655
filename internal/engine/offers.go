package engine

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/parsecdb/parsec/internal/partition"
)

// Offer is the provisioned throughput of a database or a container, as the
// /offers resource shows it.
type Offer struct {
	// ID is the offer's id and rid: a sequence number in base 36, so
	// lowercase letters and digits only.
	ID string
	// ResourceRid is the rid of the database or container; DBRid is the
	// rid of the database (ResourceRid for a database offer).
	ResourceRid  string
	DBRid        string
	DB, Coll     string // Coll is empty for a database offer
	Throughput   int
	AutoscaleMax int
	// MinThroughput is the lowest throughput a replace may set now.
	MinThroughput int
	Ts            int64
	Seq           uint64
}

// Etag is the offer's quoted etag.
func (o Offer) Etag() string { return etagOf(o.Seq) }

func offerID(seq uint64) string { return strconv.FormatUint(seq, 36) }

// Offers lists the offers of every database and container that has its own
// throughput, ordered by id.
func (e *Engine) Offers() []Offer {
	e.mu.RLock()
	defer e.mu.RUnlock()
	var out []Offer
	for _, db := range e.dbs {
		if db.info.Throughput > 0 || db.info.AutoscaleMax > 0 {
			out = append(out, e.databaseOffer(db))
		}
		for _, c := range db.colls {
			if i := c.Info(); i.Throughput > 0 || i.AutoscaleMax > 0 {
				out = append(out, e.containerOffer(db, c))
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func (e *Engine) databaseOffer(db *database) Offer {
	i := db.info
	return Offer{ID: offerID(i.Seq), ResourceRid: i.Rid, DBRid: i.Rid, DB: i.ID,
		Throughput: i.Throughput, AutoscaleMax: i.AutoscaleMax, MinThroughput: 400, Ts: i.Ts, Seq: i.Seq}
}

func (e *Engine) containerOffer(db *database, c *Container) Offer {
	i := c.Info()
	return Offer{ID: offerID(i.Rid2Seq()), ResourceRid: i.Rid, DBRid: db.info.Rid,
		DB: db.info.ID, Coll: i.ID, Throughput: i.Throughput, AutoscaleMax: i.AutoscaleMax,
		MinThroughput: e.minThroughput(c), Ts: i.Ts, Seq: i.Seq}
}

// Rid2Seq is the allocator sequence number the container's rid was made of:
// stable across replaces, so the offer id never changes.
func (c ContainerInfo) Rid2Seq() uint64 {
	b, err := decodeRid(c.Rid)
	if err != nil || len(b) != 8 {
		return 0
	}
	return uint64(b[4])<<24 | uint64(b[5])<<16 | uint64(b[6])<<8 | uint64(b[7])
}

// minThroughput applies Cosmos's floor rules: at least 400 RU/s, at least
// 1 RU/s per GB stored, at least a hundredth of the highest throughput ever
// provisioned.
func (e *Engine) minThroughput(c *Container) int {
	min := 400
	var bytes int64
	for _, p := range c.Partitions() {
		bytes += p.bytes.Load()
	}
	if gb := int((bytes + (1<<30 - 1)) >> 30); gb > min {
		min = gb
	}
	if h := (c.Info().MaxThroughputEver + 99) / 100; h > min {
		min = h
	}
	return (min + 99) / 100 * 100
}

// Offer returns one offer by id.
func (e *Engine) Offer(id string) (Offer, error) {
	for _, o := range e.Offers() {
		if strings.EqualFold(o.ID, id) {
			return o, nil
		}
	}
	return Offer{}, notFound("offer %q does not exist", id)
}

// ReplaceOffer changes provisioned throughput. Raising a container's
// throughput past what its partitions can serve splits every partition into a
// power of two of equal children, so that each serves at most the
// per-partition maximum and no scale-up leaves uneven shares.
func (e *Engine) ReplaceOffer(id string, t Throughput) (Offer, error) {
	if err := e.validateThroughput(t); err != nil {
		return Offer{}, err
	}
	if t.RUs == 0 && t.AutoscaleMax == 0 {
		return Offer{}, badRequest("the offer sets neither a throughput nor an autoscale maximum")
	}
	o, err := e.Offer(id)
	if err != nil {
		return Offer{}, err
	}
	if o.Coll == "" {
		return e.replaceDatabaseThroughput(o.DB, t)
	}
	c, err := e.Container(o.DB, o.Coll)
	if err != nil {
		return Offer{}, err
	}
	rus := max(t.RUs, t.AutoscaleMax)
	if c.fixed && rus > e.opts.FixedMaxRUs {
		return Offer{}, badRequest("container %q is a fixed container (created without a partition key): it has one partition that never splits and serves at most %d RU/s, so %d RU/s cannot be provisioned", o.Coll, e.opts.FixedMaxRUs, rus)
	}
	if min := e.minThroughput(c); t.RUs > 0 && t.RUs < min {
		return Offer{}, badRequest("the minimum throughput of container %q is %d RU/s now (at least 400, 1 RU/s per GB stored, and a hundredth of the highest throughput ever set); %d RU/s is below it", o.Coll, min, t.RUs)
	}
	if err := e.checkThroughputSplit(c, rus); err != nil {
		return Offer{}, err
	}
	seq, err := e.seq.take(1)
	if err != nil {
		return Offer{}, err
	}
	if err := e.storeThroughput(c, t, rus, seq); err != nil {
		return Offer{}, err
	}
	if err := e.splitForThroughput(c, rus); err != nil {
		return Offer{}, err
	}
	e.refreshRates()
	return e.Offer(id)
}

// storeThroughput writes c's new throughput into its record. It holds e.mu
// to check that c is still the container of its name: a deletion that
// committed meanwhile must not see its record written back.
func (e *Engine) storeThroughput(c *Container, t Throughput, rus int, seq uint64) error {
	e.mu.RLock()
	defer e.mu.RUnlock()
	info := c.Info()
	if _, cur, err := e.containerLocked(info.DB, info.ID); err != nil || cur != c {
		return notFound("container %q does not exist in database %q", info.ID, info.DB)
	}
	defer c.lockRecord()()
	info = c.Info()
	info.Throughput, info.AutoscaleMax = t.RUs, t.AutoscaleMax
	info.MaxThroughputEver = max(info.MaxThroughputEver, rus)
	info.Seq, info.Ts = seq, e.now()
	if err := e.storeContainer(info); err != nil {
		return err
	}
	c.setRecord(info)
	return nil
}

// checkThroughputSplit fails with ErrBadRequest when the partitions that
// splitForThroughput would add to c for rus would take the server past
// Options.MaxPartitions.
func (e *Engine) checkThroughputSplit(c *Container, rus int) error {
	if c.fixed {
		return nil
	}
	n := c.numPartitions()
	k := partition.ThroughputSplit(rus, n, e.opts.PartitionMaxRUs)
	if k == 1 {
		return nil
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.checkNewPartitionsLocked(n * (k - 1))
}

// splitForThroughput splits every partition of c into 2^k equal children,
// with the smallest k that brings each partition's share of rus to at most
// the per-partition maximum.
func (e *Engine) splitForThroughput(c *Container, rus int) error {
	if c.fixed || partition.ThroughputSplit(rus, len(c.Partitions()), e.opts.PartitionMaxRUs) == 1 {
		return nil
	}
	// The node changing the throughput splits every partition itself, one
	// after the other, so that the children's range ids, which it takes
	// from the container's record, never repeat: it first applies every
	// split already committed, then takes the leadership of each partition
	// it splits (at once with a local log).
	r := e.log
	ctx, cancel := context.WithTimeout(context.Background(), proposeTimeout)
	defer cancel()
	if err := r.Barrier(ctx, c.groupIDs()); err != nil {
		return fmt.Errorf("%w: the partitions cannot be split now: %w", ErrUnavailable, err)
	}
	parts := c.Partitions() // as the committed splits left them
	k := partition.ThroughputSplit(rus, len(parts), e.opts.PartitionMaxRUs)
	if k == 1 {
		return nil
	}
	for _, p := range parts {
		bounds, err := partition.EvenBounds(c.def, p.Range(), k)
		if err != nil {
			return fmt.Errorf("%w: cannot split partition key range %s: %v", ErrBadRequest, p.ID(), err)
		}
		if err := r.Lead(ctx, p.GroupID()); err != nil {
			return fmt.Errorf("%w: partition key range %s cannot be split now: %w", ErrUnavailable, p.ID(), err)
		}
		if _, err := c.splitPartition(p, bounds); err != nil {
			return err
		}
	}
	return nil
}

func (e *Engine) replaceDatabaseThroughput(id string, t Throughput) (Offer, error) {
	seq, err := e.seq.take(1)
	if err != nil {
		return Offer{}, err
	}
	e.mu.Lock()
	db, ok := e.dbs[id]
	if !ok {
		e.mu.Unlock()
		return Offer{}, notFound("database %q does not exist", id)
	}
	info := db.info
	info.Throughput, info.AutoscaleMax = t.RUs, t.AutoscaleMax
	info.Seq, info.Ts = seq, e.now()
	if err := e.storeDatabase(info); err != nil {
		e.mu.Unlock()
		return Offer{}, err
	}
	db.info = info
	o := e.databaseOffer(db)
	e.mu.Unlock()
	e.refreshRates()
	return o, nil
}
