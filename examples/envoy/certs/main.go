// Command certs makes the throwaway certificate authority and certificates
// of the compose example: the control plane's (named "xds"), and client
// certificates for Envoy and the runedge host, so that ADS is mutually
// authenticated TLS. Use your own PKI in production.
//
//	go run ./examples/envoy/certs -dir /certs
//
// Existing files are kept, so a restart does not change the certificates.
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"time"
)

func main() {
	dir := flag.String("dir", "certs", "directory to write the PEM files into")
	envoyUID := flag.Int("envoy-uid", 101, "owner of envoy-key.pem (the envoy image runs as uid 101); -1 to leave it")
	flag.Parse()
	if err := run(*dir, *envoyUID); err != nil {
		fmt.Fprintln(os.Stderr, "certs:", err)
		os.Exit(1)
	}
}

func run(dir string, envoyUID int) error {
	if _, err := os.Stat(filepath.Join(dir, "ca.pem")); err == nil {
		fmt.Println("certs: keeping the certificates in", dir)
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	caTmpl := template("runedge example CA")
	caTmpl.IsCA, caTmpl.BasicConstraintsValid = true, true
	caTmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}
	for _, c := range []struct {
		name  string
		usage x509.ExtKeyUsage
		dns   []string
	}{
		{"xds", x509.ExtKeyUsageServerAuth, []string{"xds"}},
		// The control plane takes a node id only from a certificate that
		// names it (common name or subject alternative name): Envoy's
		// bootstrap says edge-1, the hosts' --node runedge-N.
		{"envoy", x509.ExtKeyUsageClientAuth, []string{"edge-1"}},
		{"runedge-1", x509.ExtKeyUsageClientAuth, nil},
		{"runedge-2", x509.ExtKeyUsageClientAuth, nil},
		{"runedge-3", x509.ExtKeyUsageClientAuth, nil},
	} {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return err
		}
		tmpl := template(c.name)
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{c.usage}
		tmpl.DNSNames = c.dns
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			return err
		}
		kb, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			return err
		}
		keyFile := filepath.Join(dir, c.name+"-key.pem")
		err = errors.Join(
			write(filepath.Join(dir, c.name+".pem"), "CERTIFICATE", der, 0o644),
			write(keyFile, "PRIVATE KEY", kb, 0o600))
		if err != nil {
			return err
		}
		if c.name == "envoy" && envoyUID >= 0 {
			if err := os.Chown(keyFile, envoyUID, envoyUID); err != nil {
				return err
			}
		}
	}
	// The CA last: its presence means the set is complete.
	if err := write(filepath.Join(dir, "ca.pem"), "CERTIFICATE", caDER, 0o644); err != nil {
		return err
	}
	fmt.Println("certs: wrote a CA and the xds, envoy and runedge-1..3 certificates to", dir)
	return nil
}

func template(name string) *x509.Certificate {
	serial, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().AddDate(1, 0, 0),
	}
}

func write(path, typ string, der []byte, mode os.FileMode) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), mode)
}
