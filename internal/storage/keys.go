package storage

import (
	"bytes"
	"encoding/binary"
)

// Key prefixes. One byte each; see the package comment for the layout.
const (
	prefixMeta      = 'M'
	prefixItem      = 'D'
	prefixPartition = 'P'
)

// Why every key encoding is injective (no two different resources share a
// key) and why every span holds only its own resource's keys:
//
//   - The first byte names the family (M, D, P, L, I, C, V, R, G, T), so families never mix.
//   - Catalog keys escape their names and end the database id with 0x00
//     (see DatabaseKey).
//   - Item keys are D <rid> <EPK> 0x00 <id>: the rid has a fixed length, the
//     EPK is uppercase hex and so never contains 0x00, and the id is the last
//     component, so the first 0x00 after the rid splits the key one way only
//     (SplitItemKey). An id may hold any byte without ambiguity. Spans are
//     drawn by rid and EPK only, and since 0x00 sorts below every hex digit,
//     the items of an EPK sort before those of any longer EPK extending it.
//   - Logical partition keys are the same shape with the key JSON last.
//   - Index entries are I <rid> <generation, 4 bytes> <term> <EPK> 0x00 <id>:
//     a term is self-delimiting (package index: path segments escape 0x00
//     and end with 0x00 0x01, the path ends with 0x00, and a value's length
//     follows from its type byte), then the item key suffix as above.
//   - Partition keys are P <rid> <range id>, and a partition's index record
//     adds 0x00 'i': range ids are decimal and never hold 0x00, and a range
//     id is never used as a span prefix.
//
// TestKeysInjective checks these properties on random tuples.

// RidLen is the length of a container resource id, which prefixes all of a
// container's item and partition keys.
const RidLen = 8

// Catalog keys (stable):
//
//	M 0x00 "db"   0x00 <esc(database id)>
//	M 0x00 "coll" 0x00 <esc(database id)> 0x00 <esc(container id)>
//
// where esc replaces each 0x01 byte of a name with 0x01 0x02 and each 0x00
// byte with 0x01 0x01 (see appendName). An escaped name never contains 0x00,
// so the 0x00 after the database id ends it: two different (database,
// container) pairs never share a key, and the container records of one
// database (ContainerPrefix) never include another database's. Names
// without 0x00 or 0x01 bytes, which are all that ids may hold (engine
// validation rejects control characters), encode exactly as before the
// escape existed, so no data directory needs rewriting for it; records of
// older stores whose keys differ from this encoding are rewritten when the
// engine opens (see engine.Open).

// DatabaseKey is the key of a database record.
func DatabaseKey(db string) []byte {
	return appendName(DatabasePrefix(), db)
}

// DatabasePrefix bounds all database records.
func DatabasePrefix() []byte { return []byte{prefixMeta, 0, 'd', 'b', 0} }

// ContainerKey is the key of a container record.
func ContainerKey(db, coll string) []byte {
	return appendName(ContainerPrefix(db), coll)
}

// ContainerPrefix bounds the container records of one database.
func ContainerPrefix(db string) []byte {
	return append(appendName(ContainersPrefix(), db), 0)
}

// ContainersPrefix bounds the container records of every database.
func ContainersPrefix() []byte { return []byte{prefixMeta, 0, 'c', 'o', 'l', 'l', 0} }

// Users and permissions (stable):
//
//	M 0x00 "user" 0x00 <esc(database id)> 0x00 <esc(user id)>
//	M 0x00 "perm" 0x00 <esc(database id)> 0x00 <esc(user id)> 0x00 <esc(permission id)>
//
// escaped as container keys are, so the users of one database
// (UserPrefix) and the permissions of one user (PermissionPrefix) or of one
// database (DatabasePermissionsPrefix) are each one span holding no other's.

// UserKey is the key of a user record.
func UserKey(db, user string) []byte { return appendName(UserPrefix(db), user) }

// UserPrefix bounds the user records of one database.
func UserPrefix(db string) []byte { return append(appendName(UsersPrefix(), db), 0) }

// UsersPrefix bounds the user records of every database.
func UsersPrefix() []byte { return []byte{prefixMeta, 0, 'u', 's', 'e', 'r', 0} }

// PermissionKey is the key of a permission record.
func PermissionKey(db, user, perm string) []byte {
	return appendName(PermissionPrefix(db, user), perm)
}

