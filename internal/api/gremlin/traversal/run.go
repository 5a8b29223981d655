package traversal

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	mrand "math/rand"
	"time"

	"github.com/parsecdb/parsec/internal/api/gremlin/graph"
	"github.com/parsecdb/parsec/internal/api/gremlin/lang"
)

// Default limits, from Cosmos's limits page (gremlin/limits.md): 32
// repeat() iterations and a 30 s traversal timeout.
const (
	DefaultMaxRepeat    = 32
	DefaultTimeout      = 30 * time.Second
	DefaultMemoryBudget = 256 << 20
	DefaultMaxResults   = 1 << 20
)

// Options are the limits and the environment of one traversal. Zero fields
// take the defaults above; NewID defaults to random v4 GUIDs and Now to
// time.Now.
type Options struct {
	// MaxRepeat caps the iterations of any repeat() (and times(n)).
	MaxRepeat int
	// Timeout caps the traversal's run time, on top of ctx's deadline.
	Timeout time.Duration
	// MemoryBudget caps, in approximate bytes, the traversers alive at a
	// step boundary plus the side effects (aggregate, store, group, ...).
	MemoryBudget int64
	// MaxResults caps the results returned.
	MaxResults int
	// NewID returns the id of a vertex or edge added without one.
	NewID func() string
	// Now is the clock of the profile's times.
	Now func() time.Time
	// Seed seeds sample() and order().by(shuffle); 0 means 1.
	Seed int64
	// Gremlin is the traversal's text for executionProfile(); when empty
	// the evaluator prints the tree.
	Gremlin string
}

