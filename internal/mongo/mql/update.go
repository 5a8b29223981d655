package mql

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// maxArrayPad bounds how far past the end of an array an update may write (the gap is filled with
// nulls): {$set: {"a.100000000": 1}} must not allocate gigabytes.
const maxArrayPad = 1 << 20

// IsReplacement reports whether u is a replacement document rather than an update with operators:
// true when none of its keys starts with "$" (an empty document is a replacement).
func IsReplacement(u bson.D) bool {
	for _, e := range u {
		if len(e.Key) > 0 && e.Key[0] == '$' {
			return false
		}
	}
	return true
}

// Update is a parsed update document with operators. It is immutable and safe for concurrent use.
type Update struct {
	ops          []*updateOp // in the order they apply: by path, field names compared as MongoDB does
	arrayFilters map[string]*Filter
}

type updateOp struct {
	op    string
	path  []string
	value any

	// $push / $addToSet
	each     bson.A
	slice    *int64
	position *int64
	sortDir  int   // $push $sort: 1 or -1 on the elements themselves
	sortSpec *Sort // $push $sort: on fields of document elements

	// $pull
	pullPred pred
	pullDoc  matcher

	// $rename
	to []string

	// $currentDate
	timestamp bool

	// $bit: the operations, in order
	bits []bitOp
}

var arrayFilterIdent = regexp.MustCompile(`^[a-z][a-zA-Z0-9]*$`)

// ParseUpdate parses an update document of operators: $set $unset $inc $mul $min $max $rename
// $push (with $each $slice $sort $position) $addToSet (with $each) $pull $pullAll $pop $currentDate
// $setOnInsert $bit, with positional paths $, $[] and $[ident] (ident bound by arrayFilters). Two operators
// touching the same path or a path and its prefix fail with code 40 (ConflictingUpdateOperators).
func ParseUpdate(u bson.D, arrayFilters []bson.D) (*Update, error) {
	if len(u) == 0 {
		return nil, newError(CodeFailedToParse, "Update document requires atomic operators")
	}
	upd := &Update{arrayFilters: map[string]*Filter{}}
	for _, af := range arrayFilters {
		if len(af) == 0 {
			return nil, badValue("Cannot use an expression without a top-level field name in arrayFilters")
		}
		ident := ""
		for _, e := range af {
			id, _, _ := strings.Cut(e.Key, ".")
			if strings.HasPrefix(e.Key, "$") {
				return nil, badValue("Cannot use an expression without a top-level field name in arrayFilters")
			}
			if ident != "" && id != ident {
				return nil, newError(CodeFailedToParse, "Error parsing array filter :: caused by :: Expected a single top-level field name, found '%s' and '%s'", ident, id)
			}
			ident = id
		}
		if !arrayFilterIdent.MatchString(ident) {
			return nil, badValue("Error parsing array filter :: caused by :: The top-level field name must be an alphanumeric string beginning with a lowercase letter, found '%s'", ident)
		}
		if _, dup := upd.arrayFilters[ident]; dup {
			return nil, newError(CodeFailedToParse, "Found multiple array filters with the same top-level field name %s", ident)
		}
		f, err := ParseFilter(af)
		if err != nil {
			return nil, err
		}
		upd.arrayFilters[ident] = f
	}
	used := map[string]bool{}
	var allPaths [][]string
	for _, e := range u {
		fields, ok := e.Value.(bson.D)
		if !strings.HasPrefix(e.Key, "$") {
			return nil, newError(CodeFailedToParse, "Unknown modifier: %s. Expected a valid update modifier or pipeline-style update specified as an array", e.Key)
		}
		if !knownUpdateOps[e.Key] {
			return nil, newError(CodeFailedToParse, "Unknown modifier: %s. Expected a valid update modifier or pipeline-style update specified as an array", e.Key)
		}
		if !ok {
			return nil, newError(CodeFailedToParse, "Modifiers operate on fields but we found type %s instead. For example: {$mod: {<field>: ...}} not {%s: %s}", typeName(e.Value), e.Key, formatValue(e.Value))
		}
		for _, f := range fields {
			path, err := parseUpdatePath(f.Key, upd.arrayFilters, used)
			if err != nil {
				return nil, err
			}
			op := &updateOp{op: e.Key, path: path, value: f.Value}
			if err := op.parseArgument(); err != nil {
				return nil, err
			}
			allPaths = append(allPaths, path)
			if op.op == "$rename" {
				to, err := parseUpdatePath(f.Value.(string), upd.arrayFilters, used)
				if err != nil {
					return nil, err
				}
				if err := checkRename(path, to); err != nil {
					return nil, err
				}
				op.to = to
				allPaths = append(allPaths, to)
			}
			upd.ops = append(upd.ops, op)
		}
	}
	for ident := range upd.arrayFilters {
		if !used[ident] {
			return nil, newError(CodeFailedToParse, "The array filter for identifier '%s' was not used in the update %s", ident, formatValue(u))
		}
	}
	if err := checkConflicts(allPaths); err != nil {
		return nil, err
	}
	slices.SortStableFunc(upd.ops, func(a, b *updateOp) int { return comparePaths(a.path, b.path) })
	return upd, nil
}

