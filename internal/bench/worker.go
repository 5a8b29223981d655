package bench

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// workerStats are one worker's counters. The worker is their only writer;
// the counters are atomic so that the progress line can read them live.
type workerStats struct {
	hist      *Histogram    // latency of successful (2xx) requests
	ok        atomic.Uint64 // 2xx responses
	throttled atomic.Uint64 // 429 responses
	failed    atomic.Uint64 // other non-2xx responses and transport errors
	charge    atomic.Uint64 // sum of x-ms-request-charge, in 1/10000 RU

	// Written by the worker only, read after it has stopped.
	byStatus  map[int]uint64
	samples   map[int]string // the first error message per status
	transport uint64         // transport errors (status 0)
	transErr  string         // the first transport error
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
	// body is nil for a request without one; otherwise it was appended to
	// the sender's buffer() and is sent as application/json.
	body []byte
}

// reply is what a sender read back. body is valid until the next send.
type reply struct {
	status int
	// charge is x-ms-request-charge in 1/10000 RU (0 if absent).
	charge uint64
	// retryAfter is x-ms-retry-after-ms, or -1 if absent.
	retryAfter time.Duration
	body       []byte
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

// worker sends the requests of a workload, one at a time, through its
// sender. It builds each request from precomputed parts without allocating
// (a signature cache miss aside). A worker is not safe for concurrent use.
type worker struct {
	id   int
	c    *client
	o    *Options
	ks   *keyspace
	run  string // the run id in created items' ids
	conc uint64
	seq  uint64 // creates sent
	reqs uint64 // requests sent

	signer *Signer
	rng    *rand.Rand
	mix    chooser
	s      sender
	acts   []string
	idBuf  []byte
	call   call
	reply  reply

	// retryAfter is the delay the last 429 asked for.
	retryAfter time.Duration
	stats      workerStats
}

// maxThrottleWait bounds the pause of a worker after a 429.
const maxThrottleWait = time.Second

// activityIDs is how many distinct x-ms-activity-id values a worker cycles
// through (the SDKs send a fresh one per request; the server only echoes it).
const activityIDs = 64

func newWorker(ctx context.Context, id int, c *client, o *Options, ks *keyspace, seed uint64) *worker {
	w := &worker{
		id: id, c: c, o: o, ks: ks, conc: uint64(o.Concurrency),
		signer: NewSigner(c.key),
		rng:    rand.New(rand.NewPCG(seed, uint64(id)+1)),
		idBuf:  make([]byte, 0, 64),
	}
	w.stats.hist = NewHistogram()
	for range activityIDs {
		w.acts = append(w.acts, newActivityID())
	}
	if o.Client == ClientRaw {
		w.s = newRawSender(ctx, c, o.ItemSize)
	} else {
		w.s = newNetHTTPSender(ctx, c, o.ItemSize)
	}
	return w
}

// do sends one request of kind op (n is the loaded item for OpRead and
// OpUpsert) and reads the whole response. It returns the status, or an
// error if the transport failed. It records the charge and, for 429s, the
// retry delay; it does not touch the latency histogram.
func (w *worker) do(op OpKind, n int) (int, error) {
	return w.doAt(op, n, time.Now())
}

// doAt is do with the request signed at now.
func (w *worker) doAt(op OpKind, n int, now time.Time) (int, error) {
	c := &w.call
	*c = call{}
	var res *Resource
	switch op {
	case OpTrivial:
		c.method, c.path, c.rawPath = http.MethodGet, "/", "/"
	case OpRead:
		t := w.ks.item(n)
		c.method, c.path, c.rawPath, res = http.MethodGet, t.path, t.rawPath, t.get
		c.pk = w.ks.pkHeader[n%PartitionKeys]
	case OpUpsert, OpCreate:
		var pk int
		if op == OpUpsert {
			w.idBuf = appendItemID(w.idBuf[:0], n)
			pk = n % PartitionKeys
			c.upsert = true
		} else {
			g := w.seq*w.conc + uint64(w.id)
			w.seq++
			w.idBuf = append(append(append(w.idBuf[:0], 'c'), w.run...), '-')
			w.idBuf = strconv.AppendUint(w.idBuf, g, 10)
			pk = int(g % PartitionKeys)
		}
		c.method, c.path, c.rawPath, res = http.MethodPost, w.ks.docsPath, w.ks.docsRawPath, w.ks.docsPOST
		c.pk = w.ks.pkHeader[pk]
		c.body = appendBody(w.s.buffer(), w.idBuf, w.ks.pkName[pk], w.o.ItemSize, w.ks.pad)
	default:
		panic("BUG: unknown op " + strconv.Itoa(int(op)))
	}
	if res != nil {
		c.signed = true
		c.date, c.authorization = w.signer.Sign(res, now)
		c.activity = w.acts[w.reqs%activityIDs]
	}
	w.reqs++
	r := &w.reply
	if err := w.s.send(c, r); err != nil {
		return 0, err
	}
	w.stats.charge.Add(r.charge)
	if r.status == http.StatusTooManyRequests {
		w.retryAfter = 10 * time.Millisecond
		if r.retryAfter >= 0 {
			w.retryAfter = r.retryAfter
		}
	}
	return r.status, nil
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

// loop runs the closed loop until stop is set or ctx is done.
func (w *worker) loop(ctx context.Context, stop *atomic.Bool) {
	defer w.s.close()
	s := &w.stats
	s.byStatus = map[int]uint64{}
	s.samples = map[int]string{}
	for !stop.Load() && ctx.Err() == nil {
		op := w.mix.next(w.rng)
		n := 0
		if op == OpRead || op == OpUpsert {
			n = w.rng.IntN(w.o.Items)
		}
		t0 := time.Now()
		st, err := w.doAt(op, n, t0)
		lat := time.Since(t0)
		switch {
		case err != nil:
			if ctx.Err() != nil || errors.Is(err, context.Canceled) {
				return
			}
			s.failed.Add(1)
			s.transport++
			if s.transErr == "" {
				s.transErr = err.Error()
			}
			time.Sleep(time.Millisecond) // do not spin on a dead server
		case st >= 200 && st < 300:
			s.hist.Record(lat)
			s.ok.Add(1)
		case st == http.StatusTooManyRequests:
			// Wait as long as the server asks before the next request, as
			// the SDKs do before they retry (at most maxThrottleWait, so
			// that the run still ends on time).
			s.throttled.Add(1)
			select {
			case <-time.After(min(w.retryAfter, maxThrottleWait)):
			case <-ctx.Done():
			}
		default:
			s.failed.Add(1)
			s.byStatus[st]++
			if _, ok := s.samples[st]; !ok {
				s.samples[st] = w.lastMessage()
			}
		}
	}
}
