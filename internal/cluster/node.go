package cluster

import (
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net"
	"slices"
	"sync"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"

	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/replication/host"
	"github.com/parsecdb/parsec/internal/replication/raftlog"
	"github.com/parsecdb/parsec/internal/replication/transport"
	"github.com/parsecdb/parsec/internal/storage"
)

// MetaGroup is the raft group of the catalog and the membership.
// Partition groups have odd ids (engine.GroupID), so they never meet it.
const MetaGroup = 2

// Defaults of Config.
const (
	DefaultReplicationFactor = 3
	DefaultTick              = 50 * time.Millisecond
)

// Config configures a node.
type Config struct {
	// NodeID is the node's id in the cluster, unique and not 0.
	NodeID uint64
	// Listen is the cluster address, HOST:PORT, other nodes reach this one on.
	Listen string
	// Advertise is the cluster address given to other nodes; default: the
	// listener's address.
	Advertise string
	// Join lists cluster addresses of members; empty bootstraps a new
	// cluster.
	Join []string
	// ReplicationFactor is how many replicas a partition gets (capped by
	// the members there are when its container is created). Default 3.
	ReplicationFactor int
	// Key authenticates every message between nodes (at least 32 bytes).
	Key []byte
	// ClientAddress is this node's endpoint for clients (a URL).
	ClientAddress string
	// ClientCertificate is the certificate (DER) the client endpoint
	// serves over HTTPS, nil over plain HTTP: other nodes ask for it
	// (ClientCertificate) to verify this one when they send it requests.
	ClientCertificate []byte
	// AccountKey is the account's primary key: every member must have the
	// same (it signs requests a node forwards to another).
	AccountKey []byte
	// Store is the node's store, shared with the engine.
	Store *storage.DB
	// Tick is the raft tick; the election timeout is 10 ticks. Default
	// DefaultTick.
	Tick time.Duration
	// LogEntries is how many entries a partition's raft log holds before
	// its leader truncates it; a replica that was down past the truncation
	// catches up by a snapshot. Default DefaultLogEntries.
	LogEntries uint64
	// Logf logs membership changes and errors. Default log.Printf.
	Logf func(format string, args ...any)
}

// Member is a node of the cluster.
type Member struct {
	ID             uint64 `json:"id"`
	ClusterAddress string `json:"clusterAddress"`
	Address        string `json:"address"`
}

// identity is the record naming the cluster a store belongs to.
type identity struct {
	Cluster   string `json:"cluster"`
	Node      uint64 `json:"node"`
	Bootstrap uint64 `json:"bootstrap"` // the node that bootstrapped the meta group
}

// Node is a member of a cluster.
type Node struct {
	cfg  Config
	tcp  *transport.TCP
	h    *host.Host
	e    *engine.Engine
	id   identity
	stop chan struct{}
	wg   sync.WaitGroup

	mu      sync.Mutex
	members map[uint64]Member
	pending []Member // applied, not yet published
	placed  int      // containers placed, to take the members in turn
	// handlers answer the typed calls (Handle), by op.
	handlers map[string]func([]byte) ([]byte, error)

	joinMu sync.Mutex // one membership change at a time
}

// New checks cfg and starts listening on the cluster address. Start
// completes the node once the engine is open.
func New(cfg Config) (*Node, error) {
	if cfg.NodeID == 0 {
		return nil, errors.New("--node-id must be given, and not 0, to run in a cluster")
	}
	if len(cfg.Key) < 32 {
		return nil, errors.New("--cluster-key must be at least 32 bytes (e.g. from `openssl rand -base64 48`)")
	}
	if cfg.ReplicationFactor == 0 {
		cfg.ReplicationFactor = DefaultReplicationFactor
	}
	if cfg.ReplicationFactor < 1 || cfg.ReplicationFactor > 7 {
		return nil, fmt.Errorf("--replication-factor must be from 1 to 7, not %d", cfg.ReplicationFactor)
	}
	if cfg.LogEntries == 0 {
		cfg.LogEntries = DefaultLogEntries
	}
	if cfg.Tick <= 0 {
		cfg.Tick = DefaultTick
	}
	if cfg.Logf == nil {
		cfg.Logf = log.Printf
	}
	tcp, err := transport.NewTCP(transport.TCPConfig{NodeID: cfg.NodeID, ClusterKey: cfg.Key, Listen: cfg.Listen, Logf: cfg.Logf})
	if err != nil {
		return nil, fmt.Errorf("--cluster-listen %s: %w", cfg.Listen, err)
	}
	if cfg.Advertise == "" {
		if tcp.Addr().(*net.TCPAddr).IP.IsUnspecified() {
			_ = tcp.Close()
			return nil, fmt.Errorf("--cluster-listen %s accepts nodes on every interface, so the others cannot tell which address reaches this one: give it with --cluster-advertise HOST:PORT", cfg.Listen)
		}
		cfg.Advertise = tcp.Addr().String()
	}
	return &Node{cfg: cfg, tcp: tcp, stop: make(chan struct{}), members: map[uint64]Member{}}, nil
}

