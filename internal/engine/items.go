package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/parsecdb/parsec/internal/epk"
	"github.com/parsecdb/parsec/internal/jsondoc"
	"github.com/parsecdb/parsec/internal/storage"
	"github.com/parsecdb/parsec/internal/throughput"
)

// MaxItemBytes is the largest item body accepted (Cosmos's 2 MB limit).
const MaxItemBytes = 2 << 20

// MaxBatchOps is the most operations one transactional batch may hold.
const MaxBatchOps = 100

// MaxIDBytes is the longest item id, in UTF-8 bytes (Cosmos's limit).
const MaxIDBytes = 1023

// MaxKeyStringBytes is the longest string a partition key value may be, in
// UTF-8 bytes (Cosmos's limit for hash v2 keys; hashing reads only the
// first 101 bytes, but the whole value is the item's key).
const MaxKeyStringBytes = 2048

// validateItemID checks the id of an item: 1 to MaxIDBytes bytes of UTF-8
// without the characters ids cannot hold. Control characters are allowed,
// as the service allows them: storage keys frame the id by its length.
func validateItemID(id string) error {
	if len(id) > MaxIDBytes {
		return badRequest("the item id is %d bytes long; the limit is %d bytes", len(id), MaxIDBytes)
	}
	return validateIDChars("item", id)
}

// checkKeyLength refuses a partition key with a string value longer than
// MaxKeyStringBytes.
func checkKeyLength(k epk.Key) error {
	for _, c := range k {
		if c.Kind == epk.KindString && len(c.Str) > MaxKeyStringBytes {
			return badRequest("the partition key value %s is %d bytes long; the limit is %d bytes",
				abbreviate([]byte(c.Str)), len(c.Str), MaxKeyStringBytes)
		}
	}
	return nil
}

// ErrNoPartitionKey is the error of a request on a container with a
// partition key that gave none. It wraps ErrPartitionKeyMismatch.
var ErrNoPartitionKey = fmt.Errorf("%w: the partition key is required", ErrPartitionKeyMismatch)

// ResolveKey checks a partition key given by a client (the header) against the
// container's definition. An empty key stands for an item without a value at
// the partition-key path: every component undefined.
func (c *Container) ResolveKey(k epk.Key) (epk.Key, error) {
	if c.fixed {
		if len(k) == 0 || (len(k) == 1 && k[0].Kind == epk.KindUndefined) {
			return epk.Key{}, nil
		}
		return nil, fmt.Errorf("%w: the container has no partition key (it is a fixed container), so requests must not give one; got %s", ErrPartitionKeyMismatch, k)
	}
	n := len(c.paths)
	if len(k) == 0 {
		k = make(epk.Key, n)
		for i := range k {
			k[i] = epk.Component{Kind: epk.KindUndefined}
		}
		return k, nil
	}
	if len(k) != n {
		return nil, fmt.Errorf("%w: the partition key %s has %d value(s), but the container's partition key %s has %d path(s)",
			ErrPartitionKeyMismatch, k, len(k), strings.Join(c.def.Paths, ", "), n)
	}
	return k, nil
}

