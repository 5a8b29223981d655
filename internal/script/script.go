package script

import (
	"errors"
	"fmt"
	"regexp"
	"runtime/metrics"
	"strings"
	"time"

	"github.com/dop251/goja"
)

// Errors of a run. Each returned error wraps one of them.
var (
	// ErrCompile is a script body that is not a JavaScript function.
	ErrCompile = errors.New("the script does not compile")
	// ErrThrown is a script that threw (or whose failed operation had no
	// callback): the message is the exception's.
	ErrThrown = errors.New("the script failed")
	// ErrTimeout is a script interrupted at its timeout.
	ErrTimeout = errors.New("the script ran past its time limit")
	// ErrTooLarge is a script whose response passed its size limit, or
	// whose memory passed its budget.
	ErrTooLarge = errors.New("the script went over a size or memory limit")
	// ErrNotAccepted is what a Collection returns for an operation past
	// its budget: the operation returns false to the script and its
	// callback is not called.
	ErrNotAccepted = errors.New("the operation was not accepted")
)

// Limits bound one run. A zero field takes its default.
type Limits struct {
	// Timeout is the wall time after which the script is interrupted.
	// Default 5 s, as Cosmos DB's "maximum execution time for a single
	// operation (like a stored procedure execution ...)"
	// (https://learn.microsoft.com/azure/cosmos-db/concepts-limits).
	Timeout time.Duration
	// AcceptFor is how long operations are accepted; after it they return
	// false so that the script can end with a continuation. Default four
	// fifths of Timeout.
	AcceptFor time.Duration
	// MaxResponseBytes caps the response body. Default 4 MiB.
	MaxResponseBytes int
	// MaxCallDepth caps the JavaScript call stack. Default 512.
	MaxCallDepth int
	// MaxHeapGrowth bounds memory: a script running while the process's
	// heap grows by more than this is stopped (ErrTooLarge). goja has no
	// allocation hook, so the heap is sampled (every 5 ms, from the
	// script's 5th millisecond on) and the bound is the process's growth,
	// not the script's own: a coarse guard against a runaway allocation,
	// never a precise account. It is also the budget of the builtins that
	// allocate a size they are given (see caps.go): ArrayBuffers and typed
	// arrays are charged to it before they are allocated. Default 512 MiB.
	MaxHeapGrowth uint64
}

// Defaults of Limits.
const (
	DefaultTimeout          = 5 * time.Second
	DefaultMaxResponseBytes = 4 << 20
	DefaultMaxCallDepth     = 512
	DefaultMaxHeapGrowth    = 512 << 20
)

func (l Limits) withDefaults() Limits {
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	if l.AcceptFor <= 0 || l.AcceptFor > l.Timeout {
		l.AcceptFor = l.Timeout * 4 / 5
	}
	if l.MaxResponseBytes <= 0 {
		l.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if l.MaxCallDepth <= 0 {
		l.MaxCallDepth = DefaultMaxCallDepth
	}
	if l.MaxHeapGrowth == 0 {
		l.MaxHeapGrowth = DefaultMaxHeapGrowth
	}
	return l
}

// Env is the outside world a run sees.
type Env struct {
	// Now is the clock of Date and of the time limits. Default time.Now.
	Now func() time.Time
	// Rand is Math.random's source. Default: goja's.
	Rand func() float64
	// NewID returns an id for a document created without one.
	NewID func() string
	// Status returns the Cosmos status code of a Collection error, which
	// the script sees as the error's number.
	Status func(error) int
	Limits Limits
}

// Program is a compiled script: a function expression. It is immutable
// and safe for concurrent use.
type Program struct {
	name string
	prog *goja.Program
	// queryAPI is set when the body may use the query API of __ (its
	// method names appear in it): only then is the prelude installed.
	queryAPI bool
}

// Compile compiles a script body, which must be a JavaScript function
// (as Cosmos stores procedures, triggers and user-defined functions).
func Compile(name, body string) (*Program, error) {
	p, err := goja.Compile(name, "("+body+"\n)", false)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCompile, name, err)
	}
	return &Program{name: name, prog: p, queryAPI: queryAPIWords.MatchString(body)}, nil
}

var queryAPIWords = regexp.MustCompile(`\b(filter|map|pluck|flatten|sortBy|sortByDescending|chain)\b`)

// Name is the script's name (its id).
func (p *Program) Name() string { return p.name }

// newRuntime returns a runtime with env's sources, the caps of its
// builtins, and the program's function.
func (p *Program) newRuntime(env *Env) (*goja.Runtime, goja.Callable, *caps, error) {
	lim := env.Limits.withDefaults()
	rt := goja.New()
	if env.Now != nil {
		rt.SetTimeSource(env.Now)
	}
	if env.Rand != nil {
		rt.SetRandSource(env.Rand)
	}
	rt.SetMaxCallStackSize(lim.MaxCallDepth)
	c := newCaps(rt, p.name, lim.MaxHeapGrowth)
	v, err := rt.RunProgram(p.prog)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%w: %s: %v", ErrCompile, p.name, err)
	}
	fn, ok := goja.AssertFunction(v)
	if !ok {
		return nil, nil, nil, fmt.Errorf("%w: %s: the body is not a function", ErrCompile, p.name)
	}
	return rt, fn, c, nil
}

// json holds a runtime's JSON.parse and JSON.stringify.
type jsonFuncs struct {
	rt        *goja.Runtime
	parse     goja.Callable
	stringify goja.Callable
}

func newJSON(rt *goja.Runtime) jsonFuncs {
	j := rt.Get("JSON").ToObject(rt)
	parse, _ := goja.AssertFunction(j.Get("parse"))
	stringify, _ := goja.AssertFunction(j.Get("stringify"))
	return jsonFuncs{rt: rt, parse: parse, stringify: stringify}
}

