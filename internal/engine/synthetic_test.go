package engine

import (
	"strings"
	"testing"

	"github.com/parsecdb/parsec/internal/epk"
)

// TestHierarchicalSyntheticKey: a level that is a plain path (read in the
// same scan as the computed level's base paths) and a computed level; the
// item is written without its computed level and read by base values.
func TestHierarchicalSyntheticKey(t *testing.T) {
	e, st := testEngine(t, "")
	defer st.Close()
	defer e.Close()
	if _, err := e.CreateDatabase("db", Throughput{}); err != nil {
		t.Fatal(err)
	}
	spec := ContainerSpec{ID: "h", PartitionKey: hashDef("/tenant", "/k"), SyntheticKey: `[/tenant, concat(/d, ".", /u)]`}
	if _, err := e.CreateContainer("db", spec, Throughput{RUs: 4000}); err != nil {
		t.Fatal(err)
	}
	c, _ := e.Container("db", "h")
	op, err := c.PrepareWrite(OpCreate, []byte(`{"id":"1","tenant":"t","d":"2026","u":"x"}`), nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if want := (epk.Key{epk.String("t"), epk.String("2026.x")}); !op.Key.Equal(want) {
		t.Fatalf("key %s, want %s", op.Key, want)
	}
	if _, _, err := c.Execute(&Command{Ops: []Op{op}}, ""); err != nil {
		t.Fatal(err)
	}
	read, err := c.PrepareKeyed(OpRead, "1", epk.Key{epk.String("t"), epk.String("2026"), epk.String("x")}, true)
	if err != nil {
		t.Fatal(err)
	}
	r, _, err := c.ReadItem(read)
	if err != nil || !strings.Contains(string(r.Doc), `"k":"2026.x"`) {
		t.Fatalf("read by base values: %v %s", err, r.Doc)
	}
	if _, err := c.PrepareWrite(OpCreate, []byte(`{"id":"2","tenant":"t","d":"2026","u":"x","k":"2026.y"}`), nil, false); err == nil || !strings.Contains(err.Error(), "2026.x") {
		t.Fatalf("a wrong computed level: %v, want an error naming 2026.x", err)
	}
}
