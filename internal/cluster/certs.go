package cluster

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

	"github.com/zergrush/zerg/internal/fsx"
)

// Files under Dir/tls. Keys are 0600; certificates are public.
const (
	caCertFile     = "ca.pem"
	caKeyFile      = "ca-key.pem"
	serverCertFile = "server.pem"
	serverKeyFile  = "server-key.pem"
)

// certNames are the names the server certificate must cover.
func certNames(host string, extra []string) []string {
	names := []string{"localhost", "127.0.0.1"}
	if ip := net.ParseIP(host); ip == nil || !ip.IsUnspecified() {
		names = append(names, host)
	}
	names = append(names, extra...)
	seen := map[string]bool{}
	out := names[:0]
	for _, n := range names {
		if n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// loadOrCreateTLS returns the server's TLS config and the CA certificate
// (PEM). The CA is created once and kept; the server certificate is kept
// while it covers names and is more than 30 days from expiry, and is
// otherwise re-issued by the same CA, so agents' CA stays valid.
func loadOrCreateTLS(dir string, names []string) (*tls.Config, string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, "", fmt.Errorf("cluster: tls dir: %w", err)
	}
	caCert, caKey, caPEM, err := loadOrCreateCA(dir)
	if err != nil {
		return nil, "", err
	}
	certPath, keyPath := filepath.Join(dir, serverCertFile), filepath.Join(dir, serverKeyFile)
	pair, err := tls.LoadX509KeyPair(certPath, keyPath)
	if err != nil || !certUsable(pair.Leaf, caCert, names) {
		if err := issueServerCert(dir, caCert, caKey, names); err != nil {
			return nil, "", err
		}
		if pair, err = tls.LoadX509KeyPair(certPath, keyPath); err != nil {
			return nil, "", fmt.Errorf("cluster: load server certificate: %w", err)
		}
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}, caPEM, nil
}

func certUsable(leaf, ca *x509.Certificate, names []string) bool {
	if leaf == nil || time.Until(leaf.NotAfter) < 30*24*time.Hour || leaf.CheckSignatureFrom(ca) != nil {
		return false
	}
	for _, n := range names {
		if leaf.VerifyHostname(n) != nil {
			return false
		}
	}
	return true
}

func loadOrCreateCA(dir string) (*x509.Certificate, *ecdsa.PrivateKey, string, error) {
	certPath, keyPath := filepath.Join(dir, caCertFile), filepath.Join(dir, caKeyFile)
	certPEM, errC := os.ReadFile(certPath)
	keyPEM, errK := os.ReadFile(keyPath)
	if errC == nil && errK == nil {
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, nil, "", fmt.Errorf("cluster: CA in %s: %w", dir, err)
		}
		key, ok := pair.PrivateKey.(*ecdsa.PrivateKey)
		if !ok {
			return nil, nil, "", fmt.Errorf("cluster: CA key %s is not ECDSA", keyPath)
		}
		return pair.Leaf, key, string(certPEM), nil
	}
	if !errors.Is(errC, os.ErrNotExist) && errC != nil {
		return nil, nil, "", fmt.Errorf("cluster: read %s: %w", certPath, errC)
	}
	if !errors.Is(errK, os.ErrNotExist) && errK != nil {
		return nil, nil, "", fmt.Errorf("cluster: read %s: %w", keyPath, errK)
	}
	if (errC == nil) != (errK == nil) {
		// Half a CA: refuse rather than silently re-keying, which would
		// invalidate every agent's credentials.
		return nil, nil, "", fmt.Errorf("cluster: %s has only one of %s and %s", dir, caCertFile, caKeyFile)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, "", err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "zerg cluster CA " + randomHex(4)},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, "", err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, "", err
	}
	certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := writeKey(keyPath, key); err != nil {
		return nil, nil, "", err
	}
	if err := fsx.WriteFileAtomicMode(certPath, certPEM, 0o644); err != nil {
		return nil, nil, "", err
	}
	return cert, key, string(certPEM), nil
}

func issueServerCert(dir string, ca *x509.Certificate, caKey *ecdsa.PrivateKey, names []string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: names[0]},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().AddDate(2, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	if err := writeKey(filepath.Join(dir, serverKeyFile), key); err != nil {
		return err
	}
	return fsx.WriteFileAtomicMode(filepath.Join(dir, serverCertFile), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
}

func writeKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	return fsx.WriteFileAtomicMode(path, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600)
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err)
	}
	return n
}
