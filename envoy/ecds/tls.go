package ecds

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
)

// ClientTLS is a host's side of the mutually authenticated ADS stream: it
// presents the certificate in certFile/keyFile and accepts only a control
// plane whose certificate was signed by the CA in caFile (not the system's
// roots: the control plane is a private service).
func ClientTLS(caFile, certFile, keyFile string) (*tls.Config, error) {
	if caFile == "" || certFile == "" || keyFile == "" {
		return nil, fmt.Errorf("ecds: a CA, a certificate and its key are all required for mutual TLS")
	}
	pool, err := CertPool(caFile)
	if err != nil {
		return nil, err
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("ecds: %w", err)
	}
	return &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// CertPool reads the PEM certificates in path.
func CertPool(path string) (*x509.CertPool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("ecds: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("ecds: %s holds no PEM certificate", path)
	}
	return pool, nil
}
