package placement

import (
	"errors"
	"fmt"
	"slices"
)

// NodeState is a member's state in the cluster's membership.
type NodeState uint8

const (
	// Live nodes serve and receive replicas.
	Live NodeState = iota
	// Draining nodes serve but are being emptied: every replica and
	// leadership moves off them, and they receive nothing new.
	Draining
	// Removed nodes have left the membership; replicas still recorded on
	// them are missing and are re-created elsewhere.
	Removed
	// Dead nodes have been unreachable for longer than --dead-after; their
	// replicas are re-created elsewhere from the surviving ones.
	Dead
)

var stateNames = [...]string{"live", "draining", "removed", "dead"}

func (s NodeState) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("state(%d)", uint8(s))
}

// ParseNodeState parses the names String prints.
func ParseNodeState(s string) (NodeState, error) {
	for i, n := range stateNames {
		if n == s {
			return NodeState(i), nil
		}
	}
	return 0, fmt.Errorf("unknown node state %q (want live, draining, removed or dead)", s)
}

// Member is one node of the cluster as the planner sees it.
type Member struct {
	ID    uint64
	Zone  string // "" is a zone of its own name like any other
	State NodeState
	// Suspect marks a live or draining node that has not been heard from
	// recently but is not yet dead: it receives nothing new and sends no
	// snapshot, but its replicas still count.
	Suspect bool
	// CapacityBytes, when positive, is the partition data the node may
	// hold: a node that a replica would take above it is not a target.
	CapacityBytes int64
}

// Partition is the descriptor of one physical partition with its load.
type Partition struct {
	Range      uint64 // range id, unique in the cluster
	Group      uint64 // raft group id
	Container  string // the container it belongs to (any stable name)
	Min, Max   string // its EPK range [Min, Max)
	Replicas   []uint64
	Learners   []uint64
	Leader     uint64 // 0 when unknown
	Generation uint64
	Bytes      int64   // partition data (items and indexes), not raft logs
	RU         float64 // request units per second consumed
	RUBudget   float64 // request units per second it may serve
	// Load, when present, is the observed request-unit load over the
	// partition's EPK space (buckets in order, inside [Min, Max)).
	Load []LoadBucket
	// HotKeys, when present, are the hottest logical keys (one EPK each)
	// with their share of the partition's load.
	HotKeys []HotKey
}

// LoadBucket is the load observed on the EPKs [Min, Max).
type LoadBucket struct {
	Min, Max string
	RU       float64
}

// HotKey is one logical partition key (its EPK) and its share (0..1) of
// its partition's request units.
type HotKey struct {
	EPK   string
	Share float64
}

// MoveKind names what a change or an in-flight move does.
type MoveKind uint8

const (
	// AddReplica adds a voter (learner, snapshot, promote) to a partition
	// below its replication factor, then removes the lost replica if any.
	AddReplica MoveKind = iota + 1
	// MoveReplica adds a voter on one node and then removes the one on
	// another: a learner, its snapshot, promotion, removal.
	MoveReplica
	// RemoveReplica removes a voter (a missing one, or one in excess).
	RemoveReplica
	// TransferLeader moves leadership between two voters: no data moves.
	TransferLeader
)

var kindNames = [...]string{"", "add", "move", "remove", "transfer-leader"}

