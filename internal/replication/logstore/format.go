package logstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// The on-disk format. A segment is a header followed by records:
//
//	header: magic "PRSCRLOG" (8 bytes) | segment number (uint64, big-endian)
//	record: body length (uint32, LE) | CRC-32C of body (uint32, LE) | body
//	body:   kind (1 byte) | seq | group | index | count |
//	        count × (term | length | marshaled raftpb.Entry)
//
// seq, group, index, count, term and length are uvarints. For kindAppend
// index is the first entry's index; for kindReset and kindRewrite it is the
// index the log restarts after, and the entries (if any) follow it.
const (
	headerLen   = 16
	recHeadLen  = 8
	segMagic    = "PRSCRLOG"
	kindAppend  = 1
	kindReset   = 2
	kindRewrite = 3 // a reset that rewrites a live log: not undoable
	kindHard    = 4 // the group's hard state: one entry, term 0, the marshaled raftpb.HardState
	maxVarint   = binary.MaxVarintLen64
	entryOverhd = 2 * maxVarint
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errTorn marks a record that cannot be read: short, zero, oversized, or
// with a bad checksum. At the tail of the last segment it is a torn write.
var errTorn = errors.New("logstore: torn or corrupt record")

func segHeader(num uint64) []byte {
	h := make([]byte, headerLen)
	copy(h, segMagic)
	binary.BigEndian.PutUint64(h[8:], num)
	return h
}

// rawEntry is an entry as stored: its term and its marshaled bytes.
type rawEntry struct {
	term uint64
	data []byte
}

// record is a decoded record body; data of its entries alias the buffer.
type record struct {
	kind  byte
	seq   uint64
	group uint64
	index uint64
	ents  []rawEntry
	offs  []int // offset of each entry's data within the body
}

// appendRecord encodes a record at the end of buf and returns buf and the
// offsets (from the start of buf) of each entry's data.
func appendRecord(buf []byte, kind byte, seq, group, index uint64, ents []rawEntry, offs []int) ([]byte, []int) {
	start := len(buf)
	buf = append(buf, make([]byte, recHeadLen)...)
	buf = append(buf, kind)
	buf = binary.AppendUvarint(buf, seq)
	buf = binary.AppendUvarint(buf, group)
	buf = binary.AppendUvarint(buf, index)
	buf = binary.AppendUvarint(buf, uint64(len(ents)))
	for _, e := range ents {
		buf = binary.AppendUvarint(buf, e.term)
		buf = binary.AppendUvarint(buf, uint64(len(e.data)))
		offs = append(offs, len(buf))
		buf = append(buf, e.data...)
	}
	body := buf[start+recHeadLen:]
	binary.LittleEndian.PutUint32(buf[start:], uint32(len(body)))
	binary.LittleEndian.PutUint32(buf[start+4:], crc32.Checksum(body, castagnoli))
	return buf, offs
}

// readRecord decodes the record at the start of b. It returns the record
// and its total length, or errTorn if b does not start with a whole valid
// record of at most maxRecord bytes.
func readRecord(b []byte, maxRecord int) (record, int, error) {
	var r record
	if len(b) < recHeadLen {
		return r, 0, errTorn
	}
	n := int(binary.LittleEndian.Uint32(b))
	if n == 0 || n > maxRecord || n > len(b)-recHeadLen {
		return r, 0, errTorn
	}
	body := b[recHeadLen : recHeadLen+n]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(b[4:]) {
		return r, 0, errTorn
	}
	if err := decodeBody(body, &r); err != nil {
		return r, 0, err
	}
	return r, recHeadLen + n, nil
}

func decodeBody(body []byte, r *record) error {
	r.kind = body[0]
	if r.kind < kindAppend || r.kind > kindHard {
		return fmt.Errorf("logstore: unknown record kind %d", r.kind)
	}
	p := 1
	next := func() (uint64, error) {
		v, k := binary.Uvarint(body[p:])
		if k <= 0 {
			return 0, errors.New("logstore: bad varint in record")
		}
		p += k
		return v, nil
	}
	var err error
	if r.seq, err = next(); err != nil {
		return err
	}
	if r.group, err = next(); err != nil {
		return err
	}
	if r.index, err = next(); err != nil {
		return err
	}
	count, err := next()
	if err != nil {
		return err
	}
	// Every entry takes at least two bytes, which bounds count by the body.
	if count > uint64(len(body)-p)/2 {
		return fmt.Errorf("logstore: record claims %d entries in %d bytes", count, len(body)-p)
	}
	if (r.kind == kindAppend && count == 0) || (r.kind == kindHard && count != 1) {
		return fmt.Errorf("logstore: record of kind %d with %d entries", r.kind, count)
	}
	r.ents = make([]rawEntry, 0, count)
	r.offs = make([]int, 0, count)
	for range count {
		term, err := next()
		if err != nil {
			return err
		}
		n, err := next()
		if err != nil {
			return err
		}
		if n > uint64(len(body)-p) {
			return fmt.Errorf("logstore: entry of %d bytes overruns its record", n)
		}
		r.offs = append(r.offs, p)
		r.ents = append(r.ents, rawEntry{term: term, data: body[p : p+int(n)]})
		p += int(n)
	}
	if p != len(body) {
		return fmt.Errorf("logstore: %d trailing bytes in record", len(body)-p)
	}
	return nil
}
