package engine

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parsecdb/parsec/internal/epk"
	"github.com/parsecdb/parsec/internal/jsondoc"
	"github.com/parsecdb/parsec/internal/query/ast"
	"github.com/parsecdb/parsec/internal/query/eval"
	"github.com/parsecdb/parsec/internal/query/exec"
	"github.com/parsecdb/parsec/internal/query/parser"
	"github.com/parsecdb/parsec/internal/script"
	"github.com/parsecdb/parsec/internal/storage"
	"github.com/parsecdb/parsec/internal/throughput"
)

// Server-side scripts run outside the partition's write loop: against a
// snapshot of the partition, with their writes buffered in an overlay
// (scriptColl) that their later reads and queries see. When a script
// ends, its writes are submitted as one atomic command carrying the
// version of its logical partition at the snapshot (Command.IfVersion);
// if another write changed the logical partition meanwhile, the command
// writes nothing and the script runs again on a new snapshot, up to
// ScriptLimits.Retries times, then 449. A script that throws submits
// nothing. So the log carries the script's writes, never the script, and
// no script holds a write loop.

// ScriptLimits bound server-side scripts. A zero field takes its default.
type ScriptLimits struct {
	// Timeout is a procedure's or trigger's wall time; past it the script
	// is interrupted (408). Writes stop being accepted at four fifths of
	// it. Default 5 s, as Cosmos.
	Timeout time.Duration
	// MaxWrites is how many writes one run may buffer; past it writes
	// return accepted = false. Default 5,000.
	MaxWrites int
	// MaxWriteBytes caps the bytes of the documents one run writes; past
	// it writes return accepted = false. Default 16 MiB.
	MaxWriteBytes int
	// MaxReadBytes caps what one readDocuments or queryDocuments reads
	// (the logical partition's documents); past it the call fails (413).
	// Default 32 MiB.
	MaxReadBytes int
	// Retries is how many times a script runs when its logical partition
	// changes under it before the request fails with 449. Default 5.
	Retries int
	// UDFTimeout bounds one call of a user-defined function. Default
	// 100 ms.
	UDFTimeout time.Duration
	// MaxConcurrent is how many runs of procedures and triggers may be
	// under way at once on the node; one more waits up to SlotWait for a
	// slot, then is refused with 429. Default four per CPU, at least 4.
	MaxConcurrent int
	// SlotWait: see MaxConcurrent. Default 1 s.
	SlotWait time.Duration
	// MaxCharge is the request units one run may spend on reads and
	// writes; past it operations return accepted = false. Default: one
	// second of the partition's throughput, and at least 1,000 RU.
	MaxCharge float64
}

// Defaults of ScriptLimits.
const (
	DefaultScriptMaxWrites     = 5000
	DefaultScriptMaxWriteBytes = 16 << 20
	DefaultScriptMaxReadBytes  = 32 << 20
	DefaultScriptRetries       = 5
	DefaultUDFTimeout          = 100 * time.Millisecond
)

func (l ScriptLimits) withDefaults() ScriptLimits {
	if l.Timeout <= 0 {
		l.Timeout = script.DefaultTimeout
	}
	if l.MaxWrites <= 0 {
		l.MaxWrites = DefaultScriptMaxWrites
	}
	if l.MaxWriteBytes <= 0 {
		l.MaxWriteBytes = DefaultScriptMaxWriteBytes
	}
	if l.MaxReadBytes <= 0 {
		l.MaxReadBytes = DefaultScriptMaxReadBytes
	}
	if l.Retries <= 0 {
		l.Retries = DefaultScriptRetries
	}
	if l.UDFTimeout <= 0 {
		l.UDFTimeout = DefaultUDFTimeout
	}
	if l.MaxConcurrent <= 0 {
		l.MaxConcurrent = max(4, 4*runtime.GOMAXPROCS(0))
	}
	if l.SlotWait <= 0 {
		l.SlotWait = time.Second
	}
	return l
}

// scriptCPUCharge is the request charge of a script's run time, in RU per
// millisecond, on top of what it reads and writes.
const scriptCPUCharge = 1.0

