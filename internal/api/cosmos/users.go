package cosmos

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/parsecdb/parsec/internal/auth"
	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/throughput"
)

// classifyUsers classifies a request under /dbs/{db}/users: the users feed,
// a user, a user's permissions feed and a permission. A POST to a feed is a
// query, an upsert or a create, by headers in that order.
func classifyUsers(method string, segs []string, h http.Header) operation {
	n := len(segs)
	op := operation{db: segs[1]}
	if n >= 4 {
		op.user = segs[3]
	}
	feed := func(list, query, upsert, create opKind, what string) operation {
		switch {
		case method == http.MethodGet:
			op.kind = list
		case method == http.MethodPost && isQueryHeader(h):
			op.kind = query
		case method == http.MethodPost && isTrue(h, "x-ms-documentdb-is-upsert"):
			op.kind, op.writes = upsert, true
		case method == http.MethodPost:
			op.kind, op.writes = create, true
		default:
			return errOp(method, errMethod(method, what))
		}
		return op
	}
	one := func(read, replace, del opKind, what string) operation {
		switch method {
		case http.MethodGet:
			op.kind = read
		case http.MethodPut:
			op.kind, op.writes = replace, true
		case http.MethodDelete:
			op.kind, op.writes = del, true
		default:
			return errOp(method, errMethod(method, what))
		}
		return op
	}
	switch {
	case n == 3:
		return feed(opListUsers, opQueryUsers, opUpsertUser, opCreateUser, "the users feed")
	case n == 4:
		return one(opReadUser, opReplaceUser, opDeleteUser, "a user")
	case n == 5 && segs[4] == "permissions":
		return feed(opListPermissions, opQueryPermissions, opUpsertPermission, opCreatePermission, "the permissions feed")
	case n == 6 && segs[4] == "permissions":
		op.id = segs[5]
		return one(opReadPermission, opReplacePermission, opDeletePermission, "a permission")
	}
	return errOp(method, errNotFound("no resource at /%s", strings.Join(segs, "/")))
}

// isPermissionOp reports whether k reads or changes permissions, whose
// tokens grant access: the read-only key may not use them.
func isPermissionOp(k opKind) bool {
	switch k {
	case opListPermissions, opQueryPermissions, opUpsertPermission, opCreatePermission,
		opReadPermission, opReplacePermission, opDeletePermission:
		return true
	}
	return false
}

// Token lifetimes: x-ms-documentdb-expiry-seconds on a request that
// returns permissions sets how long their tokens are valid.
const (
	hdrExpirySeconds     = "x-ms-documentdb-expiry-seconds"
	DefaultTokenLifetime = 3600  // seconds, as Cosmos
	MaxTokenLifetime     = 18000 // seconds, as Cosmos
)

