package script

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dlclark/regexp2/v2"
	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"
)

// goja checks its interrupt flag between instructions, so a script's time
// limit cannot stop a builtin that runs long inside one call (a regular
// expression that backtracks, a join over an array of 2^32-1 holes, a
// JSON.stringify of a chain of 100000 arrays), nor its memory budget one
// that allocates a gigabyte at once (new Uint8Array(2**30)). The caps
// (listed in doc.go) bound those calls before they run.

// MaxMatchTime bounds one match of a regular expression that goja runs on
// regexp2 (patterns with backreferences or lookarounds, which can backtrack
// for ever); a match that reaches it stops the script with ErrTimeout.
// Patterns RE2 accepts run in linear time and are not bounded. regexp2's
// timeout is process-wide, so this is a constant, not a Limits field.
const MaxMatchTime = 250 * time.Millisecond

func init() {
	// A match that times out returns no match to goja, which hides the
	// error: exec and test are wrapped (caps.regexps) so that a match that ran
	// this long stops the script instead.
	regexp2.DefaultMatchTimeout = MaxMatchTime
}

// bytesPerValue is the least a JavaScript value takes in an array (a goja
// Value is an interface): the budget over it is the longest array that the
// builtins loop over.
const bytesPerValue = 16

// maxJSONDepth bounds the nesting of the values JSON.parse and
// JSON.stringify take: encoding/json's limit, far above Cosmos DB's 128
// levels for a document (jsondoc.MaxDepth), which a procedure's arguments
// and documents already respect.
const maxJSONDepth = 10000

// caps is the allocation account of one run (or one call of a Func).
type caps struct {
	rt   *goja.Runtime
	name string
	// limit is the memory budget in bytes; used is what the sized
	// allocations of the run have taken of it (never given back: a
	// script that drops a buffer and allocates another is charged twice).
	limit, used uint64
	// stopped is the error the run was interrupted with, for the builtins
	// that check it (JSON.stringify).
	stopped atomic.Pointer[error]
	// engines caches backtracks by flags and pattern.
	engines map[string]bool
}

// newCaps installs the caps in rt, with a memory budget of limit bytes.
func newCaps(rt *goja.Runtime, name string, limit uint64) *caps {
	c := &caps{rt: rt, name: name, limit: limit}
	c.regexps()
	c.buffers()
	c.strings()
	c.arrays()
	c.json()
	return c
}

// reset starts a new account (a Func's next call).
func (c *caps) reset() {
	c.used = 0
	c.stopped.Store(nil)
	c.rt.ClearInterrupt()
}

// interrupt stops the run with err.
func (c *caps) interrupt(err error) {
	c.stopped.Store(&err)
	c.rt.Interrupt(err)
}

// checkStopped rethrows the error the run was interrupted with, if any.
func (c *caps) checkStopped() {
	if err := c.stopped.Load(); err != nil {
		panic(*err)
	}
}

// charge takes n bytes of the budget for what, or stops the script with
// ErrTooLarge. n is a float: sizes come from JavaScript numbers.
func (c *caps) charge(n float64, what string) {
	if !(n > 0) { // also NaN: goja throws its own RangeError
		return
	}
	if n > float64(c.limit-c.used) {
		panic(c.tooLarge(n, what))
	}
	c.used += uint64(n)
}

// check stops the script with ErrTooLarge when what, a value built in one
// call and not kept in the account, would take more than the budget.
func (c *caps) check(n float64, what string) {
	if n > float64(c.limit) {
		panic(c.tooLarge(n, what))
	}
}

func (c *caps) tooLarge(n float64, what string) error {
	return fmt.Errorf("%w: %s: %s of %.0f bytes would pass the script's memory limit of %d MiB", ErrTooLarge, c.name, what, n, c.limit>>20)
}

// checkLength stops the script with ErrTooLarge when an array (or
// array-like) of length n is longer than the budget can hold.
func (c *caps) checkLength(n float64, what string) {
	if max := float64(c.limit / bytesPerValue); n > max {
		panic(fmt.Errorf("%w: %s: %s on %.0f elements; the limit is %.0f", ErrTooLarge, c.name, what, n, max))
	}
}

// lengthOf is v's length as a number: a string's, an object's length
// property, or 0.
func lengthOf(v goja.Value) float64 {
	if s, ok := v.(goja.String); ok {
		return float64(s.Length())
	}
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

// regexps makes a match that timed out stop the script. Every
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
			// A match that timed out is no match (null, false) that took
			// MaxMatchTime on regexp2; one that succeeded is kept however
			// long it took, and so is a long scan of a linear-time pattern.
			if !v.ToBoolean() && time.Since(start) >= MaxMatchTime && c.backtracks(call.This) {
				panic(fmt.Errorf("%w: %s: a regular expression match ran %v, its limit", ErrTimeout, c.name, MaxMatchTime))
			}
			return v
		})
	}
}