// Addr is the cluster address the node listens on.
func (n *Node) Addr() net.Addr { return n.tcp.Addr() }

// ClientCertificate returns the certificate (DER) member id's client
// endpoint serves over HTTPS, nil if it serves plain HTTP. It asks the
// member over the cluster transport, whose TLS and key authenticate the
// answer: a node sending a request on to another accepts that certificate
// only, whoever signed it.
func (n *Node) ClientCertificate(ctx context.Context, id uint64) ([]byte, error) {
	if id == n.cfg.NodeID {
		return n.cfg.ClientCertificate, nil
	}
	m, ok := n.Member(id)
	if !ok {
		return nil, fmt.Errorf("node %d is not a member", id)
	}
	return n.tcp.Call(ctx, m.ClusterAddress, mustJSON(callRequest{Op: "certificate", Account: n.accountCheck()}))
}

// ID is the node's id.
func (n *Node) ID() uint64 { return n.cfg.NodeID }

// Start starts the node's replication over e, which must have been opened
// with this node as its Replicator and Catalog: it reopens what the store
// holds, or bootstraps a new cluster, or joins one through cfg.Join.
func (n *Node) Start(ctx context.Context, e *engine.Engine) error {
	n.e = e
	id, found, err := n.loadIdentity()
	if err != nil {
		return err
	}
	if found && id.Node != n.cfg.NodeID {
		return fmt.Errorf("the data directory belongs to node %d of cluster %s, not to node %d: start it with --node-id %d, or give this node an empty data directory", id.Node, id.Cluster, n.cfg.NodeID, id.Node)
	}
	if !found && len(e.Databases()) > 0 {
		return errors.New("the data directory holds the databases of a single-node server, which cannot become a cluster member: start the cluster on empty data directories")
	}
	var join *joinReply
	switch {
	case found && len(n.cfg.Join) > 0:
		// A restart: make sure --join names the same cluster.
		if err := n.checkSameCluster(ctx, id); err != nil {
			return err
		}
	case !found && len(n.cfg.Join) > 0:
		if join, err = n.join(ctx); err != nil {
			return err
		}
		id = identity{Cluster: join.Cluster, Node: n.cfg.NodeID, Bootstrap: join.Bootstrap}
	case !found:
		var c [16]byte
		_, _ = rand.Read(c[:])
		id = identity{Cluster: hex.EncodeToString(c[:]), Node: n.cfg.NodeID, Bootstrap: n.cfg.NodeID}
	}
	n.id = id
	if err := n.loadMembers(); err != nil {
		return err
	}
	if join != nil {
		for _, m := range join.Members {
			n.addMember(m)
		}
	}
	h, err := host.New(host.Config{NodeID: n.cfg.NodeID, Store: raftlog.Open(n.cfg.Store), Transport: n.tcp,
		NewStateMachine: n.stateMachine, Logf: n.cfg.Logf,
		// A partition's state is in the store: its snapshots are streamed
		// from it when a replica needs one (partitionSM is a
		// host.SnapshotStreamer), never taken periodically, and its log is
		// truncated up to what its live replicas hold. The meta log is
		// kept whole, for the nodes that join.
		SnapshotEntries: 1 << 62, TruncateEntries: n.cfg.LogEntries,
		Truncates:     func(g uint64) bool { return g != MetaGroup },
		FetchSnapshot: n.fetchSnapshot, SnapshotChunkBytes: snapshotChunkBytes,
		// Idle groups stop ticking and heartbeating; the liveness loop
		// tells the host when a member is down, which wakes the groups
		// it led.
		Quiesce: true})
	if err != nil {
		return err
	}
	n.h = h
	n.tcp.SetCallHandler(n.answer)
	n.wg.Add(2)
	go n.tick()
	go n.watchMembers()
	if !found {
		if err := n.saveIdentity(id); err != nil {
			return err
		}
		if err := h.CreateGroup(MetaGroup, []uint64{id.Bootstrap}); err != nil {
			return err
		}
	}
	if !found && join == nil {
		// Bootstrap: lead the meta group (recording this node follows).
		_ = h.Campaign(MetaGroup)
	}
	// Serve once the catalog is as current as the meta group's leader's,
	// and this node's record says where it is now.
	if err := n.catchUp(ctx); err != nil {
		return err
	}
	return n.ensureMember(ctx)
}

