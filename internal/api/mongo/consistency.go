package mongo

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/gateway"
)

// Reads in a cluster. Any node takes a client's commands: writes run on
// their partition's leader through the gateway, and a read is served from
// this node's replicas once the gateway has made them fit for the read's
// consistency level, which the command's readConcern picks:
//
//   - "linearizable", "majority" and "snapshot": Strong (a read index of
//     each partition's group: the read sees every write acknowledged
//     before it began, through whichever node);
//   - "local", "available", or none: the account's level (Config.Consistency,
//     the --consistency of the server; Session by default);
//   - afterClusterTime (a causally consistent session: the driver sends the
//     operationTime it last saw): Session, with the session's token.
//
// Causal consistency. MongoDB's operationTime is one cluster-wide
// timestamp; Parsec's session token is an LSN per partition. So the node
// keeps, for each logical session (lsid) that wrote through it, the
// partitions' LSNs its writes reached (the token, sessionTokens), and
// answers every command of a session with an operationTime (a timestamp
// of this node's, increasing). A read that carries afterClusterTime waits
// until this node's replicas have applied the session's token: it sees the
// session's own writes, wherever their leader was. A driver connected with
// directConnection=true sends every command of a session to one node, the
// one that holds its token; a session this node has no token of (it wrote
// nothing here, or its token was evicted) is read as Strong, which is
// stronger than it asked.
//
// hello reports a standalone that takes writes (isWritablePrimary): that is
// what every node of the cluster is to a client, as it forwards writes to
// their leaders itself; there is no replica set to discover.

// sessionTokens are the causal sessions' tokens of a node, bounded by
// count (maxSessionTokens: when full, the tokens idle longest, past
// sessionTokenIdle first, are dropped) and by the partitions one token
// names (maxTokenRanges).
type sessionTokens struct {
	mu sync.Mutex
	m  map[string]*sessionToken // by lsid
}

type sessionToken struct {
	used time.Time
	lsn  map[string]map[string]uint64 // container rid -> range id -> LSN
}

const (
	maxSessionTokens = 10_000
	maxTokenRanges   = 1_000
	sessionTokenIdle = 30 * time.Minute
)

// record adds a write's session to lsid's token.
func (t *sessionTokens) record(lsid, rid string, s engine.Session, now time.Time) {
	if lsid == "" || s.RangeID == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[string]*sessionToken{}
	}
	tok := t.m[lsid]
	if tok == nil {
		if len(t.m) >= maxSessionTokens {
			t.evict(now)
		}
		tok = &sessionToken{lsn: map[string]map[string]uint64{}}
		t.m[lsid] = tok
	}
	tok.used = now
	ranges := tok.lsn[rid]
	if ranges == nil {
		ranges = map[string]uint64{}
		tok.lsn[rid] = ranges
	}
	if _, ok := ranges[s.RangeID]; !ok && len(ranges) >= maxTokenRanges {
		return // a read then waits for less than it may: see lookup
	}
	ranges[s.RangeID] = max(ranges[s.RangeID], s.LSN)
}

// evict drops the idle tokens, and if none is, half of them.
func (t *sessionTokens) evict(now time.Time) {
	for k, tok := range t.m {
		if now.Sub(tok.used) > sessionTokenIdle {
			delete(t.m, k)
		}
	}
	for k := range t.m {
		if len(t.m) < maxSessionTokens/2 {
			break
		}
		delete(t.m, k)
	}
}

// lookup returns lsid's token for the container rid, and whether this
// node knows the session.
func (t *sessionTokens) lookup(lsid, rid string, now time.Time) (map[string]uint64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tok := t.m[lsid]
	if tok == nil {
		return nil, false
	}
	tok.used = now
	out := map[string]uint64{}
	for k, v := range tok.lsn[rid] {
		out[k] = v
	}
	return out, true
}

// opTimes makes the operationTime of the replies: seconds of this node's
// clock and a count, increasing.
type opTimes struct{ n atomic.Uint32 }

func (o *opTimes) next(now time.Time) bson.Timestamp {
	return bson.Timestamp{T: uint32(now.Unix()), I: o.n.Add(1)}
}

// lsid returns the command's logical session id, "" if it has none.
func (r *request) lsid() string {
	v, ok := r.get("lsid")
	if !ok {
		return ""
	}
	d, ok := v.(bson.D)
	if !ok {
		return ""
	}
	id, _ := lookupField(d, "id")
	if bin, ok := id.(bson.Binary); ok && len(bin.Data) > 0 && len(bin.Data) <= 64 {
		return string(bin.Data)
	}
	return ""
}

// readOptions maps the command's readConcern onto the gateway's read
// options for collection col (see above).
func (r *request) readOptions(col *coll) (gateway.ReadOptions, error) {
	o := gateway.ReadOptions{Level: r.s.level}
	v, ok := r.get("readConcern")
	if !ok {
		return o, nil
	}
	rc, isDoc := v.(bson.D)
	if !isDoc {
		return o, badValue("readConcern must be a document")
	}
	level, _ := lookupField(rc, "level")
	switch level {
	case nil, "local", "available":
	case "majority", "linearizable", "snapshot":
		o.Level = gateway.Strong
	default:
		return o, newErr(9, "FailedToParse", "unknown readConcern level %v: use local, available, majority, linearizable or snapshot", level)
	}
	if _, after := lookupField(rc, "afterClusterTime"); after && o.Level != gateway.Strong {
		tok, known := r.s.tokens.lookup(r.lsid(), col.c.Info().Rid, r.s.cfg.Now())
		if !known {
			o.Level = gateway.Strong
		} else if o.Level > gateway.Session {
			o.Level = gateway.Session
		}
		if o.Level == gateway.Session {
			o.Session = tok
		}
	}
	return o, nil
}

// prepareRead makes this node's replicas of col fit for the command's
// read (nothing to do on a single node).
func (r *request) prepareRead(col *coll) error {
	if !col.gw.Clustered() {
		return nil
	}
	o, err := r.readOptions(col)
	if err != nil {
		return err
	}
	err = col.gw.PrepareRead(context.Background(), col.c.Partitions(), o)
	var sna *gateway.SessionNotAvailableError
	if errors.As(err, &sna) {
		// A retryable read error for the drivers, and not one that says
		// the node changed state (which would drop its connections).
		return newErr(262, "ExceededTimeLimit", "this node has not caught up with the session yet (%v); retry", sna)
	}
	return err
}

// recordWrite adds a write's session to the command's causal session.
func (r *request) recordWrite(rid string, s engine.Session) {
	r.s.tokens.record(r.lsid(), rid, s, r.s.cfg.Now())
}
