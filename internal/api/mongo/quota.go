package mongo

// Quotas. The server-wide caps on what clients keep open between commands
// (cursors, the bytes their results hold, sessions with a transaction) are
// shared by its users: the primary user, the read-only user, and the
// connections that have not authenticated (which run commands only when
// Config.RequireAuth is off). Without a primary key there is no
// authentication, and every connection is the primary user.
//
// The primary user may use a whole cap; each other user at most a quarter
// of it, so that the other two together leave the primary user at least
// half: no other client can lock the primary user out, nor starve the
// other one.

// principal is who holds a cursor or a session.
type principal uint8

const (
	principalPrimary principal = iota
	principalReadOnly
	principalAnonymous
	numPrincipals
)

func (p principal) String() string {
	switch p {
	case principalPrimary:
		return "the primary user"
	case principalReadOnly:
		return "the read-only user"
	case principalAnonymous:
		return "unauthenticated connections"
	}
	return "an unknown principal"
}

// principal returns who the connection runs commands as.
func (c *conn) principal() principal {
	switch {
	case c.s.auth == nil:
		return principalPrimary
	case c.auth.user == "":
		return principalAnonymous
	case c.auth.readOnly:
		return principalReadOnly
	}
	return principalPrimary
}

// quota is one server-wide cap and what each principal uses of it. It is
// not safe for concurrent use: its owner's lock guards it.
type quota struct {
	max  int64
	used [numPrincipals]int64
}

// share is the most p may use.
func (q *quota) share(p principal) int64 {
	if p == principalPrimary {
		return q.max
	}
	return q.max / 4
}

func (q *quota) total() int64 {
	var n int64
	for _, u := range q.used {
		n += u
	}
	return n
}

// fits reports whether p may use n more.
func (q *quota) fits(p principal, n int64) bool {
	return q.used[p]+n <= q.share(p) && q.total()+n <= q.max
}

// add records that p uses n more (n < 0: less).
func (q *quota) add(p principal, n int64) {
	q.used[p] += n
	if q.used[p] < 0 {
		panic("BUG: a quota's use went negative")
	}
}
