package cluster

import (
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// TestClusterMisuse starts nodes the ways an operator gets wrong: each
// must refuse to start or to join with a message that says why, and
// nothing stored may be damaged.
func TestClusterMisuse(t *testing.T) {
	keyA := strings.Repeat("a", 40)
	a := newNodes(t, 2)
	if err := a[0].start(t, "--cluster-key", keyA); err != nil {
		t.Fatal(err)
	}
	ca := newClient(t, a[0])
	if _, err := ca.CreateDatabase(ctxT(), azcosmos.DatabaseProperties{ID: "kept"}, nil); err != nil {
		t.Fatal(err)
	}

	refuse := func(what string, n *node, want string, extra ...string) {
		t.Helper()
		err := n.start(t, extra...)
		if err == nil {
			n.stop(t)
			t.Fatalf("%s: the node started", what)
		}
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: the refusal does not say %q:\n%v", what, want, err)
		}
	}
	// A node with another cluster key cannot join.
	refuse("wrong --cluster-key", a[1], "--cluster-key differs", "--cluster-key", strings.Repeat("b", 40), "--join", a[0].clust)
	// A second node with the id of a member.
	dup := &node{id: 1, dir: t.TempDir(), listen: freeAddr(t), clust: freeAddr(t)}
	t.Cleanup(dup.kill)
	refuse("duplicate --node-id", dup, "already a member", "--cluster-key", keyA, "--join", a[0].clust)
	// --join to an address where nothing listens.
	refuse("--join to nothing", a[1], "cannot join", "--cluster-key", keyA, "--join", freeAddr(t))
	// A short key, and a key missing off loopback.
	refuse("short --cluster-key", a[1], "at least 32 bytes", "--cluster-key", "short", "--join", a[0].clust)

	// A member of another cluster B, started again with --join naming
	// cluster A.
	b := newNodes(t, 1)[0]
	if err := b.start(t, "--cluster-key", keyA); err != nil {
		t.Fatal(err)
	}
	cb := newClient(t, b)
	if _, err := cb.CreateDatabase(ctxT(), azcosmos.DatabaseProperties{ID: "b-data"}, nil); err != nil {
		t.Fatal(err)
	}
	b.stop(t)
	refuse("a data directory of another cluster", b, "belongs to cluster", "--cluster-key", keyA, "--join", a[0].clust)
	// The same directory under another node id.
	b.id = 7
	refuse("another --node-id on a member's directory", b, "belongs to node 1", "--cluster-key", keyA)
	b.id = 1

	// Nothing was damaged: both clusters still serve what they held. Node 1
	// of cluster B comes back on another client port, and its record says
	// so.
	b.listen = freeAddr(t)
	if err := b.start(t, "--cluster-key", keyA); err != nil {
		t.Fatalf("node of cluster B after the refusals: %v", err)
	}
	if st, err := clusterStatus(b); err != nil || len(st.Nodes) != 1 || st.Nodes[0].Address != b.url() {
		t.Fatalf("cluster B after a restart on %s: %+v, %v", b.url(), st, err)
	}
	for name, c := range map[string]*azcosmos.Client{"kept": ca, "b-data": newClient(t, b)} {
		d, _ := c.NewDatabase(name)
		if _, err := d.Read(ctxT(), nil); err != nil {
			t.Fatalf("database %s after the refusals: %v", name, err)
		}
	}
}
