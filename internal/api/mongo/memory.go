package mongo

import (
	"errors"

	"github.com/parsecdb/parsec/internal/engine"
)

// Memory a command holds while it runs. The documents a sort, a
// findAndModify with a sort or an aggregation gathers before it answers
// (their BSON size, up to maxBufferedBytes for one operation) are counted
// in the server's query memory, the account the NoSQL API's queries share
// (engine.Engine.HoldQueryMemory, bounded by --query-memory), so that
// many such commands at once cannot hold more than the server allows. The
// command releases them when it ends; what its cursor keeps after that is
// counted in the cursor quotas (cursors.go).

// hold counts n more bytes (n < 0: fewer) that the command holds. Past
// the server's query memory it counts nothing and fails: with code 292
// QueryExceededMemoryLimitNoDiskUseAllowed when the command alone would
// hold more than the server allows every query together, as mongod
// answers an operation over its own limit (it would fail again); with
// code 146 ExceededMemoryLimit when the other queries running hold the
// rest, as the cursor quotas answer (a retry once they are over may
// succeed). The codes are mongod's
// (https://github.com/mongodb/mongo/blob/master/src/mongo/base/error_codes.yml).
func (r *request) hold(n int64) error {
	if n > 0 {
		if max := r.s.eng.QueryMemory(); max > 0 && r.held+n > max {
			return newErr(292, "QueryExceededMemoryLimitNoDiskUseAllowed", "the operation would hold more than %d bytes of documents in memory, what all the queries running on this server may hold together; add a filter or a limit", max)
		}
		if err := r.s.eng.HoldQueryMemory(n); err != nil {
			if te := (*engine.ThrottledError)(nil); errors.As(err, &te) {
				return newErr(146, "ExceededMemoryLimit", "the operation would hold %d more bytes of documents in memory: %s; retry once other operations are over, or add a filter or a limit", n, te.Reason)
			}
			return err
		}
	} else {
		n = max(n, -r.held)
		r.s.eng.HoldQueryMemory(n)
	}
	r.held += n
	return nil
}

// release gives back all the command holds, once it is over.
func (r *request) release() { r.hold(-r.held) }