// fromJSON turns JSON text into a JavaScript value (undefined for nil).
func (j jsonFuncs) fromJSON(b []byte) goja.Value {
	if b == nil {
		return goja.Undefined()
	}
	v, err := j.parse(goja.Undefined(), j.rt.ToValue(string(b)))
	if err != nil {
		panic(err) // an interrupt, or JSON the caller vouched for: rethrown into the script
	}
	return v
}

// toJSON turns a JavaScript value into JSON text; nil for undefined (and
// functions), as JSON.stringify does.
func (j jsonFuncs) toJSON(v goja.Value) ([]byte, error) {
	if v == nil || goja.IsUndefined(v) {
		return nil, nil
	}
	s, err := j.stringify(goja.Undefined(), v)
	if err != nil {
		return nil, err
	}
	if goja.IsUndefined(s) {
		return nil, nil
	}
	return []byte(s.String()), nil
}

// heapBytes is the process's heap in use by objects.
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// guard interrupts c's run when it runs past lim.Timeout or the heap grows
// by more than lim.MaxHeapGrowth; the returned function stops it.
func guard(c *caps, lim Limits) (stop func()) {
	name := c.name
	done := make(chan struct{})
	go func() {
		timeout := time.NewTimer(lim.Timeout)
		defer timeout.Stop()
		// Most runs end within milliseconds: the heap is not sampled for them.
		first := time.NewTimer(5 * time.Millisecond)
		defer first.Stop()
		select {
		case <-done:
			return
		case <-timeout.C:
			c.interrupt(fmt.Errorf("%w: %s was stopped after %v", ErrTimeout, name, lim.Timeout))
			return
		case <-first.C:
		}
		base := heapBytes()
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-timeout.C:
				c.interrupt(fmt.Errorf("%w: %s was stopped after %v", ErrTimeout, name, lim.Timeout))
				return
			case <-tick.C:
				if h := heapBytes(); h > base+lim.MaxHeapGrowth {
					c.interrupt(fmt.Errorf("%w: %s was stopped: memory grew by %d MiB while it ran; the limit is %d MiB", ErrTooLarge, name, (h-base)>>20, lim.MaxHeapGrowth>>20))
					return
				}
			}
		}
	}()
	return func() { close(done) }
}

// runError turns an error of goja into the run's error.
func runError(name string, err error, timeout time.Duration) error {
	if errors.Is(err, ErrTimeout) || errors.Is(err, ErrTooLarge) {
		return err
	}
	var ie *goja.InterruptedError
	if errors.As(err, &ie) {
		if e, ok := ie.Value().(error); ok {
			return e
		}
		return fmt.Errorf("%w: %s was interrupted after %v", ErrTimeout, name, timeout)
	}
	var so *goja.StackOverflowError
	if errors.As(err, &so) {
		return fmt.Errorf("%w: %s: the call stack is deeper than the limit", ErrThrown, name)
	}
	var ex *goja.Exception
	if errors.As(err, &ex) {
		return fmt.Errorf("%w: %s: Exception = %s", ErrThrown, name, exceptionText(ex))
	}
	return fmt.Errorf("%w: %s: %v", ErrThrown, name, err)
}

// exceptionText renders a thrown value: an Error's "Name: message", any
// other value as its string.
func exceptionText(ex *goja.Exception) string {
	v := ex.Value()
	if o, ok := v.(*goja.Object); ok {
		if m := o.Get("message"); m != nil && !goja.IsUndefined(m) {
			name := "Error"
			if n := o.Get("name"); n != nil && !goja.IsUndefined(n) {
				name = n.String()
			}
			return name + ": " + m.String()
		}
	}
	if v == nil {
		return strings.TrimSpace(ex.Error())
	}
	return v.String()
}

// Func is a user-defined function ready to call: a program's function in
// its own runtime. A Func is not safe for concurrent use; callers keep a
// pool. After a call that failed, discard it.
type Func struct {
	name    string
	rt      *goja.Runtime
	fn      goja.Callable
	j       jsonFuncs
	caps    *caps
	timeout time.Duration
}

// NewFunc prepares p, a function, to be called with Call. Env's Timeout
// bounds each call.
func (p *Program) NewFunc(env *Env) (*Func, error) {
	rt, fn, c, err := p.newRuntime(env)
	if err != nil {
		return nil, err
	}
	return &Func{name: p.name, rt: rt, fn: fn, j: newJSON(rt), caps: c, timeout: env.Limits.withDefaults().Timeout}, nil
}

// Call calls the function with JSON arguments and returns its result as
// JSON, nil for undefined.
func (f *Func) Call(args [][]byte) (out []byte, err error) {
	f.caps.reset()
	timer := time.AfterFunc(f.timeout, func() {
		f.caps.interrupt(fmt.Errorf("%w: %s was stopped after %v", ErrTimeout, f.name, f.timeout))
	})
	defer func() {
		timer.Stop()
		f.caps.reset()
		if x := recover(); x != nil {
			e, ok := x.(error)
			if !ok {
				panic(x)
			}
			out, err = nil, runError(f.name, e, f.timeout)
		}
	}()
	vals := make([]goja.Value, len(args))
	for i, a := range args {
		vals[i] = f.j.fromJSON(a)
	}
	v, err := f.fn(goja.Undefined(), vals...)
	if err != nil {
		return nil, runError(f.name, err, f.timeout)
	}
	if out, err = f.j.toJSON(v); err != nil {
		return nil, runError(f.name, err, f.timeout)
	}
	return out, nil
}
