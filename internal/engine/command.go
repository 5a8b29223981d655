package engine

import (
	"encoding/binary"
	"errors"
	"math"

	"github.com/parsecdb/parsec/internal/binfmt"
	"github.com/parsecdb/parsec/internal/epk"
	"github.com/parsecdb/parsec/internal/jsondoc"
)

// The command encoding. A partition's log is a sequence of encoded
// commands, and applying the same sequence to the same state gives the same
// state byte for byte (see ApplyLog). The format is stable, like the
// storage keys: a later version decodes every earlier one.
//
//	command   = version:1 kind:1 body
//	version   = 0x01 | 0x02 | 0x03 | 0x04 | 0x05 (0x02 adds the items flag
//	            bits 1 and 2, 0x03 bits 3 and 4, 0x04 bit 5, 0x05 bit 6; an
//	            earlier command decodes as before, and a command that needs
//	            no later bit is written with the earliest version that has
//	            its bits, 0x04 at least)
//	kind      = 0x01 items | 0x02 split | 0x03 reindex
//	items     = flags:1 (bit 0: atomic, bit 1: ifVersion follows,
//	            bit 2: ifSeq follows, bit 3: keep versions, bit 4: expiry,
//	            bit 5: stop on error, bit 6: id follows)
//	            ts:varint logicalLimit:varint partitionLimit:varint
//	            [ifVersion:uvarint] [ifSeq:uvarint] [id:str] count:uvarint op*
//	op        = kind:1 id:str key epk:str body:bytes ifMatch:str
//	            condition:str patchCount:uvarint patch*
//	key       = count:uvarint component*
//	component = kind:1, then for a number 8 bytes (IEEE 754, big-endian),
//	            for a string str, for other kinds nothing
//	patch     = op:str path:str from:str value:optbytes
//	split     = range:str boundCount:uvarint bound:str* firstChild:uvarint
//	            rangesSeq:uvarint
//	reindex   = gen:uvarint policy:bytes from:bytes to:bytes
//	str, bytes = length:uvarint, then the bytes
//	optbytes  = 0 for absent, else length+1:uvarint, then the bytes
//
// A command carries every input apply needs that is not in the state it
// reads: the timestamp, the limits in force, a patch condition as its text
// (compiled when applied), and for a split the boundaries and the child
// range ids. The sequence numbers of new resource ids and etags are the
// partition's own (partState.takeSeqs).
const commandVersion = 5

// MaxCommandIDBytes bounds a command's id (Command.ID).
const MaxCommandIDBytes = 64

// catalogVersion is the version byte of catalog entries (log.go).
const catalogVersion = 1

const (
	commandItems   = 1
	commandSplit   = 2
	commandReindex = 3
)

// Limits are the storage limits a command is applied under. They come from
// the server's flags, so they travel in the command: every replica applies
// it under the same limits.
type Limits struct {
	// LogicalBytes caps the storage of one logical partition (0: no cap).
	LogicalBytes int64
	// PartitionBytes caps the storage of the partition (0: no cap); only
	// fixed containers, which never split, have one.
	PartitionBytes int64
}

// SplitCommand splits the partition that applies it into children that
// divide its range at Bounds. Everything is decided before it is queued:
// the children's range ids are FirstChild, FirstChild+1, ..., and the
// container record's partition map gets sequence number RangesSeq.
type SplitCommand struct {
	Range      string
	Bounds     []string
	FirstChild int
	RangesSeq  uint64
}

// ReindexCommand indexes, in generation Gen under Policy (an indexing
// policy's JSON), at most indexChunk items of the partition from key From
// up to key To. A partition whose writes maintain an older generation
// switches to Gen first; one already past Gen ignores the command.
type ReindexCommand struct {
	Gen      uint32
	Policy   []byte
	From, To []byte
}