var knownUpdateOps = map[string]bool{
	"$set": true, "$unset": true, "$inc": true, "$mul": true, "$min": true, "$max": true, "$rename": true,
	"$push": true, "$addToSet": true, "$pull": true, "$pullAll": true, "$pop": true, "$currentDate": true,
	"$setOnInsert": true, "$bit": true,
}

// parseUpdatePath splits and validates an update path, recording the array filter identifiers used.
func parseUpdatePath(s string, filters map[string]*Filter, used map[string]bool) ([]string, error) {
	if s == "" {
		return nil, newError(CodeEmptyFieldName, "An empty update path is not valid.")
	}
	parts := strings.Split(s, ".")
	positional := 0
	for i, p := range parts {
		switch {
		case p == "":
			return nil, newError(CodeEmptyFieldName, "The update path '%s' contains an empty field name, which is not allowed.", s)
		case p == "$":
			positional++
			if positional > 1 {
				return nil, badValue("Too many positional (i.e. '$') elements found in path '%s'", s)
			}
			if i == 0 {
				return nil, badValue("Cannot have positional (i.e. '$') element in the first position in path '%s'", s)
			}
		case p == "$[]":
			if i == 0 {
				return nil, badValue("Cannot have array filter identifier (i.e. '$[<id>]') element in the first position in path '%s'", s)
			}
		case strings.HasPrefix(p, "$[") && strings.HasSuffix(p, "]"):
			if i == 0 {
				return nil, badValue("Cannot have array filter identifier (i.e. '$[<id>]') element in the first position in path '%s'", s)
			}
			ident := p[2 : len(p)-1]
			if _, ok := filters[ident]; !ok {
				return nil, badValue("No array filter found for identifier '%s' in path '%s'", ident, s)
			}
			used[ident] = true
		case strings.HasPrefix(p, "$") && i == 0:
			// A nested '$' name is a field like any other (MongoDB 5.0 and
			// later); a top-level one is not.
			return nil, newError(CodeDollarPrefixedField, "The dollar ($) prefixed field '%s' in '%s' is not allowed in the context of an update's replacement document. Consider using an aggregation pipeline with $replaceWith.", p, s)
		}
	}
	return parts, nil
}

// isPositional reports a positional path element: $, $[] or $[ident].
func isPositional(p string) bool {
	return p == "$" || strings.HasPrefix(p, "$[") && strings.HasSuffix(p, "]")
}

func checkRename(from, to []string) error {
	for _, p := range append(slices.Clone(from), to...) {
		if isPositional(p) {
			return badValue("The source and target field for $rename may not be dynamic array elements")
		}
	}
	if slices.Equal(from, to) {
		return badValue("The source and target field for $rename must differ: %s", strings.Join(from, "."))
	}
	if isPrefix(from, to) || isPrefix(to, from) {
		return badValue("The source and target field for $rename must not be on the same path: %s: %s", strings.Join(from, "."), strings.Join(to, "."))
	}
	return nil
}

