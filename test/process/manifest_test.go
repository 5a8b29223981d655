package process

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// currentManifest returns the MANIFEST the store in dir uses: the one its
// marker names.
func currentManifest(t *testing.T, dir string) string {
	t.Helper()
	markers, err := filepath.Glob(filepath.Join(dir, "marker.manifest.*"))
	if err != nil || len(markers) != 1 {
		t.Fatalf("MANIFEST markers in %s: %v %v", dir, markers, err)
	}
	return filepath.Join(dir, markers[0][strings.LastIndex(markers[0], ".MANIFEST-")+1:])
}

// TestDamagedManifestRefusesToStart flips 16 bytes of the MANIFEST of a
// cleanly stopped server that holds many acknowledged writes, in its
// middle and at its end (where damage looks like the torn end of an edit
// written at a crash). The server must refuse to start, naming the file
// and the check that failed; with --accept-data-loss it must log the loss
// and start, or stop saying why, never crash; and after that it starts
// normally.
func TestDamagedManifestRefusesToStart(t *testing.T) {
	for _, where := range []string{"middle", "end"} {
		t.Run(where, func(t *testing.T) {
			// 200 writes of 1 MB fill the store's memory several times, so
			// that its MANIFEST records several tables.
			dir := populated(t, 200, 1<<20, 4)
			manifest := currentManifest(t, dir)
			b, err := os.ReadFile(manifest)
			if err != nil {
				t.Fatal(err)
			}
			at := len(b) / 2
			if where == "end" {
				at = len(b) - 16
			}
			for i := at; i < at+16; i++ {
				b[i] ^= 0xff
			}
			if err := os.WriteFile(manifest, b, 0o644); err != nil {
				t.Fatal(err)
			}

			p, out, err := run(t, dir)
			if err == nil {
				stopServer(t, p)
				t.Fatalf("started on a damaged MANIFEST; output:\n%s", out)
			}
			for _, want := range []string{"the MANIFEST " + manifest + " is damaged at byte", "the record there fails its check", "acknowledged writes", "--accept-data-loss"} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("refusal does not say %q; output:\n%s", want, out)
				}
			}

			// The state recorded before the damage opens only if no later
			// compaction replaced the tables it names.
			p, out, err = run(t, dir, "--accept-data-loss")
			if p != nil {
				stopServer(t, p)
			}
			for _, want := range []string{"DATA LOSS accepted: the MANIFEST " + manifest, "the original is kept as " + manifest + ".damaged"} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("start with --accept-data-loss does not log %q; output:\n%s", want, out)
				}
			}
			if strings.Contains(out.String(), "goroutine ") {
				t.Fatalf("--accept-data-loss crashed:\n%s", out)
			}
			if err != nil {
				t.Logf("the state before the damage cannot be opened: %v", err)
				if !strings.Contains(out.String(), "restore the data directory from a backup") {
					t.Errorf("--accept-data-loss stopped without saying why: %v\n%s", err, out)
				}
				return
			}

			p, out, err = run(t, dir)
			if err != nil {
				t.Fatalf("restart after accepting the loss: %v\n%s", err, out)
			}
			stopServer(t, p)
			if strings.Contains(out.String(), "DATA LOSS") {
				t.Errorf("restart after accepting the loss reports it again:\n%s", out)
			}
		})
	}
}
