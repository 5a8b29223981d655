package placement

import (
	"fmt"
	"math"
	"slices"
)

// Plan decides the rebalancer's next changes. It counts the moves in
// flight as done, then runs the rules in order, each seeing the changes
// the earlier ones decided: repairs, drains, zones, leaders, replica
// counts, bytes, request units (see the package documentation). A
// partition gets at most one change per plan, and one with a move in
// flight gets none. The same state gives the same schedule.
func Plan(s State) (*Schedule, error) {
	cfg, err := s.validate()
	if err != nil {
		return nil, err
	}
	v := newView(s, cfg)
	v.repair()
	v.drain()
	v.spreadZones()
	v.balanceLeaders()
	v.balanceReplicas()
	v.balanceMetric(PhaseBytes)
	v.balanceMetric(PhaseLoad)
	return &Schedule{Changes: v.changes, Blocked: v.blocked}, nil
}

func (v *view) full() bool { return len(v.changes) >= v.cfg.MaxChanges }

func (v *view) block(p *part, format string, args ...any) {
	v.blocked = append(v.blocked, Blocked{Range: p.p.Range, Reason: fmt.Sprintf(format, args...)})
}

// apply records a change and counts it as done in the view.
func (v *view) apply(p *part, c Change) {
	c.Range, c.Group, c.Generation = p.p.Range, p.p.Group, p.p.Generation
	v.account(p, -1)
	switch c.Kind {
	case AddReplica, MoveReplica:
		p.voters = append(p.voters, c.To)
		if c.From != 0 {
			p.removeVoter(c.From)
		}
	case RemoveReplica:
		p.removeVoter(c.From)
	case TransferLeader:
		p.leader = c.To
	}
	for _, st := range c.Steps {
		if st.Op == StepTransferLeader {
			p.leader = st.Node
		}
	}
	v.account(p, +1)
	p.busy = true
	if c.Kind.snapshot() {
		c.Bytes = p.p.Bytes
		v.nodes[c.Source].snapOut++
		v.nodes[c.Source].outBytes += c.Bytes
		v.nodes[c.To].snapIn++
		v.nodes[c.To].inBytes += c.Bytes
	}
	v.changes = append(v.changes, c)
}

// moveSteps is the sequence that replaces voter from (0: none) by to
// without going below the replication factor: learner, snapshot and
// promotion first, the leadership handed over if from leads, removal last.
func (v *view) moveSteps(p *part, from, to uint64) []Step {
	steps := []Step{{StepAddLearner, to}, {StepPromote, to}}
	if from == 0 {
		return steps
	}
	if p.leader == from {
		if nl := v.newLeader(p, from, to); nl != 0 {
			steps = append(steps, Step{StepTransferLeader, nl})
		}
	}
	return append(steps, Step{StepRemoveVoter, from})
}

// newLeader picks the voter (other than exclude, with extra counted as a
// voter) on a live node with the fewest leaders; 0 when there is none.
func (v *view) newLeader(p *part, exclude, extra uint64) uint64 {
	cands := slices.Clone(p.voters)
	if extra != 0 && !slices.Contains(cands, extra) {
		cands = append(cands, extra)
	}
	var best uint64
	var bestN *node
	for _, id := range cands {
		n := v.nodes[id]
		if id == exclude || !n.target() {
			continue
		}
		if bestN == nil || n.leaders < bestN.leaders ||
			n.leaders == bestN.leaders && mix(v.cfg.Seed, p.p.Range, id) < mix(v.cfg.Seed, p.p.Range, best) {
			best, bestN = id, n
		}
	}
	return best
}

