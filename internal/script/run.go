package script

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dop251/goja"
)

// WriteKind is the kind of a document write a script makes.
type WriteKind uint8

// The writes a script can make.
const (
	Create WriteKind = iota + 1
	Upsert
	Replace
	Delete
)

// Write is one document write of a script.
type Write struct {
	Kind WriteKind
	// ID is the document's id: from the link (replace, delete) or the body.
	ID string
	// Body is the document (create, upsert, replace).
	Body []byte
	// IfMatch, when set, is the etag the current version must have.
	IfMatch string
}

// Collection is the logical partition a script runs against. Its methods
// return stored documents (with system properties) as JSON; an error they
// return is passed to the script (its number from Env.Status), except
// ErrNotAccepted, which makes the operation return false.
type Collection interface {
	// SelfLink is the collection's _self link (getSelfLink).
	SelfLink() string
	// Read reads one document by id.
	Read(id string) ([]byte, error)
	// ReadAll reads the documents of the logical partition, one page.
	ReadAll(p Page) (docs [][]byte, next string, err error)
	// Query runs a query (its text and the JSON array of its
	// {"name","value"} parameters, nil when none) over the logical
	// partition, one page.
	Query(text string, params []byte, p Page) (docs [][]byte, next string, err error)
	// Write makes one write and returns the written document (the deleted
	// one for a delete).
	Write(w Write) ([]byte, error)
}

// Page is the page of a feed a script asks for: options.pageSize (0 for
// no limit) and options.continuation (the previous page's, or empty).
// A page's continuation, empty on the last page, reaches the callback's
// third argument as options.continuation.
type Page struct {
	Size         int
	Continuation string
}

// Call is what a run is given.
type Call struct {
	// Args is the JSON array of a procedure's arguments (nil: none).
	Args []byte
	// Request is the request's document, which a pre-trigger reads and
	// may replace (getRequest().getBody/setBody).
	Request []byte
	// Response is the written document a post-trigger reads
	// (getResponse().getBody).
	Response []byte
	// Operation is the trigger's operation (getRequest().getOperationType).
	Operation string
}

// Result is what a run gives.
type Result struct {
	// Body is the response body as JSON (getResponse().setBody), nil when
	// the script set none.
	Body []byte
	// Request is a pre-trigger's replaced request document, nil when it
	// called no setBody.
	Request []byte
	// Log is what the script wrote with console.log, one line per call,
	// at most MaxLogBytes (the rest is dropped).
	Log string
}

// MaxLogBytes bounds what console.log keeps of one run.
const MaxLogBytes = 64 << 10

// run is one execution's state.
type run struct {
	rt     *goja.Runtime
	j      jsonFuncs
	env    *Env
	lim    Limits
	coll   Collection
	start  time.Time
	queue  []func()
	reqSet bool
	req    goja.Value
	body   goja.Value // response body
	// bodySet is set once the script set or appended a response body.
	bodySet bool
	log     strings.Builder
}

// Run runs a procedure or trigger program against coll: the function is
// called with call.Args spread as its arguments, then the callbacks of its
// operations run until none is left. A script that throws, or is
// interrupted, returns an error and a nil Result: whatever it wrote
// through coll is the caller's to discard.
func Run(p *Program, env *Env, coll Collection, call *Call) (*Result, error) {
	lim := env.Limits.withDefaults()
	now := env.Now
	if now == nil {
		now = time.Now
	}
	rt, fn, c, err := p.newRuntime(env)
	if err != nil {
		return nil, err
	}
	r := &run{rt: rt, j: newJSON(rt), env: env, lim: lim, coll: coll, start: now(), body: goja.Undefined()}
	r.req = r.j.fromJSON(call.Request)
	if call.Response != nil {
		r.body = r.j.fromJSON(call.Response)
	}
	r.install(call, p.queryAPI)
	defer guard(c, lim)()
	var args []goja.Value
	if call.Args != nil {
		a := r.j.fromJSON(call.Args)
		o, ok := a.(*goja.Object)
		if !ok || o.ClassName() != "Array" {
			return nil, fmt.Errorf("%w: %s: the parameters must be a JSON array", ErrThrown, p.name)
		}
		for _, k := range o.Keys() {
			args = append(args, o.Get(k))
		}
	}
	if err := r.call(func() error { _, err := fn(goja.Undefined(), args...); return err }); err != nil {
		return nil, runError(p.name, err, lim.Timeout)
	}
	for len(r.queue) > 0 {
		next := r.queue[0]
		r.queue = r.queue[1:]
		if err := r.call(func() error { next(); return nil }); err != nil {
			return nil, runError(p.name, err, lim.Timeout)
		}
	}
	res := &Result{Log: r.log.String()}
	if len(res.Log) > MaxLogBytes {
		res.Log = res.Log[:MaxLogBytes]
	}
	// The caps of JSON.stringify stop it by panicking, as inside the script.
	if err = r.call(func() (err error) { res.Body, err = r.j.toJSON(r.body); return err }); err != nil {
		return nil, runError(p.name, err, lim.Timeout)
	}
	if !r.bodySet && call.Response == nil {
		res.Body = nil
	}
	if len(res.Body) > lim.MaxResponseBytes {
		return nil, fmt.Errorf("%w: %s's response is %d bytes; the limit is %d bytes", ErrTooLarge, p.name, len(res.Body), lim.MaxResponseBytes)
	}
	if r.reqSet {
		if err = r.call(func() (err error) { res.Request, err = r.j.toJSON(r.req); return err }); err != nil {
			return nil, runError(p.name, err, lim.Timeout)
		}
	}
	return res, nil
}