// PrepareWrite validates a document for a create, upsert or replace and
// returns the prepared operation. header is the partition key the client
// sent; it must match the document's.
func (c *Container) PrepareWrite(kind OpKind, body []byte, header epk.Key, hasHeader bool) (Op, error) {
	if len(body) > MaxItemBytes {
		return Op{}, fmt.Errorf("%w: the item is %d bytes; the limit is %d bytes", ErrTooLarge, len(body), MaxItemBytes)
	}
	sc, err := jsondoc.Scan(body, c.scanPaths)
	if err != nil {
		if errors.Is(err, jsondoc.ErrNotObject) {
			return Op{}, badRequest("the item must be a JSON object")
		}
		return Op{}, badRequest("the item is not valid JSON: %v", err)
	}
	if sc.ID == nil {
		return Op{}, badRequest("the item has no \"id\" property")
	}
	if err := checkDocTTL(body); err != nil {
		return Op{}, err
	}
	id, ok := jsondoc.UnquoteString(sc.ID)
	if !ok {
		return Op{}, badRequest("the item's \"id\" must be a string, not %s", abbreviate(sc.ID))
	}
	if u := jsondoc.UnpairedSurrogate(sc.ID); u != "" {
		return Op{}, badRequest("the item's id %s contains %s, a UTF-16 surrogate without its pair; ids must be valid Unicode text", abbreviate(sc.ID), u)
	}
	if err := validateItemID(id); err != nil {
		return Op{}, err
	}
	key, err := keyOf(sc.Values[:len(c.paths)])
	if err != nil {
		return Op{}, badRequest("the item's partition key (%s) is invalid: %v", strings.Join(c.def.Paths, ", "), err)
	}
	if c.synth != nil {
		if key, body, err = c.synthesize(body, sc.Values[:len(c.paths)], sc.Values[len(c.paths):]); err != nil {
			return Op{}, err
		}
		fits, err := c.headerFits(header, key)
		if err != nil {
			return Op{}, err
		}
		if !fits {
			return Op{}, fmt.Errorf("%w: the partition key in the request, %s, is neither the item's synthetic partition key %s = %s nor the base values (%s) that give it",
				ErrPartitionKeyMismatch, header, strings.Join(c.def.Paths, ", "), key, strings.Join(c.synth.Paths(), ", "))
		}
	} else {
		if !hasHeader && !c.fixed {
			return Op{}, ErrNoPartitionKey
		}
		hk, err := c.ResolveKey(header)
		if err != nil {
			return Op{}, err
		}
		if !hk.Equal(key) {
			return Op{}, fmt.Errorf("%w: PartitionKey extracted from document doesn't match the one specified in the header: the request gives %s, the item's partition key %s is %s",
				ErrPartitionKeyMismatch, hk, strings.Join(c.def.Paths, ", "), key)
		}
	}
	if err := checkKeyLength(key); err != nil {
		return Op{}, err
	}
	e, err := c.epkOf(key)
	if err != nil {
		return Op{}, err
	}
	body = jsondoc.StripSystem(nil, body)
	return Op{Kind: kind, ID: id, Key: key, EPK: e, Body: body, terms: c.bodyTerms(body)}, nil
}

// PrepareKeyed returns an operation on an existing item addressed by partition
// key and id (read, delete, patch).
func (c *Container) PrepareKeyed(kind OpKind, id string, header epk.Key, hasHeader bool) (Op, error) {
	if err := validateItemID(id); err != nil {
		return Op{}, err
	}
	if !hasHeader && !c.fixed {
		return Op{}, ErrNoPartitionKey
	}
	keys, isBase, err := c.baseHeader(header)
	if err != nil {
		return Op{}, err
	}
	var key epk.Key
	switch {
	case isBase && len(keys) > 1:
		if key, err = c.locate(keys, id); err != nil {
			return Op{}, err
		}
	case isBase:
		key = keys[0]
	default:
		if key, err = c.ResolveKey(header); err != nil {
			return Op{}, err
		}
	}
	if err := checkKeyLength(key); err != nil {
		return Op{}, err
	}
	e, err := c.epkOf(key)
	if err != nil {
		return Op{}, err
	}
	return Op{Kind: kind, ID: id, Key: key, EPK: e}, nil
}

func abbreviate(raw []byte) string {
	if len(raw) > 40 {
		return string(raw[:40]) + "..."
	}
	return string(raw)
}

// Session is the position in a partition's log that a response reflects:
// the partition that served the request and its last committed LSN. A
// client that reads with it sees at least that LSN. The zero Session names
// no partition (the request failed before one was chosen). The API layer
// renders it as a session token.
type Session struct {
	RangeID string
	LSN     uint64
}

