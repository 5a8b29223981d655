package table

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/parsecdb/parsec/internal/api/table/edm"
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
	members, err := objectMembers(raw)
	if err != nil {
		return nil, err
	}
	types := map[string]string{}
	for _, m := range members {
		if name, ok := strings.CutSuffix(m.name, "@odata.type"); ok {
			var t string
			if json.Unmarshal(m.raw, &t) == nil {
				types[name] = t
			}
		}
	}
	e := &entity{}
	for _, m := range members {
		if strings.Contains(m.name, "@") || len(m.raw) == 0 {
			continue
		}
		switch m.name {
		case "id":
			_ = json.Unmarshal(m.raw, &e.rk)
			continue
		case "PartitionKey":
			if json.Unmarshal(m.raw, &e.pk) != nil {
				e.pk = string(m.raw) // a key that is not a string, written through the NoSQL API
			}
			continue
		case "Timestamp":
			var s string
			if json.Unmarshal(m.raw, &s) == nil {
				if t, err := edm.ParseDateTime(s); err == nil {
					e.ts = t
				}
			}
			continue
		case "_etag":
			_ = json.Unmarshal(m.raw, &e.etag)
			continue
		}
		if systemMembers[m.name] {
			continue
		}
		if string(m.raw) == "null" {
			continue
		}
		name := propertyName(m.name)
		v, err := parseValue(name, m.raw, types[m.name])
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

func compactJSON(raw []byte) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}
