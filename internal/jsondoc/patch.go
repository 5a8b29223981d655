package jsondoc

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
)

// MaxPatchOperations is Cosmos DB's limit on operations in one patch.
const MaxPatchOperations = 10

// ErrInvalidPatch is matched (errors.Is) by every *PatchError: the patch body
// is malformed or an operation cannot apply to the document. Both mean HTTP
// 400 Bad Request.
var ErrInvalidPatch = errors.New("jsondoc: invalid patch")

// PatchOp is one partial-update operation as it travels on the wire.
type PatchOp struct {
	Op    string          `json:"op"`              // add, set, replace, remove, incr or move
	Path  string          `json:"path"`            // JSON Pointer (RFC 6901) of the target
	From  string          `json:"from,omitempty"`  // source pointer, move only
	Value json.RawMessage `json:"value,omitempty"` // raw JSON; nil when absent ("null" is a value)
}

// PatchError says which operation failed and why. Error() reads like
// `operation 2 (replace /a/b): path does not exist`; Index is 0-based (the
// position in the operations array), -1 when the body as a whole is wrong.
type PatchError struct {
	Index int
	Op    string
	Path  string
	Msg   string
	Err   error // underlying cause, e.g. a *SyntaxError in a value; may be nil
}

func (e *PatchError) Error() string {
	switch {
	case e.Index < 0:
		return "invalid patch: " + e.Msg
	case e.Op == "":
		return "operation " + strconv.Itoa(e.Index) + ": " + e.Msg
	}
	return "operation " + strconv.Itoa(e.Index) + " (" + e.Op + " " + e.Path + "): " + e.Msg
}

// Is makes errors.Is(err, ErrInvalidPatch) true for every *PatchError.
func (e *PatchError) Is(target error) bool { return target == ErrInvalidPatch }

func (e *PatchError) Unwrap() error { return e.Err }

// Touches reports whether op may change the value at pointer or anything
// inside or above it: path (and from, for move) equals pointer, lies under it,
// or contains it. The server uses it to refuse patches of the id or partition
// key paths. A malformed pointer touches nothing.
func (op PatchOp) Touches(pointer string) bool {
	p, msg := parsePointer(pointer)
	if msg != "" {
		return false
	}
	overlap := func(s string) bool {
		t, msg := parsePointer(s)
		return msg == "" && (hasPrefix(t, p) || hasPrefix(p, t))
	}
	return overlap(op.Path) || (op.Op == "move" && overlap(op.From))
}

type opKind uint8

const (
	opAdd opKind = iota
	opSet
	opReplace
	opRemove
	opIncr
	opMove
)

var opKinds = map[string]opKind{
	"add": opAdd, "set": opSet, "replace": opReplace, "remove": opRemove, "incr": opIncr, "move": opMove,
}

// compiledOp is a checked PatchOp: pointers split, value validated.
type compiledOp struct {
	kind  opKind
	path  []string
	from  []string
	value []byte // validated, whitespace-trimmed; nil for remove and move
}

// compile checks one operation on its own (no document needed).
func compile(op PatchOp) (compiledOp, string, error) {
	var c compiledOp
	k, ok := opKinds[op.Op]
	if !ok {
		if op.Op == "" {
			return c, `missing "op"`, nil
		}
		return c, "unknown op " + strconv.Quote(op.Op) + " (want add, set, replace, remove, incr or move)", nil
	}
	c.kind = k
	var msg string
	if c.path, msg = parsePointer(op.Path); msg != "" {
		return c, msg, nil
	}
	if isSystemName(c.path[0]) {
		return c, "cannot patch system property " + strconv.Quote(c.path[0]), nil
	}
	switch k {
	case opAdd, opSet, opReplace, opIncr:
		if op.Value == nil {
			return c, `missing "value"`, nil
		}
		if err := Validate(op.Value); err != nil {
			return c, `"value" is not valid JSON: ` + err.Error(), err
		}
		c.value = trimWS(op.Value)
		if k == opIncr && newNode(c.value).kind != kindNumber {
			return c, `"value" of incr must be a number`, nil
		}
	case opMove:
		if op.From == "" {
			return c, `missing "from"`, nil
		}
		if c.from, msg = parsePointer(op.From); msg != "" {
			return c, `"from": ` + msg, nil
		}
		if isSystemName(c.from[0]) {
			return c, "cannot patch system property " + strconv.Quote(c.from[0]), nil
		}
		if len(c.path) > len(c.from) && hasPrefix(c.path, c.from) {
			return c, `path cannot be a child of "from"`, nil
		}
	}
	return c, "", nil
}