func isPrefix(p, q []string) bool {
	return len(p) <= len(q) && slices.Equal(p, q[:len(p)])
}

// checkConflicts fails with code 40 when one path equals or is a prefix of another. After sorting, a
// path that is a prefix of another sorts right before it or before paths that share the prefix, so
// comparing neighbours suffices.
func checkConflicts(paths [][]string) error {
	sorted := slices.Clone(paths)
	slices.SortFunc(sorted, func(a, b []string) int { return slices.Compare(a, b) })
	for i := 1; i < len(sorted); i++ {
		if isPrefix(sorted[i-1], sorted[i]) {
			return newError(CodeConflictingUpdate, "Updating the path '%s' would create a conflict at '%s'", strings.Join(sorted[i], "."), strings.Join(sorted[i-1], "."))
		}
	}
	return nil
}

// comparePaths orders paths as MongoDB applies updates: component by component, numeric names by
// number, other names by bytes.
func comparePaths(a, b []string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		x, xn := arrayIndex(a[i])
		y, yn := arrayIndex(b[i])
		if xn && yn {
			if c := cmpInt(x, y); c != 0 {
				return c
			}
			continue
		}
		if c := strings.Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return cmpInt(len(a), len(b))
}

func (op *updateOp) parseArgument() error {
	name := strings.Join(op.path, ".")
	switch op.op {
	case "$inc", "$mul":
		if !isNumber(op.value) {
			verb := "increment"
			if op.op == "$mul" {
				verb = "multiply"
			}
			return newError(CodeTypeMismatch, "Cannot %s with non-numeric argument: {%s: %s}", verb, name, formatValue(op.value))
		}
	case "$rename":
		if _, ok := op.value.(string); !ok {
			return badValue("The 'to' field for $rename must be a string: %s: %s", name, formatValue(op.value))
		}
	case "$pop":
		n, ok := wholeNumber(op.value)
		if !ok || (n != 1 && n != -1) {
			return newError(CodeFailedToParse, "$pop expects 1 or -1, found: %s", formatValue(op.value))
		}
	case "$currentDate":
		switch v := op.value.(type) {
		case bool:
		case bson.D:
			if len(v) != 1 || v[0].Key != "$type" {
				return badValue("The only valid field of the option is '$type': {$type: 'date/timestamp'}")
			}
			switch v[0].Value {
			case "date":
			case "timestamp":
				op.timestamp = true
			default:
				return badValue("The '$type' string field is required to be 'date' or 'timestamp': {$currentDate: {field : {$type: 'date'}}}")
			}
		default:
			return badValue("%s is not valid type for $currentDate. Please use a boolean ('true') or a $type expression ({$type: 'timestamp/date'}).", typeName(op.value))
		}
	case "$pullAll":
		if _, ok := op.value.(bson.A); !ok {
			return badValue("$pullAll requires an array argument but was given a %s", typeName(op.value))
		}
	case "$pull":
		switch v := op.value.(type) {
		case bson.D:
			if _, isOps := operatorDoc(v); isOps && isValueElemMatch(v) {
				pr, err := (&filterParser{}).parseOps(v, 1, name, false)
				if err != nil {
					return err
				}
				op.pullPred = pr
				return nil
			}
			m, err := (&filterParser{}).parseDoc(v, 1, false)
			if err != nil {
				return err
			}
			op.pullDoc = m
		default:
			pr, err := implicitEq(v)
			if err != nil {
				return err
			}
			op.pullPred = pr
		}
	case "$push", "$addToSet":
		return op.parsePushModifiers()
	case "$bit":
		return op.parseBit()
	}
	return nil
}

// bitOp is one bitwise operation of $bit: "and", "or" or "xor" with an
// int32 or int64 operand.
type bitOp struct {
	op      string
	operand any
}

