package gateway

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/replication"
	"github.com/parsecdb/parsec/internal/replication/transport"
)

// Cluster is what the gateway needs of the cluster it runs in (package
// cluster's Node implements it). A single node has none: the gateway then
// runs everything on the local engine.
type Cluster interface {
	// ID is this node's id.
	ID() uint64
	// LeaderHint is the leader of group as this node last learned it, 0
	// if it knows none or holds no replica.
	LeaderHint(group uint64) uint64
	// Leader waits, up to ctx, for a leader of group other than not (0:
	// any) and returns it.
	Leader(ctx context.Context, group, not uint64) (uint64, error)
	// Hosted returns nil if this node holds a replica of p, else an error
	// saying which nodes do (p.Replicas).
	Hosted(p *engine.Partition) error
	// ReadIndex returns a linearizable read index of group once this node
	// has applied it.
	ReadIndex(ctx context.Context, group uint64) (uint64, error)
	// Lag is what this node's replica of group knows of its lag.
	Lag(group uint64) (replication.LagInfo, error)
	// SyncCatalog returns once this node's catalog has applied everything
	// the meta group had committed when it was called.
	SyncCatalog(ctx context.Context) error
	// Send makes the typed call op to node id over the cluster transport;
	// an error wrapping transport.ErrNotDelivered says the node never got
	// it.
	Send(ctx context.Context, id uint64, op string, payload []byte) ([]byte, error)
	// Handle sets the handler of the typed call op.
	Handle(op string, h func(payload []byte) ([]byte, error))
}

// CallCommand is the typed cluster call that carries a forwarded command.
const CallCommand = "command"

// Bounds of forwarding.
const (
	// maxHops bounds how often a command is sent on (leadership can move
	// while it travels).
	maxHops = 3
	// maxSends bounds the sends of one command by one gateway: a leader
	// that cannot be reached is skipped, a refusal names the next, and a
	// send of unknown outcome is sent again (its id makes that safe).
	maxSends = 24
	// unknownPause is the pause before a command of unknown outcome is
	// sent again.
	unknownPause = 50 * time.Millisecond
	// LeaderWait bounds how long a command waits for a leader to appear
	// (an election) before it fails.
	LeaderWait = 5 * time.Second
	// serveTimeout bounds the handling of a forwarded command.
	serveTimeout = 20 * time.Second
)

// Gateway runs the commands and makes the reads of one node's APIs.
type Gateway struct {
	eng *engine.Engine
	cl  Cluster // nil on a single node
	// leaderWait is LeaderWait but in tests.
	leaderWait time.Duration
	// idPrefix and ids make the ids of the commands this node receives
	// (newID).
	idPrefix string
	ids      atomic.Uint64

	// Counters for /metrics.
	forwarded          atomic.Int64 // commands sent to another node
	served             atomic.Int64 // commands run for another node
	boundedReadsLocal  atomic.Int64
	boundedReadsLeader atomic.Int64
}

// New returns the gateway of engine e in cluster cl (nil on a single
// node), and makes it serve the commands other nodes forward.
func New(e *engine.Engine, cl Cluster) *Gateway {
	g := &Gateway{eng: e, cl: cl, leaderWait: LeaderWait}
	if cl != nil {
		g.idPrefix = fmt.Sprintf("%x.%x.", cl.ID(), rand.Uint64())
		cl.Handle(CallCommand, g.serve)
	}
	return g
}

// Clustered reports whether the gateway runs in a cluster of nodes.
func (g *Gateway) Clustered() bool { return g != nil && g.cl != nil }

// Stats are the gateway's counters.
type Stats struct {
	Forwarded, Served                     int64
	BoundedReadsLocal, BoundedReadsLeader int64
}

// Stats returns the gateway's counters.
func (g *Gateway) Stats() Stats {
	return Stats{Forwarded: g.forwarded.Load(), Served: g.served.Load(),
		BoundedReadsLocal: g.boundedReadsLocal.Load(), BoundedReadsLeader: g.boundedReadsLeader.Load()}
}

