package eval

// Array functions (array-concat.md ... array-slice.md, setintersect.md,
// setunion.md, choose.md, objecttoarray.md). Elements are compared with
// Equal: deep, numbers by value, objects whatever their member order.
var arrayFuncs = []*builtin{
	{name: "ARRAY_CONCAT", min: 2, max: -1, fn: fnArrayConcat},
	{name: "ARRAY_CONTAINS", min: 2, max: 3, fn: fnArrayContains},
	{name: "ARRAY_CONTAINS_ANY", min: 2, max: -1, keepUndefined: true, fn: func(c *callCtx, a []Value) (Value, error) {
		return containsSome(a, or, BoolValue(false))
	}},
	{name: "ARRAY_CONTAINS_ALL", min: 2, max: -1, keepUndefined: true, fn: func(c *callCtx, a []Value) (Value, error) {
		return containsSome(a, and, BoolValue(true))
	}},
	{name: "ARRAY_LENGTH", min: 1, max: 1, fn: func(c *callCtx, a []Value) (Value, error) {
		if a[0].kind != Array {
			return undef, nil
		}
		return IntValue(int64(len(a[0].a))), nil
	}},
	{name: "ARRAY_SLICE", min: 2, max: 3, fn: fnArraySlice},
	{name: "SetIntersect", min: 2, max: 2, fn: fnSetIntersect},
	{name: "SetUnion", min: 2, max: 2, fn: fnSetUnion},
	{name: "CHOOSE", min: 2, max: -1, keepUndefined: true, fn: fnChoose},
	{name: "ObjectToArray", min: 1, max: 3, fn: fnObjectToArray},
}

func fnArrayConcat(c *callCtx, a []Value) (Value, error) {
	n := 0
	for _, v := range a {
		if v.kind != Array {
			return undef, nil
		}
		n += len(v.a)
	}
	if err := c.fits(int64(n) * valueSize); err != nil {
		return undef, err
	}
	out := make([]Value, 0, n)
	for _, v := range a {
		out = append(out, v.a...)
	}
	return Value{kind: Array, a: out}, nil
}

// fnArrayContains is ARRAY_CONTAINS(array, value [, partial]). With partial
// true an object value matches an element object that has all its
// properties with equal values (array-contains.md's
// containsPartialMatchObject); other values must be equal.
func fnArrayContains(c *callCtx, a []Value) (Value, error) {
	arr := a[0]
	if arr.kind != Array {
		return undef, nil
	}
	partial := false
	if len(a) == 3 {
		var ok bool
		if partial, ok = boolArg(a[2]); !ok {
			return undef, nil
		}
	}
	return BoolValue(contains(arr, a[1], partial)), nil
}

func contains(arr, x Value, partial bool) bool {
	for _, e := range arr.a {
		if Equal(e, x) || partial && x.kind == Object && e.kind == Object && subsetOf(x, e) {
			return true
		}
	}
	return false
}

// subsetOf reports whether every property of object x is in object y with
// an equal value.
func subsetOf(x, y Value) bool {
	for i := 0; i < len(x.a); i += 2 {
		v, ok := y.Get(x.a[i].s)
		if !ok || !Equal(v, x.a[i+1]) {
			return false
		}
	}
	return true
}

// containsSome is ARRAY_CONTAINS_ANY (combine = or) and ARRAY_CONTAINS_ALL
// (combine = and) with three-valued logic: an undefined value to look for
// counts as undefined, so ANY([1, 2], 1, undefined) is true,
// ALL([1, 2], 1, undefined) undefined and ALL([1, 2], 5, undefined) false,
// as the examples of array-contains-any.md and array-contains-all.md show.
// An empty array contains nothing, for ALL too.
func containsSome(a []Value, combine func(x, y Value) Value, start Value) (Value, error) {
	arr := a[0]
	if arr.kind != Array {
		return undef, nil
	}
	if len(arr.a) == 0 {
		return BoolValue(false), nil
	}
	r := start
	for _, x := range a[1:] {
		vote := undef
		if x.kind != Undefined {
			vote = BoolValue(contains(arr, x, false))
		}
		r = combine(r, vote)
	}
	return r, nil
}

// fnArraySlice is ARRAY_SLICE(array, start [, length]): a negative start
// counts from the end; start and length are clamped to the array, and a
// negative length gives an empty array.
func fnArraySlice(c *callCtx, a []Value) (Value, error) {
	arr := a[0]
	start, ok := truncArg(a[1])
	if arr.kind != Array || !ok {
		return undef, nil
	}
	n := len(arr.a)
	if start < 0 {
		start += n
		if start < 0 {
			start = 0
		}
	}
	if start > n {
		start = n
	}
	end := n
	if len(a) == 3 {
		length, ok := truncArg(a[2])
		if !ok {
			return undef, nil
		}
		if length < 0 {
			length = 0
		}
		if length < end-start {
			end = start + length
		}
	}
	return Value{kind: Array, a: arr.a[start:end:end]}, nil
}

// fnSetIntersect is SetIntersect(a, b): the distinct elements of b that are
// also in a, in b's order (setintersect.md: SetIntersect([1, 2, "A", "B"],
// ["A", 1]) is ["A", 1]).
func fnSetIntersect(c *callCtx, a []Value) (Value, error) {
	x, y := a[0], a[1]
	if x.kind != Array || y.kind != Array {
		return undef, nil
	}
	out := []Value{}
	for _, e := range y.a {
		if contains(x, e, false) && !containsSlice(out, e) {
			out = append(out, e)
		}
	}
	return Value{kind: Array, a: out}, nil
}

// fnSetUnion is SetUnion(a, b): the distinct elements of a then b, in
// order of first appearance.
func fnSetUnion(c *callCtx, a []Value) (Value, error) {
	x, y := a[0], a[1]
	if x.kind != Array || y.kind != Array {
		return undef, nil
	}
	out := []Value{}
	for _, arr := range [2]Value{x, y} {
		for _, e := range arr.a {
			if !containsSlice(out, e) {
				out = append(out, e)
			}
		}
	}
	return Value{kind: Array, a: out}, nil
}

func containsSlice(s []Value, x Value) bool {
	for _, e := range s {
		if Equal(e, x) {
			return true
		}
	}
	return false
}

// fnChoose is CHOOSE(index, v1, v2, ...): the 1-based index-th value, or
// undefined when index is not an integer in range (choose.md).
func fnChoose(c *callCtx, a []Value) (Value, error) {
	i, ok := a[0].AsInt()
	if !ok || i < 1 || i > int64(len(a)-1) {
		return undef, nil
	}
	return a[i], nil
}

// fnObjectToArray is ObjectToArray(object [, keyName [, valueName]]): one
// {keyName: name, valueName: value} object per property, in order; the
// names default to "k" and "v" (objecttoarray.md).
func fnObjectToArray(c *callCtx, a []Value) (Value, error) {
	obj := a[0]
	if obj.kind != Object {
		return undef, nil
	}
	kName, vName := "k", "v"
	if len(a) >= 2 {
		var ok bool
		if kName, ok = strArg(a[1]); !ok {
			return undef, nil
		}
	}
	if len(a) == 3 {
		var ok bool
		if vName, ok = strArg(a[2]); !ok {
			return undef, nil
		}
	}
	out := make([]Value, 0, len(obj.a)/2)
	for i := 0; i < len(obj.a); i += 2 {
		m := appendMember(nil, kName, obj.a[i])
		m = appendMember(m, vName, obj.a[i+1])
		out = append(out, Value{kind: Object, a: m})
	}
	return Value{kind: Array, a: out}, nil
}