// parseBit reads $bit's {and|or|xor: integer, ...}, with mongod's codes
// and messages (bit_node.cpp).
func (op *updateOp) parseBit() error {
	d, ok := op.value.(bson.D)
	if !ok {
		return newError(CodeFailedToParse, "The $bit modifier is not compatible with a %s. You must pass in an embedded document: {$bit: {field: {and/or/xor: #}}", typeName(op.value))
	}
	if len(d) == 0 {
		return newError(CodeFailedToParse, "You must pass in at least one bitwise operation. The format is: {$bit: {field: {and/or/xor: #}}")
	}
	for _, e := range d {
		switch e.Key {
		case "and", "or", "xor":
		default:
			return badValue("The $bit modifier only supports 'and', 'or', and 'xor', not '%s' which is an unknown operator: {%s: %s}", e.Key, e.Key, formatValue(e.Value))
		}
		switch e.Value.(type) {
		case int32, int64:
		default:
			return badValue("The $bit modifier field must be an Integer(32/64 bit); a '%s' is not supported here: {%s: %s}", typeName(e.Value), e.Key, formatValue(e.Value))
		}
		op.bits = append(op.bits, bitOp{op: e.Key, operand: e.Value})
	}
	return nil
}

// applyBits applies $bit's operations in order to an int32 or int64: an
// operation's result is an int64 when either side is one.
func applyBits(v any, bits []bitOp) any {
	for _, b := range bits {
		x, xok := v.(int32)
		y, yok := b.operand.(int32)
		if xok && yok {
			v = bitwise(b.op, x, y)
			continue
		}
		v = bitwise(b.op, toInt64(v), toInt64(b.operand))
	}
	return v
}

func bitwise[T int32 | int64](op string, x, y T) T {
	switch op {
	case "and":
		return x & y
	case "or":
		return x | y
	}
	return x ^ y
}

func toInt64(v any) int64 {
	if x, ok := v.(int32); ok {
		return int64(x)
	}
	return v.(int64)
}

func (op *updateOp) parsePushModifiers() error {
	d, ok := op.value.(bson.D)
	if !ok || !slices.ContainsFunc(d, func(e bson.E) bool { return e.Key == "$each" }) {
		op.each = bson.A{op.value}
		return nil
	}
	for _, e := range d {
		switch e.Key {
		case "$each":
			list, ok := e.Value.(bson.A)
			if !ok {
				return badValue("The argument to $each in %s must be an array but it was of type: %s", op.op, typeName(e.Value))
			}
			op.each = list
		case "$slice", "$position":
			if op.op != "$push" {
				return badValue("Found unexpected fields after $each in $addToSet: %s", formatValue(d))
			}
			n, ok := wholeNumber(e.Value)
			if !ok {
				return badValue("The value for %s must be an integer value but was given type: %s", e.Key, typeName(e.Value))
			}
			if e.Key == "$slice" {
				op.slice = &n
			} else {
				op.position = &n
			}
		case "$sort":
			if op.op != "$push" {
				return badValue("Found unexpected fields after $each in $addToSet: %s", formatValue(d))
			}
			if spec, ok := e.Value.(bson.D); ok {
				if len(spec) == 0 {
					return badValue("The $sort pattern is empty when it should be a set of fields.")
				}
				s, err := ParseSort(spec)
				if err != nil {
					return badValue("The $sort element value must be either 1 or -1")
				}
				op.sortSpec = s
				continue
			}
			n, ok := wholeNumber(e.Value)
			if !ok || (n != 1 && n != -1) {
				return badValue("The $sort element value must be either 1 or -1")
			}
			op.sortDir = int(n)
		default:
			return badValue("Unrecognized clause in %s: %s", op.op, e.Key)
		}
	}
	return nil
}

// Apply applies the update to doc and returns the new document and whether it differs from doc; doc
// itself is not modified (the result may share unchanged values with it). insert is true when the
// document is being inserted by an upsert, which is when $setOnInsert applies. now is the time
// $currentDate writes. Errors that depend on the document (e.g. $inc on a string, code 14) are
// *Error. An update using the positional operator $ needs the query: use ApplyWithQuery.
func (u *Update) Apply(doc bson.D, insert bool, now time.Time) (out bson.D, modified bool, err error) {
	return u.ApplyWithQuery(doc, nil, insert, now)
}