func (k MoveKind) String() string {
	if k > 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// ParseMoveKind parses the names String prints.
func ParseMoveKind(s string) (MoveKind, error) {
	for i, n := range kindNames {
		if i > 0 && n == s {
			return MoveKind(i), nil
		}
	}
	return 0, fmt.Errorf("unknown move kind %q (want add, move, remove or transfer-leader)", s)
}

// snapshot reports whether the kind streams a snapshot to a new replica.
func (k MoveKind) snapshot() bool { return k == AddReplica || k == MoveReplica }

// Move is a change the executor is carrying out. The planner counts it as
// done (its target holds the replica, its source no longer does) before it
// decides anything else, and it occupies a snapshot slot on Source and To
// until it is finished.
type Move struct {
	Range  uint64
	Kind   MoveKind
	From   uint64 // the replica removed or the leader handing over; 0 for none
	To     uint64 // the replica added or the new leader; 0 for none
	Source uint64 // the node streaming the snapshot; 0 for none
	Bytes  int64  // snapshot size
}

// Config tunes the planner. Zero fields take the defaults of
// DefaultConfig.
type Config struct {
	// ReplicationFactor is the number of voters of each partition (3).
	ReplicationFactor int
	// MaxSnapshotsIn and MaxSnapshotsOut bound the snapshots a node
	// receives and sends at once, in-flight moves included (1 and 1).
	MaxSnapshotsIn, MaxSnapshotsOut int
	// RebalanceRate is the byte rate (bytes per second) the executor
	// streams snapshots at per node; Interval is how often the planner
	// runs, in seconds. A node is given no new snapshot while the
	// snapshots it already sends or receives hold more bytes than one
	// interval at that rate lets through; a single larger snapshot may
	// still start on a node with nothing in flight (it would otherwise
	// never move). Defaults 32 MiB/s and 10 s.
	RebalanceRate int64
	Interval      int64
	// ReplicaBand is how far from the cluster mean a node's replica count
	// may be before replicas move (1: every node within ±1 of the mean).
	// LeaderBand is the same for leaders (1).
	ReplicaBand, LeaderBand float64
	// BytesTolerance and RUTolerance are the shares of the mean bytes and
	// request units a node may be above or below before replicas move for
	// them (0.10 and 0.20).
	BytesTolerance, RUTolerance float64
	// BytesFloor and RUFloor are the smallest differences from the mean
	// (bytes, request units per second) worth a move, whatever the
	// tolerance says: small clusters and idle ones stay still (1 MiB, 50).
	BytesFloor int64
	RUFloor    float64
	// MaxLeaderTransfers bounds the leadership transfers of one plan (64);
	// MaxChanges bounds all the changes of one plan (256).
	MaxLeaderTransfers, MaxChanges int
	// HeatShare and HeatWindow make a partition hot: its consumed request
	// units at or above HeatShare of its budget for HeatWindow seconds
	// (0.8 and 60).
	HeatShare  float64
	HeatWindow int64
	// Seed breaks ties between equal candidates, the same way for the
	// same input.
	Seed uint64
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{
		ReplicationFactor:  3,
		MaxSnapshotsIn:     1,
		MaxSnapshotsOut:    1,
		RebalanceRate:      32 << 20,
		Interval:           10,
		ReplicaBand:        1,
		LeaderBand:         1,
		BytesTolerance:     0.10,
		RUTolerance:        0.20,
		BytesFloor:         1 << 20,
		RUFloor:            50,
		MaxLeaderTransfers: 64,
		MaxChanges:         256,
		HeatShare:          0.8,
		HeatWindow:         60,
	}
}

func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.ReplicationFactor == 0 {
		c.ReplicationFactor = d.ReplicationFactor
	}
	if c.MaxSnapshotsIn == 0 {
		c.MaxSnapshotsIn = d.MaxSnapshotsIn
	}
	if c.MaxSnapshotsOut == 0 {
		c.MaxSnapshotsOut = d.MaxSnapshotsOut
	}
	if c.RebalanceRate == 0 {
		c.RebalanceRate = d.RebalanceRate
	}
	if c.Interval == 0 {
		c.Interval = d.Interval
	}
	if c.ReplicaBand == 0 {
		c.ReplicaBand = d.ReplicaBand
	}
	if c.LeaderBand == 0 {
		c.LeaderBand = d.LeaderBand
	}
	if c.BytesTolerance == 0 {
		c.BytesTolerance = d.BytesTolerance
	}
	if c.RUTolerance == 0 {
		c.RUTolerance = d.RUTolerance
	}
	if c.BytesFloor == 0 {
		c.BytesFloor = d.BytesFloor
	}
	if c.RUFloor == 0 {
		c.RUFloor = d.RUFloor
	}
	if c.MaxLeaderTransfers == 0 {
		c.MaxLeaderTransfers = d.MaxLeaderTransfers
	}
	if c.HeatShare == 0 {
		c.HeatShare = d.HeatShare
	}
	if c.HeatWindow == 0 {
		c.HeatWindow = d.HeatWindow
	}
	if c.MaxChanges == 0 {
		c.MaxChanges = d.MaxChanges
	}
	return c
}

// Limits on the input, so that a malformed state cannot make the planner
// work without bound.
const (
	MaxMembers    = 10_000
	MaxPartitions = 1_000_000
	maxRF         = 7
	maxBuckets    = 4096
)

// ErrInvalid is wrapped by every error about malformed input.
var ErrInvalid = errors.New("invalid placement input")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// State is everything the planner decides from.
type State struct {
	Members    []Member
	Partitions []Partition
	Moves      []Move // moves in flight
	Config     Config
}

