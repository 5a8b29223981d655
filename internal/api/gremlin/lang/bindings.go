package lang

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"sort"
	"time"
)

// A BindingError says that a request binding's value has no place in the
// tree: a type the language has no literal for, or nesting past the limit.
type BindingError struct {
	Name string // the binding's name
	Err  error
}

func (e *BindingError) Error() string {
	return fmt.Sprintf("cannot use the binding %s: %v", e.Name, e.Err)
}

func (e *BindingError) Unwrap() error { return e.Err }

// bindingValue converts a binding's Go value to a tree Value: the Value
// types of ast.go pass unchanged (their elements converted); Go integers
// become int32 when they fit, else int64 (uint64 past int64 becomes
// *big.Int); json.Number follows the literal rules (int32, int64, *big.Int
// or float64); slices and arrays become []Value; maps with string keys
// become *Map with the keys sorted (Go maps have no order). Anything else
// (a traversal, a strategy, a function, a struct) is an error. maxDepth
// bounds the nesting of collections.
func bindingValue(name string, v any, maxDepth int) (Value, error) {
	out, err := convertBinding(v, maxDepth)
	if err != nil {
		return nil, &BindingError{Name: name, Err: err}
	}
	return out, nil
}

func convertBinding(v any, depth int) (Value, error) {
	if depth <= 0 {
		return nil, fmt.Errorf("the value nests too deeply")
	}
	switch x := v.(type) {
	case nil, bool, int32, int64, float32, float64, string, UUID:
		return x, nil
	case time.Time:
		return x.UTC(), nil
	case *big.Int:
		if x == nil {
			return nil, nil
		}
		return new(big.Int).Set(x), nil
	case *big.Float:
		if x == nil {
			return nil, nil
		}
		if !bigDecimalInRange(x) {
			return nil, fmt.Errorf("the BigDecimal %.6g is out of range", x)
		}
		return new(big.Float).Copy(x), nil
	case int:
		return fitInt(int64(x)), nil
	case int8:
		return int32(x), nil
	case int16:
		return int32(x), nil
	case uint8:
		return int32(x), nil
	case uint16:
		return int32(x), nil
	case uint32:
		return fitInt(int64(x)), nil
	case uint:
		return fitUint(uint64(x)), nil
	case uint64:
		return fitUint(x), nil
	case json.Number:
		return jsonNumber(x)
	case Token:
		return x, nil
	case P:
		args, err := convertList(x.Args, depth-1)
		if err != nil {
			return nil, err
		}
		return P{Op: x.Op, Args: args}, nil
	case Set:
		var sb setBuilder
		for _, e := range x {
			c, err := convertBinding(e, depth-1)
			if err != nil {
				return nil, err
			}
			sb.add(c)
		}
		return sb.set(), nil
	case *Map:
		if x == nil {
			return nil, nil
		}
		m := &Map{}
		for _, e := range x.Entries {
			k, err := convertBinding(e.Key, depth-1)
			if err != nil {
				return nil, err
			}
			val, err := convertBinding(e.Value, depth-1)
			if err != nil {
				return nil, err
			}
			m.Entries = append(m.Entries, MapEntry{Key: k, Value: val})
		}
		return m, nil
	case CardinalityValue:
		c, err := convertBinding(x.Value, depth-1)
		if err != nil {
			return nil, err
		}
		return CardinalityValue{Cardinality: x.Cardinality, Value: c}, nil
	case *Traversal, Strategy:
		return nil, fmt.Errorf("a binding cannot hold a %T", v)
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		if rv.Kind() == reflect.Slice && rv.IsNil() {
			return nil, nil
		}
		out := make([]Value, rv.Len())
		for i := range out {
			c, err := convertBinding(rv.Index(i).Interface(), depth-1)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			return nil, fmt.Errorf("a map binding needs string keys, not %s", rv.Type().Key())
		}
		if rv.IsNil() {
			return nil, nil
		}
		keys := rv.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
		m := &Map{}
		for _, k := range keys {
			c, err := convertBinding(rv.MapIndex(k).Interface(), depth-1)
			if err != nil {
				return nil, err
			}
			m.Entries = append(m.Entries, MapEntry{Key: k.String(), Value: c})
		}
		return m, nil
	}
	return nil, fmt.Errorf("values of type %T have no Gremlin literal", v)
}

func convertList(in []Value, depth int) ([]Value, error) {
	if in == nil {
		return nil, nil
	}
	out := make([]Value, len(in))
	for i, e := range in {
		c, err := convertBinding(e, depth)
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}

func fitInt(n int64) Value {
	if n >= math.MinInt32 && n <= math.MaxInt32 {
		return int32(n)
	}
	return n
}

func fitUint(n uint64) Value {
	if n <= math.MaxInt64 {
		return fitInt(int64(n))
	}
	return new(big.Int).SetUint64(n)
}

func jsonNumber(n json.Number) (Value, error) {
	if i, ok := new(big.Int).SetString(string(n), 10); ok {
		return intValue(i, 0)
	}
	f, err := n.Float64()
	if err != nil {
		return nil, fmt.Errorf("cannot read the number %s: %w", n, err)
	}
	return f, nil
}
