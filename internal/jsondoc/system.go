package jsondoc

import "strconv"

// System holds the properties the server owns on a stored document.
type System struct {
	Rid  string // resource id, e.g. "DJB7AI1lZHoBAAAAAAAAAA=="
	Self string // rid path, e.g. "dbs/DJB7AA==/colls/DJB7AI1lZHo=/docs/DJB7AI1lZHoBAAAAAAAAAA==/"
	Etag string // includes its double quotes, e.g. `"0000-..."`; it is JSON-encoded as a string
	Ts   int64  // last write, epoch seconds
}

// isSystemKey reports whether a top-level member name is one of the five
// system properties WithSystem and StripSystem manage.
func isSystemKey(key []byte, escaped bool) bool {
	if escaped {
		var buf [96]byte
		if len(key) > 6*len("_attachments") { // longest name, every byte escaped
			return false
		}
		key = appendUnescape(buf[:0], key)
	}
	switch string(key) {
	case "_rid", "_self", "_etag", "_ts", "_attachments":
		return true
	}
	return false
}

// isSystemName is isSystemKey for a decoded name.
func isSystemName(name string) bool {
	switch name {
	case "_rid", "_self", "_etag", "_ts", "_attachments":
		return true
	}
	return false
}

// WithSystem appends to dst (which may be nil) a copy of the object raw with
// every top-level _rid, _self, _etag, _ts and _attachments member removed and
// then "_rid", "_self", "_etag", "_attachments":"attachments/", "_ts" appended
// at the end, in that order, as Cosmos DB returns them. All other members keep
// their order and their exact bytes (from the opening quote of the name to the
// end of the value); whitespace between members is dropped.
//
// raw must have been accepted by Scan. WithSystem panics on anything else: that
// is a bug in the caller, not bad input.
func WithSystem(dst, raw []byte, s System) []byte {
	dst, n := appendWithoutSystem(dst, raw)
	if n > 0 {
		dst = append(dst, ',')
	}
	dst = append(dst, `"_rid":`...)
	dst = AppendQuote(dst, s.Rid)
	dst = append(dst, `,"_self":`...)
	dst = AppendQuote(dst, s.Self)
	dst = append(dst, `,"_etag":`...)
	dst = AppendQuote(dst, s.Etag)
	dst = append(dst, `,"_attachments":"attachments/","_ts":`...)
	dst = strconv.AppendInt(dst, s.Ts, 10)
	return append(dst, '}')
}

// StripSystem appends to dst a copy of the object raw without its top-level
// system members (_rid, _self, _etag, _ts, _attachments), e.g. for a document a
// client read and sent back. Like WithSystem it requires input accepted by Scan
// and panics otherwise.
func StripSystem(dst, raw []byte) []byte {
	dst, _ = appendWithoutSystem(dst, raw)
	return append(dst, '}')
}

// appendWithoutSystem appends '{' and the non-system members of the object
// raw, comma separated, and returns how many it wrote. The closing brace is
// left to the caller.
func appendWithoutSystem(dst, raw []byte) ([]byte, int) {
	p := parser{data: raw, lax: true} // raw was accepted by Scan, maybe by an older version
	i := skipWS(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		panic("BUG: jsondoc: system properties edited on a non-object")
	}
	dst = append(dst, '{')
	n := 0
	i = skipWS(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		mustEnd(raw, i+1)
		return dst, 0
	}
	for {
		if i >= len(raw) || raw[i] != '"' {
			panic("BUG: jsondoc: system properties edited on invalid JSON")
		}
		ks := i
		ke, esc, err := scanString(raw, i, false)
		mustOK(err)
		i = skipWS(raw, ke)
		if i >= len(raw) || raw[i] != ':' {
			panic("BUG: jsondoc: system properties edited on invalid JSON")
		}
		i, err = p.value(skipWS(raw, i+1), 1, 0)
		mustOK(err)
		if !isSystemKey(raw[ks+1:ke-1], esc) {
			if n > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, raw[ks:i]...)
			n++
		}
		i = skipWS(raw, i)
		if i < len(raw) && raw[i] == ',' {
			i = skipWS(raw, i+1)
			continue
		}
		if i < len(raw) && raw[i] == '}' {
			mustEnd(raw, i+1)
			return dst, n
		}
		panic("BUG: jsondoc: system properties edited on invalid JSON")
	}
}

func mustOK(err error) {
	if err != nil {
		panic("BUG: jsondoc: system properties edited on invalid JSON: " + err.Error())
	}
}

func mustEnd(raw []byte, end int) {
	mustOK(checkTrailing(raw, end))
}