// minScriptCharge is the least a run of scripts is charged, besides its
// writes.
const minScriptCharge = 1.0

// programCache holds the compiled scripts of a container, one version per
// kind and id.
type programCache struct {
	mu sync.Mutex
	m  map[programKey]cachedProgram
}

type programKey struct {
	kind ScriptKind
	id   string
}

type cachedProgram struct {
	seq  uint64
	prog *script.Program
}

// program returns the compiled program of a script version.
func (c *Container) program(info ScriptInfo) (*script.Program, error) {
	pc := &c.programs
	k := programKey{info.Kind, info.ID}
	pc.mu.Lock()
	if cp, ok := pc.m[k]; ok && cp.seq == info.Seq {
		pc.mu.Unlock()
		return cp.prog, nil
	}
	pc.mu.Unlock()
	p, err := script.Compile(info.ID, info.Body)
	if err != nil {
		return nil, badRequest("%v", err)
	}
	pc.mu.Lock()
	if pc.m == nil {
		pc.m = map[programKey]cachedProgram{}
	}
	pc.m[k] = cachedProgram{info.Seq, p}
	pc.mu.Unlock()
	return p, nil
}

// ScriptResult is the outcome of a stored procedure or of a write with
// triggers.
type ScriptResult struct {
	// Body is the procedure's response body (JSON), nil when it set none.
	Body []byte
	// Log is what the procedure wrote with console.log.
	Log string
	// Op is the outcome of the write a trigger ran around.
	Op OpResult
	// Charge is the request charge: what the scripts read and wrote, and
	// their run time.
	Charge  float64
	Session Session
	// results are the outcomes of the committed writes.
	results []OpResult
}

// ScriptEnv is what the API layer gives a script run: the status code of
// an error, which a script sees as the number of a failed operation.
type ScriptEnv struct {
	Status func(error) int
}

// ExecuteProcedure runs a stored procedure against the logical partition
// key, with args the JSON array of its parameters (nil: none).
func (c *Container) ExecuteProcedure(id string, key epk.Key, hasKey bool, args []byte, env ScriptEnv) (ScriptResult, error) {
	var out ScriptResult
	info, err := c.Script(StoredProcedure, id)
	if err != nil {
		return out, err
	}
	prog, err := c.program(info)
	if err != nil {
		return out, err
	}
	if !hasKey && !c.fixed {
		return out, ErrNoPartitionKey
	}
	if key, err = c.ResolveKey(key); err != nil {
		return out, err
	}
	e, err := c.epkOf(key)
	if err != nil {
		return out, err
	}
	err = c.transact(key, e, &out, func(sc *scriptColl) error {
		res, err := script.Run(prog, sc.env(env), sc, &script.Call{Args: args})
		if err != nil {
			return scriptError(err)
		}
		out.Body, out.Log = res.Body, res.Log
		return nil
	})
	return out, err
}