// ApplyWithQuery is Apply for an update whose paths may use the positional operator $: it stands for
// the index of the first element of the array that query matched in doc.
func (u *Update) ApplyWithQuery(doc bson.D, query *Filter, insert bool, now time.Time) (out bson.D, modified bool, err error) {
	a := &applier{u: u, orig: doc, query: query, now: now}
	var cur any = doc
	for _, op := range u.ops {
		if op.op == "$setOnInsert" && !insert {
			continue
		}
		cur, err = a.apply(cur, op)
		if err != nil {
			return doc, false, err
		}
	}
	out = cur.(bson.D)
	return out, !identical(out, doc), nil
}

type applier struct {
	u     *Update
	orig  bson.D
	query *Filter
	now   time.Time
}

// leafAct is what a leaf function does with the value at the end of a path.
type leafAct int

const (
	leafKeep leafAct = iota
	leafSet
	leafDelete
)

type leafFunc func(old any, exists bool) (any, leafAct, error)

func (a *applier) idString() string {
	for _, e := range a.orig {
		if e.Key == "_id" {
			return "{_id: " + formatValue(e.Value) + "}"
		}
	}
	return "{}"
}

func (a *applier) apply(cur any, op *updateOp) (any, error) {
	path, err := a.resolvePositional(op.path)
	if err != nil {
		return nil, err
	}
	name := strings.Join(op.path, ".")
	var fn leafFunc
	create := true
	switch op.op {
	case "$set", "$setOnInsert":
		fn = func(old any, exists bool) (any, leafAct, error) {
			if exists && identical(old, op.value) {
				return nil, leafKeep, nil
			}
			return op.value, leafSet, nil
		}
	case "$unset":
		create = false
		fn = func(_ any, exists bool) (any, leafAct, error) {
			if !exists {
				return nil, leafKeep, nil
			}
			return nil, leafDelete, nil
		}
	case "$inc", "$mul":
		fn = func(old any, exists bool) (any, leafAct, error) {
			if !exists {
				if op.op == "$inc" {
					return op.value, leafSet, nil
				}
				zero, _ := arith('*', op.value, int32(0))
				return zero, leafSet, nil
			}
			if !isNumber(old) {
				return nil, 0, newError(CodeTypeMismatch, "Cannot apply %s to a value of non-numeric type. %s has the field '%s' of non-numeric type %s", op.op, a.idString(), path[len(path)-1], typeName(old))
			}
			sym := byte('+')
			if op.op == "$mul" {
				sym = '*'
			}
			r, overflow := arith(sym, old, op.value)
			if overflow {
				return nil, 0, badValue("Failed to apply %s operations to current value (%s) for document %s", op.op, formatValue(old), a.idString())
			}
			if identical(r, old) {
				return nil, leafKeep, nil
			}
			return r, leafSet, nil
		}
	case "$bit":
		fn = func(old any, exists bool) (any, leafAct, error) {
			if !exists {
				return applyBits(int32(0), op.bits), leafSet, nil
			}
			switch old.(type) {
			case int32, int64:
			default:
				return nil, 0, badValue("Cannot apply $bit to a value of non-integral type.%s has the field %s of non-integer type %s", a.idString(), path[len(path)-1], typeName(old))
			}
			r := applyBits(old, op.bits)
			if identical(r, old) {
				return nil, leafKeep, nil
			}
			return r, leafSet, nil
		}
	case "$min", "$max":
		fn = func(old any, exists bool) (any, leafAct, error) {
			c := Compare(op.value, old)
			if !exists || (op.op == "$min" && c < 0) || (op.op == "$max" && c > 0) {
				return op.value, leafSet, nil
			}
			return nil, leafKeep, nil
		}
	case "$currentDate":
		fn = func(any, bool) (any, leafAct, error) {
			if op.timestamp {
				return bson.Timestamp{T: uint32(a.now.Unix()), I: 1}, leafSet, nil
			}
			return bson.NewDateTimeFromTime(a.now), leafSet, nil
		}
	case "$push", "$addToSet":
		fn = func(old any, exists bool) (any, leafAct, error) {
			var list bson.A
			if exists {
				l, ok := old.(bson.A)
				if !ok {
					if op.op == "$addToSet" {
						return nil, 0, badValue("Cannot apply $addToSet to non-array field. Field named '%s' has non-array type %s", path[len(path)-1], typeName(old))
					}
					return nil, 0, badValue("The field '%s' must be an array but is of type %s in document %s", name, typeName(old), a.idString())
				}
				list = l
			}
			var r bson.A
			if op.op == "$push" {
				r = op.push(list)
			} else {
				r = slices.Clone(list)
				if r == nil {
					r = bson.A{}
				}
				set := newValueSet()
				for _, x := range r {
					set.add(x)
				}
				for _, v := range op.each {
					if set.add(v) {
						r = append(r, v)
					}
				}
			}
			if exists && identical(r, old) {
				return nil, leafKeep, nil
			}
			return r, leafSet, nil
		}
	case "$pop", "$pull", "$pullAll":
		create = false
		fn = func(old any, exists bool) (any, leafAct, error) {
			if !exists {
				return nil, leafKeep, nil
			}
			list, ok := old.(bson.A)
			if !ok {
				if op.op == "$pop" {
					return nil, 0, newError(CodeTypeMismatch, "Path '%s' contains an element of non-array type '%s'", name, typeName(old))
				}
				return nil, 0, badValue("Cannot apply %s to a non-array value", op.op)
			}
			r := op.removeFrom(list)
			if len(r) == len(list) {
				return nil, leafKeep, nil
			}
			return r, leafSet, nil
		}
	case "$rename":
		return a.rename(cur, op)
	}
	out, _, err := a.modify(cur, path, 0, create, fn)
	return out, err
}

