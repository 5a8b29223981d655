package script

import (
	"fmt"
	"math"
	"time"

	"github.com/dlclark/regexp2/v2"
	"github.com/dop251/goja"
)

// goja checks its interrupt flag between instructions, so a script's time
// limit cannot stop a builtin that runs long inside one call (a regular
// expression that backtracks, a join over an array of 2^32-1 holes) nor
// memory allocated in one call (new Uint8Array(2**30)). The caps below
// bound those calls: each builtin that allocates a size it is given is
// charged against the run's memory budget (Limits.MaxHeapGrowth) before it
// runs, the builtins that loop over an array refuse one longer than the
// budget could hold, and a regular expression match stops after
// MaxMatchTime.

// MaxMatchTime bounds one match of a regular expression that goja runs on
// regexp2 (patterns with backreferences or lookarounds, which can backtrack
// for ever); a match that reaches it stops the script with ErrTimeout.
// Patterns RE2 accepts run in linear time and are not bounded. regexp2's
// timeout is process-wide, so this is a constant, not a Limits field.
const MaxMatchTime = 250 * time.Millisecond

func init() {
	// A match that times out returns no match to goja, which hides the
	// error: exec and test are wrapped (regexpCap) so that a match that ran
	// this long stops the script instead.
	regexp2.DefaultMatchTimeout = MaxMatchTime
}

// bytesPerValue is the least a JavaScript value takes in an array (a goja
// Value is an interface): the budget over it is the longest array that the
// builtins loop over.
const bytesPerValue = 16

// caps is the allocation account of one run (or one call of a Func).
type caps struct {
	rt   *goja.Runtime
	name string
	// limit is the memory budget in bytes; used is what the sized
	// allocations of the run have taken of it (never given back: a
	// script that drops a buffer and allocates another is charged twice).
	limit, used uint64
}

// newCaps installs the caps in rt, charging c.
func newCaps(rt *goja.Runtime, name string, limit uint64) *caps {
	c := &caps{rt: rt, name: name, limit: limit}
	c.regexps()
	c.buffers()
	c.strings()
	c.arrays()
	return c
}

// reset starts a new account (a Func's next call).
func (c *caps) reset() { c.used = 0 }

// charge takes n bytes of the budget for what, or stops the script with
// ErrTooLarge. n is a float: sizes come from JavaScript numbers.
func (c *caps) charge(n float64, what string) {
	if !(n > 0) { // also NaN: goja throws its own RangeError
		return
	}
	if n > float64(c.limit-c.used) {
		panic(fmt.Errorf("%w: %s: %s of %.0f bytes would pass the script's memory limit of %d MiB", ErrTooLarge, c.name, what, n, c.limit>>20))
	}
	c.used += uint64(n)
}

// checkLength stops the script with ErrTooLarge when an array (or
// array-like) of length n is longer than the budget can hold.
func (c *caps) checkLength(n float64, what string) {
	if max := float64(c.limit / bytesPerValue); n > max {
		panic(fmt.Errorf("%w: %s: %s on %.0f elements; the limit is %.0f", ErrTooLarge, c.name, what, n, max))
	}
}

// lengthOf is v's length property as a number (0 for a primitive or none).
func lengthOf(v goja.Value) float64 {
	o, ok := v.(*goja.Object)
	if !ok {
		return 0
	}
	l := o.Get("length")
	if isMissing(l) {
		return 0
	}
	return l.ToFloat()
}

// wrap replaces the method name of o with one that calls before, then the
// original.
func (c *caps) wrap(o *goja.Object, name string, before func(goja.FunctionCall)) {
	orig, ok := goja.AssertFunction(o.Get(name))
	if !ok {
		panic("BUG: " + name + " is not a function")
	}
	c.set(o, name, func(call goja.FunctionCall) goja.Value {
		before(call)
		return c.callOrThrow(orig, call)
	})
}

