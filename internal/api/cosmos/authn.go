package cosmos

import (
	"errors"
	"strings"
	"time"

	"github.com/parsecdb/parsec/internal/auth"
)

// authenticate checks the request's credential and that it may run op, the
// operation route will run (see classify): a master-key signature and its
// date, with the read-only key refused for operations that write and for
// permissions; or a resource token, which needs no date (it signs nothing
// of the request; the JS SDK sends none with it) and is held to its grant
// (authorizeGrant).
func (s *Server) authenticate(req *request, op operation) error {
	r := req.r
	h := r.Header.Get("Authorization")
	if h == "" {
		return errUnauthorized("Required Header authorization is missing. Ensure a valid Authorization token is passed.")
	}
	date := r.Header.Get("x-ms-date")
	if date == "" {
		date = r.Header.Get("Date")
	}
	typ, link := auth.Resource(r.URL.Path) // decoded; ids cannot contain '/'
	if req.ridBased {
		typ, link = auth.RidLink(r.URL.Path)
	}
	access, grant, err := s.verifier.Authenticate(r.Method, typ, link, date, h, s.cfg.Now())
	if access == auth.ResourceToken {
		return s.authorizeGrant(req, op, grant)
	}
	if err != nil && !errors.Is(err, auth.ErrBadSignature) {
		// Not a signature that the date could explain: a malformed,
		// expired, forged or unsupported token.
		return errUnauthorized("%v", err)
	}
	if date == "" {
		return errUnauthorized("the request has no x-ms-date header; it is part of the signature")
	}
	if err := s.checkDate(date); err != nil {
		return errUnauthorized("the x-ms-date header is not acceptable: %v", err)
	}
	if err != nil {
		return errUnauthorized("The input authorization token can't serve the request. The wrong key is being used or the expected payload is not built as per the protocol: %v. Server used the following payload to sign: '%s\n%s\n%s\n%s\n\n'",
			err, strings.ToLower(r.Method), strings.ToLower(typ), link, strings.ToLower(date))
	}
	if access == auth.ReadOnly && op.writes {
		// No substatus: 403/3 (WriteForbidden) tells SDKs that the region
		// does not take writes, and they retry it for minutes.
		return errForbidden("the read-only key cannot be used for %s on /%s; use the primary key to write", r.Method, strings.Join(req.segs, "/"))
	}
	if access == auth.ReadOnly && isPermissionOp(op.kind) {
		return errForbidden("the read-only key cannot %s: a permission's token grants access the key does not have; use the primary key", op.kind)
	}
	return nil
}

// parsedDate is the last x-ms-date parsed: clients send the same date for a
// whole second, so most requests skip the parse.
type parsedDate struct {
	text string
	t    time.Time
}

// checkDate checks an x-ms-date value against the clock with the same rule
// as auth.CheckDate; only the parse is cached, never the verdict.
func (s *Server) checkDate(date string) error {
	now := s.cfg.Now()
	if d := s.lastDate.Load(); d != nil && d.text == date {
		return auth.CheckTime(d.t, now, s.cfg.MaxClockSkew)
	}
	t, err := auth.ParseDate(date)
	if err != nil {
		return err
	}
	if err := auth.CheckTime(t, now, s.cfg.MaxClockSkew); err != nil {
		return err
	}
	s.lastDate.Store(&parsedDate{text: date, t: t})
	return nil
}
