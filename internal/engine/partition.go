package engine

import (
	"fmt"
	"sync/atomic"

	"github.com/parsecdb/parsec/internal/storage"
)

// Partition is one physical partition: a contiguous EPK range of a container,
// with its own apply loop and durable state.
type Partition struct {
	c     *Container
	info  RangeInfo
	queue chan *request
	quit  chan struct{} // closed to stop the loop
	done  chan struct{} // closed when the loop has exited

	state   partState     // owned by the loop
	lsn     atomic.Uint64 // the last committed LSN, for session tokens
	commits atomic.Uint64 // batches committed: LSN / commits is the group size
}

// request is one queued command and, once done is closed, its outcome.
type request struct {
	cmd  *Command
	res  []OpResult
	lsn  uint64
	err  error
	done chan struct{}
}

// Group commit limits: a group stops growing at this many commands or bytes.
const (
	maxGroupCommands = 512
	maxGroupBytes    = 32 << 20
)

func (p *Partition) start() {
	p.queue = make(chan *request, maxGroupCommands)
	p.quit = make(chan struct{})
	p.done = make(chan struct{})
	go p.run()
}

// ID is the partition's range id.
func (p *Partition) ID() string { return p.info.ID }

// Range is the partition's range in the partition map.
func (p *Partition) Range() RangeInfo { return p.info }

// LSN is the last committed log sequence number of the partition.
func (p *Partition) LSN() uint64 { return p.lsn.Load() }

// SessionToken is the partition's session token in Cosmos's form.
func (p *Partition) SessionToken() string {
	return fmt.Sprintf("%s:-1#%d", p.info.ID, p.lsn.Load())
}

// submit queues cmd on the apply loop and waits until it is durable.
func (p *Partition) submit(cmd *Command) ([]OpResult, error) {
	r := &request{cmd: cmd, done: make(chan struct{})}
	select {
	case p.queue <- r:
	case <-p.quit:
		return nil, notFound("the container was deleted")
	}
	select {
	case <-r.done:
	case <-p.done:
		select {
		case <-r.done:
		default:
			return nil, notFound("the container was deleted")
		}
	}
	return r.res, r.err
}

func (p *Partition) run() {
	defer close(p.done)
	group := make([]*request, 0, maxGroupCommands)
	for {
		var first *request
		select {
		case first = <-p.queue:
		case <-p.quit:
			return
		}
		group = append(group[:0], first)
		size := cmdBytes(first.cmd)
	drain:
		for len(group) < maxGroupCommands && size < maxGroupBytes {
			select {
			case r := <-p.queue:
				group = append(group, r)
				size += cmdBytes(r.cmd)
			default:
				break drain
			}
		}
		p.commitGroup(group)
		for i := range group {
			group[i] = nil
		}
	}
}

func cmdBytes(c *Command) int {
	n := 0
	for i := range c.Ops {
		n += len(c.Ops[i].Body) + 64
	}
	return n
}

// commitGroup applies a group of commands in order into one batch and commits
// it with one WAL sync, then answers every request.
func (p *Partition) commitGroup(group []*request) {
	ac := p.c.applyCtx()
	b := p.c.e.store.NewBatch()
	st := p.state
	var err error
	for _, r := range group {
		st.LSN++
		r.lsn = st.LSN
		r.res, r.err = apply(ac, b, r.cmd, st.LSN, &st)
		if r.err != nil {
			err = r.err
			break
		}
	}
	if err == nil {
		err = b.Set(storage.PartitionKey(ac.rid, p.info.ID), st.encode())
	}
	if err == nil {
		err = b.Commit()
	} else {
		b.Discard()
	}
	if err != nil {
		for _, r := range group {
			r.res, r.err = nil, fmt.Errorf("%w: cannot commit write: %v", ErrUnavailable, err)
		}
	} else {
		p.state = st
		p.lsn.Store(st.LSN)
		p.commits.Add(1)
	}
	for _, r := range group {
		close(r.done)
	}
}
