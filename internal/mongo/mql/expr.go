package mql

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Aggregation expressions: field paths ("$a.b"), variables ("$$ROOT"), literals, object and array
// expressions, and the operators the pipeline stages need.

// missingT is the value of a field path that reaches nothing. It never escapes into a result document:
// stages drop fields whose value is missing, and operators treat it like null.
type missingT struct{}

var missing = missingT{}

// maxValueSize bounds a single value an expression builds (a string, an array), as the BSON
// document size limit would.
const maxValueSize = 16 << 20

// expression is a parsed aggregation expression.
type expression interface {
	eval(c *evalCtx) (any, error)
}

// evalCtx is the evaluation context: the current document and the variables in scope.
type evalCtx struct {
	root bson.D
	vars map[string]any
	err  error // the first error of a computed projection field (Projection.Apply has no error result)

	query *Filter // the query, for a positional projection
}

type literalExpr struct{ v any }

func (e literalExpr) eval(*evalCtx) (any, error) { return e.v, nil }

type fieldExpr struct {
	variable string // "" for $field paths (CURRENT)
	path     []string
}

func (e fieldExpr) eval(c *evalCtx) (any, error) {
	var base any
	switch e.variable {
	case "", "ROOT", "CURRENT":
		base = c.root
	case "REMOVE":
		return missing, nil
	default:
		v, ok := c.vars[e.variable]
		if !ok {
			return nil, newError(17276, "Use of undefined variable: %s", e.variable)
		}
		base = v
	}
	if len(e.path) == 0 {
		return base, nil
	}
	return aggPath(base, e.path), nil
}

// aggPath follows a field path with aggregation semantics: through an array it maps over the
// elements, skipping elements where the path is missing.
func aggPath(v any, parts []string) any {
	if len(parts) == 0 {
		return v
	}
	switch x := v.(type) {
	case bson.D:
		for _, e := range x {
			if e.Key == parts[0] {
				return aggPath(e.Value, parts[1:])
			}
		}
		return missing
	case bson.A:
		out := bson.A{}
		for _, el := range x {
			switch el.(type) {
			case bson.D, bson.A:
				if r := aggPath(el, parts); r != missing {
					out = append(out, r)
				}
			}
		}
		return out
	}
	return missing
}

type objectExpr struct {
	keys  []string
	exprs []expression
}

func (e *objectExpr) eval(c *evalCtx) (any, error) {
	out := make(bson.D, 0, len(e.keys))
	for i, k := range e.keys {
		v, err := e.exprs[i].eval(c)
		if err != nil {
			return nil, err
		}
		if v == missing {
			continue
		}
		out = append(out, bson.E{Key: k, Value: v})
	}
	return out, nil
}

type arrayExpr []expression

func (e arrayExpr) eval(c *evalCtx) (any, error) {
	out := make(bson.A, 0, len(e))
	for _, x := range e {
		v, err := x.eval(c)
		if err != nil {
			return nil, err
		}
		if v == missing {
			v = nil
		}
		out = append(out, v)
	}
	return out, nil
}

// opExpr is an operator applied to evaluated arguments.
type opExpr struct {
	name string
	args []expression
	fn   func(args []any) (any, error)
}

func (e *opExpr) eval(c *evalCtx) (any, error) {
	vals := make([]any, len(e.args))
	for i, a := range e.args {
		v, err := a.eval(c)
		if err != nil {
			return nil, err
		}
		vals[i] = v
	}
	return e.fn(vals)
}

// lazyExpr is an operator that evaluates its arguments itself ($cond, $and, $or, $ifNull).
type lazyExpr struct {
	args []expression
	fn   func(c *evalCtx, args []expression) (any, error)
}

func (e *lazyExpr) eval(c *evalCtx) (any, error) { return e.fn(c, e.args) }

