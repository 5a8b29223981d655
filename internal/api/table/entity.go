package table

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/parsecdb/parsec/internal/api/table/edm"
	"github.com/parsecdb/parsec/internal/jsondoc"
)

// Limits of an entity, as the service has them
// (learn.microsoft.com/rest/api/storageservices/understanding-the-table-service-data-model
// and, where Cosmos DB differs, its Table API FAQ).
const (
	// MaxProperties counts PartitionKey, RowKey and Timestamp too.
	MaxProperties = 255
	// MaxPropertyNameLen is in characters.
	MaxPropertyNameLen = 255
	// MaxRowKeyBytes and MaxPartitionKeyBytes are Cosmos DB's key limits.
	MaxRowKeyBytes       = 255
	MaxPartitionKeyBytes = 1024
	// MaxEntityBytes is Cosmos DB's 2 MB item limit, applied to the
	// stored item.
	MaxEntityBytes = 2 << 20
)

// A prop is one property of an entity.
type prop struct {
	name string
	v    edm.Value
}

// An entity is a decoded entity: its keys, its server timestamp and its
// other properties in order.
type entity struct {
	pk, rk string
	ts     time.Time
	props  []prop
	// etag is the engine's etag of the stored item ("" when not read).
	etag string
}

// get returns the value of a property, the system ones included, for
// filters and $select.
func (e *entity) get(name string) (edm.Value, bool) {
	switch name {
	case "PartitionKey":
		return edm.Value{Type: edm.String, S: e.pk}, true
	case "RowKey":
		return edm.Value{Type: edm.String, S: e.rk}, true
	case "Timestamp":
		if e.ts.IsZero() {
			return edm.Value{}, false
		}
		return edm.Value{Type: edm.DateTime, T: e.ts}, true
	}
	for _, p := range e.props {
		if p.name == name {
			return p.v, true
		}
	}
	return edm.Value{}, false
}

// tableETag is the entity's ETag in the Table format: its Timestamp,
// W/"datetime'2020-01-02T03%3A04%3A05.1234567Z'" (what Azure Table storage,
// Cosmos DB's Table API and Azurite send).
func tableETag(ts time.Time) string {
	return `W/"datetime'` + strings.ReplaceAll(edm.FormatDateTime(ts), ":", "%3A") + `'"`
}

// specialDouble is the string form of NaN and the infinities, "" for a
// finite double.
func specialDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return ""
}

// validPropertyName reports a name the service accepts: a C# identifier
// (a letter or '_', then letters, digits and '_').
func validPropertyName(name string) bool {
	if name == "" {
		return false
	}
	for i, r := range name {
		if r == '_' || unicode.IsLetter(r) || (i > 0 && (unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r) || unicode.Is(unicode.Pc, r))) {
			continue
		}
		return false
	}
	return true
}

// checkKey refuses a PartitionKey or RowKey value the service refuses: one
// with '/', '\\', '#', '?' or a control character, or longer than max
// bytes.
func checkKey(what, v string, max int) error {
	if !utf8.ValidString(v) {
		return errInput("The %s is not valid UTF-8.", what)
	}
	for _, r := range v {
		if r == '/' || r == '\\' || r == '#' || r == '?' || r < 0x20 || (r >= 0x7f && r <= 0x9f) {
			return newErr(http.StatusBadRequest, codeInvalidInput, "The %s %q contains the character %q, which keys cannot hold ('/', '\\', '#', '?' and control characters are not allowed).", what, v, r)
		}
	}
	if len(v) > max {
		return newErr(http.StatusBadRequest, codeKeyValueTooLarge, "The %s is %d bytes long; the limit is %d bytes.", what, len(v), max)
	}
	return nil
}

