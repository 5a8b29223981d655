package mql

// A deliberately simple model of filter matching and of a few update operators, written without
// reference to the implementation, for the differential tests below. The model covers top-level and
// one-level dotted paths over documents whose values are small numbers, short strings, booleans,
// null, arrays of those or of small documents, and small documents.

import (
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

var modelSeed = flag.Uint64("mql.seed", 1, "seed of the differential tests")

// category is the model's notion of a type bracket.
func category(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case int32, int64, float64:
		return "number"
	case string:
		return "string"
	case bool:
		return "bool"
	case bson.A:
		return "array"
	case bson.D:
		return "object"
	}
	panic(fmt.Sprintf("model: unexpected %T", v))
}

func asFloat(v any) float64 {
	switch x := v.(type) {
	case int32:
		return float64(x)
	case int64:
		return float64(x)
	case float64:
		return x
	}
	panic("model: not a number")
}

// modelEqual is equality across numeric types, ordered documents and arrays.
func modelEqual(a, b any) bool {
	if category(a) != category(b) {
		return false
	}
	switch x := a.(type) {
	case nil:
		return true
	case string:
		return x == b.(string)
	case bool:
		return x == b.(bool)
	case bson.A:
		y := b.(bson.A)
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if !modelEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case bson.D:
		y := b.(bson.D)
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if x[i].Key != y[i].Key || !modelEqual(x[i].Value, y[i].Value) {
				return false
			}
		}
		return true
	}
	return asFloat(a) == asFloat(b)
}

// modelValues returns the values a path of one or two components reaches, and whether some branch
// of the path is missing.
func modelValues(d bson.D, path string) (vals []any, someMissing bool) {
	first, rest, dotted := strings.Cut(path, ".")
	top, ok := modelGet(d, first)
	if !ok {
		return nil, true
	}
	if !dotted {
		return []any{top}, false
	}
	switch x := top.(type) {
	case bson.D:
		v, ok := modelGet(x, rest)
		if !ok {
			return nil, true
		}
		return []any{v}, false
	case bson.A:
		if len(x) == 0 {
			return nil, true
		}
		for _, el := range x {
			sub, isDoc := el.(bson.D)
			if !isDoc {
				someMissing = true
				continue
			}
			v, ok := modelGet(sub, rest)
			if !ok {
				someMissing = true
				continue
			}
			vals = append(vals, v)
		}
		return vals, someMissing
	}
	return nil, true
}

func modelGet(d bson.D, key string) (any, bool) {
	for _, e := range d {
		if e.Key == key {
			return e.Value, true
		}
	}
	return nil, false
}

// candidates are the values a leaf condition is tested against: each value and, for arrays, each
// element.
func candidates(vals []any) []any {
	var out []any
	for _, v := range vals {
		out = append(out, v)
		if a, ok := v.(bson.A); ok {
			out = append(out, a...)
		}
	}
	return out
}

// modelCond evaluates {path: cond} where cond is one operator and its argument.
func modelCond(d bson.D, path, op string, arg any) bool {
	vals, someMissing := modelValues(d, path)
	cands := candidates(vals)
	anyOf := func(f func(v any) bool) bool {
		for _, c := range cands {
			if f(c) {
				return true
			}
		}
		return false
	}
	switch op {
	case "$eq":
		if arg == nil {
			return someMissing || anyOf(func(v any) bool { return v == nil })
		}
		return anyOf(func(v any) bool { return modelEqual(v, arg) })
	case "$ne":
		return !modelCond(d, path, "$eq", arg)
	case "$gt", "$gte", "$lt", "$lte":
		if arg == nil {
			if op == "$gte" || op == "$lte" {
				return modelCond(d, path, "$eq", nil)
			}
			return false
		}
		return anyOf(func(v any) bool {
			if category(v) != category(arg) {
				return false
			}
			var c int
			switch category(v) {
			case "number":
				x, y := asFloat(v), asFloat(arg)
				c = map[bool]int{true: -1, false: 0}[x < y] + map[bool]int{true: 1, false: 0}[x > y]
			case "string":
				c = strings.Compare(v.(string), arg.(string))
			case "bool":
				x, y := v.(bool), arg.(bool)
				if x != y {
					c = map[bool]int{true: 1, false: -1}[x]
				}
			default:
				return false
			}
			switch op {
			case "$gt":
				return c > 0
			case "$gte":
				return c >= 0
			case "$lt":
				return c < 0
			}
			return c <= 0
		})
	case "$in":
		for _, q := range arg.(bson.A) {
			if modelCond(d, path, "$eq", q) {
				return true
			}
		}
		return false
	case "$nin":
		return !modelCond(d, path, "$in", arg)
	case "$all":
		list := arg.(bson.A)
		if len(list) == 0 {
			return false
		}
		for _, q := range list {
			if !modelCond(d, path, "$eq", q) {
				return false
			}
		}
		return true
	case "$exists":
		return (len(vals) > 0) == arg.(bool)
	case "$size":
		for _, v := range vals {
			if a, ok := v.(bson.A); ok && len(a) == int(arg.(int32)) {
				return true
			}
		}
		return false
	case "$type":
		return anyOf(func(v any) bool {
			switch arg.(string) {
			case "number":
				return category(v) == "number"
			case "int":
				_, ok := v.(int32)
				return ok
			case "long":
				_, ok := v.(int64)
				return ok
			case "double":
				_, ok := v.(float64)
				return ok
			}
			return category(v) == arg.(string)
		})
	}
	panic("model: unknown operator " + op)
}

