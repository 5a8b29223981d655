package engine

import (
	"bytes"
	"sort"
	"time"

	"github.com/parsecdb/parsec/internal/epk"
	"github.com/parsecdb/parsec/internal/storage"
	"github.com/parsecdb/parsec/internal/throughput"
)

// hotKeyHalfLife is how fast old traffic fades from the hot-key sketch: the
// 429 body names the key that consumed the budget recently, not last week.
const hotKeyHalfLife = 10 * time.Second

// admit decides whether p may start a request now. Metering always runs;
// only the refusal is switched off by Options.NoThrottle.
func (p *Partition) admit(now time.Time) error {
	if p.c.e.opts.NoThrottle {
		return nil
	}
	m := &p.meter
	m.mu.Lock()
	ok, retry := m.bucket.Admit(now)
	if ok {
		m.mu.Unlock()
		return nil
	}
	m.throttled++
	te := &ThrottledError{RetryAfter: retry, RangeID: p.info.ID, Range: p.info, RUs: m.bucket.Snapshot(now).Rate}
	if top := m.topRU.Top(1); len(top) > 0 && m.topRU.Total() > 0 {
		te.HotKey, te.HotShare = top[0].Key, top[0].Weight/m.topRU.Total()
	}
	m.mu.Unlock()
	return te
}

// record charges ru to p's budget and attributes it to a logical key.
func (p *Partition) record(now time.Time, key epk.Key, ru float64) {
	m := &p.meter
	var kb [64]byte
	ks := string(key.AppendJSON(kb[:0]))
	m.mu.Lock()
	m.bucket.Charge(now, ru)
	m.consumed += ru
	if d := now.Sub(m.lastDecay); d >= hotKeyHalfLife {
		m.topRU.Decay(0.5)
		m.lastDecay = now
	}
	m.topRU.Add(ks, ru)
	m.mu.Unlock()
}

// charge charges ru to p's budget without attributing it to a key (a read
// feed page spans many keys).
func (p *Partition) charge(now time.Time, ru float64) {
	p.meter.mu.Lock()
	p.meter.bucket.Charge(now, ru)
	p.meter.consumed += ru
	p.meter.mu.Unlock()
}

// rate is p's throughput, RU/s.
func (p *Partition) rate(now time.Time) float64 {
	p.meter.mu.Lock()
	defer p.meter.mu.Unlock()
	return p.meter.bucket.Snapshot(now).Rate
}

func (p *Partition) setRate(rate float64, now time.Time) {
	p.meter.mu.Lock()
	p.meter.bucket.SetRate(rate, now)
	p.meter.mu.Unlock()
}

// refreshRates recomputes every partition's budget: a container's own
// throughput divided over its partitions, or, for containers without one,
// their database's throughput divided over all their partitions together.
func (e *Engine) refreshRates() {
	now := e.opts.Now()
	e.mu.RLock()
	defer e.mu.RUnlock()
	for _, db := range e.dbs {
		t := float64(db.info.Throughput)
		if db.info.AutoscaleMax > 0 {
			t = float64(db.info.AutoscaleMax)
		}
		shared := 0
		for _, c := range db.colls {
			if i := c.Info(); i.Throughput == 0 && i.AutoscaleMax == 0 {
				shared += len(c.Partitions())
			}
		}
		for _, c := range db.colls {
			c.mu.Lock()
			if i := c.Info(); i.Throughput == 0 && i.AutoscaleMax == 0 && shared > 0 {
				c.sharedRUs = t * float64(len(c.parts)) / float64(shared)
			}
			rate := c.partitionRate(len(c.parts))
			for _, p := range c.parts {
				p.setRate(rate, now)
			}
			c.mu.Unlock()
		}
	}
}

// KeyWeight is a logical partition key (its JSON text) and an amount (RU
// or bytes).
type KeyWeight struct {
	Key    string
	Weight float64
}