// WriteWithTriggers runs a create, upsert, replace or delete with the
// named pre- and post-triggers, all in one transaction: a trigger that
// throws fails the write and leaves no trace.
func (c *Container) WriteWithTriggers(op Op, pre, post []string, env ScriptEnv) (ScriptResult, error) {
	var out ScriptResult
	if op.Kind == OpPatch {
		return out, badRequest("triggers do not run on patch operations in this server version")
	}
	load := func(names []string, typ string) ([]*script.Program, error) {
		var progs []*script.Program
		for _, n := range names {
			info, err := c.Script(Trigger, n)
			if err != nil {
				return nil, err
			}
			if info.TriggerType != typ {
				return nil, badRequest("trigger %q is a %s-trigger; it cannot run as a %s-trigger", n, info.TriggerType, typ)
			}
			if !triggerMatches(info.TriggerOperation, op.Kind) {
				return nil, badRequest("trigger %q runs on %s operations, not on a %s", n, info.TriggerOperation, op.Kind)
			}
			p, err := c.program(info)
			if err != nil {
				return nil, err
			}
			progs = append(progs, p)
		}
		return progs, nil
	}
	pres, err := load(pre, TriggerPre)
	if err != nil {
		return out, err
	}
	posts, err := load(post, TriggerPost)
	if err != nil {
		return out, err
	}
	main := -1
	err = c.transact(op.Key, op.EPK, &out, func(sc *scriptColl) error {
		w := op
		for _, p := range pres {
			res, err := script.Run(p, sc.env(env), sc, &script.Call{Request: w.Body, Operation: triggerOpName(op.Kind)})
			if err != nil {
				return scriptError(err)
			}
			if res.Request != nil && op.Kind != OpDelete {
				nw, err := c.PrepareWrite(op.Kind, res.Request, op.Key, true)
				if err != nil {
					return fmt.Errorf("the document pre-trigger %s set is invalid: %w", p.Name(), err)
				}
				if op.Kind == OpReplace && nw.ID != op.ID {
					return badRequest("pre-trigger %s changed the id of the document being replaced", p.Name())
				}
				nw.IfMatch = op.IfMatch
				w = nw
			}
		}
		doc, err := sc.apply(w)
		if err != nil {
			return err
		}
		main = len(sc.ops) - 1
		for _, p := range posts {
			if _, err := script.Run(p, sc.env(env), sc, &script.Call{Response: doc, Operation: triggerOpName(op.Kind)}); err != nil {
				return scriptError(err)
			}
		}
		return nil
	})
	if err != nil {
		return out, err
	}
	out.Op = out.results[main]
	return out, nil
}

// triggerMatches reports whether a trigger of operation kind top runs on
// an operation of kind k.
func triggerMatches(top string, k OpKind) bool {
	switch top {
	case "All":
		return true
	case "Create":
		return k == OpCreate || k == OpUpsert
	case "Replace", "Update":
		return k == OpReplace || k == OpUpsert
	case "Upsert":
		return k == OpUpsert
	case "Delete":
		return k == OpDelete
	}
	return false
}

func triggerOpName(k OpKind) string { return k.String() }

// scriptError turns a script run's error into the engine's.
func scriptError(err error) error {
	switch {
	case errors.Is(err, script.ErrTimeout):
		return fmt.Errorf("%w: %v", ErrTimeout, err)
	case errors.Is(err, script.ErrTooLarge):
		return fmt.Errorf("%w: %v", ErrTooLarge, err)
	case errors.Is(err, script.ErrCompile), errors.Is(err, script.ErrThrown):
		return badRequest("%v", err)
	}
	return err
}

// transact runs fn against a fresh overlay of the logical partition key
// until its writes commit over the state it read (see the comment at the
// top of this file), and records the outcome in out.
func (c *Container) transact(key epk.Key, e string, out *ScriptResult, fn func(sc *scriptColl) error) error {
	lim := c.e.opts.Scripts
	now := c.e.opts.Now
	for try := 1; ; try++ {
		p := c.PartitionFor(e)
		start := now()
		if err := p.admit(start); err != nil {
			return err
		}
		snap, err := p.Snapshot()
		if errors.Is(err, ErrPartitionGone) && try < lim.Retries {
			continue // split meanwhile: run on the child
		}
		if err != nil {
			return err
		}
		sc, err := c.newScriptColl(snap, key, e, start)
		if err != nil {
			snap.Close()
			return err
		}
		sc.maxCharge = lim.MaxCharge
		if sc.maxCharge <= 0 {
			sc.maxCharge = max(p.rate(start), 1000)
		}
		if err = c.e.takeScriptSlot(p); err != nil {
			snap.Close()
			return err
		}
		err = func() error {
			defer func() { <-c.e.scriptSlots }()
			return fn(sc)
		}()
		snap.Close()
		// Reads and run time are charged here, at least 1 RU a run; the
		// writes by Execute.
		extra := max(sc.charge+float64(now().Sub(start).Microseconds())/1000*scriptCPUCharge, minScriptCharge)
		out.Charge += extra
		out.Session = p.Session()
		p.record(now(), key, extra)
		if err != nil || len(sc.ops) == 0 {
			return err
		}
		v := sc.version
		cmd := &Command{Ops: sc.ops, Atomic: true, IfVersion: &v, Ts: sc.ts}
		if sc.exposes(out.Body) {
			s := sc.seqBase
			cmd.IfSeq = &s
		}
		res, session, err := c.Execute(cmd, "")
		out.Session = session
		if err != nil {
			return err
		}
		for i := range res {
			out.Charge += res[i].Charge
		}
		if errors.Is(res[0].Err, ErrRetryWith) {
			if try < lim.Retries {
				continue
			}
			return fmt.Errorf("%w: the logical partition %s changed while the script ran, %d times; retry the request", ErrRetryWith, key, try)
		}
		for i := range res {
			if res[i].Err != nil && !errors.Is(res[i].Err, ErrFailedDependency) {
				return fmt.Errorf("the script's write %d (%s of %q) failed, so none of its writes were made: %w", i, sc.ops[i].Kind, sc.ops[i].ID, res[i].Err)
			}
		}
		out.results = res
		return nil
	}
}