// parseExpr parses an aggregation expression.
func parseExpr(v any, depth int) (expression, error) {
	if depth > maxDepth {
		return nil, badValue("exceeded depth limit of %d when parsing an expression", maxDepth)
	}
	switch x := v.(type) {
	case string:
		if strings.HasPrefix(x, "$$") {
			parts := strings.Split(x[2:], ".")
			if parts[0] == "" {
				return nil, newError(16869, "empty variable name")
			}
			return fieldExpr{variable: parts[0], path: parts[1:]}, nil
		}
		if strings.HasPrefix(x, "$") {
			if len(x) == 1 {
				return nil, newError(16872, "'$' by itself is not a valid FieldPath")
			}
			parts := strings.Split(x[1:], ".")
			for _, p := range parts {
				if p == "" {
					return nil, newError(15998, "FieldPath field names may not be empty strings.")
				}
			}
			return fieldExpr{path: parts}, nil
		}
		return literalExpr{x}, nil
	case bson.A:
		out := make(arrayExpr, len(x))
		for i, el := range x {
			e, err := parseExpr(el, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = e
		}
		return out, nil
	case bson.D:
		if len(x) > 0 && strings.HasPrefix(x[0].Key, "$") {
			if len(x) != 1 {
				return nil, newError(15983, "an expression specification must contain exactly one field, the name of the expression. Found %d fields", len(x))
			}
			return parseOperator(x[0].Key, x[0].Value, depth+1)
		}
		obj := &objectExpr{}
		for _, e := range x {
			if strings.HasPrefix(e.Key, "$") {
				return nil, newError(16410, "FieldPath field names may not start with '$'")
			}
			sub, err := parseExpr(e.Value, depth+1)
			if err != nil {
				return nil, err
			}
			obj.keys = append(obj.keys, e.Key)
			obj.exprs = append(obj.exprs, sub)
		}
		return obj, nil
	}
	return literalExpr{v}, nil
}

// operatorArgs parses an operator's arguments: an array is the argument list, anything else is one
// argument.
func operatorArgs(v any, depth int) ([]expression, error) {
	list, ok := v.(bson.A)
	if !ok {
		list = bson.A{v}
	}
	out := make([]expression, len(list))
	for i, el := range list {
		e, err := parseExpr(el, depth+1)
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

func checkArity(name string, args []expression, minN, maxN int) error {
	if len(args) < minN || (maxN >= 0 && len(args) > maxN) {
		if minN == maxN {
			return newError(16020, "Expression %s takes exactly %d arguments. %d were passed in.", name, minN, len(args))
		}
		return newError(16020, "Expression %s takes %d to %d arguments. %d were passed in.", name, minN, maxN, len(args))
	}
	return nil
}

func parseOperator(name string, v any, depth int) (expression, error) {
	switch name {
	case "$literal":
		return literalExpr{v}, nil
	case "$cond":
		return parseCond(v, depth)
	}
	args, err := operatorArgs(v, depth)
	if err != nil {
		return nil, err
	}
	op := func(minN, maxN int, fn func([]any) (any, error)) (expression, error) {
		if err := checkArity(name, args, minN, maxN); err != nil {
			return nil, err
		}
		return &opExpr{name: name, args: args, fn: fn}, nil
	}
	switch name {
	case "$add":
		return op(0, -1, evalAdd)
	case "$subtract":
		return op(2, 2, evalSubtract)
	case "$multiply":
		return op(0, -1, evalMultiply)
	case "$divide":
		return op(2, 2, evalDivide)
	case "$mod":
		return op(2, 2, evalMod)
	case "$abs", "$ceil", "$floor", "$trunc", "$sqrt":
		return op(1, 1, func(a []any) (any, error) { return evalMath1(name, a[0]) })
	case "$concat":
		return op(0, -1, evalConcat)
	case "$toUpper", "$toLower":
		return op(1, 1, func(a []any) (any, error) {
			s, err := toStr(name, a[0])
			if err != nil {
				return nil, err
			}
			if name == "$toUpper" {
				return strings.ToUpper(s), nil
			}
			return strings.ToLower(s), nil
		})
	case "$strLenBytes":
		return op(1, 1, func(a []any) (any, error) {
			s, ok := a[0].(string)
			if !ok {
				return nil, newError(34473, "$strLenBytes requires a string argument, found: %s", typeNameOf(a[0]))
			}
			return int32(len(s)), nil
		})
	case "$ifNull":
		if err := checkArity(name, args, 2, -1); err != nil {
			return nil, err
		}
		return &lazyExpr{args: args, fn: evalIfNull}, nil
	case "$and", "$or":
		return &lazyExpr{args: args, fn: func(c *evalCtx, xs []expression) (any, error) {
			for _, x := range xs {
				v, err := x.eval(c)
				if err != nil {
					return nil, err
				}
				t := truthyValue(unmissing(v))
				if name == "$and" && !t {
					return false, nil
				}
				if name == "$or" && t {
					return true, nil
				}
			}
			return name == "$and", nil
		}}, nil
	case "$not":
		return op(1, 1, func(a []any) (any, error) { return !truthyValue(unmissing(a[0])), nil })
	case "$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$cmp":
		return op(2, 2, func(a []any) (any, error) {
			c := Compare(unmissing(a[0]), unmissing(a[1]))
			switch name {
			case "$eq":
				return c == 0, nil
			case "$ne":
				return c != 0, nil
			case "$gt":
				return c > 0, nil
			case "$gte":
				return c >= 0, nil
			case "$lt":
				return c < 0, nil
			case "$lte":
				return c <= 0, nil
			}
			return int32(c), nil
		})
	case "$size":
		return op(1, 1, func(a []any) (any, error) {
			arr, ok := a[0].(bson.A)
			if !ok {
				return nil, newError(17124, "The argument to $size must be an array. Type of argument: %s", typeNameOf(a[0]))
			}
			return int32(len(arr)), nil
		})
	case "$isArray":
		return op(1, 1, func(a []any) (any, error) {
			_, ok := a[0].(bson.A)
			return ok, nil
		})
	case "$in":
		return op(2, 2, func(a []any) (any, error) {
			arr, ok := a[1].(bson.A)
			if !ok {
				return nil, newError(40081, "$in requires an array as a second argument, found: %s", typeNameOf(a[1]))
			}
			for _, el := range arr {
				if equalValues(unmissing(a[0]), el) {
					return true, nil
				}
			}
			return false, nil
		})
	case "$arrayElemAt":
		return op(2, 2, evalArrayElemAt)
	case "$type":
		return op(1, 1, func(a []any) (any, error) { return typeNameOf(a[0]), nil })
	case "$toString":
		return op(1, 1, func(a []any) (any, error) { return convertToString(a[0]) })
	case "$toInt", "$toLong", "$toDouble", "$toDecimal":
		return op(1, 1, func(a []any) (any, error) { return convertNumber(name, a[0]) })
	case "$slice":
		return op(2, 3, evalSlice)
	case "$concatArrays":
		return op(0, -1, evalConcatArrays)
	case "$sum", "$avg", "$max", "$min":
		return op(1, -1, func(a []any) (any, error) { return evalListAccumulator(name, a) })
	case "$substr", "$substrBytes":
		return op(3, 3, evalSubstrBytes)
	case "$split":
		return op(2, 2, evalSplit)
	case "$mergeObjects":
		return op(0, -1, evalMergeObjects)
	case "$toBool":
		return op(1, 1, func(a []any) (any, error) {
			if isNullish(unmissing(a[0])) {
				return nil, nil
			}
			return truthyValue(a[0]), nil
		})
	}
	return nil, newError(168, "Unrecognized expression '%s'", name)
}

func parseCond(v any, depth int) (expression, error) {
	var ifV, thenV, elseV any
	switch x := v.(type) {
	case bson.A:
		if len(x) != 3 {
			return nil, newError(16020, "Expression $cond takes exactly 3 arguments. %d were passed in.", len(x))
		}
		ifV, thenV, elseV = x[0], x[1], x[2]
	case bson.D:
		var seen [3]bool
		for _, e := range x {
			switch e.Key {
			case "if":
				ifV, seen[0] = e.Value, true
			case "then":
				thenV, seen[1] = e.Value, true
			case "else":
				elseV, seen[2] = e.Value, true
			default:
				return nil, newError(17083, "Unrecognized parameter to $cond: %s", e.Key)
			}
		}
		if !seen[0] {
			return nil, newError(17080, "Missing 'if' parameter to $cond")
		}
		if !seen[1] {
			return nil, newError(17081, "Missing 'then' parameter to $cond")
		}
		if !seen[2] {
			return nil, newError(17082, "Missing 'else' parameter to $cond")
		}
	default:
		return nil, newError(16020, "Expression $cond takes exactly 3 arguments. 1 were passed in.")
	}
	var args []expression
	for _, a := range []any{ifV, thenV, elseV} {
		e, err := parseExpr(a, depth+1)
		if err != nil {
			return nil, err
		}
		args = append(args, e)
	}
	return &lazyExpr{args: args, fn: func(c *evalCtx, xs []expression) (any, error) {
		cond, err := xs[0].eval(c)
		if err != nil {
			return nil, err
		}
		if truthyValue(unmissing(cond)) {
			return xs[1].eval(c)
		}
		return xs[2].eval(c)
	}}, nil
}

func unmissing(v any) any {
	if v == missing {
		return nil
	}
	return v
}

// typeNameOf is typeName with "missing" for a missing value.
func typeNameOf(v any) string {
	if v == missing {
		return "missing"
	}
	return typeName(v)
}

func evalIfNull(c *evalCtx, xs []expression) (any, error) {
	for i, x := range xs {
		v, err := x.eval(c)
		if err != nil {
			return nil, err
		}
		if i == len(xs)-1 || !isNullish(unmissing(v)) {
			return v, nil
		}
	}
	return nil, nil
}

// anyNullish reports whether some argument is null, undefined or missing.
func anyNullish(a []any) bool {
	for _, v := range a {
		if isNullish(unmissing(v)) {
			return true
		}
	}
	return false
}

func evalAdd(a []any) (any, error) {
	if anyNullish(a) {
		return nil, nil
	}
	var sum any = int32(0)
	var date *bson.DateTime
	for _, v := range a {
		if d, ok := v.(bson.DateTime); ok {
			if date != nil {
				return nil, newError(16612, "only one date allowed in an $add expression")
			}
			date = &d
			continue
		}
		if !isNumber(v) {
			return nil, newError(14, "$add only supports numeric or date types, not %s", typeNameOf(v))
		}
		sum, _ = arith('+', sum, v)
	}
	if date != nil {
		f, _ := Float(sum)
		return bson.DateTime(int64(*date) + int64(math.Round(f))), nil
	}
	return sum, nil
}

func evalSubtract(a []any) (any, error) {
	if anyNullish(a) {
		return nil, nil
	}
	x, y := a[0], a[1]
	if dx, ok := x.(bson.DateTime); ok {
		if dy, ok := y.(bson.DateTime); ok {
			return int64(dx) - int64(dy), nil
		}
		if isNumber(y) {
			f, _ := Float(y)
			return bson.DateTime(int64(dx) - int64(math.Round(f))), nil
		}
	}
	if !isNumber(x) || !isNumber(y) {
		return nil, newError(16556, "cant $subtract a %s from a %s", typeNameOf(y), typeNameOf(x))
	}
	r, _ := arith('-', x, y)
	return r, nil
}

func evalMultiply(a []any) (any, error) {
	if anyNullish(a) {
		return nil, nil
	}
	var prod any = int32(1)
	for _, v := range a {
		if !isNumber(v) {
			return nil, newError(16555, "$multiply only supports numeric types, not %s", typeNameOf(v))
		}
		prod, _ = arith('*', prod, v)
	}
	return prod, nil
}

func evalDivide(a []any) (any, error) {
	if anyNullish(a) {
		return nil, nil
	}
	if !isNumber(a[0]) || !isNumber(a[1]) {
		return nil, newError(16609, "$divide only supports numeric types, not %s and %s", typeNameOf(a[0]), typeNameOf(a[1]))
	}
	if kindOf(a[0]) == kindDecimal || kindOf(a[1]) == kindDecimal {
		x, ok1 := toBigFloat(a[0])
		y, ok2 := toBigFloat(a[1])
		if !ok1 || !ok2 {
			return decimalNaN(), nil
		}
		if y.Sign() == 0 {
			return nil, newError(2, "can't $divide by zero")
		}
		if x.IsInf() && y.IsInf() {
			return decimalNaN(), nil
		}
		return fromBigFloat(bigFloat().Quo(x, y)), nil
	}
	x, _ := Float(a[0])
	y, _ := Float(a[1])
	if y == 0 {
		return nil, newError(2, "can't $divide by zero")
	}
	return x / y, nil
}

func evalMod(a []any) (any, error) {
	if anyNullish(a) {
		return nil, nil
	}
	if !isNumber(a[0]) || !isNumber(a[1]) {
		return nil, newError(16611, "$mod only supports numeric types, not %s and %s", typeNameOf(a[0]), typeNameOf(a[1]))
	}
	k := max(kindOf(a[0]), kindOf(a[1]))
	if k <= kindInt64 {
		x, _ := intValue(a[0])
		y, _ := intValue(a[1])
		if y == 0 {
			return nil, newError(16610, "can't $mod by zero")
		}
		if y == -1 {
			return int64OrInt32(0, k), nil
		}
		return int64OrInt32(x%y, k), nil
	}
	x, _ := Float(a[0])
	y, _ := Float(a[1])
	if y == 0 {
		return nil, newError(16610, "can't $mod by zero")
	}
	return math.Mod(x, y), nil
}

func int64OrInt32(v int64, k numKind) any {
	if k == kindInt32 {
		return int32(v)
	}
	return v
}

func evalMath1(name string, v any) (any, error) {
	if isNullish(unmissing(v)) {
		return nil, nil
	}
	if !isNumber(v) {
		return nil, newError(28765, "%s only supports numeric types, not %s", name, typeNameOf(v))
	}
	if i, ok := intValue(v); ok {
		switch name {
		case "$abs":
			if i == math.MinInt64 {
				return nil, newError(28680, "can't take $abs of long long min")
			}
			if i < 0 {
				i = -i
			}
			if i > math.MaxInt32 {
				return i, nil // |MinInt32| does not fit an int32
			}
			return int64OrInt32(i, kindOf(v)), nil
		case "$sqrt":
			if i < 0 {
				return nil, newError(28714, "$sqrt's argument must be greater than or equal to 0")
			}
			return math.Sqrt(float64(i)), nil
		}
		return v, nil
	}
	f, _ := Float(v)
	var r float64
	switch name {
	case "$abs":
		r = math.Abs(f)
	case "$ceil":
		r = math.Ceil(f)
	case "$floor":
		r = math.Floor(f)
	case "$trunc":
		r = math.Trunc(f)
	case "$sqrt":
		if f < 0 {
			return nil, newError(28714, "$sqrt's argument must be greater than or equal to 0")
		}
		r = math.Sqrt(f)
	}
	if kindOf(v) == kindDecimal {
		d, err := bson.ParseDecimal128(strconv.FormatFloat(r, 'g', -1, 64))
		if err != nil {
			return decimalNaN(), nil
		}
		return d, nil
	}
	return r, nil
}

func evalConcat(a []any) (any, error) {
	var b strings.Builder
	for _, v := range a {
		if isNullish(unmissing(v)) {
			return nil, nil
		}
		s, ok := v.(string)
		if !ok {
			return nil, newError(16702, "$concat only supports strings, not %s", typeNameOf(v))
		}
		if b.Len()+len(s) > maxValueSize {
			return nil, newError(CodeExceededMemoryLimit, "$concat result exceeds the memory limit")
		}
		b.WriteString(s)
	}
	return b.String(), nil
}

func toStr(name string, v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case bson.Symbol:
		return string(x), nil
	}
	if isNullish(unmissing(v)) {
		return "", nil
	}
	s, err := convertToString(v)
	if err != nil {
		return "", newError(16007, "can't convert from BSON type %s to String in %s", typeNameOf(v), name)
	}
	if s == nil {
		return "", nil
	}
	return s.(string), nil
}

func evalArrayElemAt(a []any) (any, error) {
	if anyNullish(a) {
		return nil, nil
	}
	arr, ok := a[0].(bson.A)
	if !ok {
		return nil, newError(28689, "$arrayElemAt's first argument must be an array, but is %s", typeNameOf(a[0]))
	}
	idx, ok := wholeNumber(a[1])
	if !ok {
		return nil, newError(28690, "$arrayElemAt's second argument must be a numeric value, but is %s", typeNameOf(a[1]))
	}
	if idx < 0 {
		idx += int64(len(arr))
	}
	if idx < 0 || idx >= int64(len(arr)) {
		return missing, nil
	}
	return arr[idx], nil
}

// convertToString is $toString: numbers, strings, ObjectIds, bools, dates, decimals; null stays null.
func convertToString(v any) (any, error) {
	switch x := v.(type) {
	case nil, missingT, bson.Null, bson.Undefined:
		return nil, nil
	case string:
		return x, nil
	case bson.Symbol:
		return string(x), nil
	case int32:
		return strconv.FormatInt(int64(x), 10), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case float64:
		return formatDouble(x), nil
	case bson.Decimal128:
		return x.String(), nil
	case bool:
		return strconv.FormatBool(x), nil
	case bson.ObjectID:
		return x.Hex(), nil
	case bson.DateTime:
		return x.Time().UTC().Format("2006-01-02T15:04:05.000Z"), nil
	}
	return nil, newError(241, "Unsupported conversion from %s to string in $convert with no onError value", typeNameOf(v))
}

// formatDouble renders a double the way the shell and $toString do: integral values without a
// fraction, special values by name.
func formatDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func convertNumber(name string, v any) (any, error) {
	v = unmissing(v)
	if isNullish(v) {
		return nil, nil
	}
	var f float64
	switch x := v.(type) {
	case bool:
		if x {
			f = 1
		}
	case string:
		p, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err != nil {
			return nil, newError(241, "Failed to parse number '%s' in $convert with no onError value", x)
		}
		f = p
	case bson.DateTime:
		f = float64(x)
	default:
		if !isNumber(v) {
			return nil, newError(241, "Unsupported conversion from %s in $convert with no onError value", typeNameOf(v))
		}
		if i, ok := intValue(v); ok && name != "$toDouble" && name != "$toDecimal" {
			if name == "$toInt" && (i < math.MinInt32 || i > math.MaxInt32) {
				return nil, newError(241, "Conversion would overflow target type in $convert with no onError value")
			}
			if name == "$toInt" {
				return int32(i), nil
			}
			return i, nil
		}
		f, _ = Float(v)
	}
	switch name {
	case "$toDouble":
		return f, nil
	case "$toDecimal":
		d, err := bson.ParseDecimal128(formatDouble(f))
		if err != nil {
			return decimalNaN(), nil
		}
		return d, nil
	case "$toInt":
		if math.IsNaN(f) || f < math.MinInt32 || f > math.MaxInt32 {
			return nil, newError(241, "Conversion would overflow target type in $convert with no onError value")
		}
		return int32(f), nil
	}
	if math.IsNaN(f) || f < -9.2e18 || f > 9.2e18 {
		return nil, newError(241, "Conversion would overflow target type in $convert with no onError value")
	}
	return int64(f), nil
}

func evalSlice(a []any) (any, error) {
	if anyNullish(a[:1]) {
		return nil, nil
	}
	arr, ok := a[0].(bson.A)
	if !ok {
		return nil, newError(28724, "First argument to $slice must be an array, but is of type: %s", typeNameOf(a[0]))
	}
	l := int64(len(arr))
	pos, ok := wholeNumber(a[1])
	if !ok {
		return nil, newError(28725, "Second argument to $slice must be a numeric value, but is of type: %s", typeNameOf(a[1]))
	}
	var from, to int64
	if len(a) == 2 {
		if pos >= 0 {
			from, to = 0, min(pos, l)
		} else {
			from, to = max(l+pos, 0), l
		}
	} else {
		n, ok := wholeNumber(a[2])
		if !ok {
			return nil, newError(28727, "Third argument to $slice must be numeric, but is of type: %s", typeNameOf(a[2]))
		}
		if n <= 0 {
			return nil, newError(28729, "Third argument to $slice must be positive: %d", n)
		}
		if pos < 0 {
			pos = max(l+pos, 0)
		}
		from = min(pos, l)
		to = l
		if n < l-from {
			to = from + n
		}
	}
	return append(bson.A{}, arr[from:to]...), nil
}

func evalConcatArrays(a []any) (any, error) {
	out := bson.A{}
	for _, v := range a {
		if isNullish(unmissing(v)) {
			return nil, nil
		}
		arr, ok := v.(bson.A)
		if !ok {
			return nil, newError(28664, "$concatArrays only supports arrays, not %s", typeNameOf(v))
		}
		if len(out)+len(arr) > maxValueSize/8 {
			return nil, newError(CodeExceededMemoryLimit, "$concatArrays result exceeds the memory limit")
		}
		out = append(out, arr...)
	}
	return out, nil
}

// evalListAccumulator is $sum/$avg/$max/$min as expressions: over the elements of a single array
// argument, or over the arguments; non-numbers are ignored by $sum/$avg and nulls by $max/$min.
func evalListAccumulator(name string, a []any) (any, error) {
	vals := a
	if len(a) == 1 {
		if arr, ok := a[0].(bson.A); ok {
			vals = arr
		}
	}
	switch name {
	case "$sum", "$avg":
		var sum any = int32(0)
		n := 0
		for _, v := range vals {
			if isNumber(v) {
				sum, _ = arith('+', sum, v)
				n++
			}
		}
		if name == "$sum" {
			return sum, nil
		}
		if n == 0 {
			return nil, nil
		}
		if kindOf(sum) == kindDecimal {
			x, ok := toBigFloat(sum)
			if !ok {
				return sum, nil
			}
			return fromBigFloat(bigFloat().Quo(x, bigFloat().SetInt64(int64(n)))), nil
		}
		f, _ := Float(sum)
		return f / float64(n), nil
	}
	var best any
	seen := false
	for _, v := range vals {
		v = unmissing(v)
		if isNullish(v) {
			continue
		}
		c := Compare(v, best)
		if !seen || (name == "$max" && c > 0) || (name == "$min" && c < 0) {
			best, seen = v, true
		}
	}
	return best, nil
}

func evalSubstrBytes(a []any) (any, error) {
	s, err := toStr("$substrBytes", a[0])
	if err != nil {
		return nil, err
	}
	start, ok1 := wholeNumber(a[1])
	n, ok2 := wholeNumber(a[2])
	if !ok1 || !ok2 {
		return nil, newError(16034, "$substrBytes: starting index and length must be numeric")
	}
	if start < 0 {
		return nil, newError(50752, "$substrBytes: starting index must be non-negative (got: %d)", start)
	}
	l := int64(len(s))
	if start >= l {
		return "", nil
	}
	end := l
	if n >= 0 && n < l-start {
		end = start + n
	}
	out := s[start:end]
	if !utf8.ValidString(out) && utf8.ValidString(s) {
		return nil, newError(28656, "$substrBytes: Invalid range, starting index is a UTF-8 continuation byte.")
	}
	return out, nil
}

func evalSplit(a []any) (any, error) {
	if anyNullish(a[:1]) {
		return nil, nil
	}
	s, ok := a[0].(string)
	if !ok {
		return nil, newError(40085, "$split requires an expression that evaluates to a string as a first argument, found: %s", typeNameOf(a[0]))
	}
	d, ok := a[1].(string)
	if !ok {
		return nil, newError(40086, "$split requires an expression that evaluates to a string as a second argument, found: %s", typeNameOf(a[1]))
	}
	if d == "" {
		return nil, newError(40087, "$split requires a non-empty separator")
	}
	out := bson.A{}
	for _, part := range strings.Split(s, d) {
		out = append(out, part)
	}
	return out, nil
}

func evalMergeObjects(a []any) (any, error) {
	vals := a
	out := bson.D{}
	for _, v := range vals {
		if isNullish(unmissing(v)) {
			continue
		}
		d, ok := v.(bson.D)
		if !ok {
			return nil, newError(40400, "$mergeObjects requires object inputs, but input %s is of type %s", truncate(formatValue(v)), typeNameOf(v))
		}
		for _, e := range d {
			out = setField(out, []string{e.Key}, e.Value)
		}
	}
	return out, nil
}