func (op *updateOp) push(list bson.A) bson.A {
	r := make(bson.A, 0, len(list)+len(op.each))
	pos := int64(len(list))
	if op.position != nil {
		pos = *op.position
		if pos < 0 {
			pos = max(int64(len(list))+pos, 0)
		}
		pos = min(pos, int64(len(list)))
	}
	r = append(r, list[:pos]...)
	r = append(r, op.each...)
	r = append(r, list[pos:]...)
	switch {
	case op.sortSpec != nil:
		slices.SortStableFunc(r, func(x, y any) int {
			dx, _ := x.(bson.D)
			dy, _ := y.(bson.D)
			return op.sortSpec.Compare(dx, dy)
		})
	case op.sortDir != 0:
		slices.SortStableFunc(r, func(x, y any) int { return Compare(x, y) * op.sortDir })
	}
	if op.slice != nil {
		n := *op.slice
		l := int64(len(r))
		if n >= 0 {
			r = r[:min(n, l)]
		} else {
			r = r[max(l+n, 0):]
		}
	}
	return r
}

func (op *updateOp) removeFrom(list bson.A) bson.A {
	switch op.op {
	case "$pop":
		if len(list) == 0 {
			return list
		}
		if n, _ := wholeNumber(op.value); n == 1 {
			return slices.Clone(list[:len(list)-1])
		}
		return slices.Clone(list[1:])
	case "$pullAll":
		set := newValueSet()
		for _, v := range op.value.(bson.A) {
			set.add(v)
		}
		out := bson.A{}
		for _, el := range list {
			if !set.contains(el) {
				out = append(out, el)
			}
		}
		return out
	}
	out := bson.A{}
	for _, el := range list {
		var hit bool
		if op.pullPred != nil {
			hit = op.pullPred.matches([]branch{{v: el}})
		} else if d, ok := el.(bson.D); ok {
			hit = op.pullDoc.match(d)
		}
		if !hit {
			out = append(out, el)
		}
	}
	return out
}

// resolvePositional replaces a "$" component with the index of the first element of that array the
// query matches.
func (a *applier) resolvePositional(path []string) ([]string, error) {
	i := slices.Index(path, "$")
	if i < 0 {
		return path, nil
	}
	idx, ok := positionalIndex(a.orig, path[:i], a.query)
	if !ok {
		return nil, badValue("The positional operator did not find the match needed from the query.")
	}
	out := slices.Clone(path)
	out[i] = itoa(idx)
	return out, nil
}