// Execute runs a command on the partition that owns its operations and waits
// until it is durable. All operations must belong to one partition. If
// rangeID is not empty, the client addressed that range: it must be current
// and own every operation's EPK, so that a client that hashes differently
// fails instead of misplacing data. The partition's budget is checked before
// and charged after; each result carries its charge.
func (c *Container) Execute(cmd *Command, rangeID string) ([]OpResult, Session, error) {
	if len(cmd.Ops) == 0 {
		return nil, Session{}, badRequest("the batch has no operations")
	}
	if cmd.Atomic {
		for i := range cmd.Ops {
			if k := cmd.Ops[i].Key; !k.Equal(cmd.Ops[0].Key) {
				return nil, Session{}, fmt.Errorf("%w: %s (operation %d has %s, operation 0 has %s)",
					ErrPartitionKeyMismatch, MsgBatchKeyMismatch, i, k, cmd.Ops[0].Key)
			}
		}
	}
	var p *Partition
	if rangeID != "" {
		var err error
		if p, err = c.PartitionByID(rangeID); err != nil {
			return nil, Session{}, err
		}
	} else {
		p = c.PartitionFor(cmd.Ops[0].EPK)
	}
	r := p.Range()
	for i := range cmd.Ops {
		if e := cmd.Ops[i].EPK; e < r.Min || (e >= r.Max && r.Max != "FF") {
			if rangeID != "" {
				return nil, Session{}, fmt.Errorf("%w: partition key %s (effective key %s) does not belong to partition key range %q [%s, %s)",
					ErrPartitionKeyMismatch, cmd.Ops[i].Key, e, rangeID, r.Min, r.Max)
			}
			return nil, Session{}, badRequest("all operations of a batch must have the same partition key")
		}
	}
	// A store that cannot take writes (disk nearly full, or failed) refuses
	// here, before the request is charged or queued behind a stalled commit.
	if err := c.e.store.Ready(); err != nil {
		return nil, Session{}, fmt.Errorf("%w: cannot write: %v", ErrUnavailable, err)
	}
	now := c.e.opts.Now()
	if err := p.admit(now); err != nil {
		return nil, p.Session(), err
	}
	if x := c.expiry(); x != nil {
		if err := c.clearExpired(p, x, cmd.Ops); err != nil {
			return nil, p.Session(), err
		}
	}
	if cmd.Ts == 0 {
		// A script's writes carry the time their documents show.
		cmd.Ts = now.Unix()
	}
	cmd.Versions = c.versionRetention() > 0
	cmd.Limits = c.storeLimits
	res, err := p.submit(&request{cmd: cmd, named: rangeID != ""})
	if err != nil {
		return nil, p.Session(), err
	}
	// The partition that applied it may be a child of p, after a split.
	applied := c.PartitionFor(cmd.Ops[0].EPK)
	for i := range res {
		res[i].Charge = chargeOf(&cmd.Ops[i], &res[i])
		applied.record(now, cmd.Ops[i].Key, res[i].Charge)
	}
	return res, applied.Session(), nil
}

// ReadItem reads one item: its stored document (with system properties), its
// etag, and the charge, after checking the partition's budget.
func (c *Container) ReadItem(op Op) (r OpResult, s Session, err error) {
	p := c.PartitionFor(op.EPK)
	s = p.Session()
	now := c.e.opts.Now()
	if err := p.admit(now); err != nil {
		return r, s, err
	}
	if r, err = c.readItem(op); err != nil {
		return r, s, err
	}
	p.record(now, op.Key, r.Charge)
	return r, s, r.Err
}

// readItem reads one item from storage, without metering.
func (c *Container) readItem(op Op) (OpResult, error) {
	var r OpResult
	key := storage.ItemKey(nil, c.rid, op.EPK, op.ID)
	c.e.installMu.RLock()
	v, err := c.e.store.Get(nil, key)
	c.e.installMu.RUnlock()
	switch {
	case err == storage.ErrNotFound:
		r = OpResult{Err: notFound("no item with id %q in partition %s", op.ID, op.Key)}
	case err != nil:
		return r, fmt.Errorf("%w: cannot read item: %v", ErrUnavailable, err)
	default:
		_, et, d, err := decodeItem(key, v)
		if err != nil {
			return r, err
		}
		if c.expiry().expired(d) {
			r = OpResult{Err: notFound("no item with id %q in partition %s", op.ID, op.Key)}
			break
		}
		r = OpResult{Doc: d, Etag: string(et)}
	}
	read := Op{Kind: OpRead}
	r.Charge = chargeOf(&read, &r)
	return r, nil
}