// ensureMember makes this node's member record current: a node that
// bootstrapped records itself, and one restarted with another client
// address (or that stopped before its record was written) updates it,
// through the meta group's leader.
func (n *Node) ensureMember(ctx context.Context) error {
	me := n.self()
	req := mustJSON(callRequest{Op: "join", Member: me, Account: n.accountCheck()})
	for {
		if m, ok := n.Member(me.ID); ok && m == me {
			return nil
		}
		lead, err := n.Leader(ctx, MetaGroup, 0)
		if err != nil {
			return fmt.Errorf("recording this node in the cluster: %w", err)
		}
		if lead == me.ID {
			err = n.propose(ctx, metaMember, mustJSON(me))
		} else if m, ok := n.Member(lead); ok {
			_, err = n.tcp.Call(ctx, m.ClusterAddress, req)
		}
		var ce *transport.CallError
		if errors.As(err, &ce) {
			return fmt.Errorf("the cluster refused this node's record: %s", ce.Msg)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("recording this node in the cluster: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (n *Node) self() Member {
	return Member{ID: n.cfg.NodeID, ClusterAddress: n.cfg.Advertise, Address: n.cfg.ClientAddress}
}

// SyncCatalog waits until this node's catalog reflects every meta entry
// committed when it was called.
func (n *Node) SyncCatalog(ctx context.Context) error {
	idx, err := readIndex(ctx, n.h, MetaGroup)
	if err != nil {
		return err
	}
	return n.e.WaitCatalog(ctx, idx)
}

// catchUp waits, at start, until this node's catalog reflects every meta
// entry committed when it began.
func (n *Node) catchUp(ctx context.Context) error {
	if err := n.SyncCatalog(ctx); err != nil {
		return fmt.Errorf("the cluster's meta group has no reachable leader (%v): are a majority of its members running?", err)
	}
	return nil
}

func (n *Node) tick() {
	defer n.wg.Done()
	t := time.NewTicker(n.cfg.Tick)
	defer t.Stop()
	for {
		select {
		case <-n.stop:
			return
		case <-t.C:
			n.h.Tick()
		}
	}
}

// Liveness: every livenessTicks ticks a node calls each member; a member
// that fails downAfter calls in a row is down, and the host is told
// (host.NodeDown), so that the quiesced groups it led wake and elect.
const (
	livenessTicks = 4
	downAfter     = 2
)

func (n *Node) watchMembers() {
	defer n.wg.Done()
	failed := map[uint64]int{}
	req := mustJSON(callRequest{Op: "hello", Account: n.accountCheck()})
	t := time.NewTicker(livenessTicks * n.cfg.Tick)
	defer t.Stop()
	for {
		select {
		case <-n.stop:
			return
		case <-t.C:
		}
		for _, m := range n.Members() {
			if m.ID == n.cfg.NodeID {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), livenessTicks*n.cfg.Tick)
			_, err := n.tcp.Call(ctx, m.ClusterAddress, req)
			cancel()
			if err == nil {
				failed[m.ID] = 0
				continue
			}
			failed[m.ID]++
			if failed[m.ID] == downAfter {
				n.cfg.Logf("cluster: node %d (%s) is down: %v", m.ID, m.ClusterAddress, err)
				n.h.NodeDown(m.ID)
			}
		}
	}
}

// Stop stops the node's replication and transport. The caller closes the
// engine and the store afterwards.
func (n *Node) Stop() {
	close(n.stop)
	n.wg.Wait()
	if n.h != nil {
		n.h.Stop()
	}
	_ = n.tcp.Close()
}

// Members returns the cluster's members, by id.
func (n *Node) Members() []Member {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]Member, 0, len(n.members))
	for _, m := range n.members {
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b Member) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// Member returns member id.
func (n *Node) Member(id uint64) (Member, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	m, ok := n.members[id]
	return m, ok
}

func (n *Node) addMember(m Member) {
	n.mu.Lock()
	n.members[m.ID] = m
	n.mu.Unlock()
	if m.ID != n.cfg.NodeID {
		n.tcp.AddPeer(m.ID, m.ClusterAddress)
	}
}

// Status is raft's view of group on this node.
func (n *Node) Status(group uint64) (leader uint64, voters []uint64, err error) {
	st, err := n.h.Status(group)
	if err != nil {
		return 0, nil, err
	}
	v, err := n.h.Voters(group)
	return st.Lead, v, err
}

// Leader waits, up to ctx, until group has a leader known to this node
// other than not (0: any), and returns it.
func (n *Node) Leader(ctx context.Context, group, not uint64) (uint64, error) {
	for {
		l, ok := n.h.Leader(group)
		if !ok {
			return 0, host.ErrGroupNotFound
		}
		if l != 0 && l != not {
			return l, nil
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("group %d has no leader: %w", group, ctx.Err())
		case <-time.After(n.cfg.Tick):
		}
	}
}

// ReadIndex returns a linearizable read index of group once this node has
// applied it (host.ReadIndex).
func (n *Node) ReadIndex(ctx context.Context, group uint64) (uint64, error) {
	return readIndex(ctx, n.h, group)
}

// --- engine.Replicator and engine.CatalogReplicator ---

// NotHostedError is the error of a request for a partition this node
// holds no replica of: it is for one of Replicas to serve.
type NotHostedError struct {
	Group    uint64
	Replicas []uint64
}

func (e *NotHostedError) Error() string {
	return fmt.Sprintf("this node holds no replica of the partition of group %d; nodes %v do", e.Group, e.Replicas)
}

// Hosted returns nil if this node holds a replica of the partition p, or
// the *NotHostedError naming the nodes that do.
func (n *Node) Hosted(p *engine.Partition) error {
	if r := p.Replicas(); len(r) > 0 && !slices.Contains(r, n.cfg.NodeID) {
		return &NotHostedError{Group: p.GroupID(), Replicas: slices.Clone(r)}
	}
	return nil
}

// Propose replicates a partition's entry. A container created through
// another node has its partitions' groups created here a moment after the
// engine knows it: a proposal that comes first waits for its group.
func (n *Node) Propose(ctx context.Context, group uint64, data []byte) (uint64, error) {
	deadline := time.Now().Add(groupWait)
	for {
		i, err := n.h.Propose(ctx, group, data)
		if !errors.Is(err, host.ErrGroupNotFound) {
			return i, err
		}
		if p, ok := n.e.GroupPartition(group); ok {
			if herr := n.Hosted(p); herr != nil {
				return 0, herr
			}
		}
		if time.Now().After(deadline) {
			return i, err
		}
		select {
		case <-ctx.Done():
			return 0, err
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// groupWait bounds how long a proposal waits for its group to be created.
const groupWait = 2 * time.Second

// Split creates, on this node, the groups of a split's children with the
// parent's voters. The host's loop calls it: the work is done apart.
func (n *Node) Split(parent uint64, children []uint64) {
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		voters, err := n.h.Voters(parent)
		if err != nil {
			n.cfg.Logf("cluster: split of group %d: %v", parent, err)
			return
		}
		st, _ := n.h.Status(parent)
		for _, g := range children {
			if err := n.h.CreateGroup(g, voters); err != nil {
				if !errors.Is(err, host.ErrStopped) {
					n.cfg.Logf("cluster: creating group %d after a split: %v", g, err)
				}
				return
			}
			if st.Lead == n.cfg.NodeID {
				_ = n.h.Campaign(g) // the parent's leader leads the children
			}
		}
	}()
}

// Leads reports whether this node leads group (as of its last round).
func (n *Node) Leads(group uint64) bool { return n.LeaderHint(group) == n.cfg.NodeID }

// LeaderHint is the leader of group as this node last learned it, 0 if it
// knows none or holds no replica (host.Leader).
func (n *Node) LeaderHint(group uint64) uint64 {
	l, _ := n.h.Leader(group)
	return l
}

// Barrier returns once this node has applied every entry committed in
// groups when it was called.
func (n *Node) Barrier(ctx context.Context, groups []uint64) error {
	for _, g := range groups {
		if _, err := readIndex(ctx, n.h, g); err != nil {
			return err
		}
	}
	return nil
}

// readIndex is host.ReadIndex, waiting while the group has no leader (an
// election is under way), and asking again a read lost as the leader
// changed.
func readIndex(ctx context.Context, h *host.Host, g uint64) (uint64, error) {
	for {
		i, err := h.ReadIndex(ctx, g)
		var nl *host.NotLeaderError
		if err == nil || !errors.As(err, &nl) || (nl.Leader != 0 && !errors.Is(err, host.ErrReadLost)) {
			return i, err
		}
		select {
		case <-ctx.Done():
			return 0, err
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// Settle returns once this node has applied an entry of group committed
// by a leader of a later term than the proposal that failed with cause,
// with the leader it then knows (engine.Replicator). It is a ReadIndex
// asked of the current leader: raft answers one only once the leader has
// committed an entry of its own term, and the read's index is applied here
// before it returns; after that entry, no entry of an earlier term that is
// not already committed can commit. That leader's term is later than the
// proposal's when the proposer's term of leadership is over as the read is
// asked (a leader of an earlier term could not have a quorum answer its
// heartbeats): a proposal that failed with host.ErrAmbiguous says so; one
// that timed out (host.ErrTimeout) may have done so on a leader that
// still leads in its term, and then Settle fails.
func (n *Node) Settle(ctx context.Context, group uint64, cause error) (uint64, error) {
	if !errors.Is(cause, host.ErrAmbiguous) {
		st, err := n.h.Status(group)
		if err != nil {
			return 0, err
		}
		if st.RaftState == raft.StateLeader {
			return 0, fmt.Errorf("this node still leads group %d, in term %d: the proposal may still commit", group, st.Term)
		}
	}
	if _, err := readIndex(ctx, n.h, group); err != nil {
		return 0, fmt.Errorf("group %d could not be settled: %w", group, err)
	}
	return n.LeaderHint(group), nil
}

// Lead returns once this node leads group: it asks the leader to hand the
// leadership over (raft's leader transfer) and waits.
func (n *Node) Lead(ctx context.Context, group uint64) error {
	req := callRequest{Op: "transfer", Account: n.accountCheck(), Group: group, To: n.cfg.NodeID}
	for !n.Leads(group) {
		lead, err := n.Leader(ctx, group, 0)
		if err != nil {
			return err
		}
		if lead != n.cfg.NodeID {
			m, ok := n.Member(lead)
			if !ok {
				return fmt.Errorf("the leader of group %d, node %d, is not a known member", group, lead)
			}
			if _, err := n.tcp.Call(ctx, m.ClusterAddress, mustJSON(req)); err != nil {
				var ce *transport.CallError
				if errors.As(err, &ce) {
					return fmt.Errorf("node %d would not hand over group %d: %s", lead, group, ce.Msg)
				}
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("this node did not become the leader of group %d: %w", group, ctx.Err())
		case <-time.After(5 * n.cfg.Tick):
		}
	}
	return nil
}

// CreateGroups creates this node's replicas of a new container's
// partitions, if it is among their members.
func (n *Node) CreateGroups(groups []uint64, members []uint64) {
	if !slices.Contains(members, n.cfg.NodeID) {
		return
	}
	for _, g := range groups {
		if err := n.h.CreateGroup(g, members); err != nil {
			n.cfg.Logf("cluster: creating group %d: %v", g, err)
		}
	}
	// Spread leadership: a partition's first leader is the member its
	// group id picks.
	for _, g := range groups {
		if members[g%uint64(len(members))] == n.cfg.NodeID {
			_ = n.h.Campaign(g)
		}
	}
}

// ProposeCatalog replicates a catalog entry through the meta group.
func (n *Node) ProposeCatalog(ctx context.Context, data []byte) (uint64, error) {
	return n.h.Propose(ctx, MetaGroup, append([]byte{metaCatalog}, data...))
}

// Placement picks the replicas of a new container's partitions: up to the
// replication factor of the members, taken in turn so that containers
// spread over the members when there are more of them than replicas. The
// engine calls it holding its catalog lock: it must not call the engine.
func (n *Node) Placement() []uint64 {
	ms := n.Members()
	n.mu.Lock()
	start := n.placed
	n.placed++
	n.mu.Unlock()
	out := make([]uint64, 0, n.cfg.ReplicationFactor)
	for i := 0; i < len(ms) && len(out) < n.cfg.ReplicationFactor; i++ {
		out = append(out, ms[(start+i)%len(ms)].ID)
	}
	slices.Sort(out)
	return out
}

func (n *Node) propose(ctx context.Context, kind byte, data []byte) error {
	_, err := n.h.Propose(ctx, MetaGroup, append([]byte{kind}, data...))
	return err
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// accountCheck proves the account key without revealing it.
func (n *Node) accountCheck() string {
	m := hmac.New(sha256.New, n.cfg.Key)
	m.Write([]byte("account key"))
	m.Write(n.cfg.AccountKey)
	return hex.EncodeToString(m.Sum(nil))
}

// --- membership calls ---

type callRequest struct {
	Op      string `json:"op"` // "join", "hello", "report", "transfer", "snapshot" or "certificate"
	Member  Member `json:"member"`
	Account string `json:"account"`
	// Group and To are a transfer's: hand the leadership of Group to To.
	Group uint64 `json:"group,omitempty"`
	To    uint64 `json:"to,omitempty"`
	// Stream and Seq are a snapshot chunk's: chunk Seq of stream Stream.
	Stream uint64 `json:"stream,omitempty"`
	Seq    uint64 `json:"seq,omitempty"`
	// Payload is a typed call's (Handle), which its handler decodes.
	Payload []byte `json:"payload,omitempty"`
}

// Handle sets the handler of the typed call op, which another node makes
// with Send: the gateway's forwarded commands ("command"). The call is
// authenticated as every cluster call is (the cluster key, the account
// key's proof); the handler gets the payload and answers bytes, or an
// error the caller gets as a transport.CallError.
func (n *Node) Handle(op string, h func(payload []byte) ([]byte, error)) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.handlers == nil {
		n.handlers = map[string]func([]byte) ([]byte, error){}
	}
	n.handlers[op] = h
}

// Send makes the typed call op to node id with payload and returns its
// answer. An error that wraps transport.ErrNotDelivered says the node's
// handler never ran.
func (n *Node) Send(ctx context.Context, id uint64, op string, payload []byte) ([]byte, error) {
	m, ok := n.Member(id)
	if !ok || m.ClusterAddress == "" {
		return nil, fmt.Errorf("node %d is not a known member: %w", id, transport.ErrNotDelivered)
	}
	return n.tcp.CallReused(ctx, m.ClusterAddress, mustJSON(callRequest{Op: op, Account: n.accountCheck(), Payload: payload}))
}

type joinReply struct {
	// Leader, when set, is the cluster address to ask instead.
	Leader    string   `json:"leader,omitempty"`
	Cluster   string   `json:"cluster"`
	Bootstrap uint64   `json:"bootstrap"`
	Members   []Member `json:"members"`
}

// join asks the members named by --join to add this node.
func (n *Node) join(ctx context.Context) (*joinReply, error) {
	req := mustJSON(callRequest{Op: "join", Member: n.self(), Account: n.accountCheck()})
	var lastErr error
	deadline := time.Now().Add(joinWait)
	for time.Now().Before(deadline) {
		for _, addr := range n.cfg.Join {
			for hop := 0; hop < 3 && addr != ""; hop++ {
				cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				out, err := n.tcp.Call(cctx, addr, req)
				cancel()
				var ce *transport.CallError
				if errors.As(err, &ce) {
					return nil, fmt.Errorf("the cluster at %s refused this node: %s", addr, ce.Msg)
				}
				if errors.Is(err, transport.ErrKeyMismatch) {
					return nil, fmt.Errorf("cannot join the cluster at %s: its --cluster-key differs from this node's", addr)
				}
				if err != nil {
					lastErr = err
					break
				}
				var r joinReply
				if err := json.Unmarshal(out, &r); err != nil {
					return nil, fmt.Errorf("%s answered the join with %q: %v", addr, out, err)
				}
				if r.Leader != "" {
					addr = r.Leader
					continue
				}
				return &r, nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	return nil, fmt.Errorf("cannot join the cluster through --join %v: %v", n.cfg.Join, lastErr)
}

// DefaultLogEntries is how many entries a partition's log holds, by
// default, before its leader truncates it.
const DefaultLogEntries = 10000

// snapshotChunkBytes is the size of a streamed snapshot's chunks: one call
// each (transport.MaxCallBytes bounds a chunk and the item that may
// overflow it).
const snapshotChunkBytes = 1 << 20

// joinWait bounds how long a node tries to join before it gives up.
const joinWait = 20 * time.Second

// checkSameCluster makes sure a restarted node's --join names its own
// cluster.
func (n *Node) checkSameCluster(ctx context.Context, id identity) error {
	req := mustJSON(callRequest{Op: "hello", Member: n.self(), Account: n.accountCheck()})
	for _, addr := range n.cfg.Join {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		out, err := n.tcp.Call(cctx, addr, req)
		cancel()
		var ce *transport.CallError
		if errors.As(err, &ce) {
			return fmt.Errorf("the cluster at %s refused this node: %s", addr, ce.Msg)
		}
		if err != nil {
			continue // a member that is down: the others are asked
		}
		var r joinReply
		if err := json.Unmarshal(out, &r); err != nil {
			return fmt.Errorf("%s answered with %q: %v", addr, out, err)
		}
		if r.Cluster != id.Cluster {
			return fmt.Errorf("the data directory belongs to cluster %s, but %s is a member of cluster %s: give this node an empty data directory to join that cluster", id.Cluster, addr, r.Cluster)
		}
		return nil
	}
	return nil
}

// answer serves a membership call.
func (n *Node) answer(data []byte) ([]byte, error) {
	var req callRequest
	if err := json.Unmarshal(data, &req); err != nil {
		return nil, fmt.Errorf("malformed request: %v", err)
	}
	if !hmac.Equal([]byte(req.Account), []byte(n.accountCheck())) {
		return nil, errors.New("its account key (--key) differs from the cluster's; every member must have the same")
	}
	reply := joinReply{Cluster: n.id.Cluster, Bootstrap: n.id.Bootstrap}
	switch req.Op {
	case "hello":
		return mustJSON(reply), nil
	case "report":
		return mustJSON(n.report()), nil
	case "snapshot":
		// The raw chunk, not JSON: it is most of the answer's bytes.
		return n.h.ServeSnapshot(req.Stream, req.Seq)
	case "certificate":
		return n.cfg.ClientCertificate, nil
	case "transfer":
		if err := n.h.TransferLeadership(req.Group, req.To); err != nil {
			var nl *host.NotLeaderError
			if errors.As(err, &nl) {
				return mustJSON(reply), nil // it moved meanwhile: the caller asks again
			}
			return nil, err
		}
		return mustJSON(reply), nil
	case "join":
	default:
		n.mu.Lock()
		h := n.handlers[req.Op]
		n.mu.Unlock()
		if h == nil {
			return nil, fmt.Errorf("unknown call %q", req.Op)
		}
		return h(req.Payload)
	}
	m := req.Member
	if m.ID == 0 || m.ClusterAddress == "" {
		return nil, errors.New("a joining node needs an id and a cluster address")
	}
	st, err := n.h.Status(MetaGroup)
	if err != nil {
		return nil, err
	}
	if st.Lead != n.cfg.NodeID {
		lead, ok := n.Member(st.Lead)
		if !ok {
			return nil, errors.New("the cluster has no leader at the moment; try again")
		}
		reply.Leader = lead.ClusterAddress
		return mustJSON(reply), nil
	}
	n.joinMu.Lock()
	defer n.joinMu.Unlock()
	if old, ok := n.Member(m.ID); ok {
		if old.ClusterAddress != m.ClusterAddress {
			return nil, fmt.Errorf("node id %d is already a member of this cluster, at %s: give every node its own --node-id", m.ID, old.ClusterAddress)
		}
	} else if voters, err := n.h.Voters(MetaGroup); err != nil {
		return nil, err
	} else if slices.Contains(voters, m.ID) {
		return nil, fmt.Errorf("node id %d is already a member of this cluster: give every node its own --node-id", m.ID)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := n.propose(ctx, metaMember, mustJSON(m)); err != nil {
		return nil, fmt.Errorf("recording the member: %v", err)
	}
	voters, err := n.h.Voters(MetaGroup)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(voters, m.ID) {
		typ, id := raftpb.ConfChangeAddNode, m.ID
		if _, err := n.h.ProposeConfChange(ctx, MetaGroup, &raftpb.ConfChangeV2{Changes: []*raftpb.ConfChangeSingle{{Type: &typ, NodeId: &id}}}); err != nil {
			return nil, fmt.Errorf("adding the member to the meta group: %v", err)
		}
	}
	n.cfg.Logf("cluster: node %d (%s) joined", m.ID, m.ClusterAddress)
	reply.Members = n.Members()
	return mustJSON(reply), nil
}

// --- records ---

func (n *Node) loadIdentity() (identity, bool, error) {
	v, err := n.cfg.Store.Get(nil, storage.ClusterIdentityKey())
	if errors.Is(err, storage.ErrNotFound) {
		return identity{}, false, nil
	}
	if err != nil {
		return identity{}, false, err
	}
	var id identity
	if err := json.Unmarshal(v, &id); err != nil {
		return identity{}, false, fmt.Errorf("the cluster identity record is damaged: %v", err)
	}
	return id, true, nil
}

func (n *Node) saveIdentity(id identity) error {
	return n.cfg.Store.Set(storage.ClusterIdentityKey(), mustJSON(id))
}

func (n *Node) loadMembers() error {
	lo := storage.ClusterMemberPrefix()
	return n.cfg.Store.Iterate(lo, storage.PrefixEnd(lo), func(_, v []byte) (bool, error) {
		var m Member
		if err := json.Unmarshal(v, &m); err != nil {
			return false, fmt.Errorf("a member record is damaged: %v", err)
		}
		n.addMember(m)
		return true, nil
	})
}

// Report is what a member says of its replicas.
type Report struct {
	// Live is whether the member answered.
	Live bool `json:"live"`
	// LSN is each partition replica's applied LSN, by group id; Led the
	// groups it leads.
	LSN map[uint64]uint64 `json:"lsn"`
	Led []uint64          `json:"led"`
}

// report is this node's Report.
func (n *Node) report() Report {
	r := Report{Live: true, LSN: map[uint64]uint64{}}
	n.e.EachContainer(func(_ string, c *engine.Container) {
		for _, p := range c.Partitions() {
			g := p.GroupID()
			st, err := n.h.Status(g)
			if err != nil {
				continue // no replica here
			}
			r.LSN[g] = p.LSN()
			if st.Lead == n.cfg.NodeID {
				r.Led = append(r.Led, g)
			}
		}
	})
	return r
}

// Survey asks every member for its Report (a member that does not answer
// within ctx is not live).
func (n *Node) Survey(ctx context.Context) map[uint64]Report {
	ms := n.Members()
	out := make(map[uint64]Report, len(ms))
	var mu sync.Mutex
	var wg sync.WaitGroup
	req := mustJSON(callRequest{Op: "report", Account: n.accountCheck()})
	for _, m := range ms {
		if m.ID == n.cfg.NodeID {
			out[m.ID] = n.report()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var r Report
			if b, err := n.tcp.Call(ctx, m.ClusterAddress, req); err == nil && json.Unmarshal(b, &r) == nil {
				r.Live = true
			}
			mu.Lock()
			out[m.ID] = r
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

// fetchSnapshot asks node for a chunk of a snapshot it serves
// (host.Config.FetchSnapshot).
func (n *Node) fetchSnapshot(ctx context.Context, node, stream, seq uint64) ([]byte, error) {
	m, ok := n.Member(node)
	if !ok {
		return nil, fmt.Errorf("node %d is not a known member", node)
	}
	return n.tcp.Call(ctx, m.ClusterAddress, mustJSON(callRequest{Op: "snapshot", Account: n.accountCheck(), Stream: stream, Seq: seq}))
}

// RaftStats returns the counters of the node's replication host.
func (n *Node) RaftStats() host.Stats { return n.h.Stats() }

// CanSplit refuses a split of group while one of its replicas is behind
// the leader's truncated log (engine.Replicator.CanSplit); this node leads
// the group when it splits it. A leader that has just taken over (as the
// node raising a throughput does) knows nothing yet of the replicas it has
// not heard from, which look behind: they are given a few heartbeat rounds
// to answer.
func (n *Node) CanSplit(group uint64) error {
	deadline := time.Now().Add(20 * n.cfg.Tick)
	for {
		behind, err := n.h.Behind(group)
		if err != nil {
			return err
		}
		if len(behind) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the replicas on nodes %v are catching up by a snapshot (they were down); the split waits for them", behind)
		}
		time.Sleep(n.cfg.Tick)
	}
}

// Lag returns what this node's replica of group knows of its lag behind
// the group's leader (host.Lag): what a bounded-staleness read decides on.
func (n *Node) Lag(group uint64) (host.LagInfo, error) { return n.h.Lag(group) }
