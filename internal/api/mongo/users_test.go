package mongo

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/parsecdb/parsec/internal/engine"
)

// The user commands a test harness runs before each test (MongoDB's
// "User Management Commands" reference): usersInfo lists a database's
// users ({users: [...]}, the built-in ones in admin), dropAllUsersFromDatabase
// answers {n: <dropped>} (0 for none), dropUser of a missing user is 11
// UserNotFound (error_codes.yml), and createUser, which would set a
// password Parsec cannot authenticate with, is refused clearly (115).
func TestUserCommands(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	usersOf := func(db string, arg any) []bson.D {
		t.Helper()
		var reply struct {
			Users []bson.D `bson:"users"`
		}
		if err := env.client.Database(db).RunCommand(ctx, bson.D{{Key: "usersInfo", Value: arg}}).Decode(&reply); err != nil {
			t.Fatalf("usersInfo %v on %s: %v", arg, db, err)
		}
		return reply.Users
	}
	admin := usersOf("admin", 1)
	if len(admin) != 1 || toMap(admin[0])["user"] != DefaultAccountName {
		t.Fatalf("admin's users: %v", admin)
	}
	if us := usersOf("d", 1); len(us) != 0 {
		t.Fatalf("users of d: %v", us)
	}
	dropAll := func(db string) int32 {
		t.Helper()
		m := toMap(env.run(t, db, bson.D{{Key: "dropAllUsersFromDatabase", Value: 1}}))
		n, _ := m["n"].(int32)
		return n
	}
	if n := dropAll("d"); n != 0 {
		t.Fatalf("dropAllUsersFromDatabase of no users: n = %d", n)
	}
	if _, err := env.client.Database("d").Collection("c").InsertOne(ctx, bson.D{{Key: "x", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"alice", "bob"} {
		if _, err := env.eng.CreateUser("d", u); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := env.eng.CreatePermission("d", "alice", engine.PermissionSpec{ID: "p", Mode: "Read", Resource: "dbs/d/colls/c"}); err != nil {
		t.Fatal(err)
	}
	if us := usersOf("d", 1); len(us) != 2 {
		t.Fatalf("users of d: %v", us)
	}
	alice := usersOf("d", "alice")
	if len(alice) != 1 || toMap(alice[0])["_id"] != "d.alice" {
		t.Fatalf("usersInfo alice: %v", alice)
	}
	if roles := toMap(alice[0])["roles"].(bson.A); len(roles) != 1 || toMap(roles[0].(bson.D))["role"] != "read" {
		t.Fatalf("alice's roles: %v", roles)
	}
	if us := usersOf("admin", bson.D{{Key: "user", Value: "bob"}, {Key: "db", Value: "d"}}); len(us) != 1 {
		t.Fatalf("usersInfo {user: bob, db: d}: %v", us)
	}
	if err := env.client.Database("d").RunCommand(ctx, bson.D{{Key: "dropUser", Value: "alice"}}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := env.client.Database("d").RunCommand(ctx, bson.D{{Key: "dropUser", Value: "alice"}}).Err(); cmdCode(err) != 11 {
		t.Fatalf("dropUser of a missing user: %v", err)
	}
	if n := dropAll("d"); n != 1 {
		t.Fatalf("dropAllUsersFromDatabase: n = %d", n)
	}
	err := env.client.Database("d").RunCommand(ctx, bson.D{{Key: "createUser", Value: "carol"}, {Key: "pwd", Value: "pw"}, {Key: "roles", Value: bson.A{}}}).Err()
	if cmdCode(err) != 115 {
		t.Fatalf("createUser: %v", err)
	}
}
