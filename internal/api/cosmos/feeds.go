package cosmos

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