// Write runs cmd on container c where its partition's
// leader is: here, when this node leads it (or on a single node), else on
// the leader's engine, to which the encoded command is sent over the
// cluster transport. It returns the command's results and the session of
// the partition that applied it, as Container.Execute does (rangeID as
// there). A refusal by a node that no longer leads is followed to the
// leader it names; a leader that cannot be reached is waited out (up to
// LeaderWait for a new one). A send whose outcome cannot be known (the
// leader went away after it received the command) fails with
// engine.ErrOutcomeUnknown.
func (g *Gateway) Write(ctx context.Context, c *engine.Container, cmd *engine.Command, rangeID string) ([]engine.OpResult, engine.Session, error) {
	return g.write(ctx, c, cmd, rangeID, 0)
}

func (g *Gateway) write(ctx context.Context, c *engine.Container, cmd *engine.Command, rangeID string, hops int) ([]engine.OpResult, engine.Session, error) {
	if g.cl == nil || len(cmd.Ops) == 0 {
		return c.Execute(cmd, rangeID)
	}
	if cmd.ID == "" {
		cmd.ID = g.newID()
	}
	p := c.PartitionFor(cmd.Ops[0].EPK)
	if rangeID != "" {
		named, err := c.PartitionByID(rangeID)
		if err != nil {
			return c.Execute(cmd, rangeID) // its error: gone, or unknown
		}
		p = named
	}
	group, self := p.GroupID(), g.cl.ID()
	var target uint64
	var cands []uint64 // nodes to try in turn, for a partition not hosted here
	if g.cl.Hosted(p) != nil {
		cands = slices.DeleteFunc(slices.Clone(p.Replicas()), func(id uint64) bool { return id == self })
	} else if lead := g.cl.LeaderHint(group); lead != 0 && lead != self {
		target = lead
	} else {
		target = self
	}
	// A leader is waited for up to leaderWait; a command of unknown
	// outcome is sent again for up to twice that in all.
	ctx, cancel := context.WithTimeout(ctx, 3*g.leaderWait)
	defer cancel()
	var skip uint64
	var last error
	for range maxSends {
		if target == 0 {
			switch {
			case len(cands) > 0:
				target, cands = cands[0], cands[1:]
			case len(p.Replicas()) > 0 && g.cl.Hosted(p) != nil:
				return nil, engine.Session{}, fmt.Errorf("%w: no node holding partition key range %s could be reached: %w", engine.ErrUnavailable, p.Range().ID, last)
			default:
				lctx, lcancel := context.WithTimeout(ctx, g.leaderWait)
				l, err := g.cl.Leader(lctx, group, skip)
				lcancel()
				if err != nil {
					return nil, engine.Session{}, fmt.Errorf("%w: partition key range %s has no leader: %w", engine.ErrUnavailable, p.Range().ID, errors.Join(err, last))
				}
				target = l
			}
		}
		if target == self {
			res, s, err := c.Execute(cmd, rangeID)
			var nl *replication.NotLeaderError
			switch {
			case errors.Is(err, engine.ErrOutcomeUnknown) && ctx.Err() == nil:
				// Its id makes it safe to send again: see unknown below.
				last, target = err, 0
				pause(ctx, unknownPause)
				continue
			case !errors.Is(err, engine.ErrNotLeader) || !errors.As(err, &nl) || hops >= maxHops:
				return res, s, err
			}
			last, target = err, nl.Leader
			if target == self {
				target, skip = 0, self
			}
			continue
		}
		if hops >= maxHops {
			return nil, engine.Session{}, fmt.Errorf("%w: the write was sent on %d times while the leadership of its partition moved: %w", engine.ErrUnavailable, hops, last)
		}
		g.forwarded.Add(1)
		res, s, err := g.send(ctx, target, c, cmd, rangeID, hops+1)
		var nl *replication.NotLeaderError
		switch {
		case err == nil:
			return res, s, nil
		case errors.Is(err, transport.ErrNotDelivered):
			// Never received: wait for another leader and send it there.
			last, skip, target = err, target, 0
			pause(ctx, 20*time.Millisecond)
		case errors.Is(err, engine.ErrOutcomeUnknown) && ctx.Err() == nil:
			// The command may have committed, or may yet: its leader died
			// or lost the leadership with it in flight, or the answer was
			// lost. It is sent again, with its id, to the leader there is
			// now (the same one, if it still leads), whose partition
			// answers a command it applied from its outcome table and
			// applies one it did not; once that retry commits, in the
			// leader's term, the first attempt can no longer commit
			// (engine/outcome.go). So the client gets the real outcome.
			last, target = err, 0
			pause(ctx, unknownPause)
		case errors.Is(err, engine.ErrNotLeader) && errors.As(err, &nl):
			last, target = err, nl.Leader
			if target == skip || target == 0 {
				target = 0
			}
		default:
			return res, s, err
		}
	}
	return nil, engine.Session{}, fmt.Errorf("%w: the write could not reach its partition's leader: %w", engine.ErrUnavailable, last)
}