// tokenLifetime reads x-ms-documentdb-expiry-seconds.
func tokenLifetime(r *http.Request) (int64, error) {
	v := r.Header.Get(hdrExpirySeconds)
	if v == "" {
		return DefaultTokenLifetime, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 1 || n > MaxTokenLifetime {
		return 0, errBadRequest("%s must be a whole number of seconds from 1 to %d, not %q", hdrExpirySeconds, MaxTokenLifetime, v)
	}
	return n, nil
}

func renderUser(db engine.DatabaseInfo, u engine.UserInfo) map[string]any {
	return map[string]any{
		"id": u.ID, "_rid": u.Rid, "_self": "dbs/" + db.Rid + "/users/" + u.Rid + "/", "_etag": u.Etag(),
		"_ts": u.Ts, "_permissions": "permissions/",
	}
}

// renderPermission renders a permission with a token valid until expires
// (Unix seconds).
func (s *Server) renderPermission(db engine.DatabaseInfo, u engine.UserInfo, p engine.PermissionInfo, expires int64) map[string]any {
	out := map[string]any{
		"id": p.ID, "_rid": p.Rid, "_self": "dbs/" + db.Rid + "/users/" + u.Rid + "/permissions/" + p.Rid + "/",
		"_etag": p.Etag(), "_ts": p.Ts, "permissionMode": p.Mode, "resource": p.Resource,
		"_token": s.verifier.MintResourceToken(auth.Grant{
			Permission: p.Rid, Seq: p.Seq, All: p.Mode == engine.PermissionAll, DB: p.DB, Coll: p.Coll,
			CollRid: p.CollRid, Doc: p.Doc, PartitionKey: p.PartitionKey, Expires: expires,
		}),
	}
	if p.PartitionKey != "" {
		out["resourcePartitionKey"] = json.RawMessage(p.PartitionKey)
	}
	return out
}

// users runs an operation on a users feed or a user (see classify).
func (s *Server) users(req *request, op operation) error {
	req.charge = throughput.MetadataCharge
	db, err := s.engine.Database(op.db)
	if err != nil {
		return err
	}
	switch op.kind {
	case opListUsers, opQueryUsers:
		us, err := s.engine.Users(op.db)
		if err != nil {
			return err
		}
		list := make([]any, len(us))
		for i, u := range us {
			list[i] = renderUser(db, u)
		}
		if op.kind == opQueryUsers {
			if list, err = queryResources(req, list); err != nil {
				return err
			}
		}
		s.writeFeed(req, db.Rid, "Users", list)
	case opCreateUser, opUpsertUser:
		id, err := readID(req, "user")
		if err != nil {
			return err
		}
		u, err := s.engine.CreateUser(op.db, id)
		status := http.StatusCreated
		if op.kind == opUpsertUser && isConflict(err) {
			u, err = s.engine.ReplaceUser(op.db, id, id, "")
			status = http.StatusOK
		}
		if err != nil {
			return err
		}
		s.writeResource(req, status, u.Etag(), renderUser(db, u))
	case opReadUser:
		u, err := s.engine.User(op.db, op.user)
		if err != nil {
			return err
		}
		s.writeResource(req, http.StatusOK, u.Etag(), renderUser(db, u))
	case opReplaceUser:
		id, err := readID(req, "user")
		if err != nil {
			return err
		}
		u, err := s.engine.ReplaceUser(op.db, op.user, id, req.r.Header.Get("If-Match"))
		if err != nil {
			return err
		}
		s.writeResource(req, http.StatusOK, u.Etag(), renderUser(db, u))
	case opDeleteUser:
		if err := s.engine.DeleteUser(op.db, op.user); err != nil {
			return err
		}
		s.writeJSON(req, http.StatusNoContent, nil)
	default:
		panic("BUG: users called for " + op.kind.String())
	}
	return nil
}

// permissions runs an operation on a permissions feed or a permission
// (see classify). Every permission it returns carries a fresh _token.
func (s *Server) permissions(req *request, op operation) error {
	req.charge = throughput.MetadataCharge
	lifetime, err := tokenLifetime(req.r)
	if err != nil {
		return err
	}
	expires := s.cfg.Now().Unix() + lifetime
	db, err := s.engine.Database(op.db)
	if err != nil {
		return err
	}
	u, err := s.engine.User(op.db, op.user)
	if err != nil {
		return err
	}
	switch op.kind {
	case opListPermissions, opQueryPermissions:
		ps, err := s.engine.Permissions(op.db, op.user)
		if err != nil {
			return err
		}
		list := make([]any, len(ps))
		for i, p := range ps {
			list[i] = s.renderPermission(db, u, p, expires)
		}
		if op.kind == opQueryPermissions {
			if list, err = queryResources(req, list); err != nil {
				return err
			}
		}
		s.writeFeed(req, u.Rid, "Permissions", list)
	case opCreatePermission, opUpsertPermission, opReplacePermission:
		spec, err := readPermission(req)
		if err != nil {
			return err
		}
		var p engine.PermissionInfo
		status := http.StatusCreated
		switch op.kind {
		case opCreatePermission:
			p, err = s.engine.CreatePermission(op.db, op.user, spec)
		case opUpsertPermission:
			if p, err = s.engine.CreatePermission(op.db, op.user, spec); isConflict(err) {
				p, err = s.engine.ReplacePermission(op.db, op.user, spec, "")
				status = http.StatusOK
			}
		default:
			if spec.ID != op.id {
				return errBadRequest("the id in the body, %q, does not match the permission addressed, %q", spec.ID, op.id)
			}
			p, err = s.engine.ReplacePermission(op.db, op.user, spec, req.r.Header.Get("If-Match"))
			status = http.StatusOK
		}
		if err != nil {
			return err
		}
		s.writeResource(req, status, p.Etag(), s.renderPermission(db, u, p, expires))
	case opReadPermission:
		p, err := s.engine.Permission(op.db, op.user, op.id)
		if err != nil {
			return err
		}
		s.writeResource(req, http.StatusOK, p.Etag(), s.renderPermission(db, u, p, expires))
	case opDeletePermission:
		if err := s.engine.DeletePermission(op.db, op.user, op.id); err != nil {
			return err
		}
		s.writeJSON(req, http.StatusNoContent, nil)
	default:
		panic("BUG: permissions called for " + op.kind.String())
	}
	return nil
}

func isConflict(err error) bool {
	st, _, _ := statusOf(err)
	return st == http.StatusConflict
}

// readID reads a body {"id": ...}, as users have.
func readID(req *request, what string) (string, error) {
	body, err := readBody(req)
	if err != nil {
		return "", err
	}
	var in struct {
		ID *string `json:"id"`
	}
	if err := decodeStrict(body, &in); err != nil {
		return "", err
	}
	if in.ID == nil {
		return "", errBadRequest("the %s has no \"id\" property", what)
	}
	return *in.ID, nil
}

// readPermission reads a permission body {id, permissionMode, resource,
// resourcePartitionKey?}.
func readPermission(req *request) (engine.PermissionSpec, error) {
	var spec engine.PermissionSpec
	body, err := readBody(req)
	if err != nil {
		return spec, err
	}
	var in struct {
		ID           *string         `json:"id"`
		Mode         *string         `json:"permissionMode"`
		Resource     *string         `json:"resource"`
		PartitionKey json.RawMessage `json:"resourcePartitionKey"`
	}
	if err := decodeStrict(body, &in); err != nil {
		return spec, err
	}
	switch {
	case in.ID == nil:
		return spec, errBadRequest("the permission has no \"id\" property")
	case in.Mode == nil:
		return spec, errBadRequest("the permission has no \"permissionMode\" property (\"Read\" or \"All\")")
	case in.Resource == nil:
		return spec, errBadRequest("the permission has no \"resource\" property (a container or item link)")
	}
	return engine.PermissionSpec{ID: *in.ID, Mode: *in.Mode, Resource: *in.Resource, PartitionKey: in.PartitionKey}, nil
}

// queryResources runs the request's query over rendered resources and
// returns its rows, all in one page.
func queryResources(req *request, list []any) ([]any, error) {
	plan, _, err := readQuery(req, nil)
	if err != nil {
		return nil, err
	}
	docs := make([][]byte, len(list))
	for i, r := range list {
		if docs[i], err = json.Marshal(r); err != nil {
			panic("BUG: cannot encode a resource: " + err.Error())
		}
	}
	rows, err := engine.QueryDocuments(plan, docs)
	if err != nil {
		return nil, err
	}
	out := make([]any, len(rows))
	for i, r := range rows {
		out[i] = json.RawMessage(r)
	}
	return out, nil
}