// EncodeCommand appends the encoding of c to dst.
func EncodeCommand(dst []byte, c *Command) []byte {
	if c.ID == "" || c.Split != nil || c.Reindex != nil {
		dst = append(dst, commandVersion-1) // the same bytes as before ids
	} else {
		dst = append(dst, commandVersion)
	}
	switch {
	case c.Split != nil:
		s := c.Split
		dst = append(dst, commandSplit)
		dst = binfmt.AppendString(dst, s.Range)
		dst = binary.AppendUvarint(dst, uint64(len(s.Bounds)))
		for _, b := range s.Bounds {
			dst = binfmt.AppendString(dst, b)
		}
		dst = binary.AppendUvarint(dst, uint64(s.FirstChild))
		return binary.AppendUvarint(dst, s.RangesSeq)
	case c.Reindex != nil:
		r := c.Reindex
		dst = append(dst, commandReindex)
		dst = binary.AppendUvarint(dst, uint64(r.Gen))
		dst = binfmt.AppendString(dst, string(r.Policy))
		dst = binfmt.AppendString(dst, string(r.From))
		return binfmt.AppendString(dst, string(r.To))
	}
	dst = append(dst, commandItems)
	var flags byte
	if c.Atomic {
		flags |= 1
	}
	if c.IfVersion != nil {
		flags |= 2
	}
	if c.IfSeq != nil {
		flags |= 4
	}
	if c.Versions {
		flags |= 8
	}
	if c.Expired {
		flags |= 16
	}
	if c.StopOnError {
		flags |= 32
	}
	if c.ID != "" {
		flags |= 64
	}
	dst = append(dst, flags)
	dst = binary.AppendVarint(dst, c.Ts)
	dst = binary.AppendVarint(dst, c.Limits.LogicalBytes)
	dst = binary.AppendVarint(dst, c.Limits.PartitionBytes)
	if c.IfVersion != nil {
		dst = binary.AppendUvarint(dst, *c.IfVersion)
	}
	if c.IfSeq != nil {
		dst = binary.AppendUvarint(dst, *c.IfSeq)
	}
	if c.ID != "" {
		dst = binfmt.AppendString(dst, c.ID)
	}
	dst = binary.AppendUvarint(dst, uint64(len(c.Ops)))
	for i := range c.Ops {
		dst = appendOp(dst, &c.Ops[i])
	}
	return dst
}

func appendOp(dst []byte, op *Op) []byte {
	dst = append(dst, byte(op.Kind))
	dst = binfmt.AppendString(dst, op.ID)
	dst = binary.AppendUvarint(dst, uint64(len(op.Key)))
	for _, c := range op.Key {
		dst = append(dst, byte(c.Kind))
		switch c.Kind {
		case epk.KindNumber:
			dst = binary.BigEndian.AppendUint64(dst, math.Float64bits(c.Num))
		case epk.KindString:
			dst = binfmt.AppendString(dst, c.Str)
		}
	}
	dst = binfmt.AppendString(dst, op.EPK)
	dst = binfmt.AppendString(dst, string(op.Body))
	dst = binfmt.AppendString(dst, op.IfMatch)
	dst = binfmt.AppendString(dst, op.Condition)
	dst = binary.AppendUvarint(dst, uint64(len(op.Patch)))
	for _, p := range op.Patch {
		dst = binfmt.AppendString(dst, p.Op)
		dst = binfmt.AppendString(dst, p.Path)
		dst = binfmt.AppendString(dst, p.From)
		if p.Value == nil {
			dst = append(dst, 0)
		} else {
			dst = binary.AppendUvarint(dst, uint64(len(p.Value))+1)
			dst = append(dst, p.Value...)
		}
	}
	return dst
}

// errBadCommand is DecodeCommand's error for bytes that are not a command.
var errBadCommand = errors.New("not a valid command")

