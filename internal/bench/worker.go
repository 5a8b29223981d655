package bench

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/parsecdb/parsec/internal/activityid"
)

// workerStats are one worker's counters. The worker is their only writer;
// the totals are atomic so that the progress line can read them live.
type workerStats struct {
	throttled atomic.Uint64 // 429 outcomes
	failed    atomic.Uint64 // other non-2xx outcomes and transport errors
	charge    atomic.Uint64 // sum of x-ms-request-charge, in 1/10000 RU

	// Written by the worker only, read after it has stopped.
	byStatus  map[int]uint64
	samples   map[int]string // the first error message per status
	transport uint64         // transport errors (status 0)
	transErr  string         // the first transport error
	// Open loop: sends that started more than scheduleSlack after their
	// intended time, and the largest such delay (read after the run).
	behind atomic.Uint64
	maxLag time.Duration
}

// opStats are one worker's counters of one operation kind of its mix. Only
// hist (whose counters are atomic) is read while the worker runs.
type opStats struct {
	op        OpKind
	hist      *Histogram // latency of successful operations
	throttled uint64
	failed    uint64
	requests  uint64 // HTTP requests sent (an RMW sends two, a query one per page)
	rows      uint64 // documents the queries returned (x-ms-item-count)
	charge    uint64 // in 1/10000 RU
}

// call is one request as a worker describes it to its sender.
type call struct {
	// path is the request path; rawPath the same, escaped for the wire.
	method, path, rawPath string
	// date, authorization and activity are sent when signed is set.
	signed                        bool
	date, authorization, activity string
	// pk is the x-ms-documentdb-partitionkey value as a shared one-element
	// slice, or nil.
	pk     []string
	upsert bool
	// ifMatch is the If-Match value (an etag), or empty.
	ifMatch []byte
	// query marks a query (x-ms-documentdb-isquery: True, Content-Type:
	// application/query+json); crossPartition adds
	// x-ms-documentdb-query-enablecrosspartition: True. continuation is the
	// x-ms-continuation of the page to read (empty for the first), pageSize
	// the x-ms-max-item-count ("" for none).
	query, crossPartition bool
	continuation          []byte
	pageSize              string
	// body is nil for a request without one; otherwise it was appended to
	// the sender's buffer() and is sent as application/json (or
	// application/query+json for a query).
	body []byte
}

// reply is what a sender read back. body, etag and continuation are valid
// until the next send; etag and continuation are empty when absent.
type reply struct {
	status int
	// charge is x-ms-request-charge in 1/10000 RU (0 if absent).
	charge uint64
	// retryAfter is x-ms-retry-after-ms, or -1 if absent.
	retryAfter   time.Duration
	etag         []byte
	continuation []byte // x-ms-continuation
	itemCount    int    // x-ms-item-count (0 if absent)
	body         []byte
}

// sender sends a worker's requests, one at a time, and reads each whole
// response. There are two: nethttp (net/http's Transport, the default) and
// raw (a minimal HTTP/1.1 client on one connection). A sender is not safe
// for concurrent use.
type sender interface {
	// buffer returns an empty buffer for the next request's body.
	buffer() []byte
	// send sends c and fills r. Only transport failures are errors.
	send(c *call, r *reply) error
	// close releases the sender's connection, if it owns one.
	close()
}

// clock is a worker's time source: the wall clock, or a simulated one in
// tests of the schedule.
type clock interface {
	now() time.Time
	// sleep waits for d, or until ctx is done.
	sleep(ctx context.Context, d time.Duration)
}

// wallClock is the real clock, with a timer reused across sleeps.
type wallClock struct{ t *time.Timer }

func (*wallClock) now() time.Time { return time.Now() }

func (c *wallClock) sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	if c.t == nil {
		c.t = time.NewTimer(d)
	} else {
		c.t.Reset(d)
	}
	select {
	case <-c.t.C:
	case <-ctx.Done():
		c.t.Stop()
	}
}

// worker sends the operations of a workload, one at a time, through its
// sender. It builds each request from precomputed parts without allocating
// (a signature cache miss aside). A worker is not safe for concurrent use.
type worker struct {
	id   int
	c    *client
	o    *Options
	ks   *keyspace
	reqs uint64 // requests sent

	signer *Signer
	rng    *rand.Rand
	mix    chooser
	keys   keyChooser
	clk    clock
	s      sender
	acts   []string
	idBuf  []byte
	// vecBuf is the query vector of the current vector search (kept
	// across its pages).
	vecBuf []byte
	call   call
	reply  reply

	// period is the open loop's spacing of this worker's operations in
	// nanoseconds (0: closed loop); phase, in [0, period), staggers the
	// workers' schedules. Operation k is due at start + phase + k*period,
	// kept in floating point so that the run's total is exact.
	period, phase float64
	// budget, when set, is the run's count of operations still to start.
	budget *atomic.Int64

	// retryAfter is the delay the last 429 asked for.
	retryAfter time.Duration
	stats      workerStats
	// perOp[i] counts the operations of mix.ops[i]; cur is the entry of the
	// operation under way (scratch outside a run).
	perOp   []opStats
	cur     *opStats
	scratch opStats
}

