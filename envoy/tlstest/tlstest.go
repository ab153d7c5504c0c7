// Package tlstest makes a throwaway certificate authority and the
// certificates a test of mutual TLS needs, written as PEM files the way an
// operator would hand them to `runedge xds` and `runedge serve`.
package tlstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// PKI is a CA and the files of the certificates it issued.
type PKI struct {
	// Dir holds every file.
	Dir string
	// CAFile is the CA certificate (PEM).
	CAFile string
	// Pool holds the CA certificate.
	Pool *x509.CertPool

	ca  *x509.Certificate
	key *ecdsa.PrivateKey
}

// New makes a CA in a temporary directory of t.
func New(t testing.TB, name string) *PKI {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          serial(t),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	p := &PKI{Dir: t.TempDir(), ca: ca, key: key, Pool: x509.NewCertPool()}
	p.Pool.AddCert(ca)
	p.CAFile = filepath.Join(p.Dir, "ca.pem")
	writePEM(t, p.CAFile, "CERTIFICATE", der)
	return p
}

// Server issues a server certificate for hosts (IP addresses or names)
// and returns its certificate and key files.
func (p *PKI) Server(t testing.TB, name string, hosts ...string) (certFile, keyFile string) {
	t.Helper()
	return p.issue(t, name, x509.ExtKeyUsageServerAuth, hosts)
}

// Client issues a client certificate named name (its common name), with
// names as subject alternative names: a URI for one with a scheme
// (spiffe://…), a DNS name otherwise. The control plane binds node ids to
// these names.
func (p *PKI) Client(t testing.TB, name string, names ...string) (certFile, keyFile string) {
	t.Helper()
	return p.issue(t, name, x509.ExtKeyUsageClientAuth, names)
}

// ClientConfig is a TLS client configuration trusting the CA, presenting
// the certificate certFile/keyFile ("" for none).
func (p *PKI) ClientConfig(t testing.TB, certFile, keyFile string) *tls.Config {
	t.Helper()
	c := &tls.Config{RootCAs: p.Pool, MinVersion: tls.VersionTLS12}
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			t.Fatal(err)
		}
		c.Certificates = []tls.Certificate{cert}
	}
	return c
}

func (p *PKI) issue(t testing.TB, name string, usage x509.ExtKeyUsage, hosts []string) (string, string) {
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: serial(t),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
	}
	for _, h := range hosts {
		if u, err := url.Parse(h); err == nil && strings.Contains(h, "://") {
			tmpl.URIs = append(tmpl.URIs, u)
		} else if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile := filepath.Join(p.Dir, name+".pem")
	keyFile := filepath.Join(p.Dir, name+"-key.pem")
	writePEM(t, certFile, "CERTIFICATE", der)
	writePEM(t, keyFile, "PRIVATE KEY", kb)
	return certFile, keyFile
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func serial(t testing.TB) *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func writePEM(t testing.TB, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
