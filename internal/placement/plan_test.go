package placement

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// Malformed input is an error wrapping ErrInvalid, never a panic.
func TestPlanRejectsBadInput(t *testing.T) {
	ok := func() State {
		return State{
			Members:    liveNodes(3),
			Partitions: []Partition{{Range: 1, Replicas: []uint64{1, 2, 3}, Leader: 1}},
		}
	}
	for name, mutate := range map[string]func(*State){
		"member id 0":          func(s *State) { s.Members[0].ID = 0 },
		"member twice":         func(s *State) { s.Members = append(s.Members, Member{ID: 1}) },
		"bad state":            func(s *State) { s.Members[0].State = 9 },
		"negative capacity":    func(s *State) { s.Members[0].CapacityBytes = -1 },
		"range twice":          func(s *State) { s.Partitions = append(s.Partitions, s.Partitions[0]) },
		"no replicas":          func(s *State) { s.Partitions[0].Replicas = nil },
		"unknown replica node": func(s *State) { s.Partitions[0].Replicas = []uint64{1, 2, 7} },
		"replica twice":        func(s *State) { s.Partitions[0].Replicas = []uint64{1, 1, 2} },
		"learner is voter":     func(s *State) { s.Partitions[0].Learners = []uint64{2} },
		"leader not a voter":   func(s *State) { s.Partitions[0].Leader = 9 },
		"negative bytes":       func(s *State) { s.Partitions[0].Bytes = -1 },
		"replication factor":   func(s *State) { s.Config.ReplicationFactor = 99 },
		"negative tolerance":   func(s *State) { s.Config.BytesTolerance = -1 },
		"heat share above 1":   func(s *State) { s.Config.HeatShare = 2 },
		"move of unknown":      func(s *State) { s.Moves = []Move{{Range: 5, Kind: MoveReplica}} },
		"move kind":            func(s *State) { s.Moves = []Move{{Range: 1, Kind: 42}} },
		"move to unknown node": func(s *State) { s.Moves = []Move{{Range: 1, Kind: MoveReplica, To: 42}} },
		"buckets out of order": func(s *State) {
			s.Partitions[0].Load = []LoadBucket{{Min: "40", Max: "80"}, {Min: "00", Max: "40"}}
		},
		"empty bucket":       func(s *State) { s.Partitions[0].Load = []LoadBucket{{Min: "40", Max: "40"}} },
		"NaN bucket":         func(s *State) { s.Partitions[0].Load = []LoadBucket{{Min: "00", Max: "40", RU: math.NaN()}} },
		"hot key share":      func(s *State) { s.Partitions[0].HotKeys = []HotKey{{EPK: "00", Share: 1.5}} },
		"too many hot keys":  func(s *State) { s.Partitions[0].HotKeys = make([]HotKey, maxBuckets+1) },
		"too many learners":  func(s *State) { s.Partitions[0].Learners = make([]uint64, 20) },
		"too many moves":     func(s *State) { s.Moves = make([]Move, 100) },
		"negative snapshots": func(s *State) { s.Config.MaxSnapshotsIn = -1 },
	} {
		s := ok()
		mutate(&s)
		if _, err := Plan(s); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: Plan: got %v, want ErrInvalid", name, err)
		}
		if _, err := Place(nil, s); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: Place: got %v, want ErrInvalid", name, err)
		}
	}
	if _, err := Plan(ok()); err != nil {
		t.Fatalf("valid state: %v", err)
	}
}

// randomState builds a cluster with random placements and loads.
func randomState(rng *rand.Rand) State {
	n := 3 + rng.IntN(6)
	s := State{Members: liveNodes(n, "a", "b", "c"), Config: Config{Seed: rng.Uint64()}}
	for r := range 10 + rng.IntN(40) {
		perm := rng.Perm(n)[:3]
		var reps []uint64
		for _, i := range perm {
			reps = append(reps, uint64(i+1))
		}
		s.Partitions = append(s.Partitions, Partition{Range: uint64(r + 1), Container: "c", Replicas: reps,
			Leader: reps[rng.IntN(3)], Bytes: int64(1+rng.IntN(100)) * mib, RU: float64(rng.IntN(2000))})
	}
	return s
}

