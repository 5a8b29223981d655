package engine

import (
	"errors"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// cmdEngine opens the engine with the script's per-partition limits.
func (env *scriptEnv) cmdEngine(t *testing.T, d *datadriven.TestData) string {
	if env.e != nil {
		d.Fatalf(t, "engine must be the first command")
	}
	env.open(t, Options{
		PartitionMaxRUs:   sizeArg(t, d, "partition-rus", 0),
		PartitionMaxBytes: int64(sizeArg(t, d, "partition-bytes", 0)),
	})
	return ""
}

// cmdCreateContainer creates db/c with the given throughput and prints its
// partition map.
func (env *scriptEnv) cmdCreateContainer(t *testing.T, d *datadriven.TestData) string {
	if env.c != nil {
		d.Fatalf(t, "the script already has its container")
	}
	var rus int
	d.ScanArgs(t, "rus", &rus)
	if _, err := env.e.CreateDatabase("db", Throughput{}); err != nil && !errors.Is(err, ErrConflict) {
		t.Fatal(err)
	}
	if _, err := env.e.CreateContainer("db", ContainerSpec{ID: "c", PartitionKey: hashDef("/pk")}, Throughput{RUs: rus}); err != nil {
		return "error: " + err.Error()
	}
	c, err := env.e.Container("db", "c")
	if err != nil {
		t.Fatal(err)
	}
	env.c = c
	return env.mapString()
}

// cmdRaiseThroughput replaces the container's throughput through its offer
// and prints the partition map.
func (env *scriptEnv) cmdRaiseThroughput(t *testing.T, d *datadriven.TestData) string {
	var rus int
	d.ScanArgs(t, "rus", &rus)
	offer, err := env.e.Offer(offerID(env.c.Info().Rid2Seq()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.e.ReplaceOffer(offer.ID, Throughput{RUs: rus}); err != nil {
		return "error: " + err.Error()
	}
	return env.mapString()
}

// cmdRestart closes the engine and opens it again on the same store.
func (env *scriptEnv) cmdRestart(t *testing.T, d *datadriven.TestData) string {
	env.e.Close()
	e, err := Open(env.st, env.opts)
	if err != nil {
		env.e = nil
		d.Fatalf(t, "reopen: %v", err)
	}
	env.e = e
	if env.c, err = e.Container("db", "c"); err != nil {
		d.Fatalf(t, "after the restart: %v", err)
	}
	return env.mapString()
}
