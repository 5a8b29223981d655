package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/parsecdb/parsec/internal/binfmt"
	"github.com/parsecdb/parsec/internal/replication/host"
	"github.com/parsecdb/parsec/internal/replication/raftlog"
	"github.com/parsecdb/parsec/internal/replication/transport"
	"github.com/parsecdb/parsec/internal/storage"
)

// metaGroup is the catalog's raft group in these tests; partitions' groups
// are odd (GroupID).
const metaGroup = 2

// catalogAdapter proposes catalog entries to the meta group of a host set
// after the engine opens; new containers go on every node.
type catalogAdapter struct {
	h       atomic.Pointer[host.Host]
	members []uint64
}

func (a *catalogAdapter) ProposeCatalog(ctx context.Context, data []byte) (uint64, error) {
	return a.h.Load().Propose(ctx, metaGroup, data)
}

func (a *catalogAdapter) Placement() []uint64 { return a.members }

// catNode is a node of a cluster whose catalog and partitions replicate.
type catNode struct {
	id   uint64
	fs   vfs.FS
	st   *storage.DB
	e    *Engine
	h    *host.Host
	rep  *lateReplicator
	stop func() // stops ticking
	once sync.Once
}

// openCatNode opens (or reopens) node id's store, engine and host, and
// ticks the host every millisecond.
func openCatNode(t testing.TB, net *transport.Network, fs vfs.FS, id uint64, ids []uint64) *catNode {
	t.Helper()
	st, err := storage.Open(storage.Options{Dir: "/n", FS: fs, Reserve: -1})
	if err != nil {
		t.Fatal(err)
	}
	rep := &lateReplicator{members: ids}
	cat := &catalogAdapter{members: ids}
	e, err := Open(st, Options{PartitionMaxRUs: 1000, NoThrottle: true, manualStorageSplits: true, TTLSweepInterval: -1,
		Now: func() time.Time { return time.Unix(1_800_000_000, 0) }, Replicator: rep, Catalog: cat})
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.New(host.Config{NodeID: id, Store: raftlog.Open(st), Transport: net.Join(id), SnapshotEntries: 1 << 60,
		Logf: func(string, ...any) {},
		NewStateMachine: func(g uint64) (host.StateMachine, error) {
			if g == metaGroup {
				return e.CatalogReplica(), nil
			}
			// The host keeps the groups of deleted containers (it cannot
			// drop a group yet): their entries are dropped.
			return e.GroupReplica(g), nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	rep.h.Store(h)
	cat.h.Store(h)
	if err := h.CreateGroup(metaGroup, ids); err != nil {
		t.Fatal(err)
	}
	return &catNode{id: id, fs: fs, st: st, e: e, h: h, rep: rep, stop: ticking(5*time.Millisecond, h)}
}

func (n *catNode) close() {
	n.once.Do(func() {
		n.stop()
		n.rep.splits.Wait()
		n.e.Close()
		n.h.Stop()
		n.st.Close()
	})
}

// startCatalogCluster starts nodes 1..3 with an empty catalog and elects
// node 1 to lead the meta group.
func startCatalogCluster(t *testing.T) (*transport.Network, []*catNode) {
	net := transport.NewNetwork(7, 0)
	ids := []uint64{1, 2, 3}
	nodes := make([]*catNode, len(ids))
	for i, id := range ids {
		nodes[i] = openCatNode(t, net, vfs.NewMem(), id, ids)
	}
	t.Cleanup(func() {
		for _, n := range nodes {
			n.close()
		}
	})
	if err := nodes[0].h.Campaign(metaGroup); err != nil {
		t.Fatal(err)
	}
	waitLeader(t, nodes, metaGroup, 1)
	return net, nodes
}

// waitLeader waits until node want (0: any node) leads group, and returns it.
func waitLeader(t *testing.T, nodes []*catNode, group, want uint64) uint64 {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		for _, n := range nodes {
			if st, err := n.h.Status(group); err == nil && st.Lead == n.id && (want == 0 || want == n.id) {
				return n.id
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("group %d elects no leader (want %d)", group, want)
		}
		time.Sleep(time.Millisecond)
	}
}

// moveLeader makes node to the leader of group, asking whichever node
// leads it now: on a loaded machine an election may have moved the
// leadership since the test last looked.
func moveLeader(t *testing.T, nodes []*catNode, group, to uint64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		lead := waitLeader(t, nodes, group, 0)
		if lead == to {
			return
		}
		err := nodes[lead-1].h.TransferLeadership(group, to)
		for wait := time.Now().Add(3 * time.Second); err == nil && time.Now().Before(wait); time.Sleep(time.Millisecond) {
			if st, serr := nodes[to-1].h.Status(group); serr == nil && st.Lead == to {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("group %d: leadership does not move to node %d: %v", group, to, err)
		}
		time.Sleep(time.Millisecond)
	}
}

// catalogView renders everything an engine's memory holds of the catalog,
// and the scripts and encryption keys it reads from its store.
func catalogView(t *testing.T, e *Engine) string {
	t.Helper()
	var b bytes.Buffer
	enc := func(v any) {
		j, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	enc(e.Offers())
	for _, d := range e.Databases() {
		enc(d)
		cs, err := e.Containers(d.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, ci := range cs {
			enc(ci)
			c, err := e.Container(d.ID, ci.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range c.Partitions() {
				enc(p.Range())
			}
			for _, k := range []ScriptKind{StoredProcedure, Trigger, UserFunction} {
				s, err := c.Scripts(k)
				if err != nil {
					t.Fatal(err)
				}
				enc(s)
			}
		}
		us, err := e.Users(d.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range us {
			enc(u)
			ps, err := e.Permissions(d.ID, u.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range ps {
				enc(p)
				enc(e.PermissionLive(p.Rid, p.Seq))
			}
		}
		ks, err := e.EncryptionKeys(d.ID)
		if err != nil {
			t.Fatal(err)
		}
		enc(ks)
	}
	return b.String()
}

// catalogKeys returns the store's catalog records (the M family but for
// the node's own allocator mark) and partition index records.
func catalogKeys(t *testing.T, st *storage.DB) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, span := range [][2][]byte{{{'M'}, {'N'}}, {{'P'}, {'Q'}}} {
		err := st.Iterate(span[0], span[1], func(k, v []byte) (bool, error) {
			if !bytes.Equal(k, storage.SeqKey()) && (k[0] == 'M' || bytes.HasSuffix(k, []byte{0, 'i'})) {
				out[string(k)] = string(v)
			}
			return true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// waitCatalog waits until every node reflects the leader's catalog.
func waitCatalog(t *testing.T, nodes []*catNode, leader *catNode) {
	t.Helper()
	idx := leader.e.CatalogApplied()
	for _, n := range nodes {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := n.e.WaitCatalog(ctx, idx)
		cancel()
		if err != nil {
			t.Fatalf("node %d: %v", n.id, err)
		}
	}
}

// agree waits until every node reflects the leader's catalog, then checks
// that their memories render the same and that their stores hold the same
// catalog records.
func agree(t *testing.T, nodes []*catNode, leader *catNode) {
	t.Helper()
	waitCatalog(t, nodes, leader)
	want, wantKeys := catalogView(t, leader.e), catalogKeys(t, leader.st)
	if len(wantKeys) < 5 {
		t.Fatalf("the leader's store has %d catalog records", len(wantKeys))
	}
	for _, n := range nodes {
		if got := catalogView(t, n.e); got != want {
			t.Fatalf("node %d's catalog differs from node %d's:\n%s\nwant\n%s", n.id, leader.id, got, want)
		}
		got := catalogKeys(t, n.st)
		if len(got) != len(wantKeys) {
			t.Fatalf("node %d has %d catalog records, node %d %d", n.id, len(got), leader.id, len(wantKeys))
		}
		for k, v := range wantKeys {
			if got[k] != v {
				t.Fatalf("node %d: catalog key %q holds %q, node %d's %q", n.id, k, got[k], leader.id, v)
			}
		}
	}
}

// noDuplicateSeqs checks that no two resources of the catalog share a
// sequence number (so an etag or a rid made of it).
func noDuplicateSeqs(t *testing.T, e *Engine) {
	t.Helper()
	seen := map[uint64]string{}
	add := func(seq uint64, what string) {
		if prev, ok := seen[seq]; ok {
			t.Fatalf("%s and %s share the sequence number %d", prev, what, seq)
		}
		seen[seq] = what
	}
	rids := map[string]string{}
	addRid := func(rid, what string) {
		if prev, ok := rids[rid]; ok {
			t.Fatalf("%s and %s share the rid %s", prev, what, rid)
		}
		rids[rid] = what
	}
	for _, d := range e.Databases() {
		add(d.Seq, "database "+d.ID)
		addRid(d.Rid, "database "+d.ID)
		cs, _ := e.Containers(d.ID)
		for _, c := range cs {
			add(c.Seq, "container "+c.ID)
			addRid(c.Rid, "container "+c.ID)
		}
		us, _ := e.Users(d.ID)
		for _, u := range us {
			add(u.Seq, "user "+u.ID)
			addRid(u.Rid, "user "+u.ID)
			ps, _ := e.Permissions(d.ID, u.ID)
			for _, p := range ps {
				add(p.Seq, "permission "+p.ID)
				addRid(p.Rid, "permission "+p.ID)
			}
		}
	}
	if len(seen) < 5 {
		t.Fatalf("only %d resources", len(seen))
	}
}

// catalogOps makes a round of catalog changes on e, naming what it creates
// with tag: databases (one with its own throughput), containers with 4
// partitions, users, permissions, scripts, keys, offer changes, replaces
// and deletions.
func catalogOps(t *testing.T, e *Engine, tag string) {
	t.Helper()
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	db, shared := "db"+tag, "shared"+tag
	must(e.CreateDatabase(db, Throughput{}))
	must(e.CreateDatabase(shared, Throughput{RUs: 800}))
	must(e.CreateContainer(db, ContainerSpec{ID: "c", PartitionKey: hashDef("/pk")}, Throughput{RUs: 4000}))
	must(e.CreateContainer(db, ContainerSpec{ID: "gone", PartitionKey: hashDef("/pk")}, Throughput{RUs: 400}))
	must(e.CreateContainer(shared, ContainerSpec{ID: "s", PartitionKey: hashDef("/pk")}, Throughput{}))
	ttl := int64(60)
	must(e.ReplaceContainer(db, ContainerSpec{ID: "c", PartitionKey: hashDef("/pk"), DefaultTTL: &ttl}, ""))
	// A new indexing policy would need an index build, which replicated
	// partitions cannot run yet: refused, nothing changes.
	before, _ := e.Container(db, "c")
	_, err := e.ReplaceContainer(db, ContainerSpec{ID: "c", PartitionKey: hashDef("/pk"), DefaultTTL: &ttl,
		IndexingPolicy: json.RawMessage(`{"indexingMode":"consistent","includedPaths":[{"path":"/a/?"}],"excludedPaths":[{"path":"/*"}]}`)}, "")
	if after, _ := e.Container(db, "c"); !errors.Is(err, ErrBadRequest) || after.Info().Etag() != before.Info().Etag() {
		t.Fatalf("a new indexing policy of a replicated container: %v, want it refused", err)
	}
	must(e.CreateUser(db, "u"))
	must(e.CreateUser(db, "v"))
	must(e.CreatePermission(db, "u", PermissionSpec{ID: "p", Mode: PermissionRead, Resource: "dbs/" + db + "/colls/c"}))
	must(e.CreatePermission(db, "u", PermissionSpec{ID: "q", Mode: PermissionAll, Resource: "dbs/" + db + "/colls/c/docs/x"}))
	must(e.CreatePermission(db, "v", PermissionSpec{ID: "r", Mode: PermissionAll, Resource: "dbs/" + db + "/colls/c"}))
	must(e.ReplacePermission(db, "u", PermissionSpec{ID: "p", Mode: PermissionAll, Resource: "dbs/" + db + "/colls/c"}, ""))
	must(e.ReplaceUser(db, "u", "w", ""))
	must(nil, e.DeletePermission(db, "w", "q"))
	must(nil, e.DeleteUser(db, "v"))
	must(e.PutEncryptionKey(db, EncryptionKeyInfo{ID: "k", Algorithm: "AEAD_AES_256_CBC_HMAC_SHA256", WrapMetadata: json.RawMessage(`{"type":"x"}`), Wrapped: "AAAA"}, false, ""))
	c, err := e.Container(db, "c")
	if err != nil {
		t.Fatal(err)
	}
	must(c.CreateScript(StoredProcedure, ScriptSpec{ID: "bump", Body: replayProcedure}))
	must(c.CreateScript(StoredProcedure, ScriptSpec{ID: "old", Body: replayProcedure}))
	must(nil, c.DeleteScript(StoredProcedure, "old"))
	// Offers: a container's throughput within what its partitions serve
	// (no split), and a database's.
	for _, o := range e.Offers() {
		switch {
		case o.DB == db && o.Coll == "c":
			must(e.ReplaceOffer(o.ID, Throughput{RUs: 3000}))
		case o.DB == shared && o.Coll == "":
			must(e.ReplaceOffer(o.ID, Throughput{RUs: 1200}))
		}
	}
	must(nil, e.DeleteContainer(db, "gone"))
	// A database deleted with its container, user and key.
	tmp := "tmp" + tag
	must(e.CreateDatabase(tmp, Throughput{}))
	must(e.CreateContainer(tmp, ContainerSpec{ID: "t", PartitionKey: hashDef("/pk")}, Throughput{}))
	must(e.CreateUser(tmp, "u"))
	must(e.PutEncryptionKey(tmp, EncryptionKeyInfo{ID: "k", Algorithm: "AEAD_AES_256_CBC_HMAC_SHA256", WrapMetadata: json.RawMessage(`{}`), Wrapped: "AA"}, false, ""))
	must(nil, e.DeleteDatabase(tmp))
}

// writeAndRead writes n items into container db/c, which has parts
// partitions, through the leaders of their groups, then reads every one on
// every node.
func writeAndRead(t *testing.T, nodes []*catNode, db string, parts, n int) {
	t.Helper()
	lead, err := nodes[0].e.Container(db, "c")
	if err != nil {
		t.Fatal(err)
	}
	if len(lead.Partitions()) != parts {
		t.Fatalf("container %s/c has %d partitions, want %d", db, len(lead.Partitions()), parts)
	}
	deadline := time.Now().Add(60 * time.Second)
	for i := range n {
		k := fmt.Sprint("k", i%17)
		g := lead.PartitionFor(mustEPK(t, lead, k)).GroupID()
		for attempt := 0; ; attempt++ {
			l := waitLeader(t, nodes, g, 0)
			c, err := nodes[l-1].e.Container(db, "c")
			if err != nil {
				t.Fatal(err)
			}
			op, err := c.PrepareWrite(OpUpsert, fmt.Appendf(nil, `{"id":"i%d","pk":%q}`, i, k), key(k), true)
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err = c.Execute(&Command{Ops: []Op{op}}, ""); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("write %d: %v", i, err)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	for _, nd := range nodes {
		c, err := nd.e.Container(db, "c")
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			k := fmt.Sprint("k", i%17)
			for {
				op, _ := c.PrepareKeyed(OpRead, fmt.Sprint("i", i), key(k), true)
				_, _, err := c.ReadItem(op)
				if err == nil {
					break
				}
				if !errors.Is(err, ErrNotFound) || time.Now().After(deadline) {
					t.Fatalf("node %d: item i%d: %v", nd.id, i, err)
				}
				time.Sleep(time.Millisecond) // the partition's follower catches up
			}
		}
	}
}

// TestCatalogReplicatedOnThreeNodes changes the catalog through the leader
// of the meta group; every node's memory and catalog records follow, the
// new containers' partitions replicate writes, the meta leadership moves
// and the new leader's changes never reuse a resource id, a follower's
// changes are refused (while foreign entries are reconciled on it) without
// hanging, and a restarted node agrees.
func TestCatalogReplicatedOnThreeNodes(t *testing.T) {
	net, nodes := startCatalogCluster(t)
	catalogOps(t, nodes[0].e, "1")
	agree(t, nodes, nodes[0])
	noDuplicateSeqs(t, nodes[1].e)
	writeAndRead(t, nodes, "db1", 4, 60)

	// The leadership moves to node 2, which changes the catalog at once.
	moveLeader(t, nodes, metaGroup, 2)
	var proposed sync.WaitGroup
	proposed.Add(1)
	go func() {
		defer proposed.Done()
		catalogOps(t, nodes[1].e, "2")
	}()
	// Meanwhile node 3 reconciles node 2's entries and its own changes,
	// from three goroutines, are refused: not hanging, and naming the
	// leader.
	var refused sync.WaitGroup
	for w := range 3 {
		refused.Add(1)
		go func() {
			defer refused.Done()
			f := nodes[2].e
			check := func(what string, err error) bool {
				var nl *host.NotLeaderError
				if !errors.Is(err, ErrUnavailable) || !errors.As(err, &nl) {
					t.Errorf("%s on a follower: %v, want a NotLeaderError", what, err)
					return false
				}
				return true
			}
			for i := range 30 {
				name := fmt.Sprint("f", w, "-", i)
				if _, err := f.CreateDatabase(name, Throughput{}); !check("a database created", err) {
					return
				}
				if _, err := f.CreateUser("db1", name); !check("a user created", err) {
					return
				}
				if _, err := f.ReplaceContainer("db1", ContainerSpec{ID: "c", PartitionKey: hashDef("/pk")}, ""); !check("a container replaced", err) {
					return
				}
				if c, err := f.Container("db1", "c"); err == nil {
					if _, err := c.CreateScript(StoredProcedure, ScriptSpec{ID: name, Body: replayProcedure}); !check("a script created", err) {
						return
					}
				}
				if err := f.DeleteContainer("db1", "c"); !check("a container deleted", err) {
					return
				}
				for _, o := range f.Offers() {
					var nl *host.NotLeaderError
					if _, err := f.ReplaceOffer(o.ID, Throughput{RUs: 2000}); err != nil && !errors.As(err, &nl) && !errors.Is(err, ErrBadRequest) && !errors.Is(err, ErrNotFound) {
						t.Errorf("an offer replaced on a follower: %v, want a NotLeaderError", err)
						return
					}
				}
			}
		}()
	}
	refused.Wait()
	proposed.Wait()
	if t.Failed() {
		return
	}
	agree(t, nodes, nodes[1])
	noDuplicateSeqs(t, nodes[0].e)
	writeAndRead(t, nodes, "db2", 4, 40)

	// Node 3 restarts from its files and agrees; it follows what happened
	// while it was down.
	fs := nodes[2].fs
	nodes[2].close()
	moveLeader(t, nodes[:2], metaGroup, 2)
	if _, err := nodes[1].e.CreateDatabase("whileDown", Throughput{}); err != nil {
		t.Fatal(err)
	}
	nodes[2] = openCatNode(t, net, fs, 3, []uint64{1, 2, 3})
	moveLeader(t, nodes, metaGroup, 2)
	catalogOps(t, nodes[1].e, "3")
	agree(t, nodes, nodes[1])
	noDuplicateSeqs(t, nodes[2].e)
	writeAndRead(t, nodes, "db3", 4, 30)

	// The restarted node leads the meta group and changes the catalog.
	moveLeader(t, nodes, metaGroup, 3)
	catalogOps(t, nodes[2].e, "4")
	agree(t, nodes, nodes[2])
	noDuplicateSeqs(t, nodes[0].e)
	writeAndRead(t, nodes, "db4", 4, 20)
}

// fakeMeta is a meta group's committed log kept in memory, which each
// engine applies when the test says (or when it proposes): a node that
// has not applied the others' entries stands for a new leader that has
// not applied its predecessor's last entries yet.
type fakeMeta struct {
	mu  sync.Mutex
	log [][]byte
}

// fakeMetaNode is one engine on a fakeMeta.
type fakeMetaNode struct {
	mu      sync.Mutex // orders catchUp
	meta    *fakeMeta
	e       *Engine
	st      *storage.DB
	applied int
}

func (n *fakeMetaNode) ProposeCatalog(_ context.Context, data []byte) (uint64, error) {
	n.meta.mu.Lock()
	n.meta.log = append(n.meta.log, append([]byte(nil), data...))
	idx := len(n.meta.log)
	n.meta.mu.Unlock()
	return uint64(idx), n.catchUp()
}

func (n *fakeMetaNode) Placement() []uint64 { return nil }

// catchUp applies the entries of the log this node has not applied.
func (n *fakeMetaNode) catchUp() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.meta.mu.Lock()
	var ents []ReplicaEntry
	for i := n.applied; i < len(n.meta.log); i++ {
		ents = append(ents, ReplicaEntry{Index: uint64(i + 1), Data: n.meta.log[i]})
	}
	n.meta.mu.Unlock()
	if len(ents) == 0 {
		return nil
	}
	b := n.st.NewBatch()
	if err := n.e.ApplyCatalog(b, ents); err != nil {
		b.Discard()
		return err
	}
	if err := b.Commit(); err != nil {
		return err
	}
	n.applied += len(ents)
	n.e.PublishCatalog()
	return nil
}

// TestCatalogStaleLeaderRefused has node B take a resource id while it
// has not applied node A's last entries (a new leader behind its log):
// the entry is refused on every node instead of giving two resources the
// same id, B's op fails and succeeds when retried, and both nodes agree.
// Entries of one node that pipeline behind each other are not refused.
func TestCatalogStaleLeaderRefused(t *testing.T) {
	meta := &fakeMeta{}
	open := func() *fakeMetaNode {
		st, err := storage.Open(storage.Options{InMemory: true})
		if err != nil {
			t.Fatal(err)
		}
		n := &fakeMetaNode{meta: meta, st: st}
		n.e, err = Open(st, Options{PartitionMaxRUs: 1000, NoThrottle: true, TTLSweepInterval: -1,
			Now: func() time.Time { return time.Unix(1_800_000_000, 0) }, Catalog: n})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.e.Close(); st.Close() })
		return n
	}
	a, b := open(), open()
	for i := range 3 {
		if _, err := a.e.CreateDatabase(fmt.Sprint("a", i), Throughput{}); err != nil {
			t.Fatal(err)
		}
	}
	// B has applied none of A's entries: its allocator is where A's was.
	_, err := b.e.CreateDatabase("b", Throughput{})
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "retry") {
		t.Fatalf("a change from a stale allocator: %v, want it refused", err)
	}
	if _, err := b.e.Database("b"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the refused database exists on its proposer: %v", err)
	}
	// Retried, B's allocator has moved past A's numbers.
	if _, err := b.e.CreateDatabase("b", Throughput{}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.e.CreateUser("b", "u"); err != nil {
		t.Fatal(err)
	}
	// A now lags B: its next change is refused once, then goes through.
	if _, err := a.e.CreateUser("a0", "u"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("A's change behind B's entries: %v, want it refused", err)
	}
	if _, err := a.e.CreateUser("a0", "u"); err != nil {
		t.Fatal(err)
	}
	if err := b.catchUp(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, n := range []*fakeMetaNode{a, b} {
		if err := n.e.WaitCatalog(ctx, uint64(len(meta.log))); err != nil {
			t.Fatal(err)
		}
		noDuplicateSeqs(t, n.e)
	}
	if va, vb := catalogView(t, a.e), catalogView(t, b.e); va != vb || !strings.Contains(va, `"id":"b"`) || !strings.Contains(va, `"id":"a2"`) {
		t.Fatalf("the nodes disagree or miss databases:\n%s\n%s", va, vb)
	}
	ka, kb := catalogKeys(t, a.st), catalogKeys(t, b.st)
	if fmt.Sprint(ka) != fmt.Sprint(kb) {
		t.Fatalf("the stores' catalogs differ:\n%q\n%q", ka, kb)
	}
	// Pipelined changes of one node: offer replaces take their numbers
	// before they lock anything, so several are taken before the first is
	// applied; none is refused.
	for i := range 8 {
		if _, err := a.e.CreateContainer("a1", ContainerSpec{ID: fmt.Sprint("c", i), PartitionKey: hashDef("/pk")}, Throughput{RUs: 400}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for round := range 4 {
		for _, o := range a.e.Offers() {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := a.e.ReplaceOffer(o.ID, Throughput{RUs: 500 + 100*round})
				errs <- err
			}()
		}
		wg.Wait()
	}
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("a pipelined change of one node: %v", err)
		}
	}
}

// moveLeaders hands the leadership of every partition group of db/c to
// node to, and waits until it has it.
func moveLeaders(t *testing.T, nodes []*catNode, db string, to uint64) {
	t.Helper()
	c, err := nodes[to-1].e.Container(db, "c")
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, p := range c.Partitions() {
		for {
			l := waitLeader(t, nodes, p.GroupID(), 0)
			if l == to {
				break
			}
			_ = nodes[l-1].h.TransferLeadership(p.GroupID(), to)
			if time.Now().After(deadline) {
				t.Fatalf("node %d does not get the leadership of range %s", to, p.ID())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// TestCatalogReplicatedOfferSplit raises a container's throughput past
// what its partitions serve, from the meta group's leader. While another
// node leads the partitions, the split cannot be proposed: the change
// fails with ErrUnavailable naming that leader (the new throughput is
// stored; the split is not). Once the meta leader leads them too, the
// split goes through the partitions' logs and every node ends with the
// same partitions, records and memory.
func TestCatalogReplicatedOfferSplit(t *testing.T) {
	_, nodes := startCatalogCluster(t)
	e := nodes[0].e
	if _, err := e.CreateDatabase("d", Throughput{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.CreateContainer("d", ContainerSpec{ID: "c", PartitionKey: hashDef("/pk")}, Throughput{RUs: 4000}); err != nil {
		t.Fatal(err)
	}
	writeAndRead(t, nodes, "d", 4, 20)
	var offer string
	for _, o := range e.Offers() {
		if o.Coll == "c" {
			offer = o.ID
		}
	}
	moveLeaders(t, nodes, "d", 2)
	var nl *host.NotLeaderError
	if _, err := e.ReplaceOffer(offer, Throughput{RUs: 8000}); !errors.Is(err, ErrUnavailable) || !errors.As(err, &nl) || nl.Leader != 2 {
		t.Fatalf("a split for throughput where node 2 leads the partitions: %v, want a refusal naming node 2", err)
	}
	moveLeaders(t, nodes, "d", 1)
	if _, err := e.ReplaceOffer(offer, Throughput{RUs: 8000}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, n := range nodes {
		c, err := n.e.Container("d", "c")
		if err != nil {
			t.Fatal(err)
		}
		for len(c.Partitions()) != 8 {
			if time.Now().After(deadline) {
				t.Fatalf("node %d has %d partitions, want 8", n.id, len(c.Partitions()))
			}
			time.Sleep(time.Millisecond)
		}
	}
	agree(t, nodes, nodes[0])
	writeAndRead(t, nodes, "d", 8, 20)
}

// TestApplyCatalogMalformed hands ApplyCatalog entries that are cut short
// or out of order: each is an error, never a panic, and the index does
// not move; a well-formed entry then applies. WaitCatalog for an index
// never reached ends with its context.
func TestApplyCatalogMalformed(t *testing.T) {
	meta := &fakeMeta{}
	st, err := storage.Open(storage.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	n := &fakeMetaNode{meta: meta, st: st}
	if n.e, err = Open(st, Options{TTLSweepInterval: -1, Catalog: n}); err != nil {
		t.Fatal(err)
	}
	defer n.e.Close()
	m := &catalogBatch{}
	m.set(storage.DatabaseKey("x"), []byte(`{"id":"x","rid":"AAAAAQ==","seq":1}`))
	good := append(append([]byte{1, 2, 3, 4, 5, 6, 7, 8}, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8), m.encode()...)
	for i, data := range [][]byte{
		{1, 2, 3},
		good[:8],
		good[:9],
		good[:12],
		good[:18],
		append(good[:18:18], 99),
		append(append([]byte(nil), good...), 0),
	} {
		b := st.NewBatch()
		if err := n.e.ApplyCatalog(b, []ReplicaEntry{{Index: 1, Data: data}}); err == nil {
			t.Fatalf("entry %d (%x) applied", i, data)
		}
		b.Discard()
	}
	b := st.NewBatch()
	if err := n.e.ApplyCatalog(b, []ReplicaEntry{{Index: 2, Data: good}}); err == nil {
		t.Fatal("an entry after a gap applied")
	}
	b.Discard()
	b = st.NewBatch()
	if err := n.e.ApplyCatalog(b, []ReplicaEntry{{Index: 1}, {Index: 2, Data: good}}); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	n.e.PublishCatalog()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := n.e.WaitCatalog(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if d, err := n.e.Database("x"); err != nil || d.Rid != "AAAAAQ==" || n.e.CatalogApplied() != 2 {
		t.Fatalf("after the entry: database %+v (%v), applied %d", d, err, n.e.CatalogApplied())
	}
	short, cancel2 := context.WithCancel(context.Background())
	cancel2()
	if err := n.e.WaitCatalog(short, 3); !errors.Is(err, ErrUnavailable) || !errors.Is(err, context.Canceled) {
		t.Fatalf("waiting for an index never reached: %v", err)
	}
}

// TestCatalogReplicatedDeletionFencesWrites deletes a container through
// the meta group, then has its partitions' leader commit a write in one
// of their groups (as a write in flight during the deletion would): no
// replica applies it, and no key of the container is left on any node.
func TestCatalogReplicatedDeletionFencesWrites(t *testing.T) {
	_, nodes := startCatalogCluster(t)
	e := nodes[0].e
	if _, err := e.CreateDatabase("d", Throughput{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.CreateContainer("d", ContainerSpec{ID: "c", PartitionKey: hashDef("/pk")}, Throughput{RUs: 4000}); err != nil {
		t.Fatal(err)
	}
	writeAndRead(t, nodes, "d", 4, 20)
	moveLeaders(t, nodes, "d", 2)
	old := make([]*Container, len(nodes))
	for i, n := range nodes {
		old[i], _ = n.e.Container("d", "c")
	}
	rid := old[0].rid
	if n := len(containerState(t, nodes[0].st, rid)); n < 20 {
		t.Fatalf("the container has %d keys before its deletion", n)
	}
	op, err := old[1].PrepareWrite(OpUpsert, []byte(`{"id":"late","pk":"k1"}`), key("k1"), true)
	if err != nil {
		t.Fatal(err)
	}
	g := old[1].PartitionFor(mustEPK(t, old[1], "k1"))
	if err := e.DeleteContainer("d", "c"); err != nil {
		t.Fatal(err)
	}
	waitCatalog(t, nodes, nodes[0])
	data := binfmt.AppendString(binary.AppendUvarint(make([]byte, 8), 1), string(EncodeCommand(nil, &Command{Ops: []Op{op}})))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	idx, err := nodes[1].h.Propose(ctx, g.GroupID(), data)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for i, n := range nodes {
		p, _ := old[i].PartitionByID(g.ID())
		if p == nil {
			t.Fatalf("node %d lost its partition %s", n.id, g.ID())
		}
		for {
			if got, _ := p.AppliedIndex(); got >= idx {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %d does not apply entry %d", n.id, idx)
			}
			time.Sleep(time.Millisecond)
		}
		if left := containerState(t, n.st, rid); len(left) != 0 {
			t.Fatalf("node %d holds %d keys of the deleted container", n.id, len(left))
		}
	}
}

// TestCatalogForeignDeletionReopens has a node apply another's deletion of
// a container that holds items and close before it reconciles it (so its
// record of acknowledged LSNs still names the container): it opens again,
// without the container, instead of reading the deletion as data loss.
func TestCatalogForeignDeletionReopens(t *testing.T) {
	meta := &fakeMeta{}
	dir := t.TempDir()
	open := func(sub string) *fakeMetaNode {
		st, err := storage.Open(storage.Options{Dir: dir + "/" + sub})
		if err != nil {
			t.Fatal(err)
		}
		n := &fakeMetaNode{meta: meta, st: st}
		n.e, err = Open(st, Options{PartitionMaxRUs: 1000, NoThrottle: true, TTLSweepInterval: -1, Catalog: n})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	a, b := open("a"), open("b")
	defer func() { a.e.Close(); a.st.Close() }()
	if _, err := a.e.CreateDatabase("d", Throughput{}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.e.CreateContainer("d", ContainerSpec{ID: "c", PartitionKey: hashDef("/pk")}, Throughput{RUs: 400}); err != nil {
		t.Fatal(err)
	}
	if err := b.catchUp(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := b.e.WaitCatalog(ctx, uint64(len(meta.log))); err != nil {
		t.Fatal(err)
	}
	// Items written on b (its partitions are local: no Replicator), and
	// recorded as acknowledged.
	c, err := b.e.Container("d", "c")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		op, _ := c.PrepareWrite(OpUpsert, fmt.Appendf(nil, `{"id":"i%d","pk":"k"}`, i), key("k"), true)
		if _, _, err := c.Execute(&Command{Ops: []Op{op}}, ""); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.e.writeAcked(); err != nil {
		t.Fatal(err)
	}
	if err := a.e.DeleteContainer("d", "c"); err != nil {
		t.Fatal(err)
	}
	// b applies the deletion and closes before publishing it.
	meta.mu.Lock()
	ents := []ReplicaEntry{{Index: uint64(len(meta.log)), Data: meta.log[len(meta.log)-1]}}
	meta.mu.Unlock()
	batch := b.st.NewBatch()
	if err := b.e.ApplyCatalog(batch, ents); err != nil {
		t.Fatal(err)
	}
	if err := batch.Commit(); err != nil {
		t.Fatal(err)
	}
	b.e.Close()
	b.e, err = Open(b.st, Options{PartitionMaxRUs: 1000, NoThrottle: true, TTLSweepInterval: -1, Catalog: b})
	if err != nil {
		t.Fatalf("reopening after a foreign deletion: %v", err)
	}
	defer func() { b.e.Close(); b.st.Close() }()
	if _, err := b.e.Container("d", "c"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the deleted container after reopening: %v", err)
	}
	if got := b.e.CatalogApplied(); got != uint64(len(meta.log)) {
		t.Fatalf("applied index %d after reopening, want %d", got, len(meta.log))
	}
}

// TestCatalogReplicatedRecordChangesRaceSplits replaces a container's
// record through the meta group while its partitions split through their
// own groups, on the node that leads them all: neither waits for the other
// for good (a change of the record does not hold the container's lock the
// replication loop takes to publish a split), and every node ends with the
// same record and partitions.
func TestCatalogReplicatedRecordChangesRaceSplits(t *testing.T) {
	_, nodes := startCatalogCluster(t)
	e := nodes[0].e
	if _, err := e.CreateDatabase("d", Throughput{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.CreateContainer("d", ContainerSpec{ID: "c", PartitionKey: hashDef("/pk")}, Throughput{RUs: 4000}); err != nil {
		t.Fatal(err)
	}
	writeAndRead(t, nodes, "d", 4, 40)
	moveLeaders(t, nodes, "d", 1)
	c, err := e.Container("d", "c")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 2)
	go func() {
		for i := range 40 {
			ttl := int64(100 + i)
			if _, err := e.ReplaceContainer("d", ContainerSpec{ID: "c", PartitionKey: hashDef("/pk"), DefaultTTL: &ttl}, ""); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	go func() {
		for _, p := range c.Partitions() {
			if _, err := c.splitForStorage(p); err != nil {
				done <- fmt.Errorf("split range %s: %w", p.ID(), err)
				return
			}
		}
		done <- nil
	}()
	for range 2 {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(2 * time.Minute):
			t.Fatal("record changes and splits wait for each other")
		}
	}
	parts := len(c.Partitions())
	if parts <= 4 {
		t.Fatalf("%d partitions after the splits", parts)
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, n := range nodes {
		nc, err := n.e.Container("d", "c")
		if err != nil {
			t.Fatal(err)
		}
		for len(nc.Partitions()) != parts {
			if time.Now().After(deadline) {
				t.Fatalf("node %d has %d partitions, want %d", n.id, len(nc.Partitions()), parts)
			}
			time.Sleep(time.Millisecond)
		}
	}
	if ttl := c.Info().DefaultTTL; ttl == nil || *ttl != 139 {
		t.Fatalf("the record's default TTL is %v after the last replace", ttl)
	}
	agree(t, nodes, nodes[0])
}