// maxThrottleWait bounds the pause of a worker after a 429.
const maxThrottleWait = time.Second

// scheduleSlack is how late an open-loop send may start before it counts as
// behind schedule.
const scheduleSlack = time.Millisecond

// activityIDs is how many distinct x-ms-activity-id values a worker cycles
// through (the SDKs send a fresh one per request; the server only echoes it).
const activityIDs = 64

func newWorker(ctx context.Context, id int, c *client, o *Options, ks *keyspace, seed uint64) *worker {
	w := &worker{
		id: id, c: c, o: o, ks: ks,
		signer: NewSigner(c.key),
		rng:    rand.New(rand.NewPCG(seed, uint64(id)+1)),
		clk:    &wallClock{},
		idBuf:  make([]byte, 0, 64),
	}
	w.cur = &w.scratch
	for range activityIDs {
		w.acts = append(w.acts, activityid.New())
	}
	if o.Client == ClientRaw {
		w.s = newRawSender(ctx, c, o.ItemSize)
	} else {
		w.s = newNetHTTPSender(ctx, c, o.ItemSize)
	}
	return w
}

// setMix gives the worker the operations it runs, with a latency histogram
// for each.
func (w *worker) setMix(mix []Weighted) {
	w.mix = newChooser(mix)
	w.perOp = make([]opStats, len(w.mix.ops))
	for i, op := range w.mix.ops {
		w.perOp[i] = opStats{op: op, hist: NewHistogram()}
	}
}

// do performs one operation of kind op on item n (ignored by OpCreate and
// OpQueryCross) and reads every response. It returns the operation's
// status, or an error if the transport failed. It records the charge and,
// for 429s, the retry delay; it does not touch the latency histograms.
func (w *worker) do(op OpKind, n int) (int, error) {
	return w.doAt(op, n, time.Now())
}

// doAt is do with the first request signed at now. An operation of several
// requests stops at the first that is not 2xx, whose status it returns.
func (w *worker) doAt(op OpKind, n int, now time.Time) (int, error) {
	switch op {
	case OpTrivial:
		c := w.newCall()
		c.method, c.path, c.rawPath = http.MethodGet, "/", "/"
		return w.roundTrip(nil, now)
	case OpRead:
		return w.read(n, now)
	case OpUpsert:
		return w.write(n, 0, true, now)
	case OpCreate:
		m := w.ks.ins.issue()
		st, err := w.write(int(m), 0, false, now)
		w.ks.ins.ack(m)
		return st, err
	case OpRMW:
		return w.rmw(n, now)
	case OpQueryPK, OpQueryCross, OpVector:
		return w.query(op, n, 0, now)
	case OpScan:
		return w.query(op, n, 1+w.rng.IntN(MaxScanLength), now)
	case OpSproc:
		c := w.newCall()
		c.method, c.path, c.rawPath = http.MethodPost, w.ks.sprocPath, w.ks.sprocRawPath
		c.pk = w.ks.pkHeader[w.rng.IntN(PartitionKeys)] // a uniform partition key; n is unused
		c.body = append(w.s.buffer(), "[]"...)
		return w.roundTrip(w.ks.sprocPOST, now)
	}
	panic("BUG: unknown op " + strconv.Itoa(int(op)))
}

// newCall clears and returns the worker's call.
func (w *worker) newCall() *call {
	w.call = call{}
	return &w.call
}

// read sends GET .../docs/{id} of item n.
func (w *worker) read(n int, now time.Time) (int, error) {
	t := w.ks.item(n)
	c := w.newCall()
	c.method, c.path, c.rawPath = http.MethodGet, t.path, t.rawPath
	c.pk = w.ks.pkHeader[n%PartitionKeys]
	return w.roundTrip(t.get, now)
}

// write creates (POST) or upserts item n with version v.
func (w *worker) write(n int, v uint64, upsert bool, now time.Time) (int, error) {
	pk := n % PartitionKeys
	w.idBuf = w.ks.appendID(w.idBuf[:0], n)
	c := w.newCall()
	c.method, c.path, c.rawPath = http.MethodPost, w.ks.docsPath, w.ks.docsRawPath
	c.pk, c.upsert = w.ks.pkHeader[pk], upsert
	c.body = appendBody(w.s.buffer(), w.idBuf, w.ks.pkName[pk], n, v, w.o.ItemSize, w.ks.pad)
	return w.roundTrip(w.ks.docsPOST, now)
}

