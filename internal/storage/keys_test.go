package storage

import (
	"bytes"
	"fmt"
	"math/rand"
	"testing"
)

// TestKeysInjective draws random (database, container, EPK, id) tuples from
// an alphabet rich in the separator bytes and checks that distinct tuples
// never share a key, and that no key falls in the span of a different
// database, container or EPK range.
func TestKeysInjective(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	alphabet := []byte{0, 1, 2, 'a', 'b', 0xff}
	name := func(max int) string {
		b := make([]byte, rng.Intn(max+1))
		for i := range b {
			b[i] = alphabet[rng.Intn(len(alphabet))]
		}
		return string(b)
	}
	hexEPK := func() string {
		const digits = "0123456789ABCDEF"
		b := make([]byte, rng.Intn(4))
		for i := range b {
			b[i] = digits[rng.Intn(len(digits))]
		}
		return string(b)
	}
	type tuple struct{ db, coll, epk, id string }
	within := func(k, lo, hi []byte) bool {
		return bytes.Compare(k, lo) >= 0 && (hi == nil || bytes.Compare(k, hi) < 0)
	}
	var tuples []tuple
	for i := 0; i < 400; i++ {
		tuples = append(tuples, tuple{name(4), name(4), hexEPK(), name(3)})
	}
	// The reported collision, always included.
	tuples = append(tuples, tuple{db: "a", coll: "b\x00c"}, tuple{db: "a\x00b", coll: "c"})

	dbKeys := map[string]string{}
	collKeys := map[string][2]string{}
	for _, x := range tuples {
		if prev, ok := dbKeys[string(DatabaseKey(x.db))]; ok && prev != x.db {
			t.Fatalf("databases %q and %q share the key %q", prev, x.db, DatabaseKey(x.db))
		}
		dbKeys[string(DatabaseKey(x.db))] = x.db
		pair := [2]string{x.db, x.coll}
		if prev, ok := collKeys[string(ContainerKey(x.db, x.coll))]; ok && prev != pair {
			t.Fatalf("containers %q and %q share the key %q", prev, pair, ContainerKey(x.db, x.coll))
		}
		collKeys[string(ContainerKey(x.db, x.coll))] = pair
		if !bytes.HasPrefix(DatabaseKey(x.db), DatabasePrefix()) || !bytes.HasPrefix(ContainerKey(x.db, x.coll), ContainersPrefix()) {
			t.Fatalf("catalog key of %q/%q outside its family", x.db, x.coll)
		}
	}
	// A database's container span holds exactly its own containers.
	for _, x := range tuples {
		lo := ContainerPrefix(x.db)
		hi := PrefixEnd(lo)
		for _, y := range tuples {
			if in := within(ContainerKey(y.db, y.coll), lo, hi); in != (x.db == y.db) {
				t.Fatalf("container %q/%q in the span of database %q: %v", y.db, y.coll, x.db, in)
			}
		}
	}

	// Partition state and index records: range ids are decimal numbers.
	partKeys := map[string]string{}
	for _, rid := range [][RidLen]byte{{1}, {1, 0, 0, 0, 0, 0, 0, 1}} {
		lo, hi := ContainerPartitionsSpan(rid)
		for n := 0; n < 200; n++ {
			id := fmt.Sprint(n)
			for kind, k := range map[string][]byte{"state": PartitionKey(rid, id), "index": PartitionIndexKey(rid, id), "applied": PartitionAppliedKey(rid, id)} {
				who := fmt.Sprintf("%x/%s/%s", rid, id, kind)
				if prev, ok := partKeys[string(k)]; ok && prev != who {
					t.Fatalf("partition records %s and %s share the key %q", prev, who, k)
				}
				partKeys[string(k)] = who
				if !within(k, lo, hi) {
					t.Fatalf("partition record %s outside its container's span", who)
				}
			}
		}
	}

	// Items, logical partitions and index entries of two containers.
	rids := [][RidLen]byte{{1}, {1, 0, 0, 0, 0, 0, 0, 1}}
	itemKeys := map[string]string{}
	for _, x := range tuples {
		for ri, rid := range rids {
			who := fmt.Sprintf("%d/%q/%q", ri, x.epk, x.id)
			k := ItemKey(nil, rid, x.epk, x.id)
			if prev, ok := itemKeys[string(k)]; ok && prev != who {
				t.Fatalf("items %s and %s share the key %q", prev, who, k)
			}
			itemKeys[string(k)] = who
			e, id, ok := SplitItemKey(k)
			if !ok || string(e) != x.epk || string(id) != x.id {
				t.Fatalf("item key %q splits into %q, %q, %v", k, e, id, ok)
			}
			lk := LogicalKey(nil, rid, x.epk, x.id)
			if prev, ok := itemKeys["L"+string(lk)]; ok && prev != who {
				t.Fatalf("logical partitions %s and %s share the key %q", prev, who, lk)
			}
			itemKeys["L"+string(lk)] = who
			for _, y := range tuples {
				for rj, rid2 := range rids {
					lo, hi := ContainerItemsSpan(rid2)
					if within(k, lo, hi) != (ri == rj) {
						t.Fatalf("item %s in the span of container %d", who, rj)
					}
					// EPK ranges [y.epk, y.epk+"F") hold exactly the items whose
					// EPK lies in that range.
					if y.epk == "" || ri != rj {
						continue
					}
					lo, hi = ItemSpan(rid2, y.epk, y.epk+"F")
					want := x.epk >= y.epk && x.epk < y.epk+"F"
					if within(k, lo, hi) != want {
						t.Fatalf("item %s in EPK span [%q, %q): %v, want %v", who, y.epk, y.epk+"F", !want, want)
					}
				}
			}
		}
	}
}

