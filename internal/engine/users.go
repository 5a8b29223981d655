package engine

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/parsecdb/parsec/internal/epk"
	"github.com/parsecdb/parsec/internal/storage"
)

// Users and permissions are catalog records of a database: a user names a
// client, and each of its permissions grants it Read or All on one
// container, one logical partition of a container, or one item. The API
// layer turns a permission into a resource token (package auth); the engine
// keeps the records and, in memory, the set of live permissions (rid and
// version), which every request signed with a resource token consults, so
// that deleting or replacing a permission, its user or its database revokes
// its tokens at once.

// Limits of users and permissions.
const (
	// MaxUsersPerDatabase bounds the users of one database.
	MaxUsersPerDatabase = 10_000
	// MaxPermissionsPerUser bounds the permissions of one user.
	MaxPermissionsPerUser = 1_000
	// MaxPermissionKeyBytes bounds a permission's partition key as JSON.
	MaxPermissionKeyBytes = 4096
)

// Permission modes.
const (
	PermissionRead = "Read"
	PermissionAll  = "All"
)

// UserInfo is a user's stored record. Its JSON tags are the stored format,
// not a wire format: never rename one.
type UserInfo struct {
	ID  string `json:"id"`
	DB  string `json:"db"`
	Rid string `json:"rid"`
	Ts  int64  `json:"ts"`
	Seq uint64 `json:"seq"`
}

// Etag is the user's quoted etag.
func (u UserInfo) Etag() string { return etagOf(u.Seq) }

// PermissionInfo is a permission's stored record. Its JSON tags are the
// stored format, not a wire format: never rename one.
type PermissionInfo struct {
	ID   string `json:"id"`
	DB   string `json:"db"`
	User string `json:"user"`
	Rid  string `json:"rid"`
	Ts   int64  `json:"ts"`
	// Seq is the permission's version: it changes on every replace, and
	// tokens minted before a replace no longer verify.
	Seq  uint64 `json:"seq"`
	Mode string `json:"mode"`
	// Resource is the link of what the permission covers, without outer
	// slashes: dbs/{db}/colls/{coll} or dbs/{db}/colls/{coll}/docs/{id}.
	Resource string `json:"resource"`
	// Coll and CollRid are the container the resource is in, and Doc the
	// item id of an item permission.
	Coll    string `json:"coll"`
	CollRid string `json:"collRid"`
	Doc     string `json:"doc,omitempty"`
	// PartitionKey is the canonical JSON array of the logical partition
	// the permission is narrowed to, or empty. An item permission with a
	// key covers the item of that id in that partition only; one without
	// covers the items of that id in every partition, as an absent
	// resourcePartitionKey covers every key in Cosmos DB (ids are unique
	// only within a logical partition).
	PartitionKey string `json:"partitionKey,omitempty"`
}

// Etag is the permission's quoted etag.
func (p PermissionInfo) Etag() string { return etagOf(p.Seq) }

// PermissionSpec is what a client gives to create or replace a permission.
type PermissionSpec struct {
	ID       string
	Mode     string
	Resource string
	// PartitionKey is the resourcePartitionKey JSON (an array, or one
	// scalar for a single-path key), or nil.
	PartitionKey json.RawMessage
}

// userEntry is a user and its permissions, by id.
type userEntry struct {
	info  UserInfo
	perms map[string]PermissionInfo
}

