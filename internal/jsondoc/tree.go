package jsondoc

// This file holds the small ordered JSON tree ApplyPatch edits. It is lazy:
// a container starts as its raw text and is expanded into members or
// elements only when a patch path walks into it, so untouched subtrees are
// copied back byte for byte and cost nothing but one validation pass.

type kind uint8

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

// node is one JSON value. Scalars and unexpanded containers are their raw
// text (no surrounding whitespace). Expanded containers own members/elems and
// drop raw.
type node struct {
	kind     kind
	expanded bool
	raw      []byte
	members  []member // kindObject, expanded
	elems    []*node  // kindArray, expanded
}

// member is one object member. rawKey is the name's JSON token as written
// (quotes included), reused on output so untouched names stay byte-exact.
type member struct {
	name   string
	rawKey []byte
	val    *node
}

// newNode wraps raw, one validated JSON value without surrounding whitespace.
func newNode(raw []byte) *node {
	var k kind
	switch raw[0] {
	case '{':
		k = kindObject
	case '[':
		k = kindArray
	case '"':
		k = kindString
	case 't', 'f':
		k = kindBool
	case 'n':
		k = kindNull
	default:
		k = kindNumber
	}
	return &node{kind: k, raw: raw}
}

// parseNode validates raw (one JSON value, surrounding whitespace allowed,
// nested at most MaxDepth+extraDepth levels) and returns it as an
// unexpanded node aliasing raw.
func parseNode(raw []byte, extraDepth int) (*node, error) {
	if err := validate(raw, extraDepth); err != nil {
		return nil, err
	}
	return newNode(trimWS(raw)), nil
}

func trimWS(raw []byte) []byte {
	i := skipWS(raw, 0)
	j := len(raw)
	for j > i && isWS[raw[j-1]] {
		j--
	}
	return raw[i:j]
}

// expand turns an unexpanded container into members or elements. Later
// duplicates of a member name are dropped: the first occurrence wins, as in
// Scan. It is a no-op for scalars and expanded containers.
func (n *node) expand() {
	if n.expanded || (n.kind != kindObject && n.kind != kindArray) {
		return
	}
	raw := n.raw
	p := parser{data: raw, lax: true} // validated when the tree was made
	i := skipWS(raw, 1)
	closer := byte('}')
	if n.kind == kindArray {
		closer = ']'
	}
	var seen map[string]struct{} // dedup index, built once an object is big
	for i < len(raw) && raw[i] != closer {
		if n.kind == kindObject {
			ke, esc, err := scanString(raw, i, false)
			mustValid(err)
			rawKey := raw[i:ke]
			name := decodeKey(raw[i+1:ke-1], esc)
			i = skipWS(raw, skipWS(raw, ke)+1) // past ':'
			ve, err := p.value(i, 1, 0)
			mustValid(err)
			dup := false
			if seen != nil {
				_, dup = seen[name]
			} else {
				dup = n.find(name) >= 0
			}
			if !dup {
				n.members = append(n.members, member{name: name, rawKey: rawKey, val: newNode(raw[i:ve])})
				if seen != nil {
					seen[name] = struct{}{}
				} else if len(n.members) == 32 {
					seen = make(map[string]struct{}, 64)
					for _, m := range n.members {
						seen[m.name] = struct{}{}
					}
				}
			}
			i = ve
		} else {
			ve, err := p.value(i, 1, 0)
			mustValid(err)
			n.elems = append(n.elems, newNode(raw[i:ve]))
			i = ve
		}
		i = skipWS(raw, i)
		if raw[i] == ',' {
			i = skipWS(raw, i+1)
		}
	}
	n.expanded = true
	n.raw = nil
}

func mustValid(err error) {
	if err != nil {
		panic("BUG: jsondoc: tree holds invalid JSON: " + err.Error())
	}
}

// find returns the index of the member called name, or -1. The object must
// be expanded (or be in the middle of expansion).
func (n *node) find(name string) int {
	for i := range n.members {
		if n.members[i].name == name {
			return i
		}
	}
	return -1
}

// setMember replaces the value of member name in place, or appends a new
// member at the end of the object.
func (n *node) setMember(name string, v *node) {
	if i := n.find(name); i >= 0 {
		n.members[i].val = v
		return
	}
	n.members = append(n.members, member{name: name, rawKey: AppendQuote(nil, name), val: v})
}

func (n *node) removeMember(i int) {
	n.members = append(n.members[:i], n.members[i+1:]...)
}

func (n *node) insertElem(i int, v *node) {
	n.elems = append(n.elems, nil)
	copy(n.elems[i+1:], n.elems[i:])
	n.elems[i] = v
}

func (n *node) removeElem(i int) {
	n.elems = append(n.elems[:i], n.elems[i+1:]...)
}

// appendTo appends n's JSON text: raw text for scalars and untouched
// containers, compact text for expanded ones.
func (n *node) appendTo(dst []byte) []byte {
	if !n.expanded {
		return append(dst, n.raw...)
	}
	if n.kind == kindObject {
		dst = append(dst, '{')
		for i, m := range n.members {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, m.rawKey...)
			dst = append(dst, ':')
			dst = m.val.appendTo(dst)
		}
		return append(dst, '}')
	}
	dst = append(dst, '[')
	for i, e := range n.elems {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = e.appendTo(dst)
	}
	return append(dst, ']')
}