// ParsePatch decodes a PATCH request body. Two forms are accepted:
//
//	{"condition": "FROM c WHERE ...", "operations": [op, ...]}   condition optional (string or null)
//	[op, ...]                                                    bare array (JS SDK); no condition
//
// Each op is {"op", "path", "from"?, "value"?}: op is one of add, set,
// replace, remove, incr, move; path is required; value is required for add,
// set, replace and incr (a number for incr); from is required for move, and
// path must not lie under from. Paths naming the system properties (_rid,
// _self, _etag, _ts, _attachments) are refused. There must be 1 to
// MaxPatchOperations operations. Unknown members are ignored; when a member
// name repeats, the first wins.
//
// Errors are *PatchError (errors.Is(err, ErrInvalidPatch)). The returned
// values are copies: ops do not alias body.
func ParsePatch(body []byte) (cond string, ops []PatchOp, err error) {
	root, err := parseNode(body, envelopeDepth)
	if err != nil {
		return "", nil, &PatchError{Index: -1, Msg: "body is not valid JSON: " + err.Error(), Err: err}
	}
	list := root
	switch root.kind {
	case kindArray:
	case kindObject:
		root.expand()
		if i := root.find("condition"); i >= 0 {
			switch c := root.members[i].val; c.kind {
			case kindString:
				cond, _ = UnquoteString(c.raw)
			case kindNull:
			default:
				return "", nil, &PatchError{Index: -1, Msg: `"condition" must be a string`}
			}
		}
		i := root.find("operations")
		if i < 0 {
			return "", nil, &PatchError{Index: -1, Msg: `missing "operations"`}
		}
		if list = root.members[i].val; list.kind != kindArray {
			return "", nil, &PatchError{Index: -1, Msg: `"operations" must be an array`}
		}
	default:
		return "", nil, &PatchError{Index: -1, Msg: `body must be an object with "operations" or an array of operations`}
	}
	list.expand()
	switch n := len(list.elems); {
	case n == 0:
		return "", nil, &PatchError{Index: -1, Msg: "no operations"}
	case n > MaxPatchOperations:
		return "", nil, &PatchError{Index: -1, Msg: "too many operations: " + strconv.Itoa(n) +
			" (at most " + strconv.Itoa(MaxPatchOperations) + " are allowed)"}
	}
	ops = make([]PatchOp, len(list.elems))
	for i, e := range list.elems {
		if e.kind != kindObject {
			return "", nil, &PatchError{Index: i, Msg: "operation must be an object"}
		}
		e.expand()
		op := &ops[i]
		for _, f := range [...]struct {
			name string
			dst  *string
		}{{"op", &op.Op}, {"path", &op.Path}, {"from", &op.From}} {
			j := e.find(f.name)
			if j < 0 {
				continue
			}
			v := e.members[j].val
			if v.kind != kindString {
				return "", nil, &PatchError{Index: i, Op: op.Op, Path: op.Path, Msg: strconv.Quote(f.name) + " must be a string"}
			}
			*f.dst, _ = UnquoteString(v.raw)
		}
		if j := e.find("value"); j >= 0 {
			op.Value = append(json.RawMessage(nil), e.members[j].val.raw...)
		}
		if _, msg, err := compile(*op); msg != "" {
			return "", nil, &PatchError{Index: i, Op: op.Op, Path: op.Path, Msg: msg, Err: err}
		}
	}
	return cond, ops, nil
}

