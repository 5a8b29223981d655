package eval

import (
	"encoding/base64"
	"encoding/binary"
	"strings"
)

// Conditional and item functions.
var miscFuncs = []*builtin{
	// IIF(cond, a, b) is a when cond is true and b otherwise, undefined,
	// non-boolean and false alike (iif.md: IIF(123, 123, 456) is 456).
	{name: "IIF", min: 3, max: 3, keepUndefined: true, fn: func(c *callCtx, a []Value) (Value, error) {
		if a[0].isTrue() {
			return a[1], nil
		}
		return a[2], nil
	}},
	{name: "DOCUMENTID", min: 1, max: 1, fn: fnDocumentID},
}

// fnDocumentID is DOCUMENTID(root): the document part of the item's _rid.
// A _rid is base64 (with '-' for '/') of up to 20 bytes: 4 for the
// database, 4 for the collection, then 8 for the document as a
// little-endian integer whose top 4 bits are the resource type, 0 for a
// document (azure-cosmos-dotnet-v3, Pagination/ResourceIdentifier.cs). So
// "36ZyAPW+uN8NAAAAAAAAAA==" gives 13, documentid.md's example. Anything
// that is not an object with such a _rid gives undefined.
func fnDocumentID(c *callCtx, a []Value) (Value, error) {
	rid, ok := a[0].Property("_rid"), a[0].kind == Object
	if !ok || rid.kind != String {
		return undef, nil
	}
	id, ok := DocumentID(rid.s)
	if !ok {
		return undef, nil
	}
	return IntValue(int64(id)), nil
}

// DocumentID decodes the document number of a document _rid, for
// DOCUMENTID and for whoever assigns _rids.
func DocumentID(rid string) (uint64, bool) {
	b, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(rid, "-", "/"))
	if err != nil || len(b) < 16 || len(b) > 20 || b[4]&0x80 == 0 || b[15]>>4 != 0 {
		return 0, false
	}
	return binary.LittleEndian.Uint64(b[8:16]), true
}