// takeScriptSlot waits for one of the node's script slots, at most
// SlotWait; then it refuses with 429, so that scripts cannot take every
// CPU from the other requests.
func (e *Engine) takeScriptSlot(p *Partition) error {
	select {
	case e.scriptSlots <- struct{}{}:
		return nil
	default:
	}
	wait := e.opts.Scripts.SlotWait
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case e.scriptSlots <- struct{}{}:
		return nil
	case <-t.C:
		return &ThrottledError{RetryAfter: wait, RangeID: p.info.ID, Range: p.info,
			Reason: fmt.Sprintf("%d stored procedures and triggers are running on this server, its limit; none ended within %v", cap(e.scriptSlots), wait)}
	}
}

// scriptColl is a script's view of one logical partition: a snapshot of
// its partition with the script's own writes on top. It implements
// script.Collection.
type scriptColl struct {
	c       *Container
	snap    *PartitionSnapshot
	key     epk.Key
	epk     string
	version uint64
	ts      int64
	// seqBase is the partition's first sequence number the writes will
	// take if nothing else is applied before them (see takeSeqs).
	seqBase uint64
	over    map[string]*overDoc
	ops     []Op
	// rids maps the _rid of each document the script can see to its id,
	// for links by _rid; built on first use.
	rids map[string]string
	// shown are the _rid and _etag values (unquoted) the script's writes
	// predicted, which hold only if nothing else takes a sequence number
	// first (see exposes).
	shown   []string
	written int
	// charge is what the reads cost; writeCharge estimates the writes'
	// (Execute charges them exactly); maxCharge bounds both.
	charge      float64
	writeCharge float64
	maxCharge   float64
	lim         ScriptLimits
	// x hides expired items from the script, as from every read.
	x *expiry
}

// spent reports whether the run has spent its request units.
func (sc *scriptColl) spent(more float64) bool {
	return sc.charge+sc.writeCharge+more > sc.maxCharge
}

// exposes reports whether body shows a _rid or _etag the writes
// predicted: then the command must take exactly the predicted sequence
// numbers (Command.IfSeq), or run again.
func (sc *scriptColl) exposes(body []byte) bool {
	for _, v := range sc.shown {
		if bytes.Contains(body, []byte(v)) {
			return true
		}
	}
	return false
}

// overDoc is a document the script wrote; doc is nil when it deleted it.
type overDoc struct {
	doc  []byte
	etag string
}

func (c *Container) newScriptColl(snap *PartitionSnapshot, key epk.Key, e string, now time.Time) (*scriptColl, error) {
	sc := &scriptColl{c: c, snap: snap, key: key, epk: e, ts: now.Unix(), over: map[string]*overDoc{}, lim: c.e.opts.Scripts, x: c.expiry()}
	lk := storage.LogicalKey(nil, c.rid, e, key.String())
	v, err := snap.Get(nil, lk)
	switch {
	case err == storage.ErrNotFound:
	case err != nil:
		return nil, fmt.Errorf("%w: cannot read logical partition: %v", ErrUnavailable, err)
	default:
		ls, err := decodeLogicalState(lk, v)
		if err != nil {
			return nil, err
		}
		sc.version = ls.Version
	}
	num, err := strconv.ParseUint(snap.Range.ID, 10, 64)
	if err != nil {
		return nil, internalError("partition key range id %q is not a number", snap.Range.ID)
	}
	sc.seqBase = seqPartitionBit | num<<seqCountBits | snap.seqs
	return sc, nil
}