// call runs fn, turning a panic of a Go binding that carries a JavaScript
// value (an exception thrown from Go) into its error.
func (r *run) call(fn func() error) (err error) {
	defer func() {
		if x := recover(); x != nil {
			if e, ok := x.(error); ok {
				err = e
				return
			}
			panic(x)
		}
	}()
	return fn()
}

// install defines getContext and __ in the runtime.
func (r *run) install(call *Call, queryAPI bool) {
	rt := r.rt
	coll := r.collection()
	request := rt.NewObject()
	_ = request.Set("getBody", func() goja.Value { return r.req })
	_ = request.Set("setBody", func(v goja.Value) { r.req, r.reqSet = v, true })
	_ = request.Set("getOperationType", func() string { return call.Operation })
	_ = request.Set("getValue", func() goja.Value { return r.req })
	response := rt.NewObject()
	_ = response.Set("getBody", func() goja.Value { return r.body })
	_ = response.Set("setBody", func(v goja.Value) {
		r.body, r.bodySet = v, true
		r.checkBody()
	})
	appendBody := func(v goja.Value) {
		s := ""
		if !goja.IsUndefined(r.body) && !goja.IsNull(r.body) {
			s = r.body.String()
		}
		r.body, r.bodySet = rt.ToValue(s+v.String()), true
		r.checkBody()
	}
	_ = response.Set("appendBody", appendBody)
	// appendValue(key, value) is the older form: the response has one
	// value, its "Body".
	_ = response.Set("appendValue", func(key string, v goja.Value) {
		if !strings.EqualFold(key, "Body") {
			panic(rt.NewTypeError("getResponse().appendValue: the response has only the value \"Body\", not %q", key))
		}
		appendBody(v)
	})
	_ = response.Set("getMaxResponseBodySize", func() int { return r.lim.MaxResponseBytes })
	ctx := rt.NewObject()
	_ = ctx.Set("getCollection", func() *goja.Object { return coll })
	_ = ctx.Set("getRequest", func() *goja.Object { return request })
	_ = ctx.Set("getResponse", func() *goja.Object { return response })
	_ = rt.Set("getContext", func() *goja.Object { return ctx })
	_ = rt.Set("__", coll)
	if queryAPI {
		installPrelude(rt, coll)
	}
	console := rt.NewObject()
	_ = console.Set("log", func(c goja.FunctionCall) goja.Value {
		if r.log.Len() >= MaxLogBytes {
			return goja.Undefined()
		}
		r.log.WriteString(logLine(c.Arguments))
		r.log.WriteByte('\n')
		return goja.Undefined()
	})
	_ = rt.Set("console", console)
}

// logLine formats console.log's arguments as the service does: a first
// argument that is a string may hold %s (the next argument as a string)
// and %% (a percent sign); the arguments left over follow, separated by
// spaces.
func logLine(args []goja.Value) string {
	var b strings.Builder
	rest := args
	if len(args) > 0 {
		if f, ok := args[0].Export().(string); ok {
			rest = args[1:]
			for i := 0; i < len(f); i++ {
				if f[i] != '%' || i+1 == len(f) {
					b.WriteByte(f[i])
					continue
				}
				switch f[i+1] {
				case 's':
					if len(rest) == 0 {
						b.WriteString("%s")
					} else {
						b.WriteString(rest[0].String())
						rest = rest[1:]
					}
					i++
				case '%':
					b.WriteByte('%')
					i++
				default:
					b.WriteByte('%')
				}
			}
		}
	}
	for i, a := range rest {
		if i > 0 || b.Len() > 0 || len(rest) < len(args) {
			b.WriteByte(' ')
		}
		b.WriteString(a.String())
	}
	return b.String()
}

