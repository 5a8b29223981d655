package cosmos

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/parsecdb/parsec/internal/engine"
)

// Reads in a cluster. A node serves a read from its own replicas of the
// container's partitions, made fit for the request's consistency level
// first (awaitReplicas):
//
//   - Strong: a ReadIndex of each partition's raft group (the leader
//     confirms its leadership with a round of heartbeats; a follower asks
//     it), awaited on this node, so the read sees every write acknowledged
//     before it began.
//   - Bounded staleness: each partition's replica here serves the read as
//     it stands if its lag (host.LagInfo: the committed entries it has not
//     applied, and how long ago it last held all its leader had committed)
//     is within the account's bounds (boundedLocal, bounded.go, says why
//     that keeps the read within K operations and T time); a partition
//     whose replica is not takes Strong's path. /metrics counts the reads
//     served either way.
//   - Session: the session token names each partition's LSN the client
//     has seen; this node waits, up to sessionWait, until its replica has
//     applied it, and otherwise answers 404 with substatus 1002
//     (ReadSessionNotAvailable), which the SDKs retry. A client reads its
//     own writes through any node.
//   - Consistent prefix and eventual: any replica as it stands.
const (
	sessionWait = 2 * time.Second
	// subReadSessionNotAvailable is the substatus of a 404 whose session
	// this replica has not reached.
	subReadSessionNotAvailable = 1002
)

// readLevel is the request's consistency level (checked by
// checkConsistency).
func (s *Server) readLevel(r *http.Request) string {
	if v := r.Header.Get(hConsistencyLevel); v != "" {
		if i := levelRank(v); i >= 0 {
			return ConsistencyLevels[i]
		}
	}
	return s.cfg.Consistency.Level
}

// awaitReplicas makes this node's replicas of parts fit to serve a read at
// the request's consistency level; nothing to do on a single node. A point
// read names its item's partition; queries and feeds, all of the
// container's.
func (s *Server) awaitReplicas(req *request, parts []*engine.Partition) error {
	n := s.cfg.Cluster
	if n == nil {
		return nil
	}
	for _, p := range parts {
		// A partition placed on other nodes (this one joined after its
		// container was created, or the replication factor is below the
		// members): one of them serves the read.
		if err := n.Hosted(p); err != nil {
			return err
		}
	}
	level := s.readLevel(req.r)
	switch level {
	case "Strong", "BoundedStaleness":
		// Bounded staleness: partitions whose replica here is within the
		// bounds are read as they stand (bounded.go); the others, as
		// strong.
		bounded := level == "BoundedStaleness"
		var maxOps int64
		var maxAge time.Duration
		if bounded {
			maxOps, maxAge = s.stalenessBounds()
		}
		ctx, cancel := context.WithTimeout(req.r.Context(), leaderWait)
		defer cancel()
		viaLeader := false
		for _, p := range parts {
			if bounded {
				if l, err := n.Lag(p.GroupID()); err == nil && boundedLocal(l, time.Now(), maxOps, maxAge) {
					continue
				}
				viaLeader = true
			}
			if _, err := n.ReadIndex(ctx, p.GroupID()); err != nil {
				return fmt.Errorf("%w: a strong read of partition key range %s could not be served: %w", engine.ErrUnavailable, p.Range().ID, err)
			}
		}
		switch {
		case !bounded:
		case viaLeader:
			s.boundedReadsLeader.Add(1)
		default:
			s.boundedReadsLocal.Add(1)
		}
	case "Session":
		want := parseSessionToken(req.r.Header.Get(hSessionToken))
		if len(want) == 0 {
			return nil
		}
		deadline := time.Now().Add(sessionWait)
		for _, p := range parts {
			lsn, ok := want[p.Range().ID]
			for ok && p.LSN() < lsn {
				if time.Now().After(deadline) || req.r.Context().Err() != nil {
					return &apiError{status: http.StatusNotFound, sub: subReadSessionNotAvailable, code: "NotFound",
						msg: fmt.Sprintf("The read session is not available for the input session token: partition key range %s of this replica has applied LSN %d, the session needs %d.", p.Range().ID, p.LSN(), lsn)}
				}
				time.Sleep(time.Millisecond)
			}
		}
	}
	return nil
}

// parseSessionToken reads a session token's LSN per partition key range:
// "<range>:<rest>" separated by commas, where rest is "-1#<lsn>" (Parsec's
// and the simple form) or "<version>#<lsn>#<region>=<lsn>..." (the
// vector form the SDKs may merge). Parts that do not parse are ignored:
// a token only ever asks for more than the replica may give.
func parseSessionToken(tok string) map[string]uint64 {
	if tok == "" {
		return nil
	}
	out := map[string]uint64{}
	for _, part := range strings.Split(tok, ",") {
		rangeID, rest, ok := strings.Cut(strings.TrimSpace(part), ":")
		if !ok {
			continue
		}
		_, rest, ok = strings.Cut(rest, "#")
		if !ok {
			continue
		}
		lsnText, _, _ := strings.Cut(rest, "#")
		lsn, err := strconv.ParseUint(lsnText, 10, 64)
		if err != nil {
			continue
		}
		if lsn > out[rangeID] {
			out[rangeID] = lsn
		}
	}
	return out
}

// catalogBehind reports, for an operation that failed with a 404 because
// this node's catalog lacks the database or container it names, whether
// the catalog has caught up with the meta group since, so that the
// operation is worth running again. A database or container created
// through another node is in the meta group's log when its creator
// answers, and reaches this node's memory a moment later: a client that
// creates through one node and uses it through another must not see a
// 404 meanwhile.
func (s *Server) catalogBehind(req *request, op operation, err error) bool {
	n := s.cfg.Cluster
	if n == nil || !errors.Is(err, engine.ErrNotFound) || !s.catalogMiss(op) {
		return false
	}
	ctx, cancel := context.WithTimeout(req.r.Context(), leaderWait)
	defer cancel()
	if n.SyncCatalog(ctx) != nil {
		return false
	}
	return !s.catalogMiss(op)
}

// catalogMiss reports whether this node lacks the database or container
// op names.
func (s *Server) catalogMiss(op operation) bool {
	switch {
	case op.db == "":
		return false
	case op.coll == "":
		_, err := s.engine.Database(op.db)
		return err != nil
	default:
		_, err := s.engine.Container(op.db, op.coll)
		return err != nil
	}
}
