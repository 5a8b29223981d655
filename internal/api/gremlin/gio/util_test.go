package gio_test

import (
	"fmt"
	"maps"
	"math/big"
	"reflect"
	"slices"
	"time"

	"github.com/parsecdb/parsec/internal/api/gremlin/lang"
)

// equalValues compares decoded values; times compare by instant.
func equalValues(a, b any) bool {
	switch x := a.(type) {
	case time.Time:
		y, ok := b.(time.Time)
		return ok && x.Equal(y)
	case *big.Int:
		y, ok := b.(*big.Int)
		return ok && x.Cmp(y) == 0
	case *big.Float:
		y, ok := b.(*big.Float)
		return ok && x.Cmp(y) == 0
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalValues(x[i], y[i]) {
				return false
			}
		}
		return true
	case lang.Set:
		y, ok := b.(lang.Set)
		return ok && equalValues([]any(x), []any(y))
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !equalValues(v, w) {
				return false
			}
		}
		return true
	case *lang.Map:
		y, ok := b.(*lang.Map)
		if !ok || len(x.Entries) != len(y.Entries) {
			return false
		}
		for i := range x.Entries {
			if !equalValues(x.Entries[i].Key, y.Entries[i].Key) || !equalValues(x.Entries[i].Value, y.Entries[i].Value) {
				return false
			}
		}
		return true
	case *lang.Traversal:
		y, ok := b.(*lang.Traversal)
		if !ok || x.Anonymous != y.Anonymous {
			return false
		}
		return equalSteps(x.Source, y.Source) && equalSteps(x.Steps, y.Steps)
	case lang.P:
		y, ok := b.(lang.P)
		return ok && x.Op == y.Op && equalValues(x.Args, y.Args)
	}
	return reflect.DeepEqual(a, b) && reflect.TypeOf(a) == reflect.TypeOf(b)
}

func equalSteps(a, b []lang.Step) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || len(a[i].Args) != len(b[i].Args) {
			return false
		}
		for j := range a[i].Args {
			if !equalValues(a[i].Args[j], b[i].Args[j]) {
				return false
			}
		}
	}
	return true
}

// dump renders a value with its Go types, for failure messages.
func dump(v any) string {
	switch x := v.(type) {
	case *lang.Traversal:
		s := fmt.Sprintf("Traversal{anon:%v source:[", x.Anonymous)
		for _, st := range x.Source {
			s += dump(st) + " "
		}
		s += "] steps:["
		for _, st := range x.Steps {
			s += dump(st) + " "
		}
		return s + "]}"
	case lang.Step:
		s := x.Name + "("
		for i, a := range x.Args {
			if i > 0 {
				s += ", "
			}
			s += dump(a)
		}
		return s + ")"
	case lang.P:
		return fmt.Sprintf("P.%s%s", x.Op, dump([]any(x.Args)))
	case []any:
		s := "["
		for i, a := range x {
			if i > 0 {
				s += ", "
			}
			s += dump(a)
		}
		return s + "]"
	case *lang.Map:
		s := "Map{"
		for _, e := range x.Entries {
			s += dump(e.Key) + ":" + dump(e.Value) + " "
		}
		return s + "}"
	case map[string]any:
		s := "{"
		for _, k := range slices.Sorted(maps.Keys(x)) {
			s += k + ":" + dump(x[k]) + " "
		}
		return s + "}"
	case nil:
		return "nil"
	}
	return fmt.Sprintf("%T(%v)", v, v)
}