// bestTarget picks the node to receive a replica of p replacing from (0:
// none), streamed from src: a live node without a replica of p, with room
// and a free snapshot slot, in a zone new to the partition when one can
// be had (waiting for a throttled node in such a zone rather than taking
// one in a zone the partition has), then with the fewest replicas of p's
// container, the fewest replicas, the fewest bytes. eligible reports
// whether any node but for throttling could take it.
func (v *view) bestTarget(p *part, from, src uint64) (best uint64, eligible bool) {
	var bestKey [4]int64
	rest := slices.DeleteFunc(slices.Clone(p.voters), func(x uint64) bool { return x == from })
	// The most zones any eligible node would give: a node that gives
	// fewer is not taken while a better one is only throttled.
	most := 0
	for _, id := range v.ids {
		if n := v.nodes[id]; n.target() && !p.holds(id) && n.fits(p.p.Bytes) {
			eligible = true
			most = max(most, v.distinctZones(append(rest, id)))
		}
	}
	for _, id := range v.ids {
		n := v.nodes[id]
		if !n.target() || p.holds(id) || !n.fits(p.p.Bytes) || !v.canStream(src, id, p.p.Bytes) {
			continue
		}
		zones := v.distinctZones(append(rest, id))
		if zones < most {
			continue
		}
		key := [4]int64{-int64(zones), int64(n.byContainer[p.p.Container]), int64(n.replicas), n.bytes}
		if best == 0 || key != bestKey && lessKey(key, bestKey) ||
			key == bestKey && mix(v.cfg.Seed, p.p.Range, id) < mix(v.cfg.Seed, p.p.Range, best) {
			best, bestKey = id, key
		}
	}
	return best, eligible
}

func lessKey(a, b [4]int64) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// repair brings every partition back to its replication factor: a voter
// on a dead or removed node is replaced from the surviving replicas (or
// just removed when enough survive), a partition with too few voters gets
// more, one with too many loses one.
func (v *view) repair() {
	rf := v.cfg.ReplicationFactor
	for _, p := range v.parts {
		if v.full() {
			return
		}
		if p.busy {
			continue
		}
		var alive, lost []uint64
		for _, id := range p.voters {
			if v.nodes[id].alive() {
				alive = append(alive, id)
			} else {
				lost = append(lost, id)
			}
		}
		if len(lost) == 0 && len(alive) == rf {
			continue
		}
		if quorum := len(p.voters)/2 + 1; len(alive) < quorum {
			v.block(p, "lost quorum: %d of %d replicas survive (lost: %s); its configuration cannot change until one returns",
				len(alive), len(p.voters), v.nodeList(lost))
			continue
		}
		src := v.liveLeader(p)
		if src == 0 {
			v.block(p, "needs repair but has no live leader to change its configuration")
			continue
		}
		var from uint64
		if len(lost) > 0 {
			from = lost[0]
		}
		switch {
		case len(alive) < rf:
			to, eligible := v.bestTarget(p, from, src)
			if to == 0 {
				if !eligible {
					v.block(p, "%d of %d replicas and no live node without one can take another", len(alive), rf)
				}
				continue
			}
			reason := fmt.Sprintf("%d of %d replicas", len(alive), rf)
			if from != 0 {
				reason += fmt.Sprintf(": node %d is %v", from, v.nodes[from].State)
			}
			v.apply(p, Change{Phase: PhaseRepair, Kind: AddReplica, From: from, To: to, Source: src,
				Steps: v.moveSteps(p, from, to), Reason: reason})
		case from != 0:
			v.apply(p, Change{Phase: PhaseRepair, Kind: RemoveReplica, From: from,
				Steps:  []Step{{StepRemoveVoter, from}},
				Reason: fmt.Sprintf("node %d is %v and %d replicas survive", from, v.nodes[from].State, len(alive))})
		case len(alive) > rf:
			out := v.excess(p)
			if out == 0 {
				continue
			}
			steps := []Step{{StepRemoveVoter, out}}
			if p.leader == out {
				if nl := v.newLeader(p, out, 0); nl != 0 {
					steps = []Step{{StepTransferLeader, nl}, {StepRemoveVoter, out}}
				}
			}
			v.apply(p, Change{Phase: PhaseRepair, Kind: RemoveReplica, From: out, Steps: steps,
				Reason: fmt.Sprintf("%d replicas, more than %d", len(alive), rf)})
		}
	}
}

// healthy reports whether every voter of p is alive and there are as
// many as the replication factor: only such a partition is moved for
// drains, zones or balance (the others are repaired first).
func (v *view) healthy(p *part) bool {
	for _, id := range p.voters {
		if !v.nodes[id].alive() {
			return false
		}
	}
	return len(p.voters) >= v.cfg.ReplicationFactor
}

