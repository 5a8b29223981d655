package index

import "github.com/parsecdb/parsec/internal/query/eval"

// MaxDepth bounds the object nesting that terms reach; deeper properties
// are not indexed.
const MaxDepth = 32

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
		if v.Kind() == eval.Object && len(sub) < MaxDepth && p.mayIndexBelow(sub) {
			p.walk(v, sub, fn)
		}
	}
}