// Plan depends on the state, not on the order it is listed in.
func TestPlanDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for range 50 {
		s := randomState(rng)
		a, err := Plan(s)
		if err != nil {
			t.Fatal(err)
		}
		s2 := s
		s2.Members = slices.Clone(s.Members)
		s2.Partitions = slices.Clone(s.Partitions)
		rng.Shuffle(len(s2.Members), func(i, j int) { s2.Members[i], s2.Members[j] = s2.Members[j], s2.Members[i] })
		rng.Shuffle(len(s2.Partitions), func(i, j int) { s2.Partitions[i], s2.Partitions[j] = s2.Partitions[j], s2.Partitions[i] })
		b, err := Plan(s2)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("same state in another order, another plan:\n%v\n%v", a, b)
		}
	}
}

// balanced returns a 5-node cluster of 15 partitions at its target: 9
// replicas, 3 leaders and 576MiB on every node.
func balanced() State {
	s := State{Members: liveNodes(5)}
	// Replicas of partition r on nodes r, r+1, r+2 (mod 5).
	for r := range 15 {
		reps := []uint64{uint64(r%5 + 1), uint64((r+1)%5 + 1), uint64((r+2)%5 + 1)}
		s.Partitions = append(s.Partitions, Partition{Range: uint64(r + 1), Container: "c", Replicas: reps,
			Leader: reps[0], Bytes: 64 * mib, RU: 300})
	}
	return s
}

func TestPlanStillWhenBalanced(t *testing.T) {
	s, err := Plan(balanced())
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Changes) > 0 || len(s.Blocked) > 0 {
		t.Fatalf("balanced cluster, yet: %v", s)
	}
}

// Within the dead-band nothing moves; just outside it, something does.
func TestPlanDeadBand(t *testing.T) {
	grow := func(by int64) State {
		s := balanced()
		s.Partitions[0].Bytes += by // range 1: on nodes 1, 2, 3
		return s
	}
	// The mean grows by 3/5 of it, nodes 4 and 5 stay 3/5 of it below.
	// Nodes hold 576MiB, so 10% is about 60MiB: +60MiB is inside (36MiB
	// below the mean), +200MiB is outside (120MiB below).
	for _, tc := range []struct {
		by    int64
		moves bool
	}{{60 * mib, false}, {200 * mib, true}} {
		s, err := Plan(grow(tc.by))
		if err != nil {
			t.Fatal(err)
		}
		moved := slices.ContainsFunc(s.Changes, func(c Change) bool { return c.Phase == PhaseBytes })
		if moved != tc.moves {
			t.Errorf("range 1 grown by %dMiB: bytes moves %v, want %v: %v", tc.by/mib, moved, tc.moves, s.Changes)
		}
	}
	// Request units: equal bytes and counts, every partition on node 1
	// three times as busy. Node 1 consumes 2700 RU/s, nodes 3 and 4 1500
	// (mean 1980, tolerance 396): with bytes equal, only swaps keep bytes
	// from spreading.
	s := balanced()
	for i := range s.Partitions {
		if slices.Contains(s.Partitions[i].Replicas, 1) {
			s.Partitions[i].RU = 900
		}
	}
	p, err := Plan(s)
	if err != nil {
		t.Fatal(err)
	}
	load := 0
	for _, c := range p.Changes {
		if c.Phase == PhaseLoad {
			load++
		}
	}
	if load == 0 || load%2 != 0 {
		t.Errorf("node 1 at 2700 RU/s of a 1980 mean: want swaps for request units, got %v", p.Changes)
	}
	// A single hot partition: its replica weighs more than any gap it
	// would close, so moving it only moves the heat (split for heat is the
	// remedy); and 100 RU/s more on one partition is under the floor.
	for _, ru := range []float64{6000, 400} {
		s := balanced()
		s.Partitions[0].RU = ru
		if p, _ := Plan(s); len(p.Changes) > 0 {
			t.Errorf("one partition at %.0f RU/s: %v", ru, p.Changes)
		}
	}
}

