package logstore

import (
	"github.com/cockroachdb/pebble/v2/vfs"
	"testing"
)

// reopenCheck opens a copy of the store's files as they are now.
func reopenCheck(t *testing.T, fs vfs.FS, opts Options, dump func(*Store)) {
	mem := vfs.NewMem()
	if _, err := vfs.Clone(fs, mem, "/log", "/log"); err != nil {
		t.Fatal(err)
	}
	_ = mem.Remove("/log/LOCK")
	s2 := open(t, mem, opts)
	defer s2.Close()
	dump(s2)
}
