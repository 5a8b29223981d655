package server

import (
	"context"
	"crypto/tls"
	"os"
	"path/filepath"
	"testing"
)

// TestClusterNodeCertificate checks that a cluster member serving HTTPS
// with a certificate of its own making has it issued by the cluster's
// authority, which the other nodes verify when they send requests on to it,
// replacing a self-signed one kept from before.
func TestClusterNodeCertificate(t *testing.T) {
	dir := t.TempDir()
	certPEM, keyPEM, err := selfSigned(certNames(Options{Listen: "127.0.0.1:0"}))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, CertFileName), certPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, KeyFileName), keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Start(Options{DataDir: dir, Listen: "127.0.0.1:0", TLS: true, NodeID: 1, ClusterListen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	// Dial as another node would: trusting the cluster's authority only,
	// and checking the name.
	c, err := tls.Dial("tcp", s.ln.Addr().String(), &tls.Config{RootCAs: s.Node().Authority().Pool(), ServerName: "127.0.0.1"})
	if err != nil {
		t.Fatalf("the node's certificate does not verify against the cluster's authority: %v", err)
	}
	c.Close()
	kept, err := tls.LoadX509KeyPair(filepath.Join(dir, CertFileName), filepath.Join(dir, KeyFileName))
	if err != nil {
		t.Fatal(err)
	}
	if !s.Node().Authority().Issued(kept) {
		t.Fatal("the data directory keeps a certificate the cluster's authority did not issue")
	}
}
