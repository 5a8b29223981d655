package mongo

import (
	"errors"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/parsecdb/parsec/internal/engine"
)

// MongoDB's user commands, mapped onto Parsec's users where the mapping is
// honest. The MongoDB API authenticates with the account's keys only: its
// users are the built-in ones, the account (root) and, with a read-only
// key, the account's read-only user (readAnyDatabase), both in admin. A
// database's other users are the engine's (the NoSQL API's users, whose
// permissions hand out resource tokens): usersInfo lists them, with a role
// per permission, and dropUser and dropAllUsersFromDatabase delete them and
// their permissions. createUser, updateUser and the role commands are
// refused: a password given to them could never be used to authenticate.

// codeUserNotFound is mongod's UserNotFound.
const codeUserNotFound = 11

// builtinUsers are the users of the admin database.
func (s *Server) builtinUsers() []bson.D {
	user := func(name, role string) bson.D {
		return bson.D{{Key: "_id", Value: "admin." + name}, {Key: "user", Value: name}, {Key: "db", Value: "admin"},
			{Key: "roles", Value: bson.A{bson.D{{Key: "role", Value: role}, {Key: "db", Value: "admin"}}}},
			{Key: "mechanisms", Value: bson.A{scramMechanism}}}
	}
	out := []bson.D{user(s.cfg.AccountName, "root")}
	if s.cfg.ReadOnlyKey != "" {
		out = append(out, user(s.cfg.AccountName+readOnlySuffix, "readAnyDatabase"))
	}
	return out
}

// engineUser is an engine user as usersInfo shows it: a role per
// permission, read for a Read permission and readWrite for an All one,
// on the collection (or document) the permission names.
func (s *Server) engineUser(db string, u engine.UserInfo) bson.D {
	roles := bson.A{}
	perms, _ := s.eng.Permissions(db, u.ID)
	for _, p := range perms {
		role := "readWrite"
		if strings.EqualFold(p.Mode, "Read") {
			role = "read"
		}
		roles = append(roles, bson.D{{Key: "role", Value: role}, {Key: "db", Value: db}, {Key: "resource", Value: p.Resource}})
	}
	return bson.D{{Key: "_id", Value: db + "." + u.ID}, {Key: "user", Value: u.ID}, {Key: "db", Value: db},
		{Key: "roles", Value: roles}, {Key: "mechanisms", Value: bson.A{}}}
}

// usersOf returns the users of a database.
func (s *Server) usersOf(db string) ([]bson.D, error) {
	if db == "admin" {
		return s.builtinUsers(), nil
	}
	us, err := s.eng.Users(db)
	if errors.Is(err, engine.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, toCmdError(err)
	}
	out := make([]bson.D, 0, len(us))
	for _, u := range us {
		out = append(out, s.engineUser(db, u))
	}
	return out, nil
}

// userName reads one user of usersInfo or dropUser: a name in the
// command's database, or {user, db}.
func (r *request) userName(v any) (user, db string, err error) {
	switch x := v.(type) {
	case string:
		return x, r.db, nil
	case bson.D:
		u, uok := lookupField(x, "user")
		d, dok := lookupField(x, "db")
		us, ok1 := u.(string)
		ds, ok2 := d.(string)
		if uok && dok && ok1 && ok2 {
			return us, ds, nil
		}
	}
	return "", "", badValue("User name must be either a string or an object of the form {user: <name>, db: <db>}, not %s", showValue(v))
}

func cmdUsersInfo(r *request) (bson.D, error) {
	v := r.cmd[0].Value
	var users []bson.D
	add := func(user, db string) error {
		all, err := r.s.usersOf(db)
		if err != nil {
			return err
		}
		for _, u := range all {
			if n, _ := lookupField(u, "user"); n == user {
				users = append(users, u)
			}
		}
		return nil
	}
	var err error
	switch x := v.(type) {
	case bson.D:
		if f, ok := lookupField(x, "forAllDBs"); ok && truthy(f) {
			for _, d := range r.s.eng.Databases() {
				us, err := r.s.usersOf(d.ID)
				if err != nil {
					return nil, err
				}
				users = append(users, us...)
			}
			if _, err := r.s.eng.Database("admin"); err != nil {
				users = append(users, r.s.builtinUsers()...)
			}
			break
		}
		user, db, uerr := r.userName(x)
		if uerr != nil {
			return nil, uerr
		}
		err = add(user, db)
	case string:
		err = add(x, r.db)
	case bson.A:
		for _, e := range x {
			user, db, uerr := r.userName(e)
			if uerr != nil {
				return nil, uerr
			}
			if err = add(user, db); err != nil {
				break
			}
		}
	default:
		if _, ok := asInt(v); !ok {
			return nil, badValue("User name must be either a string or an object of the form {user: <name>, db: <db>}, not %s", showValue(v))
		}
		users, err = r.s.usersOf(r.db)
	}
	if err != nil {
		return nil, err
	}
	a := bson.A{}
	for _, u := range users {
		a = append(a, u)
	}
	return bson.D{{Key: "users", Value: a}}, nil
}

// mayManageUsers refuses the read-only user.
func (r *request) mayManageUsers() error {
	if r.c.principal() == principalReadOnly {
		return newErr(13, "Unauthorized", "not authorized on %s to run %s: the read-only user cannot manage users", r.db, r.name)
	}
	return nil
}

func cmdDropUser(r *request) (bson.D, error) {
	if err := r.mayManageUsers(); err != nil {
		return nil, err
	}
	name, ok := r.cmd[0].Value.(string)
	if !ok || name == "" {
		return nil, badValue("dropUser needs a user name, not %s", showValue(r.cmd[0].Value))
	}
	if r.db == "admin" {
		return nil, badValue("%s@admin is a built-in user of Parsec's MongoDB API and cannot be dropped", name)
	}
	if err := r.s.eng.DeleteUser(r.db, name); err != nil {
		if errors.Is(err, engine.ErrNotFound) {
			return nil, newErr(codeUserNotFound, "UserNotFound", "User '%s@%s' not found", name, r.db)
		}
		return nil, toCmdError(err)
	}
	return nil, nil
}

func cmdDropAllUsersFromDatabase(r *request) (bson.D, error) {
	if err := r.mayManageUsers(); err != nil {
		return nil, err
	}
	if r.db == "admin" {
		// The built-in users stay.
		return bson.D{{Key: "n", Value: int32(0)}}, nil
	}
	us, err := r.s.eng.Users(r.db)
	if err != nil && !errors.Is(err, engine.ErrNotFound) {
		return nil, toCmdError(err)
	}
	n := int32(0)
	for _, u := range us {
		if err := r.s.eng.DeleteUser(r.db, u.ID); err != nil {
			if errors.Is(err, engine.ErrNotFound) {
				continue
			}
			return nil, toCmdError(err)
		}
		n++
	}
	return bson.D{{Key: "n", Value: n}}, nil
}

// cmdUserNotSupported refuses the commands that would create or change a
// user's credentials or roles.
func cmdUserNotSupported(r *request) (bson.D, error) {
	return nil, newErr(115, "CommandNotSupported", "%s is not supported: Parsec's MongoDB API authenticates with the account's keys (users %s and %s%s in admin), so a password set here could not be used; manage users and permissions through the NoSQL API", r.name, r.s.cfg.AccountName, r.s.cfg.AccountName, readOnlySuffix)
}
