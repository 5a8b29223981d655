package server

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/parsecdb/parsec/internal/replication/transport"
)

// Names of the self-signed certificate files kept in the data directory.
const (
	CertFileName = "tls-cert.pem"
	KeyFileName  = "tls-key.pem"
)

// loadOrCreateCert returns the configured certificate, or the data
// directory's own one, generating it on first use: self-signed, or in a
// cluster (auth not nil) issued by the cluster's authority, which the other
// nodes trust when they send a client's request on to this one. A kept
// certificate the authority did not issue (made before the node was a
// cluster member, or under another cluster key) is replaced.
func loadOrCreateCert(o Options, auth *transport.Authority) (tls.Certificate, error) {
	if o.CertFile != "" {
		c, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
		if err != nil {
			return c, fmt.Errorf("cannot load --cert/--cert-key: %w", err)
		}
		return c, nil
	}
	names := certNames(o)
	create := func() ([]byte, []byte, error) { return selfSigned(names) }
	if auth != nil {
		create = func() ([]byte, []byte, error) { return auth.Issue(names, x509.ExtKeyUsageServerAuth) }
	}
	if o.InMemory {
		certPEM, keyPEM, err := create()
		if err != nil {
			return tls.Certificate{}, err
		}
		return tls.X509KeyPair(certPEM, keyPEM)
	}
	cf, kf := filepath.Join(o.DataDir, CertFileName), filepath.Join(o.DataDir, KeyFileName)
	if c, err := tls.LoadX509KeyPair(cf, kf); err == nil {
		if auth == nil || auth.Issued(c) {
			return c, nil
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return c, fmt.Errorf("cannot load the certificate in %s: %w", o.DataDir, err)
	}
	certPEM, keyPEM, err := create()
	if err != nil {
		return tls.Certificate{}, err
	}
	if err := os.WriteFile(kf, keyPEM, 0o600); err != nil {
		return tls.Certificate{}, fmt.Errorf("cannot save the TLS key: %w", err)
	}
	if err := os.WriteFile(cf, certPEM, 0o644); err != nil {
		return tls.Certificate{}, fmt.Errorf("cannot save the TLS certificate: %w", err)
	}
	return tls.X509KeyPair(certPEM, keyPEM)
}

// certNames are the names a certificate of the server's own making is
// valid for: localhost, the loopback addresses, the hosts of the listen
// address and of the advertised endpoint, and the machine's host name.
func certNames(o Options) []string {
	names := []string{"localhost", "127.0.0.1", "::1"}
	add := func(host string) {
		if ip := net.ParseIP(host); ip != nil {
			if !ip.IsLoopback() && !ip.IsUnspecified() {
				names = append(names, host)
			}
		} else if host != "" && host != "localhost" && !slices.Contains(names, host) {
			names = append(names, host)
		}
	}
	if host, _, err := net.SplitHostPort(o.Listen); err == nil {
		add(host)
	}
	if u, err := url.Parse(o.Advertise); err == nil && o.Advertise != "" {
		add(u.Hostname())
	}
	if h, err := os.Hostname(); err == nil {
		add(h)
	}
	return names
}

// selfSigned makes a self-signed P-256 certificate valid for names (DNS
// names and IP addresses) for ten years.
func selfSigned(names []string) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "Parsec self-signed", Organization: []string{"Parsec"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), nil
}
