package cosmos

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/parsecdb/parsec/internal/engine"
)

// msgAllVersionsFromBeginning is the service's message for an
// all-versions-and-deletes read with no position (no If-None-Match).
const msgAllVersionsFromBeginning = "Start from beginning is not supported with 'All Versions and Deletes' mode."

// changeFeed answers GET …/docs with A-IM: a page of the change feed, in
// latest-version mode ("Incremental feed") or all-versions-and-deletes mode
// ("Full-Fidelity Feed", for containers with a change feed policy), of one
// partition key range (x-ms-documentdb-partitionkeyrangeid, optionally
// narrowed by x-ms-start-epk and x-ms-end-epk) or of one partition key.
//
// The position travels as the response's etag, which clients send back in
// If-None-Match: a quoted decimal number, valid across splits (a child
// range continues from its parent's). If-None-Match: * starts from now,
// If-Modified-Since from a point in time, neither from the beginning (in
// latest-version mode only: the all-versions mode needs If-None-Match). A
// page with no change is a 304 that carries the position.
func (s *Server) changeFeed(req *request, c *engine.Container) error {
	if err := s.awaitReplicas(req, c.Partitions()); err != nil {
		return err
	}
	r := req.r
	var all bool
	switch mode := r.Header.Get("A-IM"); {
	case strings.EqualFold(mode, "Incremental feed"):
	case strings.EqualFold(mode, "Full-Fidelity Feed"):
		all = true
	default:
		return errBadRequest("A-IM %q is not a change feed mode: use \"Incremental feed\" or \"Full-Fidelity Feed\"", mode)
	}
	var start engine.ChangeFeedStart
	switch inm := r.Header.Get("If-None-Match"); inm {
	case "":
		if all {
			// The service keeps the versions and deletes only for the
			// policy's retention, so it starts this mode from now or from a
			// position, never from the beginning nor from a time (which it
			// takes for the beginning).
			return errBadRequest("%s", msgAllVersionsFromBeginning)
		}
		if ims := r.Header.Get("If-Modified-Since"); ims != "" {
			t, err := http.ParseTime(ims)
			if err != nil {
				// The Go SDK formats it with time.RFC1123 in UTC: "UTC", not "GMT".
				t, err = time.Parse(time.RFC1123, ims)
			}
			if err != nil {
				return errBadRequest("If-Modified-Since %q is not an HTTP date (RFC 1123, e.g. %q)", ims, time.Unix(0, 0).UTC().Format(http.TimeFormat))
			}
			start.Since = max(t.Unix(), 1)
		}
	case "*":
		start.FromNow = true
	default:
		n, err := strconv.ParseUint(strings.Trim(inm, `"`), 10, 64)
		if err != nil {
			return errBadRequest("%s (If-None-Match %q is not a change feed continuation: send back the etag of the previous change feed response, or * to start from now)", engine.MsgBadContinuation, inm)
		}
		start.After = n
	}
	scope := engine.ChangeFeedScope{RangeID: r.Header.Get(hdrRangeID), MinEPK: r.Header.Get("x-ms-start-epk"), MaxEPK: r.Header.Get("x-ms-end-epk"),
		AllVersions: all}
	if scope.MaxEPK == "FF" {
		scope.MaxEPK = ""
	}
	k, has, err := partitionKeyHeader(r)
	if err != nil {
		return err
	}
	scope.Key, scope.HasKey = k, has
	max, err := maxItemCount(r)
	if err != nil {
		return err
	}
	pg, err := c.ChangeFeed(scope, start, max)
	req.charge = pg.Charge
	if err != nil {
		return err
	}
	req.w.Header()["Etag"] = []string{`"` + strconv.FormatUint(pg.Position, 10) + `"`}
	if len(pg.Docs) == 0 {
		req.session = sessionToken(pg.Session)
		s.writeJSON(req, http.StatusNotModified, nil)
		return nil
	}
	s.writeDocuments(req, c, pg.Docs, "", []engine.Session{pg.Session}, pg.Charge)
	return nil
}
