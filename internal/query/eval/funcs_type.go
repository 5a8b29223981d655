package eval

import "math"

// Type checking functions (is-array.md ... is-string.md). They accept
// undefined and answer false for it, except IS_DEFINED.
var typeFuncs = []*builtin{
	isKind("IS_ARRAY", func(v Value) bool { return v.kind == Array }),
	isKind("IS_BOOL", func(v Value) bool { return v.kind == Bool }),
	isKind("IS_DEFINED", func(v Value) bool { return v.kind != Undefined }),
	isKind("IS_NULL", func(v Value) bool { return v.kind == Null }),
	isKind("IS_NUMBER", func(v Value) bool { return v.kind == Number }),
	isKind("IS_OBJECT", func(v Value) bool { return v.kind == Object }),
	isKind("IS_STRING", func(v Value) bool { return v.kind == String }),
	isKind("IS_PRIMITIVE", func(v Value) bool {
		return v.kind == Null || v.kind == Bool || v.kind == Number || v.kind == String
	}),
	isKind("IS_FINITE_NUMBER", func(v Value) bool {
		if v.kind != Number {
			return false
		}
		f := v.AsFloat()
		return !math.IsNaN(f) && !math.IsInf(f, 0)
	}),
	// IS_INTEGER: a number in the signed 64-bit range with no fraction
	// (is-integer.md: 9223372036854775807 is one, 18446744073709551615 is
	// not).
	isKind("IS_INTEGER", func(v Value) bool {
		_, ok := v.AsInt()
		return ok
	}),
}

func isKind(name string, test func(Value) bool) *builtin {
	return &builtin{name: name, min: 1, max: 1, keepUndefined: true, fn: func(c *callCtx, a []Value) (Value, error) {
		return BoolValue(test(a[0])), nil
	}}
}