// Feed is one page of a read feed.
type Feed struct {
	Docs [][]byte
	// Next is where the next page starts, to be passed to ReadFeed as
	// after with the same range id; nil on the last page. It is the key of
	// the page's last item within the container, opaque to the caller.
	Next     []byte
	Sessions []Session
	// Charge is the page's request charge in RU.
	Charge float64
	bytes  int // the documents' size, which a page bounds (maxPageBytes)
}

// DefaultPageSize is the page size of a feed when the client sets none.
const DefaultPageSize = 100

const maxPageBytes = 4 << 20

// ReadFeed returns a page of items. Of one range when rangeID is set: in
// the order the items were created, which is the order of their "_rid",
// as the service returns a partition's feed. Of the whole container
// otherwise: range after range in EPK order, each in creation order. after,
// when not nil, is the Next of the previous page of the same feed: the page
// starts after it. maxItems <= 0 means the server's choice.
func (c *Container) ReadFeed(rangeID string, after []byte, maxItems int) (Feed, error) {
	if maxItems <= 0 {
		maxItems = 1 << 30 // bounded by maxPageBytes
	}
	if rangeID != "" {
		var pos uint64
		if after != nil {
			if len(after) != 8 {
				return Feed{}, badContinuation("it does not belong to a read feed of partition key range %s", rangeID)
			}
			pos = binary.BigEndian.Uint64(after)
		}
		p, err := c.PartitionByID(rangeID)
		if err != nil {
			return Feed{}, err
		}
		// The page is read from a snapshot of the range, so that the page
		// and its session token agree.
		snap, err := p.Snapshot()
		if err != nil {
			return Feed{}, err
		}
		defer snap.Close()
		f := Feed{Sessions: []Session{snap.Session()}}
		reached, more, err := c.readCreated(&f, snap, snap.Range.Min, snap.Range.Max, pos, maxItems)
		if more {
			f.Next = binary.BigEndian.AppendUint64(nil, reached)
		}
		return f, err
	}
	// The whole container, range after range in EPK order. A position is
	// the EPK bounds [lo, hi) of the range being read when the page ended
	// and the sequence number reached in it.
	var f Feed
	lo, hi, pos := "", "", uint64(0)
	if after != nil {
		var ok bool
		if lo, hi, pos, ok = decodeFeedPosition(after); !ok {
			return f, badContinuation("it does not belong to a read feed of the whole container")
		}
	} else {
		r := c.Partitions()[0].Range()
		lo, hi = r.Min, r.Max
	}
	for _, p := range c.Partitions() {
		f.Sessions = append(f.Sessions, p.Session())
	}
	// The index entries and the items they name are read from one
	// snapshot, so that they agree.
	snap := c.e.readView()
	defer snap.Close()
	for {
		reached, more, err := c.readCreated(&f, snap, lo, hi, pos, maxItems)
		if err != nil || more {
			pos = reached
			if more {
				f.Next = encodeFeedPosition(lo, hi, pos)
			}
			return f, err
		}
		if hi == epk.MaxEPK {
			return f, nil
		}
		r := c.PartitionFor(hi).Range()
		lo, hi, pos = r.Min, r.Max, 0
		if len(f.Docs) >= maxItems || f.bytes >= maxPageBytes {
			f.Next = encodeFeedPosition(lo, hi, 0)
			return f, nil
		}
	}
}