// excess picks the voter to remove from an over-replicated partition: one
// on a draining node first, else the one whose removal keeps the most
// zones, on the node with the most replicas.
func (v *view) excess(p *part) uint64 {
	var best uint64
	var bestKey [4]int64
	for _, id := range p.voters {
		n := v.nodes[id]
		rest := slices.DeleteFunc(slices.Clone(p.voters), func(x uint64) bool { return x == id })
		draining := int64(0)
		if n.State == Draining {
			draining = -1
		}
		key := [4]int64{draining, -int64(v.distinctZones(rest)), -int64(n.replicas), -n.bytes}
		if best == 0 || lessKey(key, bestKey) {
			best, bestKey = id, key
		}
	}
	return best
}

func (v *view) nodeList(ids []uint64) string {
	s := ""
	for i, id := range ids {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("node %d (%v)", id, v.nodes[id].State)
	}
	return s
}

// drain moves every leadership and then every replica off draining nodes.
func (v *view) drain() {
	for _, p := range v.parts {
		if v.full() {
			return
		}
		if p.busy || p.leader == 0 || v.nodes[p.leader].State != Draining {
			continue
		}
		if nl := v.newLeader(p, p.leader, 0); nl != 0 {
			v.apply(p, Change{Phase: PhaseDrain, Kind: TransferLeader, From: p.leader, To: nl,
				Steps: []Step{{StepTransferLeader, nl}}, Reason: fmt.Sprintf("node %d is draining", p.leader)})
		}
	}
	for _, p := range v.parts {
		if v.full() {
			return
		}
		if p.busy || !v.healthy(p) {
			continue
		}
		for _, id := range p.voters {
			if v.nodes[id].State != Draining {
				continue
			}
			src := v.liveLeader(p)
			if src == 0 {
				v.block(p, "node %d is draining but the partition has no live leader", id)
				break
			}
			to, eligible := v.bestTarget(p, id, src)
			if to == 0 {
				if !eligible {
					v.block(p, "node %d is draining and no live node without a replica can take it", id)
				}
				break
			}
			v.apply(p, Change{Phase: PhaseDrain, Kind: MoveReplica, From: id, To: to, Source: src,
				Steps: v.moveSteps(p, id, to), Reason: fmt.Sprintf("node %d is draining", id)})
			break
		}
	}
}

// spreadZones moves a replica out of a zone that holds two of a
// partition's replicas into a zone that holds none, when one exists.
func (v *view) spreadZones() {
	want := v.desiredZones()
	if want < 2 {
		return
	}
	for _, p := range v.parts {
		if v.full() {
			return
		}
		if p.busy || !v.healthy(p) {
			continue
		}
		have := v.distinctZones(p.voters)
		if have >= want {
			continue
		}
		src := v.liveLeader(p)
		if src == 0 {
			continue
		}
		seen := map[string]bool{}
		var from uint64
		for _, id := range p.voters {
			z := v.nodes[id].Zone
			if seen[z] && (from == 0 || p.leader == from) {
				from = id
			}
			seen[z] = true
		}
		if from == 0 {
			continue
		}
		to, _ := v.bestTarget(p, from, src)
		if to == 0 || v.distinctZones(append(slices.DeleteFunc(slices.Clone(p.voters), func(x uint64) bool { return x == from }), to)) <= have {
			continue
		}
		v.apply(p, Change{Phase: PhaseZone, Kind: MoveReplica, From: from, To: to, Source: src,
			Steps:  v.moveSteps(p, from, to),
			Reason: fmt.Sprintf("replicas in %d zones of %d possible: zone %q holds two", have, want, v.nodes[from].Zone)})
	}
}

