package engine

import (
	"bytes"
	"strconv"
	"time"

	"github.com/parsecdb/parsec/internal/epk"
	"github.com/parsecdb/parsec/internal/jsondoc"
	"github.com/parsecdb/parsec/internal/query/eval"
	"github.com/parsecdb/parsec/internal/query/exec"
	"github.com/parsecdb/parsec/internal/storage"
)

// Time to live. A container with a defaultTtl (-1: on, no default; n: n
// seconds) expires its items ttl seconds after their last write (_ts),
// where ttl is the item's own "ttl" property if it has one, else the
// container's default; -1 never expires. Without a defaultTtl nothing
// expires, whatever the items say.
//
// An expired item is invisible at once: point reads, read feeds, queries
// and the change feed skip it, and an operation of a command (a write, or
// a read of a transactional batch or bulk request) that finds it first
// deletes it (an ordinary delete command, conditional on its etag) so that
// the operation sees no item. In the background, sweepExpired deletes
// expired items with the same commands, a bounded number per partition and
// tick, so the index, the change feed and a replica's copy stay consistent
// with the items.

// maxTTL is the largest ttl the service accepts.
const maxTTL = 2147483647

// ttlPaths are the properties expiry reads.
var ttlPaths = [][]string{{"ttl"}, {"_ts"}}

// checkItemTTL checks an item's "ttl" property (raw JSON), as the service
// does: -1 or a whole number of seconds from 1 to 2147483647.
func checkItemTTL(raw []byte) error {
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || n == 0 || n < -1 || n > maxTTL {
		return badRequest("The input ttl '%s' is invalid. Ensure to provide a nonzero positive integer less than or equal to '%d', or '-1' which means never expire.", abbreviate(raw), maxTTL)
	}
	return nil
}

// checkDocTTL checks the "ttl" property of a document, if it has one.
func checkDocTTL(doc []byte) error {
	if !bytes.Contains(doc, []byte(`"ttl"`)) {
		return nil
	}
	s, err := jsondoc.Scan(doc, ttlPaths[:1])
	if err != nil || s.Values[0] == nil {
		return nil // invalid JSON is reported elsewhere; "ttl" was a value
	}
	return checkItemTTL(s.Values[0])
}

// expiry is a container's time to live at one instant; nil when the
// container has none, and then nothing expires.
type expiry struct {
	def int64 // the container's defaultTtl
	now int64 // epoch seconds
}

// expiry returns the container's time to live now (nil: off).
func (c *Container) expiry() *expiry {
	d := c.info.Load().DefaultTTL // no copy of the record: this is on every read
	if d == nil {
		return nil
	}
	return &expiry{def: *d, now: c.e.now()}
}

// CountKnown returns the container's item count when it is known without
// reading the items: ok is false when some of them may have expired (the
// container has a time to live), and the committed count would include
// items no read returns.
func (c *Container) CountKnown() (items int64, ok bool) {
	if c.expiry() != nil {
		return 0, false
	}
	items, _ = c.Usage()
	return items, true
}

// expired reports whether a stored document has expired.
func (x *expiry) expired(doc []byte) bool {
	if x == nil {
		return false
	}
	s, err := jsondoc.Scan(doc, ttlPaths)
	if err != nil {
		return false
	}
	ttl, errTTL := strconv.ParseInt(string(s.Values[0]), 10, 64)
	ts, errTs := strconv.ParseInt(string(s.Values[1]), 10, 64)
	return x.past(ttl, errTTL == nil, ts, errTs == nil)
}

// past reports whether an item written at ts (hasTs: it has a _ts) with
// the ttl property ttl (hasTTL: it has one) has expired. A ttl that is not
// valid is ignored, as if absent (writes refuse them; older items may hold
// one).
func (x *expiry) past(ttl int64, hasTTL bool, ts int64, hasTs bool) bool {
	if !hasTTL || ttl != -1 && (ttl <= 0 || ttl > maxTTL) {
		ttl = x.def
	}
	return hasTs && ttl >= 0 && ts+ttl <= x.now
}

// clearExpired deletes, before a command, the expired items its
// operations would find, so that they find none (a read among them reads
// as not found, as a point read does): one conditional delete command per
// item, applied like any other (a concurrent write that revived the item
// makes it fail harmlessly).
func (c *Container) clearExpired(p *Partition, x *expiry, ops []Op) error {
	var dels []Op
	for i := range ops {
		op := &ops[i]
		key := storage.ItemKey(nil, c.rid, op.EPK, op.ID)
		v, err := c.e.store.Get(nil, key)
		if err == storage.ErrNotFound {
			continue
		}
		if err != nil {
			return err
		}
		_, etag, doc, err := decodeItem(key, v)
		if err != nil {
			return err
		}
		if x.expired(doc) {
			dels = append(dels, Op{Kind: OpDelete, ID: op.ID, Key: op.Key, EPK: op.EPK, IfMatch: string(etag)})
		}
	}
	if len(dels) == 0 {
		return nil
	}
	_, err := p.submit(&request{cmd: &Command{Ops: dels, Ts: c.e.now(), Limits: c.storeLimits, Versions: c.versionRetention() > 0, Expired: true}})
	return err
}

