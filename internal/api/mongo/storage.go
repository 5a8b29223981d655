package mongo

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/parsecdb/parsec/internal/epk"
	"github.com/parsecdb/parsec/internal/jsondoc"
	"github.com/parsecdb/parsec/internal/mongo/mql"
)

// The storage mapping (DESIGN.md): a document is stored as one JSON item,
// Extended JSON v2 canonical for every type except int32 (a plain integer)
// and finite doubles (a plain number with '.' or an exponent), preceded by
// an "id" member that encodes _id. Top-level field names the engine gives a
// meaning to are escaped with a trailing '~'.

// reservedNames are the top-level member names the engine reads or writes:
// the item id, the per-item time to live and the system properties. A
// document field named one of them, followed by any number of '~', is
// stored with one more '~'.
var reservedNames = []string{"id", "ttl", "_rid", "_self", "_etag", "_ts", "_attachments", "_lsn", shardMember}

// systemNames are the members the engine adds to a stored item, and the
// shard key member this API adds.
var systemNames = map[string]bool{"id": true, "_rid": true, "_self": true, "_etag": true, "_ts": true, "_attachments": true, "_lsn": true, shardMember: true}

// shardMember is the top-level member that holds a document's shard key
// value, encoded as an engine partition key value (shardComponent), in a
// collection sharded through this API: its container's partition key
// path is "/~sk", and the shard key's field is the container property
// shardKeyProperty. The value is written from the document on every write
// and dropped when the document is read.
const (
	shardMember      = "~sk"
	shardKeyPath     = "/" + shardMember
	shardKeyProperty = "mongoShardKey"
)

// escapeName returns the stored name of a top-level field.
func escapeName(k string) string {
	base := strings.TrimRight(k, "~")
	for _, r := range reservedNames {
		if base == r {
			return k + "~"
		}
	}
	return k
}

// unescapeName reverses escapeName for a stored member that is not a
// system property.
func unescapeName(k string) string {
	if !strings.HasSuffix(k, "~") {
		return k
	}
	base := strings.TrimRight(k, "~")
	for _, r := range reservedNames {
		if base == r {
			return k[:len(k)-1]
		}
	}
	return k
}

// storedName returns the stored name of a field at any level: a name that
// starts with '$' after any number of '~' gets one more '~' in front, so
// that Extended JSON cannot read its document as a type wrapper
// ({"$date": 1} is stored as {"~$date": 1}); DBRef's $ref, $id and $db
// are stored as they are. Top-level names are then escaped as escapeName
// says. Both mappings are bijections on disjoint sets of names.
func storedName(k string, top bool) string {
	if dollarName(k) && k != "$ref" && k != "$id" && k != "$db" {
		k = "~" + k
	}
	if top {
		k = escapeName(k)
	}
	return k
}

// dollarName reports a name that starts with '$' after any '~'s.
func dollarName(k string) bool {
	return strings.HasPrefix(strings.TrimLeft(k, "~"), "$")
}

// unescapeDollar reverses storedName's '$' escape.
func unescapeDollar(k string) string {
	if strings.HasPrefix(k, "~") && dollarName(k) {
		return k[1:]
	}
	return k
}

// unescapeNames reverses storedName's '$' escape in every document
// nested in v, in place, and returns v.
func unescapeNames(v any) any {
	switch x := v.(type) {
	case bson.D:
		for i := range x {
			x[i].Key = unescapeDollar(x[i].Key)
			x[i].Value = unescapeNames(x[i].Value)
		}
	case bson.A:
		for i := range x {
			x[i] = unescapeNames(x[i])
		}
	}
	return v
}

// maxDepth bounds the nesting of a stored document (mongod allows 100
// levels of BSON; Extended JSON wrappers add up to two more).
const maxDepth = 100

// encodeItem renders doc as the stored JSON item with id as its "id" and,
// when sk is not nil, sk (JSON) as its shard key member.
func encodeItem(doc bson.Raw, id string, sk []byte) ([]byte, error) {
	out := make([]byte, 0, len(doc)*2+len(id)+len(sk)+24)
	out = append(out, `{"id":`...)
	out = jsondoc.AppendQuote(out, id)
	if sk != nil {
		out = append(append(out, `,"`+shardMember+`":`...), sk...)
	}
	elems, err := doc.Elements()
	if err != nil {
		return nil, badValue("invalid BSON document: %v", err)
	}
	seen := make(map[string]bool, len(elems))
	for _, e := range elems {
		k := e.Key()
		if seen[k] {
			return nil, badValue("the document has the field %q twice", k)
		}
		seen[k] = true
		out = append(out, ',')
		out = jsondoc.AppendQuote(out, storedName(k, true))
		out = append(out, ':')
		if out, err = appendValue(out, e.Value(), 1); err != nil {
			return nil, err
		}
	}
	return append(out, '}'), nil
}

