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
	"os"
	"path/filepath"
	"time"
)

// Names of the self-signed certificate files kept in the data directory.
const (
	CertFileName = "tls-cert.pem"
	KeyFileName  = "tls-key.pem"
)

// loadOrCreateCert returns the configured certificate, or the data
// directory's self-signed one, generating it on first use.
func loadOrCreateCert(o Options) (tls.Certificate, error) {
	if o.CertFile != "" {
		c, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
		if err != nil {
			return c, fmt.Errorf("cannot load --cert/--cert-key: %w", err)
		}
		return c, nil
	}
	certPEM, keyPEM, err := selfSigned(o.Listen)
	if err != nil {
		return tls.Certificate{}, err
	}
	if o.InMemory {
		return tls.X509KeyPair(certPEM, keyPEM)
	}
	cf, kf := filepath.Join(o.DataDir, CertFileName), filepath.Join(o.DataDir, KeyFileName)
	if c, err := tls.LoadX509KeyPair(cf, kf); err == nil {
		return c, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return c, fmt.Errorf("cannot load the certificate in %s: %w", o.DataDir, err)
	}
	if err := os.WriteFile(kf, keyPEM, 0o600); err != nil {
		return tls.Certificate{}, fmt.Errorf("cannot save the TLS key: %w", err)
	}
	if err := os.WriteFile(cf, certPEM, 0o644); err != nil {
		return tls.Certificate{}, fmt.Errorf("cannot save the TLS certificate: %w", err)
	}
	return tls.X509KeyPair(certPEM, keyPEM)
}

// selfSigned makes a P-256 certificate valid for localhost, the loopback
// addresses and the listen host, for ten years.
func selfSigned(listen string) (certPEM, keyPEM []byte, err error) {
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
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	if host, _, err := net.SplitHostPort(listen); err == nil && host != "" {
		if ip := net.ParseIP(host); ip != nil {
			if !ip.IsLoopback() && !ip.IsUnspecified() {
				tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
			}
		} else if host != "localhost" {
			tmpl.DNSNames = append(tmpl.DNSNames, host)
		}
	}
	if h, err := os.Hostname(); err == nil && h != "" && h != "localhost" {
		tmpl.DNSNames = append(tmpl.DNSNames, h)
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
