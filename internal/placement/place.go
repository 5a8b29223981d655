package placement

import (
	"errors"
	"fmt"
	"slices"
)

// Assignment is where Place puts one new partition.
type Assignment struct {
	Range    uint64
	Replicas []uint64 // ascending
	Leader   uint64
}

// ErrNoLiveNodes is returned by Place when no node can receive a replica.
var ErrNoLiveNodes = errors.New("no live node can receive a replica")

// Place chooses the replicas and the leader of new partitions. Only
// Range, Container and Bytes of each new partition are read. Each
// partition is chosen on its own, in the order given, seeing the ones
// placed before it: its replicas go to live nodes (never draining,
// removed, dead or suspect ones), in distinct zones while there are zones
// left, then to the nodes holding the fewest replicas of its container,
// then the fewest replicas, then the fewest bytes; its leader is the
// chosen node leading the fewest of the container's partitions, then the
// fewest in all. Ties are broken by Config.Seed, so the same input gives
// the same answer. With fewer live nodes than the replication factor a
// partition gets one replica per live node, and Plan adds the others when
// nodes join.
func Place(news []Partition, s State) ([]Assignment, error) {
	cfg, err := s.validate()
	if err != nil {
		return nil, err
	}
	if len(news) > MaxPartitions {
		return nil, invalid("%d new partitions, more than %d", len(news), MaxPartitions)
	}
	v := newView(s, cfg)
	var live []*node
	for _, id := range v.ids {
		if n := v.nodes[id]; n.target() {
			live = append(live, n)
		}
	}
	if len(live) == 0 {
		return nil, fmt.Errorf("cannot place %d partitions: %w", len(news), ErrNoLiveNodes)
	}
	out := make([]Assignment, 0, len(news))
	seen := map[uint64]bool{}
	for _, np := range news {
		if v.byID[np.Range] != nil || seen[np.Range] {
			return nil, invalid("new range %d already exists", np.Range)
		}
		if np.Bytes < 0 || np.RU < 0 {
			return nil, invalid("new range %d: negative bytes or request units", np.Range)
		}
		seen[np.Range] = true
		p := &part{p: np}
		p.p.Replicas, p.p.Learners, p.p.Leader = nil, nil, 0
		want := min(cfg.ReplicationFactor, len(live))
		zones := map[string]bool{}
		for len(p.voters) < want {
			var best *node
			var bestKey [4]int64
			for _, n := range live {
				if slices.Contains(p.voters, n.ID) {
					continue
				}
				newZone := int64(0)
				if zones[n.Zone] {
					newZone = 1
				}
				key := [4]int64{newZone, int64(n.byContainer[np.Container]), int64(n.replicas), n.bytes}
				if !n.fits(np.Bytes) {
					key[0] = 2 // full nodes only when nothing else is left
				}
				if best == nil || lessKey(key, bestKey) ||
					key == bestKey && mix(cfg.Seed, np.Range, n.ID) < mix(cfg.Seed, np.Range, best.ID) {
					best, bestKey = n, key
				}
			}
			p.voters = append(p.voters, best.ID)
			zones[best.Zone] = true
		}
		var lead *node
		for _, id := range p.voters {
			n := v.nodes[id]
			if lead == nil || n.leadContainer[np.Container] < lead.leadContainer[np.Container] ||
				n.leadContainer[np.Container] == lead.leadContainer[np.Container] &&
					(n.leaders < lead.leaders || n.leaders == lead.leaders && mix(cfg.Seed, np.Range, id) < mix(cfg.Seed, np.Range, lead.ID)) {
				lead = n
			}
		}
		p.leader = lead.ID
		v.account(p, +1)
		v.parts = append(v.parts, p)
		v.byID[np.Range] = p
		reps := slices.Clone(p.voters)
		slices.Sort(reps)
		out = append(out, Assignment{Range: np.Range, Replicas: reps, Leader: p.leader})
	}
	return out, nil
}

// ErrUnknownNode is returned by CanRemove for an id that is not a member.
var ErrUnknownNode = errors.New("unknown node")

// ErrRefused is returned by CanRemove for a removal the cluster cannot
// take.
var ErrRefused = errors.New("removal refused")

// CanRemove reports whether node id may be drained and removed: it must be
// a member not already removed, and the live members left without it
// (draining ones are leaving too) must be at least the replication factor,
// or some partition could not keep its replicas. The error says why.
func CanRemove(s State, id uint64) error {
	cfg, err := s.validate()
	if err != nil {
		return err
	}
	var me *Member
	left := 0
	for i, m := range s.Members {
		if m.ID == id {
			me = &s.Members[i]
			continue
		}
		if m.State == Live {
			left++
		}
	}
	if me == nil {
		return fmt.Errorf("cannot remove node %d: %w: it is not a member of the cluster", id, ErrUnknownNode)
	}
	if me.State == Removed {
		return fmt.Errorf("cannot remove node %d: %w: it is already removed", id, ErrRefused)
	}
	if left < cfg.ReplicationFactor {
		return fmt.Errorf("cannot remove node %d: %w: %d live members would remain, fewer than the replication factor %d; add a node first",
			id, ErrRefused, left, cfg.ReplicationFactor)
	}
	return nil
}

// Holding returns how many partitions node id holds a replica (voter or
// learner) of, and how many it leads, as the descriptors say: moves in
// flight are not counted as done (one may still fail and be rolled back),
// so a drain is finished when both are zero.
func Holding(s State, id uint64) (replicas, leaders int, err error) {
	if _, err := s.validate(); err != nil {
		return 0, 0, err
	}
	if !slices.ContainsFunc(s.Members, func(m Member) bool { return m.ID == id }) {
		return 0, 0, fmt.Errorf("node %d: %w", id, ErrUnknownNode)
	}
	for _, p := range s.Partitions {
		if slices.Contains(p.Replicas, id) || slices.Contains(p.Learners, id) {
			replicas++
		}
		if p.Leader == id {
			leaders++
		}
	}
	return replicas, leaders, nil
}