// modelExpr is a random filter both as a bson.D and as a Go predicate over the model.
type modelExpr struct {
	filter bson.D
	match  func(bson.D) bool
}

var modelPaths = []string{"a", "b", "c", "a.p", "b.q", "a.q"}

func genScalar(r *rand.Rand) any {
	switch r.IntN(7) {
	case 0:
		return int32(r.IntN(4))
	case 1:
		return int64(r.IntN(4))
	case 2:
		return float64(r.IntN(4)) + []float64{0, 0.5}[r.IntN(2)]
	case 3:
		return []string{"x", "y", ""}[r.IntN(3)]
	case 4:
		return r.IntN(2) == 0
	case 5:
		return nil
	}
	return int32(r.IntN(3))
}

func genValue(r *rand.Rand, depth int) any {
	switch n := r.IntN(10); {
	case n < 6 || depth > 0:
		return genScalar(r)
	case n < 8:
		a := bson.A{}
		for i := r.IntN(4); i > 0; i-- {
			if r.IntN(3) == 0 {
				a = append(a, genSubDoc(r))
				continue
			}
			a = append(a, genScalar(r))
		}
		return a
	}
	return genSubDoc(r)
}

func genSubDoc(r *rand.Rand) bson.D {
	d := bson.D{}
	for _, k := range []string{"p", "q"} {
		if r.IntN(3) > 0 {
			v := genScalar(r)
			if r.IntN(4) == 0 {
				v = bson.A{genScalar(r), genScalar(r)}
			}
			d = append(d, bson.E{Key: k, Value: v})
		}
	}
	if r.IntN(2) == 0 {
		slices.Reverse(d)
	}
	return d
}

func genDoc(r *rand.Rand) bson.D {
	d := bson.D{{Key: "_id", Value: int32(r.IntN(1000))}}
	for _, k := range []string{"a", "b", "c"} {
		if r.IntN(4) > 0 {
			d = append(d, bson.E{Key: k, Value: genValue(r, 0)})
		}
	}
	return d
}

func genQueryValue(r *rand.Rand) any {
	if r.IntN(6) == 0 {
		return genValue(r, 0)
	}
	return genScalar(r)
}

