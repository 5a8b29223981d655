package storage

import "github.com/cockroachdb/pebble/v2/vfs"

// FS and File are the file system the store keeps its files on (Pebble's
// vfs, so that tests can crash a memory file system or inject errors), for
// companions that keep files of their own beside the store, such as the
// raft log store: Pebble stays behind this package.
type (
	FS   = vfs.FS
	File = vfs.File
)

// DefaultFS is the operating system's file system.
var DefaultFS FS = vfs.Default

// WriteCategory is the category of a file created for writing, as FS.Create
// takes it.
const WriteCategory = vfs.WriteCategoryUnspecified