// ApplyPatch applies ops in order to the JSON object doc and returns the new
// document. doc is never modified and the result never aliases it. If any
// operation fails, ApplyPatch returns a *PatchError naming it and no document:
// a patch applies entirely or not at all.
//
// Semantics (Cosmos DB "partial document update"; pointers per RFC 6901):
//
//   - add: on an object, creates the member or replaces its value (in place);
//     on an array, inserts at index 0..len, shifting later elements right, or
//     appends for "-". The parent must exist.
//   - set: like add, except that an existing array index is overwritten
//     instead of inserted before (index len and "-" append).
//   - replace: the target must exist (member, or array index < len) and its
//     value is overwritten; otherwise an error.
//   - remove: the target must exist; array elements after it shift left.
//   - incr: the target must be a number and the value is added to it
//     (integers stay integers while the sum fits in int64; otherwise the sum
//     is a float64 in encoding/json's format); a missing object member is
//     created with the value; a missing array index is an error.
//   - move: "from" must exist; its value is removed there, then written at
//     path with set semantics. path equal to from is a no-op; path under from
//     is an error.
//
// Untouched members keep their order and exact text; new members go at the
// end of their object; the containers a path walks into are rewritten
// compactly. Within those, a repeated member name keeps only its first
// occurrence, which is the one Scan reports.
//
// The system properties cannot be patched (ParsePatch's rule, rechecked
// here). The id and the partition key paths are not protected by this
// package: the caller knows them and refuses such ops with PatchOp.Touches.
func ApplyPatch(doc []byte, ops []PatchOp) ([]byte, error) {
	root, err := parseNode(doc, 0)
	if err != nil {
		return nil, err
	}
	if root.kind != kindObject {
		return nil, ErrNotObject
	}
	compiled := make([]compiledOp, len(ops))
	for i, op := range ops {
		c, msg, err := compile(op)
		if msg != "" {
			return nil, &PatchError{Index: i, Op: op.Op, Path: op.Path, Msg: msg, Err: err}
		}
		compiled[i] = c
	}
	for i := range compiled {
		if msg := compiled[i].apply(root); msg != "" {
			return nil, &PatchError{Index: i, Op: ops[i].Op, Path: ops[i].Path, Msg: msg}
		}
	}
	return root.appendTo(make([]byte, 0, len(doc)+64)), nil
}

const (
	msgNoPath   = "path does not exist"
	msgNoParent = "parent of path does not exist"
)

// walk returns the node at toks, or nil if some step is missing, is not a
// container, or is not a valid in-range array index.
func walk(n *node, toks []string) *node {
	for _, tok := range toks {
		n.expand()
		switch n.kind {
		case kindObject:
			i := n.find(tok)
			if i < 0 {
				return nil
			}
			n = n.members[i].val
		case kindArray:
			i, ok := arrayIndex(tok)
			if !ok || i >= len(n.elems) {
				return nil
			}
			n = n.elems[i]
		default:
			return nil
		}
	}
	return n
}

// parentOf walks to the container holding the last token of toks.
func parentOf(root *node, toks []string) (*node, string, string) {
	p := walk(root, toks[:len(toks)-1])
	if p == nil {
		return nil, "", msgNoParent
	}
	p.expand()
	if p.kind != kindObject && p.kind != kindArray {
		return nil, "", "parent of path is not an object or an array"
	}
	return p, toks[len(toks)-1], ""
}

// elemIndex resolves an array token for an existing element.
func elemIndex(p *node, tok string) (int, string) {
	i, ok := arrayIndex(tok)
	switch {
	case !ok && tok == "-":
		return 0, msgNoPath
	case !ok:
		return 0, "invalid array index " + strconv.Quote(tok)
	case i >= len(p.elems):
		return 0, msgNoPath
	}
	return i, ""
}