func (c Config) validate() error {
	switch {
	case c.ReplicationFactor < 1 || c.ReplicationFactor > maxRF:
		return invalid("replication factor %d is not between 1 and %d", c.ReplicationFactor, maxRF)
	case c.MaxSnapshotsIn < 0 || c.MaxSnapshotsOut < 0:
		return invalid("snapshot limits must not be negative")
	case c.RebalanceRate < 0 || c.Interval < 0:
		return invalid("rebalance rate and interval must not be negative")
	case c.ReplicaBand < 0 || c.LeaderBand < 0 || c.BytesTolerance < 0 || c.RUTolerance < 0 ||
		c.BytesFloor < 0 || c.RUFloor < 0:
		return invalid("bands and tolerances must not be negative")
	case c.HeatShare < 0 || c.HeatShare > 1 || c.HeatWindow < 0:
		return invalid("heat share must be between 0 and 1 and heat window not negative")
	case c.MaxLeaderTransfers < 0 || c.MaxChanges < 0:
		return invalid("change limits must not be negative")
	}
	return nil
}

// validate checks the state and returns the configuration with defaults.
func (s *State) validate() (Config, error) {
	cfg := s.Config.withDefaults()
	if err := cfg.validate(); err != nil {
		return cfg, err
	}
	if len(s.Members) > MaxMembers {
		return cfg, invalid("%d members, more than %d", len(s.Members), MaxMembers)
	}
	if len(s.Partitions) > MaxPartitions {
		return cfg, invalid("%d partitions, more than %d", len(s.Partitions), MaxPartitions)
	}
	if len(s.Moves) > len(s.Partitions)*2+len(s.Members) {
		return cfg, invalid("%d moves in flight for %d partitions", len(s.Moves), len(s.Partitions))
	}
	ids := make(map[uint64]bool, len(s.Members))
	for _, m := range s.Members {
		if m.ID == 0 {
			return cfg, invalid("member id 0")
		}
		if ids[m.ID] {
			return cfg, invalid("member %d listed twice", m.ID)
		}
		if m.State > Dead {
			return cfg, invalid("member %d: %v", m.ID, m.State)
		}
		if m.CapacityBytes < 0 {
			return cfg, invalid("member %d: negative capacity", m.ID)
		}
		ids[m.ID] = true
	}
	ranges := make(map[uint64]bool, len(s.Partitions))
	for i := range s.Partitions {
		p := &s.Partitions[i]
		if ranges[p.Range] {
			return cfg, invalid("range %d listed twice", p.Range)
		}
		ranges[p.Range] = true
		if len(p.Replicas) == 0 {
			return cfg, invalid("range %d has no replicas", p.Range)
		}
		if len(p.Replicas)+len(p.Learners) > maxRF*2 {
			return cfg, invalid("range %d has %d replicas and learners", p.Range, len(p.Replicas)+len(p.Learners))
		}
		seen := map[uint64]bool{}
		for _, r := range slices.Concat(p.Replicas, p.Learners) {
			if !ids[r] {
				return cfg, invalid("range %d: replica on unknown node %d", p.Range, r)
			}
			if seen[r] {
				return cfg, invalid("range %d: node %d listed twice", p.Range, r)
			}
			seen[r] = true
		}
		if p.Leader != 0 && !slices.Contains(p.Replicas, p.Leader) {
			return cfg, invalid("range %d: leader %d is not a voter", p.Range, p.Leader)
		}
		if p.Bytes < 0 || p.RU < 0 || p.RUBudget < 0 {
			return cfg, invalid("range %d: negative bytes or request units", p.Range)
		}
		if len(p.Load) > maxBuckets || len(p.HotKeys) > maxBuckets {
			return cfg, invalid("range %d: more than %d load buckets or hot keys", p.Range, maxBuckets)
		}
		for j, b := range p.Load {
			if b.Min >= b.Max || j > 0 && b.Min < p.Load[j-1].Max || b.RU < 0 || b.RU != b.RU {
				return cfg, invalid("range %d: load bucket %d is empty, out of order, overlapping or negative", p.Range, j)
			}
		}
		for _, k := range p.HotKeys {
			if k.Share < 0 || k.Share > 1 || k.Share != k.Share {
				return cfg, invalid("range %d: hot key share %v is not between 0 and 1", p.Range, k.Share)
			}
		}
	}
	for _, m := range s.Moves {
		if !ranges[m.Range] {
			return cfg, invalid("move of unknown range %d", m.Range)
		}
		if m.Kind < AddReplica || m.Kind > TransferLeader {
			return cfg, invalid("move of range %d: %v", m.Range, m.Kind)
		}
		for _, n := range []uint64{m.From, m.To, m.Source} {
			if n != 0 && !ids[n] {
				return cfg, invalid("move of range %d: unknown node %d", m.Range, n)
			}
		}
		if m.Bytes < 0 {
			return cfg, invalid("move of range %d: negative bytes", m.Range)
		}
	}
	return cfg, nil
}