// set defines a method as the builtins are: writable, configurable, not
// enumerable.
func (c *caps) set(o *goja.Object, name string, fn func(goja.FunctionCall) goja.Value) {
	if err := o.DefineDataProperty(name, c.rt.ToValue(fn), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
		panic("BUG: cannot wrap " + name + ": " + err.Error())
	}
}

// callOrThrow calls fn, rethrowing its exception into the script.
func (c *caps) callOrThrow(fn goja.Callable, call goja.FunctionCall) goja.Value {
	v, err := fn(call.This, call.Arguments...)
	if err != nil {
		panic(err)
	}
	return v
}

// regexps makes a match that reached MaxMatchTime stop the script. Every
// match goes through exec or test: once exec is replaced, goja's
// String.prototype.match, replace, split, search, matchAll and the
// RegExp.prototype symbol methods leave their fast paths and call it.
func (c *caps) regexps() {
	proto := c.rt.Get("RegExp").ToObject(c.rt).Get("prototype").ToObject(c.rt)
	for _, name := range []string{"exec", "test"} {
		orig, _ := goja.AssertFunction(proto.Get(name))
		c.set(proto, name, func(call goja.FunctionCall) goja.Value {
			start := time.Now()
			v := c.callOrThrow(orig, call)
			if time.Since(start) >= MaxMatchTime {
				panic(fmt.Errorf("%w: %s: a regular expression match ran %v, its limit", ErrTimeout, c.name, MaxMatchTime))
			}
			return v
		})
	}
}

// typedArrays are the constructors of typed arrays.
var typedArrays = []string{"Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array",
	"Int32Array", "Uint32Array", "Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array"}

// buffers charges ArrayBuffers and typed arrays. Each constructor is
// replaced by a proxy whose construct trap charges the size first; the
// prototypes' constructor points to the proxy, so that slice, map, filter,
// from and of, which construct through it (their species), are charged as
// well.
func (c *caps) buffers() {
	c.constructor("ArrayBuffer", func(args []goja.Value) {
		if len(args) > 0 {
			c.charge(args[0].ToFloat(), "an ArrayBuffer")
		}
	})
	for _, name := range typedArrays {
		per := c.rt.Get(name).ToObject(c.rt).Get("BYTES_PER_ELEMENT").ToFloat()
		c.constructor(name, func(args []goja.Value) {
			if len(args) == 0 {
				return
			}
			n := 0.0
			switch a := args[0].(type) {
			case *goja.Object:
				// A view of an ArrayBuffer allocates nothing; a typed
				// array, an array or an array-like is copied.
				if !isMissing(a.Get("length")) || isMissing(a.Get("byteLength")) {
					n = lengthOf(a)
				}
			default:
				n = a.ToFloat()
			}
			c.charge(n*per, "a "+name)
		})
	}
}

// constructor replaces the global constructor name by a proxy that calls
// check with the arguments of each construction.
func (c *caps) constructor(name string, check func(args []goja.Value)) {
	target := c.rt.Get(name).ToObject(c.rt)
	p := c.rt.ToValue(c.rt.NewProxy(target, &goja.ProxyTrapConfig{
		Construct: func(target *goja.Object, args []goja.Value, newTarget *goja.Object) *goja.Object {
			check(args)
			ctor, _ := goja.AssertConstructor(target)
			o, err := ctor(newTarget, args...)
			if err != nil {
				panic(err)
			}
			return o
		},
	})).ToObject(c.rt)
	proto := target.Get("prototype").ToObject(c.rt)
	// goja's proxies have no instanceof of their own: the target answers
	// for the proxy and for the classes that extend it.
	hasInstance := func(call goja.FunctionCall) goja.Value {
		this, ok := call.This.(*goja.Object)
		if ok && this.SameAs(p) {
			this = target
		}
		v, ok := call.Argument(0).(*goja.Object)
		if !ok || this == nil {
			return c.rt.ToValue(false)
		}
		want := this.Get("prototype")
		for o := v.Prototype(); o != nil; o = o.Prototype() {
			if o.SameAs(want) {
				return c.rt.ToValue(true)
			}
		}
		return c.rt.ToValue(false)
	}
	if err := target.DefineDataPropertySymbol(goja.SymHasInstance, c.rt.ToValue(hasInstance), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
		panic("BUG: cannot replace " + name + ": " + err.Error())
	}
	if err := proto.DefineDataProperty("constructor", p, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
		panic("BUG: cannot replace " + name + ": " + err.Error())
	}
	if err := c.rt.GlobalObject().DefineDataProperty(name, p, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
		panic("BUG: cannot replace " + name + ": " + err.Error())
	}
}

