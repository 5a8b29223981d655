package mql

import (
	"math"
	"regexp"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// maxDepth bounds the nesting of filters and expressions a client may send.
const maxDepth = 100

// Filter is a parsed query filter. It is immutable and safe for concurrent use.
type Filter struct {
	root matcher
	// eqs are the equality conjuncts at the top level (also inside top-level $and), in filter order.
	eqs []eqConjunct
	// paths are all field paths the filter tests (for the positional update operator).
	paths []string
}

type eqConjunct struct {
	path  string
	value any
}

// matcher is a predicate over a whole document.
type matcher interface {
	match(doc bson.D) bool
}

// ParseFilter parses a MongoDB query filter: $eq $ne $gt $gte $lt $lte $in $nin $and $or $nor $not
// $exists $type $regex (+$options) $elemMatch $size $all $mod $expr, implicit equality and dotted paths
// into arrays. A malformed filter yields an *Error.
func ParseFilter(f bson.D) (*Filter, error) {
	p := &filterParser{}
	root, err := p.parseDoc(f, 0, true)
	if err != nil {
		return nil, err
	}
	return &Filter{root: root, eqs: p.eqs, paths: p.paths}, nil
}

// Match reports whether doc satisfies the filter. A nil Filter matches everything.
func (f *Filter) Match(doc bson.D) bool {
	if f == nil {
		return true
	}
	return f.root.match(doc)
}

// Equality returns the value a top-level conjunct of the filter fixes path to, through implicit
// equality ({path: v}), {path: {$eq: v}} or either of those inside a top-level $and. It returns false
// when the filter does not pin path to a single value (including when the value is a regex, which
// matches by pattern, or when two conjuncts disagree). Callers use it to route a query to one shard.
func (f *Filter) Equality(path string) (any, bool) {
	if f == nil {
		return nil, false
	}
	var val any
	found := false
	for _, e := range f.eqs {
		if e.path != path {
			continue
		}
		if found && !identical(val, e.value) {
			return nil, false
		}
		val, found = e.value, true
	}
	return val, found
}

type filterParser struct {
	eqs   []eqConjunct
	paths []string
}

// parseDoc parses a filter document; top is true for the filter's top level and the documents of a
// top-level $and, whose equalities count as conjuncts for Equality and UpsertSeed.
func (p *filterParser) parseDoc(f bson.D, depth int, top bool) (matcher, error) {
	if depth > maxDepth {
		return nil, badValue("exceeded depth limit of %d when parsing the filter", maxDepth)
	}
	var all andMatcher
	for _, e := range f {
		m, err := p.parseElem(e, depth, top)
		if err != nil {
			return nil, err
		}
		if m != nil {
			all = append(all, m)
		}
	}
	if len(all) == 1 {
		return all[0], nil
	}
	return all, nil
}

func (p *filterParser) parseElem(e bson.E, depth int, top bool) (matcher, error) {
	if strings.HasPrefix(e.Key, "$") {
		switch e.Key {
		case "$and", "$or", "$nor":
			list, ok := e.Value.(bson.A)
			if !ok {
				return nil, badValue("%s must be an array", e.Key)
			}
			if len(list) == 0 {
				return nil, badValue("$and/$or/$nor must be a nonempty array")
			}
			ms := make([]matcher, 0, len(list))
			for _, item := range list {
				d, ok := item.(bson.D)
				if !ok {
					return nil, badValue("$or/$and/$nor entries need to be full objects")
				}
				m, err := p.parseDoc(d, depth+1, top && e.Key == "$and")
				if err != nil {
					return nil, err
				}
				ms = append(ms, m)
			}
			switch e.Key {
			case "$and":
				return andMatcher(ms), nil
			case "$or":
				return orMatcher(ms), nil
			}
			return norMatcher(ms), nil
		case "$expr":
			x, err := parseExpr(e.Value, depth+1)
			if err != nil {
				return nil, err
			}
			return exprMatcher{x}, nil
		case "$comment":
			return nil, nil
		case "$alwaysTrue":
			return andMatcher{}, nil
		case "$alwaysFalse":
			return orMatcher{}, nil
		}
		return nil, badValue("unknown top level operator: %s", e.Key)
	}
	if e.Key == "" {
		return nil, badValue("the empty string is not a valid field name in a filter")
	}
	path := strings.Split(e.Key, ".")
	p.paths = append(p.paths, e.Key)
	if ops, ok := operatorDoc(e.Value); ok {
		pred, err := p.parseOps(ops, depth+1, e.Key, top)
		if err != nil {
			return nil, err
		}
		return &pathMatcher{path: path, pred: pred}, nil
	}
	if top {
		if _, isRegex := e.Value.(bson.Regex); !isRegex {
			p.eqs = append(p.eqs, eqConjunct{path: e.Key, value: e.Value})
		}
	}
	pred, err := implicitEq(e.Value)
	if err != nil {
		return nil, err
	}
	return &pathMatcher{path: path, pred: pred}, nil
}

// operatorDoc reports whether v is a document of query operators ({$gt: 1, ...}): a non-empty document
// whose first key starts with "$", other than a DBRef ({$ref, $id, $db}), which is a literal value.
func operatorDoc(v any) (bson.D, bool) {
	d, ok := v.(bson.D)
	if !ok || len(d) == 0 || !strings.HasPrefix(d[0].Key, "$") {
		return nil, false
	}
	switch d[0].Key {
	case "$ref", "$id", "$db":
		return nil, false
	}
	return d, true
}

// implicitEq is the predicate of {path: v}: equality, or a pattern match when v is a regex.
func implicitEq(v any) (pred, error) {
	if r, ok := v.(bson.Regex); ok {
		re, err := compileRegex(r.Pattern, r.Options)
		if err != nil {
			return nil, err
		}
		return &regexPred{re: re, lit: r}, nil
	}
	return eqPred{v}, nil
}

// parseOps parses the operators of {path: {$op: v, ...}} into the conjunction of their predicates.
func (p *filterParser) parseOps(ops bson.D, depth int, path string, top bool) (pred, error) {
	if depth > maxDepth {
		return nil, badValue("exceeded depth limit of %d when parsing the filter", maxDepth)
	}
	var preds andPred
	var regex, options any
	hasRegex, hasOptions := false, false
	for _, op := range ops {
		switch op.Key {
		case "$regex":
			regex, hasRegex = op.Value, true
			continue
		case "$options":
			options, hasOptions = op.Value, true
			continue
		}
		pr, err := p.parseOp(op, depth, path, top)
		if err != nil {
			return nil, err
		}
		preds = append(preds, pr)
	}
	if hasOptions && !hasRegex {
		return nil, badValue("$options needs a $regex")
	}
	if hasRegex {
		pr, err := regexOperator(regex, options, hasOptions)
		if err != nil {
			return nil, err
		}
		preds = append(preds, pr)
	}
	if len(preds) == 1 {
		return preds[0], nil
	}
	return preds, nil
}

func regexOperator(regex, options any, hasOptions bool) (pred, error) {
	var pattern, opts string
	switch r := regex.(type) {
	case string:
		pattern = r
	case bson.Regex:
		pattern, opts = r.Pattern, r.Options
	default:
		return nil, badValue("$regex has to be a string")
	}
	if hasOptions {
		o, ok := options.(string)
		if !ok {
			return nil, badValue("$options has to be a string")
		}
		if opts != "" && o != "" {
			return nil, badValue("options set in both $regex and $options")
		}
		if o != "" {
			opts = o
		}
	}
	re, err := compileRegex(pattern, opts)
	if err != nil {
		return nil, err
	}
	return &regexPred{re: re, lit: bson.Regex{Pattern: pattern, Options: opts}}, nil
}

func (p *filterParser) parseOp(op bson.E, depth int, path string, top bool) (pred, error) {
	v := op.Value
	switch op.Key {
	case "$eq":
		if top {
			p.eqs = append(p.eqs, eqConjunct{path: path, value: v})
		}
		return eqPred{v}, nil
	case "$ne":
		return notPred{eqPred{v}}, nil
	case "$gt", "$gte", "$lt", "$lte":
		return cmpPred{op: op.Key, v: v}, nil
	case "$in", "$nin":
		list, ok := v.(bson.A)
		if !ok {
			return nil, badValue("%s needs an array", op.Key)
		}
		in := &inPred{}
		for _, item := range list {
			if r, ok := item.(bson.Regex); ok {
				re, err := compileRegex(r.Pattern, r.Options)
				if err != nil {
					return nil, err
				}
				in.regexes = append(in.regexes, re)
				continue
			}
			if d, ok := item.(bson.D); ok && len(d) > 0 && strings.HasPrefix(d[0].Key, "$") {
				return nil, badValue("cannot nest $ under %s", op.Key)
			}
			in.values = append(in.values, item)
		}
		in.finish()
		if op.Key == "$nin" {
			return notPred{in}, nil
		}
		return in, nil
	case "$exists":
		return existsPred(truthyValue(v)), nil
	case "$type":
		return parseType(v)
	case "$size":
		n, ok := wholeNumber(v)
		if !ok {
			if isNumber(v) {
				return nil, badValue("Failed to parse $size. Expected an integer: %s", formatValue(v))
			}
			return nil, badValue("Failed to parse $size. Expected a number in: $size: %s", formatValue(v))
		}
		if n < 0 {
			return nil, badValue("Failed to parse $size. Expected a non-negative number in: $size: %d", n)
		}
		return sizePred(n), nil
	case "$all":
		list, ok := v.(bson.A)
		if !ok {
			return nil, badValue("$all needs an array")
		}
		var all allPred
		for _, item := range list {
			if d, ok := item.(bson.D); ok && len(d) > 0 && d[0].Key == "$elemMatch" {
				pr, err := p.parseOp(d[0], depth+1, path, false)
				if err != nil {
					return nil, err
				}
				all = append(all, pr)
				continue
			}
			pr, err := implicitEq(item)
			if err != nil {
				return nil, err
			}
			all = append(all, pr)
		}
		return all, nil
	case "$elemMatch":
		d, ok := v.(bson.D)
		if !ok {
			return nil, badValue("$elemMatch needs an Object")
		}
		if isValueElemMatch(d) {
			pr, err := p.parseOps(d, depth+1, path, false)
			if err != nil {
				return nil, err
			}
			return &elemMatchPred{value: pr}, nil
		}
		sub := &filterParser{}
		m, err := sub.parseDoc(d, depth+1, false)
		if err != nil {
			return nil, err
		}
		return &elemMatchPred{doc: m}, nil
	case "$mod":
		list, ok := v.(bson.A)
		if !ok {
			return nil, badValue("malformed mod, needs to be an array")
		}
		if len(list) < 2 {
			return nil, badValue("malformed mod, not enough elements")
		}
		if len(list) > 2 {
			return nil, badValue("malformed mod, too many elements")
		}
		d, ok1 := truncNumber(list[0])
		r, ok2 := truncNumber(list[1])
		if !ok1 {
			return nil, badValue("malformed mod, divisor not a number")
		}
		if !ok2 {
			return nil, badValue("malformed mod, remainder not a number")
		}
		if d == 0 {
			return nil, badValue("divisor cannot be 0")
		}
		return modPred{d: d, r: r}, nil
	case "$not":
		switch x := v.(type) {
		case bson.Regex:
			pr, err := implicitEq(x)
			if err != nil {
				return nil, err
			}
			return notPred{pr}, nil
		case bson.D:
			if len(x) == 0 {
				return nil, badValue("$not cannot be empty")
			}
			if _, ok := operatorDoc(x); !ok {
				return nil, badValue("$not needs a regex or a document")
			}
			pr, err := p.parseOps(x, depth+1, path, false)
			if err != nil {
				return nil, err
			}
			return notPred{pr}, nil
		}
		return nil, badValue("$not needs a regex or a document")
	case "$comment":
		return andPred{}, nil
	}
	return nil, badValue("unknown operator: %s", op.Key)
}

// isValueElemMatch reports whether an $elemMatch argument applies operators to the elements themselves
// ({$gt: 1}) rather than being a filter on document elements ({a: 1} or {$or: [...]}).
func isValueElemMatch(d bson.D) bool {
	if len(d) == 0 {
		return false
	}
	for _, e := range d {
		switch e.Key {
		case "$and", "$or", "$nor", "$expr":
			return false
		}
		if !strings.HasPrefix(e.Key, "$") {
			return false
		}
	}
	return true
}

// parseType parses the argument of $type: a type number, an alias, "number", or an array of those.
func parseType(v any) (pred, error) {
	list, ok := v.(bson.A)
	if !ok {
		list = bson.A{v}
	}
	if len(list) == 0 {
		return nil, badValue("$type must match at least one type")
	}
	tp := &typePred{}
	for _, item := range list {
		if s, ok := item.(string); ok {
			if s == "number" {
				tp.number = true
				continue
			}
			code, ok := typeNumbers[s]
			if !ok {
				return nil, badValue("Unknown type name alias: %s", s)
			}
			tp.codes = append(tp.codes, code)
			continue
		}
		n, ok := wholeNumber(item)
		if !ok {
			return nil, badValue("type must be represented as a number or a string")
		}
		valid := false
		for _, c := range typeNumbers {
			if int64(c) == n {
				valid = true
			}
		}
		if !valid {
			return nil, badValue("Invalid numerical type code: %d", n)
		}
		tp.codes = append(tp.codes, int32(n))
	}
	return tp, nil
}

// wholeNumber returns v as an int64 if it is a number with an integral value in range.
func wholeNumber(v any) (int64, bool) {
	switch x := v.(type) {
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case float64:
		if x != math.Trunc(x) || math.IsInf(x, 0) || math.IsNaN(x) || math.Abs(x) > 1<<62 {
			return 0, false
		}
		return int64(x), true
	case bson.Decimal128:
		f, ok := decimalToFloat(x)
		if !ok {
			return 0, false
		}
		return wholeNumber(f)
	}
	return 0, false
}

// truncNumber returns a number truncated toward zero as an int64 (NaN and infinities fail).
func truncNumber(v any) (int64, bool) {
	if i, ok := intValue(v); ok {
		return i, true
	}
	f, ok := Float(v)
	if !ok || math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) >= 9.2e18 {
		return 0, false
	}
	return int64(math.Trunc(f)), true
}