// CreateUser creates a user in a database. It fails with ErrConflict if
// the id exists.
func (e *Engine) CreateUser(dbID, id string) (UserInfo, error) {
	if err := validateResourceID("user", id); err != nil {
		return UserInfo{}, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	db, ok := e.dbs[dbID]
	if !ok {
		return UserInfo{}, notFound("database %q does not exist", dbID)
	}
	if _, ok := db.users[id]; ok {
		return UserInfo{}, conflict("user %q already exists in database %q", id, dbID)
	}
	if len(db.users) >= MaxUsersPerDatabase {
		return UserInfo{}, badRequest("database %q has %d users, the limit", dbID, MaxUsersPerDatabase)
	}
	s, err := e.seq.take(1)
	if err != nil {
		return UserInfo{}, err
	}
	dbRid, _ := decodeRid(db.info.Rid)
	info := UserInfo{ID: id, DB: dbID, Rid: encodeRid(binary.BigEndian.AppendUint32(dbRid, uint32(s))), Ts: e.now(), Seq: s}
	m := &catalogBatch{seq: s}
	setUser(m, info)
	if err := e.commitCatalog(m, "store user"); err != nil {
		return UserInfo{}, err
	}
	if db.users == nil {
		db.users = map[string]*userEntry{}
	}
	db.users[id] = &userEntry{info: info, perms: map[string]PermissionInfo{}}
	return info, nil
}

func setUser(m *catalogBatch, info UserInfo) {
	v, _ := json.Marshal(info)
	m.set(storage.UserKey(info.DB, info.ID), v)
}

func setPermission(m *catalogBatch, info PermissionInfo) {
	v, _ := json.Marshal(info)
	m.set(storage.PermissionKey(info.DB, info.User, info.ID), v)
}

// userLocked finds a user; the caller holds e.mu.
func (e *Engine) userLocked(dbID, id string) (*database, *userEntry, error) {
	db, ok := e.dbs[dbID]
	if !ok {
		return nil, nil, notFound("database %q does not exist", dbID)
	}
	u, ok := db.users[id]
	if !ok {
		return nil, nil, notFound("user %q does not exist in database %q", id, dbID)
	}
	return db, u, nil
}

// User returns a user's record.
func (e *Engine) User(dbID, id string) (UserInfo, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	_, u, err := e.userLocked(dbID, id)
	if err != nil {
		return UserInfo{}, err
	}
	return u.info, nil
}

// Users lists a database's users, ordered by id.
func (e *Engine) Users(dbID string) ([]UserInfo, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	db, ok := e.dbs[dbID]
	if !ok {
		return nil, notFound("database %q does not exist", dbID)
	}
	out := make([]UserInfo, 0, len(db.users))
	for _, u := range db.users {
		out = append(out, u.info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// ReplaceUser replaces a user: the only property a user has is its id, so a
// replace renames it (newID), keeping its rid and its permissions. ifMatch,
// when set and not "*", must be the user's etag.
func (e *Engine) ReplaceUser(dbID, id, newID, ifMatch string) (UserInfo, error) {
	if err := validateResourceID("user", newID); err != nil {
		return UserInfo{}, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	db, u, err := e.userLocked(dbID, id)
	if err != nil {
		return UserInfo{}, err
	}
	if ifMatch != "" && ifMatch != "*" && ifMatch != u.info.Etag() {
		return UserInfo{}, fmt.Errorf("%w: the user's etag is %s, not %s", ErrPreconditionFailed, u.info.Etag(), ifMatch)
	}
	if _, taken := db.users[newID]; taken && newID != id {
		return UserInfo{}, conflict("user %q already exists in database %q", newID, dbID)
	}
	s, err := e.seq.take(1)
	if err != nil {
		return UserInfo{}, err
	}
	info := u.info
	info.ID, info.Seq, info.Ts = newID, s, e.now()
	m := &catalogBatch{seq: s}
	m.delete(storage.UserKey(dbID, id))
	setUser(m, info)
	perms := u.perms
	if newID != id {
		// The permissions move under the new id, unchanged: their tokens
		// name the container, not the user.
		lo := storage.PermissionPrefix(dbID, id)
		m.deleteRange(lo, storage.PrefixEnd(lo))
		perms = make(map[string]PermissionInfo, len(u.perms))
		for pid, p := range u.perms {
			p.User = newID
			setPermission(m, p)
			perms[pid] = p
		}
	}
	if err := e.commitCatalog(m, "replace user"); err != nil {
		return UserInfo{}, err
	}
	delete(db.users, id)
	db.users[newID] = &userEntry{info: info, perms: perms}
	return info, nil
}

// DeleteUser deletes a user and its permissions; their tokens stop
// working at once.
func (e *Engine) DeleteUser(dbID, id string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	db, u, err := e.userLocked(dbID, id)
	if err != nil {
		return err
	}
	m := &catalogBatch{}
	m.delete(storage.UserKey(dbID, id))
	lo := storage.PermissionPrefix(dbID, id)
	m.deleteRange(lo, storage.PrefixEnd(lo))
	if err := e.commitCatalog(m, "delete user"); err != nil {
		return err
	}
	for _, p := range u.perms {
		delete(e.livePerms, p.Rid)
	}
	delete(db.users, id)
	return nil
}

// CreatePermission creates a permission of a user. The resource must be a
// container of the user's database, or an item of one, by names or by rids
// (a _self link; stored by names); a partition key narrows a container
// permission to one logical partition.
func (e *Engine) CreatePermission(dbID, userID string, spec PermissionSpec) (PermissionInfo, error) {
	return e.putPermission(dbID, userID, spec, false, "")
}

// ReplacePermission replaces a permission's mode and resource. Tokens
// minted before it no longer verify. ifMatch, when set and not "*", must
// be the permission's etag.
func (e *Engine) ReplacePermission(dbID, userID string, spec PermissionSpec, ifMatch string) (PermissionInfo, error) {
	return e.putPermission(dbID, userID, spec, true, ifMatch)
}

func (e *Engine) putPermission(dbID, userID string, spec PermissionSpec, replace bool, ifMatch string) (PermissionInfo, error) {
	if err := validateResourceID("permission", spec.ID); err != nil {
		return PermissionInfo{}, err
	}
	mode, ok := canonicalName(spec.Mode, PermissionRead, PermissionAll)
	if !ok {
		return PermissionInfo{}, badRequest("permissionMode must be %q or %q, not %q", PermissionRead, PermissionAll, spec.Mode)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	db, u, err := e.userLocked(dbID, userID)
	if err != nil {
		return PermissionInfo{}, err
	}
	old, exists := u.perms[spec.ID]
	switch {
	case replace && !exists:
		return PermissionInfo{}, notFound("permission %q does not exist for user %q in database %q", spec.ID, userID, dbID)
	case !replace && exists:
		return PermissionInfo{}, conflict("permission %q already exists for user %q in database %q", spec.ID, userID, dbID)
	case !replace && len(u.perms) >= MaxPermissionsPerUser:
		return PermissionInfo{}, badRequest("user %q has %d permissions, the limit", userID, MaxPermissionsPerUser)
	case replace && ifMatch != "" && ifMatch != "*" && ifMatch != old.Etag():
		return PermissionInfo{}, fmt.Errorf("%w: the permission's etag is %s, not %s", ErrPreconditionFailed, old.Etag(), ifMatch)
	}
	info := PermissionInfo{ID: spec.ID, DB: dbID, User: userID, Mode: mode}
	if err := resolvePermissionResource(db, &info, spec); err != nil {
		return PermissionInfo{}, err
	}
	s, err := e.seq.take(1)
	if err != nil {
		return PermissionInfo{}, err
	}
	info.Seq, info.Ts = s, e.now()
	if exists {
		info.Rid = old.Rid
	} else {
		userRid, _ := decodeRid(u.info.Rid)
		info.Rid = encodeRid(binary.BigEndian.AppendUint64(userRid, s))
	}
	m := &catalogBatch{seq: s}
	setPermission(m, info)
	if err := e.commitCatalog(m, "store permission"); err != nil {
		return PermissionInfo{}, err
	}
	u.perms[spec.ID] = info
	e.livePerms[info.Rid] = info.Seq
	return info, nil
}

// resolvePermissionResource parses spec's resource link and partition key
// into info, against the database db (the caller holds e.mu).
func resolvePermissionResource(db *database, info *PermissionInfo, spec PermissionSpec) error {
	link := strings.Trim(spec.Resource, "/")
	segs := strings.Split(link, "/")
	if link == "" || (len(segs) != 4 && len(segs) != 6) || segs[0] != "dbs" || segs[2] != "colls" || (len(segs) == 6 && segs[4] != "docs") {
		return badRequest("the permission's resource %q is not a container link (dbs/{db}/colls/{container}) or an item link (dbs/{db}/colls/{container}/docs/{id})", spec.Resource)
	}
	// A link by rids (a container's _self) is resolved to names.
	byRid := segs[1] == db.info.Rid && segs[1] != db.info.ID
	if segs[1] != db.info.ID && !byRid {
		return badRequest("the permission's resource %q is not in database %q, the user's", spec.Resource, db.info.ID)
	}
	c, ok := db.colls[segs[3]]
	if byRid {
		c, ok = nil, false
		for _, x := range db.colls {
			if x.Info().Rid == segs[3] {
				c, ok = x, true
			}
		}
	}
	if !ok {
		return notFound("the permission's resource %q names container %q, which does not exist in database %q", spec.Resource, segs[3], db.info.ID)
	}
	segs[1], segs[3] = db.info.ID, c.Info().ID
	link = strings.Join(segs, "/")
	info.Resource, info.Coll, info.CollRid = link, segs[3], c.Info().Rid
	if len(segs) == 6 {
		if err := validateIDChars("item", segs[5]); err != nil {
			return err
		}
		if len(segs[5]) > MaxIDBytes {
			return badRequest("the item id in the permission's resource is %d bytes long; the limit is %d", len(segs[5]), MaxIDBytes)
		}
		info.Doc = segs[5]
	}
	raw := strings.TrimSpace(string(spec.PartitionKey))
	if raw == "" || raw == "null" { // absent: the whole container (the null key is [null])
		return nil
	}
	if len(raw) > MaxPermissionKeyBytes {
		return badRequest("resourcePartitionKey is %d bytes of JSON; the limit is %d", len(raw), MaxPermissionKeyBytes)
	}
	if raw[0] != '[' {
		raw = "[" + raw + "]" // one value of a single-path key
	}
	key, err := epk.ParseHeader(raw)
	if err != nil {
		return badRequest("resourcePartitionKey %s is not a partition key value: %v", spec.PartitionKey, err)
	}
	if def := c.Info().PartitionKey; len(key) != len(def.Paths) || c.Info().Fixed {
		return badRequest("resourcePartitionKey %s has %d values; container %q has a partition key of %d paths %v", spec.PartitionKey, len(key), c.Info().ID, len(def.Paths), def.Paths)
	}
	info.PartitionKey = key.String()
	if len(info.PartitionKey) > MaxPermissionKeyBytes {
		return badRequest("resourcePartitionKey is %d bytes as canonical JSON; the limit is %d", len(info.PartitionKey), MaxPermissionKeyBytes)
	}
	return nil
}

// Permission returns a permission's record.
func (e *Engine) Permission(dbID, userID, id string) (PermissionInfo, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	_, u, err := e.userLocked(dbID, userID)
	if err != nil {
		return PermissionInfo{}, err
	}
	p, ok := u.perms[id]
	if !ok {
		return PermissionInfo{}, notFound("permission %q does not exist for user %q in database %q", id, userID, dbID)
	}
	return p, nil
}

// Permissions lists a user's permissions, ordered by id.
func (e *Engine) Permissions(dbID, userID string) ([]PermissionInfo, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	_, u, err := e.userLocked(dbID, userID)
	if err != nil {
		return nil, err
	}
	out := make([]PermissionInfo, 0, len(u.perms))
	for _, p := range u.perms {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// DeletePermission deletes a permission; its tokens stop working at once.
func (e *Engine) DeletePermission(dbID, userID, id string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, u, err := e.userLocked(dbID, userID)
	if err != nil {
		return err
	}
	p, ok := u.perms[id]
	if !ok {
		return notFound("permission %q does not exist for user %q in database %q", id, userID, dbID)
	}
	m := &catalogBatch{}
	m.delete(storage.PermissionKey(dbID, userID, id))
	if err := e.commitCatalog(m, "delete permission"); err != nil {
		return err
	}
	delete(e.livePerms, p.Rid)
	delete(u.perms, id)
	return nil
}

// PermissionLive reports whether the permission with this rid exists at
// this version (PermissionInfo.Seq): a resource token minted from it is
// honoured only while it does.
func (e *Engine) PermissionLive(rid string, seq uint64) bool {
	e.mu.RLock()
	defer e.mu.RUnlock()
	s, ok := e.livePerms[rid]
	return ok && s == seq
}

// loadUsers reads the user and permission records into the catalog (at
// Open, before anything else runs). Records of a database that no longer
// exists are skipped: its deletion removes them in the same batch.
func (e *Engine) loadUsers() error {
	lo := storage.UsersPrefix()
	err := e.store.Iterate(lo, storage.PrefixEnd(lo), func(k, v []byte) (bool, error) {
		var info UserInfo
		if err := json.Unmarshal(v, &info); err != nil {
			return false, fmt.Errorf("%w: cannot decode user record %q: %v", ErrCorrupt, k, err)
		}
		if db, ok := e.dbs[info.DB]; ok {
			if db.users == nil {
				db.users = map[string]*userEntry{}
			}
			db.users[info.ID] = &userEntry{info: info, perms: map[string]PermissionInfo{}}
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	lo = storage.PermissionsPrefix()
	return e.store.Iterate(lo, storage.PrefixEnd(lo), func(k, v []byte) (bool, error) {
		var info PermissionInfo
		if err := json.Unmarshal(v, &info); err != nil {
			return false, fmt.Errorf("%w: cannot decode permission record %q: %v", ErrCorrupt, k, err)
		}
		if db, ok := e.dbs[info.DB]; ok {
			if u, ok := db.users[info.User]; ok {
				u.perms[info.ID] = info
				e.livePerms[info.Rid] = info.Seq
			}
		}
		return true, nil
	})
}

// forgetUsersLocked revokes the permissions of a database being deleted
// (the caller holds e.mu).
func (e *Engine) forgetUsersLocked(db *database) {
	for _, u := range db.users {
		for _, p := range u.perms {
			delete(e.livePerms, p.Rid)
		}
	}
}

// deleteUsersInto adds the deletion of a database's users and permissions
// to m.
func deleteUsersInto(m *catalogBatch, dbID string) {
	lo := storage.UserPrefix(dbID)
	m.deleteRange(lo, storage.PrefixEnd(lo))
	lo = storage.DatabasePermissionsPrefix(dbID)
	m.deleteRange(lo, storage.PrefixEnd(lo))
}
