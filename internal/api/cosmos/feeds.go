package cosmos

import "net/http"

// queryFeed answers a query over a feed of catalog resources (databases,
// containers): the feed is small, so the query runs over it in memory, in
// one page, with the evaluator item queries use (queryResources); any
// alias works (SELECT * FROM root r WHERE r.id = @id).
func (s *Server) queryFeed(req *request, rid, key string, list []any) error {
	rows, err := queryResources(req, list)
	if err != nil {
		return err
	}
	s.writeFeed(req, rid, key, rows)
	return nil
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

// deletePartitionKey answers POST …/operations/partitionkeydelete: every
// item of the logical partition the partition key header names is deleted
// before the answer (the service deletes in the background; here the
// request waits, while its commands, a hundred deletes each, interleave
// with other requests).
func (s *Server) deletePartitionKey(req *request, op operation) error {
	c, err := s.openContainer(req, op.db, op.coll)
	if err != nil {
		return err
	}
	k, has, err := partitionKeyHeader(req.r)
	if err != nil {
		return err
	}
	if !has {
		return errBadRequest("a partition key delete names the partition key in the x-ms-documentdb-partitionkey header")
	}
	_, charge, err := c.DeletePartitionKey(k)
	req.charge = max(charge, 1)
	if err != nil {
		return err
	}
	s.writeJSON(req, http.StatusOK, nil)
	return nil
}