// rmw reads item n and replaces it (PUT .../docs/{id}) with its version
// incremented, on the condition that it is still the version read (If-Match:
// the etag of the read). A concurrent change makes the replace fail with 412.
func (w *worker) rmw(n int, now time.Time) (int, error) {
	st, err := w.read(n, now)
	if err != nil || st != http.StatusOK {
		return st, err
	}
	v := parseVersion(w.reply.body)
	t := w.ks.item(n)
	pk := n % PartitionKeys
	w.idBuf = w.ks.appendID(w.idBuf[:0], n)
	c := w.newCall()
	c.method, c.path, c.rawPath = http.MethodPut, t.path, t.rawPath
	c.pk, c.ifMatch = w.ks.pkHeader[pk], w.reply.etag
	c.body = appendBody(w.s.buffer(), w.idBuf, w.ks.pkName[pk], n, v+1, w.o.ItemSize, w.ks.pad)
	return w.roundTrip(t.put, w.clk.now())
}

// query runs one query to its end, following x-ms-continuation from page
// to page: the items of item n's partition key (OpQueryPK), the top 10 by n
// over all partitions (OpQueryCross), or the first scanLen items of item n's
// partition key from n on (OpScan).
func (w *worker) query(op OpKind, n, scanLen int, now time.Time) (int, error) {
	pk := n % PartitionKeys
	var cont []byte
	for {
		c := w.newCall()
		c.method, c.path, c.rawPath = http.MethodPost, w.ks.docsPath, w.ks.docsRawPath
		c.query, c.continuation, c.pageSize = true, cont, w.ks.pageSize
		b := w.s.buffer()
		switch op {
		case OpQueryPK:
			c.pk = w.ks.pkHeader[pk]
			b = append(append(append(b, queryPKPrefix...), w.ks.pkName[pk]...), queryPKSuffix...)
		case OpQueryCross:
			c.crossPartition = true
			b = append(b, queryCross...)
		case OpVector:
			c.crossPartition = true
			if cont == nil {
				w.vecBuf = w.vecBuf[:0]
				for i := range VectorDims {
					if i > 0 {
						w.vecBuf = append(w.vecBuf, ',')
					}
					w.vecBuf = strconv.AppendFloat(w.vecBuf, math.Round((w.rng.Float64()*2-1)*1000)/1000, 'g', -1, 64)
				}
			}
			b = append(append(append(b, queryVectorPrefix...), w.vecBuf...), queryVectorSuffix...)
		case OpScan:
			c.pk = w.ks.pkHeader[pk]
			b = strconv.AppendInt(append(b, scanPrefix...), int64(scanLen), 10)
			b = append(append(append(b, scanMiddle...), w.ks.pkName[pk]...), scanMiddle2...)
			b = append(strconv.AppendInt(b, int64(n), 10), scanSuffix...)
		}
		c.body = b
		st, err := w.roundTrip(w.ks.docsPOST, now)
		if err != nil || st < 200 || st >= 300 {
			return st, err
		}
		w.cur.rows += uint64(w.reply.itemCount)
		if len(w.reply.continuation) == 0 {
			return st, nil
		}
		cont = w.reply.continuation // in the sender's buffer until the next send
		now = w.clk.now()
	}
}

// roundTrip signs w.call for res (unless res is nil: an unsigned request)
// at now, sends it and accounts for its charge.
func (w *worker) roundTrip(res *Resource, now time.Time) (int, error) {
	c := &w.call
	if res != nil {
		c.signed = true
		c.date, c.authorization = w.signer.Sign(res, now)
		c.activity = w.acts[w.reqs%activityIDs]
	}
	w.reqs++
	w.cur.requests++
	r := &w.reply
	if err := w.s.send(c, r); err != nil {
		return 0, err
	}
	w.stats.charge.Add(r.charge)
	w.cur.charge += r.charge
	if r.status == http.StatusTooManyRequests {
		w.retryAfter = 10 * time.Millisecond
		if r.retryAfter >= 0 {
			w.retryAfter = r.retryAfter
		}
	}
	return r.status, nil
}

// parseVersion returns the "v" of an item body (0 if it has none).
func parseVersion(body []byte) uint64 {
	i := bytes.Index(body, []byte(`"v":`))
	if i < 0 {
		return 0
	}
	var v uint64
	for _, ch := range body[i+4:] {
		switch {
		case ch >= '0' && ch <= '9':
			v = v*10 + uint64(ch-'0')
		case ch == ' ' && v == 0:
		default:
			return v
		}
	}
	return v
}