// parseEntity reads an entity from a request body (an OData JSON object
// with @odata.type annotations). PartitionKey and RowKey, when given in
// the URL (pk, rk non-nil), must agree with the body's when it has them.
func parseEntity(body []byte, pk, rk *string) (*entity, error) {
	if err := jsondoc.Validate(body); err != nil {
		return nil, errInput("The request body is not valid JSON: %v", err)
	}
	members, err := objectMembers(body)
	if err != nil {
		return nil, errInput("The request body is not a JSON object: %v", err)
	}
	types := map[string]string{}
	for _, m := range members {
		if name, ok := strings.CutSuffix(m.name, "@odata.type"); ok {
			var t string
			if json.Unmarshal(m.raw, &t) != nil {
				return nil, errInput("The type annotation of property %q is not a string.", name)
			}
			types[name] = t
		}
	}
	e := &entity{}
	var gotPK, gotRK bool
	seen := map[string]bool{}
	for _, m := range members {
		if strings.Contains(m.name, "@") || strings.HasPrefix(m.name, "odata.") {
			continue // annotations, and metadata a client echoes back
		}
		if seen[m.name] {
			return nil, errInput("The property %q is given twice.", m.name)
		}
		seen[m.name] = true
		switch m.name {
		case "PartitionKey", "RowKey":
			var s string
			if json.Unmarshal(m.raw, &s) != nil {
				return nil, newErr(http.StatusBadRequest, codeInvalidInput, "The %s must be a string.", m.name)
			}
			if t, ok := types[m.name]; ok && t != "Edm.String" {
				return nil, newErr(http.StatusBadRequest, codeInvalidInput, "The %s must be of type Edm.String, not %s.", m.name, t)
			}
			if m.name == "PartitionKey" {
				e.pk, gotPK = s, true
			} else {
				e.rk, gotRK = s, true
			}
			continue
		case "Timestamp":
			continue // the server sets it
		}
		if !validPropertyName(m.name) {
			return nil, newErr(http.StatusBadRequest, codePropertyNameInvalid, "The property name %q is invalid: property names must be valid C# identifiers.", m.name)
		}
		if utf8.RuneCountInString(m.name) > MaxPropertyNameLen {
			return nil, newErr(http.StatusBadRequest, codePropertyNameTooLong, "The property name %.40q... is %d characters long; the limit is %d.", m.name, utf8.RuneCountInString(m.name), MaxPropertyNameLen)
		}
		if bytes.Equal(m.raw, []byte("null")) {
			continue // the service stores no null properties
		}
		v, err := parseValue(m.name, m.raw, types[m.name])
		if err != nil {
			return nil, err
		}
		e.props = append(e.props, prop{name: m.name, v: v})
	}
	if pk != nil {
		if gotPK && e.pk != *pk {
			return nil, errInput("The PartitionKey of the body, %q, is not the one of the URL, %q.", e.pk, *pk)
		}
		e.pk, gotPK = *pk, true
	}
	if rk != nil {
		if gotRK && e.rk != *rk {
			return nil, errInput("The RowKey of the body, %q, is not the one of the URL, %q.", e.rk, *rk)
		}
		e.rk, gotRK = *rk, true
	}
	if !gotPK || !gotRK {
		return nil, newErr(http.StatusBadRequest, codePropertiesNeedValue, "The values are not specified for all properties in the entity: PartitionKey and RowKey are required.")
	}
	if err := checkKeys(e.pk, e.rk); err != nil {
		return nil, err
	}
	if len(e.props)+3 > MaxProperties {
		return nil, newErr(http.StatusBadRequest, codeTooManyProperties, "The entity has %d properties besides PartitionKey, RowKey and Timestamp; the limit is %d.", len(e.props), MaxProperties-3)
	}
	return e, nil
}

// checkKeys checks an entity's two keys.
func checkKeys(pk, rk string) error {
	if err := checkKey("PartitionKey", pk, MaxPartitionKeyBytes); err != nil {
		return err
	}
	if err := checkKey("RowKey", rk, MaxRowKeyBytes); err != nil {
		return err
	}
	if rk == "" {
		// The RowKey is the item id, which cannot be empty.
		return newErr(http.StatusBadRequest, codePropertiesNeedValue, "The RowKey cannot be empty on this server: it is the item's id.")
	}
	return nil
}

