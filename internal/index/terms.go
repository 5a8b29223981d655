package index

import "github.com/parsecdb/parsec/internal/query/eval"

// MaxDepth bounds the object nesting that terms reach; deeper properties
// are not indexed.
const MaxDepth = 32

// MaxPathBytes bounds the property names of an indexed path, in bytes
// summed over its segments; properties with longer paths are not indexed.
// Together with MaxStringBytes it bounds the size of every term, however
// long the names and values of a document are.
const MaxPathBytes = 512

// Fits reports whether the index can hold terms at path: at most MaxDepth
// segments of at most MaxPathBytes in all. Queries on other paths read the
// documents, as for a path the policy excludes.
//
// Such paths are left out rather than cut short: a cut path could be shared
// by two properties, and then a document would have two entries on it,
// which the ORDER BY read from the index must never see (one entry per
// document with a defined value).
func Fits(path []string) bool {
	if len(path) > MaxDepth {
		return false
	}
	n := 0
	for _, s := range path {
		n += len(s)
	}
	return n <= MaxPathBytes
}

// Terms calls fn for every indexed term of doc (a whole stored document),
// in document order: the path (valid only during the call) and the value.
// A path has at most one term (eval.FromJSON keeps one member per name).
func (p *Policy) Terms(doc eval.Value, fn func(path []string, v eval.Value)) {
	if p == nil || p.None || doc.Kind() != eval.Object {
		return
	}
	var path [MaxDepth]string
	p.walk(doc, path[:0], fn)
}

func (p *Policy) walk(obj eval.Value, path []string, fn func([]string, eval.Value)) {
	for i := range obj.Len() {
		name, v := obj.Member(i)
		sub := append(path, name)
		if p.Indexed(sub) {
			fn(sub, v)
		}
		if v.Kind() == eval.Object && len(sub) < MaxDepth && Fits(sub) && p.mayIndexBelow(sub) {
			p.walk(v, sub, fn)
		}
	}
}
