package engine

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/parsecdb/parsec/internal/storage"
	"github.com/parsecdb/parsec/internal/testclock"
)

// TestScripts runs the engine scripts testdata/*.txt, datadriven files that
// drive one engine through a container's life: creating it, writing to it,
// splitting it and routing keys. Each file starts a fresh engine on an
// in-memory store with a frozen clock and throttling off; storage splits
// run only when a script says so (split), so every output is deterministic.
// The commands, one handler each (script_*_test.go):
//
//	engine [partition-rus=<n>] [partition-bytes=<n>]
//	    open the engine with these limits per physical partition (before any
//	    other command; without it the engine opens with the defaults)
//	create-container rus=<n>
//	    create container db/c, partition key /pk, with n RU/s; print its map
//	write pk=<key> size=<n> n=<count> [keys=<k>]
//	    create count items of n bytes each under pk, or with keys under k
//	    keys <key>0 … <key>k-1 in turn; print their number and charge
//	charge op=<create|upsert|replace|read|delete> pk=<key> [id=<id>] [size=<n>]
//	    run one operation; print its outcome and request charge
//	ranges
//	    print the partition map (partition.Map.String)
//	partitions
//	    print each partition's items, bytes and RU/s budget
//	route pk=<key> | pk=(<key>, <key>, ...)
//	    print the EPK of each key and the range that holds it
//	split
//	    split every partition past the storage limit at its median, as the
//	    engine does in the background after a commit; print the splits and
//	    the map
//	raise-throughput rus=<n>
//	    replace the container's throughput (a power-of-two split of every
//	    partition when it needs more partitions); print the map
//	verify
//	    read back every item written, and check that each partition's read
//	    feed holds as many items as its count
//	restart
//	    close the engine and open it again on the same store; print the map
//
// Sizes take a K or M suffix (×1024, ×1024²). An operation that fails
// prints "error: <message>". Regenerate with -rewrite and review the diff.
func TestScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no scripts in testdata")
	}
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txt"), func(t *testing.T) {
			env := &scriptEnv{clk: testclock.New(time.Unix(1_800_000_000, 0)), live: map[scriptItem]bool{}}
			defer env.close()
			datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
				h, ok := scriptCommands[d.Cmd]
				if !ok {
					d.Fatalf(t, "unknown command %q", d.Cmd)
				}
				if d.Cmd != "engine" && env.e == nil {
					env.open(t, Options{})
				}
				if d.Cmd != "engine" && d.Cmd != "create-container" && env.c == nil {
					d.Fatalf(t, "%s before create-container", d.Cmd)
				}
				return h(env, t, d)
			})
		})
	}
}

// scriptCommands maps each script command to its handler.
var scriptCommands = map[string]func(*scriptEnv, *testing.T, *datadriven.TestData) string{
	"engine":           (*scriptEnv).cmdEngine,
	"create-container": (*scriptEnv).cmdCreateContainer,
	"write":            (*scriptEnv).cmdWrite,
	"charge":           (*scriptEnv).cmdCharge,
	"ranges":           (*scriptEnv).cmdRanges,
	"partitions":       (*scriptEnv).cmdPartitions,
	"route":            (*scriptEnv).cmdRoute,
	"split":            (*scriptEnv).cmdSplit,
	"raise-throughput": (*scriptEnv).cmdRaiseThroughput,
	"verify":           (*scriptEnv).cmdVerify,
	"restart":          (*scriptEnv).cmdRestart,
}

// scriptEnv is the state of one script: the engine, its store and clock,
// the container, and the items the script has written.
type scriptEnv struct {
	clk    *testclock.Clock
	opts   Options
	st     *storage.DB
	e      *Engine
	c      *Container
	nextID int
	live   map[scriptItem]bool
}

// scriptItem names an item the script wrote.
type scriptItem struct{ pk, id string }

// open opens the engine on a fresh in-memory store.
func (env *scriptEnv) open(t *testing.T, o Options) {
	t.Helper()
	o.Now = env.clk.Now
	o.NoThrottle = true
	o.manualStorageSplits = true
	o.Logf = t.Logf
	st, err := storage.Open(storage.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	e, err := Open(st, o)
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	env.opts, env.st, env.e = o, st, e
}

func (env *scriptEnv) close() {
	if env.e != nil {
		env.e.Close()
	}
	if env.st != nil {
		env.st.Close()
	}
}

// mapString renders the container's partition map.
func (env *scriptEnv) mapString() string {
	m, _ := env.c.routing()
	return m.String()
}

// itemBody returns the JSON of an item of exactly size bytes (or its smallest
// form, when size is smaller than that).
func itemBody(pk, id string, size int) []byte {
	b := fmt.Sprintf(`{"id":%q,"pk":%q,"pad":""}`, id, pk)
	pad := max(size-len(b), 0)
	return fmt.Appendf(nil, `{"id":%q,"pk":%q,"pad":%q}`, id, pk, strings.Repeat("x", pad))
}

// sizeArg returns the argument name as a number, with an optional K or M
// suffix (×1024, ×1024²), or def when the command does not have it.
func sizeArg(t *testing.T, d *datadriven.TestData, name string, def int) int {
	t.Helper()
	if !d.HasArg(name) {
		return def
	}
	var s string
	d.ScanArgs(t, name, &s)
	mult := 1
	switch {
	case strings.HasSuffix(s, "K"):
		mult, s = 1<<10, s[:len(s)-1]
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, s[:len(s)-1]
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		d.Fatalf(t, "bad %s %q", name, s)
	}
	return v * mult
}

// stringArg returns the argument name, or def when the command does not
// have it.
func stringArg(t *testing.T, d *datadriven.TestData, name, def string) string {
	t.Helper()
	if !d.HasArg(name) {
		return def
	}
	var s string
	d.ScanArgs(t, name, &s)
	return s
}
