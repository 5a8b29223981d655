package placement

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
)

// TestSimulation applies the planner's decisions step by step to a model
// cluster (moves take a few steps; nodes join, die and drain; loads and
// sizes change) and checks the invariants at every step: no change takes
// a partition below its replication factor, a replica is added as a
// learner and promoted before the one it replaces is removed, at most one
// snapshot in and one out per node, nothing is placed on a node that is
// not live. When the events stop it checks convergence as the real-process
// test will: every partition back to three replicas in distinct zones
// (when enough exist), every node within ±1 replica and ±1 leader of the
// mean and ±15% of the mean bytes, and then stillness: further plans
// decide nothing (MongoDB's balancing_based_on_size.js and PD's
// redundant_balance_region check the same). PLACEMENT_SEEDS=N runs more
// seeds.
func TestSimulation(t *testing.T) {
	seeds := 20
	if testing.Short() {
		seeds = 8
	}
	if s, err := strconv.Atoi(os.Getenv("PLACEMENT_SEEDS")); err == nil {
		seeds = s
	}
	bytesChecked.Store(0)
	for seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { simulate(t, uint64(seed)) })
	}
	// The bytes target must be checked often, not skipped by luck.
	if n := bytesChecked.Load(); n < int64(seeds)/5 {
		t.Errorf("bytes checked in only %d runs of %d", n, seeds)
	}
	t.Logf("bytes checked in %d runs of %d", bytesChecked.Load(), seeds)
}

const mib = 1 << 20

// bytesChecked counts the runs whose bytes were checked too.
var bytesChecked atomic.Int64

func simulate(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b9))
	cfg := DefaultConfig()
	cfg.Seed = seed
	if rng.IntN(4) == 0 {
		// Two snapshots per node, and a byte budget that binds.
		cfg.MaxSnapshotsIn, cfg.MaxSnapshotsOut, cfg.RebalanceRate = 2, 2, 8*mib
	}
	m := &model{cfg: cfg, rate: 32 * mib}
	if os.Getenv("PLACEMENT_TRACE") != "" {
		m.trace = func(s string) { t.Log(s) }
	}
	zones := 1
	if rng.IntN(2) == 0 {
		zones = 2 + rng.IntN(3)
	}
	nodes := 3 + rng.IntN(3)
	next := uint64(1)
	join := func() {
		m.members = append(m.members, Member{ID: next, Zone: fmt.Sprintf("z%d", rng.IntN(zones)), State: Live})
		next++
	}
	for range nodes {
		join()
	}
	containers := 1 + rng.IntN(3)
	for c := range containers {
		n := 4 + rng.IntN(20)
		if err := m.create(fmt.Sprintf("c%d", c), n,
			func(int) int64 { return int64(20+rng.IntN(180)) * mib },
			func(int) float64 { return float64(rng.IntN(3000)) }); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.checkHealthy(); err != nil {
		t.Fatalf("after placement: %v", err)
	}
	live := func() []uint64 {
		var out []uint64
		for _, mm := range m.members {
			if mm.State == Live {
				out = append(out, mm.ID)
			}
		}
		return out
	}
	events := 40 + rng.IntN(60)
	settled := false
	for step := range events + 600 {
		if step < events {
			switch x := rng.IntN(100); {
			case x < 6:
				join()
			case x < 9:
				// Kill only a healthy cluster's node, and keep enough
				// nodes to repair: one failure at a time, as a cluster
				// of three replicas survives.
				if ls := live(); len(ls) > cfg.ReplicationFactor && m.checkHealthy() == nil {
					m.kill(ls[rng.IntN(len(ls))])
				}
			case x < 12:
				ls := live()
				id := ls[rng.IntN(len(ls))]
				if CanRemove(m.state(), id) == nil {
					m.member(id).State = Draining
				}
			case x < 15:
				// A node goes quiet for a while, or is heard from again.
				i := rng.IntN(len(m.members))
				m.members[i].Suspect = !m.members[i].Suspect
			case x < 17:
				// A container created in the middle of it all.
				containers++
				if err := m.create(fmt.Sprintf("c%d", containers), 1+rng.IntN(8),
					func(int) int64 { return int64(20+rng.IntN(180)) * mib },
					func(int) float64 { return float64(rng.IntN(3000)) }); err != nil && !errors.Is(err, ErrNoLiveNodes) {
					t.Fatal(err)
				}
			case x < 25:
				p := &m.parts[rng.IntN(len(m.parts))]
				p.RU = float64(rng.IntN(3000))
				p.Bytes += int64(rng.IntN(20)) * mib
			}
		}
		if step == events {
			for i := range m.members {
				m.members[i].Suspect = false
			}
		}
		// A drained node leaves the membership (parsec cluster remove).
		for i := range m.members {
			if mm := &m.members[i]; mm.State == Draining {
				r, l, err := Holding(m.state(), mm.ID)
				if err != nil {
					t.Fatal(err)
				}
				if r == 0 && l == 0 {
					mm.State = Removed
				}
			}
		}
		idle := len(m.flight) == 0
		n, err := m.round()
		if err != nil {
			t.Fatalf("step %d: %v\n%s", step, err, m.summary())
		}
		if step >= events && n == 0 && idle && !m.draining() {
			settled = true
			break
		}
	}
	if !settled {
		t.Fatalf("not settled after %d steps\n%s", events+600, m.summary())
	}
	if err := m.checkHealthy(); err != nil {
		t.Fatalf("%v\n%s", err, m.summary())
	}
	full, err := m.checkBalanced()
	if err != nil {
		t.Fatal(err)
	}
	if full {
		bytesChecked.Add(1)
	}
	for i := range 20 {
		s, err := Plan(m.state())
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Changes) > 0 {
			t.Fatalf("settled, yet round %d decides %v", i, s.Changes)
		}
	}
}

func (m *model) draining() bool {
	for _, mm := range m.members {
		if mm.State == Draining {
			return true
		}
	}
	return false
}