// A leader's replica that moves hands the leadership over before it is
// removed; the steps add and promote before any removal.
func TestPlanMoveSteps(t *testing.T) {
	s := State{Members: liveNodes(4)}
	for r := range 4 {
		s.Partitions = append(s.Partitions, Partition{Range: uint64(r + 1), Replicas: []uint64{1, 2, 3}, Leader: uint64(r%3 + 1), Bytes: mib})
	}
	p, err := Plan(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Changes) != 1 {
		t.Fatalf("one snapshot into node 4 at a time, got %v", p.Changes)
	}
	c := p.Changes[0]
	if c.To != 4 || c.Kind != MoveReplica {
		t.Fatalf("got %v", c)
	}
	ops := []StepOp{}
	for _, st := range c.Steps {
		ops = append(ops, st.Op)
	}
	want := []StepOp{StepAddLearner, StepPromote, StepRemoveVoter}
	leader := s.Partitions[c.Range-1].Leader
	if leader == c.From {
		want = []StepOp{StepAddLearner, StepPromote, StepTransferLeader, StepRemoveVoter}
	}
	if !reflect.DeepEqual(ops, want) {
		t.Fatalf("steps %v, want %v", c.Steps, want)
	}
	if c.Source != leader || c.Bytes != mib || c.Group != s.Partitions[c.Range-1].Group {
		t.Fatalf("source %d bytes %d group %d: want the leader %d, the partition's size and group", c.Source, c.Bytes, c.Group, leader)
	}
	if m := c.Move(); m.Range != c.Range || m.Kind != c.Kind || m.From != c.From || m.To != c.To || m.Source != c.Source || m.Bytes != c.Bytes {
		t.Fatalf("Move() = %+v for %v", m, c)
	}
}

// The byte budget: with two snapshots allowed per node, a second one
// starts only while the bytes in flight fit one interval at the rate.
func TestPlanByteBudget(t *testing.T) {
	mk := func(inFlight int64) State {
		s := State{Members: liveNodes(4), Config: Config{MaxSnapshotsIn: 2, MaxSnapshotsOut: 2, RebalanceRate: 10 * mib, Interval: 10}}
		for r := range 8 {
			s.Partitions = append(s.Partitions, Partition{Range: uint64(r + 1), Replicas: []uint64{1, 2, 3}, Leader: uint64(r%3 + 1), Bytes: 20 * mib})
		}
		s.Partitions[0].Bytes = inFlight
		s.Moves = []Move{{Range: 1, Kind: MoveReplica, From: 2, To: 4, Source: 1, Bytes: inFlight}}
		return s
	}
	for _, tc := range []struct {
		inFlight int64
		want     int
	}{{50 * mib, 1}, {90 * mib, 0}} {
		p, err := Plan(mk(tc.inFlight))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, c := range p.Changes {
			if c.To == 4 {
				n++
			}
		}
		if n != tc.want {
			t.Errorf("%dMiB in flight to node 4 (budget 100MiB): %d more snapshots, want %d: %v", tc.inFlight/mib, n, tc.want, p.Changes)
		}
	}
}