// PermissionPrefix bounds the permission records of one user.
func PermissionPrefix(db, user string) []byte {
	return append(appendName(DatabasePermissionsPrefix(db), user), 0)
}

// DatabasePermissionsPrefix bounds the permission records of one database.
func DatabasePermissionsPrefix(db string) []byte {
	return append(appendName(PermissionsPrefix(), db), 0)
}

// Client encryption keys (stable): the wrapped data encryption keys of
// client-side encryption, catalog records of their database:
//
//	M 0x00 "cek" 0x00 <esc(database id)> 0x00 <esc(key id)>

// EncryptionKeyKey is the key of a client encryption key's record.
func EncryptionKeyKey(db, id string) []byte { return appendName(EncryptionKeyPrefix(db), id) }

// EncryptionKeyPrefix bounds the client encryption keys of one database.
func EncryptionKeyPrefix(db string) []byte {
	return append(appendName(encryptionKeysPrefix(), db), 0)
}

func encryptionKeysPrefix() []byte { return []byte{prefixMeta, 0, 'c', 'e', 'k', 0} }

// PermissionsPrefix bounds the permission records of every database.
func PermissionsPrefix() []byte { return []byte{prefixMeta, 0, 'p', 'e', 'r', 'm', 0} }

// appendName appends the escaped form of a name: 0x00 becomes 0x01 0x01
// and 0x01 becomes 0x01 0x02, so the result never contains 0x00 and
// decodes unambiguously.
func appendName(dst []byte, name string) []byte {
	for i := 0; i < len(name); i++ {
		switch c := name[i]; c {
		case 0:
			dst = append(dst, 1, 1)
		case 1:
			dst = append(dst, 1, 2)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// CatalogDatabase returns the database a catalog record key, or the start
// of a span of catalog records, belongs to: the database id in a database,
// container, user, permission or client encryption key key (or in one of
// their per-database prefixes). ok is false for any other key (scripts,
// the allocator, partition and item keys).
func CatalogDatabase(key []byte) (db string, ok bool) {
	var rest []byte
	for _, p := range [][]byte{DatabasePrefix(), ContainersPrefix(), UsersPrefix(), PermissionsPrefix(), encryptionKeysPrefix()} {
		if len(key) >= len(p) && string(key[:len(p)]) == string(p) {
			rest = key[len(p):]
			ok = true
			break
		}
	}
	if !ok {
		return "", false
	}
	name := make([]byte, 0, len(rest))
	for i := 0; i < len(rest) && rest[i] != 0; i++ {
		if rest[i] != 1 {
			name = append(name, rest[i])
			continue
		}
		if i++; i == len(rest) || (rest[i] != 1 && rest[i] != 2) {
			return "", false // not an escape appendName makes
		}
		name = append(name, rest[i]-1)
	}
	return string(name), true
}

// CatalogAppliedKey is the key of the raft index of the catalog's log (the
// meta group, see engine.ApplyCatalog) this node has applied, written in
// the same batch as what it applied:
//
//	M 0x00 "catapplied"
//
// No catalog family's prefix is a prefix of it, nor it of theirs.
func CatalogAppliedKey() []byte {
	return []byte{prefixMeta, 0, 'c', 'a', 't', 'a', 'p', 'p', 'l', 'i', 'e', 'd'}
}

// SeqKey is the key of the resource-id allocator's high-water mark.
func SeqKey() []byte { return []byte{prefixMeta, 0, 's', 'e', 'q'} }

// ItemIndexesKey is the key of the record that says the change index and
// the resource-id index cover every item (see engine.backfillItemIndexes).
func ItemIndexesKey() []byte { return []byte{prefixMeta, 0, 'i', 't', 'e', 'm', 'i', 'd', 'x'} }

// ItemKey appends the key of an item to dst.
func ItemKey(dst []byte, rid [RidLen]byte, epk string, id string) []byte {
	dst = append(dst, prefixItem)
	dst = append(dst, rid[:]...)
	dst = append(dst, epk...)
	dst = append(dst, 0)
	return append(dst, id...)
}

// ItemSpan returns the key span [lo, hi) of a container's items whose EPK lies
// in [minEPK, maxEPK). An empty maxEPK means "to the end of the container".
func ItemSpan(rid [RidLen]byte, minEPK, maxEPK string) (lo, hi []byte) {
	lo = append(append([]byte{prefixItem}, rid[:]...), minEPK...)
	if maxEPK == "" {
		hi = PrefixEnd(append([]byte{prefixItem}, rid[:]...))
	} else {
		hi = append(append([]byte{prefixItem}, rid[:]...), maxEPK...)
	}
	return lo, hi
}

// SplitItemKey returns the EPK and id of an item key. ok is false if key is not
// an item key.
func SplitItemKey(key []byte) (epk, id []byte, ok bool) {
	if len(key) < 1+RidLen+1 || key[0] != prefixItem {
		return nil, nil, false
	}
	rest := key[1+RidLen:]
	for i, c := range rest {
		if c == 0 {
			return rest[:i], rest[i+1:], true
		}
	}
	return nil, nil, false
}

// ContainerItemsSpan bounds every item of a container.
func ContainerItemsSpan(rid [RidLen]byte) (lo, hi []byte) {
	lo = append([]byte{prefixItem}, rid[:]...)
	return lo, PrefixEnd(lo)
}

// AllItemsSpan bounds the items of every container.
func AllItemsSpan() (lo, hi []byte) {
	lo = []byte{prefixItem}
	return lo, PrefixEnd(lo)
}

// PartitionKey is the key of one physical partition's state record.
func PartitionKey(rid [RidLen]byte, rangeID string) []byte {
	return append(append([]byte{prefixPartition}, rid[:]...), rangeID...)
}

// PartitionIndexKey is the key of one physical partition's index record:
// the index generation and policy its writes maintain.
//
//	P <rid> <range id> 0x00 'i'
//
// Range ids are decimal numbers and never hold 0x00, so this key differs
// from every state record's, and it lies in ContainerPartitionsSpan.
func PartitionIndexKey(rid [RidLen]byte, rangeID string) []byte {
	return append(PartitionKey(rid, rangeID), 0, 'i')
}

// PartitionAppliedKey is the key of the raft index a replicated partition
// has applied, written in the same batch as what it applied:
//
//	P <rid> <range id> 0x00 'a'
//
// like PartitionIndexKey, it differs from every other partition record.
func PartitionAppliedKey(rid [RidLen]byte, rangeID string) []byte {
	return append(PartitionKey(rid, rangeID), 0, 'a')
}

// PartitionOutcomeKey is the key of the outcome a physical partition
// recorded for the command named id (engine/outcome.go), and
// PartitionOutcomeAgeKey that of its entry in the table's age index, by
// the command's timestamp:
//
//	P | rid | rangeID | 0x00 'o' | id
//	P | rid | rangeID | 0x00 't' | ts (8, big-endian) | id
func PartitionOutcomeKey(rid [RidLen]byte, rangeID, id string) []byte {
	return append(append(PartitionKey(rid, rangeID), 0, 'o'), id...)
}

// PartitionOutcomeAgeKey: see PartitionOutcomeKey.
func PartitionOutcomeAgeKey(rid [RidLen]byte, rangeID string, ts int64, id string) []byte {
	k := binary.BigEndian.AppendUint64(append(PartitionKey(rid, rangeID), 0, 't'), uint64(ts))
	return append(k, id...)
}

// PartitionOutcomeSpans bound the outcome table of a partition: its
// records and its age index.
func PartitionOutcomeSpans(rid [RidLen]byte, rangeID string) (recLo, recHi, ageLo, ageHi []byte) {
	p := PartitionKey(rid, rangeID)
	return append(bytes.Clone(p), 0, 'o'), append(bytes.Clone(p), 0, 'o'+1), append(bytes.Clone(p), 0, 't'), append(bytes.Clone(p), 0, 't'+1)
}

// ContainerPartitionsSpan bounds every partition record of a container.
func ContainerPartitionsSpan(rid [RidLen]byte) (lo, hi []byte) {
	lo = append([]byte{prefixPartition}, rid[:]...)
	return lo, PrefixEnd(lo)
}

// PrefixEnd returns the smallest key greater than every key with prefix p.
func PrefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil // p is all 0xff: no upper bound
}

const prefixLogical = 'L'

// LogicalKey appends the key of a logical partition's size record:
//
//	L <container rid, 8 bytes> <EPK hex> 0x00 <partition key as JSON>
//
// Like items, these sort by EPK, so a physical partition's logical
// partitions are one contiguous span.
func LogicalKey(dst []byte, rid [RidLen]byte, epk, key string) []byte {
	dst = append(dst, prefixLogical)
	dst = append(dst, rid[:]...)
	dst = append(dst, epk...)
	dst = append(dst, 0)
	return append(dst, key...)
}

// LogicalSpan returns the span of a container's logical partition records
// whose EPK lies in [minEPK, maxEPK); an empty maxEPK means to the end.
func LogicalSpan(rid [RidLen]byte, minEPK, maxEPK string) (lo, hi []byte) {
	lo = append(append([]byte{prefixLogical}, rid[:]...), minEPK...)
	if maxEPK == "" {
		hi = PrefixEnd(append([]byte{prefixLogical}, rid[:]...))
	} else {
		hi = append(append([]byte{prefixLogical}, rid[:]...), maxEPK...)
	}
	return lo, hi
}

const prefixIndex = 'I'

// IndexPrefix appends the prefix of a container's index entries of one
// generation (each indexing policy change starts a new one):
//
//	I <container rid, 8 bytes> <generation, 4 bytes big-endian> <term> <EPK hex> 0x00 <item id>
//
// where the term is a property path and value encoded by package index, so
// that the entries of one path are one span ordered by value. An entry's
// suffix after the term is the item key's suffix after the container rid.
func IndexPrefix(dst []byte, rid [RidLen]byte, gen uint32) []byte {
	dst = append(dst, prefixIndex)
	dst = append(dst, rid[:]...)
	return append(dst, byte(gen>>24), byte(gen>>16), byte(gen>>8), byte(gen))
}

// IndexEntry appends the key of the index entry of a term for an item.
func IndexEntry(dst []byte, rid [RidLen]byte, gen uint32, term []byte, epk, id string) []byte {
	dst = IndexPrefix(dst, rid, gen)
	dst = append(dst, term...)
	dst = append(dst, epk...)
	dst = append(dst, 0)
	return append(dst, id...)
}

// IndexGenerationsSpan bounds the index entries of a container's
// generations [from, to); to = 0 means all generations from on.
func IndexGenerationsSpan(rid [RidLen]byte, from, to uint32) (lo, hi []byte) {
	lo = IndexPrefix(nil, rid, from)
	if to == 0 {
		return lo, PrefixEnd(append([]byte{prefixIndex}, rid[:]...))
	}
	return lo, IndexPrefix(nil, rid, to)
}

// AppendItemKeyFromSuffix appends the item key whose suffix after the
// container rid is suffix (the tail of an index entry).
func AppendItemKeyFromSuffix(dst []byte, rid [RidLen]byte, suffix []byte) []byte {
	dst = append(dst, prefixItem)
	dst = append(dst, rid[:]...)
	return append(dst, suffix...)
}

// prefixChange keys the change index: one entry per item, keyed by the
// sequence number of the item's current version (see ChangeKey).
const prefixChange = 'C'

// ChangeKey appends the key of a change-index entry to dst: the container,
// then the sequence number of an item version (8 bytes, big-endian). Its
// value is the item's key. Sequence numbers are handed out by physical
// partitions in commit order and carry the range's number in their high
// bits, so one partition's entries are one contiguous span in commit
// order, and a child's entries sort after its parent's.
func ChangeKey(dst []byte, rid [RidLen]byte, seq uint64) []byte {
	dst = append(dst, prefixChange)
	dst = append(dst, rid[:]...)
	return binary.BigEndian.AppendUint64(dst, seq)
}

// ContainerChangesSpan bounds every change-index entry of a container.
func ContainerChangesSpan(rid [RidLen]byte) (lo, hi []byte) {
	lo = append([]byte{prefixChange}, rid[:]...)
	return lo, PrefixEnd(lo)
}

// Script keys (stable): the stored procedures, triggers and user-defined
// functions of a container, catalog records like the container's own:
//
//	M 0x00 "script" 0x00 <container rid, 8 bytes> <kind, 1 byte> <script id>
//
// The rid has a fixed length and the kind one byte, so the id, the last
// component, needs no escape; a container's scripts are one span
// (ScriptsSpan), and one kind's a sub-span (ScriptKindPrefix).
func ScriptKey(rid [RidLen]byte, kind byte, id string) []byte {
	return append(ScriptKindPrefix(rid, kind), id...)
}

// ScriptKindPrefix bounds the scripts of one kind of a container.
func ScriptKindPrefix(rid [RidLen]byte, kind byte) []byte {
	return append(scriptsPrefix(rid), kind)
}

func scriptsPrefix(rid [RidLen]byte) []byte {
	return append([]byte{prefixMeta, 0, 's', 'c', 'r', 'i', 'p', 't', 0}, rid[:]...)
}

// ScriptsSpan bounds every script of a container.
func ScriptsSpan(rid [RidLen]byte) (lo, hi []byte) {
	lo = scriptsPrefix(rid)
	return lo, PrefixEnd(lo)
}

// prefixVersion keys the version log of the all-versions-and-deletes change
// feed: every version written and every delete, by sequence number.
const prefixVersion = 'V'

// VersionKey appends the key of a version-log entry to dst: the container,
// then the sequence number of the operation (8 bytes, big-endian); ordered
// like the change index (see ChangeKey).
func VersionKey(dst []byte, rid [RidLen]byte, seq uint64) []byte {
	dst = append(dst, prefixVersion)
	dst = append(dst, rid[:]...)
	return binary.BigEndian.AppendUint64(dst, seq)
}

// ContainerVersionsSpan bounds every version-log entry of a container.
func ContainerVersionsSpan(rid [RidLen]byte) (lo, hi []byte) {
	lo = append([]byte{prefixVersion}, rid[:]...)
	return lo, PrefixEnd(lo)
}

// prefixRid keys the resource-id index: one entry per live item, keyed by
// the sequence number its "_rid" was made from (the version that created
// it), so that items can be found by "_rid" (the `_self` links older
// clients follow) and read in insertion order.
const prefixRid = 'R'

// RidKey appends the key of a resource-id index entry to dst: the
// container, then the sequence number of the item's creation (8 bytes,
// big-endian; the last 8 bytes of the item's "_rid"). Its value is the
// item's key. Like the change index, one partition's entries are one
// contiguous span in creation order, and a child's sort after its parent's.
func RidKey(dst []byte, rid [RidLen]byte, seq uint64) []byte {
	dst = append(dst, prefixRid)
	dst = append(dst, rid[:]...)
	return binary.BigEndian.AppendUint64(dst, seq)
}

// ContainerRidsSpan bounds every resource-id index entry of a container.
func ContainerRidsSpan(rid [RidLen]byte) (lo, hi []byte) {
	lo = append([]byte{prefixRid}, rid[:]...)
	return lo, PrefixEnd(lo)
}

// Full-text index records (family T), kept per physical partition by the
// engine in the same batch as the items they describe:
//
//	T <container rid> 'r' <tag, 4 bytes> <posting or length key>
//	T <container rid> 's' <range id> 0x00 <tag, 4 bytes> <statistics key>
//
// The tag names one indexed path and its language (the engine's hash of
// both), so that a path whose language changes starts over in records of
// its own. Posting and length keys (package fulltext) end with the item's
// EPK, 0x00 and id: a physical partition's slice of a term's postings is
// the span of its EPK range, and a split moves none of them. Statistics
// are the partition's own (a split rewrites them for its children); range
// ids are decimal and never hold 0x00.
const prefixText = 'T'

// TextRecordPrefix appends the prefix of the posting and length records of
// one full-text index tag.
func TextRecordPrefix(dst []byte, rid [RidLen]byte, tag uint32) []byte {
	dst = append(dst, prefixText)
	dst = append(dst, rid[:]...)
	dst = append(dst, 'r')
	return binary.BigEndian.AppendUint32(dst, tag)
}

// TextStatsPrefix appends the prefix of one partition's statistics
// records of one full-text index tag.
func TextStatsPrefix(dst []byte, rid [RidLen]byte, rangeID string, tag uint32) []byte {
	dst = append(dst, prefixText)
	dst = append(dst, rid[:]...)
	dst = append(dst, 's')
	dst = append(dst, rangeID...)
	dst = append(dst, 0)
	return binary.BigEndian.AppendUint32(dst, tag)
}

// TextPartitionStatsSpan bounds every statistics record of one partition.
func TextPartitionStatsSpan(rid [RidLen]byte, rangeID string) (lo, hi []byte) {
	lo = append(append(append([]byte{prefixText}, rid[:]...), 's'), rangeID...)
	lo = append(lo, 0)
	return lo, PrefixEnd(lo)
}

// ContainerTextSpan bounds every full-text record of a container.
func ContainerTextSpan(rid [RidLen]byte) (lo, hi []byte) {
	lo = append([]byte{prefixText}, rid[:]...)
	return lo, PrefixEnd(lo)
}