func genExpr(r *rand.Rand, depth int) modelExpr {
	if depth < 2 && r.IntN(4) == 0 {
		var subs []modelExpr
		for i := 1 + r.IntN(3); i > 0; i-- {
			subs = append(subs, genExpr(r, depth+1))
		}
		list := bson.A{}
		for _, s := range subs {
			list = append(list, s.filter)
		}
		op := []string{"$and", "$or", "$nor"}[r.IntN(3)]
		return modelExpr{filter: bson.D{{Key: op, Value: list}}, match: func(d bson.D) bool {
			n := 0
			for _, s := range subs {
				if s.match(d) {
					n++
				}
			}
			switch op {
			case "$and":
				return n == len(subs)
			case "$or":
				return n > 0
			}
			return n == 0
		}}
	}
	path := modelPaths[r.IntN(len(modelPaths))]
	var op string
	var arg any
	switch r.IntN(12) {
	case 0:
		// implicit equality
		v := genQueryValue(r)
		return modelExpr{filter: bson.D{{Key: path, Value: v}}, match: func(d bson.D) bool { return modelCond(d, path, "$eq", v) }}
	case 1, 2:
		op, arg = []string{"$eq", "$ne"}[r.IntN(2)], genQueryValue(r)
	case 3, 4:
		op, arg = []string{"$gt", "$gte", "$lt", "$lte"}[r.IntN(4)], genScalar(r)
	case 5:
		list := bson.A{}
		for i := r.IntN(3); i > 0; i-- {
			list = append(list, genScalar(r))
		}
		op, arg = []string{"$in", "$nin", "$all"}[r.IntN(3)], list
	case 6:
		op, arg = "$exists", r.IntN(2) == 0
	case 7:
		op, arg = "$size", int32(r.IntN(3))
	case 8:
		op, arg = "$type", []string{"number", "int", "long", "double", "string", "array", "null", "bool", "object"}[r.IntN(9)]
	default:
		// $not around a comparison
		inner := []string{"$gt", "$lte", "$eq", "$in"}[r.IntN(4)]
		var iarg any = genScalar(r)
		if inner == "$in" {
			iarg = bson.A{genScalar(r), genScalar(r)}
		}
		return modelExpr{
			filter: bson.D{{Key: path, Value: bson.D{{Key: "$not", Value: bson.D{{Key: inner, Value: iarg}}}}}},
			match:  func(d bson.D) bool { return !modelCond(d, path, inner, iarg) },
		}
	}
	return modelExpr{filter: bson.D{{Key: path, Value: bson.D{{Key: op, Value: arg}}}}, match: func(d bson.D) bool { return modelCond(d, path, op, arg) }}
}

func TestFilterDifferential(t *testing.T) {
	seed := *modelSeed
	r := rand.New(rand.NewPCG(seed, 0xF117E4))
	docs := make([]bson.D, 3000)
	for i := range docs {
		docs[i] = genDoc(r)
	}
	failures := 0
	for i := 0; i < 400; i++ {
		e := genExpr(r, 0)
		f, err := ParseFilter(e.filter)
		if err != nil {
			t.Fatalf("seed %d: ParseFilter(%v): %v", seed, e.filter, err)
		}
		for _, d := range docs {
			if got, want := f.Match(d), e.match(d); got != want {
				t.Errorf("seed %d: filter %v on %v: Match = %v, model = %v", seed, e.filter, d, got, want)
				failures++
				if failures > 10 {
					t.FailNow()
				}
			}
		}
	}
}

// ---- update model ----

type modelOp struct {
	op    string
	path  string
	value any
}

var errModel = errors.New("model: update fails")

// modelApply applies ops (on distinct, non-overlapping paths) in path order.
func modelApply(d bson.D, ops []modelOp) (bson.D, error) {
	ops = slices.Clone(ops)
	sort.SliceStable(ops, func(i, j int) bool { return ops[i].path < ops[j].path })
	out := cloneDoc(d)
	for _, op := range ops {
		first, rest, dotted := strings.Cut(op.path, ".")
		if !dotted {
			nd, err := modelLeaf(out, first, op)
			if err != nil {
				return nil, err
			}
			out = nd
			continue
		}
		parent, ok := modelGet(out, first)
		if !ok {
			if op.op == "$unset" || op.op == "$pull" {
				continue
			}
			sub, err := modelLeaf(bson.D{}, rest, op)
			if err != nil {
				return nil, err
			}
			out = append(out, bson.E{Key: first, Value: sub})
			continue
		}
		sub, isDoc := parent.(bson.D)
		if !isDoc {
			if op.op == "$unset" || op.op == "$pull" {
				continue
			}
			return nil, errModel // cannot create a field in a scalar or (by name) in an array
		}
		nsub, err := modelLeaf(sub, rest, op)
		if err != nil {
			return nil, err
		}
		for i := range out {
			if out[i].Key == first {
				out[i].Value = nsub
			}
		}
	}
	return out, nil
}

func cloneDoc(d bson.D) bson.D {
	return append(bson.D{}, d...)
}

