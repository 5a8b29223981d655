package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"

	"github.com/parsecdb/parsec/internal/epk"
	"github.com/parsecdb/parsec/internal/jsondoc"
	"github.com/parsecdb/parsec/internal/storage"
	"github.com/parsecdb/parsec/internal/throughput"
)

// The change feed in latest-version mode: per physical partition, every
// item that changed, once, in its latest version, in the order of the
// changes.
//
// It is read from the change index (storage.ChangeKey): every write puts an
// entry under the sequence number of the version it writes and removes the
// entry of the version it replaces, in the same command, so the index holds
// each live item once. Sequence numbers carry the number of the range that
// handed them out in their high bits (partState.takeSeqs), and a child's
// number is greater than its parent's, so along a range's lineage (its
// parents, oldest first, then itself) the entries sort in commit order. A
// feed position is therefore one sequence number, the last one read, and
// it stays valid across splits: a child reads the entries of its parents
// that fall in its own EPK range, then its own.
//
// Reading costs what the range changed: the entries of the range and of
// its ancestors past the position (ancestors' entries of sibling ranges are
// skipped, at most changeScanLimit per page).

// ChangeFeedScope is what one change-feed read covers.
type ChangeFeedScope struct {
	// RangeID is the physical partition read; with HasKey it may be empty
	// (the partition that holds the key).
	RangeID string
	// MinEPK and MaxEPK narrow the read to a part of the range (a feed
	// range); empty means the range's own bound.
	MinEPK, MaxEPK string
	// Key, with HasKey, narrows the read to one logical partition (or, for
	// a prefix of a hierarchical key, to the keys it starts).
	Key    epk.Key
	HasKey bool
	// AllVersions reads the version log (every version and every delete,
	// as change events; see versions.go) instead of the latest versions.
	AllVersions bool
}

// ChangeFeedStart is where a read starts.
type ChangeFeedStart struct {
	// After is a position a previous read returned: the read starts past
	// it. Zero with FromNow false is the beginning.
	After uint64
	// FromNow starts at the range's current end: only later changes.
	FromNow bool
	// Since, when not zero, skips versions written before this time (epoch
	// seconds): a start from a point in time.
	Since int64
}

// ChangeFeedPage is one page of changes.
type ChangeFeedPage struct {
	Docs [][]byte
	// Position is where the next read continues (ChangeFeedStart.After).
	Position uint64
	Session  Session
	Charge   float64
}

// changeScanLimit bounds the index entries one page visits, read or
// skipped, so that a range whose ancestors changed mostly elsewhere still
// answers quickly (with fewer changes, and a position to go on from).
const changeScanLimit = 10000

