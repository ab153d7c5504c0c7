package ecds

import (
	"crypto/tls"
	"crypto/x509"
)

// CertNames are the names a client certificate vouches for as a node id:
// its common name, then its URI and DNS subject alternative names. The
// control plane (envoy/server) takes a node id only from a stream whose
// certificate names it, so that one client of the xDS CA cannot subscribe,
// ACK or NACK as another node.
func CertNames(c *x509.Certificate) []string {
	names := make([]string, 0, 1+len(c.URIs)+len(c.DNSNames))
	if c.Subject.CommonName != "" {
		names = append(names, c.Subject.CommonName)
	}
	for _, u := range c.URIs {
		names = append(names, u.String())
	}
	return append(names, c.DNSNames...)
}

// NodeNames are the CertNames of the certificate tlsConfig presents, nil
// without one.
func NodeNames(tlsConfig *tls.Config) []string {
	if tlsConfig == nil || len(tlsConfig.Certificates) == 0 || len(tlsConfig.Certificates[0].Certificate) == 0 {
		return nil
	}
	c, err := x509.ParseCertificate(tlsConfig.Certificates[0].Certificate[0])
	if err != nil {
		return nil
	}
	return CertNames(c)
}
