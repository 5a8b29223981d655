package engine

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/parsecdb/parsec/internal/storage"
)

// TestControlCharactersInIDs checks that database and container ids with
// control characters are refused as bad requests, and that item ids may
// hold them, as on the service.
func TestControlCharactersInIDs(t *testing.T) {
	e, st := testEngine(t, "")
	defer st.Close()
	defer e.Close()
	c := mustContainer(t, e, 400)
	for _, id := range []string{"a\x00b", "a\x01", "\tx", "x\x7f", "x\u0085"} {
		if _, err := e.CreateDatabase(id, Throughput{}); !errors.Is(err, ErrBadRequest) {
			t.Errorf("database id %q: %v, want a bad request", id, err)
		}
		if _, err := e.CreateContainer("db", ContainerSpec{ID: id, PartitionKey: hashDef("/pk")}, Throughput{}); !errors.Is(err, ErrBadRequest) {
			t.Errorf("container id %q: %v, want a bad request", id, err)
		}
		body, _ := json.Marshal(map[string]string{"id": id, "pk": "k"})
		if _, err := c.PrepareWrite(OpCreate, body, key("k"), true); err != nil {
			t.Errorf("item id %q: %v", id, err)
		}
	}
}

// TestCatalogKeysOfOlderStores opens a store written before names were
// escaped in catalog keys, holding database "a" with container "b\x00c" and
// database "a\x00b": both survive restarts, and deleting database "a" leaves
// database "a\x00b" and its container alone.
func TestCatalogKeysOfOlderStores(t *testing.T) {
	dir := t.TempDir()
	e, st := testEngine(t, dir)
	mustCreate := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err := e.CreateDatabase("a", Throughput{})
	mustCreate(err)
	_, err = e.CreateContainer("a", ContainerSpec{ID: "bc", PartitionKey: hashDef("/pk")}, Throughput{})
	mustCreate(err)
	c, _ := e.Container("a", "bc")
	mustWrite(t, c, `{"id":"1","pk":"k"}`)
	_, err = e.CreateDatabase("ab", Throughput{})
	mustCreate(err)
	e.Close()

	// Rename both under their ids with NUL, at the keys the older encoding
	// gave them (names appended raw).
	move := func(oldKey, rawOld []byte, rename func(map[string]any)) {
		t.Helper()
		v, err := st.Get(nil, oldKey)
		if err != nil {
			t.Fatal(err)
		}
		var rec map[string]any
		if err := json.Unmarshal(v, &rec); err != nil {
			t.Fatal(err)
		}
		rename(rec)
		v, _ = json.Marshal(rec)
		b := st.NewBatch()
		_ = b.Delete(oldKey)
		_ = b.Set(rawOld, v)
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	move(storage.ContainerKey("a", "bc"), []byte("M\x00coll\x00a\x00b\x00c"), func(r map[string]any) { r["id"] = "b\x00c" })
	move(storage.DatabaseKey("ab"), []byte("M\x00db\x00a\x00b"), func(r map[string]any) { r["id"] = "a\x00b" })
	st.Close()

	reopen := func() {
		t.Helper()
		e, st = testEngine(t, dir)
	}
	reopen()
	_, err = e.CreateContainer("a\x00b", ContainerSpec{ID: "c", PartitionKey: hashDef("/pk")}, Throughput{})
	mustCreate(err)
	c2, _ := e.Container("a\x00b", "c")
	mustWrite(t, c2, `{"id":"2","pk":"k"}`)
	e.Close()
	st.Close()

	reopen()
	for _, x := range [][3]string{{"a", "b\x00c", "1"}, {"a\x00b", "c", "2"}} {
		c, err := e.Container(x[0], x[1])
		if err != nil {
			t.Fatalf("after restart: %v", err)
		}
		if cs, _ := e.Containers(x[0]); len(cs) != 1 {
			t.Fatalf("database %q has %d containers, want 1", x[0], len(cs))
		}
		mustRead(t, c, x[2])
	}
	if err := e.DeleteDatabase("a"); err != nil {
		t.Fatal(err)
	}
	e.Close()
	st.Close()

	reopen()
	defer st.Close()
	defer e.Close()
	c2, err = e.Container("a\x00b", "c")
	if err != nil {
		t.Fatalf("deleting database \"a\" removed \"a\\x00b\"/\"c\": %v", err)
	}
	mustRead(t, c2, "2")
}

func mustWrite(t *testing.T, c *Container, body string) {
	t.Helper()
	op, err := c.PrepareWrite(OpCreate, []byte(body), key("k"), true)
	if err != nil {
		t.Fatal(err)
	}
	res, _, err := c.Execute(&Command{Ops: []Op{op}}, "")
	if err != nil || res[0].Err != nil {
		t.Fatalf("write %s: %v %v", body, err, res[0].Err)
	}
}

func mustRead(t *testing.T, c *Container, id string) {
	t.Helper()
	op, err := c.PrepareKeyed(OpRead, id, key("k"), true)
	if err != nil {
		t.Fatal(err)
	}
	if r, _, err := c.ReadItem(op); err != nil || r.Err != nil {
		t.Fatalf("read %s: %v %v", id, err, r.Err)
	}
}

// TestThroughputChangeAfterDeleteIsRefused: a throughput change that found
// its container before a deletion committed, and stores after it, must not
// write the deleted container's record back.
func TestThroughputChangeAfterDeleteIsRefused(t *testing.T) {
	e, st := testEngine(t, "")
	defer st.Close()
	defer e.Close()
	c := mustContainer(t, e, 400) // found before the deletion
	if err := e.DeleteContainer("db", "c"); err != nil {
		t.Fatal(err)
	}
	if err := e.storeThroughput(c, Throughput{RUs: 800}, 800, 1<<40); !errors.Is(err, ErrNotFound) {
		t.Fatalf("storing the throughput of a deleted container: %v, want ErrNotFound", err)
	}
	if _, err := st.Get(nil, storage.ContainerKey("db", "c")); err != storage.ErrNotFound {
		t.Fatalf("the deleted container's record: %v, want it absent", err)
	}
}
