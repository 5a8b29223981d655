package mongo

import (
	"encoding/hex"
	"math"
	"slices"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/query/eval"
)

// How a filter uses the index. Parsec indexes every path of every item
// (the container's automatic indexing), which serves MongoDB's single-field
// and compound indexes alike, so a filter needs no declared index to use
// it. A full scan is replaced by an indexed read (engine.ReadIndexed) when
// one conjunct of the filter can be turned into index terms whose union
// holds every document the conjunct matches under MongoDB's rules, given
// how documents are stored (storage.go):
//
//   - an equality on a string, boolean, number, ObjectId or Date, or an
//     $in or $all of such values: the value's term at the path (numbers
//     also as int64 "$numberLong" strings, and every Decimal128; strings
//     also as symbols);
//   - a range ($gt, $gte, $lt, $lte) of one of those types: the range at
//     the path (ObjectIds by their hex digits, whose order is theirs;
//     int64, Decimal128 and Date values, stored as strings whose order is
//     not numeric, by every such value);
//   - and in every case the documents with an array at the path or at any
//     path above it, since MongoDB's dotted paths and comparisons reach
//     into arrays, and the index does not index array elements.
//
// An equality on _id reads the item ids it encodes to. The filter is then
// evaluated on every document the index selects, so the index decides
// what is read, never what matches. Nulls, regular expressions, $ne,
// $exists, $or and the like do not use the index.

// indexUse is how a read uses the index: the terms, and the field they
// come from (for explain).
type indexUse struct {
	field string
	terms []engine.IndexTerm
}

// indexPlan returns the index use of the filter's most selective usable
// conjunct, or nil.
func indexPlan(raw bson.D) *indexUse {
	var best *indexUse
	bestScore := 0
	var walk func(d bson.D, depth int)
	walk = func(d bson.D, depth int) {
		for _, e := range d {
			if e.Key == "$and" && depth < 4 {
				if list, ok := e.Value.(bson.A); ok {
					for _, x := range list {
						if sub, ok := x.(bson.D); ok {
							walk(sub, depth+1)
						}
					}
				}
				continue
			}
			if strings.HasPrefix(e.Key, "$") {
				continue
			}
			if terms, score := conjunctTerms(e.Key, e.Value); terms != nil && (best == nil || score < bestScore) {
				best, bestScore = &indexUse{field: e.Key, terms: terms}, score
			}
		}
	}
	walk(raw, 0)
	return best
}

// Scores of a conjunct: lower is likely more selective.
const (
	scoreBothBounds = 100
	scoreOneBound   = 1000
)

// conjunctTerms returns the index terms of one {field: value} conjunct and
// its score, or nil when the index cannot serve it.
func conjunctTerms(field string, v any) ([]engine.IndexTerm, int) {
	path, ok := storedPath(field)
	if !ok {
		return nil, 0
	}
	ops, isOps := v.(bson.D)
	if isOps && (len(ops) == 0 || !strings.HasPrefix(ops[0].Key, "$")) {
		isOps = false
	}
	if !isOps {
		t := eqTerms(path, []any{v})
		return t, 1
	}
	var lo, hi any
	var eq []any
	for _, op := range ops {
		switch op.Key {
		case "$eq":
			eq = []any{op.Value}
		case "$in":
			if list, ok := op.Value.(bson.A); ok && len(list) > 0 && len(list) <= maxInKeys && (eq == nil || len(list) < len(eq)) {
				eq = list
			}
		case "$all":
			if list, ok := op.Value.(bson.A); ok && len(list) > 0 && eq == nil {
				eq = list[:1]
			}
		case "$gt", "$gte":
			lo = op.Value
		case "$lt", "$lte":
			hi = op.Value
		}
	}
	if eq != nil {
		if t := eqTerms(path, eq); t != nil {
			return t, len(eq)
		}
	}
	if lo != nil && hi != nil && rangeClass(lo) == rangeClass(hi) {
		if t := rangeTerms(path, lo, hi); t != nil {
			return t, scoreBothBounds
		}
	}
	for _, b := range [][2]any{{lo, nil}, {nil, hi}} {
		if b[0] != nil || b[1] != nil {
			if t := rangeTerms(path, b[0], b[1]); t != nil {
				return t, scoreOneBound
			}
		}
	}
	return nil, 0
}

// storedPath returns the stored path of a dotted field: _id is the item
// id, and a top-level name the engine reserves is escaped. Paths with
// empty or operator segments have none.
func storedPath(field string) ([]string, bool) {
	segs := strings.Split(field, ".")
	for _, s := range segs {
		if s == "" || strings.HasPrefix(s, "$") {
			return nil, false
		}
	}
	if segs[0] == "_id" {
		if len(segs) > 1 {
			return nil, false
		}
		return []string{"id"}, true
	}
	for i := range segs {
		segs[i] = storedName(segs[i], i == 0)
	}
	return segs, true
}

// isIDPath reports the item id path, which _id maps to.
func isIDPath(path []string) bool { return len(path) == 1 && path[0] == "id" }