// checkBody throws when the response body has passed its limit.
func (r *run) checkBody() {
	if s, ok := r.body.Export().(string); ok && len(s) > r.lim.MaxResponseBytes {
		panic(fmt.Errorf("%w: the response body is %d bytes; the limit is %d bytes", ErrTooLarge, len(s), r.lim.MaxResponseBytes))
	}
}

// accepting reports whether operations are still accepted (time).
func (r *run) accepting() bool {
	now := time.Now
	if r.env.Now != nil {
		now = r.env.Now
	}
	return now().Sub(r.start) < r.lim.AcceptFor
}

// collection builds the getCollection() object.
func (r *run) collection() *goja.Object {
	rt := r.rt
	o := rt.NewObject()
	self := r.coll.SelfLink()
	_ = o.Set("getSelfLink", func() string { return self })
	_ = o.Set("getAltLink", func() string { return self })
	write := func(kind WriteKind, withLink bool) func(goja.FunctionCall) goja.Value {
		return func(c goja.FunctionCall) goja.Value {
			link := c.Argument(0).String()
			i := 1
			var doc goja.Value = goja.Undefined()
			if kind != Delete {
				doc = c.Argument(1)
				i = 2
			}
			opts, cb := r.optsAndCallback(c, i)
			w := Write{Kind: kind}
			if withLink {
				id, err := docID(link)
				if err != nil {
					panic(rt.NewTypeError(err.Error()))
				}
				w.ID = id
			}
			if kind != Delete {
				o, ok := doc.(*goja.Object)
				if !ok || goja.IsNull(doc) {
					panic(rt.NewTypeError("the document must be an object"))
				}
				if kind == Create && isMissing(o.Get("id")) && !optBool(opts, "disableAutomaticIdGeneration") && r.env.NewID != nil {
					_ = o.Set("id", r.env.NewID())
				}
				b, err := r.j.toJSON(o)
				if err != nil {
					panic(err)
				}
				w.Body = b
				if !withLink {
					if v := o.Get("id"); !isMissing(v) {
						w.ID = v.String()
					}
				}
			}
			if opts != nil {
				if v := opts.Get("etag"); !isMissing(v) {
					w.IfMatch = v.String()
				}
			}
			return r.op(cb, func() (goja.Value, error) {
				out, err := r.coll.Write(w)
				if err != nil {
					return nil, err
				}
				return r.j.fromJSON(out), nil
			})
		}
	}
	_ = o.Set("createDocument", write(Create, false))
	_ = o.Set("upsertDocument", write(Upsert, false))
	_ = o.Set("replaceDocument", write(Replace, true))
	_ = o.Set("deleteDocument", write(Delete, true))
	_ = o.Set("readDocument", func(c goja.FunctionCall) goja.Value {
		id, err := docID(c.Argument(0).String())
		if err != nil {
			panic(rt.NewTypeError(err.Error()))
		}
		_, cb := r.optsAndCallback(c, 1)
		return r.op(cb, func() (goja.Value, error) {
			out, err := r.coll.Read(id)
			if err != nil {
				return nil, err
			}
			return r.j.fromJSON(out), nil
		})
	})
	_ = o.Set("readDocuments", func(c goja.FunctionCall) goja.Value {
		opts, cb := r.optsAndCallback(c, 1)
		page := pageOf(opts)
		return r.feedOp(cb, func() ([][]byte, string, error) { return r.coll.ReadAll(page) })
	})
	_ = o.Set("queryDocuments", func(c goja.FunctionCall) goja.Value {
		q := c.Argument(1)
		var text string
		var params []byte
		switch {
		case q.ExportType() != nil && q.ExportType().Kind().String() == "string":
			text = q.String()
		case !isMissing(q):
			qo := q.ToObject(rt)
			if v := qo.Get("query"); !isMissing(v) {
				text = v.String()
			}
			if v := qo.Get("parameters"); !isMissing(v) {
				b, err := r.j.toJSON(v)
				if err != nil {
					panic(err)
				}
				params = b
			}
		}
		if text == "" {
			panic(rt.NewTypeError("queryDocuments needs a query: a SQL string or {query, parameters}"))
		}
		opts, cb := r.optsAndCallback(c, 2)
		page := pageOf(opts)
		return r.feedOp(cb, func() ([][]byte, string, error) { return r.coll.Query(text, params, page) })
	})
	return o
}