// balanceLeaders transfers leaderships from nodes above the band around
// the mean leader count to nodes below it (or from a node above to one
// at least two fewer), so that each transfer brings the two closer.
func (v *view) balanceLeaders() {
	nodes := v.balanceNodes()
	if len(nodes) < 2 {
		return
	}
	for range v.cfg.MaxLeaderTransfers {
		if v.full() {
			return
		}
		total := 0
		for _, n := range nodes {
			total += n.leaders
		}
		mean := float64(total) / float64(len(nodes))
		band := v.cfg.LeaderBand
		var bestP *part
		var bestTo uint64
		var bestKey [4]int64
		for _, p := range v.parts {
			if p.busy || p.leader == 0 {
				continue
			}
			l := v.nodes[p.leader]
			if !l.target() {
				continue
			}
			for _, id := range p.voters {
				t := v.nodes[id]
				if id == p.leader || !t.target() || l.leaders-t.leaders < 2 ||
					!(float64(l.leaders) > mean+band || float64(t.leaders) < mean-band) {
					continue
				}
				spread := l.leadContainer[p.p.Container] - t.leadContainer[p.p.Container]
				key := [4]int64{-int64(l.leaders - t.leaders), -int64(spread), int64(mix(v.cfg.Seed, p.p.Range, id) >> 1), 0}
				if bestP == nil || lessKey(key, bestKey) {
					bestP, bestTo, bestKey = p, id, key
				}
			}
		}
		if bestP == nil {
			if !v.leaderChain(mean, band) {
				return
			}
			continue
		}
		from := bestP.leader
		v.apply(bestP, Change{Phase: PhaseLeaders, Kind: TransferLeader, From: from, To: bestTo,
			Steps: []Step{{StepTransferLeader, bestTo}},
			Reason: fmt.Sprintf("node %d leads %d, node %d leads %d (mean %.1f)",
				from, v.nodes[from].leaders, bestTo, v.nodes[bestTo].leaders, mean)})
	}
}

// leaderChain makes two transfers when no single one helps: hi hands a
// partition to mid, and mid hands another to lo, so that hi leads one
// fewer and lo one more while mid is unchanged. Zones make this needed: a
// node in a zone of several never shares a partition with the other
// nodes of its zone when every zone holds one replica.
func (v *view) leaderChain(mean, band float64) bool {
	// reach[mid][lo] is a partition mid leads with a voter on lo.
	reach := map[uint64]map[uint64]*part{}
	for _, q := range v.parts {
		if q.busy || q.leader == 0 || !v.nodes[q.leader].target() {
			continue
		}
		for _, id := range q.voters {
			if id == q.leader || !v.nodes[id].target() {
				continue
			}
			if reach[q.leader] == nil {
				reach[q.leader] = map[uint64]*part{}
			}
			if reach[q.leader][id] == nil {
				reach[q.leader][id] = q
			}
		}
	}
	var bestP, bestQ *part
	var bestLo uint64
	var bestKey [4]int64
	for _, p := range v.parts {
		if p.busy || p.leader == 0 || !v.nodes[p.leader].target() {
			continue
		}
		hi := v.nodes[p.leader]
		for _, mid := range p.voters {
			if mid == hi.ID || !v.nodes[mid].target() {
				continue
			}
			for lo, q := range reach[mid] {
				l := v.nodes[lo]
				if lo == hi.ID || q == p || hi.leaders-l.leaders < 2 ||
					!(float64(hi.leaders) > mean+band || float64(l.leaders) < mean-band) {
					continue
				}
				key := [4]int64{-int64(hi.leaders - l.leaders), int64(mix(v.cfg.Seed, p.p.Range, q.p.Range^lo<<40) >> 1),
					int64(q.p.Range), int64(lo)}
				if bestP == nil || lessKey(key, bestKey) {
					bestP, bestQ, bestLo, bestKey = p, q, lo, key
				}
			}
		}
	}
	if bestP == nil || len(v.changes)+2 > v.cfg.MaxChanges {
		return false
	}
	hi, mid, lo := bestP.leader, bestQ.leader, bestLo
	why := fmt.Sprintf("node %d leads %d, node %d leads %d (mean %.1f); through node %d",
		hi, v.nodes[hi].leaders, lo, v.nodes[lo].leaders, mean, mid)
	v.apply(bestP, Change{Phase: PhaseLeaders, Kind: TransferLeader, From: hi, To: mid,
		Steps: []Step{{StepTransferLeader, mid}}, Reason: why})
	v.apply(bestQ, Change{Phase: PhaseLeaders, Kind: TransferLeader, From: mid, To: lo,
		Steps: []Step{{StepTransferLeader, lo}}, Reason: why})
	return true
}

