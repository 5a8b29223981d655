package cosmos

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// selfSigned makes a self-signed certificate for 127.0.0.1.
func selfSigned(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// TestForwarderVerifiesNodes checks that a request is sent on over HTTPS
// only to a node that presents the certificate it says it serves, never to
// one that presents another (whoever sits between the nodes).
func TestForwarderVerifiesNodes(t *testing.T) {
	hello := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "leader") })
	node := httptest.NewTLSServer(hello)
	defer node.Close()
	impostor := httptest.NewUnstartedServer(hello)
	impostor.TLS = &tls.Config{Certificates: []tls.Certificate{selfSigned(t)}}
	impostor.StartTLS()
	defer impostor.Close()
	asked := 0
	f := newForwarder(func(_ context.Context, id uint64) ([]byte, error) {
		asked++
		return node.Certificate().Raw, nil
	})
	get := func(id uint64, url string) (string, error) {
		t.Helper()
		c, err := f.client(context.Background(), id, url)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Get(url)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	if got, err := get(2, node.URL); err != nil || got != "leader" {
		t.Fatalf("the node: %q, %v", got, err)
	}
	if _, err := get(3, impostor.URL); !errors.Is(err, errNotPinned) {
		t.Fatalf("a node presenting another certificate than it serves: %v, want %v", err, errNotPinned)
	}
	// The certificate is asked for once per node, again once forgotten.
	if got, err := get(2, node.URL); err != nil || got != "leader" || asked != 2 {
		t.Fatalf("the node again: %q, %v, asked %d times for certificates", got, err, asked)
	}
	f.forget(2)
	if _, err := get(2, node.URL); err != nil || asked != 3 {
		t.Fatalf("the node once forgotten: %v, asked %d times for certificates", err, asked)
	}
}