// appendValue appends one value: documents and arrays member by member,
// int32 and finite doubles as plain JSON numbers, strings, booleans and
// null as JSON, and every other type as the driver's canonical Extended
// JSON.
func appendValue(out []byte, v bson.RawValue, depth int) ([]byte, error) {
	if depth > maxDepth {
		return nil, badValue("the document is nested deeper than %d levels", maxDepth)
	}
	switch v.Type {
	case bson.TypeEmbeddedDocument:
		elems, err := v.Document().Elements()
		if err != nil {
			return nil, badValue("invalid BSON document: %v", err)
		}
		out = append(out, '{')
		seen := make(map[string]bool, len(elems))
		for i, e := range elems {
			k := e.Key()
			if seen[k] {
				return nil, badValue("a document has the field %q twice", k)
			}
			seen[k] = true
			if i > 0 {
				out = append(out, ',')
			}
			out = jsondoc.AppendQuote(out, storedName(k, false))
			out = append(out, ':')
			if out, err = appendValue(out, e.Value(), depth+1); err != nil {
				return nil, err
			}
		}
		return append(out, '}'), nil
	case bson.TypeArray:
		vals, err := v.Array().Values()
		if err != nil {
			return nil, badValue("invalid BSON array: %v", err)
		}
		out = append(out, '[')
		for i, e := range vals {
			if i > 0 {
				out = append(out, ',')
			}
			if out, err = appendValue(out, e, depth+1); err != nil {
				return nil, err
			}
		}
		return append(out, ']'), nil
	case bson.TypeInt32:
		return strconv.AppendInt(out, int64(v.Int32()), 10), nil
	case bson.TypeDouble:
		f := v.Double()
		if !math.IsNaN(f) && !math.IsInf(f, 0) {
			return appendDouble(out, f), nil
		}
	case bson.TypeString:
		return jsondoc.AppendQuote(out, v.StringValue()), nil
	case bson.TypeBoolean:
		return strconv.AppendBool(out, v.Boolean()), nil
	case bson.TypeNull:
		return append(out, "null"...), nil
	}
	ext, err := bson.MarshalExtJSON(bson.D{{Key: "v", Value: v}}, true, false)
	if err != nil {
		return nil, badValue("cannot store a value of type %s: %v", v.Type, err)
	}
	// {"v":VALUE}
	ext = bytes.TrimSpace(ext)
	i := bytes.IndexByte(ext, ':')
	if i < 0 || ext[len(ext)-1] != '}' {
		return nil, badValue("cannot store a value of type %s", v.Type)
	}
	return append(out, bytes.TrimSpace(ext[i+1:len(ext)-1])...), nil
}

// appendDouble writes a finite double so that it reads back as a double:
// the shortest representation, with ".0" added when it has neither a '.'
// nor an exponent.
func appendDouble(out []byte, f float64) []byte {
	start := len(out)
	out = strconv.AppendFloat(out, f, 'g', -1, 64)
	if !bytes.ContainsAny(out[start:], ".eE") {
		out = append(out, ".0"...)
	}
	return out
}

// decodeItem turns a stored item back into the document: the system
// properties and "id" are dropped, escaped names restored. It also returns
// the item's etag.
func decodeItem(raw []byte) (bson.D, string, error) {
	d, etag, _, err := decodeStored(raw)
	return d, etag, err
}

// decodeStored is decodeItem that also returns the item's _rid.
func decodeStored(raw []byte) (bson.D, string, string, error) {
	var d bson.D
	if err := bson.UnmarshalExtJSON(raw, false, &d); err != nil {
		// An item written through the NoSQL API whose members read as
		// Extended JSON type wrappers but are not valid ones ({"$date":
		// "soon"}): read its JSON as it is, so that scans go on.
		if d, err = literalDocument(raw); err != nil {
			return nil, "", "", fmt.Errorf("%w: a stored item is not a Mongo document: %v", errStoredDoc, err)
		}
	}
	// Only an item with a member name starting with "~ can hold an
	// escaped '$' name.
	escaped := bytes.Contains(raw, []byte(`"~`))
	out := make(bson.D, 0, len(d)+1)
	etag, rid := "", ""
	var itemID any
	hasID := false
	for _, e := range d {
		if systemNames[e.Key] {
			switch e.Key {
			case "_etag":
				etag, _ = e.Value.(string)
			case "_rid":
				rid, _ = e.Value.(string)
			case "id":
				itemID = e.Value
			}
			continue
		}
		if e.Key == "_id" {
			hasID = true
		}
		e.Key = unescapeDollar(unescapeName(e.Key))
		if escaped {
			e.Value = unescapeNames(e.Value)
		}
		out = append(out, e)
	}
	if !hasID && itemID != nil {
		// An item written through the NoSQL API: its id is its _id.
		out = append(bson.D{{Key: "_id", Value: itemID}}, out...)
	}
	return out, etag, rid, nil
}