// ChangeFeed reads one page of the change feed of scope, from start, of at
// most maxItems changes (<= 0: DefaultPageSize).
func (c *Container) ChangeFeed(scope ChangeFeedScope, start ChangeFeedStart, maxItems int) (ChangeFeedPage, error) {
	var pg ChangeFeedPage
	var keyEPK string
	if scope.HasKey {
		k, err := c.ResolveKey(scope.Key)
		if err != nil {
			return pg, err
		}
		if keyEPK, err = c.epkOf(k); err != nil {
			return pg, err
		}
	}
	if scope.AllVersions {
		switch {
		case c.versionRetention() == 0:
			return pg, badRequest("container %q keeps no versions: the all versions and deletes change feed needs a change feed policy (changeFeedPolicy.retentionDuration, in minutes) in the container's definition", c.Info().ID)
		case !start.FromNow && start.After == 0:
			return pg, badRequest("the all versions and deletes change feed starts from now (If-None-Match: *) or from a position it returned; it cannot start from the beginning or from a time")
		}
	}
	var p *Partition
	var err error
	switch {
	case scope.RangeID != "":
		if p, err = c.PartitionByID(scope.RangeID); err != nil {
			return pg, err
		}
		if scope.HasKey && c.PartitionFor(keyEPK) != p {
			return pg, badRequest("partition key %s is not in partition key range %s", scope.Key, scope.RangeID)
		}
	case scope.HasKey:
		p = c.PartitionFor(keyEPK)
	default:
		parts := c.Partitions()
		if len(parts) != 1 {
			return pg, badRequest("a change feed read names a partition key range (x-ms-documentdb-partitionkeyrangeid) or a partition key; this container has %d partition key ranges", len(parts))
		}
		p = parts[0]
	}
	lo, hi := p.info.Min, openMax(p.info.Max)
	if scope.MinEPK > lo {
		lo = scope.MinEPK
	}
	if scope.MaxEPK != "" && (hi == "" || scope.MaxEPK < hi) {
		hi = scope.MaxEPK
	}
	snap, err := p.Snapshot()
	if err != nil {
		return pg, err
	}
	defer snap.Close()
	now := c.e.opts.Now()
	if err := p.admit(now); err != nil {
		return pg, err
	}
	self, err := rangeNumber(p.info.ID)
	if err != nil {
		return pg, err
	}
	pg.Session = snap.Session()
	pg.Position = start.After
	if start.FromNow {
		// The range's end: its last sequence number (or the one before its
		// first), past every entry of its lineage.
		pg.Position = seqPartitionBit | self<<seqCountBits + snap.seqs - 1
	}
	if maxItems <= 0 {
		maxItems = DefaultPageSize
	}
	x := c.expiry()
	lineage := append(append([]string(nil), p.info.Parents...), p.info.ID)
	size, scanned := 0, 0
	done := false
	for _, id := range lineage {
		if done {
			break
		}
		num, err := rangeNumber(id)
		if err != nil {
			return pg, err
		}
		first := seqPartitionBit | num<<seqCountBits
		end := first + 1<<seqCountBits
		if pg.Position >= end-1 {
			continue // read already
		}
		from := max(first, pg.Position+1)
		own := id == p.info.ID
		keyOf := storage.ChangeKey
		if scope.AllVersions {
			keyOf = storage.VersionKey
		}
		err = snap.Iterate(keyOf(nil, c.rid, from), keyOf(nil, c.rid, end), func(k, v []byte) (bool, error) {
			if len(pg.Docs) >= maxItems || size >= maxPageBytes || scanned >= changeScanLimit {
				done = true
				return false, nil
			}
			seq := binary.BigEndian.Uint64(k[len(k)-8:])
			scanned++
			pg.Position = seq
			itemKey := v
			var ver version
			if scope.AllVersions {
				var err error
				if ver, err = decodeVersion(k, v); err != nil {
					return false, err
				}
				itemKey = ver.itemKey
			}
			e, _, ok := storage.SplitItemKey(itemKey)
			if !ok {
				return false, corrupt("feed entry %x names %x, which is not an item key", k, itemKey)
			}
			if !own || scope.MinEPK != "" || scope.MaxEPK != "" {
				if string(e) < lo || hi != "" && string(e) >= hi {
					return true, nil
				}
			}
			if scope.HasKey && !bytes.HasPrefix(e, []byte(keyEPK)) {
				return true, nil
			}
			var doc []byte
			if scope.AllVersions {
				doc = ver.event(itemKey)
			} else {
				iv, err := snap.Get(nil, itemKey)
				if err != nil {
					return false, fmt.Errorf("change index entry %x: cannot read its item: %w", k, err)
				}
				_, etag, d, err := decodeItem(itemKey, iv)
				if err != nil {
					return false, err
				}
				if s, ok := seqOfEtag(etag); !ok || s != seq {
					return false, corrupt("change index entry %d names an item whose version is %s", seq, etag)
				}
				if start.Since != 0 && docTs(d) < start.Since || x.expired(d) {
					return true, nil
				}
				doc = withLSN(d, seq)
			}
			pg.Docs = append(pg.Docs, doc)
			size += len(doc)
			return true, nil
		})
		if errors.Is(err, ErrCorrupt) {
			return pg, err
		}
		if err != nil {
			return pg, fmt.Errorf("%w: cannot read the change feed: %v", ErrUnavailable, err)
		}
	}
	pg.Charge = throughput.FeedCharge(len(pg.Docs), size)
	p.charge(now, pg.Charge)
	return pg, nil
}

// rangeNumber is the number of a range id (range ids are decimal).
func rangeNumber(id string) (uint64, error) {
	n, err := strconv.ParseUint(id, 10, 64)
	if err != nil || n >= seqRangeLimit {
		return 0, internalError("partition key range id %q is not a number below %d", id, seqRangeLimit)
	}
	return n, nil
}

// docTs is a stored document's _ts (0 if it has none).
func docTs(doc []byte) int64 {
	s, err := jsondoc.Scan(doc, [][]string{{"_ts"}})
	if err != nil || s.Values[0] == nil {
		return 0
	}
	ts, _ := strconv.ParseInt(string(s.Values[0]), 10, 64)
	return ts
}

// withLSN returns a copy of the item d with "_lsn" appended: the position
// of its change, which the service's latest-version change feed items
// carry. An item that has an "_lsn" of its own keeps it.
func withLSN(d []byte, lsn uint64) []byte {
	end := bytes.LastIndexByte(d, '}')
	if end < 0 || bytes.Contains(d, []byte(`"_lsn"`)) {
		return append([]byte(nil), d...)
	}
	out := make([]byte, 0, len(d)+32)
	out = append(out, d[:end]...)
	if t := bytes.TrimRight(out, " \t\r\n"); len(t) > 0 && t[len(t)-1] != '{' {
		out = append(out, ',')
	}
	out = append(out, `"_lsn":`...)
	out = strconv.AppendUint(out, lsn, 10)
	return append(out, d[end:]...)
}
