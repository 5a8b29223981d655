package storage

import (
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// A staged table's keys appear at once when it is ingested, above earlier
// writes and deletions, and survive a reopen; keys out of order are refused.
func TestStagedTableIngest(t *testing.T) {
	for _, mem := range []bool{false, true} {
		t.Run(fmt.Sprintf("inMemory=%v", mem), func(t *testing.T) {
			fs := vfs.NewMem()
			o := Options{Dir: "/d", FS: fs, Reserve: -1}
			if mem {
				o = Options{InMemory: true}
			}
			db, err := Open(o)
			if err != nil {
				t.Fatal(err)
			}
			if err := db.Set([]byte("k005"), []byte("old")); err != nil {
				t.Fatal(err)
			}
			if err := db.Set([]byte("k999"), []byte("outside")); err != nil {
				t.Fatal(err)
			}
			b := db.NewBatch()
			_ = b.DeleteRange([]byte("k000"), []byte("k100"))
			if err := b.Commit(); err != nil {
				t.Fatal(err)
			}
			st, err := db.NewStagedTable("g1-a")
			if err != nil {
				t.Fatal(err)
			}
			for i := range 100 {
				if err := st.Set(fmt.Appendf(nil, "k%03d", i), fmt.Appendf(nil, "v%d", i)); err != nil {
					t.Fatal(err)
				}
			}
			if err := st.Set([]byte("k050"), nil); err == nil {
				t.Fatal("a key out of order was accepted")
			}
			if err := st.Finish(); err != nil {
				t.Fatal(err)
			}
			if _, err := db.Get(nil, []byte("k005")); err != ErrNotFound {
				t.Fatalf("a staged key is visible before the ingest: %v", err)
			}
			if !db.HasStaged("g1-a") {
				t.Fatal("the staged table is not found")
			}
			if err := db.Ingest("g1-a"); err != nil {
				t.Fatal(err)
			}
			if db.HasStaged("g1-a") {
				t.Fatal("the staged table is still there after its ingest")
			}
			check := func(db *DB) {
				t.Helper()
				n := 0
				err := db.Iterate([]byte("k"), []byte("l"), func(k, v []byte) (bool, error) {
					n++
					return true, nil
				})
				if err != nil || n != 101 {
					t.Fatalf("%d keys after the ingest (%v), want 101", n, err)
				}
				if v, err := db.Get(nil, []byte("k005")); err != nil || string(v) != "v5" {
					t.Fatalf("k005 = %q, %v", v, err)
				}
			}
			check(db)
			// An abandoned table is removed by prefix.
			st, err = db.NewStagedTable("g1-b")
			if err != nil {
				t.Fatal(err)
			}
			_ = st.Set([]byte("x"), nil)
			st.Abort()
			if err := db.RemoveStaged("g1-"); err != nil || db.HasStaged("g1-b") {
				t.Fatalf("the abandoned table was not removed: %v", err)
			}
			if mem {
				return
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			if db, err = Open(o); err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			check(db)
		})
	}
}