// strings charges the string builtins whose result's length is known
// before they run (a character takes at least a byte).
func (c *caps) strings() {
	proto := c.rt.Get("String").ToObject(c.rt).Get("prototype").ToObject(c.rt)
	c.wrap(proto, "repeat", func(call goja.FunctionCall) {
		n := call.Argument(0).ToFloat()
		if math.IsInf(n, 1) {
			return // a RangeError of goja
		}
		c.charge(float64(len(call.This.String()))*n, "String.prototype.repeat")
	})
	for _, name := range []string{"padStart", "padEnd"} {
		c.wrap(proto, name, func(call goja.FunctionCall) {
			c.charge(call.Argument(0).ToFloat(), "String.prototype."+name)
		})
	}
}

// arrays bounds the builtins that loop over an array's length (which an
// array of holes, or an array-like, can set to 2^32-1 at no cost), and
// those that copy an array-like argument into a list.
func (c *caps) arrays() {
	array := c.rt.Get("Array").ToObject(c.rt)
	proto := array.Get("prototype").ToObject(c.rt)
	for _, name := range []string{"concat", "copyWithin", "every", "fill", "filter", "find", "findIndex",
		"findLast", "findLastIndex", "flat", "flatMap", "forEach", "includes", "indexOf", "lastIndexOf",
		"map", "reduce", "reduceRight", "reverse", "shift", "slice", "some", "sort", "splice",
		"toLocaleString", "toReversed", "toSorted", "toSpliced", "unshift", "with"} {
		if isMissing(proto.Get(name)) {
			continue // not in this goja
		}
		what := "Array.prototype." + name
		c.wrap(proto, name, func(call goja.FunctionCall) {
			c.checkLength(lengthOf(call.This), what)
			if name == "concat" {
				for _, a := range call.Arguments {
					c.checkLength(lengthOf(a), what)
				}
			}
		})
	}
	// join (and toString, which calls it) builds a string of at least the
	// separators.
	c.wrap(proto, "join", func(call goja.FunctionCall) {
		n := lengthOf(call.This)
		c.checkLength(n, "Array.prototype.join")
		sep := 1.0
		if s := call.Argument(0); !goja.IsUndefined(s) {
			sep = float64(len(s.String()))
		}
		c.charge((n-1)*sep, "Array.prototype.join")
	})
	c.wrap(array, "from", func(call goja.FunctionCall) {
		c.checkLength(lengthOf(call.Argument(0)), "Array.from")
	})
	fproto := c.rt.Get("Function").ToObject(c.rt).Get("prototype").ToObject(c.rt)
	c.wrap(fproto, "apply", func(call goja.FunctionCall) {
		c.checkLength(lengthOf(call.Argument(1)), "Function.prototype.apply")
	})
	reflect := c.rt.Get("Reflect").ToObject(c.rt)
	c.wrap(reflect, "apply", func(call goja.FunctionCall) {
		c.checkLength(lengthOf(call.Argument(2)), "Reflect.apply")
	})
	c.wrap(reflect, "construct", func(call goja.FunctionCall) {
		c.checkLength(lengthOf(call.Argument(1)), "Reflect.construct")
	})
}
