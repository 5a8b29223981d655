package engine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// cmdRanges prints the partition map.
func (env *scriptEnv) cmdRanges(t *testing.T, d *datadriven.TestData) string {
	return env.mapString()
}

// cmdPartitions prints each partition's item count, stored bytes and
// budget.
func (env *scriptEnv) cmdPartitions(t *testing.T, d *datadriven.TestData) string {
	stats, err := env.c.Stats(0)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, s := range stats {
		fmt.Fprintf(&b, "%s: %d items, %d bytes, %.0f RU/s\n", s.ID, s.Items, s.Bytes, s.BudgetRUs)
	}
	return b.String()
}

// cmdRoute prints the EPK of each key and the range that holds it.
func (env *scriptEnv) cmdRoute(t *testing.T, d *datadriven.TestData) string {
	arg, ok := d.Arg("pk")
	if !ok {
		d.Fatalf(t, "route needs pk")
	}
	var b strings.Builder
	for _, pk := range arg.Vals {
		e, err := env.c.def.EPK(key(pk))
		if err != nil {
			d.Fatalf(t, "pk %q: %v", pk, err)
		}
		fmt.Fprintf(&b, "%s: epk %s in range %s\n", pk, e, env.c.PartitionFor(e).ID())
	}
	return b.String()
}

// cmdSplit runs the storage split check on every partition, as the engine
// does in the background after each commit: a partition past the limit
// splits in two at its median. Then the budgets are spread over the new
// partitions, as the split's own background refresh does.
func (env *scriptEnv) cmdSplit(t *testing.T, d *datadriven.TestData) string {
	var b strings.Builder
	for _, p := range env.c.Partitions() {
		if !env.c.storageSplitNeeded(p) {
			continue
		}
		children, err := env.c.splitForStorage(p)
		switch {
		case err != nil:
			fmt.Fprintf(&b, "%s: error: %v\n", p.ID(), err)
		case len(children) == 0:
			fmt.Fprintf(&b, "%s: %d bytes in one logical partition: no split\n", p.ID(), p.bytes.Load())
		default:
			ids := make([]string, len(children))
			for i, ch := range children {
				ids[i] = ch.ID
			}
			fmt.Fprintf(&b, "%s: %d bytes, split at %s into %s\n", p.ID(), p.bytes.Load(), children[1].Min, strings.Join(ids, ", "))
		}
	}
	if b.Len() == 0 {
		b.WriteString("no partition is past the storage limit\n")
	}
	env.e.refreshRates()
	b.WriteString(env.mapString())
	return b.String()
}