// parseCharge parses a request charge ("4.95") into 1/10000 RU; it returns
// 0 for anything else.
func parseCharge[T string | []byte](s T) uint64 {
	var v uint64
	frac := -1
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; {
		case ch >= '0' && ch <= '9':
			if frac >= 4 {
				continue // beyond 1/10000: truncated
			}
			v = v*10 + uint64(ch-'0')
			if frac >= 0 {
				frac++
			}
		case ch == '.' && frac < 0:
			frac = 0
		default:
			return 0
		}
	}
	if frac < 0 {
		frac = 0
	}
	for ; frac < 4; frac++ {
		v *= 10
	}
	return v
}

// parseRetryAfter parses x-ms-retry-after-ms; -1 if absent or malformed.
func parseRetryAfter(s string) time.Duration {
	if s == "" {
		return -1
	}
	ms, err := strconv.Atoi(s)
	if err != nil || ms < 0 {
		return -1
	}
	return time.Duration(ms) * time.Millisecond
}

// lastMessage is the error message of the last response body.
func (w *worker) lastMessage() string {
	r := response{body: w.reply.body}
	return r.message()
}

// take claims one operation from the run's budget; false when none is left.
func (w *worker) take() bool {
	return w.budget == nil || w.budget.Add(-1) >= 0
}

// loop sends operations until deadline, until ctx is done or until the
// operation budget runs out: back to back in a closed loop, or in an open
// loop (period > 0) one every period from start+phase on, whether or not
// the previous ones have been answered by then. An open-loop operation that
// cannot start on time (its worker is still busy) starts as soon as it can,
// and its latency runs from its intended start, so the time it queued counts
// (the correction for coordinated omission of wrk2 and HdrHistogram).
func (w *worker) loop(ctx context.Context, start, deadline time.Time) {
	defer w.s.close()
	s := &w.stats
	s.byStatus = map[int]uint64{}
	s.samples = map[int]string{}
	if w.period <= 0 {
		for ctx.Err() == nil {
			t0 := w.clk.now()
			if !t0.Before(deadline) || !w.take() {
				return
			}
			if !w.perform(ctx, t0, t0, deadline) {
				return
			}
		}
		return
	}
	next := start.Add(time.Duration(w.phase))
	for k := 1; ctx.Err() == nil && next.Before(deadline) && w.take(); k++ {
		now := w.clk.now()
		if d := next.Sub(now); d > 0 {
			w.clk.sleep(ctx, d)
			if ctx.Err() != nil {
				return
			}
			now = w.clk.now()
		}
		if lag := now.Sub(next); lag > scheduleSlack {
			s.behind.Add(1)
			s.maxLag = max(s.maxLag, lag)
		}
		if !w.perform(ctx, next, now, time.Time{}) {
			return
		}
		next = start.Add(time.Duration(w.phase + float64(k)*w.period))
	}
}

// perform runs one operation of the mix, started at now and due at
// intended, and records its outcome. After a 429 it waits as long as the
// server asks (at most maxThrottleWait, and not past throttleUntil; an open
// loop passes the zero time and does not wait: its schedule decides). It
// returns false when the worker must stop.
func (w *worker) perform(ctx context.Context, intended, now, throttleUntil time.Time) bool {
	s := &w.stats
	i := w.mix.next(w.rng)
	op := w.mix.ops[i]
	n := 0
	switch op {
	case OpRead, OpUpsert, OpRMW, OpQueryPK, OpScan:
		n = w.keys.next(w.rng)
	}
	w.cur = &w.perOp[i]
	st, err := w.doAt(op, n, now)
	lat := w.clk.now().Sub(intended)
	ps := w.cur
	w.cur = &w.scratch
	switch {
	case err != nil:
		if ctx.Err() != nil || errors.Is(err, context.Canceled) {
			return false
		}
		ps.failed++
		s.failed.Add(1)
		s.transport++
		if s.transErr == "" {
			s.transErr = err.Error()
		}
		w.clk.sleep(ctx, time.Millisecond) // do not spin on a dead server
	case st >= 200 && st < 300:
		ps.hist.Record(lat)
	case st == http.StatusTooManyRequests:
		// Wait as long as the server asks before the next request, as the
		// SDKs do before they retry (at most maxThrottleWait, so that the
		// run still ends on time).
		ps.throttled++
		s.throttled.Add(1)
		if !throttleUntil.IsZero() {
			w.clk.sleep(ctx, min(w.retryAfter, maxThrottleWait, throttleUntil.Sub(w.clk.now())))
		}
	default:
		ps.failed++
		s.failed.Add(1)
		s.byStatus[st]++
		if _, ok := s.samples[st]; !ok {
			s.samples[st] = w.lastMessage()
		}
	}
	return true
}