// A move in flight is counted as done: the plan does not decide it again
// nor undo it, and the partition gets no other change.
func TestPlanCountsMovesInFlight(t *testing.T) {
	s := State{Members: liveNodes(4)}
	for r := range 4 {
		s.Partitions = append(s.Partitions, Partition{Range: uint64(r + 1), Replicas: []uint64{1, 2, 3}, Leader: 1, Bytes: mib})
	}
	first, err := Plan(s)
	if err != nil || len(first.Changes) == 0 {
		t.Fatalf("%v %v", first, err)
	}
	s.Moves = []Move{first.Changes[0].Move()}
	again, err := Plan(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range again.Changes {
		if c.Range == first.Changes[0].Range {
			t.Fatalf("partition with a move in flight changed again: %v", c)
		}
		if c.Kind.snapshot() && c.To == first.Changes[0].To {
			t.Fatalf("node %d receives a second snapshot: %v", c.To, c)
		}
	}
}

func TestPlanMaxChanges(t *testing.T) {
	s := State{Members: liveNodes(12), Config: Config{MaxChanges: 2}}
	for r := range 30 {
		s.Partitions = append(s.Partitions, Partition{Range: uint64(r + 1), Replicas: []uint64{1, 2, 3}, Leader: 1, Bytes: mib})
	}
	p, err := Plan(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Changes) != 2 {
		t.Fatalf("%d changes, limit 2", len(p.Changes))
	}
}

// A suspect node (not heard from, not yet dead) gets nothing new and its
// replicas are not re-created yet: YugabyteDB and PD wait too before
// re-replicating.
func TestPlanSuspectNode(t *testing.T) {
	s := State{Members: liveNodes(4)}
	s.Members[3].Suspect = true
	s.Partitions = []Partition{{Range: 1, Replicas: []uint64{1, 2, 3}, Leader: 1, Bytes: mib}}
	s.Members[2].Suspect = true
	p, err := Plan(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Changes) > 0 {
		t.Fatalf("suspect nodes: %v", p.Changes)
	}
}

func TestCanRemove(t *testing.T) {
	s := State{Members: []Member{{ID: 1}, {ID: 2}, {ID: 3}, {ID: 4}, {ID: 5, State: Draining}, {ID: 6, State: Removed}, {ID: 7, State: Dead}}}
	for _, tc := range []struct {
		id   uint64
		want error
		msg  string
	}{
		{1, nil, ""},
		{5, nil, ""}, // already draining: removing it again is allowed
		{7, nil, ""},
		{6, ErrRefused, "already removed"},
		{9, ErrUnknownNode, "node 9"},
	} {
		err := CanRemove(s, tc.id)
		if !errors.Is(err, tc.want) || err != nil && !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("CanRemove(%d) = %v, want %v mentioning %q", tc.id, err, tc.want, tc.msg)
		}
	}
	s.Members = s.Members[:3]
	err := CanRemove(s, 1)
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "replication factor 3") {
		t.Errorf("three members: got %v", err)
	}
}

func TestHolding(t *testing.T) {
	s := balanced()
	r, l, err := Holding(s, 1)
	if err != nil || r != 9 || l != 3 {
		t.Fatalf("Holding(1) = %d, %d, %v; want 9, 3", r, l, err)
	}
	if _, _, err := Holding(s, 42); !errors.Is(err, ErrUnknownNode) {
		t.Fatalf("unknown node: %v", err)
	}
}

// BenchmarkPlan plans for a cluster of 20 nodes and 5,000 partitions, two
// nodes just joined (the busiest plan: every node has a snapshot to send).
func BenchmarkPlan(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	s := State{Members: liveNodes(20, "a", "b", "c")}
	for r := range 5000 {
		perm := rng.Perm(18)[:3]
		reps := []uint64{uint64(perm[0] + 1), uint64(perm[1] + 1), uint64(perm[2] + 1)}
		s.Partitions = append(s.Partitions, Partition{Range: uint64(r + 1), Container: "c", Replicas: reps,
			Leader: reps[0], Bytes: int64(1+rng.IntN(100)) * mib, RU: float64(rng.IntN(1000))})
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := Plan(s); err != nil {
			b.Fatal(err)
		}
	}
}