func (o *Options) defaults() {
	if o.MaxRepeat <= 0 {
		o.MaxRepeat = DefaultMaxRepeat
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MemoryBudget <= 0 {
		o.MemoryBudget = DefaultMemoryBudget
	}
	if o.MaxResults <= 0 {
		o.MaxResults = DefaultMaxResults
	}
	if o.NewID == nil {
		o.NewID = NewGUID
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
}

// NewGUID returns a random (version 4) GUID in lower-case text form, as
// Cosmos gives a vertex or edge added without an id.
func NewGUID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("BUG: crypto/rand failed: " + err.Error())
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// Result is what a traversal returned and what it cost.
type Result struct {
	// Values are the traversal's results in order (for executionProfile(),
	// one value: the profile array, []any{*graph.Map}).
	Values []graph.Value
	// Ops are the store operations in the order done, the final Apply
	// included; Charge is the sum of their charges.
	Ops    []graph.StoreOp
	Charge float64
	// Written counts the mutations the store applied.
	Written int
	// Profile has one entry per step of the traversal (after push-down
	// fusion), in order.
	Profile []Metric
	// Duration is the traversal's run time by Options.Now.
	Duration time.Duration
}

// Metric is the profile of one operator: the Cosmos operator name
// (GetVertices, GetEdges, GetNeighborVertices, ProjectOperator, ...), the
// step as written, its time, the traversers it produced and the store
// operations it caused (its nested traversals' included).
type Metric struct {
	Name  string
	Step  string
	Time  time.Duration
	Count int
	Ops   []graph.StoreOp
}

// Run evaluates t against s. Reads go to the store as the traversal needs
// them, breadth-first: each step takes the whole frontier of traversers
// and does one store query for it. Writes are collected and applied by one
// s.Apply at the end; when that fails part-way the error is a
// *graph.PartialWriteError (wrapped in an *Error) and Result.Written says
// how many were applied. Every failure of the evaluator is an *Error.
func Run(ctx context.Context, t *lang.Traversal, s graph.Store, o Options) (*Result, error) {
	o.defaults()
	if t == nil {
		return nil, invalid("", "empty traversal")
	}
	if t.Terminal.Name == "explain" {
		// TinkerPop's explain() lists the strategies applied; this
		// evaluator has none to list.
		return nil, unsupported("explain", "explain() is not supported; executionProfile() reports how a traversal ran")
	}
	prog, profile, err := compileRoot(t)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	r := &run{
		ctx: ctx, s: s, o: o, pk: s.PartitionKey(),
		side:     map[string]*sideEffect{},
		vertices: map[string]*graph.Vertex{},
		edges:    map[string]*graph.Edge{},
		writes:   newWriteSet(),
		state:    map[stateKey]any{},
		rng:      mrand.New(mrand.NewSource(o.Seed)),
	}
	for _, st := range t.Source {
		if err := r.source(st); err != nil {
			return nil, err
		}
	}
	for k, kind := range prog.sides {
		if _, ok := r.side[k]; !ok {
			r.side[k] = &sideEffect{kind: kind, m: &graph.Map{}}
		}
	}
	start := o.Now()
	seed := &traverser{obj: startMarker{}}
	res := &Result{}
	out, err := r.execTop(prog, []*traverser{seed}, res)
	if err != nil {
		return r.fail(res, err)
	}
	if len(out) > o.MaxResults {
		return r.fail(res, newErr(ErrTooManyResults, "", "the traversal returned more than %d results", o.MaxResults))
	}
	if t.Terminal.Name == "next" && len(t.Terminal.Args) == 0 && len(out) == 0 && !profile {
		// TinkerPop's next() fails on an empty traversal
		// (NoSuchElementException); nothing is written.
		return r.fail(res, invalid("next", "the traversal has no result; tryNext() or hasNext() test for one"))
	}
	for _, tr := range out {
		res.Values = append(res.Values, exportValue(tr.obj))
	}
	if err := r.commit(res); err != nil {
		return r.fail(res, err)
	}
	res.Duration = o.Now().Sub(start)
	res.Ops = r.ops
	for _, op := range r.ops {
		res.Charge += op.Charge
	}
	if profile {
		gremlin := o.Gremlin
		if gremlin == "" {
			gremlin = lang.Format(t)
		}
		// One result: the array of reference-execution-profile.md, whose
		// one object is the profile.
		res.Values = []graph.Value{ProfileValue(gremlin, res)}
	}
	res.Values = terminal(t.Terminal, res.Values)
	return res, nil
}

// terminal applies the script's terminal method to the results, as Gremlin
// Server sends what the script returns, iterated: next() the first result
// (an empty traversal fails before it writes), next(n) the first n, iterate() nothing,
// hasNext() whether there was one, tryNext() the first if any (Groovy's
// Optional, unwrapped), toSet() the distinct results in order; toList()
// and toBulkSet() (iterated, each value as often as its bulk) all of them.
// The traversal ran whole before: its writes are committed whatever the
// terminal method keeps.
func terminal(st lang.Step, vals []graph.Value) []graph.Value {
	switch st.Name {
	case "next", "tryNext":
		n := 1
		if len(st.Args) == 1 {
			if c, ok := toInt64(st.Args[0]); ok {
				n = int(max(0, min(c, int64(len(vals)))))
			}
		}
		return vals[:min(n, len(vals))]
	case "iterate":
		return nil
	case "hasNext":
		return []graph.Value{len(vals) > 0}
	case "toSet":
		seen := newSeenSet()
		out := vals[:0:0]
		for _, v := range vals {
			if seen.add(v) {
				out = append(out, v)
			}
		}
		return out
	}
	return vals
}

func (r *run) fail(res *Result, err error) (*Result, error) {
	res.Ops = r.ops
	for _, op := range r.ops {
		res.Charge += op.Charge
	}
	res.Values = nil
	var e *Error
	if errors.As(err, &e) {
		return res, err
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return res, &Error{Code: CodeTooMany, Message: "the traversal exceeded its time limit", Err: errors.Join(ErrTimeout, err)}
	}
	return res, &Error{Code: CodeStore, Message: err.Error(), Err: errors.Join(ErrStore, err)}
}

// source applies a source step (withSideEffect; strategies are accepted
// only where they change nothing here).
func (r *run) source(st lang.Step) error {
	switch st.Name {
	case "withSideEffect":
		if len(st.Args) > 2 {
			return unsupported(st.Name, "a side effect with a reducing operator is not supported")
		}
		if len(st.Args) < 2 {
			return invalid(st.Name, "needs a key and a value")
		}
		k, ok := st.Args[0].(string)
		if !ok {
			return invalid(st.Name, "the key must be a string")
		}
		r.side[k] = &sideEffect{kind: sideValue, value: importValue(st.Args[1])}
		return nil
	case "withStrategies":
		for _, a := range st.Args {
			if s, ok := a.(lang.Strategy); ok && s.Name == "PartitionStrategy" {
				return unsupported(st.Name, "PartitionStrategy is not supported: the container's partition key %q routes traversals by itself; read a partition with has('%s', value) or g.V([value, id]) and write one with property('%s', value)", r.pk, r.pk, r.pk)
			}
		}
	}
	return unsupported(st.Name, "source step %s is not supported", st.Name)
}

// startMarker is the object of the seed traverser a traversal starts
// from; start steps (V, E, addV, inject) replace it.
type startMarker struct{}

// run is the state of one traversal.
type run struct {
	ctx    context.Context
	s      graph.Store
	o      Options
	pk     string
	side   map[string]*sideEffect
	ops    []graph.StoreOp
	cur    *Metric // the top-level operator store ops are charged to
	sideMB int64   // approximate bytes held by side effects
	rng    *mrand.Rand

	// vertices and edges hold one object per element read or written, so
	// that every traverser sees the same (possibly modified) element.
	vertices map[string]*graph.Vertex
	edges    map[string]*graph.Edge
	writes   *writeSet

	deferred error            // an error found where no error could be returned
	frames   int              // local child runs so far (frame ids)
	state    map[stateKey]any // per-step state (see frame)
}

// traverser is one object moving through the traversal with its path, its
// repeat loop counters and its tag (which input of a local child it
// descends from; reducing steps reduce per tag).
type traverser struct {
	obj   any
	path  *pathNode
	loops []int
	tag   int
}

type pathNode struct {
	prev   *pathNode
	obj    any
	labels []string
}

// to returns a traverser at obj that extends t's path.
func (t *traverser) to(obj any) *traverser {
	n := *t
	n.obj = obj
	if _, ok := t.obj.(startMarker); ok {
		n.path = &pathNode{obj: obj}
	} else {
		n.path = &pathNode{prev: t.path, obj: obj}
	}
	return &n
}

// fresh returns a traverser at obj with a new path, as a reducing step
// makes.
func (t *traverser) fresh(obj any) *traverser {
	return &traverser{obj: obj, path: &pathNode{obj: obj}, loops: t.loops, tag: t.tag}
}

// frame is the context of an execution: the tags alive (the inputs of the
// innermost local child, or the one tag of the whole traversal), and an id
// that names this run of a local child (0: the traversal itself). Steps
// that remember what they saw (dedup, range) keep their state per step,
// frame id and tag: a global child (a repeat body, a union branch) shares
// it across iterations, as TinkerPop's step instances do, while each run of
// a local child starts afresh, as TinkerPop resets a local child per
// traverser.
type frame struct {
	tags []int
	id   int
}

// stateKey names the state of one step in one frame for one tag.
type stateKey struct {
	step  *int
	frame int
	tag   int
	iter  int // the innermost repeat() iteration, for per-iteration state
}

// iteration is the innermost repeat() iteration count of a traverser.
func iteration(t *traverser) int {
	if n := len(t.loops); n > 0 {
		return t.loops[n-1]
	}
	return 0
}

var topFrame = &frame{tags: []int{0}}

// execTop runs the root program, recording a metric per operator.
func (r *run) execTop(p *program, in []*traverser, res *Result) ([]*traverser, error) {
	for _, o := range p.ops {
		m := &Metric{Name: o.metric, Step: o.name}
		r.cur = m
		t0 := r.o.Now()
		out, err := r.step(topFrame, o, in)
		if err != nil {
			return nil, err
		}
		m.Time = r.o.Now().Sub(t0)
		m.Count = len(out)
		res.Profile = append(res.Profile, *m)
		in = out
	}
	r.cur = nil
	return in, nil
}

// exec runs a nested program in frame f.
func (r *run) exec(f *frame, p *program, in []*traverser) ([]*traverser, error) {
	for _, o := range p.ops {
		out, err := r.step(f, o, in)
		if err != nil {
			return nil, err
		}
		in = out
	}
	return in, nil
}

func (r *run) step(f *frame, o *op, in []*traverser) ([]*traverser, error) {
	if err := r.ctx.Err(); err != nil {
		return nil, &Error{Code: CodeTooMany, Step: o.name, Message: "the traversal exceeded its time limit", Err: errors.Join(ErrTimeout, err)}
	}
	out, err := o.fn(r, f, in)
	if err == nil && r.deferred != nil {
		err, r.deferred = r.deferred, nil
	}
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			if e.Step == "" {
				e.Step = o.name
			}
			return nil, e
		}
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			return nil, &Error{Code: CodeTooMany, Step: o.name, Message: "the traversal exceeded its time limit", Err: errors.Join(ErrTimeout, err)}
		}
		return nil, &Error{Code: CodeStore, Step: o.name, Message: err.Error(), Err: errors.Join(ErrStore, err)}
	}
	if err := r.checkMemory(o.name, out); err != nil {
		return nil, err
	}
	return out, nil
}

