package cosmos

import (
	"github.com/parsecdb/parsec/internal/engine"
)

// Resource-id addressing: /dbs/{rid}/colls/{rid}/docs/{rid}, the `_self`
// links that older clients follow instead of names. A path is rid-based
// when its database segment is a database's resource id (8 characters, 4
// bytes: the rule the SDKs use to tell the two forms apart) and no
// database has that name. Such a path is translated to the names it
// designates before it is classified, so every handler sees names; only
// the signature differs (the SDKs sign a rid link with the last resource
// id, lower-cased: auth.RidLink).

// ridPath is what resolveRids found.
type ridPath struct {
	// names are the path's segments with every resource id replaced by
	// the id of the resource it designates.
	names []string
	// err is set when a resource id of the path designates nothing. It is
	// answered after authentication, so that an unauthenticated caller
	// learns nothing of what exists.
	err error
}

// isDatabaseRid reports whether s has the shape of a database resource id.
func isDatabaseRid(s string) bool {
	if len(s) != 8 || s[6:] != "==" {
		return false
	}
	b, err := engine.DecodeRid(s)
	return err == nil && len(b) == 4
}

// resolveRids translates a rid-based path; ok is false for a name-based one.
func (s *Server) resolveRids(segs []string) (p ridPath, ok bool) {
	if len(segs) < 2 || segs[0] != "dbs" || !isDatabaseRid(segs[1]) {
		return p, false
	}
	var db engine.DatabaseInfo
	for _, d := range s.engine.Databases() {
		if d.ID == segs[1] {
			return p, false // a database named like a resource id
		}
		if d.Rid == segs[1] {
			db, ok = d, true
		}
	}
	if !ok {
		return p, false
	}
	p.names = append([]string{"dbs", db.ID}, segs[2:]...)
	var coll *engine.Container
	user := ""
	for i := 3; i < len(segs) && p.err == nil; i += 2 {
		typ, rid := segs[i-1], segs[i]
		var id string
		switch {
		case i == 3 && typ == "colls":
			id, coll = s.containerByRid(db.ID, rid)
		case i == 3 && typ == "users":
			users, _ := s.engine.Users(db.ID)
			id = idByRid(users, rid, func(u engine.UserInfo) (string, string) { return u.ID, u.Rid })
			user = id
		case i == 3 && typ == "clientencryptionkeys":
			keys, _ := s.engine.EncryptionKeys(db.ID)
			id = idByRid(keys, rid, func(k engine.EncryptionKeyInfo) (string, string) { return k.ID, k.Rid })
		case i == 5 && coll != nil && typ == "docs":
			var err error
			if id, err = coll.ItemIDByRid(rid); err != nil {
				p.err = err
				return p, true
			}
		case i == 5 && coll != nil && scriptFeeds[typ].kind != 0:
			scripts, _ := coll.Scripts(scriptFeeds[typ].kind)
			id = idByRid(scripts, rid, func(sc engine.ScriptInfo) (string, string) { return sc.ID, sc.Rid })
		case i == 5 && user != "" && typ == "permissions":
			perms, _ := s.engine.Permissions(db.ID, user)
			id = idByRid(perms, rid, func(p engine.PermissionInfo) (string, string) { return p.ID, p.Rid })
		default:
			continue // a segment addressed by id alone (pkranges, conflicts, operations)
		}
		if id == "" {
			p.err = errNotFound("no resource of type %s has the resource id %q in database %q", typ, rid, db.ID)
			return p, true
		}
		p.names[i] = id
	}
	return p, true
}

func (s *Server) containerByRid(db, rid string) (string, *engine.Container) {
	infos, err := s.engine.Containers(db)
	if err != nil {
		return "", nil
	}
	for _, info := range infos {
		if info.Rid == rid {
			if c, err := s.engine.Container(db, info.ID); err == nil {
				return info.ID, c
			}
		}
	}
	return "", nil
}

// idByRid returns the id of the resource of list whose rid is rid, or "".
func idByRid[T any](list []T, rid string, ids func(T) (id, rid string)) string {
	for _, x := range list {
		if id, r := ids(x); r == rid {
			return id
		}
	}
	return ""
}