// TestUserPermissionKeysInjective checks the user and permission keys as
// TestKeysInjective checks the others: distinct (database, user,
// permission) tuples never share a key, and each span holds exactly the
// records of its database or user.
func TestUserPermissionKeysInjective(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	alphabet := []byte{0, 1, 2, 'a', 0xff}
	name := func() string {
		b := make([]byte, rng.Intn(4))
		for i := range b {
			b[i] = alphabet[rng.Intn(len(alphabet))]
		}
		return string(b)
	}
	type tuple struct{ db, user, perm string }
	tuples := []tuple{{"a", "b\x00c", "d"}, {"a\x00b", "c", "d"}, {"a", "b", "c\x00d"}, {"a", "b\x00c", ""}}
	for i := 0; i < 300; i++ {
		tuples = append(tuples, tuple{name(), name(), name()})
	}
	within := func(k, lo []byte) bool {
		return bytes.Compare(k, lo) >= 0 && bytes.Compare(k, PrefixEnd(lo)) < 0
	}
	users := map[string][2]string{}
	perms := map[string]tuple{}
	for _, x := range tuples {
		uk, pk := UserKey(x.db, x.user), PermissionKey(x.db, x.user, x.perm)
		if prev, ok := users[string(uk)]; ok && prev != [2]string{x.db, x.user} {
			t.Fatalf("users %q and %q share a key", prev, x)
		}
		users[string(uk)] = [2]string{x.db, x.user}
		if prev, ok := perms[string(pk)]; ok && prev != x {
			t.Fatalf("permissions %q and %q share a key", prev, x)
		}
		perms[string(pk)] = x
		if !within(uk, UsersPrefix()) || !within(pk, PermissionsPrefix()) {
			t.Fatalf("keys of %q outside their family", x)
		}
		for _, other := range [][]byte{DatabasePrefix(), ContainersPrefix(), SeqKey()} {
			if bytes.HasPrefix(uk, other) || bytes.HasPrefix(pk, other) || bytes.HasPrefix(other, UsersPrefix()) {
				t.Fatalf("user or permission key of %q inside another family", x)
			}
		}
	}
	for _, x := range tuples {
		for _, y := range tuples {
			if in := within(UserKey(y.db, y.user), UserPrefix(x.db)); in != (x.db == y.db) {
				t.Fatalf("user %q in the span of database %q: %v", y, x.db, in)
			}
			if in := within(PermissionKey(y.db, y.user, y.perm), DatabasePermissionsPrefix(x.db)); in != (x.db == y.db) {
				t.Fatalf("permission %q in the span of database %q: %v", y, x.db, in)
			}
			same := x.db == y.db && x.user == y.user
			if in := within(PermissionKey(y.db, y.user, y.perm), PermissionPrefix(x.db, x.user)); in != same {
				t.Fatalf("permission %q in the span of user %q/%q: %v", y, x.db, x.user, in)
			}
		}
	}
}

// TestCatalogDatabase reads the database back out of every kind of
// per-database catalog key and prefix, for names full of the escaped
// bytes, and refuses the keys of no database.
func TestCatalogDatabase(t *testing.T) {
	for _, db := range []string{"", "a", "a\x00b", "\x01\x02", "x\x01\x00y\xff"} {
		for _, k := range [][]byte{DatabaseKey(db), ContainerKey(db, "c\x00"), ContainerPrefix(db), UserKey(db, "u"), UserPrefix(db),
			PermissionKey(db, "u\x01", "p"), PermissionPrefix(db, "u"), DatabasePermissionsPrefix(db), EncryptionKeyKey(db, "k"), EncryptionKeyPrefix(db)} {
			got, ok := CatalogDatabase(k)
			if !ok || got != db {
				t.Fatalf("CatalogDatabase(%q) = %q, %v; want %q", k, got, ok, db)
			}
		}
	}
	var rid [RidLen]byte
	for _, k := range [][]byte{SeqKey(), CatalogAppliedKey(), ScriptKey(rid, 1, "s"), PartitionKey(rid, "0"), ItemKey(nil, rid, "AB", "x"), append(DatabasePrefix(), 1, 5)} {
		if db, ok := CatalogDatabase(k); ok {
			t.Fatalf("CatalogDatabase(%q) = %q, want none", k, db)
		}
	}
}