// checkMemory estimates the bytes of a frontier plus the side effects.
func (r *run) checkMemory(step string, ts []*traverser) error {
	n := r.sideMB + int64(len(ts))*96
	if n > r.o.MemoryBudget {
		return newErr(ErrMemory, step, "the traversal needs more than %d bytes", r.o.MemoryBudget)
	}
	for _, t := range ts {
		n += sizeOf(t.obj, 0)
		if n > r.o.MemoryBudget {
			return newErr(ErrMemory, step, "the traversal needs more than %d bytes", r.o.MemoryBudget)
		}
	}
	return nil
}

// charge records a store operation.
func (r *run) charge(op graph.StoreOp) {
	r.ops = append(r.ops, op)
	if r.cur != nil {
		r.cur.Ops = append(r.cur.Ops, op)
	}
}

// runLocal runs a local child once per input traverser (batched: every
// input gets its own tag, and reducing steps reduce per tag) and returns
// each input's outputs, retagged as the input.
func (r *run) runLocal(p *program, in []*traverser) ([][]*traverser, error) {
	copies := make([]*traverser, len(in))
	tags := make([]int, len(in))
	for i, t := range in {
		c := *t
		c.tag = i
		copies[i] = &c
		tags[i] = i
	}
	r.frames++
	out, err := r.exec(&frame{tags: tags, id: r.frames}, p, copies)
	if err != nil {
		return nil, err
	}
	groups := make([][]*traverser, len(in))
	for _, o := range out {
		i := o.tag
		if i < 0 || i >= len(in) {
			panic(fmt.Sprintf("BUG: traverser tag %d out of range", i))
		}
		c := *o
		c.tag = in[i].tag
		groups[i] = append(groups[i], &c)
	}
	return groups, nil
}

// subFrame is the frame of a global child (a union or choose branch, a
// repeat body) run over some traversers: the same state (id), and only
// the tags present, so that a reducing step in the branch answers for the
// inputs that entered it and no others.
func subFrame(f *frame, in []*traverser) *frame {
	seen := map[int]bool{}
	var tags []int
	for _, t := range in {
		if !seen[t.tag] {
			seen[t.tag] = true
			tags = append(tags, t.tag)
		}
	}
	return &frame{tags: tags, id: f.id}
}

// byTag splits a frontier into the frame's tags, in the frame's order.
func byTag(f *frame, in []*traverser) ([]int, map[int][]*traverser) {
	groups := map[int][]*traverser{}
	for _, t := range in {
		groups[t.tag] = append(groups[t.tag], t)
	}
	tags := append([]int(nil), f.tags...)
	if len(groups) > 0 {
		known := map[int]bool{}
		for _, t := range tags {
			known[t] = true
		}
		for _, t := range in {
			if !known[t.tag] {
				known[t.tag] = true
				tags = append(tags, t.tag)
			}
		}
	}
	return tags, groups
}