// balanceReplicas moves replicas from nodes above the band around the mean
// replica count to nodes below it, preferring the move that also brings
// the two nodes' bytes closer.
func (v *view) balanceReplicas() {
	nodes := v.balanceNodes()
	if len(nodes) < 2 {
		return
	}
	band := v.cfg.ReplicaBand
	for !v.full() {
		total := 0
		for _, n := range nodes {
			total += n.replicas
		}
		mean := float64(total) / float64(len(nodes))
		ok := func(hi, lo *node, p *part) bool {
			return hi.replicas-lo.replicas >= 2 && (float64(hi.replicas) > mean+band || float64(lo.replicas) < mean-band)
		}
		score := func(hi, lo *node, p *part) float64 {
			return math.Abs(float64(hi.bytes-lo.bytes-2*p.p.Bytes)) - float64(hi.replicas-lo.replicas)*1e18
		}
		if !v.moveOne(PhaseReplicas, nodes, ok, score, func(hi, lo *node) string {
			return fmt.Sprintf("node %d holds %d replicas, node %d holds %d (mean %.1f)", hi.ID, hi.replicas, lo.ID, lo.replicas, mean)
		}) {
			return
		}
	}
}

// balanceMetric moves replicas for bytes (PhaseBytes) or request units
// (PhaseLoad): only while some node is outside the tolerance around the
// mean, only moves that keep replica counts in their band (and, for
// request units, bytes in theirs), and only a replica smaller than the
// two nodes' difference, so each move brings them strictly closer.
func (v *view) balanceMetric(phase Phase) {
	nodes := v.balanceNodes()
	if len(nodes) < 2 {
		return
	}
	metric := func(n *node) float64 { return float64(n.bytes) }
	weight := func(p *part) float64 { return float64(p.p.Bytes) }
	tol, floor, unit := v.cfg.BytesTolerance, float64(v.cfg.BytesFloor), "bytes"
	if phase == PhaseLoad {
		metric = func(n *node) float64 { return n.ru }
		weight = func(p *part) float64 { return p.replicaRU() }
		tol, floor, unit = v.cfg.RUTolerance, v.cfg.RUFloor, "RU/s"
	}
	var totalC int
	var totalB float64
	for _, n := range nodes {
		totalC += n.replicas
		totalB += float64(n.bytes)
	}
	meanC := float64(totalC) / float64(len(nodes))
	meanB := totalB / float64(len(nodes))
	slackB := math.Max(meanB*v.cfg.BytesTolerance, float64(v.cfg.BytesFloor))
	band := v.cfg.ReplicaBand
	for !v.full() {
		var total float64
		for _, n := range nodes {
			total += metric(n)
		}
		mean := total / float64(len(nodes))
		slack := math.Max(mean*tol, floor)
		out := false
		for _, n := range nodes {
			if math.Abs(metric(n)-mean) > slack {
				out = true
			}
		}
		if !out {
			return
		}
		ok := func(hi, lo *node, p *part) bool {
			if !closes(weight(p), metric(hi)-metric(lo)) || !(metric(hi) > mean+slack || metric(lo) < mean-slack) {
				return false
			}
			if float64(hi.replicas-1) < meanC-band || float64(lo.replicas+1) > meanC+band {
				return false
			}
			if phase == PhaseLoad && !bytesOK(hi, lo, float64(p.p.Bytes), meanB, slackB) {
				return false
			}
			return true
		}
		score := func(hi, lo *node, p *part) float64 {
			return math.Abs(metric(hi) - metric(lo) - 2*weight(p))
		}
		reason := func(hi, lo *node) string {
			return fmt.Sprintf("node %d holds %s %s, node %d holds %s (mean %s, tolerance %.0f%%)",
				hi.ID, fmtAmount(metric(hi), unit), unit, lo.ID, fmtAmount(metric(lo), unit), fmtAmount(mean, unit), tol*100)
		}
		if v.moveOne(phase, nodes, ok, score, reason) {
			continue
		}
		// No single move keeps the replica counts in their band: swap a
		// heavier replica of the high node with a lighter one of the low
		// node (two moves, counts unchanged).
		swapOK := func(hi, lo *node, p, q *part) bool {
			if !closes(weight(p)-weight(q), metric(hi)-metric(lo)) || !(metric(hi) > mean+slack || metric(lo) < mean-slack) {
				return false
			}
			if phase == PhaseLoad && !bytesOK(hi, lo, float64(p.p.Bytes-q.p.Bytes), meanB, slackB) {
				return false
			}
			return true
		}
		if !v.swapOne(phase, nodes, metric, weight, swapOK, reason) {
			return
		}
	}
}

