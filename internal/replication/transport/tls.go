package transport

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"time"
)

// authority is a cluster's certificate authority. Its key is derived from
// the cluster key, so every node holds the same authority and no file
// needs to be shared: a certificate it issued proves that its holder was
// given the cluster key. The transport's connections are TLS 1.3 between
// certificates it issued, each side verifying the other's.
type authority struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// peerName is the name in the certificates nodes present to each other.
const peerName = "parsec-cluster"

// newAuthority derives the authority of the cluster key clusterKey.
func newAuthority(clusterKey []byte) (*authority, error) {
	var key *ecdsa.PrivateKey
	for i := byte(0); key == nil; i++ {
		// A P-256 scalar from HMAC-SHA256; one in about 2^32 is not below
		// the group order, and the next counter is tried.
		h := hmac.New(sha256.New, clusterKey)
		h.Write([]byte("parsec cluster certificate authority"))
		h.Write([]byte{i})
		key, _ = ecdsa.ParseRawPrivateKey(elliptic.P256(), h.Sum(nil))
		if i == 255 && key == nil {
			return nil, errors.New("transport: cannot derive the cluster's certificate key")
		}
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "Parsec cluster CA", Organization: []string{"Parsec"}},
		NotBefore:             time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC),
		NotAfter:              time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC),
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("transport: cannot make the cluster's certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("transport: cannot make the cluster's certificate: %w", err)
	}
	return &authority{cert: cert, key: key}, nil
}

// pool returns a new pool holding only the authority's certificate.
func (a *authority) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(a.cert)
	return p
}

// peerTLS returns the TLS configurations of a node's two sides of the
// transport: TLS 1.3, each side presenting a certificate the authority
// issued for this process (a new P-256 key) and requiring one from the
// other.
func (a *authority) peerTLS() (server, client *tls.Config, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "Parsec node", Organization: []string{"Parsec"}},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().AddDate(10, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:     []string{peerName},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, &key.PublicKey, a.key)
	if err != nil {
		return nil, nil, fmt.Errorf("transport: cannot issue the node's certificate: %w", err)
	}
	cert := tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	server = &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: a.pool(), MinVersion: tls.VersionTLS13}
	client = &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: a.pool(), ServerName: peerName, MinVersion: tls.VersionTLS13}
	return server, client, nil
}