// env is the script environment of a run over sc.
func (sc *scriptColl) env(se ScriptEnv) *script.Env {
	return &script.Env{Now: sc.c.e.opts.Now, NewID: newID, Status: se.Status,
		Limits: script.Limits{Timeout: sc.lim.Timeout}}
}

// newID returns a random version 4 UUID, the id Cosmos gives a document
// a script creates without one.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

func (sc *scriptColl) SelfLink() string {
	info := sc.c.Info()
	rid, _ := decodeRid(info.Rid)
	return "dbs/" + encodeRid(rid[:4]) + "/colls/" + info.Rid + "/"
}

// current returns the document id as the script sees it.
func (sc *scriptColl) current(id string) (doc []byte, etag string, ok bool, err error) {
	if o, found := sc.over[id]; found {
		return o.doc, o.etag, o.doc != nil, nil
	}
	k := storage.ItemKey(nil, sc.c.rid, sc.epk, id)
	v, err := sc.snap.Get(nil, k)
	if err == storage.ErrNotFound {
		return nil, "", false, nil
	}
	if err != nil {
		return nil, "", false, fmt.Errorf("%w: cannot read item: %v", ErrUnavailable, err)
	}
	_, et, d, err := decodeItem(k, v)
	if err != nil {
		return nil, "", false, err
	}
	if sc.x.expired(d) {
		return nil, "", false, nil
	}
	return d, string(et), true, nil
}

// resolve turns the last segment of a document link, an id or a _rid,
// into the document's id.
func (sc *scriptColl) resolve(ref string) (string, error) {
	if _, _, ok, err := sc.current(ref); ok || err != nil {
		return ref, err
	}
	if b, err := decodeRid(ref); err != nil || len(b) != storage.RidLen+8 {
		return ref, nil
	}
	if sc.rids == nil {
		// Once per run: the _rid of every document the script can see
		// (those it creates are added as it does).
		docs, err := sc.scan(false)
		if err != nil {
			return "", err
		}
		sc.rids = map[string]string{}
		for _, d := range docs {
			sc.rids[ridOf(d.doc)] = d.id
		}
	}
	if id, ok := sc.rids[ref]; ok {
		return id, nil
	}
	return ref, nil
}

func (sc *scriptColl) Read(ref string) ([]byte, error) {
	if sc.spent(0) {
		return nil, script.ErrNotAccepted
	}
	id, err := sc.resolve(ref)
	if err != nil {
		return nil, err
	}
	doc, _, ok, err := sc.current(id)
	if err != nil {
		return nil, err
	}
	if !ok {
		sc.charge += throughput.FailedCharge
		return nil, notFound("no item with id %q in partition %s", id, sc.key)
	}
	sc.charge += throughput.ReadCharge(len(doc))
	return doc, nil
}

type keyedDoc struct {
	id  string
	doc []byte
}

// all returns the logical partition's documents as the script sees them,
// ordered by id, within MaxReadBytes, and charges their reading.
func (sc *scriptColl) all() ([]keyedDoc, error) { return sc.scan(true) }