var errStoredDoc = fmt.Errorf("stored document cannot be read")

// literalDocument decodes a JSON object as a document without Extended
// JSON: every object a document, member order kept; integers int32 when
// they fit, else int64; other numbers double.
func literalDocument(raw []byte) (bson.D, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := literalValue(dec, 0)
	if err != nil {
		return nil, err
	}
	d, ok := v.(bson.D)
	if !ok {
		return nil, fmt.Errorf("the item is not a JSON object")
	}
	return d, nil
}

func literalValue(dec *json.Decoder, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("the item nests deeper than %d levels", maxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			a := bson.A{}
			for dec.More() {
				v, err := literalValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			_, err := dec.Token()
			return a, err
		}
		d := bson.D{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := literalValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			d = append(d, bson.E{Key: k.(string), Value: v})
		}
		_, err := dec.Token()
		return d, err
	case json.Number:
		if i, err := t.Int64(); err == nil {
			if i >= math.MinInt32 && i <= math.MaxInt32 {
				return int32(i), nil
			}
			return i, nil
		}
		return t.Float64()
	}
	return tok, nil // string, bool or nil
}

// idString encodes an _id as the item id: an ObjectId as its 24 hex digits;
// a string as itself when it is unambiguous and holds no character an id
// cannot; every other value as "~" + a type tag + ":" + its encoding, with
// '%', '/', '\\', '#', '?' and control characters percent-escaped. Numbers
// that MongoDB considers equal (int32 1, int64 1, double 1.0) share one id.
func idString(v any) (string, error) {
	var s string
	switch x := v.(type) {
	case bson.ObjectID:
		return hex.EncodeToString(x[:]), nil
	case string:
		if plainStringID(x) {
			return x, nil
		}
		s = "~s:" + escapeID(x)
	case int32:
		s = "~n:" + strconv.FormatInt(int64(x), 10)
	case int64:
		s = "~n:" + strconv.FormatInt(x, 10)
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<63 {
			s = "~n:" + strconv.FormatInt(int64(x), 10)
		} else {
			s = "~n:" + strconv.FormatFloat(x, 'g', -1, 64)
		}
	// mongod's messages (insert.cpp).
	case bson.A:
		return "", badValue("can't use an array for _id")
	case bson.Regex:
		return "", badValue("can't use a regex for _id")
	case bson.Undefined:
		return "", badValue("can't use a undefined for _id")
	default:
		if k := dollarKey(v); k != "" {
			return "", newErr(52, "DollarPrefixedFieldName", "_id fields may not contain '$'-prefixed fields: %s is not valid for storage.", k)
		}
		raw, err := bson.Marshal(bson.D{{Key: "v", Value: v}})
		if err != nil {
			return "", badValue("invalid _id: %v", err)
		}
		var body []byte
		body, err = appendValue(nil, bson.Raw(raw).Lookup("v"), 1)
		if err != nil {
			return "", err
		}
		s = "~" + idTags[bson.Raw(raw).Lookup("v").Type] + ":" + escapeID(string(body))
	}
	if len(s) > 1023 {
		return "", badValue("_id is too long: its encoding as an item id is %d bytes; the limit is 1023", len(s))
	}
	return s, nil
}

// dollarKey returns the first field name starting with '$' in the
// documents of v (DBRef's $ref, $id and $db aside), or "": an _id cannot
// hold one, as in MongoDB.
func dollarKey(v any) string {
	switch x := v.(type) {
	case bson.D:
		for _, e := range x {
			if strings.HasPrefix(e.Key, "$") && e.Key != "$ref" && e.Key != "$id" && e.Key != "$db" {
				return e.Key
			}
			if k := dollarKey(e.Value); k != "" {
				return k
			}
		}
	case bson.A:
		for _, e := range x {
			if k := dollarKey(e); k != "" {
				return k
			}
		}
	}
	return ""
}