// positionalIndex returns the index of the first element of the array at path (reached through
// documents only) for which query matches doc with that array replaced by the element alone; the
// query must test a path at or under the array's.
func positionalIndex(doc bson.D, path []string, query *Filter) (int, bool) {
	if query == nil {
		return 0, false
	}
	prefix := strings.Join(path, ".")
	mentioned := false
	for _, p := range query.paths {
		if p == prefix || strings.HasPrefix(p, prefix+".") {
			mentioned = true
		}
	}
	v, found, err := plainGet(doc, path, "positional")
	list, isArray := v.(bson.A)
	if !mentioned || err != nil || !found || !isArray {
		return 0, false
	}
	a := &applier{u: &Update{}}
	for idx, el := range list {
		one := func(any, bool) (any, leafAct, error) { return bson.A{el}, leafSet, nil }
		candidate, _, err := a.modify(doc, path, 0, false, one)
		if err != nil {
			return 0, false
		}
		if query.Match(candidate.(bson.D)) {
			return idx, true
		}
	}
	return 0, false
}

func itoa(i int) string { return strconv.Itoa(i) }

// modify returns cur with the value at parts transformed by fn, copying only the containers on the
// way; changed reports whether anything changed. create says whether missing fields on the way are
// created (as for $set) or the update is a no-op (as for $unset).
func (a *applier) modify(cur any, parts []string, depth int, create bool, fn leafFunc) (any, bool, error) {
	comp := parts[0]
	last := len(parts) == 1
	switch x := cur.(type) {
	case bson.D:
		if isPositional(comp) {
			return nil, false, badValue("Cannot apply array updates to non-array element %s: %s", comp, formatValue(x))
		}
		idx := slices.IndexFunc(x, func(e bson.E) bool { return e.Key == comp })
		if last {
			var old any
			if idx >= 0 {
				old = x[idx].Value
			}
			nv, act, err := fn(old, idx >= 0)
			if err != nil {
				return nil, false, err
			}
			switch act {
			case leafSet:
				out := slices.Clone(x)
				if idx >= 0 {
					out[idx].Value = nv
				} else {
					out = append(out, bson.E{Key: comp, Value: nv})
				}
				return out, true, nil
			case leafDelete:
				if idx < 0 {
					return x, false, nil
				}
				return slices.Delete(slices.Clone(x), idx, idx+1), true, nil
			}
			return x, false, nil
		}
		if idx < 0 {
			if !create {
				return x, false, nil
			}
			if isPositional(parts[1]) {
				return nil, false, badValue("The path '%s' must exist in the document in order to apply array updates.", strings.Join(parts[:2], "."))
			}
			child, changed, err := a.modify(bson.D{}, parts[1:], depth+1, create, fn)
			if err != nil || !changed {
				return x, false, err
			}
			return append(slices.Clone(x), bson.E{Key: comp, Value: child}), true, nil
		}
		child, changed, err := a.modify(x[idx].Value, parts[1:], depth+1, create, fn)
		if err != nil || !changed {
			return x, false, err
		}
		out := slices.Clone(x)
		out[idx].Value = child
		return out, true, nil
	case bson.A:
		var targets []int
		switch {
		case comp == "$[]":
			for i := range x {
				targets = append(targets, i)
			}
		case strings.HasPrefix(comp, "$["):
			f := a.u.arrayFilters[comp[2:len(comp)-1]]
			for i, el := range x {
				if f.Match(bson.D{{Key: comp[2 : len(comp)-1], Value: el}}) {
					targets = append(targets, i)
				}
			}
		default:
			i, ok := arrayIndex(comp)
			if !ok {
				if !create {
					return x, false, nil
				}
				return nil, false, newError(CodePathNotViable, "Cannot create field '%s' in element {%s: %s}", comp, parts[0], formatValue(x))
			}
			if i >= len(x) {
				if !create {
					return x, false, nil
				}
				if i-len(x) > maxArrayPad {
					return nil, false, badValue("cannot pad an array by more than %d elements", maxArrayPad)
				}
				padded := slices.Clone(x)
				for len(padded) <= i {
					padded = append(padded, nil)
				}
				return a.modifyElements(padded, []int{i}, parts, depth, create, fn, true)
			}
			targets = []int{i}
		}
		return a.modifyElements(x, targets, parts, depth, create, fn, false)
	}
	if isPositional(comp) {
		return nil, false, badValue("Cannot apply array updates to non-array element %s", formatValue(cur))
	}
	if !create {
		return cur, false, nil
	}
	return nil, false, newError(CodePathNotViable, "Cannot create field '%s' in element %s", comp, formatValue(cur))
}

