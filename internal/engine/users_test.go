package engine

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestUsersAndPermissions runs the life of users and permissions: create,
// read, list, replace, rename, delete, the live set that revokes tokens,
// the cascade of deleting a user or a database, and a restart that loads
// them back.
func TestUsersAndPermissions(t *testing.T) {
	dir := t.TempDir()
	e, st := testEngine(t, dir)
	mustContainer(t, e, 400)
	if _, err := e.CreateContainer("db", ContainerSpec{ID: "h", PartitionKey: hashDef("/a", "/b")}, Throughput{}); err != nil {
		t.Fatal(err)
	}
	fail := func(err error, want error, sub string) {
		t.Helper()
		if !errors.Is(err, want) || !strings.Contains(err.Error(), sub) {
			t.Fatalf("error %v; want %v containing %q", err, want, sub)
		}
	}
	alice, err := e.CreateUser("db", "alice")
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.CreateUser("db", "alice")
	fail(err, ErrConflict, `user "alice" already exists`)
	_, err = e.CreateUser("nodb", "bob")
	fail(err, ErrNotFound, `database "nodb" does not exist`)
	_, err = e.CreateUser("db", "a/b")
	fail(err, ErrBadRequest, "cannot contain")

	p, err := e.CreatePermission("db", "alice", PermissionSpec{ID: "p1", Mode: PermissionAll, Resource: "/dbs/db/colls/c/", PartitionKey: json.RawMessage(`"k1"`)})
	if err != nil {
		t.Fatal(err)
	}
	if p.Resource != "dbs/db/colls/c" || p.Coll != "c" || p.PartitionKey != `["k1"]` || p.Doc != "" || !strings.HasPrefix(p.Rid, alice.Rid[:6]) {
		t.Fatalf("permission %+v", p)
	}
	if !e.PermissionLive(p.Rid, p.Seq) || e.PermissionLive(p.Rid, p.Seq+1) {
		t.Fatal("the new permission is not live at its version alone")
	}
	item, err := e.CreatePermission("db", "alice", PermissionSpec{ID: "p2", Mode: PermissionRead, Resource: "dbs/db/colls/c/docs/x 1"})
	if err != nil || item.Doc != "x 1" || item.PartitionKey != "" {
		t.Fatalf("item permission %+v, %v", item, err)
	}
	itemKey, err := e.CreatePermission("db", "alice", PermissionSpec{ID: "p4", Mode: PermissionAll, Resource: "dbs/db/colls/c/docs/x", PartitionKey: json.RawMessage(`["k1"]`)})
	if err != nil || itemKey.Doc != "x" || itemKey.PartitionKey != `["k1"]` {
		t.Fatalf("item permission with a partition key %+v, %v", itemKey, err)
	}
	hier, err := e.CreatePermission("db", "alice", PermissionSpec{ID: "p3", Mode: PermissionRead, Resource: "dbs/db/colls/h", PartitionKey: json.RawMessage(`["x", 5.0]`)})
	if err != nil || hier.PartitionKey != `["x",5]` {
		t.Fatalf("hierarchical permission %+v, %v", hier, err)
	}

	// A link by rids, as a container's _self gives it, is stored by names.
	db, _ := e.Database("db")
	cc, _ := e.Container("db", "c")
	self, err := e.CreatePermission("db", "alice", PermissionSpec{ID: "self", Mode: PermissionRead, Resource: "dbs/" + db.Rid + "/colls/" + cc.Info().Rid + "/"})
	if err != nil || self.Resource != "dbs/db/colls/c" || self.Coll != "c" {
		t.Fatalf("permission by rids: %+v, %v", self, err)
	}
	if err := e.DeletePermission("db", "alice", "self"); err != nil {
		t.Fatal(err)
	}

	bad := func(spec PermissionSpec, want error, sub string) {
		t.Helper()
		_, err := e.CreatePermission("db", "alice", spec)
		fail(err, want, sub)
	}
	bad(PermissionSpec{ID: "p1", Mode: PermissionRead, Resource: "dbs/db/colls/c"}, ErrConflict, `permission "p1" already exists`)
	bad(PermissionSpec{ID: "q", Mode: "Write", Resource: "dbs/db/colls/c"}, ErrBadRequest, `permissionMode must be "Read" or "All", not "Write"`)
	bad(PermissionSpec{ID: "q", Mode: PermissionRead, Resource: "dbs/db"}, ErrBadRequest, "not a container link")
	bad(PermissionSpec{ID: "q", Mode: PermissionRead, Resource: "dbs/db/colls/c/sprocs/x"}, ErrBadRequest, "not a container link")
	bad(PermissionSpec{ID: "q", Mode: PermissionRead, Resource: "dbs/other/colls/c"}, ErrBadRequest, `not in database "db"`)
	bad(PermissionSpec{ID: "q", Mode: PermissionRead, Resource: "dbs/db/colls/nope"}, ErrNotFound, `container "nope"`)
	bad(PermissionSpec{ID: "q", Mode: PermissionRead, Resource: "dbs/db/colls/c", PartitionKey: json.RawMessage(`["a","b"]`)}, ErrBadRequest, "has 2 values")
	bad(PermissionSpec{ID: "q", Mode: PermissionRead, Resource: "dbs/db/colls/c", PartitionKey: json.RawMessage(`{"a":1}`)}, ErrBadRequest, "not a partition key value")
	bad(PermissionSpec{ID: "q", Mode: PermissionRead, Resource: "dbs/db/colls/c/docs/x", PartitionKey: json.RawMessage(`["a","b"]`)}, ErrBadRequest, "has 2 values")
	bad(PermissionSpec{ID: "q", Mode: PermissionRead, Resource: "dbs/db/colls/c", PartitionKey: json.RawMessage(`["` + strings.Repeat("k", MaxPermissionKeyBytes) + `"]`)}, ErrBadRequest, "the limit is 4096")
	bad(PermissionSpec{ID: "q", Mode: PermissionRead, Resource: "dbs/db/colls/c", PartitionKey: json.RawMessage(`["` + strings.Repeat(`\x01`, 1000) + `"]`)}, ErrBadRequest, "as canonical JSON; the limit is 4096")
	bad(PermissionSpec{ID: "q", Mode: PermissionRead, Resource: "dbs/db/colls/c/docs/" + strings.Repeat("i", MaxIDBytes+1)}, ErrBadRequest, "the limit is 1023")
	_, err = e.CreatePermission("db", "nobody", PermissionSpec{ID: "q", Mode: PermissionRead, Resource: "dbs/db/colls/c"})
	fail(err, ErrNotFound, `user "nobody" does not exist`)

	// Replace: a new version, so tokens of the old one stop verifying.
	p1b, err := e.ReplacePermission("db", "alice", PermissionSpec{ID: "p1", Mode: PermissionRead, Resource: "dbs/db/colls/c"}, p.Etag())
	if err != nil {
		t.Fatal(err)
	}
	if p1b.Rid != p.Rid || p1b.Seq == p.Seq || p1b.PartitionKey != "" || e.PermissionLive(p.Rid, p.Seq) || !e.PermissionLive(p.Rid, p1b.Seq) {
		t.Fatalf("replaced permission %+v (was %+v)", p1b, p)
	}
	_, err = e.ReplacePermission("db", "alice", PermissionSpec{ID: "p1", Mode: PermissionRead, Resource: "dbs/db/colls/c"}, p.Etag())
	fail(err, ErrPreconditionFailed, "etag")
	_, err = e.ReplacePermission("db", "alice", PermissionSpec{ID: "zz", Mode: PermissionRead, Resource: "dbs/db/colls/c"}, "")
	fail(err, ErrNotFound, `permission "zz" does not exist`)

	// Rename: the permissions follow, still live.
	renamed, err := e.ReplaceUser("db", "alice", "alicia", "")
	if err != nil || renamed.Rid != alice.Rid {
		t.Fatalf("rename: %+v, %v", renamed, err)
	}
	if _, err := e.User("db", "alice"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the old name still reads: %v", err)
	}
	ps, err := e.Permissions("db", "alicia")
	if err != nil || len(ps) != 4 || ps[0].ID != "p1" || ps[0].User != "alicia" || !e.PermissionLive(ps[0].Rid, ps[0].Seq) {
		t.Fatalf("permissions after the rename: %+v, %v", ps, err)
	}
	if _, err := e.CreateUser("db", "bob"); err != nil {
		t.Fatal(err)
	}
	_, err = e.ReplaceUser("db", "alicia", "bob", "")
	fail(err, ErrConflict, `user "bob" already exists`)

	// Deleting a permission revokes it; then a restart loads the rest.
	if err := e.DeletePermission("db", "alicia", "p2"); err != nil {
		t.Fatal(err)
	}
	if e.PermissionLive(item.Rid, item.Seq) {
		t.Fatal("a deleted permission is live")
	}
	fail(e.DeletePermission("db", "alicia", "p2"), ErrNotFound, `permission "p2"`)
	e.Close()
	st.Close()
	e, st = testEngine(t, dir)
	users, err := e.Users("db")
	if err != nil || len(users) != 2 || users[0].ID != "alicia" || users[1].ID != "bob" {
		t.Fatalf("users after a restart: %+v, %v", users, err)
	}
	if !e.PermissionLive(p1b.Rid, p1b.Seq) || !e.PermissionLive(hier.Rid, hier.Seq) || e.PermissionLive(item.Rid, item.Seq) {
		t.Fatal("the live set after a restart is not the stored permissions")
	}
	got, err := e.Permission("db", "alicia", "p3")
	if hier.User = "alicia"; err != nil || got != hier {
		t.Fatalf("permission after a restart: %+v, %v; want %+v", got, err, hier)
	}
	got, err = e.Permission("db", "alicia", "p4")
	if itemKey.User = "alicia"; err != nil || got != itemKey {
		t.Fatalf("item permission after a restart: %+v, %v; want %+v", got, err, itemKey)
	}

	// Deleting a user revokes its permissions; deleting a database its users'.
	if _, err := e.CreatePermission("db", "bob", PermissionSpec{ID: "b", Mode: PermissionRead, Resource: "dbs/db/colls/c"}); err != nil {
		t.Fatal(err)
	}
	if err := e.DeleteUser("db", "alicia"); err != nil {
		t.Fatal(err)
	}
	if e.PermissionLive(p1b.Rid, p1b.Seq) || e.PermissionLive(hier.Rid, hier.Seq) {
		t.Fatal("permissions of a deleted user are live")
	}
	bobs, _ := e.Permissions("db", "bob")
	if err := e.DeleteDatabase("db"); err != nil {
		t.Fatal(err)
	}
	if e.PermissionLive(bobs[0].Rid, bobs[0].Seq) {
		t.Fatal("a permission of a deleted database is live")
	}
	// A database of the same name starts with no users, also after a restart.
	if _, err := e.CreateDatabase("db", Throughput{}); err != nil {
		t.Fatal(err)
	}
	e.Close()
	st.Close()
	e, st = testEngine(t, dir)
	defer st.Close()
	defer e.Close()
	if users, err := e.Users("db"); err != nil || len(users) != 0 {
		t.Fatalf("users of a recreated database: %+v, %v", users, err)
	}
}

// TestUserLimits checks the bounds on a user's permissions and a
// database's users.
func TestUserLimits(t *testing.T) {
	e, st := testEngine(t, "")
	defer st.Close()
	defer e.Close()
	mustContainer(t, e, 400)
	if _, err := e.CreateUser("db", "u"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < MaxPermissionsPerUser; i++ {
		if _, err := e.CreatePermission("db", "u", PermissionSpec{ID: "p" + itoa(i), Mode: PermissionRead, Resource: "dbs/db/colls/c"}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := e.CreatePermission("db", "u", PermissionSpec{ID: "one-more", Mode: PermissionRead, Resource: "dbs/db/colls/c"})
	if !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), "1000 permissions, the limit") {
		t.Fatalf("permission past the limit: %v", err)
	}
	for i := 1; i < MaxUsersPerDatabase; i++ {
		if _, err := e.CreateUser("db", "u"+itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	_, err = e.CreateUser("db", "one-more")
	if !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), "10000 users, the limit") {
		t.Fatalf("user past the limit: %v", err)
	}
}

func itoa(i int) string {
	b := []byte{}
	for {
		b = append([]byte{byte('0' + i%10)}, b...)
		if i /= 10; i == 0 {
			return string(b)
		}
	}
}