// idTags name the types of the _id values encoded with their stored JSON.
var idTags = map[bson.Type]string{
	bson.TypeEmbeddedDocument: "doc", bson.TypeBinary: "bin", bson.TypeBoolean: "bool",
	bson.TypeDateTime: "date", bson.TypeNull: "null", bson.TypeDBPointer: "dbptr",
	bson.TypeJavaScript: "js", bson.TypeSymbol: "sym", bson.TypeCodeWithScope: "cws",
	bson.TypeTimestamp: "ts", bson.TypeDecimal128: "dec", bson.TypeMinKey: "minkey", bson.TypeMaxKey: "maxkey",
}

func plainStringID(s string) bool {
	if s == "" || s[0] == '~' || len(s) > 1023 {
		return false
	}
	if len(s) == 24 {
		if _, err := hex.DecodeString(s); err == nil && strings.ToLower(s) == s {
			return false
		}
	}
	for i := 0; i < len(s); i++ {
		if needsEscape(s[i]) {
			return false
		}
	}
	return true
}

func needsEscape(c byte) bool {
	return c < 0x20 || c == 0x7f || c == '%' || c == '/' || c == '\\' || c == '#' || c == '?'
}

func escapeID(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if needsEscape(c) {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// shardComponent is the partition key component of a shard key value in
// a collection whose shard key is stored in its own member (present false:
// the field is absent, the undefined component). Values MongoDB considers
// equal get one component, and different values different ones, so that
// an equality on the shard key names one logical partition: null and
// booleans are themselves; numbers are JSON numbers when a float64 holds
// every equal value exactly (integers up to 2^53, and fractions), else
// "~n:" and their digits; other values are encoded as _ids are (idString:
// strings as themselves unless ambiguous, ObjectIds as their hex digits,
// other types tagged). Arrays, regular expressions, undefined and
// Decimal128 (whose equality with other numbers has no such encoding) are
// refused with code 2.
func shardComponent(v any, present bool) (epk.Component, error) {
	if !present {
		return epk.Undefined(), nil
	}
	var f float64
	switch x := v.(type) {
	case nil:
		return epk.Null(), nil
	case bool:
		return epk.Bool(x), nil
	case int32:
		return epk.Number(float64(x)), nil
	case int64:
		if x >= -1<<53 && x <= 1<<53 {
			return epk.Number(float64(x)), nil
		}
		return epk.String("~n:" + strconv.FormatInt(x, 10)), nil
	case float64:
		f = x
	case bson.A:
		return epk.Component{}, badValue("a shard key value cannot be an array")
	case bson.Regex, bson.Undefined, bson.Decimal128:
		return epk.Component{}, badValue("a shard key value cannot be of BSON type %s", typeName(v))
	default:
		id, err := idString(v)
		if err != nil {
			return epk.Component{}, badValue("a shard key value of BSON type %s cannot be encoded: %v", typeName(v), err)
		}
		return epk.String(id), nil
	}
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return epk.String("~n:" + strconv.FormatFloat(f, 'g', -1, 64)), nil
	case f != math.Trunc(f) || math.Abs(f) <= 1<<53:
		return epk.Number(f), nil
	case math.Abs(f) < 1<<63:
		return epk.String("~n:" + strconv.FormatInt(int64(f), 10)), nil
	}
	return epk.String("~n:" + strconv.FormatFloat(f, 'g', -1, 64)), nil
}

// keyComponent is the engine's partition key component for a shard key
// value (present false: the field is absent) in a collection whose
// partition key path is the shard key's field itself (one created through
// the NoSQL API, or by an earlier version): the value is the document's,
// so a type the engine cannot key by is a BadValue error.
func keyComponent(v any, present bool) (epk.Component, error) {
	if !present {
		return epk.Undefined(), nil
	}
	switch x := v.(type) {
	case nil:
		return epk.Null(), nil
	case string:
		return epk.String(x), nil
	case bool:
		return epk.Bool(x), nil
	case int32:
		return epk.Number(float64(x)), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return epk.Component{}, badValue("a shard key value cannot be NaN or infinite")
		}
		return epk.Number(x), nil
	}
	return epk.Component{}, &cmdError{Code: 2, CodeName: "BadValue",
		Msg: fmt.Sprintf("a shard key value of BSON type %s is not supported: shard key values must be strings, 32-bit integers, doubles, booleans or null", typeName(v))}
}

// typeName is the MongoDB $type alias of a value, as mongod's messages
// name types.
func typeName(v any) string { return mql.TypeName(v) }