// parseValue reads one property value of type typ ("" when not
// annotated) and holds it to the service's size of a property value.
func parseValue(name string, raw []byte, typ string) (edm.Value, error) {
	v, err := parseTyped(name, raw, typ)
	if err != nil {
		return v, err
	}
	return v, checkValueSize(name, v)
}

// The size of one property value: a String holds at most 32K UTF-16 code
// units and a Binary 64 KiB (learn.microsoft.com/rest/api/storageservices/
// understanding-the-table-service-data-model, "Property types"); Cosmos
// DB's Table API documents no other limit besides the entity's 2 MB.
const (
	MaxStringUnits = 32 * 1024
	MaxBinaryBytes = 64 * 1024
)

// checkValueSize refuses a value larger than a property may hold, with
// the service's PropertyValueTooLarge.
func checkValueSize(name string, v edm.Value) error {
	switch v.Type {
	case edm.String:
		if n := utf16Len(v.S); n > MaxStringUnits {
			return newErr(http.StatusBadRequest, codePropertyValueTooLarge, "The property value exceeds the maximum allowed size (64KB): property %q is a string of %d UTF-16 characters; the limit is %d.", name, n, MaxStringUnits)
		}
	case edm.Binary:
		if len(v.Bin) > MaxBinaryBytes {
			return newErr(http.StatusBadRequest, codePropertyValueTooLarge, "The property value exceeds the maximum allowed size (64KB): property %q is %d bytes of binary; the limit is %d.", name, len(v.Bin), MaxBinaryBytes)
		}
	}
	return nil
}

// utf16Len is the length of s in UTF-16 code units.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return n
}

// parseTyped reads one property value of type typ ("" when not annotated).
func parseTyped(name string, raw []byte, typ string) (edm.Value, error) {
	bad := func(want string) error {
		return newErr(http.StatusBadRequest, codeInvalidInput, "The value of property %q is not a valid %s: %.60s", name, want, raw)
	}
	if typ == "" {
		switch raw[0] {
		case '"':
			var s string
			if json.Unmarshal(raw, &s) != nil {
				return edm.Value{}, bad("Edm.String")
			}
			return edm.Value{Type: edm.String, S: s}, nil
		case 't', 'f':
			return edm.Value{Type: edm.Boolean, B: raw[0] == 't'}, nil
		case '{', '[':
			return edm.Value{}, newErr(http.StatusBadRequest, codeInvalidValueType, "The value of property %q is a JSON object or array; entity properties hold single values.", name)
		}
		// A number: an Int32 when it is one, else a Double.
		if i, err := strconv.ParseInt(string(raw), 10, 32); err == nil {
			return edm.Value{Type: edm.Int32, I: i}, nil
		}
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil {
			return edm.Value{}, bad("Edm.Double")
		}
		return edm.Value{Type: edm.Double, F: f}, nil
	}
	t, ok := edm.ParseType(typ)
	if !ok {
		return edm.Value{}, newErr(http.StatusBadRequest, codeInvalidInput, "The type %q of property %q is not an EDM type the service knows.", typ, name)
	}
	var s string
	isStr := raw[0] == '"' && json.Unmarshal(raw, &s) == nil
	switch t {
	case edm.String:
		if !isStr {
			return edm.Value{}, bad("Edm.String")
		}
		return edm.Value{Type: t, S: s}, nil
	case edm.Int32, edm.Int64:
		text := string(raw)
		if isStr {
			text = s
		}
		bits := 32
		if t == edm.Int64 {
			bits = 64
		}
		i, err := strconv.ParseInt(text, 10, bits)
		if err != nil {
			return edm.Value{}, bad(typ)
		}
		return edm.Value{Type: t, I: i}, nil
	case edm.Double:
		if isStr {
			switch s {
			case "NaN":
				return edm.Value{Type: t, F: math.NaN()}, nil
			case "Infinity", "INF":
				return edm.Value{Type: t, F: math.Inf(1)}, nil
			case "-Infinity", "-INF":
				return edm.Value{Type: t, F: math.Inf(-1)}, nil
			}
			raw = []byte(s)
		}
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil {
			return edm.Value{}, bad(typ)
		}
		return edm.Value{Type: t, F: f}, nil
	case edm.Boolean:
		if !bytes.Equal(raw, []byte("true")) && !bytes.Equal(raw, []byte("false")) {
			return edm.Value{}, bad(typ)
		}
		return edm.Value{Type: t, B: raw[0] == 't'}, nil
	case edm.DateTime:
		if !isStr {
			return edm.Value{}, bad(typ)
		}
		tm, err := edm.ParseDateTime(s)
		if err != nil || !edm.InDateTimeRange(tm) {
			return edm.Value{}, bad(typ)
		}
		return edm.Value{Type: t, T: tm}, nil
	case edm.Guid:
		g, err := edm.ParseGuid(s)
		if !isStr || err != nil {
			return edm.Value{}, bad(typ)
		}
		return edm.Value{Type: t, S: g}, nil
	case edm.Binary:
		if !isStr {
			return edm.Value{}, bad(typ)
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return edm.Value{}, bad(typ)
		}
		return edm.Value{Type: t, Bin: b}, nil
	}
	return edm.Value{}, bad(typ)
}

