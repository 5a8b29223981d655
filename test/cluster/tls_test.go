package cluster

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// httpsClient returns an HTTP client that trusts the self-signed
// certificate n keeps in its data directory.
func httpsClient(t testing.TB, n *node) *http.Client {
	t.Helper()
	pem, err := os.ReadFile(filepath.Join(n.dir, "tls-cert.pem"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatalf("node %d keeps no certificate", n.id)
	}
	return &http.Client{Timeout: time.Minute, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
}

// TestClusterTLS forms a cluster whose nodes serve HTTPS with self-signed
// certificates, writes through every node (the followers send the writes
// on to the leaders, verifying that each presents the certificate it says
// it serves) and reads every write back through every node.
func TestClusterTLS(t *testing.T) {
	ns := newNodes(t, 3)
	for _, n := range ns {
		n.https = true
	}
	if err := ns[0].start(t, "--tls"); err != nil {
		t.Fatalf("node 1: %v", err)
	}
	for _, n := range ns[1:] {
		if err := n.start(t, "--tls", "--join", ns[0].clust); err != nil {
			t.Fatalf("node %d: %v", n.id, err)
		}
	}
	clients := []*azcosmos.Client{newClient(t, ns[0]), newClient(t, ns[1]), newClient(t, ns[2])}
	// Through node 2, which does not lead the meta group: the request is
	// sent on to node 1.
	if _, err := clients[1].CreateDatabase(ctxT(), azcosmos.DatabaseProperties{ID: "db"}, nil); err != nil {
		t.Fatalf("create database through node 2: %v", err)
	}
	db, _ := clients[2].NewDatabase("db")
	if _, err := db.CreateContainer(ctxT(), azcosmos.ContainerProperties{ID: "c", PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}, nil); err != nil {
		t.Fatalf("create container through node 3: %v", err)
	}
	const items = 30
	var sessions [items]string
	for i := range items {
		cc, _ := clients[i%3].NewContainer("db", "c")
		doc := fmt.Sprintf(`{"id":"i%d","pk":"k%d","n":%d}`, i, i%7, i)
		r, err := cc.CreateItem(ctxT(), azcosmos.NewPartitionKeyString(fmt.Sprintf("k%d", i%7)), []byte(doc), nil)
		if err != nil {
			t.Fatalf("create item %d through node %d: %v", i, i%3+1, err)
		}
		if r.SessionToken == nil {
			t.Fatalf("create item %d: no session token", i)
		}
		sessions[i] = *r.SessionToken
	}
	// Read your writes through every node, with the session token the
	// write returned.
	for i := range items {
		for k, c := range clients {
			cc, _ := c.NewContainer("db", "c")
			r, err := cc.ReadItem(ctxT(), azcosmos.NewPartitionKeyString(fmt.Sprintf("k%d", i%7)), fmt.Sprintf("i%d", i), &azcosmos.ItemOptions{SessionToken: &sessions[i]})
			if err != nil {
				t.Fatalf("read item %d through node %d: %v", i, k+1, err)
			}
			var doc struct{ N int }
			if err := json.Unmarshal(r.Value, &doc); err != nil || doc.N != i {
				t.Fatalf("item %d through node %d: %s", i, k+1, r.Value)
			}
		}
	}
}
