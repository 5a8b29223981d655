package cosmos

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/parsecdb/parsec/internal/replication/transport"
)

// TestForwarderVerifiesNodes checks that a request is sent on only to a
// node whose certificate the cluster's authority issued (or the system
// trusts), never to one that presents any other certificate.
func TestForwarderVerifiesNodes(t *testing.T) {
	auth, err := transport.NewAuthority(bytes.Repeat([]byte("c"), 32))
	if err != nil {
		t.Fatal(err)
	}
	fwd := newForwarder(auth.Cert())
	hello := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "leader") })

	node := httptest.NewUnstartedServer(hello)
	certPEM, keyPEM, err := auth.Issue([]string{"127.0.0.1"}, x509.ExtKeyUsageServerAuth)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	node.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	node.StartTLS()
	defer node.Close()
	resp, err := fwd.Get(node.URL)
	if err != nil {
		t.Fatalf("a node of the cluster: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "leader" {
		t.Fatalf("a node of the cluster answered %q", b)
	}

	// A certificate of another authority (another cluster key, or one
	// made up by whoever sits between the nodes) is refused.
	other, err := transport.NewAuthority(bytes.Repeat([]byte("o"), 32))
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err = other.Issue([]string{"127.0.0.1"}, x509.ExtKeyUsageServerAuth)
	if err != nil {
		t.Fatal(err)
	}
	if cert, err = tls.X509KeyPair(certPEM, keyPEM); err != nil {
		t.Fatal(err)
	}
	impostor := httptest.NewUnstartedServer(hello)
	impostor.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	impostor.StartTLS()
	defer impostor.Close()
	selfSigned := httptest.NewTLSServer(hello)
	defer selfSigned.Close()
	for _, u := range []string{impostor.URL, selfSigned.URL} {
		resp, err := fwd.Get(u)
		var ua x509.UnknownAuthorityError
		if err == nil {
			resp.Body.Close()
			t.Fatalf("%s: a node with an untrusted certificate was sent the request", u)
		}
		if !errors.As(err, &ua) {
			t.Fatalf("%s: %v, want an unknown authority", u, err)
		}
	}
}
