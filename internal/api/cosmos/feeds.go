package cosmos

import (
	"encoding/json"

	"github.com/parsecdb/parsec/internal/query/eval"
	"github.com/parsecdb/parsec/internal/query/exec"
)

// queryFeed answers a query over a feed of catalog resources (databases,
// containers): the feed is small, so the query runs over it in memory, in
// one page, with the evaluator item queries use; any alias works
// (SELECT * FROM root r WHERE r.id = @id).
func (s *Server) queryFeed(req *request, rid, key string, list []any) error {
	plan, _, err := readQuery(req)
	if err != nil {
		return err
	}
	src := &valuesSource{}
	for _, r := range list {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		v, err := eval.FromJSON(b)
		if err != nil {
			return err
		}
		src.docs = append(src.docs, v)
	}
	rows, _, err := exec.ExecJSON(plan, []exec.Source{src}, nil, len(list)+1, nil)
	if err != nil {
		return errBadRequest("%v", err)
	}
	out := make([]any, len(rows))
	for i, r := range rows {
		out[i] = json.RawMessage(r)
	}
	s.writeFeed(req, rid, key, out)
	return nil
}

// valuesSource is an exec.Source over documents in memory.
type valuesSource struct {
	docs []eval.Value
	next int
}

func (v *valuesSource) Next() ([]byte, eval.Value, bool, error) {
	if v.next >= len(v.docs) {
		return nil, eval.Value{}, false, nil
	}
	v.next++
	// Keys order the documents within the source; the position will do.
	return []byte{byte(v.next >> 24), byte(v.next >> 16), byte(v.next >> 8), byte(v.next)}, v.docs[v.next-1], true, nil
}

// conflicts answers the conflicts feed of a container. Conflicts arise only
// between regions that both accept writes; a Parsec account has one write
// region, so the feed is empty and no conflict exists.
func (s *Server) conflicts(req *request, op operation) error {
	c, err := s.openContainer(req, op.db, op.coll)
	if err != nil {
		return err
	}
	req.charge = 1
	if op.kind == opReadConflict {
		return errNotFound("no conflict %q in container %q: an account with one write region has no conflicts", op.id, op.coll)
	}
	s.writeFeed(req, c.Info().Rid, "Conflicts", []any{})
	return nil
}