func modelLeaf(d bson.D, key string, op modelOp) (bson.D, error) {
	d = cloneDoc(d)
	idx := -1
	for i, e := range d {
		if e.Key == key {
			idx = i
		}
	}
	put := func(v any) {
		if idx >= 0 {
			d[idx].Value = v
		} else {
			d = append(d, bson.E{Key: key, Value: v})
		}
	}
	switch op.op {
	case "$set":
		put(op.value)
	case "$unset":
		if idx >= 0 {
			d = append(d[:idx:idx], d[idx+1:]...)
		}
	case "$inc":
		if idx < 0 {
			put(op.value)
			break
		}
		old := d[idx].Value
		if category(old) != "number" {
			return nil, errModel
		}
		_, of := old.(float64)
		_, af := op.value.(float64)
		_, ol := old.(int64)
		_, al := op.value.(int64)
		switch {
		case of || af:
			put(asFloat(old) + asFloat(op.value))
		case ol || al:
			put(int64(asFloat(old) + asFloat(op.value)))
		default:
			put(int32(asFloat(old) + asFloat(op.value)))
		}
	case "$push":
		if idx < 0 {
			put(bson.A{op.value})
			break
		}
		a, ok := d[idx].Value.(bson.A)
		if !ok {
			return nil, errModel
		}
		put(append(slices.Clone(a), op.value))
	case "$pull":
		if idx < 0 {
			break
		}
		a, ok := d[idx].Value.(bson.A)
		if !ok {
			return nil, errModel
		}
		kept := bson.A{}
		for _, el := range a {
			if !modelEqual(el, op.value) && !(op.value != nil && slices.ContainsFunc(asArray(el), func(x any) bool { return modelEqual(x, op.value) })) {
				kept = append(kept, el)
			}
		}
		put(kept)
	}
	return d, nil
}

// asArray returns the elements of an array element (a pulled scalar also matches inside a nested
// array, as query equality does).
func asArray(v any) bson.A {
	a, _ := v.(bson.A)
	return a
}

// modelSame is strict equality: same types, same order.
func modelSame(a, b any) bool {
	if fmt.Sprintf("%T", a) != fmt.Sprintf("%T", b) {
		return false
	}
	switch x := a.(type) {
	case bson.A:
		y := b.(bson.A)
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if !modelSame(x[i], y[i]) {
				return false
			}
		}
		return true
	case bson.D:
		y := b.(bson.D)
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if x[i].Key != y[i].Key || !modelSame(x[i].Value, y[i].Value) {
				return false
			}
		}
		return true
	}
	return a == b
}

func TestUpdateDifferential(t *testing.T) {
	seed := *modelSeed
	r := rand.New(rand.NewPCG(seed, 0x0BDA7E))
	updatePaths := []string{"a", "b", "c", "a.p", "b.q", "a.q", "c.p"}
	failures := 0
	for i := 0; i < 4000; i++ {
		d := genDoc(r)
		// Distinct paths, none a prefix of another.
		var ops []modelOp
		var used []string
		for n := 1 + r.IntN(3); n > 0; n-- {
			p := updatePaths[r.IntN(len(updatePaths))]
			if slices.ContainsFunc(used, func(u string) bool {
				return u == p || strings.HasPrefix(u, p+".") || strings.HasPrefix(p, u+".")
			}) {
				continue
			}
			used = append(used, p)
			op := modelOp{op: []string{"$set", "$unset", "$inc", "$push", "$pull"}[r.IntN(5)], path: p}
			switch op.op {
			case "$inc":
				op.value = []any{int32(1), int64(2), 0.5, int32(0)}[r.IntN(4)]
			case "$unset":
				op.value = ""
			default:
				op.value = genScalar(r)
			}
			ops = append(ops, op)
		}
		upd := bson.D{}
		for _, op := range ops {
			k := slices.IndexFunc(upd, func(e bson.E) bool { return e.Key == op.op })
			if k < 0 {
				upd = append(upd, bson.E{Key: op.op, Value: bson.D{}})
				k = len(upd) - 1
			}
			upd[k].Value = append(upd[k].Value.(bson.D), bson.E{Key: op.path, Value: op.value})
		}
		u, err := ParseUpdate(upd, nil)
		if err != nil {
			t.Fatalf("seed %d: ParseUpdate(%v): %v", seed, upd, err)
		}
		want, wantErr := modelApply(d, ops)
		got, modified, err := u.Apply(d, false, time.Time{})
		switch {
		case wantErr != nil && err == nil:
			t.Errorf("seed %d: %v on %v: no error, model fails", seed, upd, d)
		case wantErr == nil && err != nil:
			t.Errorf("seed %d: %v on %v: error %v, model gives %v", seed, upd, d, err, want)
		case err == nil && (!modelSame(got, want) || modified != !modelSame(want, d)):
			t.Errorf("seed %d: %v on %v:\n got %v (modified %v)\nwant %v", seed, upd, d, got, modified, want)
		default:
			continue
		}
		failures++
		if failures > 10 {
			t.FailNow()
		}
	}
}
