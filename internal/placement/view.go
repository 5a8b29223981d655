package placement

import (
	"slices"
)

// view is the planner's working copy of the cluster: the state with the
// moves in flight, and then each decided change, counted as done.
type view struct {
	cfg   Config
	nodes map[uint64]*node
	ids   []uint64 // member ids, ascending
	parts []*part  // by range id
	byID  map[uint64]*part
	// zones is the number of distinct zones among the nodes that can
	// receive replicas; desired = min(RF, zones).
	zones   int
	changes []Change
	blocked []Blocked
}

type node struct {
	Member
	replicas, leaders int
	bytes             int64
	ru                float64
	snapIn, snapOut   int
	inBytes, outBytes int64
	byContainer       map[string]int
	leadContainer     map[string]int
}

type part struct {
	p      Partition // a copy; Replicas and Leader are the projection
	busy   bool      // a move is in flight or decided
	voters []uint64
	leader uint64
}

// target reports whether the node may receive new replicas.
func (n *node) target() bool { return n.State == Live && !n.Suspect }

// alive reports whether the node still holds its replicas.
func (n *node) alive() bool { return n.State == Live || n.State == Draining }

func newView(s State, cfg Config) *view {
	v := &view{cfg: cfg, nodes: make(map[uint64]*node, len(s.Members)), byID: make(map[uint64]*part, len(s.Partitions))}
	zones := map[string]bool{}
	for _, m := range s.Members {
		v.nodes[m.ID] = &node{Member: m, byContainer: map[string]int{}, leadContainer: map[string]int{}}
		v.ids = append(v.ids, m.ID)
		if m.State == Live && !m.Suspect {
			zones[m.Zone] = true
		}
	}
	v.zones = len(zones)
	slices.Sort(v.ids)
	for _, p := range s.Partitions {
		pp := &part{p: p, voters: slices.Clone(p.Replicas), leader: p.Leader}
		pp.p.Replicas, pp.p.Learners = nil, slices.Clone(p.Learners)
		v.parts = append(v.parts, pp)
		v.byID[p.Range] = pp
	}
	slices.SortFunc(v.parts, func(a, b *part) int { return cmpU64(a.p.Range, b.p.Range) })
	// Moves in flight: counted as done, and holding their snapshot slots.
	for _, m := range s.Moves {
		p := v.byID[m.Range]
		p.busy = true
		switch m.Kind {
		case AddReplica, MoveReplica:
			if m.To != 0 && !slices.Contains(p.voters, m.To) {
				p.voters = append(p.voters, m.To)
			}
			if m.From != 0 {
				p.removeVoter(m.From)
			}
		case RemoveReplica:
			p.removeVoter(m.From)
		case TransferLeader:
			if slices.Contains(p.voters, m.To) {
				p.leader = m.To
			}
		}
		if m.Kind.snapshot() {
			if n := v.nodes[m.To]; n != nil {
				n.snapIn++
				n.inBytes += m.Bytes
			}
			if n := v.nodes[m.Source]; n != nil {
				n.snapOut++
				n.outBytes += m.Bytes
			}
		}
	}
	for _, p := range v.parts {
		if p.leader != 0 && !slices.Contains(p.voters, p.leader) {
			p.leader = 0
		}
		v.account(p, +1)
	}
	return v
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (p *part) removeVoter(id uint64) {
	p.voters = slices.DeleteFunc(p.voters, func(x uint64) bool { return x == id })
	if p.leader == id {
		p.leader = 0
	}
}

// replicaRU is the request units a partition charges each of its voters.
func (p *part) replicaRU() float64 {
	if len(p.voters) == 0 {
		return 0
	}
	return p.p.RU / float64(len(p.voters))
}

// account adds (sign +1) or takes away (-1) a partition's weight on its
// nodes.
func (v *view) account(p *part, sign int) {
	ru := p.replicaRU() * float64(sign)
	for _, id := range p.voters {
		n := v.nodes[id]
		n.replicas += sign
		n.bytes += int64(sign) * p.p.Bytes
		n.ru += ru
		n.byContainer[p.p.Container] += sign
	}
	if n := v.nodes[p.leader]; n != nil {
		n.leaders += sign
		n.leadContainer[p.p.Container] += sign
	}
}

// liveLeader returns the partition's leader when it is alive and not
// suspect (it streams snapshots), else 0.
func (v *view) liveLeader(p *part) uint64 {
	if n := v.nodes[p.leader]; n != nil && n.alive() && !n.Suspect {
		return p.leader
	}
	return 0
}

// distinctZones counts the zones of a set of voters, skipping the lost.
func (v *view) distinctZones(voters []uint64) int {
	var buf [2 * maxRF]string
	zs := buf[:0]
	for _, id := range voters {
		if n := v.nodes[id]; n.alive() && !slices.Contains(zs, n.Zone) {
			zs = append(zs, n.Zone)
		}
	}
	return len(zs)
}

func (v *view) desiredZones() int { return min(v.cfg.ReplicationFactor, v.zones) }

// zoneOK reports whether replacing from by to (either may be 0) keeps the
// partition's zones as spread as the rules want: as many distinct zones
// as it had, or as many as can be had.
func (v *view) zoneOK(p *part, from, to uint64) bool {
	after := slices.DeleteFunc(slices.Clone(p.voters), func(x uint64) bool { return x == from })
	if to != 0 {
		after = append(after, to)
	}
	a := v.distinctZones(after)
	return a >= v.distinctZones(p.voters) || a >= v.desiredZones()
}

// canStream reports whether a snapshot of size b may start from src to
// dst now: snapshot slots free and the byte budget of one interval at
// the rebalance rate not spent (a node with nothing in flight may take a
// larger one alone).
func (v *view) canStream(src, dst uint64, b int64) bool {
	s, d := v.nodes[src], v.nodes[dst]
	if s == nil || d == nil {
		return false
	}
	if s.snapOut >= v.cfg.MaxSnapshotsOut || d.snapIn >= v.cfg.MaxSnapshotsIn {
		return false
	}
	budget := v.cfg.RebalanceRate * v.cfg.Interval
	if s.snapOut > 0 && s.outBytes+b > budget {
		return false
	}
	if d.snapIn > 0 && d.inBytes+b > budget {
		return false
	}
	return true
}

// fits reports whether node n can take the partition's bytes.
func (n *node) fits(b int64) bool {
	return n.CapacityBytes <= 0 || n.bytes+b <= n.CapacityBytes
}

// holds reports whether the node is a voter or learner of p.
func (p *part) holds(id uint64) bool {
	return slices.Contains(p.voters, id) || slices.Contains(p.p.Learners, id)
}

// mix is a seeded tie-break: a splitmix64 of the seed and two ids, so
// that equal candidates are ordered the same way for the same input and
// differently for different partitions.
func mix(seed, a, b uint64) uint64 {
	x := seed ^ a*0x9E3779B97F4A7C15 ^ b*0xBF58476D1CE4E5B9
	x ^= x >> 30
	x *= 0xBF58476D1CE4E5B9
	x ^= x >> 27
	x *= 0x94D049BB133111EB
	x ^= x >> 31
	return x
}

// balanceNodes returns the nodes that balancing spreads over: live and
// not suspect, in id order.
func (v *view) balanceNodes() []*node {
	var out []*node
	for _, id := range v.ids {
		if n := v.nodes[id]; n.target() {
			out = append(out, n)
		}
	}
	return out
}