// readCreated adds to f the items whose EPK lies in [lo, hi), in creation
// order, from past the sequence number pos, up to maxItems items in f,
// reading from rd (a snapshot). It returns the position reached, and
// whether items remain.
//
// The items of [lo, hi) were each created by a range that covered their
// EPK then: an ancestor of a range that covers it now. So the entries to
// read are in the resource-id index blocks of the lineages of the ranges
// that overlap [lo, hi) now, and since a block's range number is greater
// than those of every range older than it, these blocks in number order
// are in sequence order: a position stays valid however [lo, hi) splits
// between pages.
func (c *Container) readCreated(f *Feed, rd stateReader, lo, hi string, pos uint64, maxItems int) (uint64, bool, error) {
	var parts []*Partition
	for _, p := range c.Partitions() {
		if r := p.Range(); r.Max > lo && r.Min < hi {
			parts = append(parts, p)
		}
	}
	blocks, err := lineageBlocks(parts)
	if err != nil {
		return pos, false, err
	}
	first := parts[0]
	now := c.e.opts.Now()
	if err := first.admit(now); err != nil {
		return pos, false, err
	}
	x := c.expiry()
	n, scanned, more := len(f.Docs), 0, false
	size0 := f.bytes
	for _, num := range blocks {
		start := seqPartitionBit | num<<seqCountBits
		end := start + 1<<seqCountBits
		if pos >= end-1 || more {
			continue
		}
		err := rd.Iterate(storage.RidKey(nil, c.rid, max(start, pos+1)), storage.RidKey(nil, c.rid, end), func(k, v []byte) (bool, error) {
			if len(f.Docs) >= maxItems || f.bytes >= maxPageBytes || scanned >= changeScanLimit {
				more = true
				return false, nil
			}
			scanned++
			pos = binary.BigEndian.Uint64(k[len(k)-8:])
			e, _, ok := storage.SplitItemKey(v)
			if !ok {
				return false, corrupt("resource-id index entry %x names %x, which is not an item key", k, v)
			}
			if string(e) < lo || string(e) >= hi {
				return true, nil
			}
			iv, err := rd.Get(nil, v)
			if err != nil {
				return false, fmt.Errorf("resource-id index entry %x: cannot read its item: %w", k, err)
			}
			_, _, doc, err := decodeItem(v, iv)
			if err != nil {
				return false, err
			}
			if !x.expired(doc) {
				f.Docs = append(f.Docs, append([]byte(nil), doc...))
				f.bytes += len(doc)
			}
			return true, nil
		})
		if errors.Is(err, ErrCorrupt) {
			return pos, false, err
		}
		if err != nil {
			return pos, false, fmt.Errorf("%w: cannot read items: %v", ErrUnavailable, err)
		}
	}
	charge := throughput.FeedCharge(len(f.Docs)-n, f.bytes-size0)
	first.charge(now, charge)
	f.Charge += charge
	return pos, more, nil
}

// encodeFeedPosition and decodeFeedPosition are the position of a read
// feed of the whole container: the EPK bounds of the range being read (EPKs
// are hex and never hold 0x00), then the sequence number reached.
func encodeFeedPosition(lo, hi string, seq uint64) []byte {
	b := append(append(append([]byte(lo), 0), hi...), 0)
	return binary.BigEndian.AppendUint64(b, seq)
}

func decodeFeedPosition(b []byte) (lo, hi string, seq uint64, ok bool) {
	if len(b) < 10 {
		return "", "", 0, false
	}
	i := bytes.IndexByte(b, 0)
	j := bytes.IndexByte(b[i+1:], 0) + i + 1
	if i < 0 || j <= i || j != len(b)-9 {
		return "", "", 0, false
	}
	return string(b[:i]), string(b[i+1 : j]), binary.BigEndian.Uint64(b[j+1:]), true
}

