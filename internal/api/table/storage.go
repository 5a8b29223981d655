package table

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/parsecdb/parsec/internal/api/table/edm"
	"github.com/parsecdb/parsec/internal/jsondoc"
)

// The stored form of an entity (DESIGN.md, "Stored form"): one JSON item
// whose "id" is the RowKey and whose "PartitionKey" member is the
// container's partition key, then "Timestamp", then each property as the
// OData JSON of the wire carries it, with an "@odata.type" member beside
// every property whose JSON does not tell its type exactly (Int64, Double,
// DateTime, Guid, Binary). A property named as a member the engine gives a
// meaning to is stored with a trailing '~', which no property name can
// hold.

// reservedNames are the top-level member names the engine reads or writes.
var reservedNames = map[string]bool{"id": true, "ttl": true, "_rid": true, "_self": true, "_etag": true, "_ts": true, "_attachments": true, "_lsn": true}

// systemMembers are the members of a stored item that are not
// properties.
var systemMembers = map[string]bool{"id": true, "_rid": true, "_self": true, "_etag": true, "_ts": true, "_attachments": true, "_lsn": true, "ttl": true,
	"PartitionKey": true, "RowKey": true, "Timestamp": true}

func storedName(name string) string {
	if reservedNames[name] {
		return name + "~"
	}
	return name
}

func propertyName(stored string) string {
	if base, ok := strings.CutSuffix(stored, "~"); ok && reservedNames[base] {
		return base
	}
	return stored
}

// storedTyped reports whether a stored property carries its type.
func storedTyped(t edm.Type) bool {
	return t != edm.String && t != edm.Boolean && t != edm.Int32
}

// encodeEntity renders the stored item of e.
func encodeEntity(e *entity) []byte {
	b := make([]byte, 0, 256)
	b = append(b, `{"id":`...)
	b = appendJSONString(b, e.rk)
	b = append(b, `,"PartitionKey":`...)
	b = appendJSONString(b, e.pk)
	b = appendProp(b, "Timestamp", edm.Value{Type: edm.DateTime, T: e.ts}, true)
	for _, p := range e.props {
		b = appendProp(b, storedName(p.name), p.v, storedTyped(p.v.Type))
	}
	return append(b, '}')
}

// decodeEntity reads a stored item back: one this API wrote, or one
// written through the NoSQL API (whose members are read by their JSON
// types: strings, booleans, Int32 when a whole number fits, else Double;
// objects and arrays as strings holding their JSON; nulls left out). It
// never fails on an item's content; only malformed JSON is an error.
func decodeEntity(raw []byte) (*entity, error) {
	members, err := storedMembers(raw)
	if err != nil {
		return nil, err
	}
	// The annotations, "name@odata.type", by the member they annotate.
	type annotation struct{ name, typ string }
	var types []annotation
	for _, m := range members {
		if name, ok := strings.CutSuffix(m.name, "@odata.type"); ok {
			if t, ok := jsondoc.UnquoteString(m.raw); ok {
				types = append(types, annotation{name, t})
			}
		}
	}
	typeOf := func(name string) string {
		// The last annotation of a name wins, as a map's would.
		for i := len(types) - 1; i >= 0; i-- {
			if types[i].name == name {
				return types[i].typ
			}
		}
		return ""
	}
	e := &entity{props: make([]prop, 0, len(members)), size: len(raw)}
	for _, m := range members {
		if len(m.raw) == 0 || strings.IndexByte(m.name, '@') >= 0 {
			continue
		}
		switch m.name {
		case "id":
			e.rk, _ = jsondoc.UnquoteString(m.raw)
			continue
		case "PartitionKey":
			var ok bool
			if e.pk, ok = jsondoc.UnquoteString(m.raw); !ok {
				e.pk = string(m.raw) // a key that is not a string, written through the NoSQL API
			}
			continue
		case "Timestamp":
			if s, ok := jsondoc.UnquoteString(m.raw); ok {
				if t, err := edm.ParseDateTime(s); err == nil {
					e.ts = t
				}
			}
			continue
		case "_etag":
			e.etag, _ = jsondoc.UnquoteString(m.raw)
			continue
		}
		if systemMembers[m.name] {
			continue
		}
		if string(m.raw) == "null" {
			continue
		}
		name := propertyName(m.name)
		v, err := parseValue(name, m.raw, typeOf(m.name))
		if err != nil {
			// Not what its annotation says, or an object or array:
			// read as untyped JSON, and as text when even that fails.
			if v, err = parseValue(name, m.raw, ""); err != nil {
				v = edm.Value{Type: edm.String, S: compactJSON(m.raw)}
			}
		}
		e.props = append(e.props, prop{name: name, v: v})
	}
	return e, nil
}

// storedMembers returns the members of a stored item in order. The engine
// stores valid JSON only, so a direct scan finds the members without
// checking the grammar; anything it does not expect (it never fails on
// valid JSON) falls back to objectMembers, which does.
func storedMembers(raw []byte) ([]member, error) {
	if ms, ok := scanMembers(raw); ok {
		return ms, nil
	}
	return objectMembers(raw)
}

// scanMembers splits a JSON object into its members without validating
// their values; false when raw is not shaped as one.
func scanMembers(raw []byte) ([]member, bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return nil, false
	}
	out := make([]member, 0, 16)
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return out, skipSpace(raw, i+1) == len(raw)
	}
	for i < len(raw) {
		if raw[i] != '"' {
			return nil, false
		}
		ke := skipString(raw, i)
		if ke < 0 {
			return nil, false
		}
		name, ok := memberName(raw[i:ke])
		if !ok {
			return nil, false
		}
		i = skipSpace(raw, ke)
		if i >= len(raw) || raw[i] != ':' {
			return nil, false
		}
		vs := skipSpace(raw, i+1)
		ve := skipValue(raw, vs)
		if ve <= vs {
			return nil, false
		}
		out = append(out, member{name: name, raw: raw[vs:ve:ve]})
		i = skipSpace(raw, ve)
		if i >= len(raw) {
			return nil, false
		}
		switch raw[i] {
		case ',':
			i = skipSpace(raw, i+1)
		case '}':
			return out, skipSpace(raw, i+1) == len(raw)
		default:
			return nil, false
		}
	}
	return nil, false
}

// memberName decodes a member's name, without allocating for the names
// every stored item has.
func memberName(tok []byte) (string, bool) {
	switch string(tok) {
	case `"id"`:
		return "id", true
	case `"PartitionKey"`:
		return "PartitionKey", true
	case `"Timestamp"`:
		return "Timestamp", true
	case `"_rid"`:
		return "_rid", true
	case `"_self"`:
		return "_self", true
	case `"_etag"`:
		return "_etag", true
	case `"_attachments"`:
		return "_attachments", true
	case `"_ts"`:
		return "_ts", true
	case `"_lsn"`:
		return "_lsn", true
	}
	return jsondoc.UnquoteString(tok)
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the end of the JSON string starting at b[i] ('"'),
// or -1.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// skipValue returns the end of the JSON value starting at b[i], or -1.
// Nesting needs no stack: brackets are counted, strings skipped.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				if i = skipString(b, i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	}
	start := i
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	if i == start {
		return -1
	}
	return i
}

func compactJSON(raw []byte) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}
