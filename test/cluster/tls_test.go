package cluster

import (
	"crypto/tls"
	"crypto/x509"
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
	writeThenReadEverywhere(t, clients, 30, 7)
}