// Float converts any BSON number to float64; ok is false for a value that
// is not a number.
func Float(v any) (float64, bool) {
	switch x := v.(type) {
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case float64:
		return x, true
	case bson.Decimal128:
		return decimalToFloat(x)
	}
	return 0, false
}

// truthyValue is MongoDB's truthiness: false, null, undefined, missing and zero are false.
func truthyValue(v any) bool {
	switch x := v.(type) {
	case nil, bson.Null, bson.Undefined:
		return false
	case bool:
		return x
	case int32, int64, float64, bson.Decimal128, int:
		f, _ := Float(x)
		return f != 0 || isNaN(x)
	}
	return true
}

// ---- matchers over documents ----

type andMatcher []matcher

func (m andMatcher) match(doc bson.D) bool {
	for _, x := range m {
		if !x.match(doc) {
			return false
		}
	}
	return true
}

type orMatcher []matcher

func (m orMatcher) match(doc bson.D) bool {
	for _, x := range m {
		if x.match(doc) {
			return true
		}
	}
	return false
}

type norMatcher []matcher

func (m norMatcher) match(doc bson.D) bool {
	return !orMatcher(m).match(doc)
}

type exprMatcher struct{ x expression }

func (m exprMatcher) match(doc bson.D) bool {
	v, err := m.x.eval(&evalCtx{root: doc})
	return err == nil && truthyValue(v)
}