// Sweeping: every partition of a container with a time to live is scanned
// a slice at a time, from where the previous tick stopped, and the expired
// items found are deleted.
const (
	// DefaultTTLSweepInterval is how often expired items are swept.
	DefaultTTLSweepInterval = time.Second
	// ttlSweepScan bounds the items one partition's sweep reads per tick,
	// and ttlSweepDeletes the deletes it submits.
	ttlSweepScan    = 2000
	ttlSweepDeletes = 100
)

// sweepLoop sweeps every container with a time to live, and trims every
// version log past its retention, each interval.
func (e *Engine) sweepLoop(interval time.Duration, stop <-chan struct{}, done chan<- struct{}) {
	every(interval, stop, done, func() {
		e.EachContainer(func(db string, c *Container) {
			if _, err := c.SweepExpired(); err != nil {
				e.opts.Logf("parsec: container %s/%s: sweeping expired items: %v", db, c.Info().ID, err)
			}
			if e.catalogKeepsEntries() {
				return // not yet (TrimVersions); Open said so
			}
			if _, err := c.TrimVersions(); err != nil {
				e.opts.Logf("parsec: container %s/%s: trimming the version log: %v", db, c.Info().ID, err)
			}
		})
	})
}

// SweepExpired runs one tick of the sweep of c: for each partition, it
// reads the next slice of items and deletes the expired ones. It returns
// how many it deleted.
func (c *Container) SweepExpired() (int, error) {
	x := c.expiry()
	if x == nil {
		return 0, nil
	}
	deleted := 0
	for _, p := range c.Partitions() {
		n, err := c.sweepPartition(p, x)
		deleted += n
		if err != nil {
			return deleted, err
		}
	}
	return deleted, nil
}

// sweepPartition sweeps the next slice of p (see SweepExpired).
func (c *Container) sweepPartition(p *Partition, x *expiry) (int, error) {
	if !c.e.log.Leads(p.GroupID()) {
		return 0, nil // the leader's sweep deletes, through the log
	}
	lo, hi := storage.ItemSpan(c.rid, p.info.Min, openMax(p.info.Max))
	p.sweepMu.Lock()
	defer p.sweepMu.Unlock()
	if bytes.Compare(p.sweepFrom, lo) > 0 && bytes.Compare(p.sweepFrom, hi) < 0 {
		lo = p.sweepFrom
	}
	var dels []Op
	scanned := 0
	var last []byte
	err := c.e.store.Iterate(lo, hi, func(k, v []byte) (bool, error) {
		if scanned >= ttlSweepScan || len(dels) >= ttlSweepDeletes {
			return false, nil
		}
		scanned++
		last = append(last[:0], k...)
		_, etag, doc, err := decodeItem(k, v)
		if err != nil {
			return false, err
		}
		if !x.expired(doc) {
			return true, nil
		}
		e, id, _ := storage.SplitItemKey(k)
		key, err := c.keyOfStored(doc)
		if err != nil {
			return false, err
		}
		dels = append(dels, Op{Kind: OpDelete, ID: string(id), Key: key, EPK: string(e), IfMatch: string(etag)})
		return true, nil
	})
	if err != nil {
		return 0, err
	}
	if scanned < ttlSweepScan && len(dels) < ttlSweepDeletes {
		p.sweepFrom = nil // the end: the next tick starts over
	} else {
		p.sweepFrom = append(append(p.sweepFrom[:0], last...), 0)
	}
	if len(dels) == 0 {
		return 0, nil
	}
	res, err := p.submit(&request{cmd: &Command{Ops: dels, Ts: c.e.now(), Limits: c.storeLimits, Versions: c.versionRetention() > 0, Expired: true}})
	n := 0
	for _, r := range res {
		if r.Err == nil {
			n++
		}
	}
	return n, err
}

// keyOfStored reads the partition key of a stored document.
func (c *Container) keyOfStored(doc []byte) (epk.Key, error) {
	sc, err := jsondoc.Scan(doc, c.paths)
	if err != nil {
		return nil, corrupt("a stored document is not valid JSON: %v", err)
	}
	return keyOf(sc.Values)
}

// unexpiredSource is a query source without the expired items of src.
type unexpiredSource struct {
	src exec.Source
	x   *expiry
}

func (u *unexpiredSource) Next() ([]byte, eval.Value, bool, error) {
	for {
		key, doc, ok, err := u.src.Next()
		if err != nil || !ok || !u.x.expiredDoc(doc) {
			return key, doc, ok, err
		}
	}
}

// Seek passes a resume point on to src, when it can skip ahead.
func (u *unexpiredSource) Seek(key []byte) error {
	if sk, ok := u.src.(exec.Seeker); ok {
		return sk.Seek(key)
	}
	return nil
}

// expiredDoc is expired for a decoded document.
func (x *expiry) expiredDoc(doc eval.Value) bool {
	ttl, hasTTL := doc.Property("ttl").AsInt()
	ts, hasTs := doc.Property("_ts").AsInt()
	return x.past(ttl, hasTTL, ts, hasTs)
}
