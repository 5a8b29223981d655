package placement

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

func liveNodes(n int, zones ...string) []Member {
	var ms []Member
	for i := range n {
		z := ""
		if len(zones) > 0 {
			z = zones[i%len(zones)]
		}
		ms = append(ms, Member{ID: uint64(i + 1), Zone: z})
	}
	return ms
}

func newParts(container string, first uint64, n int, bytes int64) []Partition {
	var ps []Partition
	for i := range n {
		ps = append(ps, Partition{Range: first + uint64(i), Container: container, Bytes: bytes})
	}
	return ps
}

// One container's partitions spread over every node with their leaders:
// the situation of the 0.93× measurement (40 partitions all on nodes 1-3
// of 6) must not happen.
func TestPlaceSpreadsContainer(t *testing.T) {
	for _, tc := range []struct {
		nodes, parts int
		zones        []string
	}{
		{5, 16, nil},
		{6, 40, nil},
		{6, 40, []string{"a", "b", "c"}},
		{9, 7, []string{"a", "b", "c"}},
		{4, 3, []string{"a", "b"}},
	} {
		t.Run(fmt.Sprintf("%d nodes %d partitions %d zones", tc.nodes, tc.parts, len(tc.zones)), func(t *testing.T) {
			s := State{Members: liveNodes(tc.nodes, tc.zones...)}
			as, err := Place(newParts("c", 1, tc.parts, mib), s)
			if err != nil {
				t.Fatal(err)
			}
			reps, leads := map[uint64]int{}, map[uint64]int{}
			for _, a := range as {
				if len(a.Replicas) != 3 || !slices.IsSorted(a.Replicas) || !slices.Contains(a.Replicas, a.Leader) {
					t.Fatalf("r%d: %v leader %d", a.Range, a.Replicas, a.Leader)
				}
				zs := map[string]bool{}
				for _, r := range a.Replicas {
					reps[r]++
					zs[s.Members[r-1].Zone] = true
				}
				if want := min(3, max(1, len(tc.zones))); len(zs) != want {
					t.Errorf("r%d %v spans %d zones, want %d", a.Range, a.Replicas, len(zs), want)
				}
				leads[a.Leader]++
			}
			meanR := float64(3*tc.parts) / float64(tc.nodes)
			meanL := float64(tc.parts) / float64(tc.nodes)
			for id := uint64(1); id <= uint64(tc.nodes); id++ {
				if d := float64(reps[id]) - meanR; d > 1 || d < -1 {
					t.Errorf("node %d holds %d replicas, mean %.2f", id, reps[id], meanR)
				}
				if d := float64(leads[id]) - meanL; d > 1 || d < -1 {
					t.Errorf("node %d leads %d, mean %.2f", id, leads[id], meanL)
				}
			}
		})
	}
}

// The same input gives the same placement whatever the order of the
// members; a different seed breaks ties differently.
func TestPlaceDeterministic(t *testing.T) {
	s := State{Members: liveNodes(7, "a", "b", "c"), Config: Config{Seed: 1}}
	news := newParts("c", 1, 30, mib)
	a1, err := Place(news, s)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5 {
		s2 := s
		s2.Members = slices.Clone(s.Members)
		rng.Shuffle(len(s2.Members), func(i, j int) { s2.Members[i], s2.Members[j] = s2.Members[j], s2.Members[i] })
		a2, err := Place(news, s2)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a1, a2) {
			t.Fatalf("members in another order, another placement:\n%v\n%v", a1, a2)
		}
	}
	s.Config.Seed = 2
	a3, err := Place(news, s)
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(a1, a3) {
		t.Fatal("seeds 1 and 2 break every tie the same way")
	}
}

// Placement counts the partitions that exist and the moves in flight: a
// node that holds many already, or is receiving one, is chosen last.
func TestPlaceCountsExisting(t *testing.T) {
	s := State{Members: liveNodes(4)}
	for i := range 6 {
		s.Partitions = append(s.Partitions, Partition{Range: uint64(i + 1), Container: "old", Replicas: []uint64{1, 2, 3}, Leader: 1})
	}
	as, err := Place(newParts("new", 100, 2, 0), s)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range as {
		if !slices.Contains(a.Replicas, 4) {
			t.Errorf("r%d %v: the empty node 4 should hold every new partition", a.Range, a.Replicas)
		}
		if a.Leader == 1 {
			t.Errorf("r%d led by node 1, which leads six already", a.Range)
		}
	}
}

// Fewer live nodes than the replication factor: one replica per live node
// (Plan adds the others as nodes join); a full node is used last.
func TestPlaceFewNodesAndCapacity(t *testing.T) {
	s := State{Members: []Member{{ID: 1}, {ID: 2, State: Dead}, {ID: 3}}}
	as, err := Place(newParts("c", 1, 1, mib), s)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(as[0].Replicas, []uint64{1, 3}) {
		t.Fatalf("got %v, want the two live nodes", as[0].Replicas)
	}
	s = State{Members: []Member{{ID: 1}, {ID: 2, CapacityBytes: mib}, {ID: 3}, {ID: 4}}}
	as, err = Place(newParts("c", 1, 4, 2*mib), s)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range as {
		if slices.Contains(a.Replicas, 2) {
			t.Errorf("r%d on node 2, which has no room: %v", a.Range, a.Replicas)
		}
	}
}

func TestPlaceRejects(t *testing.T) {
	s := State{Members: liveNodes(3), Partitions: []Partition{{Range: 1, Replicas: []uint64{1, 2, 3}}}}
	for name, news := range map[string][]Partition{
		"existing range":  {{Range: 1}},
		"duplicate range": {{Range: 2}, {Range: 2}},
		"negative bytes":  {{Range: 3, Bytes: -1}},
	} {
		if _, err := Place(news, s); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: got %v, want ErrInvalid", name, err)
		}
	}
	s = State{Members: []Member{{ID: 1, State: Draining}, {ID: 2, State: Removed}, {ID: 3, Suspect: true}}}
	if _, err := Place(newParts("c", 1, 1, 0), s); !errors.Is(err, ErrNoLiveNodes) {
		t.Errorf("got %v, want ErrNoLiveNodes", err)
	}
}
