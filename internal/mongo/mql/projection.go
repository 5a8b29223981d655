package mql

import (
	"math"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// maxProjectionFields bounds the number of paths in a projection.
const maxProjectionFields = 10000

// Projection is a parsed find projection. It is immutable and safe for concurrent use.
//
// It is a tree of path components. In an inclusion projection the result holds _id (unless excluded)
// and the included paths, plus computed fields; in an exclusion projection the result holds everything
// but the excluded paths. $slice nodes are neutral: they trim an array whether or not other fields are
// included.
type Projection struct {
	inclusion  bool
	positional bool   // has an "a.$" path, which needs the query (ApplyWithQuery)
	posKey     string // that path as given ("a.b.$")
	excludeID  bool
	root       *projNode
}

type projAction int

const (
	projNone       projAction = iota // an inner node: only children act
	projInclude                      // keep the value
	projExclude                      // drop the value
	projSlice                        // keep the value, trimming arrays
	projElemMatch                    // keep the first array element matching a filter
	projComputed                     // the value of an expression
	projPositional                   // keep the array element the query matched ("a.$")
)

type projNode struct {
	action   projAction
	children map[string]*projNode
	order    []string // children in specification order

	skip, limit int64 // $slice: skip < 0 counts from the end; limit < 0 means "last -limit" (single form)
	single      bool  // $slice: n rather than [skip, limit]
	elem        pred  // $elemMatch, applied to a one-element array
	expr        expression
	path        []string // projPositional: the path of the array
}

func (n *projNode) child(name string) *projNode {
	if n.children == nil {
		n.children = map[string]*projNode{}
	}
	c, ok := n.children[name]
	if !ok {
		c = &projNode{}
		n.children[name] = c
		n.order = append(n.order, name)
	}
	return c
}

// ParseProjection parses a find projection: inclusion or exclusion of (dotted) fields, the _id rules
// (included unless excluded explicitly, the only field an inclusion projection may exclude), $slice,
// $elemMatch, and computed fields (a non-numeric, non-boolean value is an aggregation expression). A
// malformed or mixed projection yields an *Error.
func ParseProjection(p bson.D) (*Projection, error) {
	return parseProjection(p, false)
}

// parseProjection parses a find projection, or with agg an aggregation $project specification, where
// $slice and $elemMatch are expression operators rather than projection operators.
func parseProjection(p bson.D, agg bool) (*Projection, error) {
	proj := &Projection{root: &projNode{}}
	mode := 0 // 0 undecided, 1 inclusion, -1 exclusion
	idIncluded := false
	count := 0
	var add func(prefix string, spec bson.D, depth int) error
	add = func(prefix string, spec bson.D, depth int) error {
		if depth > maxDepth {
			return badValue("projection nested deeper than %d levels", maxDepth)
		}
		for _, e := range spec {
			count++
			if count > maxProjectionFields {
				return badValue("projection has more than %d fields", maxProjectionFields)
			}
			// mongod's FieldPath errors (field_path.cpp).
			if e.Key == "" {
				return newError(40352, "FieldPath cannot be constructed with empty string")
			}
			if strings.HasPrefix(e.Key, "$") {
				return newError(16410, "FieldPath field names may not start with '$'. Consider using $getField or $setField.")
			}
			// projection_parser.cpp's checks of a positional path: none in
			// $project (31324), and "$" only at the end (31394).
			if agg && slices.Contains(strings.Split(e.Key, "."), "$") {
				return newError(31324, "Cannot use positional projection in aggregation projection")
			}
			if strings.Contains(e.Key, ".$.") {
				return newError(31394, "As of 4.4, it's illegal to specify positional operator in the middle of a path.Positional projection may only be used at the end, for example: a.b.$. If the query previously used a form like a.b.$.d, remove the parts following the '$' and the results will be equivalent.")
			}
			path := e.Key
			if prefix != "" {
				path = prefix + "." + e.Key
			}
			parts := strings.Split(path, ".")
			positional := false
			for i, part := range parts {
				if part == "" {
					return newError(15998, "FieldPath field names may not be empty strings.")
				}
				if part == "$" {
					if agg || i != len(parts)-1 || i == 0 {
						return badValue("positional projection may only be used at the end of a find projection path: %s", path)
					}
					if proj.positional {
						return newError(31276, "Cannot specify more than one positional projection per query.")
					}
					positional = true
				}
			}
			node := &projNode{}
			var kind int // +1 inclusion-like, -1 exclusion, 0 neutral
			if positional {
				// mongod's codes (projection_parser.cpp): an object is 31271, a
				// literal 31308, and an exclusion reads "$" as a field name.
				switch v := e.Value.(type) {
				case bson.D:
					return newError(31271, "positional projection cannot be used with an expression or sub object")
				case bool, int32, int64, float64, bson.Decimal128:
					if !truthyValue(v) {
						return newError(16410, "FieldPath field names may not start with '$'. Consider using $getField or $setField.")
					}
				default:
					return newError(31308, "positional projection cannot be used with a literal")
				}
				parts = parts[:len(parts)-1]
				path = strings.Join(parts, ".")
				proj.positional, proj.posKey = true, e.Key
				if prefix != "" {
					proj.posKey = prefix + "." + e.Key
				}
				node.action, node.path = projPositional, parts
				if mode == -1 {
					return newError(31253, "Cannot do inclusion on field %s in exclusion projection", path)
				}
				mode = 1
				if err := proj.place(parts, node); err != nil {
					return err
				}
				continue
			}
			switch v := e.Value.(type) {
			case bson.D:
				if len(v) == 0 {
					return newError(51270, "An empty sub-projection is not a valid value. Found empty object at path %s", path)
				}
				if !strings.HasPrefix(v[0].Key, "$") {
					if err := add(path, v, depth+1); err != nil {
						return err
					}
					continue
				}
				op := v[0].Key
				if agg {
					op = "" // every operator is an expression
				}
				switch op {
				case "$slice":
					if err := parseSlice(node, v); err != nil {
						return err
					}
				case "$elemMatch":
					fd, ok := v[0].Value.(bson.D)
					if !ok || len(v) != 1 {
						return newError(31274, "elemMatch: Invalid argument, object required, but got %s", typeName(v[0].Value))
					}
					if len(parts) > 1 {
						return newError(31275, "Cannot use $elemMatch projection on a nested field.")
					}
					m, err := (&filterParser{}).parseOp(bson.E{Key: "$elemMatch", Value: fd}, depth+1, path, false)
					if err != nil {
						return err
					}
					node.action, node.elem, kind = projElemMatch, m, 1
				default:
					x, err := parseExpr(v, depth+1)
					if err != nil {
						return err
					}
					node.action, node.expr, kind = projComputed, x, 1
				}
			case bool, int32, int64, float64, bson.Decimal128:
				if truthyValue(v) {
					node.action, kind = projInclude, 1
				} else {
					node.action, kind = projExclude, -1
				}
			default:
				x, err := parseExpr(v, depth+1)
				if err != nil {
					return err
				}
				node.action, node.expr, kind = projComputed, x, 1
			}
			if path == "_id" && (node.action == projInclude || node.action == projExclude) {
				proj.excludeID = node.action == projExclude
				idIncluded = node.action == projInclude
				if node.action == projExclude {
					if err := proj.place(parts, node); err != nil {
						return err
					}
				}
				continue
			}
			if kind == 1 && mode == -1 {
				switch {
				case node.action != projComputed:
					return newError(31253, "Cannot do inclusion on field %s in exclusion projection", path)
				case isExprObject(e.Value):
					return newError(31252, "Cannot use expression other than $meta in exclusion projection")
				}
				return newError(31310, "Cannot use an expression %s: %s in an exclusion projection", e.Key, formatValue(e.Value))
			}
			if kind == -1 && mode == 1 {
				return newError(31254, "Cannot do exclusion on field %s in inclusion projection", path)
			}
			if kind != 0 {
				mode = kind
			}
			if err := proj.place(parts, node); err != nil {
				return err
			}
		}
		return nil
	}
	if err := add("", p, 0); err != nil {
		return nil, err
	}
	// {_id: 1} alone is an inclusion projection (of _id only).
	proj.inclusion = mode == 1 || (mode == 0 && idIncluded && len(proj.root.children) == 0)
	if proj.inclusion && proj.excludeID {
		// In an inclusion projection _id is dropped by simply not including it.
		delete(proj.root.children, "_id")
		proj.root.order = removeString(proj.root.order, "_id")
	}
	return proj, nil
}

func removeString(list []string, s string) []string {
	out := list[:0:0]
	for _, x := range list {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}

// place puts a leaf node at a path, rejecting a path that is a prefix of another one.
func (p *Projection) place(parts []string, leaf *projNode) error {
	n := p.root
	for i, part := range parts {
		if n.action != projNone {
			return newError(31250, "Path collision at %s", strings.Join(parts, "."))
		}
		if i == len(parts)-1 {
			if _, exists := n.children[part]; exists {
				return newError(31250, "Path collision at %s", strings.Join(parts, "."))
			}
			n.child(part)
			n.children[part] = leaf
			return nil
		}
		n = n.child(part)
	}
	return nil
}

func parseSlice(node *projNode, v bson.D) error {
	if len(v) != 1 {
		return badValue("$slice projection takes exactly one argument")
	}
	node.action = projSlice
	// A $slice mongod cannot read as find's, nor as the $slice expression
	// (two or three arguments), is 28667 with both reasons
	// (projection_parser.cpp); one it reads as the expression fails on
	// its first argument, which is not an array (28724).
	notSlice := func(args int, findReason string) error {
		return newError(28667, "Invalid $slice syntax. The given syntax { $slice: %s } did not match the find() syntax because :: %s :: The given syntax did not match the expression $slice syntax. :: caused by :: Expression $slice takes at least 2 arguments, and at most 3, but %d were passed in.", formatValue(v[0].Value), findReason, args)
	}
	switch a := v[0].Value.(type) {
	case bson.A:
		if len(a) < 2 || len(a) > 3 {
			return notSlice(len(a), "Location31272: $slice array argument should be of form [skip, limit]")
		}
		if len(a) != 2 {
			return newError(28724, "First argument to $slice must be an array")
		}
		skip, ok1 := wholeNumber(a[0])
		limit, ok2 := wholeNumber(a[1])
		if !ok1 || !ok2 {
			return newError(28724, "$slice arguments must be integers")
		}
		if limit <= 0 {
			return newError(28724, "$slice limit must be positive")
		}
		node.skip, node.limit = skip, limit
	default:
		if !isNumber(a) {
			return notSlice(1, "Location31273: $slice only supports numbers and [skip, limit] arrays")
		}
		// Any number, taken as a 32-bit integer (mongod's numberInt).
		f, _ := Float(a)
		n := int64(0)
		if !math.IsNaN(f) {
			n = int64(max(min(math.Trunc(f), math.MaxInt32), math.MinInt32))
		}
		node.single, node.limit = true, n
	}
	return nil
}

// sliceArray applies a $slice node to an array.
func (n *projNode) sliceArray(a bson.A) bson.A {
	l := int64(len(a))
	var from, to int64
	if n.single {
		if n.limit >= 0 {
			from, to = 0, min(n.limit, l)
		} else {
			from, to = max(l+n.limit, 0), l
		}
	} else {
		from = n.skip
		if from < 0 {
			from = max(l+from, 0)
		}
		from = min(from, l)
		to = l
		if n.limit < l-from {
			to = from + n.limit
		}
	}
	return append(bson.A{}, a[from:to]...)
}

// Apply returns the projected copy of doc; doc is not modified. A computed field whose expression
// fails (e.g. $divide by zero) is left out; TryApply reports such errors instead.
func (p *Projection) Apply(doc bson.D) bson.D {
	out, _ := p.TryApply(doc)
	return out
}

// TryApply is Apply that fails with the *Error of the first computed field whose expression fails,
// as an aggregation $project stage must.
func (p *Projection) TryApply(doc bson.D) (bson.D, error) {
	return p.ApplyWithQuery(doc, nil)
}

// ApplyWithQuery is TryApply for a projection that may use the positional operator ("a.$": 1): it
// keeps the first element of the array that query matched in doc. Without a query, or when the query
// does not select an element, the positional field is left out.
func (p *Projection) ApplyWithQuery(doc bson.D, query *Filter) (bson.D, error) {
	if p == nil {
		return doc, nil
	}
	c := &evalCtx{root: doc, query: query}
	out := p.apply(doc, c)
	return out, c.err
}

func (p *Projection) apply(doc bson.D, c *evalCtx) bson.D {
	if !p.inclusion {
		return p.exclude(doc, p.root)
	}
	out := bson.D{}
	if _, named := p.root.children["_id"]; !p.excludeID && !named {
		for _, e := range doc {
			if e.Key == "_id" {
				out = append(out, e)
				break
			}
		}
	}
	return append(out, p.include(doc, p.root, c)...)
}

// include projects a document with an inclusion tree: the fields the tree names, in document order,
// then computed fields the document did not have.
func (p *Projection) include(doc bson.D, n *projNode, c *evalCtx) bson.D {
	out := bson.D{}
	done := map[string]bool{}
	for _, e := range doc {
		child, ok := n.children[e.Key]
		if !ok {
			continue
		}
		done[e.Key] = true
		if v, keep := p.includeValue(e.Value, child, c); keep {
			out = append(out, bson.E{Key: e.Key, Value: v})
		}
	}
	for _, name := range n.order {
		child := n.children[name]
		if done[name] || !hasComputed(child) {
			continue
		}
		if v, keep := p.includeValue(missing, child, c); keep {
			out = append(out, bson.E{Key: name, Value: v})
		}
	}
	return out
}

func hasComputed(n *projNode) bool {
	if n.action == projComputed {
		return true
	}
	for _, c := range n.children {
		if hasComputed(c) {
			return true
		}
	}
	return false
}

// includeValue projects one value with an inclusion node; keep is false when the value is dropped.
func (p *Projection) includeValue(v any, n *projNode, c *evalCtx) (any, bool) {
	switch n.action {
	case projInclude:
		return v, v != missing
	case projSlice:
		if a, ok := v.(bson.A); ok {
			return n.sliceArray(a), true
		}
		return v, v != missing
	case projComputed:
		r, err := n.expr.eval(c)
		if err != nil && c.err == nil {
			c.err = err
		}
		if err != nil || r == missing {
			return nil, false
		}
		return r, true
	case projElemMatch:
		a, ok := v.(bson.A)
		if !ok {
			return nil, false
		}
		for _, el := range a {
			if n.elem.matches([]branch{{v: bson.A{el}}}) {
				return bson.A{el}, true
			}
		}
		return nil, false
	case projPositional:
		el, ok := positionalElement(c.root, n.path, c.query)
		if !ok {
			return nil, false
		}
		return bson.A{el}, true
	case projExclude:
		return nil, false
	}
	switch x := v.(type) {
	case bson.D:
		return p.include(x, n, c), true
	case bson.A:
		out := bson.A{}
		for _, el := range x {
			switch el.(type) {
			case bson.D, bson.A:
				if r, keep := p.includeValue(el, n, c); keep {
					out = append(out, r)
				}
			}
		}
		return out, true
	}
	if v == missing && hasComputed(n) {
		return p.include(bson.D{}, n, c), true
	}
	return nil, false
}

// exclude projects a document with an exclusion tree.
func (p *Projection) exclude(doc bson.D, n *projNode) bson.D {
	out := make(bson.D, 0, len(doc))
	for _, e := range doc {
		child, ok := n.children[e.Key]
		if !ok {
			out = append(out, e)
			continue
		}
		if v, keep := p.excludeValue(e.Value, child); keep {
			out = append(out, bson.E{Key: e.Key, Value: v})
		}
	}
	return out
}

func (p *Projection) excludeValue(v any, n *projNode) (any, bool) {
	switch n.action {
	case projExclude:
		return nil, false
	case projSlice:
		if a, ok := v.(bson.A); ok {
			return n.sliceArray(a), true
		}
		return v, true
	}
	switch x := v.(type) {
	case bson.D:
		return p.exclude(x, n), true
	case bson.A:
		out := make(bson.A, 0, len(x))
		for _, el := range x {
			r, _ := p.excludeValue(el, n)
			out = append(out, r)
		}
		return out, true
	}
	return v, true
}

// positionalElement returns the element of the array at path that the query selected.
func positionalElement(doc bson.D, path []string, query *Filter) (any, bool) {
	i, ok := positionalIndex(doc, path, query)
	if !ok {
		return nil, false
	}
	v, _, _ := plainGet(doc, path, "positional")
	return v.(bson.A)[i], true
}

// Positional reports whether the projection has a positional path
// ("a.$"), which Apply leaves out: ApplyWithQuery needs the query.
func (p *Projection) Positional() bool { return p != nil && p.positional }

// CheckQuery refuses a positional projection whose array the query does
// not name, as mongod does (31277, projection_parser.cpp): some path of
// the query, at its top level or under $and, $or or $nor, must start with
// the projection path's first field.
func (p *Projection) CheckQuery(query bson.D) error {
	if !p.Positional() {
		return nil
	}
	field, _, _ := strings.Cut(p.posKey, ".")
	if queryNames(query, field) {
		return nil
	}
	return newError(31277, "Positional projection '%s' does not match the query document.", p.posKey)
}

func queryNames(query bson.D, field string) bool {
	for _, e := range query {
		switch e.Key {
		case "$and", "$or", "$nor":
			a, _ := e.Value.(bson.A)
			for _, x := range a {
				if d, ok := x.(bson.D); ok && queryNames(d, field) {
					return true
				}
			}
		default:
			if head, _, _ := strings.Cut(e.Key, "."); head == field {
				return true
			}
		}
	}
	return false
}

// isExprObject reports an object whose first field is an operator: an
// expression, not a literal.
func isExprObject(v any) bool {
	d, ok := v.(bson.D)
	return ok && len(d) > 0 && strings.HasPrefix(d[0].Key, "$")
}