// minGain is the least share of the gap between two nodes that a move
// for bytes or request units must close: moves that gain less are not
// worth their snapshot, and the margin keeps rounding in the sums from
// making a swap look like a gain both ways.
const minGain = 0.10

// closes reports whether moving w from a node to one d below it closes at
// least minGain of the gap: the new gap |d-2w| is at most (1-minGain)d.
func closes(w, d float64) bool {
	return w > 0 && d > 0 && 2*min(w, d-w) >= minGain*d
}

// bytesOK reports whether moving b bytes (negative: the other way) from
// hi to lo may be done for request units: it must not spread the bytes
// (the sum of squares of the nodes' bytes does not grow, so a move for
// request units never undoes one for bytes and the two cannot take turns
// forever), and it must leave each node inside the bytes band or no
// farther outside it than before.
func bytesOK(hi, lo *node, b, mean, slack float64) bool {
	hb, lb := float64(hi.bytes), float64(lo.bytes)
	if b*(b-(hb-lb)) > 0 {
		return false
	}
	out := func(x float64) float64 { return max(0, math.Abs(x-mean)-slack) }
	return out(hb-b) <= out(hb) && out(lb+b) <= out(lb)
}

func fmtAmount(x float64, unit string) string {
	if unit == "bytes" {
		return fmt.Sprintf("%d", int64(x))
	}
	return fmt.Sprintf("%.0f", x)
}

// moveOne makes the best replica move from one balance node to another
// that ok allows (lowest score, then the seeded tie-break) and reports
// whether it made one.
func (v *view) moveOne(phase Phase, nodes []*node, ok func(hi, lo *node, p *part) bool,
	score func(hi, lo *node, p *part) float64, reason func(hi, lo *node) string) bool {
	// Only nodes with a free incoming snapshot slot can receive.
	nodes = slices.DeleteFunc(slices.Clone(nodes), func(n *node) bool { return n.snapIn >= v.cfg.MaxSnapshotsIn })
	if len(nodes) == 0 {
		return false
	}
	var bestP *part
	var bestHi, bestLo *node
	var bestS float64
	var bestTie uint64
	for _, p := range v.parts {
		if p.busy || !v.healthy(p) {
			continue
		}
		src := v.liveLeader(p)
		if src == 0 {
			continue
		}
		for _, hid := range p.voters {
			hi := v.nodes[hid]
			if !hi.target() {
				continue
			}
			for _, lo := range nodes {
				if lo == hi || p.holds(lo.ID) || !lo.fits(p.p.Bytes) || !ok(hi, lo, p) ||
					!v.canStream(src, lo.ID, p.p.Bytes) || !v.zoneOK(p, hi.ID, lo.ID) {
					continue
				}
				s := score(hi, lo, p)
				// Prefer spreading the container: a move from a node
				// holding more of it to one holding less.
				if hi.byContainer[p.p.Container] <= lo.byContainer[p.p.Container] {
					s += 0.5
				}
				tie := mix(v.cfg.Seed, p.p.Range, lo.ID^hi.ID<<32)
				if bestP == nil || s < bestS || s == bestS && tie < bestTie {
					bestP, bestHi, bestLo, bestS, bestTie = p, hi, lo, s, tie
				}
			}
		}
	}
	if bestP == nil {
		return false
	}
	why := reason(bestHi, bestLo)
	src := v.liveLeader(bestP)
	v.apply(bestP, Change{Phase: phase, Kind: MoveReplica, From: bestHi.ID, To: bestLo.ID, Source: src,
		Steps: v.moveSteps(bestP, bestHi.ID, bestLo.ID), Reason: why})
	return true
}

