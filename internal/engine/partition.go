package engine

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parsecdb/parsec/internal/throughput"
)

// Partition is one physical partition: a contiguous EPK range of a container,
// with its own apply loop, durable state, request-unit budget and telemetry.
type Partition struct {
	c     *Container
	info  RangeInfo
	queue chan *request
	quit  chan struct{} // closed to stop the loop
	done  chan struct{} // closed when the loop has exited

	state   partState     // owned by the loop
	ix      *indexState   // the partition's index record, owned by the loop
	lsn     atomic.Uint64 // the last committed LSN, for session tokens
	commits atomic.Uint64 // batches committed: LSN / commits is the group size
	items   atomic.Int64  // committed item count, for telemetry
	bytes   atomic.Int64  // committed bytes, for telemetry and split decisions

	// retired is set once the partition has split; its loop then forwards
	// requests to its children.
	retired   atomic.Bool
	splitting atomic.Bool

	meter meter

	// The expired-item sweep's position (ttl.go).
	sweepMu   sync.Mutex
	sweepFrom []byte

	// repl is the apply state of a replicated partition (replicated.go).
	repl replState
}

// meter is a partition's request-unit budget and telemetry.
type meter struct {
	mu        sync.Mutex
	bucket    *throughput.Bucket
	topRU     *throughput.TopK
	lastDecay time.Time
	consumed  float64 // RU charged since start
	throttled uint64  // requests answered 429
}

// request is one queued command and, once done is closed, its outcome.
type request struct {
	cmd *Command
	// named is set when the client addressed this partition by range id: if
	// the range has split meanwhile, the client must refresh (410), since
	// its operations may now belong to different children.
	named bool
	res   []OpResult
	err   error
	// next is where a reindex command's chunk stopped: the key to go on
	// from, or nil when it reached the end of its span.
	next []byte
	// children are the ranges a split command made.
	children []RangeInfo
	done     chan struct{}
}

// Group commit limits: a group stops growing at this many commands or bytes.
const (
	maxGroupCommands = 512
	// A group is one entry of the partition's log, which a raft host
	// bounds (8 MiB by default): its commands stop at 2 MiB (an item of
	// the largest size runs alone), and their evaluated writes, a few times
	// that with index entries, mostly fit (evaluatedMaxBytes).
	maxGroupBytes = 2 << 20
)

// MaxCommandsPerEntry bounds the commands, each of which takes one LSN, a
// partition's log entry carries (its group commit): a replica
// behind by n entries is behind by at most n*MaxCommandsPerEntry LSNs.
const MaxCommandsPerEntry = maxGroupCommands

func (p *Partition) start(rate float64, now time.Time) {
	p.queue = make(chan *request, maxGroupCommands)
	p.quit = make(chan struct{})
	p.done = make(chan struct{})
	p.meter.bucket = throughput.NewBucket(rate, now)
	p.meter.topRU = throughput.NewTopK(hotKeys)
	p.meter.lastDecay = now
	p.items.Store(p.state.Items)
	p.bytes.Store(p.state.Bytes)
	p.c.e.groups.Store(p.GroupID(), p)
	go p.run()
}

// hotKeys is how many logical keys per partition telemetry reports.
const hotKeys = 10

// ID is the partition's range id.
func (p *Partition) ID() string { return p.info.ID }

// Range is the partition's range in the partition map.
func (p *Partition) Range() RangeInfo { return p.info }

// LSN is the last committed log sequence number of the partition.
func (p *Partition) LSN() uint64 { return p.lsn.Load() }

// Replicas returns the nodes its container's record places its replicas
// on (empty without a replicated catalog).
func (p *Partition) Replicas() []uint64 { return p.c.Info().Replicas }

// Session is the partition's current session: its range id and last
// committed LSN.
func (p *Partition) Session() Session { return Session{RangeID: p.info.ID, LSN: p.lsn.Load()} }

var errDeleted = notFound("the container was deleted")

// submit queues a request on the apply loop and waits until it is durable.
func (p *Partition) submit(r *request) ([]OpResult, error) {
	r.done = make(chan struct{})
	select {
	case <-p.quit:
		return nil, errDeleted
	default:
	}
	select {
	case p.queue <- r:
	case <-p.quit:
		return nil, errDeleted
	}
	select {
	case <-r.done:
	case <-p.done:
		// The loop has exited; a request queued after its last drain is
		// never answered.
		select {
		case <-r.done:
		default:
			return nil, errDeleted
		}
	}
	return r.res, r.err
}

func (p *Partition) run() {
	defer close(p.done)
	group := make([]*request, 0, maxGroupCommands)
	limit := maxGroupBytes
	for {
		var first *request
		select {
		case first = <-p.queue:
		case <-p.quit:
			p.drain()
			return
		}
		if p.retired.Load() {
			p.forward(first)
			continue
		}
		group = append(group[:0], first)
		size := cmdBytes(first.cmd)
		alone := runsAlone(first.cmd)
	drain:
		for !alone && len(group) < maxGroupCommands && size < limit {
			select {
			case r := <-p.queue:
				group = append(group, r)
				size += cmdBytes(r.cmd)
				alone = runsAlone(r.cmd)
			default:
				break drain
			}
		}
		if alone && len(group) > 1 {
			// The command that runs alone ends the group, in a batch of its own.
			p.commitGroup(group[:len(group)-1])
			p.commitGroup(group[len(group)-1:])
		} else {
			p.commitGroup(group)
		}
		for i := range group {
			group[i] = nil
		}
	}
}

// runsAlone reports whether a command runs in a batch of its own: a split,
// after which the partition's commands belong to its children, and a
// reindex chunk, which reads the committed items (see applyEntry).
func runsAlone(c *Command) bool { return c.Split != nil || c.Reindex != nil }

// drain answers every request still queued when the loop stops.
func (p *Partition) drain() {
	for {
		select {
		case r := <-p.queue:
			r.err = errDeleted
			close(r.done)
		default:
			return
		}
	}
}

// forward hands a request that reached a retired partition to the child
// that now owns it, or answers 410 if the client named this range.
func (p *Partition) forward(r *request) {
	if r.named || len(r.cmd.Ops) == 0 {
		r.err = fmt.Errorf("%w: partition key range %q has split; refresh the partition key ranges", ErrPartitionGone, p.info.ID)
		close(r.done)
		return
	}
	child := p.c.PartitionFor(r.cmd.Ops[0].EPK)
	select {
	case child.queue <- r:
	case <-child.quit:
		r.err = errDeleted
		close(r.done)
	}
}

func cmdBytes(c *Command) int {
	n := 0
	for i := range c.Ops {
		n += len(c.Ops[i].Body) + 64
	}
	return n
}