// ReadKeyFeed returns a page of the items of one logical partition (or of
// the keys a prefix of a hierarchical key starts), in key order, read from
// a snapshot of the partition that holds it. after and maxItems are as for
// ReadFeed.
func (c *Container) ReadKeyFeed(k epk.Key, after []byte, maxItems int) (Feed, error) {
	var f Feed
	k, err := c.ResolveKey(k)
	if err != nil {
		return f, err
	}
	e, err := c.epkOf(k)
	if err != nil {
		return f, err
	}
	p := c.PartitionFor(e)
	snap, err := p.Snapshot()
	if err != nil {
		return f, err
	}
	defer snap.Close()
	f.Sessions = []Session{snap.Session()}
	lo, _ := storage.ItemSpan(c.rid, e, "")
	return c.readFeedPage(f, p, snap, lo, storage.PrefixEnd(lo), after, maxItems, false)
}

// readFeedPage reads a page of the items in [lo, hi) from rd, starting
// after the item key suffix after (nil: at lo), charged to the partition
// first, or, when anyPartition, to the one where the page starts.
func (c *Container) readFeedPage(f Feed, first *Partition, rd stateReader, lo, hi, after []byte, maxItems int, anyPartition bool) (Feed, error) {
	if after != nil {
		start := append(append([]byte{}, lo[:1+storage.RidLen]...), after...)
		start = append(start, 0) // the first key after `after`
		if bytes.Compare(start, lo) > 0 {
			lo = start
			if e, _, ok := storage.SplitItemKey(start); ok && anyPartition {
				first = c.PartitionFor(string(e))
			}
		}
	}
	// The page is charged to the partition where it starts.
	now := c.e.opts.Now()
	if err := first.admit(now); err != nil {
		return f, err
	}
	if maxItems <= 0 {
		maxItems = 1 << 30
	}
	size := 0
	var last []byte
	more := false
	x := c.expiry()
	err := rd.Iterate(lo, hi, func(k, v []byte) (bool, error) {
		if len(f.Docs) >= maxItems || size >= maxPageBytes {
			more = true
			return false, nil
		}
		_, _, doc, err := decodeItem(k, v)
		if err != nil {
			return false, err
		}
		if x.expired(doc) {
			last = append(last[:0], k...)
			return true, nil
		}
		f.Docs = append(f.Docs, append([]byte(nil), doc...))
		size += len(doc)
		last = append(last[:0], k...)
		return true, nil
	})
	if errors.Is(err, ErrCorrupt) {
		return f, err // no retry mends it: not a 503
	}
	if err != nil {
		return f, fmt.Errorf("%w: cannot read items: %v", ErrUnavailable, err)
	}
	if more {
		f.Next = append([]byte{}, last[1+storage.RidLen:]...)
	}
	f.Charge = throughput.FeedCharge(len(f.Docs), size)
	first.charge(now, f.Charge)
	return f, nil
}

// RangeState is one current partition as the pkranges feed shows it.
type RangeState struct {
	RangeInfo
	LSN uint64
}

// Ranges returns the current partition map and its version.
func (c *Container) Ranges() ([]RangeState, uint64) {
	info := c.Info()
	parts := c.Partitions()
	out := make([]RangeState, len(parts))
	for i, p := range parts {
		out[i] = RangeState{RangeInfo: p.Range(), LSN: p.LSN()}
	}
	return out, info.RangesSeq
}

// ItemIDByRid returns the id of the item whose "_rid" is rid, from the
// resource-id index (storage.RidKey): how rid-addressed requests (the
// `_self` links older clients follow) find their item.
func (c *Container) ItemIDByRid(rid string) (string, error) {
	b, err := decodeRid(rid)
	if err != nil || len(b) != storage.RidLen+8 || !bytes.Equal(b[:storage.RidLen], c.rid[:]) {
		return "", notFound("%q is not the resource id of an item of container %q", rid, c.Info().ID)
	}
	key, err := c.e.store.Get(nil, storage.RidKey(nil, c.rid, binary.BigEndian.Uint64(b[storage.RidLen:])))
	if err == storage.ErrNotFound {
		return "", notFound("no item with resource id %q in container %q", rid, c.Info().ID)
	}
	if err != nil {
		return "", err
	}
	_, id, ok := storage.SplitItemKey(key)
	if !ok {
		return "", corrupt("the resource-id index entry of %q holds %x, not an item key", rid, key)
	}
	return string(id), nil
}
