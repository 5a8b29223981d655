package table

import (
	"bytes"
	"encoding/binary"
	"time"
	"unicode/utf8"

	"github.com/parsecdb/parsec/internal/api/table/edm"
)

// The direct rendering of a point read. A stored item written through this
// API already holds most of its members in their wire form: strings,
// booleans and Int32s as JSON says them, Int64s, DateTimes and Guids as
// the canonical text the response carries. rawEntityJSON therefore copies
// those members' bytes into the response and decodes only what must
// change: the keys' order, the Timestamp (which the ETag needs), the
// annotations the metadata level asks for, and any value whose stored
// text is not its canonical wire text (those go through the same decoding
// and encoding as decodeEntity and entityJSON). Anything it is not sure of
// (an escaped member name, a key that is not a plain string, more
// annotations than it keeps) makes it decline, and the caller takes the
// full decode: the output is the same byte for byte either way
// (TestRawEntityJSONMatchesDecode).

// maxRawAnnotations is how many type annotations the direct rendering
// keeps track of; an item with more takes the full decode.
const maxRawAnnotations = 64

// memberIter walks the members of a JSON object without allocating. It
// yields a member's name as the bytes between its quotes, and stops (bad
// set) at a name with an escape or anything not shaped as an object.
type memberIter struct {
	b   []byte
	i   int
	bad bool
	end bool
}

func newMemberIter(b []byte) memberIter {
	it := memberIter{b: b}
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		it.bad = true
		return it
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		it.end = true
		it.bad = skipSpace(b, i+1) != len(b)
	}
	it.i = i
	return it
}

// next returns the next member; false at the end or on trouble.
func (it *memberIter) next() (name, val []byte, ok bool) {
	if it.bad || it.end {
		return nil, nil, false
	}
	b, i := it.b, it.i
	if i >= len(b) || b[i] != '"' {
		it.bad = true
		return nil, nil, false
	}
	ke := skipString(b, i)
	if ke < 0 || bytes.IndexByte(b[i+1:ke-1], '\\') >= 0 {
		it.bad = true
		return nil, nil, false
	}
	name = b[i+1 : ke-1]
	i = skipSpace(b, ke)
	if i >= len(b) || b[i] != ':' {
		it.bad = true
		return nil, nil, false
	}
	vs := skipSpace(b, i+1)
	ve := skipValue(b, vs)
	if ve <= vs {
		it.bad = true
		return nil, nil, false
	}
	val = b[vs:ve]
	i = skipSpace(b, ve)
	switch {
	case i < len(b) && b[i] == ',':
		it.i = skipSpace(b, i+1)
	case i < len(b) && b[i] == '}':
		it.end = true
		if skipSpace(b, i+1) != len(b) {
			it.bad = true
			return nil, nil, false
		}
	default:
		it.bad = true
		return nil, nil, false
	}
	return name, val, true
}

// plainText reports text that jsondoc.AppendQuote writes back unchanged
// between quotes: valid UTF-8 with no control character, quote or
// backslash.
func plainText(s []byte) bool {
	// Eight bytes at a time while they are plain ASCII (the tests of a
	// byte below 0x20 and of a given byte in a word: "Bit Twiddling
	// Hacks", hasless and haszero); the rest byte by byte.
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for len(s) >= 8 {
		x := binary.LittleEndian.Uint64(s)
		q := x ^ (ones * '"')
		bs := x ^ (ones * '\\')
		if x&highs != 0 || (x-ones*0x20)&^x&highs != 0 || (q-ones)&^q&highs != 0 || (bs-ones)&^bs&highs != 0 {
			break
		}
		s = s[8:]
	}
	for _, c := range s {
		if c < 0x20 || c == '"' || c == '\\' {
			return false
		}
	}
	return utf8.Valid(s)
}

// plainString returns the content of a JSON string token that needs no
// unescaping and is written back as it is.
func plainString(tok []byte) ([]byte, bool) {
	if len(tok) < 2 || tok[0] != '"' || tok[len(tok)-1] != '"' {
		return nil, false
	}
	s := tok[1 : len(tok)-1]
	return s, plainText(s)
}

// canonicalInt reports s as strconv.FormatInt writes an integer that fits
// in bits (32 or 64): an optional '-', no leading zero, no "-0".
func canonicalInt(s []byte, bits int) bool {
	neg := len(s) > 0 && s[0] == '-'
	d := s
	if neg {
		d = s[1:]
	}
	if len(d) == 0 || (d[0] == '0' && (len(d) > 1 || neg)) {
		return false
	}
	for _, c := range d {
		if c < '0' || c > '9' {
			return false
		}
	}
	limit := "2147483647"
	if bits == 64 {
		limit = "9223372036854775807"
	}
	if neg {
		limit = limit[:len(limit)-1] + string(limit[len(limit)-1]+1)
	}
	if len(d) != len(limit) {
		return len(d) < len(limit)
	}
	return string(d) <= limit
}