// pathMatcher applies a predicate to the values a path reaches.
type pathMatcher struct {
	path []string
	pred pred
}

func (m *pathMatcher) match(doc bson.D) bool {
	var bs []branch
	walkPath(doc, m.path, func(v any, missing bool) {
		bs = append(bs, branch{v: v, missing: missing})
	})
	return m.pred.matches(bs)
}

// branch is one value a path reaches, or a place where the path ends early (missing).
type branch struct {
	v       any
	missing bool
}

// ---- predicates over the branches of one path ----

type pred interface {
	matches(bs []branch) bool
}

// anyValue reports whether test holds for some present value or, for arrays, some element; or
// whether a branch is missing when missingMatches.
func anyValue(bs []branch, missingMatches bool, test func(v any) bool) bool {
	for _, b := range bs {
		if b.missing {
			if missingMatches {
				return true
			}
			continue
		}
		if test(b.v) {
			return true
		}
		if arr, ok := b.v.(bson.A); ok {
			for _, el := range arr {
				if test(el) {
					return true
				}
			}
		}
	}
	return false
}

type andPred []pred

func (p andPred) matches(bs []branch) bool {
	for _, x := range p {
		if !x.matches(bs) {
			return false
		}
	}
	return true
}

type notPred struct{ p pred }

func (p notPred) matches(bs []branch) bool { return !p.p.matches(bs) }