func (c *compiledOp) apply(root *node) string {
	switch c.kind {
	case opAdd, opSet:
		return put(root, c.path, newNode(c.value), c.kind == opAdd)
	case opReplace:
		p, last, msg := parentOf(root, c.path)
		if msg != "" {
			return msgNoPath
		}
		if p.kind == kindObject {
			i := p.find(last)
			if i < 0 {
				return msgNoPath
			}
			p.members[i].val = newNode(c.value)
			return ""
		}
		i, msg := elemIndex(p, last)
		if msg != "" {
			return msg
		}
		p.elems[i] = newNode(c.value)
		return ""
	case opRemove:
		_, msg := take(root, c.path)
		return msg
	case opIncr:
		return incr(root, c.path, c.value)
	case opMove:
		if len(c.path) == len(c.from) && hasPrefix(c.path, c.from) {
			if walk(root, c.from) == nil {
				return `"from" does not exist`
			}
			return ""
		}
		v, msg := take(root, c.from)
		if msg != "" {
			return `"from" does not exist`
		}
		return put(root, c.path, v, false)
	}
	panic("BUG: jsondoc: unknown patch op kind")
}

// put writes v at toks. On an array, insert chooses between inserting before
// an existing index (add) and overwriting it (set, move).
func put(root *node, toks []string, v *node, insert bool) string {
	p, last, msg := parentOf(root, toks)
	if msg != "" {
		return msg
	}
	if p.kind == kindObject {
		p.setMember(last, v)
		return ""
	}
	if last == "-" {
		p.elems = append(p.elems, v)
		return ""
	}
	i, ok := arrayIndex(last)
	switch {
	case !ok:
		return "invalid array index " + strconv.Quote(last)
	case i > len(p.elems):
		return "array index " + last + " is out of range (length " + strconv.Itoa(len(p.elems)) + ")"
	case insert || i == len(p.elems):
		p.insertElem(i, v)
	default:
		p.elems[i] = v
	}
	return ""
}

// take removes and returns the existing value at toks.
func take(root *node, toks []string) (*node, string) {
	p, last, msg := parentOf(root, toks)
	if msg != "" {
		return nil, msgNoPath
	}
	if p.kind == kindObject {
		i := p.find(last)
		if i < 0 {
			return nil, msgNoPath
		}
		v := p.members[i].val
		p.removeMember(i)
		return v, ""
	}
	i, msg := elemIndex(p, last)
	if msg != "" {
		return nil, msg
	}
	v := p.elems[i]
	p.removeElem(i)
	return v, ""
}

func incr(root *node, toks []string, delta []byte) string {
	p, last, msg := parentOf(root, toks)
	if msg != "" {
		return msg
	}
	var slot **node
	if p.kind == kindObject {
		i := p.find(last)
		if i < 0 {
			p.setMember(last, newNode(delta))
			return ""
		}
		slot = &p.members[i].val
	} else {
		i, msg := elemIndex(p, last)
		if msg != "" {
			return msg
		}
		slot = &p.elems[i]
	}
	if (*slot).kind != kindNumber {
		return "target of incr is not a number"
	}
	sum, msg := addNumbers((*slot).raw, delta)
	if msg != "" {
		return msg
	}
	*slot = &node{kind: kindNumber, raw: sum}
	return ""
}

// addNumbers adds two JSON number texts. Two integers that fit in int64 (and
// whose sum does) give an integer; anything else is summed as float64 and
// formatted like encoding/json does.
func addNumbers(a, b []byte) ([]byte, string) {
	if x, ok := parseInt(a); ok {
		if y, ok := parseInt(b); ok {
			if s := x + y; (s > x) == (y > 0) {
				return strconv.AppendInt(nil, s, 10), ""
			}
		}
	}
	x, errX := strconv.ParseFloat(string(a), 64)
	y, errY := strconv.ParseFloat(string(b), 64)
	f := x + y
	if errX != nil || errY != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, "incr result is out of range"
	}
	return appendFloat(nil, f), ""
}

func parseInt(b []byte) (int64, bool) {
	if strings.ContainsAny(string(b), ".eE") {
		return 0, false
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	return n, err == nil
}

// appendFloat formats f as encoding/json does (ES6 number formatting).
func appendFloat(dst []byte, f float64) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}