// pageOf reads pageSize and continuation from a feed's options.
func pageOf(o *goja.Object) Page {
	var p Page
	if o == nil {
		return p
	}
	if v := o.Get("pageSize"); !isMissing(v) && v.ToInteger() > 0 {
		p.Size = int(v.ToInteger())
	}
	if v := o.Get("continuation"); !isMissing(v) {
		p.Continuation = v.String()
	}
	return p
}

// feedOp is op for a feed: the callback gets the page's documents and
// {continuation} when there are more.
func (r *run) feedOp(cb goja.Callable, do func() ([][]byte, string, error)) goja.Value {
	var next string
	return r.opWith(cb, func() (goja.Value, error) {
		docs, n, err := do()
		if err != nil {
			return nil, err
		}
		next = n
		return r.docsValue(docs), nil
	}, func() *goja.Object {
		o := r.rt.NewObject()
		if next != "" {
			_ = o.Set("continuation", next)
		}
		return o
	})
}

// docsValue turns documents into a JavaScript array.
func (r *run) docsValue(docs [][]byte) goja.Value {
	n := 2
	for _, d := range docs {
		n += len(d) + 1
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteByte('[')
	for i, d := range docs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(d)
	}
	b.WriteByte(']')
	return r.j.fromJSON([]byte(b.String()))
}

// optsAndCallback reads the optional options object and callback from
// argument i on: (options, callback), (callback) or (options).
func (r *run) optsAndCallback(c goja.FunctionCall, i int) (*goja.Object, goja.Callable) {
	a := c.Argument(i)
	if fn, ok := goja.AssertFunction(a); ok {
		return nil, fn
	}
	var opts *goja.Object
	if o, ok := a.(*goja.Object); ok {
		opts = o
	}
	fn, _ := goja.AssertFunction(c.Argument(i + 1))
	return opts, fn
}

// op runs one collection operation: false when it is not accepted;
// otherwise its callback is queued with (err, resource, options). A
// failed operation without a callback throws its error.
func (r *run) op(cb goja.Callable, do func() (goja.Value, error)) goja.Value {
	return r.opWith(cb, do, r.rt.NewObject)
}

// opWith is op with the callback's third argument from options.
func (r *run) opWith(cb goja.Callable, do func() (goja.Value, error), options func() *goja.Object) goja.Value {
	if !r.accepting() {
		return r.rt.ToValue(false)
	}
	v, err := do()
	if errors.Is(err, ErrNotAccepted) {
		return r.rt.ToValue(false)
	}
	if err != nil && cb == nil {
		panic(r.errorValue(err))
	}
	if cb != nil {
		var ev goja.Value = goja.Undefined()
		if err != nil {
			ev, v = r.errorValue(err), goja.Undefined()
		}
		opts := options()
		r.queue = append(r.queue, func() {
			if _, err := cb(goja.Undefined(), ev, v, opts); err != nil {
				panic(err)
			}
		})
	}
	return r.rt.ToValue(true)
}

// errorValue is the JavaScript Error passed for a failed operation, with
// Cosmos's number (the status code) and body.
func (r *run) errorValue(err error) *goja.Object {
	e := r.rt.NewGoError(err)
	_ = e.Set("message", err.Error())
	_ = e.Set("body", err.Error())
	if r.env.Status != nil {
		_ = e.Set("number", r.env.Status(err))
	}
	return e
}

// docID extracts a document id from a document link
// (".../docs/<id>" by name or rid, with or without a trailing slash).
func docID(link string) (string, error) {
	link = strings.TrimSuffix(link, "/")
	start := -1
	if i := strings.LastIndex(link, "/docs/"); i >= 0 {
		start = i + len("/docs/")
	} else if strings.HasPrefix(link, "docs/") {
		start = len("docs/")
	}
	if start < 0 || start >= len(link) {
		return "", fmt.Errorf("%q is not a document link (…/docs/<id>)", link)
	}
	return link[start:], nil
}

func isMissing(v goja.Value) bool { return v == nil || goja.IsUndefined(v) || goja.IsNull(v) }

func optBool(o *goja.Object, name string) bool {
	if o == nil {
		return false
	}
	v := o.Get(name)
	return !isMissing(v) && v.ToBoolean()
}