type eqPred struct{ v any }

func (p eqPred) matches(bs []branch) bool {
	null := isNullish(p.v)
	return anyValue(bs, null, func(v any) bool {
		if null {
			return isNullish(v)
		}
		return equalValues(v, p.v)
	})
}

// isNullish reports whether v is null or undefined (equality to null matches both).
func isNullish(v any) bool {
	switch v.(type) {
	case nil, bson.Null, bson.Undefined:
		return true
	}
	return false
}

type cmpPred struct {
	op string
	v  any
}

func (p cmpPred) matches(bs []branch) bool {
	orEqual := p.op == "$gte" || p.op == "$lte"
	return anyValue(bs, orEqual && isNullish(p.v), func(v any) bool { return p.test(v) })
}

func (p cmpPred) test(v any) bool {
	bq, bv := bracket(p.v), bracket(v)
	if bq != bracketMinKey && bq != bracketMaxKey && bq != bv {
		if !(isNullish(p.v) && isNullish(v)) {
			return false
		}
	}
	if isNaN(p.v) || isNaN(v) {
		return isNaN(p.v) && isNaN(v) && (p.op == "$gte" || p.op == "$lte")
	}
	c := Compare(v, p.v)
	switch p.op {
	case "$gt":
		return c > 0
	case "$gte":
		return c >= 0
	case "$lt":
		return c < 0
	}
	return c <= 0
}

