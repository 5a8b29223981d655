package gosdk

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/parsecdb/parsec/internal/auth"
	"github.com/parsecdb/parsec/internal/server"
)

// TestTLSWithSelfSignedCertificate serves HTTPS with the certificate the
// server generates in its data directory, connects the Go SDK trusting only
// that certificate, and checks that a restart keeps the same certificate and
// the data.
func TestTLSWithSelfSignedCertificate(t *testing.T) {
	dir := t.TempDir()
	s, err := server.Start(server.Options{DataDir: dir, Listen: "127.0.0.1:0", TLS: true})
	if err != nil {
		t.Fatal(err)
	}
	certFile := filepath.Join(dir, server.CertFileName)
	pemBytes, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatalf("no certificate in the data directory: %v", err)
	}
	client := func() *azcosmos.Client {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pemBytes) {
			t.Fatal("certificate file holds no certificate")
		}
		o := &azcosmos.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: &http.Client{
			Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}}}
		return newClient(t, s, auth.EmulatorKey, o)
	}
	if got := s.URL(); got[:8] != "https://" {
		t.Fatalf("URL %q is not https", got)
	}
	cc := setup(t, client(), "db", "c", hashPK("/pk"), 0)
	_, err = cc.CreateItem(ctx(), azcosmos.NewPartitionKeyString("p"), []byte(`{"id":"1","pk":"p"}`), nil)
	must(t, err, "create over TLS")

	// A client that does not trust the certificate fails.
	if _, err := (&http.Client{Transport: &http.Transport{}}).Get(s.URL() + "/_ready"); err == nil {
		t.Fatal("a client without the certificate connected")
	}
	must(t, s.Shutdown(ctx()), "shutdown")

	s, err = server.Start(server.Options{DataDir: dir, Listen: "127.0.0.1:0", TLS: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(ctx())
	again, _ := os.ReadFile(certFile)
	if !bytes.Equal(again, pemBytes) {
		t.Fatal("the certificate changed on restart")
	}
	c2 := client()
	cc2, _ := c2.NewContainer("db", "c")
	_, err = cc2.ReadItem(ctx(), azcosmos.NewPartitionKeyString("p"), "1", nil)
	must(t, err, "read over TLS after restart")
}
