package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// flushedStore returns a closed store in a new directory whose keys were
// flushed to tables in many rounds, so that its MANIFEST records many edits,
// and the path of that MANIFEST.
func flushedStore(t *testing.T) (dir, manifest string) {
	t.Helper()
	dir = t.TempDir()
	db, err := Open(Options{Dir: dir, Reserve: -1})
	if err != nil {
		t.Fatal(err)
	}
	for round := 0; round < 40; round++ {
		for i := 0; i < 50; i++ {
			if err := db.Set([]byte(fmt.Sprintf("k%02d-%02d", round, i)), []byte("v")); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.pdb.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	desc, err := pebble.Peek(dir, vfs.Default)
	if err != nil {
		t.Fatal(err)
	}
	return dir, desc.ManifestFilename
}

func countKeys(t *testing.T, db *DB) int {
	t.Helper()
	n := 0
	if err := db.Iterate(nil, []byte{0xff}, func(_, _ []byte) (bool, error) { n++; return true, nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestDamagedManifestRefusesToOpen flips 16 bytes in the middle of the
// MANIFEST of a cleanly closed store. Pebble alone would open it without
// the tables recorded after the damage; Open must refuse with ErrDataLoss,
// naming the file, and with AcceptDataLoss open, log the loss and keep the
// damaged file.
func TestDamagedManifestRefusesToOpen(t *testing.T) {
	dir, manifest := flushedStore(t)
	b, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(b) / 2; i < len(b)/2+16; i++ {
		b[i] ^= 0xff
	}
	if err := os.WriteFile(manifest, b, 0o644); err != nil {
		t.Fatal(err)
	}

	_, err = Open(Options{Dir: dir, Reserve: -1})
	if !errors.Is(err, ErrDataLoss) {
		t.Fatalf("open on a damaged MANIFEST: %v, want ErrDataLoss", err)
	}
	for _, want := range []string{"the MANIFEST " + manifest + " is damaged at byte", "checksum mismatch"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not say %q", err, want)
		}
	}

	var logged []string
	logf := func(format string, args ...any) { logged = append(logged, fmt.Sprintf(format, args...)) }
	db, err := Open(Options{Dir: dir, Reserve: -1, AcceptDataLoss: true, Logf: logf})
	if err != nil {
		t.Fatalf("open with AcceptDataLoss: %v", err)
	}
	defer db.Close()
	if n := countKeys(t, db); n >= 40*50 {
		t.Errorf("%d keys after accepting the loss of tables, want fewer than %d", n, 40*50)
	}
	if len(logged) != 1 || !strings.Contains(logged[0], "DATA LOSS accepted: the MANIFEST "+manifest) {
		t.Errorf("logged %q, want the accepted loss of the MANIFEST", logged)
	}
	if _, err := os.Stat(manifest + ".damaged"); err != nil {
		t.Errorf("damaged MANIFEST not kept: %v", err)
	}
}

// TestManifestDamagedAtItsEnd damages the end of the MANIFEST of a
// cleanly closed store, where damage looks like the torn end of an edit
// being written at a crash: its last byte flipped, or its last 3 bytes cut.
// After the clean stop Open must refuse; had the store crashed instead (no
// record of a clean stop), it is a torn end and Open must succeed.
func TestManifestDamagedAtItsEnd(t *testing.T) {
	damages := map[string]func(t *testing.T, manifest string){
		"flip": func(t *testing.T, manifest string) {
			b, err := os.ReadFile(manifest)
			if err != nil {
				t.Fatal(err)
			}
			b[len(b)-1] ^= 0xff
			if err := os.WriteFile(manifest, b, 0o644); err != nil {
				t.Fatal(err)
			}
		},
		"cut": func(t *testing.T, manifest string) {
			fi, err := os.Stat(manifest)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(manifest, fi.Size()-3); err != nil {
				t.Fatal(err)
			}
		},
	}
	for name, damage := range damages {
		t.Run(name+" after a clean stop", func(t *testing.T) {
			dir, manifest := flushedStore(t)
			damage(t, manifest)
			_, err := Open(Options{Dir: dir, Reserve: -1})
			if !errors.Is(err, ErrDataLoss) || !strings.Contains(err.Error(), "the MANIFEST "+manifest+" is damaged at byte") {
				t.Fatalf("open: %v, want ErrDataLoss naming the MANIFEST", err)
			}
			// The refusal holds until the loss is accepted.
			if _, err := Open(Options{Dir: dir, Reserve: -1}); !errors.Is(err, ErrDataLoss) {
				t.Fatalf("second open: %v, want ErrDataLoss", err)
			}
		})
		t.Run(name+" after a crash", func(t *testing.T) {
			dir, manifest := flushedStore(t)
			if err := os.Remove(filepath.Join(dir, stopFile)); err != nil {
				t.Fatal(err)
			}
			damage(t, manifest)
			db, err := Open(Options{Dir: dir, Reserve: -1})
			if err != nil {
				t.Fatalf("open on a MANIFEST with a torn end: %v", err)
			}
			db.Close()
		})
	}
}