type inPred struct {
	values  []any
	set     *valueSet // the values, once there are many
	regexes []*regexp.Regexp
	hasNull bool
}

// inSetThreshold is the number of $in values from which lookups go through a valueSet.
const inSetThreshold = 8

// finish records whether the values include null and, for long lists, indexes them. It is called
// once, before the predicate is shared.
func (p *inPred) finish() *inPred {
	for _, v := range p.values {
		if isNullish(v) {
			p.hasNull = true
		}
	}
	if len(p.values) >= inSetThreshold {
		p.set = newValueSet()
		for _, v := range p.values {
			if !isNullish(v) {
				p.set.add(v)
			}
		}
	}
	return p
}

func (p *inPred) matches(bs []branch) bool {
	return anyValue(bs, p.hasNull, func(v any) bool {
		if p.hasNull && isNullish(v) {
			return true
		}
		if p.set != nil {
			if p.set.contains(v) {
				return true
			}
		} else {
			for _, q := range p.values {
				if !isNullish(q) && equalValues(v, q) {
					return true
				}
			}
		}
		if len(p.regexes) > 0 {
			if s, ok := regexTarget(v); ok {
				for _, re := range p.regexes {
					if re.MatchString(s) {
						return true
					}
				}
			}
		}
		return false
	})
}

type existsPred bool

func (p existsPred) matches(bs []branch) bool {
	for _, b := range bs {
		if !b.missing {
			return bool(p)
		}
	}
	return !bool(p)
}

type typePred struct {
	codes  []int32
	number bool
}

func (p *typePred) matches(bs []branch) bool {
	return anyValue(bs, false, func(v any) bool {
		if p.number && isNumber(v) {
			return true
		}
		code := typeNumbers[typeName(v)]
		for _, c := range p.codes {
			if c == code {
				return true
			}
		}
		return false
	})
}

type sizePred int64

func (p sizePred) matches(bs []branch) bool {
	for _, b := range bs {
		if arr, ok := b.v.(bson.A); ok && !b.missing && int64(len(arr)) == int64(p) {
			return true
		}
	}
	return false
}

type allPred []pred

func (p allPred) matches(bs []branch) bool {
	if len(p) == 0 {
		return false
	}
	for _, x := range p {
		if !x.matches(bs) {
			return false
		}
	}
	return true
}

type elemMatchPred struct {
	value pred    // operators applied to each element
	doc   matcher // a filter applied to each document element
}

func (p *elemMatchPred) matches(bs []branch) bool {
	for _, b := range bs {
		arr, ok := b.v.(bson.A)
		if !ok || b.missing {
			continue
		}
		for _, el := range arr {
			if p.value != nil {
				if p.value.matches([]branch{{v: el}}) {
					return true
				}
				continue
			}
			if d, ok := el.(bson.D); ok && p.doc.match(d) {
				return true
			}
		}
	}
	return false
}

type modPred struct{ d, r int64 }

func (p modPred) matches(bs []branch) bool {
	return anyValue(bs, false, func(v any) bool {
		if !isNumber(v) {
			return false
		}
		n, ok := truncNumber(v)
		if !ok {
			return false
		}
		if p.d == -1 {
			return p.r == 0
		}
		return n%p.d == p.r
	})
}

type regexPred struct {
	re  *regexp.Regexp
	lit bson.Regex
}

func (p *regexPred) matches(bs []branch) bool {
	return anyValue(bs, false, func(v any) bool {
		if r, ok := v.(bson.Regex); ok {
			return r == p.lit
		}
		s, ok := regexTarget(v)
		return ok && p.re.MatchString(s)
	})
}

// regexTarget returns the string a regex is matched against: strings and symbols.
func regexTarget(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case bson.Symbol:
		return string(x), true
	}
	return "", false
}
