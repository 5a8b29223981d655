package table

import (
	"errors"
	"net"
	"net/http"
	"strings"

	"github.com/parsecdb/parsec/internal/api/table/tableauth"
)

// accountOf is the account a request addresses (DESIGN.md, "Accounts"):
// the first path segment in the path style (pathAccount), else the
// first label of the Host. Any account name is accepted; the key decides.
func accountOf(r *http.Request, pathAccount string) string {
	if pathAccount != "" {
		return pathAccount
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	label, _, _ := strings.Cut(host, ".")
	return label
}

// authenticate checks a request's credentials with package tableauth:
// SharedKey or SharedKeyLite signed with the primary or the read-only
// key, or a table or account SAS signed with either.
func (s *Server) authenticate(req *request, account string) error {
	g, err := s.verifier.Verify(req.r, account, s.keys)
	if err != nil {
		return authError(err)
	}
	req.grant = g
	return nil
}

// allow checks that the request's credentials permit action on table.
func (req *request) allow(action tableauth.Action, table string) error {
	if err := req.grant.Allow(action, table); err != nil {
		return authError(err)
	}
	return nil
}

// allowEntity checks that they permit action on the entity (pk, rk).
func (req *request) allowEntity(action tableauth.Action, table, pk, rk string) error {
	if err := req.grant.AllowEntity(action, table, pk, rk); err != nil {
		return authError(err)
	}
	return nil
}

func authError(err error) error {
	var ae *tableauth.Error
	if errors.As(err, &ae) {
		msg := ae.Message()
		if ae.Detail != "" {
			msg += " " + ae.Detail
		}
		return &tableError{status: ae.Status, code: ae.Code, msg: msg, cause: err}
	}
	return newErr(http.StatusForbidden, codeAuthenticationFailed, "Server failed to authenticate the request: %v", err)
}

// updateAction is the action of a PUT or MERGE: an update with If-Match,
// an upsert without.
func updateAction(ifMatch string) tableauth.Action {
	if ifMatch == "" {
		return tableauth.UpsertEntity
	}
	return tableauth.UpdateEntity
}