// Random states, some malformed in one way or another and the rest
// strange (learners, leaders on dead nodes, under- and over-replicated
// partitions, moves of every kind in flight): every entry point answers
// with a result or an error, never a panic, and a valid state's plan keeps
// its promises.
func TestGarbageInput(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	bad := func() bool { return rng.IntN(40) == 0 }
	valid, changes := 0, 0
	for range 3000 {
		s := State{Config: Config{ReplicationFactor: 1 + rng.IntN(4), MaxSnapshotsIn: rng.IntN(3), Seed: rng.Uint64()}}
		if bad() {
			s.Config.ReplicationFactor = -1
		}
		n := 1 + rng.IntN(8)
		for i := range n {
			id := uint64(i + 1)
			if bad() {
				id = uint64(rng.IntN(3))
			}
			s.Members = append(s.Members, Member{ID: id, State: NodeState(rng.IntN(4)), Suspect: rng.IntN(8) == 0,
				Zone: string(rune('a' + rng.IntN(3))), CapacityBytes: int64(rng.IntN(300)) * mib})
		}
		pick := func(k int) []uint64 {
			var out []uint64
			for _, i := range rng.Perm(n)[:min(k, n)] {
				out = append(out, uint64(i+1))
			}
			if bad() {
				out = append(out, uint64(rng.IntN(12)))
			}
			return out
		}
		for r := range rng.IntN(20) {
			reps := pick(1 + rng.IntN(4))
			p := Partition{Range: uint64(r + 1), Replicas: reps, Bytes: int64(rng.IntN(100)) * mib,
				RU: float64(rng.IntN(2000)), RUBudget: 1000, Container: string(rune('x' + rng.IntN(2)))}
			if rng.IntN(4) > 0 {
				p.Leader = reps[rng.IntN(len(reps))]
			}
			if bad() {
				p.Learners = pick(1)
			}
			if bad() {
				p.Bytes = -1
			}
			if rng.IntN(3) == 0 {
				p.Load = []LoadBucket{{"00", "80", float64(rng.IntN(100))}, {"80", "FF", float64(rng.IntN(100))}}
				p.HotKeys = []HotKey{{"40", rng.Float64()}}
			}
			s.Partitions = append(s.Partitions, p)
		}
		for range rng.IntN(4) * min(1, len(s.Partitions)) {
			m := Move{Range: uint64(1 + rng.IntN(len(s.Partitions))), Kind: MoveKind(1 + rng.IntN(4)),
				From: uint64(rng.IntN(n + 1)), To: uint64(rng.IntN(n + 1)), Source: uint64(rng.IntN(n + 1)), Bytes: int64(rng.IntN(100))}
			if bad() {
				m.Kind = 0
			}
			s.Moves = append(s.Moves, m)
		}
		sched, err := Plan(s)
		if err == nil {
			valid++
			changes += len(sched.Changes)
			for _, c := range sched.Changes {
				if c.Kind.snapshot() && (c.To == 0 || c.Source == 0) {
					t.Fatalf("snapshot change without endpoints: %v", c)
				}
			}
		} else if !errors.Is(err, ErrInvalid) {
			t.Fatalf("error not wrapping ErrInvalid: %v", err)
		}
		_, _ = Place(newParts("c", 100, 3, mib), s)
		_ = CanRemove(s, uint64(rng.IntN(8)))
		_, _, _ = Holding(s, uint64(rng.IntN(8)))
		_, _ = HeatSplits(s, History{Now: 100, Samples: []HeatSample{{Range: 1, At: 0, RU: 900}, {Range: 1, At: 100, RU: 950}}})
	}
	// The generator must reach the planner's decisions, not only its
	// validation.
	if valid < 1000 || changes < 500 {
		t.Errorf("only %d valid states and %d changes of 3000", valid, changes)
	}
	t.Logf("%d valid states, %d changes", valid, changes)
}

func TestNamesRoundTrip(t *testing.T) {
	for s := Live; s <= Dead; s++ {
		if got, err := ParseNodeState(s.String()); err != nil || got != s {
			t.Errorf("ParseNodeState(%q) = %v, %v", s.String(), got, err)
		}
	}
	for k := AddReplica; k <= TransferLeader; k++ {
		if got, err := ParseMoveKind(k.String()); err != nil || got != k {
			t.Errorf("ParseMoveKind(%q) = %v, %v", k.String(), got, err)
		}
	}
	if _, err := ParseNodeState("zombie"); err == nil {
		t.Error("ParseNodeState accepts zombie")
	}
	if _, err := ParseMoveKind(""); err == nil {
		t.Error("ParseMoveKind accepts the empty name")
	}
	if s := NodeState(9).String() + MoveKind(9).String() + StepOp(9).String() + Phase(9).String() + HeatVerdict(9).String(); s != "state(9)kind(9)step(9)phase(9)verdict(9)" {
		t.Errorf("unknown values print %q", s)
	}
}