// A member is one member of a JSON object, its value's raw JSON.
type member struct {
	name string
	raw  json.RawMessage
}

// objectMembers returns the members of a JSON object in order.
func objectMembers(body []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("not an object")
	}
	var out []member
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		out = append(out, member{name: k.(string), raw: raw})
	}
	return out, nil
}

// appendJSONString appends s as a JSON string.
func appendJSONString(b []byte, s string) []byte { return jsondoc.AppendQuote(b, s) }

// appendValueJSON appends the JSON of a value as the wire (and the stored
// item) carries it: Int64 as a decimal string, Double as a number with a
// '.' or an exponent (NaN and the infinities as strings), DateTime with
// seven fractional digits, Binary as base64.
func appendValueJSON(b []byte, v edm.Value) []byte {
	switch v.Type {
	case edm.String, edm.Guid:
		return appendJSONString(b, v.S)
	case edm.Int32:
		return strconv.AppendInt(b, v.I, 10)
	case edm.Int64:
		return appendJSONString(b, strconv.FormatInt(v.I, 10))
	case edm.Double:
		if s := specialDouble(v.F); s != "" {
			return appendJSONString(b, s)
		}
		return append(b, edm.FormatDouble(v.F)...)
	case edm.Boolean:
		return strconv.AppendBool(b, v.B)
	case edm.DateTime:
		return appendJSONString(b, edm.FormatDateTime(v.T))
	case edm.Binary:
		return appendJSONString(b, base64.StdEncoding.EncodeToString(v.Bin))
	}
	return append(b, "null"...)
}

// Metadata levels of a response (the Accept header's odata parameter).
type metadata int

const (
	noMetadata metadata = iota
	minimalMetadata
	fullMetadata
)

// annotated reports whether a property of type t carries its @odata.type
// at level m: at minimal metadata the types JSON cannot tell (Int64,
// DateTime, Guid, Binary, and Doubles that would read as integers or are
// not numbers), at full metadata every type but String, Boolean and Int32,
// whose JSON tells them, as Azurite writes them.
func annotated(v edm.Value, m metadata) bool {
	switch m {
	case noMetadata:
		return false
	case fullMetadata:
		return v.Type != edm.String && v.Type != edm.Boolean && v.Type != edm.Int32
	}
	switch v.Type {
	case edm.Int64, edm.DateTime, edm.Guid, edm.Binary:
		return true
	case edm.Double:
		return specialDouble(v.F) != "" || v.F == math.Trunc(v.F)
	}
	return false
}

// appendProp appends ,"name@odata.type":"…","name":value.
func appendProp(b []byte, name string, v edm.Value, annotate bool) []byte {
	if annotate {
		b = append(b, ',')
		b = appendJSONString(b, name+"@odata.type")
		b = append(b, ':')
		b = appendJSONString(b, v.Type.Name())
	}
	b = append(b, ',')
	b = appendJSONString(b, name)
	b = append(b, ':')
	return appendValueJSON(b, v)
}