// PartitionStats is the telemetry of one physical partition. The API layer
// owns its wire shape.
type PartitionStats struct {
	ID           string
	MinInclusive string
	MaxExclusive string
	Parents      []string // never nil
	BudgetRUs    float64  // RU/s
	ConsumedRUs  float64  // RU charged since the partition started
	Throttled    uint64   // requests refused for budget
	Bytes        int64
	Items        int64
	LSN          uint64
	HotByRU      []KeyWeight // nil when the partition has had no traffic
	HotByBytes   []KeyWeight
}

// Stats returns the telemetry of every current partition. The top keys by
// storage are exact (from the logical partition records); the top keys by RU
// come from a streaming sketch with recent traffic weighted most.
func (c *Container) Stats(top int) ([]PartitionStats, error) {
	now := c.e.opts.Now()
	var out []PartitionStats
	for _, p := range c.Partitions() {
		s := PartitionStats{ID: p.info.ID, MinInclusive: p.info.Min, MaxExclusive: p.info.Max, Parents: p.info.Parents,
			Bytes: p.bytes.Load(), Items: p.items.Load(), LSN: p.LSN()}
		if s.Parents == nil {
			s.Parents = []string{}
		}
		p.meter.mu.Lock()
		s.BudgetRUs = p.meter.bucket.Snapshot(now).Rate
		s.ConsumedRUs = p.meter.consumed
		s.Throttled = p.meter.throttled
		for _, e := range p.meter.topRU.Top(top) {
			s.HotByRU = append(s.HotByRU, KeyWeight{Key: e.Key, Weight: e.Weight})
		}
		p.meter.mu.Unlock()
		byBytes, err := c.topByStorage(p, top)
		if err != nil {
			return nil, err
		}
		s.HotByBytes = byBytes
		out = append(out, s)
	}
	return out, nil
}

// topByStorage returns p's largest logical partitions, exactly, largest
// first. It walks every logical partition record of p but holds only the n
// largest, and allocates a key only when it enters them.
func (c *Container) topByStorage(p *Partition, n int) ([]KeyWeight, error) {
	max := p.info.Max
	if max == epk.MaxEPK {
		max = ""
	}
	lo, hi := storage.LogicalSpan(c.rid, p.info.Min, max)
	top := make([]KeyWeight, 0, n)
	err := c.e.store.Iterate(lo, hi, func(k, v []byte) (bool, error) {
		ls, err := decodeLogicalState(k, v)
		if err != nil {
			return false, err
		}
		w := float64(ls.Bytes)
		if n <= 0 || (len(top) == n && w <= top[n-1].Weight) {
			return true, nil
		}
		key := k[1+storage.RidLen:]
		key = key[bytes.IndexByte(key, 0)+1:]
		i := sort.Search(len(top), func(i int) bool { return top[i].Weight < w })
		if len(top) < n {
			top = append(top, KeyWeight{})
		}
		copy(top[i+1:], top[i:])
		top[i] = KeyWeight{Key: string(key), Weight: w}
		return true, nil
	})
	return top, err
}

// chargeOf is the request charge of one executed operation op, priced by
// the index terms apply wrote under the container's policy (none when its
// indexing mode is none): a create or upsert by the new version's size and
// terms, a delete by the old one's, a replace and a patch by both sizes and
// the terms that changed.
func chargeOf(op *Op, r *OpResult) float64 {
	if r.Err != nil {
		return throughput.FailedCharge
	}
	switch op.Kind {
	case OpRead:
		return throughput.ReadCharge(len(r.Doc))
	case OpDelete:
		return throughput.DeleteCharge(len(r.Doc), r.idx.terms)
	case OpReplace:
		return throughput.ReplaceCharge(r.oldSize, len(r.Doc), r.idx.changed)
	case OpPatch:
		return throughput.PatchCharge(r.oldSize, len(r.Doc), r.idx.changed, len(op.Patch))
	}
	return throughput.WriteCharge(len(r.Doc), r.idx.terms)
}
