package placement

import (
	"fmt"
	"strings"
)

// StepOp is one operation the executor performs for a change, in order.
type StepOp uint8

const (
	// StepAddLearner adds Node as a learner and streams it a snapshot.
	StepAddLearner StepOp = iota + 1
	// StepPromote makes the learner Node a voter (a configuration change).
	StepPromote
	// StepTransferLeader hands the leadership to Node.
	StepTransferLeader
	// StepRemoveVoter removes the voter Node (a configuration change).
	StepRemoveVoter
)

var stepNames = [...]string{"", "add-learner", "promote", "transfer-leader", "remove-voter"}

func (o StepOp) String() string {
	if o > 0 && int(o) < len(stepNames) {
		return stepNames[o]
	}
	return fmt.Sprintf("step(%d)", uint8(o))
}

// Step is one operation of a change.
type Step struct {
	Op   StepOp
	Node uint64
}

func (s Step) String() string { return fmt.Sprintf("%v(%d)", s.Op, s.Node) }

// Phase says which rule of the decision order produced a change.
type Phase uint8

const (
	PhaseRepair   Phase = iota + 1 // a partition below (or above) its replication factor
	PhaseDrain                     // a replica or leader on a draining node
	PhaseZone                      // replicas in fewer zones than can be had
	PhaseLeaders                   // leader counts out of their band
	PhaseReplicas                  // replica counts out of their band
	PhaseBytes                     // bytes out of their tolerance
	PhaseLoad                      // request units out of their tolerance
)

var phaseNames = [...]string{"", "repair", "drain", "zone", "leaders", "replicas", "bytes", "load"}

func (p Phase) String() string {
	if p > 0 && int(p) < len(phaseNames) {
		return phaseNames[p]
	}
	return fmt.Sprintf("phase(%d)", uint8(p))
}

// Change is one decision of the planner: the executor performs its Steps
// in order. A change that adds a replica adds it as a learner, streams it
// a snapshot from Source, promotes it, and only then removes the replica
// it replaces, so no partition goes below its replication factor.
type Change struct {
	Phase Phase
	Kind  MoveKind
	Range uint64
	Group uint64
	// Generation is the descriptor's generation the change was decided
	// on: the executor refuses to start it on a descriptor that changed
	// since (a split, another move), and the next plan decides again.
	Generation uint64
	From       uint64 // replica removed, or leader handing over; 0 for none
	To         uint64 // replica added, or new leader; 0 for none
	Source     uint64 // node streaming the snapshot; 0 when no data moves
	Bytes      int64  // snapshot size
	Steps      []Step
	Reason     string
}

// Move returns the record of the change in flight, for the next plan's
// State.Moves.
func (c Change) Move() Move {
	return Move{Range: c.Range, Kind: c.Kind, From: c.From, To: c.To, Source: c.Source, Bytes: c.Bytes}
}

// String prints the change on one line, deterministically.
func (c Change) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v r%d %v", c.Phase, c.Range, c.Kind)
	if c.From != 0 {
		fmt.Fprintf(&b, " from=%d", c.From)
	}
	if c.To != 0 {
		fmt.Fprintf(&b, " to=%d", c.To)
	}
	if c.Source != 0 {
		fmt.Fprintf(&b, " source=%d", c.Source)
	}
	b.WriteString(" [")
	for i, s := range c.Steps {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s.String())
	}
	b.WriteString("]: ")
	b.WriteString(c.Reason)
	return b.String()
}

// Blocked is a partition the planner would change but cannot now, and why.
type Blocked struct {
	Range  uint64
	Reason string
}

func (b Blocked) String() string { return fmt.Sprintf("r%d: %s", b.Range, b.Reason) }

// Schedule is the outcome of one Plan: the changes to start now, in
// decision order, and the partitions that need a change none can make.
type Schedule struct {
	Changes []Change
	Blocked []Blocked
}