// eqTerms returns the terms of an equality with any of vals, or nil.
func eqTerms(path []string, vals []any) []engine.IndexTerm {
	if isIDPath(path) {
		t := engine.IndexTerm{Path: path}
		for _, v := range vals {
			if _, isRegex := v.(bson.Regex); isRegex {
				return nil
			}
			id, err := idString(v)
			if err != nil {
				return nil
			}
			t.Values = append(t.Values, eval.StringValue(id))
		}
		return []engine.IndexTerm{t}
	}
	var byPath []engine.IndexTerm
	add := func(p []string, v eval.Value) {
		for i := range byPath {
			if slices.Equal(byPath[i].Path, p) {
				byPath[i].Values = append(byPath[i].Values, v)
				return
			}
		}
		byPath = append(byPath, engine.IndexTerm{Path: p, Values: []eval.Value{v}})
	}
	decimals := false
	for _, v := range vals {
		switch x := v.(type) {
		case string:
			add(path, eval.StringValue(x))
			add(sub(path, "$symbol"), eval.StringValue(x))
		case bool:
			add(path, eval.BoolValue(x))
		case int32, int64, float64:
			f, exact, ok := number(x)
			if !ok {
				return nil
			}
			add(path, eval.NumberValue(f))
			if exact != "" {
				add(sub(path, "$numberLong"), eval.StringValue(exact))
			}
			decimals = true
		case bson.ObjectID:
			add(sub(path, "$oid"), eval.StringValue(hex.EncodeToString(x[:])))
		case bson.DateTime:
			add(sub(path, "$date", "$numberLong"), eval.StringValue(strconv.FormatInt(int64(x), 10)))
		default:
			return nil
		}
	}
	if decimals {
		byPath = append(byPath, engine.IndexTerm{Path: sub(path, "$numberDecimal"), Kind: eval.String})
	}
	return append(byPath, arrayTerms(path)...)
}

// number returns a finite number's value, and its int64 decimal form when
// it is an integer an int64 holds (as an int64 equal to it is stored).
func number(v any) (f float64, exact string, ok bool) {
	switch x := v.(type) {
	case int32:
		return float64(x), strconv.FormatInt(int64(x), 10), true
	case int64:
		return float64(x), strconv.FormatInt(x, 10), true
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return 0, "", false
		}
		if x == math.Trunc(x) && math.Abs(x) < 1<<63 {
			exact = strconv.FormatInt(int64(x), 10)
		}
		return x, exact, true
	}
	return 0, "", false
}

// rangeClass names the comparison class of a range bound: MongoDB's
// comparisons only match values of the bound's class.
func rangeClass(v any) string {
	switch x := v.(type) {
	case int32, int64:
		return "number"
	case float64:
		if math.IsNaN(x) {
			return ""
		}
		return "number"
	case string:
		return "string"
	case bool:
		return "bool"
	case bson.ObjectID:
		return "oid"
	case bson.DateTime:
		return "date"
	}
	return ""
}

// rangeTerms returns the terms of a range with the bounds given (nil:
// open), both of one class, or nil.
func rangeTerms(path []string, lo, hi any) []engine.IndexTerm {
	if isIDPath(path) {
		return nil
	}
	b := lo
	if b == nil {
		b = hi
	}
	t := engine.IndexTerm{Path: path}
	var terms []engine.IndexTerm
	switch rangeClass(b) {
	case "number":
		conv := func(v any) eval.Value {
			if v == nil {
				return eval.Value{}
			}
			f, _, _ := number(v)
			if math.IsInf(f, 0) { // ±Infinity bounds: open
				return eval.Value{}
			}
			return eval.NumberValue(f)
		}
		t.Lo, t.Hi = conv(lo), conv(hi)
		if !t.Lo.IsDefined() && !t.Hi.IsDefined() {
			t.Kind = eval.Number
		}
		terms = []engine.IndexTerm{t,
			{Path: sub(path, "$numberLong"), Kind: eval.String},
			{Path: sub(path, "$numberDecimal"), Kind: eval.String},
			{Path: sub(path, "$numberDouble"), Kind: eval.String}}
	case "string":
		t.Lo, t.Hi = optString(lo), optString(hi)
		terms = []engine.IndexTerm{t, {Path: sub(path, "$symbol"), Kind: eval.String}}
	case "bool":
		if lo != nil {
			t.Lo = eval.BoolValue(lo.(bool))
		}
		if hi != nil {
			t.Hi = eval.BoolValue(hi.(bool))
		}
		terms = []engine.IndexTerm{t}
	case "oid":
		hexOf := func(v any) any {
			if v == nil {
				return nil
			}
			id := v.(bson.ObjectID)
			return hex.EncodeToString(id[:])
		}
		terms = []engine.IndexTerm{{Path: sub(path, "$oid"), Lo: optString(hexOf(lo)), Hi: optString(hexOf(hi))}}
	case "date":
		terms = []engine.IndexTerm{{Path: sub(path, "$date", "$numberLong"), Kind: eval.String}}
	default:
		return nil
	}
	return append(terms, arrayTerms(path)...)
}

func optString(v any) eval.Value {
	if v == nil {
		return eval.Value{}
	}
	return eval.StringValue(v.(string))
}

// arrayTerms selects the documents with an array at the path or at a path
// above it.
func arrayTerms(path []string) []engine.IndexTerm {
	out := make([]engine.IndexTerm, len(path))
	for i := range path {
		out[i] = engine.IndexTerm{Path: path[:i+1], Kind: eval.Array}
	}
	return out
}

// sub returns path extended by names, in a new slice.
func sub(path []string, names ...string) []string {
	return append(slices.Clip(path), names...)
}