// modifyElements applies the rest of the path to the given elements of an array. fresh marks an
// element just created by padding (it counts as missing).
func (a *applier) modifyElements(x bson.A, targets []int, parts []string, depth int, create bool, fn leafFunc, fresh bool) (any, bool, error) {
	out := x
	copied := fresh
	anyChange := fresh
	for _, i := range targets {
		var nv any
		var changed bool
		if len(parts) == 1 {
			v, act, err := fn(x[i], !fresh)
			if err != nil {
				return nil, false, err
			}
			switch act {
			case leafSet:
				nv, changed = v, true
			case leafDelete:
				nv, changed = nil, true // $unset of an array element leaves null in its place
			}
		} else {
			el := x[i]
			if fresh {
				el = bson.D{}
			}
			v, c, err := a.modify(el, parts[1:], depth+1, create, fn)
			if err != nil {
				return nil, false, err
			}
			nv, changed = v, c || fresh
		}
		if !changed {
			continue
		}
		if !copied {
			out = slices.Clone(x)
			copied = true
		}
		out[i] = nv
		anyChange = true
	}
	return out, anyChange, nil
}

// rename moves the value at op.path to op.to. Neither path may go through an array.
func (a *applier) rename(cur any, op *updateOp) (any, error) {
	doc := cur.(bson.D)
	v, found, err := plainGet(doc, op.path, "source")
	if err != nil || !found {
		return cur, err
	}
	if _, _, err := plainGet(doc, op.to, "destination"); err != nil {
		return nil, err
	}
	unset := func(any, bool) (any, leafAct, error) { return nil, leafDelete, nil }
	out, _, err := a.modify(doc, op.path, 0, false, unset)
	if err != nil {
		return nil, err
	}
	set := func(any, bool) (any, leafAct, error) { return v, leafSet, nil }
	out, _, err = a.modify(out, op.to, 0, true, set)
	return out, err
}

// plainGet follows a path through documents only; an array on the way is an error.
func plainGet(doc bson.D, parts []string, which string) (any, bool, error) {
	var cur any = doc
	for i, p := range parts {
		switch x := cur.(type) {
		case bson.D:
			idx := slices.IndexFunc(x, func(e bson.E) bool { return e.Key == p })
			if idx < 0 {
				return nil, false, nil
			}
			cur = x[idx].Value
		case bson.A:
			return nil, false, badValue("The %s field cannot be an array element, '%s' has an array field called '%s'", which, strings.Join(parts, "."), strings.Join(parts[:i], "."))
		default:
			return nil, false, nil
		}
	}
	return cur, true, nil
}

// UpsertSeed returns the document an upsert starts from when no document matches f: the fields the
// filter fixes by equality (implicit or $eq, also inside top-level $and), with dotted paths expanded
// into nested documents. Operators other than equality contribute nothing; a path under one already
// set is skipped.
func UpsertSeed(f *Filter) bson.D {
	out := bson.D{}
	if f == nil {
		return out
	}
	a := &applier{u: &Update{}}
	var placed [][]string
	for _, e := range f.eqs {
		parts := strings.Split(e.path, ".")
		if slices.ContainsFunc(placed, func(p []string) bool { return isPrefix(p, parts) || isPrefix(parts, p) }) {
			continue
		}
		if slices.ContainsFunc(parts, isPositional) {
			continue
		}
		v := e.value
		set := func(any, bool) (any, leafAct, error) { return v, leafSet, nil }
		next, _, err := a.modify(out, parts, 0, true, set)
		if err != nil {
			continue
		}
		out = next.(bson.D)
		placed = append(placed, parts)
	}
	return out
}
