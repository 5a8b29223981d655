package gateway

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/replication"
)

// Level is a read's consistency level.
type Level int

// The consistency levels, strongest first (Cosmos DB's five).
const (
	Strong Level = iota
	BoundedStaleness
	Session
	ConsistentPrefix
	Eventual
)

// levelNames are the levels' names, as Cosmos DB spells them.
var levelNames = []string{"Strong", "BoundedStaleness", "Session", "ConsistentPrefix", "Eventual"}

// ParseLevel reads a level by its name (Strong, BoundedStaleness, Session,
// ConsistentPrefix, Eventual).
func ParseLevel(name string) (Level, bool) {
	for i, n := range levelNames {
		if n == name {
			return Level(i), true
		}
	}
	return 0, false
}

// ReadOptions say how fresh a read must be.
type ReadOptions struct {
	Level Level
	// MaxOps and MaxAge bound a BoundedStaleness read's lag: operations
	// and time.
	MaxOps int64
	MaxAge time.Duration
	// Session is, for a Session read, the LSN the client has seen of each
	// partition key range (its session token); empty: nothing to wait for.
	Session map[string]uint64
	// SessionWait bounds how long a Session read waits for this node's
	// replica to reach the client's session (DefaultSessionWait if zero).
	SessionWait time.Duration
}

// DefaultSessionWait is how long a Session read waits for its session by
// default.
const DefaultSessionWait = 2 * time.Second

// SessionNotAvailableError is a Session read whose session this node's
// replica of a partition has not reached within the wait: the client
// retries (Cosmos's 404/1002, which the SDKs retry elsewhere).
type SessionNotAvailableError struct {
	RangeID    string
	Have, Want uint64
}

func (e *SessionNotAvailableError) Error() string {
	return fmt.Sprintf("partition key range %s of this replica has applied LSN %d, the session needs %d", e.RangeID, e.Have, e.Want)
}

// Reads in a cluster. A node serves a read from its own replicas of the
// container's partitions, made fit for the read's consistency level first
// (PrepareRead):
//
//   - Strong: a ReadIndex of each partition's raft group (the leader
//     confirms its leadership with a round of heartbeats; a follower asks
//     it), awaited on this node, so the read sees every write acknowledged
//     before it began.
//   - Bounded staleness: each partition's replica here serves the read as
//     it stands if its lag (replication.LagInfo) is within the bounds
//     (boundedLocal, bounded.go, says why that keeps the read within K
//     operations and T time); a partition whose replica is not takes
//     Strong's path. Stats counts the reads served either way.
//   - Session: the session names each partition's LSN the client has
//     seen; this node waits, up to SessionWait, until its replica has
//     applied it, and otherwise fails with *SessionNotAvailableError. A
//     client reads its own writes through any node.
//   - Consistent prefix and eventual: any replica as it stands.

// PrepareRead makes this node's replicas of parts fit to serve a read
// with opts; nothing to do on a single node. A point read names its
// item's partition; queries and feeds, all of the container's. A
// partition this node holds no replica of fails with the cluster's
// Hosted error.
func (g *Gateway) PrepareRead(ctx context.Context, parts []*engine.Partition, opts ReadOptions) error {
	if g == nil || g.cl == nil {
		return nil
	}
	for _, p := range parts {
		if err := g.cl.Hosted(p); err != nil {
			return err
		}
	}
	switch opts.Level {
	case Strong, BoundedStaleness:
		bounded := opts.Level == BoundedStaleness
		ctx, cancel := context.WithTimeout(ctx, LeaderWait)
		defer cancel()
		viaLeader := false
		for _, p := range parts {
			if bounded {
				if l, err := g.cl.Lag(p.GroupID()); err == nil && boundedLocal(l, time.Now(), opts.MaxOps, opts.MaxAge) {
					continue
				}
				viaLeader = true
			}
			if err := g.readIndex(ctx, p.GroupID()); err != nil {
				return fmt.Errorf("%w: a strong read of partition key range %s could not be served: %w", engine.ErrUnavailable, p.Range().ID, err)
			}
		}
		switch {
		case !bounded:
		case viaLeader:
			g.boundedReadsLeader.Add(1)
		default:
			g.boundedReadsLocal.Add(1)
		}
	case Session:
		if len(opts.Session) == 0 {
			return nil
		}
		wait := opts.SessionWait
		if wait <= 0 {
			wait = DefaultSessionWait
		}
		deadline := time.Now().Add(wait)
		for _, p := range parts {
			lsn, ok := opts.Session[p.Range().ID]
			for ok && p.LSN() < lsn {
				if time.Now().After(deadline) || ctx.Err() != nil {
					return &SessionNotAvailableError{RangeID: p.Range().ID, Have: p.LSN(), Want: lsn}
				}
				time.Sleep(time.Millisecond)
			}
		}
	}
	return nil
}

// SyncCatalog returns once this node's catalog has caught up with the
// meta group (up to LeaderWait): a database or container created through
// another node is in the meta group's log when its creator answers, and
// reaches this node's memory a moment later. It fails on a single node,
// whose catalog is always current.
func (g *Gateway) SyncCatalog(ctx context.Context) error {
	if g == nil || g.cl == nil {
		return errSingleNode
	}
	ctx, cancel := context.WithTimeout(ctx, LeaderWait)
	defer cancel()
	return g.cl.SyncCatalog(ctx)
}

var errSingleNode = fmt.Errorf("a single node's catalog is always current")

// readIndex is the cluster's ReadIndex, waiting (up to ctx) while this
// node's replica of the group is not open yet: a node that has just
// restarted serves before it has reopened every group.
func (g *Gateway) readIndex(ctx context.Context, group uint64) error {
	for {
		_, err := g.cl.ReadIndex(ctx, group)
		if !errors.Is(err, replication.ErrGroupNotFound) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(10 * time.Millisecond):
		}
	}
}