func (sc *scriptColl) scan(charge bool) ([]keyedDoc, error) {
	prefix := storage.ItemKey(nil, sc.c.rid, sc.epk, "")
	var out []keyedDoc
	size := 0
	err := sc.snap.Iterate(prefix, storage.PrefixEnd(prefix), func(k, v []byte) (bool, error) {
		id := string(k[len(prefix):])
		if _, found := sc.over[id]; found {
			return true, nil
		}
		_, _, d, err := decodeItem(k, v)
		if err != nil {
			return false, err
		}
		if sc.x.expired(d) {
			return true, nil
		}
		if size += len(d); size > sc.lim.MaxReadBytes {
			return false, fmt.Errorf("%w: the script read more than %d bytes of documents in one call; read fewer with a narrower query", ErrTooLarge, sc.lim.MaxReadBytes)
		}
		out = append(out, keyedDoc{id, append([]byte(nil), d...)})
		return true, nil
	})
	if err != nil {
		if errors.Is(err, ErrTooLarge) || errors.Is(err, ErrCorrupt) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: cannot read items: %v", ErrUnavailable, err)
	}
	for id, o := range sc.over {
		if o.doc != nil {
			out = append(out, keyedDoc{id, o.doc})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	if charge {
		sc.charge += throughput.FeedCharge(len(out), size)
	}
	return out, nil
}

func (sc *scriptColl) ReadAll(p script.Page) ([][]byte, string, error) {
	return sc.Query("SELECT * FROM root", nil, p)
}

func (sc *scriptColl) Query(text string, params []byte, p script.Page) ([][]byte, string, error) {
	if sc.spent(0) {
		return nil, "", script.ErrNotAccepted
	}
	pm := map[string]eval.Value{}
	if params != nil {
		var ps []struct {
			Name  string          `json:"name"`
			Value json.RawMessage `json:"value"`
		}
		if err := json.Unmarshal(params, &ps); err != nil {
			return nil, "", badRequest("the query parameters must be an array of {name, value}: %v", err)
		}
		for _, p := range ps {
			v := eval.Value{}
			if len(p.Value) > 0 {
				var err error
				if v, err = eval.FromJSON(p.Value); err != nil {
					return nil, "", badRequest("query parameter %s has an invalid value: %v", p.Name, err)
				}
			}
			pm[trimAt(p.Name)] = v
		}
	}
	q, err := parser.Parse(text)
	if err != nil {
		return nil, "", badRequest("%v", err)
	}
	plan, err := sc.c.CompileQuery(q, pm)
	if err != nil {
		return nil, "", err
	}
	// A continuation is the executor's state after the previous page:
	// positions by document key, so the script's own deletes between
	// pages skip nothing.
	var state *exec.State
	if p.Continuation != "" {
		b, err := base64.RawURLEncoding.DecodeString(p.Continuation)
		if err == nil {
			state, err = plan.UnmarshalState(b)
		}
		if err != nil {
			return nil, "", badContinuation("the continuation %q is not one this query returned", p.Continuation)
		}
	}
	docs, err := sc.all()
	if err != nil {
		return nil, "", err
	}
	size := p.Size
	if size <= 0 {
		size = len(docs) + 1
	}
	src := &docsSource{rid: sc.c.rid, epk: sc.epk, docs: docs}
	rows, next, err := exec.ExecJSON(plan, []exec.Source{src}, state, size, &exec.Limits{
		MaxBytes: DefaultQueryValueBytes, MaxPageBytes: sc.lim.MaxReadBytes, What: "the script's query"})
	if err != nil {
		return nil, "", badRequest("%v", err)
	}
	sc.charge += udfCharge(plan)
	var token string
	if next != nil && !next.Done() {
		b, err := next.MarshalBinary()
		if err != nil {
			return nil, "", internalError("cannot encode a script query's state: %v", err)
		}
		token = base64.RawURLEncoding.EncodeToString(b)
	}
	return rows, token, nil
}

func trimAt(s string) string {
	if len(s) > 0 && s[0] == '@' {
		return s[1:]
	}
	return s
}

// docsSource is a query source over documents in key order.
type docsSource struct {
	rid  [storage.RidLen]byte
	epk  string
	docs []keyedDoc
	i    int
}

func (s *docsSource) Next() ([]byte, eval.Value, bool, error) {
	if s.i >= len(s.docs) {
		return nil, eval.Value{}, false, nil
	}
	d := s.docs[s.i]
	s.i++
	v, err := eval.FromJSON(d.doc)
	if err != nil {
		return nil, eval.Value{}, false, corrupt("item %q holds a document that is not valid JSON: %v", d.id, err)
	}
	return storage.ItemKey(nil, s.rid, s.epk, d.id), v, true, nil
}

func (sc *scriptColl) Write(w script.Write) ([]byte, error) {
	est := throughput.WriteCharge(len(w.Body), 0)
	if len(sc.ops) >= sc.lim.MaxWrites || sc.written+len(w.Body) > sc.lim.MaxWriteBytes || sc.spent(est) {
		return nil, script.ErrNotAccepted
	}
	var op Op
	var err error
	switch w.Kind {
	case script.Create, script.Upsert, script.Replace:
		kind := map[script.WriteKind]OpKind{script.Create: OpCreate, script.Upsert: OpUpsert, script.Replace: OpReplace}[w.Kind]
		if op, err = sc.c.PrepareWrite(kind, w.Body, sc.key, true); err != nil {
			return nil, err
		}
		if w.Kind == script.Replace {
			id, err := sc.resolve(w.ID)
			if err != nil {
				return nil, err
			}
			if id != op.ID {
				return nil, badRequest("the document's id, %q, does not match the id in the link, %q", op.ID, id)
			}
		}
	case script.Delete:
		id, err := sc.resolve(w.ID)
		if err != nil {
			return nil, err
		}
		if op, err = sc.c.PrepareKeyed(OpDelete, id, sc.key, true); err != nil {
			return nil, err
		}
	default:
		panic(fmt.Sprintf("BUG: a script write of unknown kind %d", w.Kind))
	}
	op.IfMatch = w.IfMatch
	doc, err := sc.apply(op)
	if err == nil {
		sc.writeCharge += est
	}
	return doc, err
}

// apply makes one prepared write in the overlay, with the checks apply
// will make, and returns the document written (the deleted one for a
// delete). Its system properties are the ones the command will give it
// if nothing else is applied to the partition before it.
func (sc *scriptColl) apply(op Op) ([]byte, error) {
	cur, curEtag, exists, err := sc.current(op.ID)
	if err != nil {
		return nil, err
	}
	switch {
	case op.Kind == OpCreate && exists:
		return nil, conflict("an item with id %q already exists in partition %s", op.ID, op.Key)
	case (op.Kind == OpReplace || op.Kind == OpDelete) && !exists:
		return nil, notFound("no item with id %q in partition %s", op.ID, op.Key)
	case op.IfMatch != "" && op.IfMatch != "*" && exists && op.IfMatch != curEtag:
		return nil, fmt.Errorf("%w: the item's etag is %s, not %s", ErrPreconditionFailed, curEtag, op.IfMatch)
	case op.IfMatch != "" && op.IfMatch != "*" && !exists:
		return nil, fmt.Errorf("%w: if-match %s given, but no item with id %q exists", ErrPreconditionFailed, op.IfMatch, op.ID)
	}
	seq := sc.seqBase + uint64(len(sc.ops))
	sc.ops = append(sc.ops, op)
	sc.written += len(op.Body)
	if op.Kind == OpDelete {
		sc.over[op.ID] = &overDoc{}
		return cur, nil
	}
	rid := ridOf(cur)
	if !exists {
		rid = encodeRid(binary.BigEndian.AppendUint64(append([]byte(nil), sc.c.rid[:]...), seq))
	}
	etag := etagOf(seq)
	sc.shown = append(sc.shown, etag[1:len(etag)-1])
	if !exists {
		sc.shown = append(sc.shown, rid)
		if sc.rids != nil {
			sc.rids[rid] = op.ID
		}
	}
	doc := jsondoc.WithSystem(nil, op.Body, jsondoc.System{Rid: rid, Self: sc.c.ac.self + rid + "/", Etag: etag, Ts: sc.ts})
	sc.over[op.ID] = &overDoc{doc: doc, etag: etag}
	return bytes.Clone(doc), nil
}

// CompileQuery checks a parsed query of the container against its
// parameters and compiles it, with the container's user-defined functions
// bound to udf.name(...) calls.
func (c *Container) CompileQuery(q *ast.Query, params map[string]eval.Value) (*exec.Plan, error) {
	if err := eval.CheckParams(q, params); err != nil {
		return nil, badRequest("%v", err)
	}
	u := &udfs{c: c, progs: map[string]*script.Program{}, free: map[string][]*script.Func{}}
	opts := exec.Options{UDF: u.call, Tag: u}
	if sp := c.searchOptions(); sp != nil {
		opts.Search = sp.Search()
	}
	p, err := exec.CompileWith(q, params, opts)
	if err != nil {
		return nil, badRequest("%v", err)
	}
	return p, nil
}

// udfCharge is the request charge of the time plan's pages spent in
// user-defined functions since the last call.
func udfCharge(plan *exec.Plan) float64 {
	u, ok := plan.Tag().(*udfs)
	if !ok {
		return 0
	}
	return float64(u.nanos.Swap(0)) / 1e6 * scriptCPUCharge
}

// udfs calls a query's user-defined functions. The partitions of a page
// call them in parallel, each from a runtime of its own taken from a pool.
type udfs struct {
	c *Container
	// nanos is the time spent in calls.
	nanos atomic.Int64

	mu    sync.Mutex
	progs map[string]*script.Program
	free  map[string][]*script.Func
}

// udfEpoch is the time a user-defined function's Date sees: functions
// are deterministic, so they get no clock.
var udfEpoch = time.Unix(0, 0).UTC()

func (u *udfs) take(name string) (*script.Func, error) {
	u.mu.Lock()
	if fs := u.free[name]; len(fs) > 0 {
		f := fs[len(fs)-1]
		u.free[name] = fs[:len(fs)-1]
		u.mu.Unlock()
		return f, nil
	}
	p, ok := u.progs[name]
	u.mu.Unlock()
	if !ok {
		info, err := u.c.Script(UserFunction, name)
		if err != nil {
			return nil, err
		}
		if p, err = u.c.program(info); err != nil {
			return nil, err
		}
		u.mu.Lock()
		u.progs[name] = p
		u.mu.Unlock()
	}
	env := &script.Env{Now: func() time.Time { return udfEpoch }, Rand: func() float64 { return 0.5 },
		Limits: script.Limits{Timeout: u.c.e.opts.Scripts.UDFTimeout}}
	return p.NewFunc(env)
}

// call calls udf.name; its errors are the query's (400).
func (u *udfs) call(name string, args []eval.Value) (eval.Value, error) {
	v, err := u.callFunc(name, args)
	if err != nil {
		return eval.Value{}, &eval.Error{Kind: eval.ErrUDF, Msg: fmt.Sprintf("udf.%s: %v", name, err)}
	}
	return v, nil
}

func (u *udfs) callFunc(name string, args []eval.Value) (eval.Value, error) {
	f, err := u.take(name)
	if err != nil {
		return eval.Value{}, err
	}
	jargs := make([][]byte, len(args))
	for i, a := range args {
		jargs[i] = a.AppendJSON(nil)
	}
	start := time.Now()
	out, err := f.Call(jargs)
	u.nanos.Add(int64(time.Since(start)))
	if err != nil {
		return eval.Value{}, err // the runtime may be mid-call: not reused
	}
	u.mu.Lock()
	u.free[name] = append(u.free[name], f)
	u.mu.Unlock()
	if out == nil {
		return eval.Value{}, nil
	}
	return eval.FromJSON(out)
}

// QueryDocuments runs a compiled query over documents (JSON objects)
// given in memory, such as a container's scripts, in one page.
func QueryDocuments(plan *exec.Plan, docs [][]byte) ([][]byte, error) {
	// The documents are in memory already: the query is bounded by the work
	// it does on them, counted, not timed.
	const documentsQuerySteps = 10_000_000
	kd := make([]keyedDoc, len(docs))
	for i, d := range docs {
		kd[i] = keyedDoc{id: fmt.Sprintf("%08d", i), doc: d}
	}
	src := &docsSource{docs: kd}
	rows, _, err := exec.ExecJSON(plan, []exec.Source{src}, nil, len(docs)+1, &exec.Limits{
		MaxSteps: documentsQuerySteps, MaxBytes: DefaultQueryValueBytes, Held: exec.NewHeld(DefaultQueryHeldBytes, nil),
		MaxPageBytes: DefaultQueryPageBytes, What: "the query"})
	if err != nil {
		return nil, badRequest("%v", err)
	}
	return rows, nil
}