// swapOne exchanges a replica p of a high node for a replica q of a low
// node, the pair whose difference of weight comes closest to half the two
// nodes' difference, trying node pairs from the farthest apart. It
// reports whether it made the two moves.
func (v *view) swapOne(phase Phase, nodes []*node, metric func(*node) float64, weight func(*part) float64,
	ok func(hi, lo *node, p, q *part) bool, reason func(hi, lo *node) string) bool {
	// A swap sends a snapshot to each of the two nodes.
	sorted := slices.DeleteFunc(slices.Clone(nodes), func(n *node) bool { return n.snapIn >= v.cfg.MaxSnapshotsIn })
	slices.SortStableFunc(sorted, func(a, b *node) int {
		switch {
		case metric(a) > metric(b):
			return -1
		case metric(a) < metric(b):
			return 1
		}
		return 0
	})
	type pair struct{ hi, lo *node }
	var pairs []pair
	for i, hi := range sorted {
		for _, lo := range sorted[i+1:] {
			if metric(hi) > metric(lo) {
				pairs = append(pairs, pair{hi, lo})
			}
		}
	}
	slices.SortStableFunc(pairs, func(a, b pair) int {
		da, db := metric(a.hi)-metric(a.lo), metric(b.hi)-metric(b.lo)
		switch {
		case da > db:
			return -1
		case da < db:
			return 1
		}
		return 0
	})
	const maxPairs = 64 // bound the work of one plan
	for i, pr := range pairs {
		if i == maxPairs {
			break
		}
		hi, lo := pr.hi, pr.lo
		var ps, qs []*part
		for _, p := range v.parts {
			if p.busy || v.liveLeader(p) == 0 || !v.healthy(p) {
				continue
			}
			onHi, onLo := slices.Contains(p.voters, hi.ID), slices.Contains(p.voters, lo.ID)
			switch {
			case onHi && !onLo && !p.holds(lo.ID):
				ps = append(ps, p)
			case onLo && !onHi && !p.holds(hi.ID):
				qs = append(qs, p)
			}
		}
		if len(ps) == 0 || len(qs) == 0 {
			continue
		}
		slices.SortStableFunc(qs, func(a, b *part) int {
			switch wa, wb := weight(a), weight(b); {
			case wa < wb:
				return -1
			case wa > wb:
				return 1
			}
			return cmpU64(a.p.Range, b.p.Range)
		})
		d := metric(hi) - metric(lo)
		var bestP, bestQ *part
		bestS := math.Inf(1)
		for _, p := range ps {
			if !lo.fits(p.p.Bytes) || !v.zoneOK(p, hi.ID, lo.ID) {
				continue
			}
			// The best q weighs weight(p) - d/2: look around it.
			want := weight(p) - d/2
			k, _ := slices.BinarySearchFunc(qs, want, func(q *part, w float64) int {
				switch {
				case weight(q) < w:
					return -1
				case weight(q) > w:
					return 1
				}
				return 0
			})
			for j := max(0, k-4); j < min(len(qs), k+4); j++ {
				q := qs[j]
				if !ok(hi, lo, p, q) || !hi.fits(q.p.Bytes-p.p.Bytes) || !v.zoneOK(q, lo.ID, hi.ID) {
					continue
				}
				if s := math.Abs(d - 2*(weight(p)-weight(q))); s < bestS {
					bestP, bestQ, bestS = p, q, s
				}
			}
		}
		if bestP == nil {
			continue
		}
		sp, sq := v.liveLeader(bestP), v.liveLeader(bestQ)
		if !v.canStream(sp, lo.ID, bestP.p.Bytes) {
			continue
		}
		// Count the first snapshot before checking the second.
		v.nodes[sp].snapOut++
		v.nodes[lo.ID].snapIn++
		okQ := v.canStream(sq, hi.ID, bestQ.p.Bytes)
		v.nodes[sp].snapOut--
		v.nodes[lo.ID].snapIn--
		if !okQ || len(v.changes)+2 > v.cfg.MaxChanges {
			continue
		}
		why := reason(hi, lo) + "; swap"
		v.apply(bestP, Change{Phase: phase, Kind: MoveReplica, From: hi.ID, To: lo.ID, Source: sp,
			Steps: v.moveSteps(bestP, hi.ID, lo.ID), Reason: why})
		v.apply(bestQ, Change{Phase: phase, Kind: MoveReplica, From: lo.ID, To: hi.ID, Source: sq,
			Steps: v.moveSteps(bestQ, lo.ID, hi.ID), Reason: why})
		return true
	}
	return false
}