// newID returns an id for a command this node received: unique in the
// cluster (the node's id and a random number drawn at start, then a
// count).
func (g *Gateway) newID() string {
	return g.idPrefix + strconv.FormatUint(g.ids.Add(1), 36)
}

// pause waits d, or until ctx ends.
func pause(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// send sends cmd to node id and returns its answer.
func (g *Gateway) send(ctx context.Context, id uint64, c *engine.Container, cmd *engine.Command, rangeID string, hops int) ([]engine.OpResult, engine.Session, error) {
	info := c.Info()
	req := encodeRequest(request{hops: hops, db: info.DB, coll: info.ID, rid: info.Rid, rangeID: rangeID, cmd: engine.EncodeCommand(nil, cmd)})
	out, err := g.cl.Send(ctx, id, CallCommand, req)
	if err != nil {
		if errors.Is(err, transport.ErrNotDelivered) {
			return nil, engine.Session{}, fmt.Errorf("node %d could not be reached: %w", id, err)
		}
		var ce *transport.CallError
		if errors.As(err, &ce) {
			// The node ran nothing: it takes no commands yet (it is
			// starting), or refused the request as malformed.
			return nil, engine.Session{}, fmt.Errorf("node %d refused the forwarded write (%s): %w", id, ce.Msg, transport.ErrNotDelivered)
		}
		return nil, engine.Session{}, fmt.Errorf("%w: node %d received the write and did not answer: %w", engine.ErrOutcomeUnknown, id, err)
	}
	rep, err := decodeReply(out)
	if err != nil {
		return nil, engine.Session{}, fmt.Errorf("%w: node %d answered the forwarded write with %w", engine.ErrOutcomeUnknown, id, err)
	}
	return rep.res, rep.session, rep.err
}

// serve runs a command another node forwarded (the CallCommand handler).
func (g *Gateway) serve(payload []byte) ([]byte, error) {
	req, err := decodeRequest(payload)
	if err != nil {
		return nil, err
	}
	cmd, err := engine.DecodeCommand(req.cmd)
	if err != nil {
		return nil, fmt.Errorf("the forwarded command does not decode: %w", err)
	}
	g.served.Add(1)
	ctx, cancel := context.WithTimeout(context.Background(), serveTimeout)
	defer cancel()
	c, err := g.eng.Container(req.db, req.coll)
	if errors.Is(err, engine.ErrNotFound) {
		// Created through another node a moment ago: the catalog follows.
		if g.cl.SyncCatalog(ctx) == nil {
			c, err = g.eng.Container(req.db, req.coll)
		}
	}
	if err == nil && c.Info().Rid != req.rid {
		err = fmt.Errorf("%w: container %s of database %s was deleted and created again", engine.ErrNotFound, req.coll, req.db)
	}
	if err != nil {
		return encodeReply(reply{err: err}), nil
	}
	res, s, err := g.write(ctx, c, cmd, req.rangeID, req.hops)
	return encodeReply(reply{res: res, session: s, err: err}), nil
}