// backtracks reports whether goja runs the regular expression re on
// regexp2, whose matches can time out: as goja decides, a pattern that its
// parser cannot turn into RE2 syntax (backreferences, lookarounds), or
// that Go's regexp then refuses. The answer is kept per pattern and flags.
func (c *caps) backtracks(re goja.Value) bool {
	o, ok := re.(*goja.Object)
	if !ok {
		return true
	}
	source, flags := o.Get("source").String(), o.Get("flags").String()
	key := flags + "/" + source
	if b, ok := c.engines[key]; ok {
		return b
	}
	b := true
	if re2, err := parser.TransformRegExp(source, strings.Contains(flags, "s"), strings.Contains(flags, "u")); err == nil {
		prefix := ""
		for _, f := range "msi" {
			if strings.ContainsRune(flags, f) {
				prefix += string(f)
			}
		}
		if prefix != "" {
			re2 = "(?" + prefix + ":" + re2 + ")"
		}
		_, err = regexp.Compile(re2)
		b = err != nil
	}
	if c.engines == nil {
		c.engines = map[string]bool{}
	}
	c.engines[key] = b
	return b
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

// strings bounds the string builtins whose result's length is known
// before they run (a character takes at least a byte).
func (c *caps) strings() {
	proto := c.rt.Get("String").ToObject(c.rt).Get("prototype").ToObject(c.rt)
	c.wrap(proto, "repeat", func(call goja.FunctionCall) {
		n := call.Argument(0).ToFloat()
		if math.IsInf(n, 1) {
			return // a RangeError of goja
		}
		c.check(lengthOf(call.This.ToString())*n, "String.prototype.repeat")
	})
	// split makes up to a value per character.
	c.wrap(proto, "split", func(call goja.FunctionCall) {
		c.checkLength(lengthOf(call.This.ToString()), "String.prototype.split")
	})
	for _, name := range []string{"padStart", "padEnd"} {
		c.wrap(proto, name, func(call goja.FunctionCall) {
			c.check(call.Argument(0).ToFloat(), "String.prototype."+name)
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
			sep = lengthOf(s.ToString())
		}
		c.check((n-1)*sep, "Array.prototype.join")
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

// json bounds JSON.parse and JSON.stringify.
func (c *caps) json() {
	j := c.rt.Get("JSON").ToObject(c.rt)
	parse, _ := goja.AssertFunction(j.Get("parse"))
	c.set(j, "parse", func(call goja.FunctionCall) goja.Value {
		text := call.Argument(0).String()
		if jsonDepth(text) > maxJSONDepth {
			panic(fmt.Errorf("%w: %s: JSON.parse of a value nested deeper than %d levels", ErrTooLarge, c.name, maxJSONDepth))
		}
		args := append([]goja.Value{c.rt.ToValue(text)}, call.Arguments[min(1, len(call.Arguments)):]...)
		return c.callOrThrow(parse, goja.FunctionCall{This: call.This, Arguments: args})
	})
	stringify, _ := goja.AssertFunction(j.Get("stringify"))
	c.set(j, "stringify", func(call goja.FunctionCall) goja.Value {
		w := &jsonWalk{c: c, depth: map[*goja.Object]int{}}
		if r, ok := call.Argument(1).(*goja.Object); ok {
			if fn, ok := goja.AssertFunction(r); ok {
				w.user = fn
			} else if r.ClassName() == "Array" {
				w.allow = map[string]bool{}
				for _, k := range r.Keys() {
					w.allow[r.Get(k).String()] = true
				}
			}
		}
		return c.callOrThrow(stringify, goja.FunctionCall{This: call.This,
			Arguments: []goja.Value{call.Argument(0), c.rt.ToValue(w.replace), call.Argument(2)}})
	})
}

// jsonWalk is one JSON.stringify: its replacer, called for every value
// before it is written, bounds the depth and the length of the text and
// checks whether the run was stopped.
type jsonWalk struct {
	c *caps
	// user is the script's replacer function; allow its replacer array
	// (the keys of objects to write; they are written in the object's
	// order, not the array's).
	user  goja.Callable
	allow map[string]bool
	// depth is the level of each object written so far (the top value's
	// holder, which is not in it, is level 0).
	depth map[*goja.Object]int
	// n is at least the length of the text written so far.
	n float64
}

func (w *jsonWalk) replace(call goja.FunctionCall) goja.Value {
	w.c.checkStopped()
	holder, _ := call.This.(*goja.Object)
	key, v := call.Argument(0), call.Argument(1)
	d, inside := w.depth[holder]
	switch {
	case w.user != nil:
		var err error
		if v, err = w.user(holder, key, v); err != nil {
			panic(err)
		}
	case w.allow != nil && inside && holder.ClassName() != "Array" && !w.allow[key.String()]:
		return goja.Undefined()
	}
	w.n += lengthOf(key) + 1
	if goja.IsString(v) {
		w.n += lengthOf(v)
	}
	w.c.check(w.n, "JSON.stringify")
	if o, ok := v.(*goja.Object); ok {
		if d+1 > maxJSONDepth {
			panic(fmt.Errorf("%w: %s: JSON.stringify of a value nested deeper than %d levels", ErrTooLarge, w.c.name, maxJSONDepth))
		}
		w.depth[o] = d + 1
	}
	return v
}

// jsonDepth is the deepest nesting of arrays and objects in JSON text
// (whether or not the text is valid: the parser judges that).
func jsonDepth(s string) int {
	depth, deepest, inString := 0, 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '[' || c == '{':
			depth++
			deepest = max(deepest, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest
}