// canonicalDateTime reads s as edm.FormatDateTime writes a time:
// YYYY-MM-DDThh:mm:ss.fffffffZ, every field in range. ok is false for
// any other text, even one edm.ParseDateTime accepts.
func canonicalDateTime(s []byte) (t time.Time, ok bool) {
	const shape = "dddd-dd-ddTdd:dd:dd.dddddddZ"
	if len(s) != len(shape) {
		return time.Time{}, false
	}
	for i := 0; i < len(shape); i++ {
		if shape[i] == 'd' {
			if s[i] < '0' || s[i] > '9' {
				return time.Time{}, false
			}
		} else if s[i] != shape[i] {
			return time.Time{}, false
		}
	}
	num := func(i, n int) int {
		v := 0
		for _, c := range s[i : i+n] {
			v = v*10 + int(c-'0')
		}
		return v
	}
	year, month, day := num(0, 4), num(5, 2), num(8, 2)
	hour, minute, sec, frac := num(11, 2), num(14, 2), num(17, 2), num(20, 7)
	if year < 1 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month) || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, false
	}
	return time.Date(year, time.Month(month), day, hour, minute, sec, frac*100, time.UTC), true
}

func daysIn(year, month int) int {
	return time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// canonicalGuid reports s as edm.ParseGuid returns a Guid: 36 lower-case
// hex digits and dashes.
func canonicalGuid(s []byte) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				return false
			}
		}
	}
	return true
}

// rawAnnotation is a stored "name@odata.type" member.
type rawAnnotation struct{ name, typ []byte }

// rawEntityJSON renders the stored item raw, read with the engine etag
// etag, as entityJSON renders decodeEntity's entity of it alone with no
// $select, and returns the entity's ETag too. ok is false when it cannot
// be sure of doing so; the caller then decodes.
func (s *Server) rawEntityJSON(req *request, table string, raw []byte, etag string) (body []byte, tag string, ok bool) {
	// First pass: the keys, the Timestamp and the annotations.
	var (
		pk, rk   []byte
		tsRaw    []byte
		ts       time.Time
		annots   [maxRawAnnotations]rawAnnotation
		nAnnots  int
		haveKeys int
	)
	it := newMemberIter(raw)
	for {
		name, val, more := it.next()
		if !more {
			break
		}
		if base, isType := bytes.CutSuffix(name, []byte("@odata.type")); isType {
			if len(val) == 0 || val[0] != '"' {
				continue // not a string: decodeEntity ignores it too
			}
			t, plain := plainString(val)
			if !plain || !plainText(base) || nAnnots == maxRawAnnotations {
				return nil, "", false
			}
			annots[nAnnots] = rawAnnotation{base, t}
			nAnnots++
			continue
		}
		switch string(name) {
		case "id", "PartitionKey":
			v, plain := plainString(val)
			if !plain {
				return nil, "", false
			}
			if name[0] == 'i' {
				rk, haveKeys = v, haveKeys|1
			} else {
				pk, haveKeys = v, haveKeys|2
			}
		case "Timestamp":
			v, plain := plainString(val)
			if !plain {
				return nil, "", false
			}
			t, canon := canonicalDateTime(v)
			if !canon {
				return nil, "", false
			}
			tsRaw, ts = val, t
		}
	}
	if it.bad || haveKeys != 3 {
		return nil, "", false
	}
	typeOf := func(name []byte) []byte {
		for i := nAnnots - 1; i >= 0; i-- {
			if bytes.Equal(annots[i].name, name) {
				return annots[i].typ
			}
		}
		return nil
	}

	var tagBuf [64]byte
	tag = string(appendTableETag(tagBuf[:0], ts, etag))
	meta := req.meta
	b := make([]byte, 0, 512+len(raw)+len(raw)/8)
	b = append(b, '{')
	if meta != noMetadata {
		b = append(b, `"odata.metadata":`...)
		b = appendJSONString(b, req.base+"/$metadata#"+table+"/@Element")
		b = append(b, ',')
		if meta == fullMetadata {
			path := entityPath(table, string(pk), string(rk))
			b = append(b, `"odata.type":`...)
			b = appendJSONString(b, req.account+"."+table)
			b = append(b, `,"odata.id":`...)
			b = appendJSONString(b, req.base+"/"+path)
			b = append(b, `,"odata.etag":`...)
			b = appendJSONString(b, tag)
			b = append(b, `,"odata.editLink":`...)
			b = appendJSONString(b, path)
			b = append(b, ',')
		} else {
			b = append(b, `"odata.etag":`...)
			b = appendJSONString(b, tag)
			b = append(b, ',')
		}
	}
	b = append(b, `"PartitionKey":"`...)
	b = append(b, pk...)
	b = append(b, `","RowKey":"`...)
	b = append(b, rk...)
	b = append(b, '"')
	if !ts.IsZero() {
		if meta == fullMetadata {
			b = append(b, `,"Timestamp@odata.type":"Edm.DateTime"`...)
		}
		b = append(b, `,"Timestamp":`...)
		b = append(b, tsRaw...)
	}

	// Second pass: the properties, in order.
	it = newMemberIter(raw)
	for {
		stored, val, more := it.next()
		if !more {
			break
		}
		if bytes.IndexByte(stored, '@') >= 0 || systemMembers[string(stored)] || string(val) == "null" {
			continue
		}
		name := stored
		if base, ok := bytes.CutSuffix(stored, []byte("~")); ok && reservedNames[string(base)] {
			name = base
		}
		if !plainText(name) {
			return nil, "", false
		}
		typ := typeOf(stored)
		if t, fast := rawType(typ, val); fast {
			if t != edm.String && annotated(edm.Value{Type: t}, meta) {
				b = append(b, ',', '"')
				b = append(b, name...)
				b = append(b, `@odata.type":"`...)
				b = append(b, t.Name()...)
				b = append(b, '"')
			}
			b = append(b, ',', '"')
			b = append(b, name...)
			b = append(b, '"', ':')
			b = append(b, val...)
			continue
		}
		n := string(name)
		v := storedValue(n, val, string(typ))
		b = appendProp(b, n, v, annotated(v, meta))
	}
	if it.bad {
		return nil, "", false
	}
	return append(b, '}'), tag, true
}

