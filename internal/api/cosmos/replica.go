package cosmos

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/gateway"
)

// Reads in a cluster are made fit for the request's consistency level by
// the gateway (gateway.Gateway.PrepareRead): this file maps the request's
// level, bounds and session token onto it, and its errors onto the
// service's (a session not reached is 404 with substatus 1002,
// ReadSessionNotAvailable, which the SDKs retry).
const (
	sessionWait = gateway.DefaultSessionWait
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

// readOptions are the gateway's read options of the request.
func (s *Server) readOptions(r *http.Request) gateway.ReadOptions {
	level := s.readLevel(r)
	o := gateway.ReadOptions{Level: gateway.Level(levelRank(level)), SessionWait: sessionWait}
	switch o.Level {
	case gateway.BoundedStaleness:
		o.MaxOps, o.MaxAge = s.stalenessBounds()
	case gateway.Session:
		o.Session = parseSessionToken(r.Header.Get(hSessionToken))
	}
	return o
}

// awaitReplicas makes this node's replicas of parts fit to serve a read at
// the request's consistency level (the gateway's PrepareRead); nothing to
// do on a single node. A point read names its item's partition; queries
// and feeds, all of the container's.
func (s *Server) awaitReplicas(req *request, parts []*engine.Partition) error {
	err := s.gw.PrepareRead(req.r.Context(), parts, s.readOptions(req.r))
	var sna *gateway.SessionNotAvailableError
	if errors.As(err, &sna) {
		return &apiError{status: http.StatusNotFound, sub: subReadSessionNotAvailable, code: "NotFound",
			msg: fmt.Sprintf("The read session is not available for the input session token: %v.", sna)}
	}
	return err
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
	if s.gw.SyncCatalog(req.r.Context()) != nil {
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

// stalenessBounds returns the account's bounds of bounded staleness, or
// the defaults when its level is another (a request may ask for bounded
// staleness under a Strong account).
func (s *Server) stalenessBounds() (int64, time.Duration) {
	k, t := s.cfg.Consistency.MaxStalenessPrefix, s.cfg.Consistency.MaxStalenessInterval
	if k <= 0 {
		k = DefaultMaxStalenessPrefix
	}
	if t <= 0 {
		t = DefaultMaxStalenessInterval
	}
	return k, t
}