// DecodeCommand decodes an encoded command. The result does not alias b.
func DecodeCommand(b []byte) (*Command, error) {
	d := newDecoder(b)
	version := d.Byte()
	if version < 1 || version > commandVersion {
		d.Fail("unknown version %d", version) // a truncation's failure comes first
		return nil, d.Err()
	}
	c := &Command{}
	switch kind := d.Byte(); kind {
	case commandSplit:
		s := &SplitCommand{Range: d.str()}
		n := d.Count(1)
		for i := 0; i < n; i++ {
			s.Bounds = append(s.Bounds, d.str())
		}
		first := d.Uvarint()
		if first > math.MaxInt32 {
			d.Fail("child range id %d out of range", first)
		}
		s.FirstChild = int(first)
		s.RangesSeq = d.Uvarint()
		c.Split = s
	case commandReindex:
		gen := d.Uvarint()
		if gen > math.MaxUint32 {
			d.Fail("index generation %d out of range", gen)
		}
		c.Reindex = &ReindexCommand{Gen: uint32(gen), Policy: d.bytes(), From: d.bytes(), To: d.bytes()}
	case commandItems:
		flags := d.Byte()
		known := byte(127)
		switch version {
		case 4:
			known = 63
		case 1:
			known = 1
		case 2:
			known = 7
		case 3:
			known = 31
		}
		if flags&^known != 0 {
			d.Fail("unknown flags %#x", flags)
		}
		c.Atomic = flags&1 != 0
		c.Versions = flags&8 != 0
		c.Expired = flags&16 != 0
		c.StopOnError = flags&32 != 0
		c.Ts = d.Varint()
		c.Limits.LogicalBytes = d.Varint()
		c.Limits.PartitionBytes = d.Varint()
		if flags&2 != 0 {
			v := d.Uvarint()
			c.IfVersion = &v
		}
		if flags&4 != 0 {
			v := d.Uvarint()
			c.IfSeq = &v
		}
		if flags&64 != 0 {
			if c.ID = d.str(); c.ID == "" || len(c.ID) > MaxCommandIDBytes {
				d.Fail("command id of %d bytes", len(c.ID))
			}
		}
		n := d.Count(2)
		c.Ops = make([]Op, n)
		for i := range c.Ops {
			d.op(&c.Ops[i])
		}
	default:
		d.Fail("unknown kind %d", kind)
	}
	if d.Len() != 0 {
		d.Fail("%d bytes after the command", d.Len())
	}
	if d.Err() != nil {
		return nil, d.Err()
	}
	return c, nil
}

// decoder reads commands and catalog entries.
type decoder struct{ binfmt.Reader }

func newDecoder(b []byte) *decoder { return &decoder{binfmt.NewReader(b, errBadCommand)} }

func (d *decoder) str() string { return string(d.Bytes()) }

// bytes reads a str as a fresh slice, nil when empty.
func (d *decoder) bytes() []byte {
	v := d.Bytes()
	if len(v) == 0 {
		return nil
	}
	return append([]byte(nil), v...)
}

func (d *decoder) op(op *Op) {
	op.Kind = OpKind(d.Byte())
	if op.Kind < OpCreate || op.Kind > OpRead {
		d.Fail("unknown operation kind %d", op.Kind)
	}
	op.ID = d.str()
	if n := d.Count(1); n > 0 {
		op.Key = make(epk.Key, n)
		for i := range op.Key {
			c := &op.Key[i]
			c.Kind = epk.Kind(d.Byte())
			switch c.Kind {
			case epk.KindNumber:
				if b := d.Take(8); len(b) == 8 {
					c.Num = math.Float64frombits(binary.BigEndian.Uint64(b))
				}
			case epk.KindString:
				c.Str = d.str()
			case epk.KindUndefined, epk.KindNull, epk.KindFalse, epk.KindTrue:
			default:
				d.Fail("unknown partition key component kind %d", c.Kind)
			}
		}
	}
	op.EPK = d.str()
	op.Body = d.bytes()
	op.IfMatch = d.str()
	op.Condition = d.str()
	if n := d.Count(4); n > 0 {
		op.Patch = make([]jsondoc.PatchOp, n)
		for i := range op.Patch {
			p := &op.Patch[i]
			p.Op, p.Path, p.From = d.str(), d.str(), d.str()
			if l := d.Uvarint(); l > 0 {
				p.Value = append([]byte{}, d.Take(l-1)...)
			}
		}
	}
}
