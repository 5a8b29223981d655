package engine

import (
	"encoding/binary"
	"encoding/json"
	"strconv"
	"time"

	"github.com/parsecdb/parsec/internal/binfmt"
	"github.com/parsecdb/parsec/internal/jsondoc"
	"github.com/parsecdb/parsec/internal/storage"
)

// The all-versions-and-deletes change feed. A container whose definition
// has a change feed policy (changeFeedPolicy.retentionDuration, in
// minutes, as the SDKs set it) keeps a version log: every command that
// writes it carries Versions, and apply adds, beside each version it writes
// and each delete, an entry under the operation's sequence number
// (storage.VersionKey) with the operation, its time, its LSN and the
// document (for a delete, the deleted one). The feed reads the log as the
// latest-version feed reads the change index, along the range's lineage,
// and entries older than the retention are trimmed in the background.

// Operations in the version log.
const (
	versionCreate  = 1
	versionReplace = 2
	versionDelete  = 3
	versionExpire  = 4 // a delete of an expired item
)

var versionOps = [...]string{versionCreate: "create", versionReplace: "replace", versionDelete: "delete", versionExpire: "delete"}

// version is a decoded version-log entry.
type version struct {
	op      byte
	ts      int64
	lsn     uint64
	prevLSN uint64 // the LSN of the version it replaced or deleted; 0: none
	itemKey []byte
	doc     []byte // the version written, or for a delete the deleted one
}

// A version-log value:
//
//	op:1 ts:varint lsn:uvarint prevLSN:uvarint itemKey:bytes doc:bytes
func encodeVersion(op byte, ts int64, lsn, prevLSN uint64, itemKey, doc []byte) []byte {
	b := make([]byte, 0, 24+len(itemKey)+len(doc))
	b = append(b, op)
	b = binary.AppendVarint(b, ts)
	b = binary.AppendUvarint(b, lsn)
	b = binary.AppendUvarint(b, prevLSN)
	b = binfmt.AppendString(b, string(itemKey))
	return binfmt.AppendString(b, string(doc))
}

func decodeVersion(key, v []byte) (version, error) {
	r := binfmt.NewReader(v, ErrCorrupt)
	ver := version{op: r.Byte(), ts: r.Varint(), lsn: r.Uvarint(), prevLSN: r.Uvarint(), itemKey: r.Bytes(), doc: r.Bytes()}
	if err := r.Err(); err != nil || ver.op < versionCreate || ver.op > versionExpire || r.Len() != 0 {
		return ver, corrupt("version-log entry %x does not decode", key)
	}
	return ver, nil
}

// event renders a version as the change feed's all-versions wire format:
// {"current": the version (not for a delete), "previous": the deleted
// document (a delete), "metadata": {operationType, lsn, crts,
// previousImageLSN, timeToLiveExpired, and for a delete id}}.
func (v version) event(itemKey []byte) []byte {
	b := make([]byte, 0, len(v.doc)+160)
	b = append(b, '{')
	deleted := v.op == versionDelete || v.op == versionExpire
	if deleted {
		b = append(b, `"previous":`...)
	} else {
		b = append(b, `"current":`...)
	}
	b = append(b, v.doc...)
	b = append(b, `,"metadata":{"operationType":"`...)
	b = append(b, versionOps[v.op]...)
	b = append(b, `","lsn":`...)
	b = strconv.AppendUint(b, v.lsn, 10)
	b = append(b, `,"crts":`...)
	b = strconv.AppendInt(b, v.ts, 10)
	if v.prevLSN != 0 {
		b = append(b, `,"previousImageLSN":`...)
		b = strconv.AppendUint(b, v.prevLSN, 10)
	}
	b = append(b, `,"timeToLiveExpired":`...)
	b = strconv.AppendBool(b, v.op == versionExpire)
	if deleted {
		if _, id, ok := storage.SplitItemKey(itemKey); ok {
			b = append(b, `,"id":`...)
			b = jsondoc.AppendQuote(b, string(id))
		}
	}
	return append(b, "}}"...)
}

// versionRetention is how long the container keeps its version log, from
// its change feed policy; 0: it keeps none.
func (c *Container) versionRetention() time.Duration {
	raw, ok := c.info.Load().Extra["changeFeedPolicy"]
	if !ok {
		return 0
	}
	var p struct {
		RetentionDuration float64 `json:"retentionDuration"`
	}
	if json.Unmarshal(raw, &p) != nil || p.RetentionDuration <= 0 {
		return 0
	}
	return time.Duration(p.RetentionDuration * float64(time.Minute))
}

// versionTrimScan bounds the version-log entries one trim reads.
const versionTrimScan = 10000

// TrimVersions deletes the version-log entries older than the container's
// retention (all of them when it keeps none), reading at most
// versionTrimScan entries per call, and returns how many it deleted. The
// entries of each range are in time order, so each range's span is read
// only up to its first entry to keep.
func (c *Container) TrimVersions() (int, error) {
	if c.e.catalogKeepsEntries() {
		// The partitions' logs write the version log; a trim through the
		// catalog's log could reach a replica before versions it covers.
		return 0, badRequest("version logs are not trimmed with a replicated catalog yet")
	}
	keep := c.versionRetention()
	cutoff := int64(1) << 62
	if keep > 0 {
		cutoff = c.e.now() - int64(keep/time.Second)
	} else if empty, err := c.noVersions(); err != nil || empty {
		return 0, err // the common case, checked with one seek
	}
	m := &catalogBatch{}
	n, scanned := 0, 0
	for num := uint64(0); num < uint64(c.Info().NextRangeID) && scanned < versionTrimScan; num++ {
		first := seqPartitionBit | num<<seqCountBits
		lo := storage.VersionKey(nil, c.rid, first)
		var last []byte
		err := c.e.store.Iterate(lo, storage.VersionKey(nil, c.rid, first+1<<seqCountBits), func(k, v []byte) (bool, error) {
			if scanned++; scanned > versionTrimScan {
				return false, nil
			}
			ver, err := decodeVersion(k, v)
			if err != nil || ver.ts >= cutoff {
				return false, err
			}
			last = append(last[:0], k...)
			n++
			return true, nil
		})
		if err != nil {
			return 0, err
		}
		if last != nil {
			m.deleteRange(lo, append(last, 0)) // through the last old entry
		}
	}
	if n == 0 {
		return 0, nil
	}
	return n, c.e.commitCatalog(m, "trim the version log")
}

// noVersions reports whether the container's version log is empty.
func (c *Container) noVersions() (bool, error) {
	lo, hi := storage.ContainerVersionsSpan(c.rid)
	empty := true
	err := c.e.store.Iterate(lo, hi, func(_, _ []byte) (bool, error) {
		empty = false
		return false, nil
	})
	return empty, err
}