// rawType is the type of a stored value of annotation typ whose stored
// text is already its wire text; false for a value that must be decoded
// and written again (any Double or Binary among them, which the
// annotation rule or the canonical text makes worth no shortcut).
func rawType(typ, val []byte) (edm.Type, bool) {
	if len(val) == 0 {
		return 0, false
	}
	switch string(typ) {
	case "", "Edm.String":
		switch {
		case val[0] == '"':
			s, plain := plainString(val)
			// Within the String limit whatever its characters: UTF-16
			// units never outnumber UTF-8 bytes.
			return edm.String, plain && len(s) <= MaxStringUnits
		case len(typ) > 0:
			return 0, false
		case string(val) == "true" || string(val) == "false":
			return edm.Boolean, true
		}
		return edm.Int32, canonicalInt(val, 32)
	case "Edm.Boolean":
		return edm.Boolean, string(val) == "true" || string(val) == "false"
	case "Edm.Int32":
		return edm.Int32, canonicalInt(val, 32)
	case "Edm.Int64":
		s, plain := plainString(val)
		return edm.Int64, plain && canonicalInt(s, 64)
	case "Edm.DateTime":
		s, plain := plainString(val)
		if !plain {
			return 0, false
		}
		t, ok := canonicalDateTime(s)
		return edm.DateTime, ok && edm.InDateTimeRange(t)
	case "Edm.Guid":
		s, plain := plainString(val)
		return edm.Guid, plain && canonicalGuid(s)
	}
	return 0, false
}

// storedValue reads one stored property value as decodeEntity does: as
// its annotation says, else by its JSON type, else as the text of its
// JSON.
func storedValue(name string, raw []byte, typ string) edm.Value {
	v, err := parseValue(name, raw, typ)
	if err != nil {
		if v, err = parseValue(name, raw, ""); err != nil {
			v = edm.Value{Type: edm.String, S: compactJSON(raw)}
		}
	}
	return v
}

// appendTableETag appends tableETag(ts, etag).
func appendTableETag(b []byte, ts time.Time, etag string) []byte {
	if etag != "" {
		// FNV-1a, 32 bits (hash/fnv's New32a, without its allocation).
		h := uint32(2166136261)
		for i := 0; i < len(etag); i++ {
			h ^= uint32(etag[i])
			h *= 16777619
		}
		ts = ts.UTC().Truncate(time.Second).Add(time.Duration(h%10_000_000) * 100)
	}
	var tb [40]byte
	text := ts.UTC().Truncate(100*time.Nanosecond).AppendFormat(tb[:0], "2006-01-02T15:04:05.0000000Z")
	b = append(b, `W/"datetime'`...)
	for _, c := range text {
		if c == ':' {
			b = append(b, "%3A"...)
		} else {
			b = append(b, c)
		}
	}
	return append(b, `'"`...)
}
